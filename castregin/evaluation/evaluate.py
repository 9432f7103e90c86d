"""Evaluating runs against qrels with trec_eval's semantics.

Measures are :class:`~castregin.evaluation.measures.Measure` objects, or names parsed once into them
here (:func:`~castregin.evaluation.measures.parse_measures`). Each measure's per-turn values come from
its definition: its vectorised computation in castregin's streaming engine
(:mod:`castregin.evaluation.engine`) where it has one (every measure of ``all_trec``, and
Judged@k), which reproduces trec_eval 9's numbers (pytrec_eval's, to the last bit on the
CAsT data), else its rule, trec_eval's rule in castregin's Python (:mod:`castregin.evaluation.plain`,
checked against trec_eval's binary and pytrec_eval); small inputs are scored by the rules alone. No
C code sees the input: where trec_eval crashes or hangs (a turn labelled only below 0, labels from
2^30 on), castregin refuses in one line, for the measures whose value there trec_eval does not
define (those without :attr:`~castregin.evaluation.measures.Definition.any_label`), on every path.
Items are ranked on scores compared as doubles, as castregin's reference trec_eval-9.0.8 compares
them, or with ``score_precision="float"`` as 32-bit floats, as pytrec_eval, ir_measures and
trec_eval up to v9.0.8 do (:mod:`castregin.evaluation.ranking`). castregin decides which turns are
averaged, because that is where tools differ:

- default (``trec_eval -l2``): the turns present in both the qrels and the run;
- ``complete=True`` (``trec_eval -l2 -c``): every qrels turn, a turn the run lacks scoring 0.
  ir_measures' own aggregate always does this, so castregin averages itself.

The ``all`` value of each measure is formed as trec_eval forms it (see :mod:`castregin.evaluation.measures`):
means, sums for the counts, geometric means for gm_map and gm_bpref; means are summed in
trec_eval's order (turn ids in byte order, one after the other), so they equal trec_eval's to the
last bit. Every (run, qrels) also gets a ``num_q`` row: the number of turns averaged. A run that
shares no turn with a qrels, or fewer than half of its turns, raises a
:class:`~castregin.errors.CoverageWarning` (:func:`warnings.warn`): such means look like results
and are not. So does a run whose top 10 items the qrels hardly judge (:data:`FEW_JUDGED`).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from .. import formats
from ..arrays import THREADS
from ..data import Qrels, Run
from ..errors import CoverageWarning, InputError, InputWarning
from .few_judged import FEW_JUDGED, JUDGED_KEY, JUDGED_SHARE_MEASURE, warn_if_few_judged
from .measures import ALL_LINES, COUNT_TURNS, DEFAULT_MEASURES, Measure, parse_measures
from .ranking import DEFAULT_BITS, DEFAULT_SCORE_PRECISION, score_bits
from .small import small_inputs

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ..formats import columnar
    from .engine import QrelsIndex

#: Columns of the long result table, as in ``--format json``.
RESULT_COLUMNS = ["run", "qrels", "measure", "turn", "value"]

ALL_TURNS = "all"
#: The row every (run, qrels) gets: the number of turns averaged.
NUM_Q = "num_q"
#: Below this share of a qrels' turns, a run's coverage is worth a warning.
FEW_TURNS = 0.5
# A run whose items the qrels hardly judge (response ids against question qrels) scores about 0 on every measure,
# which looks like a result: a CoverageWarning too (castregin.evaluation.few_judged says when).


def natural_key(turn: str):
    """Sort key that puts ``132_2-9`` before ``132_2-11`` (for people; files use byte order)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", turn)]


def trec_eval_mean(values: Iterable[float], count: int) -> float:
    """trec_eval's mean: a plain left-to-right double sum divided by ``count`` (0 when empty)."""
    total = 0.0
    for value in values:
        total += value
    return total / count if count else 0.0


class TurnValues(Mapping):
    """Per-turn values of one measure as two columns, ``turns`` and ``values`` (a float array), read as a mapping.

    What a streamed run keeps of each measure: eight bytes a turn instead of a dict entry and a
    float object (some sixty bytes), which tells at 50,000 turns.
    """

    def __init__(self, turns: list[str], values: np.ndarray):
        # Not ``values``: that is Mapping's method, which must keep working (``dict.values()``-like).
        self.turns, self.array = turns, values
        self._index: dict[str, int] | None = None

    def __getitem__(self, turn: str) -> float:
        if self._index is None:
            self._index = {t: i for i, t in enumerate(self.turns)}
        return float(self.array[self._index[turn]])

    def __iter__(self):
        return iter(self.turns)

    def __len__(self) -> int:
        return len(self.turns)

    def in_byte_order(self) -> list[float]:
        """The values in the order of their turns' ids (byte order), as trec_eval accumulates them."""
        values = self.array.tolist()
        return [values[i] for i in sorted(range(len(self.turns)), key=self.turns.__getitem__)]


class QrelsFacts(NamedTuple):
    """What averaging needs of a qrels: its name, its turns, and its lines labelled above 0."""

    name: str
    turns: tuple[str, ...]
    positive_lines: int

    @classmethod
    def of(cls, qrels: Qrels | columnar.ColumnarQrels) -> QrelsFacts:
        if isinstance(qrels, Qrels):
            positive = sum(1 for items in qrels.labels.values() for label in items.values() if label > 0)
            return cls(qrels.name, tuple(qrels.labels), positive)
        return cls(qrels.name, tuple(qrels.turns.tolist()), int((qrels.labels > 0).sum()))


def check_qrels_names(names: Sequence[str]) -> None:
    """Two qrels with one name would be two sets of rows nobody can tell apart: an error."""
    seen = set()
    for name in names:
        if name in seen:
            raise InputError(f"two qrels are named {name!r}; give them distinct names (NAME=QRELS)")
        seen.add(name)


# --- per-turn values ---------------------------------------------------------------------------------------


def _engine_scores(run: columnar.ColumnarRun, index: QrelsIndex, measures: Sequence[Measure],
                   threads: int = THREADS, score_bits: int = DEFAULT_BITS) -> dict[str, TurnValues]:
    """Per-turn values from the engine for the measures it computes (the others are left out), and the
    judged shares."""
    from .engine import evaluate_run_arrays

    mine = [*(m for m in measures if m.in_engine), JUDGED_SHARE_MEASURE]
    turns, values = evaluate_run_arrays(run, index, mine, threads, score_bits)
    return {m.name: TurnValues(turns, v) for m, v in zip(mine, values, strict=True)}


# --- from per-turn values to rows ------------------------------------------------------------------------------


def aggregate_value(measure: Measure, values: Mapping[str, float], facts: QrelsFacts, averaged: int,
                    complete: bool) -> float:
    """The ``all`` value of a measure from its per-turn values, as trec_eval's ``calc_avg`` forms it.

    ``values`` holds the turns the run and qrels share; ``averaged`` is the number of turns the mean
    is over (the shared turns, or every qrels turn when ``complete``).
    """
    # Byte order, as trec_eval accumulates.
    ordered = values.in_byte_order() if isinstance(values, TurnValues) else [values[t] for t in sorted(values)]
    return measure.definition.summary(trec_eval_mean(ordered, 1), averaged, len(ordered), complete,
                                      lambda: facts.positive_lines)


def _rows(name: str, facts: QrelsFacts, measures: Sequence[Measure], scores: Mapping[str, Mapping[str, float]],
          shared: int, complete: bool, per_turn: bool) -> list[tuple]:
    """Result rows ``(run, qrels, measure, turn, value)``: num_q, then each measure's ``all`` and turns."""
    averaged = len(facts.turns) if complete else shared
    rows = []
    if not any(m.aggregate == COUNT_TURNS for m in measures):
        rows.append((name, facts.name, NUM_Q, ALL_TURNS, float(averaged)))
    for measure in measures:
        values = scores.get(measure.name, {})
        rows.append((name, facts.name, measure.name, ALL_TURNS,
                     aggregate_value(measure, values, facts, averaged, complete)))
        if per_turn and measure.per_turn:
            if complete:
                values = {turn: values.get(turn, 0.0) for turn in facts.turns}
            rows.extend((name, facts.name, measure.name, turn, values[turn])
                        for turn in sorted(values, key=natural_key))
    return rows


def _warn_coverage(run_name: str, facts: QrelsFacts, shared: int, complete: bool) -> None:
    total = len(facts.turns)
    if total == 0:
        return  # said once per qrels by _warn_empty_qrels
    if shared == 0:
        warnings.warn(CoverageWarning(
            f"run {run_name!r} shares no turn with qrels {facts.name!r} ({total} turns): every value is 0; "
            f"check the turn ids (the qrels' look like {facts.turns[0]!r})"), stacklevel=3)
    elif shared < FEW_TURNS * total:
        counted = (f"the other {total - shared} count 0 (complete)" if complete
                   else f"means are over {'that turn' if shared == 1 else f'those {shared} turns'} only")
        warnings.warn(CoverageWarning(
            f"run {run_name!r} covers {shared} of the {total} turns of qrels {facts.name!r}; {counted}"),
            stacklevel=3)


def _judged_share(scores: Mapping[str, Mapping[str, float]]) -> float | None:
    """The mean of the per-turn judged shares among ``scores`` (None without a shared turn)."""
    shares = scores.get(JUDGED_KEY)
    if not shares:
        return None
    return float(shares.array.mean()) if isinstance(shares, TurnValues) else math.fsum(shares.values()) / len(shares)


def _warn_judged(run_name: str, facts: QrelsFacts, scores: Mapping[str, Mapping[str, float]]) -> None:
    """The judged-share warning (:data:`FEW_JUDGED`), from the per-turn shares among ``scores``."""
    share = _judged_share(scores)
    if share is None:
        return  # no shared turn: _warn_coverage said so
    warn_if_few_judged(run_name, facts.name, share, len(scores[JUDGED_KEY]), stacklevel=3)


def _warn_empty_qrels(facts: QrelsFacts, before: int) -> None:
    if not facts.turns:
        warnings.warn(CoverageWarning(
            f"qrels {facts.name!r} keeps none of its {before} turns after the turn list; every value is 0"),
            stacklevel=3)


class _Tagged(Protocol):
    """What names a run in results: a :class:`~castregin.data.Run`, or one once scored."""

    @property
    def tag(self) -> str: ...
    @property
    def source(self) -> str | None: ...


def run_names(runs: Sequence[_Tagged]) -> list[str]:
    """The name of each run in results: its tag, or ``tag (file)`` where two runs share a tag."""
    tags = [run.tag for run in runs]
    return [
        tag if tags.count(tag) == 1 else f"{tag} ({run.source})"
        for tag, run in zip(tags, runs, strict=True)
    ]


def evaluate(runs: Sequence[Run] | Run, qrels: Sequence[Qrels] | Qrels,
             measures: Sequence[str | Measure] = DEFAULT_MEASURES, rel_level: int = 2,
             complete: bool = False, per_turn: bool = False,
             turns: Iterable[str] | None = None, score_precision: str = DEFAULT_SCORE_PRECISION) -> pd.DataFrame:
    """Evaluate every run against every qrels, as ``trec_eval -l<rel_level> [-c]`` would.

    Parameters
    ----------
    runs, qrels:
        One or several :class:`Run` / :class:`Qrels` (see :func:`castregin.formats.read_run`).
    measures:
        Names in ir_measures' syntax (``P@1``, ``nDCG@3``) or trec_eval's (``P_1``, ``ndcg_cut_3``,
        ``all_trec``), or measures parsed already (:func:`castregin.evaluation.measures.parse_measures`,
        which a caller that also inspects them uses, so that nothing is parsed twice); see
        :mod:`castregin.evaluation.measures`.
    rel_level:
        Label at or above which an item is relevant for binary measures (nDCG uses the grades).
    complete:
        Average over every qrels turn (a missing one scores 0) instead of the turns both share.
    per_turn:
        Also return one row per turn.
    turns:
        Keep only these turns of every qrels.
    score_precision:
        ``"double"``: rank items on scores compared as doubles, as trec_eval-9.0.8 does; ``"float"``:
        as 32-bit floats, as pytrec_eval, ir_measures and trec_eval up to v9.0.8 (2020) do. They differ
        where two scores of a turn are equal as floats and not as doubles
        (:mod:`castregin.evaluation.ranking`).

    Returns
    -------
    A DataFrame with columns ``run, qrels, measure, turn, value``; ``turn`` is ``"all"`` for the
    values over all turns, and each (run, qrels) has a ``num_q`` row, the number of turns averaged.
    Coverage problems are :class:`~castregin.errors.CoverageWarning` warnings.

    >>> evaluate(read_run("bm25.run"), read_qrels("question_relevance_all.qrel"), ["P@1"])  # doctest: +SKIP
    """
    import pandas as pd  # only here: the command line renders rows without it

    rows = evaluate_rows(runs, qrels, measures, rel_level, complete, per_turn, turns, score_precision)
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def evaluate_rows(runs: Sequence[Run] | Run, qrels: Sequence[Qrels] | Qrels,
                  measures: Sequence[str | Measure] = DEFAULT_MEASURES, rel_level: int = 2,
                  complete: bool = False, per_turn: bool = False,
                  turns: Iterable[str] | None = None, score_precision: str = DEFAULT_SCORE_PRECISION) -> list[tuple]:
    """:func:`evaluate` as plain ``(run, qrels, measure, turn, value)`` tuples, in the same order."""
    from ..formats import columnar
    from . import plain, trec_rules
    from .engine import QrelsIndex

    bits = score_bits(score_precision)
    runs = [runs] if isinstance(runs, Run) else list(runs)
    qrels_list = [qrels] if isinstance(qrels, Qrels) else list(qrels)
    check_qrels_names([q.name for q in qrels_list])
    parsed = parse_measures(measures, rel_level)  # unknown names fail before any work
    sizes = [len(q.labels) for q in qrels_list]
    if turns is not None:
        turns = list(turns)
        qrels_list = [q.subset(turns) for q in qrels_list]
    columnar_runs = [columnar.run_from_dict(run) for run in runs] if any(m.in_engine for m in parsed) else None
    # The measures the engine lacks by their rules alone, and the judged shares too where the engine does not run.
    by_rules = [m for m in parsed if not m.in_engine] + ([] if columnar_runs is not None else [JUDGED_SHARE_MEASURE])
    rows: list[tuple] = []
    for qrels_item, size in zip(qrels_list, sizes, strict=True):
        facts = QrelsFacts.of(qrels_item)
        _warn_empty_qrels(facts, size)
        index = QrelsIndex(columnar.qrels_from_dict(qrels_item)) if columnar_runs is not None else None
        for position, (run, name) in enumerate(zip(runs, run_names(runs), strict=True)):
            scores: dict[str, Mapping[str, float]] = {}
            if any(m.in_engine and not m.any_label for m in parsed):
                # The rules refuse what trec_eval cannot evaluate; the engine computes those measures as they do.
                trec_rules.refuse_unevaluable(qrels_item.labels, [t for t in run.scores if t in qrels_item.labels],
                                              qrels_item.source)
            if index is not None and columnar_runs is not None:
                scores.update(_engine_scores(columnar_runs[position], index, parsed, score_bits=bits))
            scores.update(zip((m.name for m in by_rules),
                              plain.evaluate_run(run.scores, qrels_item.labels, by_rules, bits, qrels_item.source,
                                                 ranks=run.ranks),
                              strict=True))
            shared = sum(1 for turn in run.scores if turn in qrels_item.labels)
            _warn_coverage(name, facts, shared, complete)
            _warn_judged(name, facts, scores)
            rows.extend(_rows(name, facts, parsed, scores, shared, complete, per_turn))
    return rows


def evaluate_files(run_paths: Sequence[str | os.PathLike], qrels_paths: Sequence[tuple[str | None, str]],
                   **options) -> pd.DataFrame:
    """:func:`evaluate` on files: ``qrels_paths`` holds ``(name or None, path)`` pairs.

    A qrels file whose first line has five columns is stratified qrels (``turn 0 item stratum label``:
    :func:`castregin.formats.trec.parse_qrels`), whose strata the inferred measures read and whose labels
    the others do.

    Each qrels is read and indexed once, while the first runs are parsed. Each run is streamed
    (:class:`~castregin.formats.columnar.TurnStream`): a thread parses it while another scores the
    whole turns already read (pyarrow's kernels and numpy's big loops release the GIL), keeping
    only the per-turn values, so memory does not grow with the run; several runs are scored side
    by side. A run whose turns are not contiguous, or that the fast parser cannot vouch for, is
    read whole instead; from :data:`WHOLE_RUN_NOTE_LINES` lines on, an
    :class:`~castregin.errors.InputWarning` says so. Small inputs
    (:func:`castregin.evaluation.small.small_inputs`) are read by the line reader and scored in plain
    Python (:mod:`castregin.evaluation.plain`), whatever the measures, loading neither numpy, pyarrow
    nor pandas. Larger ones with a measure the engine lacks are read as dicts for trec_eval's rules.
    """
    import pandas as pd  # only here: the command line renders rows without it

    return pd.DataFrame(evaluate_file_rows(run_paths, qrels_paths, **options), columns=RESULT_COLUMNS)


def qrels_name(name: str | None, path: str | os.PathLike) -> str:
    """The name of a qrels in results: the one given, else the file stem."""
    return name or formats.stem(path)


def evaluate_file_rows(run_paths: Sequence[str | os.PathLike], qrels_paths: Sequence[tuple[str | None, str]],
                       **options) -> list[tuple]:
    """:func:`evaluate_files` as plain ``(run, qrels, measure, turn, value)`` tuples, in the same order."""
    unknown = set(options) - {"measures", "rel_level", "complete", "per_turn", "turns", "score_precision"}
    if unknown:
        raise TypeError(f"evaluate_files() got unexpected options {sorted(unknown)}")
    bits = score_bits(options.get("score_precision", DEFAULT_SCORE_PRECISION))
    check_qrels_names([qrels_name(name, path) for name, path in qrels_paths])
    parsed = parse_measures(options.get("measures", DEFAULT_MEASURES), options.get("rel_level", 2))
    diversity = None
    if any(measure.definition.diversity for measure in parsed):  # the diversity readers' module, for them only
        from ..formats.diversity import diversity_reader

        diversity = diversity_reader(parsed)
    # Before anything heavy is imported; only when it decides something (it may decompress MiBs of an input).
    small = diversity is None and small_inputs(run_paths, [path for _, path in qrels_paths])
    if diversity is not None or (not small and not all(m.in_engine for m in parsed)):
        qrels_list = [diversity(path, name) if diversity else formats.read_qrels(path, name, stratified=None)
                      for name, path in qrels_paths]
        return evaluate_rows([formats.read_run(path) for path in run_paths], qrels_list,
                             **{**options, "measures": parsed})
    complete = options.get("complete", False)
    score = _score_small_files if small else _score_files
    results, qrels_facts, sizes = score(run_paths, qrels_paths, parsed, options.get("turns"), bits)
    for info in results:
        if info.note:
            warnings.warn(InputWarning(info.note), stacklevel=2)
    names = run_names(results)
    rows: list[tuple] = []
    for q, (facts, size) in enumerate(zip(qrels_facts, sizes, strict=True)):
        _warn_empty_qrels(facts, size)
        for info, name in zip(results, names, strict=True):
            _warn_coverage(name, facts, info.shared[q], complete)
            _warn_judged(name, facts, info.scores[q])
            rows.extend(_rows(name, facts, parsed, info.scores[q], info.shared[q], complete,
                              options.get("per_turn", False)))
    return rows


#: A run that cannot be streamed is read whole; from this many lines on (some 150 MB held), that is said.
WHOLE_RUN_NOTE_LINES = 2_000_000


def _score_small_files(run_paths, qrels_paths, parsed: Sequence[Measure],
                       turns, bits: int) -> tuple[list[_RunInfo], list[QrelsFacts], list[int]]:
    """:func:`_score_files` for small files: the line reader and the measures in plain Python."""
    from . import plain

    qrels_list = [formats.read_qrels(path, name, stratified=None) for name, path in qrels_paths]
    sizes = [len(q.labels) for q in qrels_list]
    if turns is not None:
        qrels_list = [q.subset(turns) for q in qrels_list]
    facts = [QrelsFacts.of(q) for q in qrels_list]
    measures = [*parsed, JUDGED_SHARE_MEASURE]
    results = []
    for path in run_paths:
        run = formats.read_run(path)
        scores: list[dict[str, Mapping[str, float]]] = [
            dict(zip([m.name for m in measures], plain.evaluate_run(run.scores, q.labels, measures, bits, q.source),
                     strict=True))
            for q in qrels_list]
        results.append(_RunInfo(run.tag, run.source, scores, _shared(run.turns, facts)))
    return results, facts, sizes


def _score_files(run_paths, qrels_paths, parsed: Sequence[Measure],
                 turns, bits: int) -> tuple[list[_RunInfo], list[QrelsFacts], list[int]]:
    """Each run's per-turn values against each qrels (the engine's measures, ranked on ``bits``-bit
    scores), the qrels' facts, their sizes.

    Sizes are the qrels' numbers of turns before ``turns`` keeps some. See :func:`evaluate_files`.
    """
    from concurrent.futures import ThreadPoolExecutor  # here: it loads logging, which small inputs never need

    from ..formats import columnar
    from .engine import QrelsIndex

    # The qrels' lines labelled 0 or less count in the judged share only (and in Judged@k), and the
    # share of the lines labelled above 0 bounds it from below: they are left out (a tenth of the
    # time and memory of a large qrels), and read again, with the runs concerned, only where that
    # bound is under FEW_JUDGED (_judged_again). Inputs that cannot be read twice keep them.
    twice = all(str(path) != formats.STDIO and os.path.isfile(path)
                for path in [*run_paths, *(path for _, path in qrels_paths)])
    positive_only = _positive_only(parsed) and twice

    def load_qrels():
        facts, sizes, indexes = [], [], []
        for name, path in qrels_paths:
            qrels = columnar.read_qrels(path, name, positive_only=positive_only, stratified=None)
            sizes.append(len(qrels.turns))
            if turns is not None:
                qrels = qrels.subset(turns)
            facts.append(QrelsFacts.of(qrels))
            # Keeps what it needs: the columns are dropped.
            indexes.append(QrelsIndex(qrels, keep_all=not _positive_only(parsed)))
        return facts, sizes, indexes

    # Each run is parsed by a thread of its own and scored in another, so one run keeps two cores
    # busy: more runs at a time would only contend for them (and hold more memory). A run read
    # whole spreads its batches over the threads instead.
    workers = max(1, min(len(run_paths), THREADS // 2))
    threads = THREADS if workers == 1 else 1
    # The qrels are read while the first runs are parsed; their errors still come first, and a
    # bad run is reported in the order given.
    qrels_pool, run_pool = ThreadPoolExecutor(max_workers=1), ThreadPoolExecutor(max_workers=workers)
    try:
        loading = qrels_pool.submit(load_qrels)
        scoring = run_pool.map(lambda path: _score_run_file(path, loading, parsed, threads, bits), run_paths)
        qrels_facts, sizes, _ = loading.result()
        results = list(scoring)
    finally:
        run_pool.shutdown(cancel_futures=True)
        qrels_pool.shutdown()
    if positive_only:
        _judged_again(results, run_paths, qrels_paths, turns, qrels_facts, bits)
    return results, qrels_facts, sizes


def _judged_again(results: list[_RunInfo], run_paths, qrels_paths, turns, facts: Sequence[QrelsFacts],
                  bits: int) -> None:
    """Exact judged shares where those of a first pass without the qrels' lines labelled 0 or less
    (a lower bound) are under :data:`FEW_JUDGED`: those qrels read again whole, those runs streamed again."""
    from concurrent.futures import Future

    from ..formats import columnar
    from .engine import QrelsIndex

    low = [(r, q) for r, info in enumerate(results) for q in range(len(qrels_paths))
           if (_judged_share(info.scores[q]) or 0.0) < FEW_JUDGED and info.scores[q].get(JUDGED_KEY)]
    indexes: dict[int, QrelsIndex] = {}
    for r in sorted({r for r, _ in low}):
        wanted = [q for s, q in low if s == r]
        for q in wanted:
            if q not in indexes:
                name, path = qrels_paths[q]
                qrels = columnar.read_qrels(path, name, stratified=None)
                indexes[q] = QrelsIndex(qrels if turns is None else qrels.subset(turns), keep_all=False)
        loading: Future = Future()
        loading.set_result(([facts[q] for q in wanted], None, [indexes[q] for q in wanted]))
        again = _score_run_file(run_paths[r], loading, [], THREADS, bits)
        for k, q in enumerate(wanted):
            results[r].scores[q][JUDGED_KEY] = again.scores[k][JUDGED_KEY]


def _score_run_file(path, loading, parsed: Sequence[Measure], threads: int, bits: int) -> _RunInfo:

    """One run file against every qrels of ``loading`` (a future): streamed, or read whole where it must be."""
    import numpy as np

    from ..formats import columnar

    def number_first(turns, batch_turns):
        # The first qrels' items are numbered with the run's, in the same pass (QrelsIndex.items_to_number_first);
        # the parser has begun meanwhile.
        indexes = loading.result()[2]
        return indexes[0].items_to_number_first(_positive_only(parsed))(turns, batch_turns) if indexes else None

    try:
        with columnar.stream_run(path, number_first) as stream:
            facts, _, indexes = loading.result()
            # Per qrels: the turns scored, and each measure's values for them, piece after piece.
            turns: list[list[str]] = [[] for _ in indexes]
            values: list[dict[str, list]] = [{} for _ in indexes]
            for piece in stream:
                run = columnar.piece_as_run(stream, piece)
                for q, index in enumerate(indexes):
                    scored = _engine_scores(run, index, parsed, 1, bits)
                    for name, turn_values in scored.items():
                        values[q].setdefault(name, []).append(turn_values.array)
                    if scored:
                        turns[q].extend(next(iter(scored.values())).turns)
            scores: list[dict[str, Mapping[str, float]]] = [
                {name: TurnValues(turns[q], np.concatenate(parts)) for name, parts in values[q].items()}
                for q in range(len(indexes))]
            _refuse_unevaluable(parsed, indexes, turns)
            if stream.tag is None:
                raise ValueError(f"{stream.source}: a run streamed whole without its tag")
            return _RunInfo(stream.tag, stream.source, scores, _shared(stream.turns, facts))
    except columnar.NotStreamable as why:
        run = columnar.read_run(path, threads, data=why.data)
        facts, _, indexes = loading.result()
        note = None
        if len(run) >= WHOLE_RUN_NOTE_LINES:
            note = (f"{run.source}: {why.reason}, so the run is held whole in memory ({len(run):,} lines)"
                    + (f"; {why.advice}" if why.advice else ""))
        whole: list[dict[str, Mapping[str, float]]] = [dict(_engine_scores(run, index, parsed, threads, bits))
                                                      for index in indexes]
        _refuse_unevaluable(parsed, indexes, [run.turns.tolist()] * len(indexes))
        return _RunInfo(run.tag, run.source, whole, _shared(run.turns.tolist(), facts), note)


def _positive_only(parsed: Sequence[Measure]) -> bool:
    """Unless a measure reads every judged line (Judged@k, bpref...) or refuses what trec_eval cannot evaluate (a turn
    labelled only below 0), none looks at a qrels line labelled 0 or less: such lines need not be kept."""
    return not any(m.definition.judged_lines == ALL_LINES or not m.any_label for m in parsed)


def _refuse_unevaluable(parsed: Sequence[Measure], indexes, turns: Sequence[Sequence[str]]) -> None:
    """Each qrels' refusal of what trec_eval cannot evaluate among the turns scored, where a measure asks for it."""
    if any(not m.any_label for m in parsed):
        for index, scored in zip(indexes, turns, strict=True):
            index.refuse_unevaluable(scored)


def _shared(run_turns: list[str], facts: Sequence[QrelsFacts]) -> list[int]:
    """How many of the run's turns each qrels judges."""
    turns = set(run_turns)
    return [len(turns.intersection(f.turns)) for f in facts]


class _RunInfo(NamedTuple):
    """A run once scored: what :func:`run_names` needs, its per-turn values and shared turns per qrels."""

    tag: str
    source: str | None
    scores: list[dict[str, Mapping[str, float]]]
    shared: list[int]
    #: Said on standard error: why the run was held whole in memory.
    note: str | None = None
