"""Commands ``gdeval`` and ``ndeval``: the command lines and outputs of gdeval.pl and ndeval.c, for scripts."""

from __future__ import annotations

import math

import click

from .. import formats
from ..arrays import choose_allocator
from ..evaluation import gdeval as gd
from ..evaluation import ndeval as nd
from ..formats import diversity
from ..render.gdeval_ndeval import gdeval_text, ndeval_text
from . import main, warnings_as_lines

_DROP_IN = {"help_option_names": ["--help"], "ignore_unknown_options": True, "allow_interspersed_args": False}


def _castregin_options(args: tuple[str, ...]) -> tuple[list[str], bool, str]:
    """castregin's own options (``--rewrite-ids``, ``--output FILE``) out of the original's arguments."""
    rest, rewrite, output = [], False, "-"
    items = iter(args)
    for arg in items:
        if arg == "--rewrite-ids":
            rewrite = True
        elif arg == "--output":
            given = next(items, None)
            if given is None:
                raise click.UsageError("--output needs a file")
            output = given
        elif arg.startswith("--output="):
            output = arg.partition("=")[2]
        else:
            rest.append(arg)
    return rest, rewrite, output


def expect_files(rest: list[str], known, synopsis: str) -> None:
    """The arguments left once the options are read must be the two files: an argument that looks like an option
    the original does not take is named as one, however many arguments there are (not read as a file, nor lost
    in "expected QRELS RUN"); ``known`` tells the original's options."""
    options = [arg for arg in rest if arg.startswith("-") and arg != "-"]
    unknown = next((arg for arg in options if not known(arg)), None)
    if unknown is not None:
        raise click.UsageError(f"unknown option {unknown} ({synopsis})")
    if len(rest) != 2 or options:
        raise click.UsageError(f"expected QRELS RUN ({synopsis})")


def _number(text: str, flag: str, kind=float):
    try:
        # Python reads 1_0 as 10 and other scripts' digits; the originals read 1 and nothing: neither is taken.
        if "_" in text or not text.isascii():
            raise ValueError(text)
        value = kind(text)
    except ValueError:
        raise click.UsageError(f"{flag} {text}: not a number") from None
    if not math.isfinite(value):  # inf, nan, 1e400: no depth, no weight
        raise click.UsageError(f"{flag} {text}: not a finite number")
    return value


def _warn_no_shared_topic(qrels_file: str, qrels_topics: set, run_file: str, run_topics: set, consequence: str,
                          judged: str = "") -> None:
    """The originals print a mean over no topic without a word when the ids do not match: castregin prints what they
    print, and a warning line (the spec's rule: zeros because ids don't match get a warning, not silence)."""
    if not qrels_topics & run_topics:
        shown = min(run_topics) if run_topics else "none"
        click.echo(f"castregin: warning: no topic of {run_file} (they look like {shown!r}) is in {qrels_file}{judged}: "
                   f"{consequence}", err=True)


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
        raise click.UsageError("-riskAlpha: must be 0 or more")
    return baseline_file, (value, weight)


def _read(qrels_file: str, run_file: str, baseline_file: str | None, output: str, read_qrels, read_run):
    """The qrels, the run and the baseline run (or None) of a drop-in, none of them the output; warnings as lines."""
    formats.ensure_not_input(output, [qrels_file, run_file, *([baseline_file] if baseline_file else [])])
    choose_allocator()
    with warnings_as_lines():
        return read_qrels(qrels_file), read_run(run_file), read_run(baseline_file) if baseline_file else None


@main.command("gdeval", context_settings=_DROP_IN, add_help_option=True)
@click.argument("args", nargs=-1, type=click.UNPROCESSED,
                metavar="[-c] [-k K] [-baseline BASELINE_RUN] [-riskAlpha A] QRELS RUN")
def gdeval_command(args):
    """gdeval.pl's command line and output: nDCG@k and ERR@k as the TREC Web track printed them.

    Prints what `gdeval.pl [-c] [-k K] QRELS RUN` (version 1.3) prints, byte for byte (tested against
    the Perl script): `runid,topic,ndcg@K,err@K`, a line per topic the run ranks and the qrels give a
    positive label, in topic order, five decimals, then `runid,amean,...`. Gains are 2^label-1, the
    run is ranked by score then item id, both descending; the run id is the last line's. -k is the
    depth (default 20); -c averages over every qrels topic with a positive label. -baseline RUN and
    -riskAlpha A (default 0): risk-sensitive values, each the difference from the baseline's, losses
    weighted by 1+A, as gdeval prints them.

    Ids of any shape are kept as they are (CAsT's 132_1-3); --rewrite-ids reads them as gdeval does,
    keeping the digits after the last '-' (132_1-3 becomes 3: every turn of a CAsT topic mixed into
    one), which must leave a number. Labels above 4 (gdeval's maximum grade) are refused, as gdeval
    refuses them. castregin's own options: --rewrite-ids, --output FILE (default: standard output).

    \b
    Examples:
      castregin gdeval question_relevance_all.qrel bm25.run
      castregin gdeval -c -k 10 question_relevance_all.qrel bm25.run
      castregin gdeval -baseline bm25.run -riskAlpha 1 question_relevance_all.qrel miniLM.run
    """
    rest, rewrite, output = _castregin_options(args)
    k, complete = gd.GDEVAL_DEPTH, False
    baseline_file, risk_alpha = None, _NO_RISK_ALPHA
    while len(rest) > 2:
        flag = rest.pop(0)
        if flag == "-c":
            complete = True
        elif flag == "-k" and len(rest) >= 3:
            k = int(_number(rest.pop(0), "-k"))
            if k < 1:
                raise click.UsageError("-k: the depth must be 1 or more")
        elif flag in ("-baseline", "-riskAlpha") and len(rest) >= 3:
            baseline_file, risk_alpha = _risk_option(flag, rest.pop(0), baseline_file, risk_alpha)
        else:
            raise click.UsageError(f"unknown option {flag} (gdeval: [-c] [-k K] [-baseline RUN] [-riskAlpha A] QRELS "
                                   "RUN)")
    expect_files(rest, {"-c", "-k", "-baseline", "-riskAlpha"}.__contains__,
                 "gdeval: [-c] [-k K] [-baseline RUN] [-riskAlpha A] QRELS RUN")
    qrels_file, run_file = rest
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


_NDEVAL_SYNOPSIS = "ndeval: [-alpha A] [-beta B] [-traditional] [-M DEPTH] [-c] QRELS RUN"


def _ndeval_flag(arg: str) -> bool:
    return arg in ("-alpha", "-beta", "-M", "-baseline", "-riskAlpha", "-traditional") or set(arg[1:]) <= {"c", "a"}


@main.command("ndeval", context_settings=_DROP_IN, add_help_option=True)
@click.argument("args", nargs=-1, type=click.UNPROCESSED,
                metavar="[-alpha A] [-beta B] [-traditional] [-M DEPTH] [-c] [-baseline RUN] [-riskAlpha A] QRELS RUN")
def ndeval_command(args):
    """ndeval's command line and output: the TREC Web track's diversity measures (alpha-nDCG, ERR-IA ...).

    Prints what `ndeval [options] QRELS RUN` (version 4.5) prints, byte for byte (tested against the C
    program): a header, a line per run topic (in topic order; 0s for a topic the qrels lack) and the
    `amean` line (over the topics of both, or of the qrels with -c), six decimals: ERR-IA@5,10,20,
    nERR-IA, alpha-DCG, alpha-nDCG, NRBP, nNRBP, MAP-IA, P-IA and strec at 5,10,20. QRELS lines are
    `topic subtopic item label`; labels 1 or more count as relevant (ndeval binarises them). The run
    is ordered by its rank column, as ndeval does, unless -traditional (score, then item id,
    descending); -M keeps each topic's first DEPTH items; -alpha and -beta (default 0.5) as ndeval.
    The run id is the first line's. A topic with no relevant item gets nNRBP -nan (ndeval's 0/0).

    Ids of any shape are kept as they are (CAsT's 132_1-3); --rewrite-ids reads them as ndeval does
    (natural numbers; a run's id not starting with a digit loses what precedes its first '-'). ndeval
    computes to depth 20: its columns stop there; castregin's measures (alpha_nDCG@k ...) take any k.
    -baseline RUN and -riskAlpha A (default 0): risk-sensitive values, each the difference from the
    baseline's, losses weighted by 1+A, as ndeval prints them. castregin's own
    options: --rewrite-ids, --output FILE (default: standard output).

    \b
    Examples:
      castregin ndeval diversity.qrels bm25.run
      castregin ndeval -traditional -alpha 0.3 diversity.qrels bm25.run
    """
    rest, rewrite, output = _castregin_options(args)
    alpha = beta = 0.5
    traditional, complete, depth = False, False, 0
    baseline_file, risk_alpha = None, _NO_RISK_ALPHA
    while len(rest) > 2:
        flag = rest.pop(0)
        if flag in ("-alpha", "-beta") and len(rest) >= 3:
            value = _number(rest.pop(0), flag)
            if not 0.0 <= value <= 1.0:
                raise click.UsageError(f"{flag}: must be from 0 to 1")
            alpha, beta = (value, beta) if flag == "-alpha" else (alpha, value)
        elif flag == "-M" and len(rest) >= 3:
            depth = int(_number(rest.pop(0), "-M", int))
            if depth <= 0:
                raise click.UsageError("-M: the depth must be 1 or more")
        elif flag in ("-baseline", "-riskAlpha") and len(rest) >= 3:
            baseline_file, risk_alpha = _risk_option(flag, rest.pop(0), baseline_file, risk_alpha)
        elif flag == "-traditional":
            traditional = True
        elif flag.startswith("-") and len(flag) > 1 and set(flag[1:]) <= {"c", "a"}:
            complete = complete or "c" in flag
        else:
            raise click.UsageError(f"unknown option {flag} ({_NDEVAL_SYNOPSIS})")
    expect_files(rest, _ndeval_flag, _NDEVAL_SYNOPSIS)
    qrels_file, run_file = rest
    qrels, run, baseline = _read(qrels_file, run_file, baseline_file, output,
                                 lambda path: diversity.ndeval_qrels(path, rewrite),
                                 lambda path: diversity.ndeval_run(path, rewrite))
    _warn_no_shared_topic(qrels_file, set(qrels.topics), run_file, set(run.topics),
                          "every value is 0 (the amean line -nan without -c), as ndeval prints it; check the topic "
                          "ids")
    runid, rows, mean = nd.ndeval_report(qrels, run, alpha, beta, traditional, depth, complete, baseline,
                                         risk_alpha[1], risk_alpha[0])
    formats.write_text(output, ndeval_text(runid, [name for name, _ in nd.COLUMNS], rows, mean))
