"""Commands that run without click, for the calls scripts make thousands of times (``castregin trec_eval``).

click takes some 20 ms to import (``click.core`` loads ``inspect``, ``uuid``, ``datetime``, ``platform``...),
more than a 10-line ``castregin trec_eval`` takes to read and score. A plain command is declared once, as a
tuple of :class:`Parameter`; its click command is made from the same tuple
(:func:`castregin.cli.options.click_parameter`), and :func:`castregin.cli.run` first tries :func:`parse`, a
reader of the command line that follows click's rules where it is sure and declines (None) everything else:
``-h``/``--help``, an unknown option, a missing or extra argument, a value that is not one of an option's
choices, ``-`` given to two outputs. Then click reads the arguments, and says what it says of them. A test
(``tests/cli/test_plain_commands.py``) holds the two readers to the same keyword arguments, with click's
own reading as the oracle.

The rules of click's parser (``click/parser.py``) followed here:

- options and arguments in any order (interspersed), ``--`` ends the options, ``-`` alone is an argument;
- short options combine (``-qc``); a short option that takes a value takes the rest of its word (``-l2``,
  ``-mP.5``, ``-qm P.5``, and ``-l=2`` gives ``=2``, as in click) or else the next word, whatever it is
  (``-m -q`` gives the measure ``-q``);
- a long option takes ``--name=value`` or ``--name value``; a flag given ``=value`` is an error; long names
  are never abbreviated; an unknown word with one dash is read as short options;
- a repeated option that takes one value keeps the last (click's ``store``); a ``multiple`` one keeps all,
  in order, as a tuple; flags are True when given, else False; unset options their default (None if none).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

#: The help option's names on every command (click's ``help_option_names``).
HELP_OPTION_NAMES = ("-h", "--help")

#: Every option that writes a file says the same.
OUTPUT_HELP = "Where to write (`-`: standard output). Written atomically, never over an input."
SCORE_PRECISION_HELP = ("Compare scores as doubles when ranking items, as trec_eval-9.0.8 (2023) does, or as 32-bit "
                        "floats, as pytrec_eval, ir_measures and trec_eval up to v9.0.8 (2020) do. They differ where "
                        "two scores of a turn are equal as floats but not as doubles (0.81234567 and 0.81234568): "
                        "float ties them and the item ids decide.")

#: What an option takes: nothing (a flag, True when given), one value (the last given), or values (a tuple).
FLAG, VALUE, MULTIPLE = "flag", "value", "multiple"
#: What a file parameter is to the command: a file it reads, or one it writes (the checks of
#: :func:`castregin.cli.checking_files` and the click types ``InputPath`` and ``OutputPath``).
INPUT, OUTPUT = "input", "output"


class Parameter:
    """An option (``flags`` given) or a required positional argument (no ``flags``) of a plain command.

    ``name`` is the keyword argument of the command's function. ``kind``, ``default``, ``choices`` and ``role``
    are what both readers go by; ``metavar``, ``help``, ``show_default`` and ``hidden`` are for click's ``--help``.
    """

    __slots__ = ("choices", "default", "flags", "help", "hidden", "kind", "metavar", "name", "role", "show_default")

    def __init__(self, name: str, *flags: str, kind: str = VALUE, default: str | None = None,
                 choices: Sequence[str] | None = None, role: str | None = None, metavar: str | None = None,
                 help: str | None = None, show_default: bool = False, hidden: bool = False):
        if not all(flag.startswith("-") and len(flag) > 1 and flag != "--" for flag in flags):
            raise ValueError(f"{name}: an option's names start with '-' or '--': {flags}")
        if kind != VALUE and (default is not None or choices is not None or not flags):
            raise ValueError(f"{name}: only an option taking one value has a default or choices")
        self.name, self.flags, self.kind, self.default = name, flags, kind, default
        self.choices = tuple(choices) if choices is not None else None
        self.role, self.metavar, self.help, self.show_default, self.hidden = role, metavar, help, show_default, hidden

    @property
    def flag(self) -> str:
        """The option's longest name, as errors name it (``--measure`` for ``-m, --measure``)."""
        return max(self.flags, key=len)


class PlainCommand:
    """A command's parameters (in the order of its ``--help``) and the function they are given to."""

    __slots__ = ("function", "parameters")

    def __init__(self, parameters: Sequence[Parameter], function: Callable[..., object]):
        self.parameters = tuple(parameters)
        self.function = function

    def parse(self, args: Sequence[str]) -> dict[str, object] | None:
        """The keyword arguments click gives the command's function for ``args``, or None: not sure (see above)."""
        short: dict[str, Parameter | None] = {}
        long: dict[str, Parameter | None] = {}
        for parameter in self.parameters:
            for flag in parameter.flags:
                (short if len(flag) == 2 and flag[1] != "-" else long)[flag] = parameter
        for flag in HELP_OPTION_NAMES:  # click's help option takes the names no parameter has
            (short if len(flag) == 2 else long).setdefault(flag, None)
        given: dict[str, str | bool] = {}
        lists: dict[str, list[str]] = {}
        positional: list[str] = []
        words = list(args)
        at = 0

        def take(parameter: Parameter | None, attached: str | None) -> bool:
            """Store ``parameter``'s value (``attached`` to its word, else the next word); False: decline."""
            nonlocal at
            if parameter is None:  # the help option: click shows the help
                return False
            if parameter.kind == FLAG:
                given[parameter.name] = True
                return attached is None  # `--nosummary=x`: click's "does not take a value"
            if attached is None:
                if at == len(words):
                    return False  # "requires an argument"
                attached = words[at]
                at += 1
            if parameter.kind == MULTIPLE:
                lists.setdefault(parameter.name, []).append(attached)
            else:
                given[parameter.name] = attached
            return True

        while at < len(words):
            word = words[at]
            at += 1
            if word == "--":
                positional.extend(words[at:])
                break
            if not word.startswith("-") or word == "-":
                positional.append(word)
                continue
            name, equals, value = word.partition("=")
            if name in long:
                if not take(long[name], value if equals else None):
                    return None
            elif word.startswith("--"):
                return None  # no such option
            else:  # short options, combined (-qc), the last perhaps with its value attached (-l2, -qmP.5)
                for letter_at in range(1, len(word)):
                    flag = "-" + word[letter_at]
                    if flag not in short:
                        return None
                    option = short[flag]
                    rest = word[letter_at + 1:]
                    takes_value = option is not None and option.kind != FLAG
                    if not take(option, rest if takes_value and rest else None):
                        return None
                    if takes_value:
                        break
        return self._keywords(given, lists, positional)

    def _keywords(self, given: dict[str, str | bool], lists: dict[str, list[str]],
                  positional: list[str]) -> dict[str, object] | None:
        arguments = [parameter for parameter in self.parameters if not parameter.flags]
        if len(positional) != len(arguments):
            return None  # click: missing argument, or extra ones
        keywords: dict[str, object] = dict(zip((argument.name for argument in arguments), positional, strict=True))
        for parameter in self.parameters:
            if not parameter.flags:
                continue
            value = given.get(parameter.name)
            if parameter.kind == FLAG:
                keywords[parameter.name] = bool(value)
            elif parameter.kind == MULTIPLE:
                keywords[parameter.name] = tuple(lists.get(parameter.name, ()))
            else:
                if value is None:
                    value = parameter.default
                if parameter.choices is not None and value is not None and value not in parameter.choices:
                    return None  # click: not one of the choices
                keywords[parameter.name] = value
        if sum(keywords[parameter.name] == "-" for parameter in self.parameters if parameter.role == OUTPUT) > 1:
            return None  # click: two outputs on standard output, a usage error
        return keywords

    def files(self, keywords: dict[str, object]) -> tuple[list[str], list[str], dict[str, str]]:
        """The files that ``keywords`` (from :meth:`parse`) name as inputs and as outputs, and each option's name in
        errors (:func:`castregin.cli.checking_files`)."""
        named: dict[str, list[str]] = {INPUT: [], OUTPUT: []}
        for parameter in self.parameters:
            value = keywords.get(parameter.name)
            if parameter.role is not None and value is not None:
                named[parameter.role].extend(value if isinstance(value, tuple) else [str(value)])
        return named[INPUT], named[OUTPUT], {parameter.name: parameter.flag for parameter in self.parameters
                                             if parameter.flags}


class UsageError(Exception):
    """A command line a drop-in's own reader refuses (``gdeval -k x``): the plain path declines it, and click says it
    (a usage error, exit 2) through the same reader (:func:`castregin.cli.options.run_drop_in`)."""


#: A drop-in's click context: the original's command line is read by the drop-in, not by click (``-baseline``,
#: options before the files only); ``--help`` is click's.
DROP_IN_SETTINGS = {"help_option_names": ["--help"], "ignore_unknown_options": True, "allow_interspersed_args": False}


class DropInCommand:
    """A drop-in for a program scripts call (gdeval.pl, ndeval, sample_eval.pl) that reads the original's command line
    itself: click gives its words, as they are, to one argument (``metavar`` in ``--help``), and ``read`` makes them
    the keyword arguments of ``function``, raising :class:`UsageError` where the original's reading fails."""

    __slots__ = ("function", "metavar", "read")

    def __init__(self, metavar: str, read: Callable[[list[str]], dict[str, object]], function: Callable[..., object]):
        self.metavar, self.read, self.function = metavar, read, function

    @staticmethod
    def arguments(args: Sequence[str]) -> list[str] | None:
        """The words click gives the drop-in's argument (:data:`DROP_IN_SETTINGS`), or None: click shows the help or
        a usage error. Before the first word that is no option (``-`` is none), each option is an unknown one, kept
        as it is, but ``--help`` (shows help; ``--help=x`` is an error), and ``--`` ends them and is dropped."""
        words = list(args)
        for at, word in enumerate(words):
            if word == "--":
                del words[at]
                break
            if not word.startswith("-") or word == "-":
                break
            if word.partition("=")[0] == "--help":
                return None
        return words

    def parse(self, args: Sequence[str]) -> dict[str, object] | None:
        """The keyword arguments of :attr:`function` for ``args``, or None: click shows help or says what is wrong."""
        words = self.arguments(args)
        if words is None:
            return None
        try:
            return self.read(words)
        except UsageError:
            return None

    def files(self, keywords: dict[str, object]) -> tuple[list[str], list[str], dict[str, str]]:
        """None declared (as the click command's one argument declares none): the drop-in checks its output itself."""
        return [], [], {}
