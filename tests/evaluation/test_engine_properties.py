"""The vectorised engine against trec_eval's C code (pytrec_eval) on random qrels and runs.

Random data has what real data has and more: ties (including scores that differ only beyond
32-bit precision, and -0.0 against 0.0), grades 0-3 and negative labels (read as 0: see
``_oracle``), turns missing from the run or from the qrels, unjudged items, non-ASCII item ids
(byte order). Every supported measure
must equal pytrec_eval's (ir_measures' judged provider for Judged@k) to 1e-12, per turn and on
the means of both averaging modes. The columnar reader must read what the line reader reads.

pytrec_eval ranks on scores rounded to 32-bit floats: it is the oracle of ``score_precision="float"``
as it is. For the default, doubles (trec_eval-9.0.8's rule, also checked against that binary's
kept outputs in tests/cli/test_score_precision.py), it is given each turn's scores replaced by
their rank among the turn's distinct doubles (small whole numbers, exact as floats): the same
order and the same ties as the doubles, which its floats then keep.
"""

from __future__ import annotations

import ir_measures
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from castregin import InputError, Qrels, Run, arrays, formats
from castregin.evaluation import evaluate as evaluate_module
from castregin.evaluation.evaluate import evaluate, evaluate_files
from castregin.formats import columnar, turn_batches

#: Random runs and qrels share few turns, or none, by design: the coverage warnings they raise are the subject of
#: tests/evaluation/test_coverage.py, not of these comparisons of numbers.
pytestmark = pytest.mark.filterwarnings("ignore::castregin.errors.CoverageWarning")

TREC_NAMES = {"P@1": "P_1", "P@3": "P_3", "P@5": "P_5", "R@3": "recall_3", "R@10": "recall_10", "AP": "map",
              "RR": "recip_rank", "nDCG@3": "ndcg_cut_3", "nDCG@5": "ndcg_cut_5", "nDCG": "ndcg",
              "Rprec": "Rprec", "Success@1": "success_1", "Success@3": "success_3"}
JUDGED = ["Judged@3", "Judged"]

TURNS = ["t1", "t2", "t10", "132_1-1", "132_1-2"]
ITEMS = ["Q1", "Q2", "Q10", "Q2a", "d", "D", "é", "Q0001"]
# Near-equal values: 1.0 and 1.0 + 1e-10 tie as 32-bit floats (trec_eval) but not as 64-bit ones.
SCORES = [0.0, -0.0, 1.0, 1.0 + 1e-10, 2.5, -1.5, 7.498799800872803, 7.4987998, 1e-8, 3.0]

labels = st.dictionaries(st.sampled_from(ITEMS), st.integers(-2, 3), min_size=1, max_size=6)
scores = st.dictionaries(st.sampled_from(ITEMS), st.sampled_from(SCORES), min_size=1, max_size=7)
qrels_strategy = st.dictionaries(st.sampled_from(TURNS), labels, min_size=1, max_size=4)
run_strategy = st.dictionaries(st.sampled_from(TURNS), scores, min_size=1, max_size=4)

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRECISIONS = ["double", "float"]


def as_double_ranks(run: dict) -> dict:
    """Each turn's scores as their rank among its distinct doubles (-0.0 and 0.0 being one): the order
    and ties of the doubles, kept by a tool that rounds scores to 32-bit floats."""
    ranked = {}
    for turn, scores in run.items():
        distinct = sorted(set(scores.values()))
        ranked[turn] = {item: float(distinct.index(score)) for item, score in scores.items()}
    return ranked


def test_double_ranks_keep_what_floats_lose():
    scores = {"a": 1.0, "b": 1.0 + 1e-10, "c": -0.0, "d": 0.0}
    assert as_double_ranks({"t": scores}) == {"t": {"a": 1.0, "b": 2.0, "c": 0.0, "d": 0.0}}


def _oracle(qrels: dict, run: dict, rel_level: int, score_precision: str = "float") -> dict[str, dict[str, float]]:
    """{measure: {turn: value}} from pytrec_eval and ir_measures' judged provider.

    trec_eval reads a label below 0 as "in the pool but unjudged" (form_res_rels.c): never relevant,
    no gain, as label 0 for the engine's measures; but pytrec_eval crashes or hangs on a turn whose
    labels are all below 0 (trec_eval cannot evaluate it), so its side gets 0 in their place. For
    Judged@k such an item is unjudged: ir_measures, which counts every qrels line as judged, gets
    the qrels without those lines. With ``score_precision="double"`` both get the run's double ranks
    (:func:`as_double_ranks`), which orders as the run does for ir_measures' 64-bit Judged@k too.
    """
    if score_precision == "double":
        run = as_double_ranks(run)
    non_negative = {t: {i: max(label, 0) for i, label in items.items()} for t, items in qrels.items()}
    judged_lines = {t: {i: label for i, label in items.items() if label >= 0} for t, items in qrels.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(non_negative, set(TREC_NAMES.values()), relevance_level=rel_level)
    per_turn = evaluator.evaluate(run)
    result = {m: {t: v[name] for t, v in per_turn.items()} for m, name in TREC_NAMES.items()}
    judged = [ir_measures.parse_measure(m) for m in JUDGED]
    for m, parsed in zip(JUDGED, judged, strict=True):
        result[m] = {}
        for metric in ir_measures.judged.iter_calc([parsed], judged_lines, run):
            if metric.query_id in run and metric.query_id in qrels:
                result[m][metric.query_id] = metric.value
        # ir_measures skips a turn left without lines: none of its items is judged.
        result[m].update({t: 0.0 for t in run if t in qrels and not judged_lines[t]})
    return result


def _check(qrels: dict, run: dict, rel_level: int, complete: bool, score_precision: str) -> None:
    measures = [*TREC_NAMES, *JUDGED]
    results = evaluate(Run("r", run), Qrels(qrels, name="q"), measures, rel_level=rel_level,
                       complete=complete, per_turn=True, score_precision=score_precision)
    expected = _oracle(qrels, run, rel_level, score_precision)
    for measure in measures:
        rows = results[results["measure"] == measure]
        got = {r.turn: r.value for r in rows.itertuples() if r.turn != "all"}
        want = dict(expected[measure])
        if complete:
            want.update({t: 0.0 for t in qrels if t not in want})
        assert set(got) == set(want), measure
        for turn, value in want.items():
            assert got[turn] == pytest.approx(value, abs=1e-12, rel=0), (measure, turn, got[turn], value)
        ordered = sorted(want)
        total = 0.0
        for turn in ordered:
            total += want[turn]
        mean = total / len(ordered) if ordered else 0.0
        assert rows[rows["turn"] == "all"]["value"].item() == pytest.approx(mean, abs=1e-12, rel=0), measure


@FAST
@given(qrels=qrels_strategy, run=run_strategy, rel_level=st.sampled_from([1, 2, 3]), complete=st.booleans(),
       score_precision=st.sampled_from(PRECISIONS))
def test_every_measure_equals_pytrec_eval(qrels, run, rel_level, complete, score_precision):
    _check(qrels, run, rel_level, complete, score_precision)


@pytest.mark.parametrize("score_precision", PRECISIONS)
def test_hand_picked_corners(score_precision):
    # A turn whose items are all unjudged, one with only negative labels, one without relevant items,
    # fewer items than the cutoff, and a tie decided by item id (Q2 before Q1, "é" after ASCII).
    qrels = {"t1": {"Q1": 2, "Q2": 0}, "t2": {"a": -1, "b": -2}, "t3": {"x": 1}, "t4": {"Q9": 3}}
    run = {"t1": {"Q1": 1.0, "Q2": 1.0, "é": 1.0}, "t2": {"a": 3.0, "c": 2.0}, "t3": {"y": 1.0},
           "t4": {"Q8": 1.0}, "t5": {"Q1": 1.0}}
    for rel_level in (1, 2):
        for complete in (False, True):
            _check(qrels, run, rel_level, complete, score_precision)


def test_scores_tied_as_floats_only_are_ranked_as_each_precision_says():
    # 0.81234567 and 0.81234568 are one 32-bit float: pytrec_eval ties them and puts b (the larger id) first.
    qrels, run = {"t": {"a": 1, "b": 0}}, {"t": {"a": 0.81234568, "b": 0.81234567}}
    for precision, expected in (("double", 1.0), ("float", 0.0)):
        results = evaluate(Run("r", run), Qrels(qrels), ["P@1"], rel_level=1, score_precision=precision)
        assert results[results["measure"] == "P@1"]["value"].item() == expected, precision
    assert pytrec_eval.RelevanceEvaluator(qrels, {"P_1"}).evaluate(run)["t"]["P_1"] == 0.0


def test_an_unknown_score_precision_is_an_input_error():
    with pytest.raises(InputError, match="'half' is not a score precision"):
        evaluate(Run("r", {"t1": {"a": 1.0}}), Qrels({"t1": {"a": 1}}), ["P@1"], score_precision="half")


def test_many_items_per_turn_and_long_sums():
    # Sequential sums over hundreds of relevant items: numpy's pairwise sum would differ in the last bits.
    qrels = {f"t{t}": {f"d{i}": (i * 7 + t) % 4 for i in range(300)} for t in range(6)}
    run = {f"t{t}": {f"d{i}": float((i * 13 + t) % 97) / 7.0 for i in range(0, 400, 1 + t % 2)} for t in range(5)}
    results = evaluate(Run("r", run), Qrels(qrels), list(TREC_NAMES), per_turn=True, score_precision="float")
    expected = _oracle(qrels, run, 2)
    for measure in TREC_NAMES:
        rows = results[(results["measure"] == measure) & (results["turn"] != "all")]
        assert dict(zip(rows["turn"], rows["value"], strict=True)) == expected[measure], measure  # bit for bit


def test_relevance_level_below_one_is_an_input_error():
    with pytest.raises(InputError, match="relevance level must be 1 or more"):
        evaluate(Run("r", {"t1": {"a": 1.0}}), Qrels({"t1": {"a": 1}}), ["P@1"], rel_level=0)


# --- the columnar reader reads what the line reader reads --------------------------------------

TOKENS = ["t1", "t2", "Q0", "a", "b", "1", "2", "2.5", "-0", "1e3", "nan", "inf", "x_y", "0x10", "+3", "é", "1_0"]
SEPARATORS = [" ", "\t", "  ", " \t"]


@st.composite
def trec_text(draw, columns: int):
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        count = draw(st.sampled_from([columns, columns, columns, columns - 1, columns + 1]))
        fields = [draw(st.sampled_from(TOKENS)) for _ in range(count)]
        sep = draw(st.sampled_from(SEPARATORS))
        lead = draw(st.sampled_from(["", "", " "]))
        lines.append(lead + sep.join(fields))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    return ending.join(lines) + draw(st.sampled_from(["", ending, ending + ending]))


def _same_outcome(read_line, read_columns, path):
    try:
        expected = read_line(path)
    except InputError as err:
        refusal = err
    else:
        return expected, read_columns(path)
    with pytest.raises(InputError) as caught:
        read_columns(path)
    assert str(caught.value) == str(refusal)
    return None


def _as_dicts(table, values):
    out = {}
    items = table.items.to_pylist() if hasattr(table.items, "to_pylist") else list(table.items)
    items = [item.decode() if isinstance(item, bytes) else item for item in items]  # fixed-width ids: bytes
    if getattr(table, "turn_starts", None) is not None:  # the streaming reader's compact qrels: lines by turn
        for code, (begin, end) in enumerate(zip(table.turn_starts[:-1], table.turn_starts[1:], strict=True)):
            out.setdefault(table.turns[code], {}).update(zip(items[begin:end], values[begin:end], strict=True))
        return out
    for turn, item, value in zip(table.turn_codes, table.item_codes, values, strict=True):
        out.setdefault(table.turns[turn], {})[items[item]] = value
    return out


@FAST
@given(text=trec_text(6))
def test_columnar_runs_read_like_the_line_reader(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("runs") / "r.run"
    path.write_text(text, encoding="utf-8")
    outcome = _same_outcome(formats.read_run, columnar.read_run, path)
    if outcome:
        expected, got = outcome
        assert got.tag == expected.tag
        assert _as_dicts(got, got.scores.tolist()) == expected.scores


@FAST
@given(text=trec_text(4))
def test_columnar_qrels_read_like_the_line_reader(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("qrels") / "q.qrel"
    path.write_text(text, encoding="utf-8")
    outcome = _same_outcome(formats.read_qrels, columnar.read_qrels, path)
    if outcome:
        expected, got = outcome
        assert _as_dicts(got, got.labels.tolist()) == expected.labels


def test_fast_path_is_taken_for_plain_files(tmp_path):
    run = tmp_path / "r.run"
    run.write_text("".join(f"t{t}\tQ0\tQ{i}\t{i}\t{1 / (i + 1)!r}\ttag\n" for t in range(3) for i in range(50)))
    qrels = tmp_path / "q.qrel"
    qrels.write_text("".join(f"t{t} 0 Q{i} {i % 4}\n" for t in range(3) for i in range(0, 50, 3)))
    assert columnar._fast_run(run, str(run))[0] is not None
    assert columnar._fast_qrels(qrels, str(qrels), "q")[0] is not None
    from_files = evaluate_files([run], [(None, str(qrels))], measures=list(TREC_NAMES), per_turn=True)
    from_dicts = evaluate(formats.read_run(run), formats.read_qrels(qrels), list(TREC_NAMES), per_turn=True)
    assert from_files.equals(from_dicts)


def test_duplicates_found_in_linear_time():
    import numpy as np

    turns = np.repeat(np.arange(50, dtype=np.int32), 40)
    items = np.tile(np.arange(40, dtype=np.int32), 50)
    assert not turn_batches.has_duplicates(turns, items, 40)
    items[-1] = 3
    assert turn_batches.has_duplicates(turns, items, 40)
    assert not turn_batches.has_duplicates(turns[::-1].copy(), np.tile(np.arange(40, dtype=np.int32), 50), 40)


# --- files read in small batches, by several threads -------------------------------------------

ASCII_ITEMS = [item for item in ITEMS if item.isascii()]
ascii_scores = st.dictionaries(st.sampled_from(ASCII_ITEMS), st.sampled_from(SCORES), min_size=1, max_size=7)
ascii_run_strategy = st.dictionaries(st.sampled_from(TURNS), ascii_scores, min_size=1, max_size=4)


def _write(tmp_path, qrels: dict, run: dict, interleave: bool):
    lines = [(turn, f"{turn}\tQ0\t{item}\t{rank}\t{score!r}\tr\n")
             for turn, items in run.items() for rank, (item, score) in enumerate(items.items(), start=1)]
    if interleave:  # turns not contiguous: the reader makes one batch of the whole run
        lines = lines[::2] + lines[1::2]
    run_path, qrels_path = tmp_path / "r.run", tmp_path / "q.qrel"
    run_path.write_text("".join(line for _, line in lines))
    qrels_path.write_text("".join(f"{t} 0 {i} {label}\n" for t, items in qrels.items() for i, label in items.items()))
    return run_path, qrels_path


@FAST
@given(qrels=qrels_strategy, run=ascii_run_strategy, rel_level=st.sampled_from([1, 2]), complete=st.booleans(),
       batch_lines=st.sampled_from([1, 2, 5]), interleave=st.booleans(), score_precision=st.sampled_from(PRECISIONS))
def test_files_in_small_batches_and_threads_equal_the_dicts(tmp_path_factory, qrels, run, rel_level, complete,
                                                            batch_lines, interleave, score_precision):
    run_path, qrels_path = _write(tmp_path_factory.mktemp("batches"), qrels, run, interleave)
    measures = [*TREC_NAMES, *JUDGED]
    options = {"rel_level": rel_level, "complete": complete, "per_turn": True, "score_precision": score_precision}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(turn_batches, "BATCH_LINES", batch_lines)
        patch.setattr(evaluate_module, "THREADS", 2)
        assert columnar._fast_run(run_path, str(run_path))[0] is not None
        from_files = evaluate_files([run_path], [(None, str(qrels_path))], measures=measures, **options)
    from_dicts = evaluate(formats.read_run(run_path), formats.read_qrels(qrels_path), measures, **options)
    assert from_files.equals(from_dicts)


def test_batches_hold_whole_turns(tmp_path, monkeypatch):
    monkeypatch.setattr(turn_batches, "BATCH_LINES", 4)
    path = tmp_path / "r.run"
    path.write_text("".join(f"t{t}\tQ0\td{i}\t{i}\t{i}\tr\n" for t in range(5) for i in range(t + 1)))
    run = columnar.read_run(path)
    lines, turns = run.batch_lines.tolist(), run.batch_turns.tolist()
    assert lines[0] == 0 and lines[-1] == len(run) and turns[0] == 0 and turns[-1] == len(run.turns)
    assert len(lines) > 2
    for k in range(len(lines) - 1):
        assert set(run.turn_codes[lines[k]:lines[k + 1]].tolist()) == set(range(turns[k], turns[k + 1]))
        distinct = run.items.chunk(k).to_pylist()  # each batch numbers its own distinct items
        assert len(set(distinct)) == len(distinct)
    items = run.items.to_pylist()
    assert [items[c] for c in run.item_codes] == [f"d{i}" for t in range(5) for i in range(t + 1)]


def test_duplicate_pair_in_a_later_batch_is_reported_by_line(tmp_path, monkeypatch):
    monkeypatch.setattr(turn_batches, "BATCH_LINES", 2)
    path = tmp_path / "r.run"
    path.write_text("t1 Q0 a 1 3 r\nt1 Q0 b 2 2 r\nt2 Q0 a 1 3 r\nt3 Q0 c 1 1 r\nt3 Q0 c 2 1 r\n")
    with pytest.raises(InputError, match=r"r\.run:5: item c is listed twice for turn t3"):
        columnar.read_run(path)


def test_hexadecimal_rank_is_refused_as_by_the_line_reader(tmp_path):
    # pyarrow's integer parser reads 0x10 as 16; Python's float() refuses it.
    path = tmp_path / "r.run"
    path.write_text("t1 Q0 d1 1 2.0 r\nt1 Q0 d2 0x10 1.0 r\n")
    with pytest.raises(InputError, match=r"r\.run:2: rank '0x10' is not a number"):
        columnar.read_run(path)


def test_integer_and_fractional_ranks_take_the_fast_path(tmp_path):
    for ranks in (["1", "2"], ["1.5", "2e0"]):
        path = tmp_path / "r.run"
        path.write_text(f"t1 Q0 d1 {ranks[0]} 2.0 r\nt1 Q0 d2 {ranks[1]} 1.0 r\n")
        assert columnar._fast_run(path, str(path))[0] is not None


def test_duplicate_table_smaller_than_needed_is_not_used():
    import numpy as np

    turns = np.repeat(np.arange(3, dtype=np.int32), 4)
    items = np.tile(np.arange(4, dtype=np.int32), 3)
    for scratch in (np.empty(2, dtype=np.int32), np.empty(1 << 10, dtype=np.int32)):
        assert not turn_batches.has_duplicates(turns, items, 4, scratch)
        items[-1] = 0
        assert turn_batches.has_duplicates(turns, items, 4, scratch)
        items[-1] = 3


def test_allocator_chosen_by_the_environment_is_kept(monkeypatch):
    pa = arrays.arrow()[0]
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")
    before = pa.default_memory_pool().backend_name
    arrays.choose_allocator()
    assert pa.default_memory_pool().backend_name == before
