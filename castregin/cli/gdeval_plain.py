"""``castregin gdeval`` and ``castregin ndeval`` without click: the originals' command lines and the bodies.

gdeval.pl and ndeval read their own command lines (``-baseline RUN``, options before the two files only), and so do
the drop-ins: :data:`GDEVAL` and :data:`NDEVAL` (:class:`~castregin.cli.plain.DropInCommand`) hold each reader and
body. The click commands (:mod:`castregin.cli.gdeval`, with the help texts) are made from them;
:func:`castregin.cli.run` runs them without importing click, and declines to click any command line the reader
refuses (a usage error, which click says) or that asks for ``--help``.
"""

from __future__ import annotations

from . import say, warnings_as_lines
from .plain import DropInCommand, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def castregin_options(args: list[str]) -> tuple[list[str], bool, str]:
    """castregin's own options (``--rewrite-ids``, ``--output FILE``) out of the original's arguments."""
    rest, rewrite, output = [], False, "-"
    items = iter(args)
    for arg in items:
        if arg == "--rewrite-ids":
            rewrite = True
        elif arg == "--output":
            given = next(items, None)
            if given is None:
                raise UsageError("--output needs a file")
            output = given
        elif arg.startswith("--output="):
            output = arg.partition("=")[2]
        else:
            rest.append(arg)
    return rest, rewrite, output


def expect_files(rest: list[str], known: Callable[[str], bool], synopsis: str) -> None:
    """The arguments left once the options are read must be the two files: an argument that looks like an option
    the original does not take is named as one, however many arguments there are (not read as a file, nor lost
    in "expected QRELS RUN"); ``known`` tells the original's options."""
    options = [arg for arg in rest if arg.startswith("-") and arg != "-"]
    unknown = next((arg for arg in options if not known(arg)), None)
    if unknown is not None:
        raise UsageError(f"unknown option {unknown} ({synopsis})")
    if len(rest) != 2 or options:
        raise UsageError(f"expected QRELS RUN ({synopsis})")


def _number(text: str, flag: str, kind: Callable[[str], float] = float) -> float:
    import math

    try:
        # Python reads 1_0 as 10 and other scripts' digits; the originals read 1 and nothing: neither is taken.
        if "_" in text or not text.isascii():
            raise ValueError(text)
        value = kind(text)
    except ValueError:
        raise UsageError(f"{flag} {text}: not a number") from None
    if not math.isfinite(value):  # inf, nan, 1e400: no depth, no weight
        raise UsageError(f"{flag} {text}: not a finite number")
    return value


def _warn_no_shared_topic(qrels_file: str, qrels_topics: set, run_file: str, run_topics: set, consequence: str,
                          judged: str = "") -> None:
    """The originals print a mean over no topic without a word when the ids do not match: castregin prints what they
    print, and a warning line (the spec's rule: zeros because ids don't match get a warning, not silence)."""
    if not qrels_topics & run_topics:
        shown = min(run_topics) if run_topics else "none"
        say(f"castregin: warning: no topic of {run_file} (they look like {shown!r}) is in {qrels_file}{judged}: "
            f"{consequence}")


#: ``-riskAlpha``'s default: as the originals print it, and its value.
_NO_RISK_ALPHA = ("0", 0.0)


def _risk_option(flag: str, value: str, baseline_file: str | None, risk_alpha: tuple[str, float]
                 ) -> tuple[str | None, tuple[str, float]]:
    """``-baseline RUN`` or ``-riskAlpha A`` (both programs read them alike): the new baseline, and alpha as given
    (the originals print it so) and as a number."""
    if flag == "-baseline":
        return value, risk_alpha
    weight = _number(value, "-riskAlpha")
    if weight < 0:
        raise UsageError("-riskAlpha: must be 0 or more")
    return baseline_file, (value, weight)


def _read(qrels_file: str, run_file: str, baseline_file: str | None, output: str, read_qrels, read_run):
    """The qrels, the run and the baseline run (or None) of a drop-in, none of them the output; warnings as lines."""
    from .. import formats
    from ..arrays import choose_allocator

    formats.ensure_not_input(output, [qrels_file, run_file, *([baseline_file] if baseline_file else [])])
    choose_allocator()
    with warnings_as_lines():
        return read_qrels(qrels_file), read_run(run_file), read_run(baseline_file) if baseline_file else None


# --- gdeval ---------------------------------------------------------------------------------------------------------

_GDEVAL_SYNOPSIS = "gdeval: [-c] [-k K] [-baseline RUN] [-riskAlpha A] QRELS RUN"


def read_gdeval(args: list[str]) -> dict[str, object]:
    """gdeval.pl's command line (and castregin's options) as the keyword arguments of :func:`gdeval`."""
    from ..evaluation.gdeval import GDEVAL_DEPTH

    rest, rewrite, output = castregin_options(args)
    k, complete = GDEVAL_DEPTH, False
    baseline_file, risk_alpha = None, _NO_RISK_ALPHA
    while len(rest) > 2:
        flag = rest.pop(0)
        if flag == "-c":
            complete = True
        elif flag == "-k" and len(rest) >= 3:
            k = int(_number(rest.pop(0), "-k"))
            if k < 1:
                raise UsageError("-k: the depth must be 1 or more")
        elif flag in ("-baseline", "-riskAlpha") and len(rest) >= 3:
            baseline_file, risk_alpha = _risk_option(flag, rest.pop(0), baseline_file, risk_alpha)
        else:
            raise UsageError(f"unknown option {flag} ({_GDEVAL_SYNOPSIS})")
    expect_files(rest, {"-c", "-k", "-baseline", "-riskAlpha"}.__contains__, _GDEVAL_SYNOPSIS)
    qrels_file, run_file = rest
    return {"qrels_file": qrels_file, "run_file": run_file, "k": k, "complete": complete,
            "baseline_file": baseline_file, "risk_alpha": risk_alpha, "rewrite": rewrite, "output": output}


def gdeval(qrels_file: str, run_file: str, k: int, complete: bool, baseline_file: str | None,
           risk_alpha: tuple[str, float], rewrite: bool, output: str) -> None:
    """The body of ``castregin gdeval``: gdeval.pl's output for the keyword arguments of :func:`read_gdeval`."""
    from .. import formats
    from ..evaluation import gdeval as gd
    from ..formats import diversity
    from ..render.gdeval_ndeval import gdeval_text

    qrels, run, baseline = _read(qrels_file, run_file, baseline_file, output,
                                 lambda path: diversity.gdeval_qrels(path, gd.GDEVAL_MAX_GRADE, rewrite),
                                 lambda path: diversity.gdeval_run(path, rewrite))
    if rewrite:
        gd.check_numeric_ids({*qrels.topics, *run.topics, *(baseline.topics if baseline else ())},
                             "gdeval --rewrite-ids")
    _warn_no_shared_topic(qrels_file, qrels.topics_with_a_label_above(0), run_file, set(run.topics),
                          "every value is 0, as gdeval.pl prints it; check the topic ids", " with a positive label")
    runid, rows, mean = gd.gdeval_report(qrels, run, k, complete, baseline=baseline, risk_alpha=risk_alpha[1],
                                         risk_alpha_text=risk_alpha[0])
    formats.write_text(output, gdeval_text(runid, k, rows, mean))


GDEVAL = DropInCommand("[-c] [-k K] [-baseline BASELINE_RUN] [-riskAlpha A] QRELS RUN", read_gdeval, gdeval)


# --- ndeval ---------------------------------------------------------------------------------------------------------

_NDEVAL_SYNOPSIS = "ndeval: [-alpha A] [-beta B] [-traditional] [-M DEPTH] [-c] QRELS RUN"


def _ndeval_flag(arg: str) -> bool:
    return arg in ("-alpha", "-beta", "-M", "-baseline", "-riskAlpha", "-traditional") or set(arg[1:]) <= {"c", "a"}


def read_ndeval(args: list[str]) -> dict[str, object]:
    """ndeval's command line (and castregin's options) as the keyword arguments of :func:`ndeval`."""
    rest, rewrite, output = castregin_options(args)
    alpha = beta = 0.5
    traditional, complete, depth = False, False, 0
    baseline_file, risk_alpha = None, _NO_RISK_ALPHA
    while len(rest) > 2:
        flag = rest.pop(0)
        if flag in ("-alpha", "-beta") and len(rest) >= 3:
            value = _number(rest.pop(0), flag)
            if not 0.0 <= value <= 1.0:
                raise UsageError(f"{flag}: must be from 0 to 1")
            alpha, beta = (value, beta) if flag == "-alpha" else (alpha, value)
        elif flag == "-M" and len(rest) >= 3:
            depth = int(_number(rest.pop(0), "-M", int))
            if depth <= 0:
                raise UsageError("-M: the depth must be 1 or more")
        elif flag in ("-baseline", "-riskAlpha") and len(rest) >= 3:
            baseline_file, risk_alpha = _risk_option(flag, rest.pop(0), baseline_file, risk_alpha)
        elif flag == "-traditional":
            traditional = True
        elif flag.startswith("-") and len(flag) > 1 and set(flag[1:]) <= {"c", "a"}:
            complete = complete or "c" in flag
        else:
            raise UsageError(f"unknown option {flag} ({_NDEVAL_SYNOPSIS})")
    expect_files(rest, _ndeval_flag, _NDEVAL_SYNOPSIS)
    qrels_file, run_file = rest
    return {"qrels_file": qrels_file, "run_file": run_file, "alpha": alpha, "beta": beta, "traditional": traditional,
            "depth": depth, "complete": complete, "baseline_file": baseline_file, "risk_alpha": risk_alpha,
            "rewrite": rewrite, "output": output}


def ndeval(qrels_file: str, run_file: str, alpha: float, beta: float, traditional: bool, depth: int, complete: bool,
           baseline_file: str | None, risk_alpha: tuple[str, float], rewrite: bool, output: str) -> None:
    """The body of ``castregin ndeval``: ndeval's output for the keyword arguments of :func:`read_ndeval`."""
    from .. import formats
    from ..evaluation import ndeval as nd
    from ..formats import diversity
    from ..render.gdeval_ndeval import ndeval_text

    qrels, run, baseline = _read(qrels_file, run_file, baseline_file, output,
                                 lambda path: diversity.ndeval_qrels(path, rewrite),
                                 lambda path: diversity.ndeval_run(path, rewrite))
    _warn_no_shared_topic(qrels_file, set(qrels.topics), run_file, set(run.topics),
                          "every value is 0 (the amean line -nan without -c), as ndeval prints it; check the topic "
                          "ids")
    runid, rows, mean = nd.ndeval_report(qrels, run, alpha, beta, traditional, depth, complete, baseline,
                                         risk_alpha[1], risk_alpha[0])
    formats.write_text(output, ndeval_text(runid, [name for name, _ in nd.COLUMNS], rows, mean))


NDEVAL = DropInCommand("[-alpha A] [-beta B] [-traditional] [-M DEPTH] [-c] [-baseline RUN] [-riskAlpha A] QRELS RUN",
                       read_ndeval, ndeval)
