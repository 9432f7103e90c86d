"""Sources of labels, and how far they agree: the one sequence of ``castregin agreement`` and
:func:`castregin.api.agreement` (and of ``castregin aggregate``'s reading).

A source is ``[NAME=][KIND:]PATH``; ``NAME`` defaults to the file's stem. Its kind is told by its first line
(:func:`castregin.formats.trec.label_source_kind`) or said by ``KIND``:

- ``qrels``: TREC qrels (``turn 0 item label``), compared as they are;
- ``crowd``: crowd judgments (the CSVs ``castregin aggregate`` reads), aggregated with the crowd rules
  (:class:`CrowdRules`: gold filter, mode and tie rule, Dawid-Skene, GLAD), or split into one source per worker;
- ``nuggets``: nuggetizer's assignment JSONL (a file, or a directory standing for its files): one label per
  (qid, run, nugget index), the turn being the qid, the item ``run_id#index``
  (:func:`castregin.nuggets.scores.unit_labels`: support 2, partial_support 1, not_support 0). Two nugget
  sources must assign the same nuggets: a different text or importance at the same index is refused.

Between two sources or more, :func:`castregin.judging.label_agreement.label_agreement` compares the labels
pair by pair; with runs, :func:`castregin.evaluation.analysis.ranking_agreements` ranks them under each source;
with nugget sources, the runs their assignments hold are ranked by a nugget score under each
(:func:`nugget_rankings`). One crowd alone (or ``within``) is the agreement inside it, as ``aggregate`` audits it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..arrays import choose_allocator
from ..errors import InputError, InputWarning
from ..evaluation.ranking import DEFAULT_SCORE_PRECISION, DEFAULT_TOP_K
from ..formats.common import display_name, expand_run_paths, read_bytes, split_named, stem
from ..formats.crowd import DEFAULT_SCALE
from ..formats.nuggets import Assignment, parse_assignments, read_assignment_files
from ..formats.trec import LABEL_SOURCE_KINDS, label_source_kind, parse_qrels
from ..limits import MAX_AGREEMENT_PLOT_PAIRS
from .aggregate import Aggregation, aggregate, worker_labels

if TYPE_CHECKING:
    import pandas as pd

    from ..evaluation.analysis import RankingAgreement

#: The measure runs are ranked by under qrels sources unless one is given (CAsT's MI measure).
DEFAULT_RANKING_MEASURE = "nDCG@3"
#: The nugget score runs are ranked by under nugget sources unless one is given.
DEFAULT_NUGGET_RANKING_MEASURE = "all_score"
#: Dropped answers named in a warning; more are counted.
_NAMED = 10


@dataclass(frozen=True)
class CrowdRules:
    """How crowd judgments are read and turned into one label per (turn, item): the options of ``aggregate``.

    ``columns`` maps roles to column names (:func:`castregin.formats.crowd.parse_columns`' result); ``gold`` is a
    gold CSV's path (``turn_id,item_id,criterion,min_label,max_label``).
    """

    criteria: Sequence[str] | None = None
    gold: str | os.PathLike | None = None
    input_format: str = "auto"
    columns: Mapping[str, str] = field(default_factory=dict)
    label_map: Mapping[str, int] = field(default_factory=dict)
    scale: tuple[int, int] = DEFAULT_SCALE
    majority: str = "plurality"
    tie: str = "mean"
    rounding: str = "half-up"
    method: str = "mode-mean"

    def decision(self) -> dict:
        """The keywords of :func:`castregin.judging.aggregate.aggregate` that decide a label."""
        return {"majority": self.majority, "tie": self.tie, "rounding": self.rounding, "method": self.method}


def read_crowd(paths: Sequence[str | os.PathLike], rules: CrowdRules, *,
               loaded: Sequence[tuple[bytes, str]] | None = None, gold_frame: pd.DataFrame | None = None):
    """(Judgments, gold frame): the crowd CSVs ``paths`` (or ``loaded`` ``(bytes, name)`` pairs already read), and
    the gold file (``gold_frame`` when already read, shared by several crowd sources)."""
    from ..formats import crowd

    # pyarrow parses the judgments: jemalloc holds its blocks in a third less memory than mimalloc here.
    choose_allocator()
    # The gold file is read first: it is small, and a bad one should not wait for a million rows.
    if gold_frame is None and rules.gold:
        gold_frame = crowd.read_gold(rules.gold, rules.scale)
    criteria = list(rules.criteria or ())
    columns, label_map = dict(rules.columns), dict(rules.label_map)
    if loaded is None:
        data = crowd.read_judgments(paths, criteria, input_format=rules.input_format, columns=columns,
                                    label_map=label_map, scale=rules.scale)
    else:
        data = crowd.parse_judgments(loaded, criteria, input_format=rules.input_format, columns=columns,
                                     label_map=label_map, scale=rules.scale)
    return data, gold_frame


def aggregate_stage(paths: Sequence[str | os.PathLike], rules: CrowdRules, *, min_label: int = 2,
                    time_column: str | None = "auto", prefix: str = "question") -> Aggregation:
    """``castregin aggregate``: read the crowd CSVs and aggregate them with ``rules``; a result with no label at
    all is an :class:`InputError` (nothing to write), a criterion or filtered qrels left empty a warning naming
    the file (``prefix``: that of the outputs, :func:`castregin.formats.aggregation.aggregation_files`)."""
    from ..formats.aggregation import check_file_name_part

    check_file_name_part(prefix)
    data, gold_frame = read_crowd(paths, rules)
    result = aggregate(data, gold_frame, min_label=min_label, time_column=time_column, **rules.decision())
    _check_not_empty(result, min_label, prefix)
    return result


def _check_not_empty(result: Aggregation, min_label: int, prefix: str) -> None:
    removed = len({r["worker_id"] for r in result.removed})
    why = (f": the gold filter removed every label ({removed} worker(s) in {len(result.removed)} (worker, topic) "
           "pair(s)); check the ranges of --gold" if removed else "")
    empty = [c for c in result.criteria if not result.qrels[c]]
    if len(empty) == len(result.criteria):
        raise InputError(f"no label is left to write{why}; nothing written")
    for criterion in result.criteria:
        stem_of = f"{prefix}_{criterion}" if prefix else criterion
        if criterion in empty:
            warnings.warn(InputWarning(f"criterion {criterion}: no label is left (its cells are empty, or the gold "
                                       f"filter removed them); {stem_of}.qrel is empty"), stacklevel=3)
        elif not result.filtered[criterion]:
            warnings.warn(InputWarning(f"criterion {criterion}: no turn has a label >= {min_label} (--min-label); "
                                       f"{stem_of}_filtered.qrel is empty"), stacklevel=3)


# --- the sources of agreement --------------------------------------------------------------------------------


def split_source(value: str | os.PathLike) -> tuple[str | None, str | None, str]:
    """``[NAME=][KIND:]PATH`` -> (NAME, KIND, PATH); KIND is one of ``qrels``, ``crowd``, ``nuggets`` (None:
    recognised from the content). A path that exists as written is taken whole."""
    name, rest = split_named(os.fspath(value))
    for kind in LABEL_SOURCE_KINDS:
        if rest.startswith(kind + ":") and not os.path.exists(rest):
            return name, kind, rest[len(kind) + 1:]
    return name, None, rest


@dataclass
class LabelSource:
    """A source as read: its name, kind, path, the name messages give it, and its bytes (None for a directory of
    nugget assignment files)."""

    name: str
    kind: str
    path: str
    source: str
    data: bytes | None


def load_sources(specs: Sequence[str | os.PathLike]) -> list[LabelSource]:
    """Read each ``[NAME=][KIND:]PATH``; a directory is a nugget source (its files are assignment files)."""
    loaded = []
    for spec in specs:
        name, kind, path = split_source(spec)
        source = display_name(path)
        if path != "-" and os.path.isdir(path):
            if kind not in (None, "nuggets"):
                raise InputError(f"is a directory: only nugget assignments are read from a directory of files, "
                                 f"not {kind}", source=source)
            loaded.append(LabelSource(name or stem(path.rstrip("/\\") or path), "nuggets", path, source, None))
            continue
        data = read_bytes(path)
        loaded.append(LabelSource(name or stem(path), kind or label_source_kind(data, source), path, source, data))
    return loaded


def nugget_assignments(source: LabelSource) -> list[Assignment]:
    """The assignments of a nugget source (a file, or a directory's files)."""
    if source.data is None:
        return read_assignment_files(expand_run_paths([source.path]))
    return parse_assignments(source.data, source.source, stem(source.path))


@dataclass
class AgreementOutcome:
    """What :func:`agreement_stage` found: ``within`` (the agreement inside one crowd: per criterion, before and
    after the gold filter, and each worker, as ``aggregate``'s audit holds it) or ``between`` (the agreement of
    each pair of sources, :func:`castregin.judging.label_agreement.label_agreement`'s result, with ``ranking``:
    each pair's ranking agreement as plain data, when runs were ranked); ``ranking`` holds those agreements as
    :class:`castregin.evaluation.analysis.RankingAgreement`."""

    within: dict | None = None
    between: dict | None = None
    ranking: list[RankingAgreement] = field(default_factory=list)


def agreement_stage(specs: Sequence[str | os.PathLike], rules: CrowdRules = CrowdRules(), *, within: bool = False,
                    per_worker: bool = False, rel_level: int = 2, negative_labels: str = "unjudged",
                    samples: int = 1000, seed: int = 0, confidence: float = 0.95,
                    run_paths: Sequence[str | os.PathLike] = (), rank_runs: bool = False, measure: str | None = None,
                    top_k: int = DEFAULT_TOP_K, score_precision: str = DEFAULT_SCORE_PRECISION,
                    within_check: Callable[[], None] | None = None) -> AgreementOutcome:
    """How far the sources ``specs`` agree (see the module): inside one crowd, or between sources, with the
    ranking of runs under each (``run_paths`` scored by ``measure`` under qrels and crowd sources; with
    ``rank_runs``, the runs nugget sources hold, ranked by a nugget score).

    ``within`` (or one crowd source alone, without ``per_worker``) measures the crowd's own agreement;
    ``within_check`` is called then, before the crowd is parsed (with ``within``, before anything is read), for
    the caller to refuse what it was given for a comparison between sources (the command line: ``--rel-level``
    ...). Every refusal that depends on the settings alone comes before any source is read.
    """
    _check_settings(within, per_worker, run_paths, rank_runs, measure)
    if within and within_check is not None:
        within_check()
    loaded = load_sources(specs)
    if within or (len(loaded) == 1 and loaded[0].kind == "crowd" and not per_worker):
        if within_check is not None and not within:
            within_check()
        return AgreementOutcome(within=_within_crowd(loaded, rules))
    from .label_agreement import label_agreement

    other = [s for s in loaded if s.kind != "nuggets"]
    if rank_runs and (other or len(loaded) < 2):
        raise InputError("ranking runs by their nugget scores needs two nugget sources or more (nuggets:FILE)"
                         + (f"; {other[0].source} holds {other[0].kind}" if other else ""), argument="rank_runs")
    labelled, groups, assignments = _between_sources(loaded, rules, per_worker)
    if len(labelled) < 2:
        raise InputError(f"one source of labels ({labelled[0][0] if labelled else 'none'}): name a second one to "
                         "compare with", argument="sources")
    result = label_agreement(labelled, groups=groups, rel_level=rel_level, samples=samples, seed=seed,
                             confidence=confidence, negative_labels=negative_labels)
    if rank_runs:
        ranking = nugget_rankings(assignments, measure or DEFAULT_NUGGET_RANKING_MEASURE, top_k)
    elif run_paths:
        ranking = _ranking_of_runs(labelled, run_paths, measure, top_k, rel_level, score_precision)
    else:
        ranking = []
    if ranking:
        result["ranking"] = [a.to_dict() for a in ranking]
    return AgreementOutcome(between=result, ranking=ranking)


def _check_settings(within, per_worker, run_paths, rank_runs, measure) -> None:
    """Refusals that depend on the settings alone (a mistyped option should not wait for a million crowd rows)."""
    if per_worker and within:
        raise InputError("--per-worker compares each worker with the other sources; --within measures the "
                         "crowd's own agreement: choose one", argument="per_worker")
    if run_paths and rank_runs:
        raise InputError("--runs scores run files under qrels and crowd sources; --rank-runs ranks the runs that "
                         "nugget sources hold: choose one", argument="rank_runs")
    if measure is not None and not (run_paths or rank_runs):
        raise InputError("scores runs: give them with --runs (or --rank-runs, for nugget sources)",
                         argument="measure")
    if (run_paths or rank_runs) and per_worker:
        raise InputError(f"{'--runs' if run_paths else '--rank-runs'} ranks the runs under whole sources of labels; "
                         "a worker's few labels rank nothing: leave out --per-worker",
                         argument="run_paths" if run_paths else "rank_runs")
    if (run_paths or rank_runs) and within:
        raise InputError("the agreement inside one crowd ranks no runs: leave out --within",
                         argument="run_paths" if run_paths else "rank_runs")


def _between_sources(loaded: Sequence[LabelSource], rules: CrowdRules,
                     per_worker: bool) -> tuple[list[tuple[str, dict]], list[str | None], list[tuple[str, list]]]:
    """(``(name, labels)`` of each source, the group of each, ``(name, assignments)`` of each nugget source): qrels
    as they are, each crowd aggregated with ``rules`` or (``per_worker``) one source per worker, grouped by crowd,
    nugget assignments as (qid, run#index) labels."""
    from ..nuggets.scores import check_same_nuggets, unit_labels

    criteria = list(rules.criteria or ())
    if any(s.kind == "crowd" for s in loaded) and len(criteria) != 1:
        among = f" (one of {','.join(criteria)})" if criteria else ""
        within = (" (or --within: the agreement inside one crowd, its CSVs concatenated)"
                  if all(s.kind == "crowd" for s in loaded) else "")
        raise InputError("comparing crowd judgments with other sources needs exactly one criterion, the label "
                         f"compared: give --criteria NAME{among}{within}", argument="criteria")
    sources: list[tuple[str, dict]] = []
    groups: list[str | None] = []
    assignments: list[tuple[str, list]] = []
    gold_frame = None  # read with the first crowd source, shared by the others
    for s in loaded:
        if s.kind == "qrels":
            sources.append((s.name, parse_qrels(s.data or b"", s.source, s.name).labels))
            groups.append(None)
        elif s.kind == "nuggets":
            assigned = nugget_assignments(s)
            assignments.append((s.name, assigned))
            sources.append((s.name, unit_labels(assigned)))
            groups.append(None)
        else:
            data, gold_frame = read_crowd([s.path], rules, loaded=[(s.data or b"", s.source)], gold_frame=gold_frame)
            if per_worker:
                for worker, labels in worker_labels(data, gold_frame, criteria[0]).items():
                    sources.append((f"{s.name}:{worker}", labels))
                    groups.append(s.name)
                continue
            result = aggregate(data, gold_frame, agreement=False, time_column=None, **rules.decision())
            sources.append((s.name, result.qrels[criteria[0]]))
            groups.append(None)
    check_same_nuggets(assignments)
    return sources, groups, assignments


def _within_crowd(loaded: Sequence[LabelSource], rules: CrowdRules) -> dict:
    """The agreement inside one crowd (every source concatenated), as ``castregin aggregate`` audits it."""
    other = [s.source for s in loaded if s.kind != "crowd"]
    if other:
        raise InputError(f"{other[0]} holds {next(s.kind for s in loaded if s.kind != 'crowd')}: the agreement inside "
                         "a crowd (--within) reads crowd judgments only", argument="sources")
    if not rules.criteria:
        raise InputError("crowd judgments need --criteria (the judged criteria, comma-separated)", argument="criteria")
    data, gold_frame = read_crowd([s.path for s in loaded], rules, loaded=[(s.data or b"", s.source) for s in loaded])
    result = aggregate(data, gold_frame, **rules.decision())
    if not any(result.qrels[c] for c in result.criteria):
        removed = len({r["worker_id"] for r in result.removed})
        warnings.warn(InputWarning(f"the gold filter removed every label ({removed} worker(s) in {len(result.removed)} "
                                   "(worker, topic) pair(s)): the agreement after it is of nothing, and no worker is "
                                   "compared with the aggregated labels; check the ranges of --gold"), stacklevel=3)
    return result.agreement


def _ranking_of_runs(labelled, run_paths, measure, top_k, rel_level, score_precision) -> list:
    """The ranking agreement of every pair of sources (each source's labels as qrels) on the runs ``run_paths``."""
    from ..data import Qrels
    from ..evaluation.analysis import ranking_agreements
    from ..formats.trec import read_run

    runs = [read_run(path) for path in run_paths]
    sources = [Qrels(labels, name) for name, labels in labelled]
    return ranking_agreements(runs, sources, measure or DEFAULT_RANKING_MEASURE, top_k=top_k, rel_level=rel_level,
                              score_precision=score_precision)


def nugget_rankings(sources: Sequence[tuple[str, Sequence[Assignment]]], measure: str = DEFAULT_NUGGET_RANKING_MEASURE,
                    top_k: int = DEFAULT_TOP_K) -> list[RankingAgreement]:
    """How far nugget sources agree on the ranking of the runs they assign: each run's mean of ``measure``
    (:func:`castregin.nuggets.scores.score_assignments`) under each source, on the (run, qid) answers every source
    assigned (the others are left out, and said), compared pair by pair
    (:func:`castregin.evaluation.analysis.agreement_of_scores`: Kendall's tau, tau_AP, Spearman's rho, top-k)."""
    from ..evaluation.analysis import agreement_of_scores
    from ..nuggets.scores import ALL_TURNS, parse_measure_names, score_assignments

    if len(sources) < 2 or len(sources) != len({name for name, _ in sources}):
        raise InputError("ranking runs by their nugget scores needs two nugget sources or more (nuggets:FILE), "
                         "each named once", argument="rank_runs")
    (chosen,) = parse_measure_names([measure])
    keys = [{(a.run_id, a.qid) for a in assigned} for _, assigned in sources]
    common = set.intersection(*keys)
    left_out = sorted(set.union(*keys) - common)
    if not common:
        raise InputError("the nugget sources assign no (run, qid) answer in common: there is no run to rank",
                         argument="sources")
    if left_out:
        named = ", ".join(f"{run}:{qid}" for run, qid in left_out[:_NAMED])
        warnings.warn(InputWarning(f"{len(left_out)} answer(s) are assigned by some nugget sources only and left out "
                                   f"of the ranking of runs: {named}"
                                   + (f" and {len(left_out) - _NAMED} more" if len(left_out) > _NAMED else "")),
                      stacklevel=2)
    runs = list(dict.fromkeys(a.run_id for a in sources[0][1] if (a.run_id, a.qid) in common))
    if len(runs) < 2:
        raise InputError("ranking agreement needs at least two runs that every nugget source assigns",
                         argument="rank_runs")
    means = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        for name, assigned in sources:
            rows = score_assignments([a for a in assigned if (a.run_id, a.qid) in common], name, [chosen])
            found = {run: value for run, _, measure_name, turn, value in rows
                     if measure_name == chosen and turn == ALL_TURNS}
            means.append([found[run] for run in runs])
    # The sources assign the same nuggets: their warnings (turns without a vital nugget) are the same, said once.
    for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, InputWarning)):
        warnings.warn(InputWarning(message), stacklevel=2)
    return [agreement_of_scores(runs, sources[i][0], means[i], sources[j][0], means[j], chosen, top_k)
            for i in range(len(sources)) for j in range(i + 1, len(sources))]


def check_plot_pairs(count: int, option: str) -> None:
    """A figure per pair of sources is drawn up to :data:`~castregin.limits.MAX_AGREEMENT_PLOT_PAIRS` pairs."""
    if count > MAX_AGREEMENT_PLOT_PAIRS:
        raise InputError(f"{option} draws up to {MAX_AGREEMENT_PLOT_PAIRS} pairs, there are {count}: compare fewer "
                         "sources", argument=option.lstrip("-").replace("-", "_"))
