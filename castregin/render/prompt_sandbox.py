"""A user's prompt template, rendered where it can do no harm: Jinja's sandbox, bounded in size and time.

Jinja's :class:`~jinja2.sandbox.SandboxedEnvironment` keeps a template away from Python's internals
and caps ``range`` at 100,000 items; it does not stop a template that runs away. Here:

- ``include``, ``extends`` and ``import`` are refused when the template is read (:func:`check_template`):
  a prompt template is one file, and there is no loader to read another;
- every string or list a template builds (``*``, ``+``, ``%``, ``~``, a filter, a method, ``format``) is
  at most :data:`castregin.limits.MAX_PROMPT_CHARS` long, and a number given to a call (``ljust``,
  ``center``, ``indent``...) or written into a format (``"%.9999999f"``) at most that large: the
  check comes before the operation where the operation itself would run away (``"x" * 10**12``,
  ``9 ** 9 ** 9``), after it elsewhere;
- one prompt renders in at most :data:`castregin.limits.MAX_PROMPT_SECONDS` (nested loops, a macro
  calling itself in two branches): the template's own code is traced while it runs, and stops;
- any error a template raises (``{{ 1/0 }}``, a range too big, a bad format spec, recursion) becomes
  :class:`TemplateFailure`, one line.
"""

from __future__ import annotations

import functools
import re
import sys
import time
from typing import Any

from ..errors import InputError
from ..limits import MAX_PROMPT_CHARS, MAX_PROMPT_SECONDS

#: Bits a power may have: far past any number a prompt shows, far below one that takes a minute to compute.
MAX_POWER_BITS = 1 << 16
_LONG_NUMBER = re.compile(r"\d{7,}")


class TemplateFailure(Exception):
    """What went wrong while a template rendered one prompt, on one line."""


def _too_big(value: Any) -> bool:
    return isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) and len(value) > MAX_PROMPT_CHARS


def _check_result(value: Any) -> Any:
    if _too_big(value):
        raise TemplateFailure(f"it builds a value longer than {MAX_PROMPT_CHARS:,} characters or items")
    return value


def _check_number(value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_PROMPT_CHARS:
        raise TemplateFailure(f"it passes the number {value if value.bit_length() < 64 else 'past 2^64'} to a "
                              f"call; at most {MAX_PROMPT_CHARS:,} is taken")


def _check_arguments(args: tuple, kwargs: dict) -> None:
    for value in (*args, *kwargs.values()):
        _check_number(value)


def _check_format(text: Any) -> None:
    if isinstance(text, str):
        for digits in _LONG_NUMBER.findall(text):
            if int(digits) > MAX_PROMPT_CHARS:
                raise TemplateFailure(f"a format asks for {digits[:20]} characters; at most {MAX_PROMPT_CHARS:,}")


def _bounded_filter(function: Any) -> Any:
    @functools.wraps(function)  # keeps jinja's pass_context/pass_eval_context marks
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_arguments(args[1:], kwargs)
        return _check_result(function(*args, **kwargs))

    return bounded


def _concat(parts: Any) -> Any:
    return _check_result("".join(str(part) for part in parts))


def bounded_sandbox(**options: Any):
    """Jinja's sandbox with the bounds of this module (``options`` go to the environment)."""
    import jinja2
    from jinja2.compiler import CodeGenerator
    from jinja2.sandbox import SandboxedEnvironment

    class Generator(CodeGenerator):
        def visit_Concat(self, node: Any, frame: Any) -> None:
            # ``a ~ b``: through the environment, so that a string doubled in a loop stops at the bound.
            self.write("environment.bounded_concat(")
            super().visit_Concat(node, frame)
            self.write(")")

    class Bounded(SandboxedEnvironment):
        code_generator_class = Generator
        intercepted_binops = frozenset({"*", "**", "+", "%"})

        def __init__(self, **kwargs: Any):
            super().__init__(**kwargs)
            self.filters = {name: _bounded_filter(f) for name, f in self.filters.items()}

        @staticmethod
        def bounded_concat(value: Any) -> Any:
            return _check_result(value)

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if (operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0
                    and abs(left) > 1 and right * abs(left).bit_length() > MAX_POWER_BITS):
                raise TemplateFailure(f"it computes a power of more than {MAX_POWER_BITS} bits")
            if operator == "*":
                for sequence, count in ((left, right), (right, left)):
                    if (isinstance(sequence, (str, list, tuple)) and isinstance(count, int)
                            and len(sequence) * count > MAX_PROMPT_CHARS):
                        raise TemplateFailure(f"it builds a value longer than {MAX_PROMPT_CHARS:,} characters or items")
            if operator == "%":
                _check_format(left)
            return _check_result(super().call_binop(context, operator, left, right))

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
            _check_arguments(args, kwargs)
            # jinja2 before 3.1.5 formats str.format's calls here, not through wrap_str_format.
            if getattr(__obj, "__name__", None) in ("format", "format_map"):
                _check_format(getattr(__obj, "__self__", None))
            return _check_result(super().call(__context, __obj, *args, **kwargs))

        def wrap_str_format(self, value: Any) -> Any:
            _check_format(getattr(value, "__self__", None))
            return super().wrap_str_format(value)

    options.setdefault("autoescape", False)
    options.setdefault("keep_trailing_newline", False)
    options.setdefault("undefined", jinja2.StrictUndefined)
    return Bounded(**options)


def check_template(environment: Any, text: str, source: str):
    """``text`` compiled by ``environment``; a syntax error, or a tag that reads another template, is an
    :class:`InputError` naming the line."""
    import jinja2
    from jinja2 import nodes

    try:
        tree = environment.parse(text)
    except jinja2.TemplateSyntaxError as err:
        raise InputError(f"the template does not parse: {err.message}", source=source, line=err.lineno) from None
    for node in tree.find_all((nodes.Include, nodes.Extends, nodes.Import, nodes.FromImport)):
        tag = {"Include": "include", "Extends": "extends", "Import": "import", "FromImport": "from ... import"}
        raise InputError(f"{{% {tag[type(node).__name__]} %}} reads another template; a prompt template is one "
                         "file (write its parts in it, or as macros)", source=source, line=node.lineno)
    try:
        return environment.from_string(tree)
    except (jinja2.TemplateError, RecursionError, ValueError, TypeError) as err:
        raise InputError(f"the template does not compile: {err}", source=source) from None


class _Timeout(Exception):
    pass


def render_bounded(template: Any, variables: dict) -> str:
    """``template`` rendered with ``variables`` within MAX_PROMPT_CHARS and MAX_PROMPT_SECONDS; any failure
    is a :class:`TemplateFailure`."""
    from ..llm.settings import printable

    deadline = time.monotonic() + MAX_PROMPT_SECONDS
    code = template.root_render_func.__code__.co_filename

    def line(frame: Any, event: str, arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise _Timeout
        return line

    def enter(frame: Any, event: str, arg: Any) -> Any:
        # Only the template's own code is traced (its loops and macros): the library's is not slowed.
        if frame.f_code.co_filename != code:
            return None
        if time.monotonic() > deadline:
            raise _Timeout
        return line

    previous = sys.gettrace()
    sys.settrace(enter)
    try:
        parts, size = [], 0
        for chunk in template.generate(**variables):
            size += len(chunk)
            if size > MAX_PROMPT_CHARS:
                raise TemplateFailure(f"it renders more than {MAX_PROMPT_CHARS:,} characters")
            parts.append(chunk)
        return "".join(parts)
    except _Timeout:
        raise TemplateFailure(f"it ran past {MAX_PROMPT_SECONDS:g} seconds (a prompt takes milliseconds)") from None
    except TemplateFailure:
        raise
    except RecursionError:
        raise TemplateFailure("it recurses too deeply (a macro calling itself?)") from None
    except MemoryError:
        raise TemplateFailure("it ran out of memory") from None
    except Exception as err:  # noqa: BLE001 - whatever a template raises is the template's, told in one line
        said = printable(str(err))[:200] or type(err).__name__
        raise TemplateFailure(f"{said} ({type(err).__name__})") from None
    finally:
        sys.settrace(previous)
