"""Commands of the CLI for the aggregate stage (registered on `castregin.cli.main`).

``castregin aggregate`` turns crowd judgment CSVs into qrels per criterion plus an audit;
``castregin agreement`` prints the agreement part alone. The work is in :mod:`castregin.judging.aggregate`,
:mod:`castregin.judging.agreement` and :mod:`castregin.formats.crowd`, imported where used (they need
pandas, which ``castregin --help`` should not load).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import click

from ..arrays import choose_allocator
from ..errors import InputError, InputWarning
from ..formats import ensure_not_input, write_text
from ..formats.common import json_text
from ..formats.output import OutputSet
from ..limits import MAX_AGREEMENT_PLOT_PAIRS, MAX_AGREEMENT_SAMPLES
from ..render.judging import agreement_tables, summary_table, workers_table
from ..render.tables import RECORD_FORMATS
from . import main, warnings_as_lines
from .options import (
    FiniteFloat,
    InputPath,
    OutputDirectory,
    OutputPath,
    criteria_list,
    format_option,
    output_option,
    score_precision_option,
    single_measure_option,
    split_named,
    top_k_option,
)

#: The measure ``agreement --runs`` ranks the runs by unless -m says otherwise (CAsT's MI measure).
DEFAULT_RANKING_MEASURE = "nDCG@3"
_CRITERION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _criteria_or_none(ctx, param, value: str | None) -> list[str] | None:
    return None if value is None else _criteria(ctx, param, value)


def _criteria(ctx, param, value: str) -> list[str]:
    names = criteria_list(ctx, param, value)
    for name in names:
        if not _CRITERION.fullmatch(name):
            raise click.BadParameter(f"{name!r}: use letters, digits, '_', '.' and '-' (it names output files)")
    return names


def _scale(ctx, param, value: str) -> tuple[int, int]:
    from ..formats.crowd import parse_scale

    try:
        return parse_scale(value)
    except InputError as err:
        raise click.BadParameter(err.problem) from None


def _label_map(ctx, param, value) -> dict[str, int]:
    from ..formats.crowd import parse_label_map

    try:
        return parse_label_map(value)
    except InputError as err:
        raise click.BadParameter(err.problem) from None


def _crowd_options(function, criteria_required: bool = True):
    """Options shared by ``aggregate`` and ``agreement``: how to read crowd judgments and decide labels."""
    options = [
        click.option("--criteria", required=criteria_required, callback=_criteria_or_none, metavar="NAME,...",
                     help="The judged criteria, comma-separated (relevance,novelty,diversity)."
                          + ("" if criteria_required else " Needed for crowd judgments; comparing sources "
                             "takes exactly one.")),
        click.option("--gold", type=InputPath(), metavar="GOLD.csv",
                     help="Gold CSV with the columns turn_id, item_id, criterion, min_label, max_label: a "
                          "worker with a label outside the range loses all their labels for that topic. Rows "
                          "of other criteria are ignored, with a warning, as are gold items nobody judged."),
        click.option("--input-format", type=click.Choice(["auto", "long", "mturk"]), default="auto",
                     show_default=True,
                     help="long: worker_id,turn_id,item_id,<criterion>...; mturk: batch results (WorkerId, "
                          "AssignmentStatus, Input.turn_id, Input.item_id, Answer.<criterion>); auto: mturk "
                          "when the header has WorkerId or AssignmentStatus."),
        click.option("--column", "columns", multiple=True, metavar="ROLE=NAME",
                     help="Read a role from another column (repeatable); roles: worker_id, turn_id, item_id, "
                          "status (rows 'Rejected' are ignored) and each criterion. Figure Eight: "
                          "--column worker_id=_worker_id --column item_id=_unit_id."),
        click.option("--label-map", "label_map", multiple=True, callback=_label_map, metavar="TEXT=N,...",
                     help="Map textual labels to integers: TEXT=N pairs, comma-separated or repeated "
                          "(e.g. no=0,yes=1)."),
        click.option("--scale", default="0-3", show_default=True, callback=_scale, metavar="MIN-MAX",
                     help="The label scale; a label outside it is an error."),
        click.option("--majority", type=click.Choice(["plurality", "absolute"]), default="plurality",
                     show_default=True,
                     help="plurality: the mode wins when it is the only most frequent label; absolute: "
                          "it must also hold more than half of the labels."),
        click.option("--tie", type=click.Choice(["mean", "median", "max", "min"]), default="mean",
                     show_default=True,
                     help="Without a winning mode: the mean of all labels, their median (an even count "
                          "takes the mean of the two middle labels, rounded with --rounding), or the "
                          "highest / lowest of the most frequent labels."),
        click.option("--rounding", type=click.Choice(["half-up", "half-even", "floor", "ceil"]),
                     default="half-up", show_default=True,
                     help="How a mean (or an even-count median) becomes an integer, computed exactly: "
                          "half-up 2.5->3, half-even 2.5->2, floor, ceil."),
        click.option("--method", type=click.Choice(["mode-mean", "dawid-skene", "glad"]), default="mode-mean",
                     show_default=True,
                     help="mode-mean: the rules above (CAsT-ReGIn's); dawid-skene: EM over each worker's "
                          "confusion matrix; glad: worker ability x item difficulty. The models run per "
                          "criterion after the gold filter, gold items as known labels (a range bounds "
                          "the posterior); the label is the posterior's argmax, the lowest on a tie."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _input_options(function):
    """``aggregate``'s input: crowd judgment CSVs and :func:`_crowd_options`."""
    return click.argument("judgments", nargs=-1, required=True, type=InputPath(),
                          metavar="JUDGMENTS.csv...")(_crowd_options(function))


def _crowd_options_optional(function):
    """:func:`_crowd_options` with --criteria optional (qrels sources need none)."""
    return _crowd_options(function, criteria_required=False)


def _read(judgments, criteria, gold, input_format, columns, label_map, scale, loaded=None, gold_frame=None):
    """(Judgments, gold frame): the CSVs ``judgments`` name, or ``loaded`` ``(bytes, source)`` pairs already read;
    ``gold_frame``: the gold file already read (crowd sources sharing one --gold), else ``gold`` is read."""
    from ..formats.crowd import parse_columns, parse_judgments, read_gold, read_judgments

    try:
        roles = parse_columns(columns, criteria)
    except InputError as err:
        raise click.BadParameter(err.problem, param_hint="--column") from None
    # pyarrow parses the judgments: jemalloc holds its blocks in a third less memory than mimalloc here.
    choose_allocator()
    # The gold file is read first: it is small, and a bad one should not wait for a million rows.
    if gold_frame is None and gold:
        gold_frame = read_gold(gold, scale)
    options = {"input_format": input_format, "columns": roles, "label_map": label_map, "scale": scale}
    data = (read_judgments(judgments, criteria, **options) if loaded is None
            else parse_judgments(loaded, criteria, **options))
    return data, gold_frame


@main.command()
@_input_options
@click.option("--min-label", type=int, default=2, show_default=True,
              help="The filtered qrels keep the turns with some label >= this.")
@click.option("--prefix", default="question", show_default=True,
              help="Output names are <prefix>_<criterion>.qrel; --prefix '' gives <criterion>.qrel.")
@click.option("--out-dir", required=True, type=OutputDirectory(), metavar="DIR",
              help="Where to write the qrels and audit.json.")
@click.option("--time-column", default="auto", show_default=True, metavar="NAME",
              help="The column of seconds spent per row, for the 'fast' suspect rule; auto: 'seconds' or "
                   "MTurk's 'WorkTimeInSeconds' when there; '' reads none.")
def aggregate(judgments, criteria, gold, input_format, columns, label_map, scale, majority, tie, rounding,
              method, min_label, prefix, out_dir, time_column):
    """Aggregate crowd judgments into qrels, one per criterion.

    \b
    Several CSVs are concatenated. Per (turn, item, criterion):
      1. a worker failing a --gold item loses all their labels, every criterion, for that topic;
      2. the label is the mode when it is the only most frequent label (see --majority),
         otherwise the --tie rule decides, rounded with --rounding;
      3. an item left without labels is dropped and listed in audit.json.
    --method dawid-skene or glad replaces step 2 by a model of each worker's reliability.
    Writes <prefix>_<criterion>.qrel (all turns), <prefix>_<criterion>_filtered.qrel (turns
    with a label >= --min-label) and audit.json {removed, dropped_items, decisions, agreement,
    method, workers, suspects} into --out-dir, all or nothing. A summary and the suspect
    workers go to standard error.

    \b
    Suspects are flagged in audit.json, never removed (removal is the gold rule's):
      below_chance  kappa with the other workers' consensus <= 0 (a criterion, >= 10 items)
      constant      one label for >= 90% of >= 10 items of a criterion
      repeated      the same answers, or a sequence of up to 5 rows, repeated on >= 90% of rows
      fast          median seconds per item < 1/3 of the crowd's (with a time column)

    \b
    Examples:
      castregin aggregate judgments.csv --criteria relevance,novelty,diversity \\
          --gold gold.csv --prefix '' --out-dir qrels/
      castregin aggregate judgments.csv --criteria relevance --method dawid-skene --out-dir ds/
    """
    from ..formats.aggregation import check_file_name_part, write_aggregation
    from ..judging.aggregate import aggregate as run_aggregate

    try:
        check_file_name_part(prefix)
    except InputError as err:
        raise click.BadParameter(str(err), param_hint="--prefix") from None
    data, gold_frame = _read(judgments, criteria, gold, input_format, columns, label_map, scale)
    with warnings_as_lines():
        result = run_aggregate(data, gold_frame, majority=majority, tie=tie, rounding=rounding, min_label=min_label,
                               method=method, time_column=time_column or None)
        _check_not_empty(result, prefix, min_label)
    inputs = [p for p in [*judgments, gold] if p]
    write_aggregation(result, out_dir, prefix=prefix, inputs=inputs)
    click.echo(summary_table(result), err=True, nl=False)
    if result.suspects.get("workers"):
        click.echo(workers_table(result, only_suspects=True), err=True, nl=False)


def _check_not_empty(result, prefix: str, min_label: int) -> None:
    """Empty qrels are no result: none at all is an error, nothing written (as convert: nothing to evaluate with);
    one criterion's, or a filtered qrels, is a warning naming the file left empty."""
    import warnings

    removed = len({r["worker_id"] for r in result.removed})
    why = (f": the gold filter removed every label ({removed} worker(s) in {len(result.removed)} (worker, topic) "
           "pair(s)); check the ranges of --gold" if removed else "")
    empty = [c for c in result.criteria if not result.qrels[c]]
    if len(empty) == len(result.criteria):
        raise InputError(f"no label is left to write{why}; nothing written")
    for criterion in result.criteria:
        stem = f"{prefix}_{criterion}" if prefix else criterion
        if criterion in empty:
            warnings.warn(InputWarning(f"criterion {criterion}: no label is left (its cells are empty, or the gold "
                                       f"filter removed them); {stem}.qrel is empty"), stacklevel=2)
        elif not result.filtered[criterion]:
            warnings.warn(InputWarning(f"criterion {criterion}: no turn has a label >= {min_label} (--min-label); "
                                       f"{stem}_filtered.qrel is empty"), stacklevel=2)


# --- agreement: between judgment sources, or inside one crowd ----------------------------------------------

def split_source(value: str) -> tuple[str | None, str | None, str]:
    """``[NAME=][KIND:]PATH`` -> (NAME, KIND, PATH); KIND is ``qrels`` or ``crowd`` (None: recognised from
    the content). A path that exists as written is taken whole."""
    from ..formats.trec import LABEL_SOURCE_KINDS

    name, rest = split_named(value)
    for kind in LABEL_SOURCE_KINDS:
        if rest.startswith(kind + ":") and not os.path.exists(rest):
            return name, kind, rest[len(kind) + 1:]
    return name, None, rest


class SourcePath(InputPath):
    """A source of labels, ``[NAME=][KIND:]PATH``."""

    def paths(self, value: str) -> list[str]:
        return [split_source(value)[2]]


def _sections(ctx, param, value: str | None) -> tuple[str, ...] | None:
    from ..render.agreement import SECTIONS

    if value is None:
        return None
    names = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [n for n in names if n not in SECTIONS]
    if unknown or not names:
        raise click.BadParameter(f"{unknown[0] if unknown else value!r} is no section; choose among "
                                 f"{', '.join(SECTIONS)} (comma-separated)")
    return names


@dataclass
class _Source:
    """A source as read: its name, kind, display name and bytes."""

    name: str
    kind: str
    path: str
    source: str
    data: bytes


def _load_sources(specs) -> list[_Source]:
    from ..formats import read_bytes
    from ..formats.common import display_name, stem
    from ..formats.trec import label_source_kind

    loaded = []
    for spec in specs:
        name, kind, path = split_source(spec)
        data = read_bytes(path)
        source = display_name(path)
        loaded.append(_Source(name or stem(path), kind or label_source_kind(data, source), path, source, data))
    return loaded


def _between_sources(loaded: list[_Source], crowd: dict, per_worker: bool) -> tuple[list, list]:
    """(``(name, labels)`` of each source, the group of each): qrels as they are, each crowd aggregated
    with the crowd options, or (``per_worker``) one source per worker, grouped by crowd."""
    from ..formats.trec import parse_qrels
    from ..judging.aggregate import aggregate as run_aggregate
    from ..judging.aggregate import worker_labels

    criteria = crowd["criteria"]
    if any(s.kind == "crowd" for s in loaded) and (not criteria or len(criteria) != 1):
        among = f" (one of {','.join(criteria)})" if criteria else ""
        within = (" (or --within: the agreement inside one crowd, its CSVs concatenated)"
                  if all(s.kind == "crowd" for s in loaded) else "")
        raise InputError("comparing crowd judgments with other sources needs exactly one criterion, the label "
                         f"compared: give --criteria NAME{among}{within}", argument="--criteria")
    sources: list[tuple[str, dict]] = []
    groups: list[str | None] = []
    gold_frame = None  # read with the first crowd source, shared by the others
    for s in loaded:
        if s.kind == "qrels":
            sources.append((s.name, parse_qrels(s.data, s.source, s.name).labels))
            groups.append(None)
            continue
        data, gold_frame = _read([s.path], criteria, crowd["gold"], crowd["input_format"], crowd["columns"],
                                 crowd["label_map"], crowd["scale"], loaded=[(s.data, s.source)],
                                 gold_frame=gold_frame)
        if per_worker:
            for worker, labels in worker_labels(data, gold_frame, criteria[0]).items():
                sources.append((f"{s.name}:{worker}", labels))
                groups.append(s.name)
            continue
        result = run_aggregate(data, gold_frame, majority=crowd["majority"], tie=crowd["tie"],
                               rounding=crowd["rounding"], method=crowd["method"], agreement=False,
                               time_column=None)
        sources.append((s.name, result.qrels[criteria[0]]))
        groups.append(None)
    return sources, groups


def _within_crowd(loaded: list[_Source], crowd: dict, fmt: str) -> str:
    """The agreement inside one crowd (every source concatenated), as ``castregin aggregate`` audits it."""
    from ..judging.aggregate import aggregate as run_aggregate

    qrels = [s.source for s in loaded if s.kind != "crowd"]
    if qrels:
        raise InputError(f"{qrels[0]} holds qrels: the agreement inside a crowd (--within) reads crowd "
                         "judgments only", argument="SOURCE")
    if not crowd["criteria"]:
        raise InputError("crowd judgments need --criteria (the judged criteria, comma-separated)",
                         argument="--criteria")
    if fmt not in ("table", "json"):
        raise InputError(f"the agreement inside a crowd is written as table or json, not {fmt}",
                         argument="--format")
    data, gold_frame = _read([s.path for s in loaded], crowd["criteria"], crowd["gold"], crowd["input_format"],
                             crowd["columns"], crowd["label_map"], crowd["scale"],
                             loaded=[(s.data, s.source) for s in loaded])
    result = run_aggregate(data, gold_frame, majority=crowd["majority"], tie=crowd["tie"], rounding=crowd["rounding"],
                           method=crowd["method"])
    if not any(result.qrels[c] for c in result.criteria):
        import warnings

        removed = len({r["worker_id"] for r in result.removed})
        warnings.warn(InputWarning(f"the gold filter removed every label ({removed} worker(s) in {len(result.removed)} "
                                   "(worker, topic) pair(s)): the agreement after it is of nothing, and no worker is "
                                   "compared with the aggregated labels; check the ranges of --gold"), stacklevel=2)
    return json_text(result.agreement, sort_keys=True) if fmt == "json" else agreement_tables(result.agreement)


#: Options of the comparison between sources, and how they are spelled.
_BETWEEN_OPTIONS = {"rel_level": "--rel-level", "negative_labels": "--negative-labels", "samples": "--samples",
                    "seed": "--seed", "confidence": "--confidence", "sections": "--show", "plot": "--plot",
                    "run_paths": "--runs", "measure": "--measure", "top_k": "--top-k",
                    "score_precision": "--score-precision", "scatter": "--scatter"}


def _refuse_between_options() -> None:
    """The agreement inside a crowd has no pairs of sources: an option given for them would do nothing."""
    from click.core import ParameterSource

    context = click.get_current_context()
    given = [spelled for name, spelled in _BETWEEN_OPTIONS.items()
             if context.get_parameter_source(name) is ParameterSource.COMMANDLINE]
    if given:
        raise InputError("only for comparing sources of labels; the agreement inside one crowd (one crowd source, "
                         "or --within) has no use for it", argument=given[0])


def _expand_run_option(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from .options import expand_run_paths

    return tuple(expand_run_paths(value)) if value else ()


def _check_ranking_options(run_paths, measure, scatter, per_worker) -> None:
    """--measure and --scatter only with --runs; --runs not with --per-worker (before anything is read)."""
    if not run_paths:
        for given, option in ((measure, "--measure"), (scatter, "--scatter")):
            if given is not None:
                raise InputError("scores runs: give them with --runs", argument=option)
    elif per_worker:
        raise InputError("--runs ranks the runs under whole sources of labels; a worker's few labels rank "
                         "nothing: leave out --per-worker", argument="--runs")


def _check_between_options(within, per_worker, sections, fmt, run_paths) -> None:
    """Refusals that depend on the options alone, before any source is read (a mistyped option should not
    wait for a million crowd rows, nor hide behind a file's error)."""
    if per_worker and within:
        raise InputError("--per-worker compares each worker with the other sources; --within measures the "
                         "crowd's own agreement: choose one", argument="--per-worker")
    if within:
        _refuse_between_options()
        return
    if sections and "ranking" in sections and not run_paths:
        raise InputError("the section 'ranking' needs runs to rank: give them with --runs", argument="--show")
    if fmt == "csv" and sections is not None and len(sections) != 1:
        raise InputError("csv holds one table: name one section with --show (pairs, overall, labels, "
                         "topics, confusion, ranking)", argument="--show")


def _ranking_between(labelled, run_paths, measure, top_k, rel_level, score_precision) -> list:
    """With --runs: the ranking agreement of every pair of sources (each source's labels as qrels)."""
    if not run_paths:
        return []
    from ..data import Qrels
    from ..evaluation.analysis import ranking_agreements
    from ..formats.trec import read_run

    runs = [read_run(path) for path in run_paths]
    sources = [Qrels(labels, name) for name, labels in labelled]
    return ranking_agreements(runs, sources, measure or DEFAULT_RANKING_MEASURE, top_k=top_k, rel_level=rel_level,
                              score_precision=score_precision)


def _scatter_files(scatter, ranking) -> dict:
    """``--scatter FILE.png``: {path: PNG} of each pair's scatter plot (one pair: FILE.png itself)."""
    if not scatter:
        return {}
    from ..render.analysis import ranking_agreement_plot
    from ..render.report import slug

    if len(ranking) > MAX_AGREEMENT_PLOT_PAIRS:
        raise InputError(f"--scatter draws up to {MAX_AGREEMENT_PLOT_PAIRS} pairs, there are {len(ranking)}: "
                         "compare fewer sources", argument="--scatter")
    if len(ranking) == 1:
        return {scatter: ranking_agreement_plot(ranking[0])}
    stem, suffix = os.path.splitext(os.fspath(scatter))
    return {f"{stem}-{slug(a.qrels_a)}-{slug(a.qrels_b)}{suffix or '.png'}": ranking_agreement_plot(a)
            for a in ranking}


def _render_between(result: dict, fmt: str, sections, ranking=()) -> str:
    from ..render.agreement import DEFAULT_SECTIONS, agreement_csv, agreement_text
    from ..render.analysis import ranking_agreement_report

    if fmt == "json":
        return json_text(result)
    if fmt == "csv":
        if sections == ("ranking",):
            return ranking_agreement_report(ranking, "csv")
        return agreement_csv(result, sections[0] if sections else "pairs")
    chosen = sections or (*DEFAULT_SECTIONS, "ranking")
    text = agreement_text(result, fmt, [s for s in chosen if s != "ranking"])
    if ranking and "ranking" in chosen:
        text = "\n".join(part for part in (text, ranking_agreement_report(ranking, fmt)) if part)
    return text


@main.command()
@click.argument("sources", nargs=-1, required=True, type=SourcePath(), metavar="[NAME=][KIND:]SOURCE...")
@click.option("--within", is_flag=True,
              help="The agreement inside one crowd (every SOURCE a crowd CSV, concatenated): alpha and Fleiss' "
                   "kappa before and after --gold, each worker's kappa with the aggregated labels. The default "
                   "when the only SOURCE is crowd judgments.")
@click.option("--per-worker", is_flag=True,
              help="Each worker of a crowd source is a source of its own (SOURCE:worker); two workers of one "
                   "crowd are not compared (that is --within).")
@_crowd_options_optional
@click.option("--rel-level", default=2, show_default=True, type=int,
              help="binary_agreement and binary_kappa: a label >= this is relevant.")
@click.option("--negative-labels", type=click.Choice(["unjudged", "category"]), default="unjudged",
              show_default=True,
              help="A label below 0 (qrels' -1: in the pool but unjudged): not judged, so that the pair counts in "
                   "only_a or only_b; or category: a label like any other.")
@click.option("--samples", default=1000, show_default=True, type=click.IntRange(0, MAX_AGREEMENT_SAMPLES),
              help="Bootstrap resamples of the (turn, item) pairs both judged (0: no interval).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**63 - 1),
              help="Seed of the bootstrap: the same seed, the same intervals.")
@click.option("--confidence", default=0.95, show_default=True,
              type=FiniteFloat(0, 1, min_open=True, max_open=True), help="Level of the bootstrap intervals.")
@click.option("--show", "sections", callback=_sections, metavar="SECTION,...",
              help="Sections to write: pairs, overall (alpha of 3+ sources), labels, topics, confusion, ranking "
                   "(with --runs). Default for table, markdown and latex: all but topics; csv holds one (default "
                   "pairs); json holds all.")
@format_option(RECORD_FORMATS)
@output_option()
@click.option("--plot", type=OutputPath(), metavar="FILE.png",
              help="A heatmap of each pair's confusion matrix (PNG).")
@click.option("--runs", "run_paths", multiple=True, type=InputPath(), metavar="RUN", callback=_expand_run_option,
              help="Runs scored under every source (repeatable; a directory stands for its files): how far the "
                   "sources agree on the ranking of the runs, the section 'ranking' (Kendall's tau, tau_AP, "
                   "Spearman's rho, top-k overlap, the runs that move most).")
@single_measure_option(f"With --runs: the measure the runs are ranked by (one; default {DEFAULT_RANKING_MEASURE}).")
@top_k_option
@score_precision_option
@click.option("--scatter", type=OutputPath(), metavar="FILE.png",
              help="With --runs: each run's score under A against B, a PNG per pair of sources (FILE.png for "
                   "one pair; FILE-A-B.png for each of several).")
def agreement(sources, within, per_worker, criteria, gold, input_format, columns, label_map, scale, majority, tie,
              rounding, method, rel_level, negative_labels, samples, seed, confidence, sections, fmt, output, plot,
              run_paths, measure, top_k, score_precision, scatter):
    """How far sources of relevance labels agree: qrels, crowd judgments, LLM labels.

    \b
    Each SOURCE is [NAME=][KIND:]PATH: a TREC qrels file (turn 0 item label) or crowd
    judgments (a CSV, what `castregin aggregate` reads), told apart by the first line: four
    fields apart by spaces, the last an integer, is qrels; a line with a comma is a CSV header.
    KIND (qrels: or crowd:) says it where that fails. NAME defaults to the file's stem.
    A crowd source is aggregated first with the options of `castregin aggregate` (--criteria
    with one criterion, --gold, --majority, --tie, --rounding, --method...), or split into
    its workers with --per-worker.

    \b
    For each pair of sources, on the (turn, item) pairs both judged (pairs judged by one
    only are counted: only_a, only_b; a label below 0, "in the pool but unjudged", is no
    judgment unless --negative-labels category): exact agreement; Cohen's kappa unweighted,
    linear and quadratic (kappa, kappa_linear, kappa_quadratic); Krippendorff's alpha nominal, ordinal
    and interval; agreement and kappa with labels >= --rel-level as relevant; percentile
    bootstrap intervals (--samples, --seed, --confidence); per label (specific agreement),
    per topic and the confusion matrix. With 3 sources or more, alpha of all together.

    \b
    One crowd alone (or --within): the agreement inside it, as before: alpha_nominal,
    alpha_ordinal, alpha_interval and fleiss per criterion and topic, before and after --gold,
    and each worker's kappa_quadratic with the aggregated labels.

    \b
    Examples:
      castregin agreement nist=human.qrel gpt4o=llm.qrel
      castregin agreement human.qrel llm1.qrel llm2.qrel --show pairs,topics --format markdown
      castregin agreement nist.qrel crowd=judgments.csv --criteria relevance --gold gold.csv --plot cm.png
      castregin agreement nist.qrel judgments.csv --criteria relevance --per-worker --format csv
      castregin agreement judgments.csv --criteria relevance,novelty --gold gold.csv
      castregin agreement judgments_*.csv --within --criteria relevance --format json -o agreement.json
      castregin agreement nist=human.qrel gpt4o=llm.qrel --runs runs/ -m nDCG@10 --scatter scores.png
    """
    from ..judging.label_agreement import label_agreement

    crowd = {"criteria": criteria, "gold": gold, "input_format": input_format, "columns": columns,
             "label_map": label_map, "scale": scale, "majority": majority, "tie": tie, "rounding": rounding,
             "method": method}
    inputs = [*(split_source(s)[2] for s in sources), *([gold] if gold else []), *run_paths]
    for path in (output, plot, scatter):
        ensure_not_input(path, inputs)
    _check_ranking_options(run_paths, measure, scatter, per_worker)
    _check_between_options(within, per_worker, sections, fmt, run_paths)
    loaded = _load_sources(sources)
    if within or (len(loaded) == 1 and loaded[0].kind == "crowd" and not per_worker):
        _refuse_between_options()
        with warnings_as_lines():
            text = _within_crowd(loaded, crowd, fmt)
        write_text(output, text)
        return
    with warnings_as_lines():
        labelled, groups = _between_sources(loaded, crowd, per_worker)
        if len(labelled) < 2:
            raise InputError(f"one source of labels ({labelled[0][0] if labelled else 'none'}): name a second "
                             "one to compare with", argument="SOURCE")
        result = label_agreement(labelled, groups=groups, rel_level=rel_level, samples=samples, seed=seed,
                                 confidence=confidence, negative_labels=negative_labels)
        # A source sharing no turn with the runs scores every run 0: warned about, one line each.
        ranking = _ranking_between(labelled, run_paths, measure, top_k, rel_level, score_precision)
    if ranking:
        result["ranking"] = [a.to_dict() for a in ranking]
    text = _render_between(result, fmt, sections, ranking)
    figures = _scatter_files(scatter, ranking)
    figure = None
    if plot:
        from ..render.plots import confusion_plot

        if len(result["pairs"]) > MAX_AGREEMENT_PLOT_PAIRS:
            raise InputError(f"--plot draws up to {MAX_AGREEMENT_PLOT_PAIRS} pairs, there are "
                             f"{len(result['pairs'])}: compare fewer sources", argument="--plot")
        figure = confusion_plot(result["pairs"])
    with OutputSet(inputs) as outputs:
        outputs.write_text(output, text)
        if figure is not None:
            outputs.write_bytes(plot, figure)
        for path, png in figures.items():
            outputs.write_bytes(path, png)
