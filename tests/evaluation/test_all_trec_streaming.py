"""Every measure of ``all_trec`` on the streaming path against trec_eval's C code (pytrec_eval).

``castregin trec_eval`` streams large inputs through the engine (``castregin.evaluation.small.small_inputs``) and
``castregin evaluate`` does too (``evaluate.SMALL_INPUT_BYTES``); both thresholds are set to 0 here,
and the pieces made tiny, so that small random files take the streaming path, cut into many pieces.
Random qrels and runs have ties (scores equal as doubles, and as 32-bit floats only), negative labels
(trec_eval's "in the pool but unjudged": bpref, infAP and relstring tell them apart), labels above
the relevance level and none, unjudged items, turns only one side has. Every numeric measure of
``all_trec`` (and small cutoffs, which short rankings reach) must equal pytrec_eval's per turn to
1e-12, and the ``all`` values the means of pytrec_eval's values as trec_eval forms them. relstring
and runid, text, are checked against the trec_eval binary's kept outputs
(tests/cli/test_trec_eval.py runs those through the streaming path too).
"""

from __future__ import annotations

import contextlib
import math
import warnings

import pytest
import pytrec_eval
import streaming_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from castregin.errors import InputError
from castregin.evaluation.evaluate import evaluate_file_rows
from castregin.evaluation.measures import TREC_SETS, mark_measures
from castregin.evaluation.trec_eval import TrecEvalOptions, trec_eval_file_lines
from castregin.formats import columnar

from .test_engine_properties import ITEMS, SCORES, TURNS, as_double_ranks

#: Small cutoffs and parameters, which the short random rankings reach (all_trec's start at 5).
EXTRA = ["P.1,2,3", "recall.1,3", "map_cut.1,2,4", "ndcg_cut.1,2,3", "relative_P.1,3", "success.1,2",
         "Rprec_mult.0.5,1.5", "iprec_at_recall.0.25,0.75"]
GEOMETRIC = {"gm_map", "gm_bpref"}


def _labels_with_one_judged(labels: dict) -> bool:
    # trec_eval cannot evaluate a topic labelled only below 0 (pytrec_eval crashes): castregin trec_eval refuses it.
    return any(label >= 0 for label in labels.values())


labels = st.dictionaries(st.sampled_from(ITEMS), st.integers(-2, 4), min_size=1, max_size=7).filter(
    _labels_with_one_judged)
scores = st.dictionaries(st.sampled_from(ITEMS), st.sampled_from(SCORES), min_size=1, max_size=8)
qrels_strategy = st.dictionaries(st.sampled_from(TURNS), labels, min_size=1, max_size=5)
run_strategy = st.dictionaries(st.sampled_from(TURNS), scores, min_size=1, max_size=5)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])


def streaming():
    """Small files through the streaming paths, in pieces of three lines."""
    return streaming_paths.streaming(3, block=128)


def _write(tmp_path, qrels: dict, run: dict):
    qrels_path, run_path = tmp_path / "q.qrel", tmp_path / "r.run"
    qrels_path.write_text("".join(f"{t} 0 {i} {label}\n" for t, items in qrels.items() for i, label in items.items()),
                          encoding="utf-8")
    run_path.write_text("".join(f"{t} Q0 {i} {rank} {score!r} tag\n" for t, items in run.items()
                                for rank, (i, score) in enumerate(items.items(), start=1)), encoding="utf-8")
    return qrels_path, run_path


def _oracle(qrels: dict, run: dict, rel_level: int, score_precision: str,
            measures=("all_trec", *EXTRA)) -> dict[str, dict[str, float]]:
    """pytrec_eval's values per turn, ``{turn: {measure: value}}``; the run's double ranks for doubles."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=rel_level)
    return evaluator.evaluate(as_double_ranks(run) if score_precision == "double" else run)


def _mean(name: str, values: list[float], averaged: int, qrels: dict, complete: bool) -> float:
    """The ``all`` value as trec_eval forms it from per-turn values (in byte order of the turns)."""
    total = 0.0
    for value in values:
        total += value
    if name in GEOMETRIC:
        total += (averaged - len(values)) * math.log(0.00001)
        return math.exp(total / averaged)
    if name == "num_rel" and complete:
        return float(sum(1 for items in qrels.values() for label in items.values() if label > 0))
    if name in ("num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"):
        return total
    if name == "num_q":
        return float(averaged)
    return total / averaged


def _close(got: float, want: float) -> bool:
    return got == pytest.approx(want, abs=1e-12, rel=1e-12)


@FAST
@given(qrels=qrels_strategy, run=run_strategy, rel_level=st.sampled_from([1, 2, 3]), complete=st.booleans(),
       score_precision=st.sampled_from(["double", "float"]), seed=st.integers(0, 3))
def test_trec_eval_streamed_equals_pytrec_eval(tmp_path_factory, qrels, run, rel_level, complete, score_precision,
                                              seed):
    shared = sorted(t for t in run if t in qrels)
    if not shared:
        return  # an error, the same whichever path (tests/cli/test_trec_eval.py)
    qrels_path, run_path = _write(tmp_path_factory.mktemp("streamed"), qrels, run)
    options = TrecEvalOptions(("all_trec", *EXTRA), rel_level, complete, per_query=True,
                              score_precision=score_precision)
    with streaming() as calls, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coverage warnings: tested elsewhere
        lines = list(trec_eval_file_lines(qrels_path, run_path, options))  # an iterator when streamed
    assert calls, "not streamed"
    expected = _oracle(qrels, run, rel_level, score_precision)
    names = [name for m in mark_measures(options.measures) if m.definition.numeric for name in m.slot_names]
    got = {(name, turn): value for name, turn, value in lines}
    averaged = len(qrels) if complete else len(shared)
    for name in names:
        if name not in GEOMETRIC and name != "num_q":
            for turn in shared:
                assert _close(got[name, turn], expected[turn][name]), (name, turn, got[name, turn],
                                                                       expected[turn][name])
        want = _mean(name, [expected[turn][name] for turn in shared], averaged, qrels, complete)
        assert _close(got[name, "all"], want), (name, got[name, "all"], want)
    # Every numeric measure of all_trec was compared.
    assert {m.definition.name for m in mark_measures(["all_trec"]) if m.definition.numeric} == \
        set(TREC_SETS["all_trec"]) - {"runid", "relstring"}
    relstrings = {turn: value for name, turn, value in lines if name == "relstring"}
    assert set(relstrings) == set(shared)


@FAST
@given(qrels=qrels_strategy, run=run_strategy, rel_level=st.sampled_from([1, 2]), complete=st.booleans())
def test_evaluate_streamed_equals_pytrec_eval(tmp_path_factory, qrels, run, rel_level, complete):
    qrels_path, run_path = _write(tmp_path_factory.mktemp("evaluate"), qrels, run)
    with streaming():
        spied = []
        stream_run = columnar.stream_run

        def spy(*args, **kwargs):
            spied.append(args)
            return stream_run(*args, **kwargs)

        with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # coverage warnings: tested elsewhere
            patch.setattr(columnar, "stream_run", spy)
            rows = evaluate_file_rows([run_path], [(None, qrels_path)], measures=["all_trec"], rel_level=rel_level,
                                      complete=complete, per_turn=True, score_precision="float")
    assert spied, "not streamed"
    expected = _oracle(qrels, run, rel_level, "float", ["all_trec"])
    shared = sorted(t for t in run if t in qrels)
    got = {(measure, turn): value for _, _, measure, turn, value in rows}
    averaged = len(qrels) if complete else len(shared)
    names = sorted({measure for _, _, measure, _, _ in rows})
    assert len(names) == 93  # num_q and the 92 other values of all_trec
    for name in names:
        if name not in GEOMETRIC and name != "num_q":
            for turn in shared:
                assert _close(got[name, turn], expected[turn][name]), (name, turn)
        if averaged:
            want = _mean(name, [expected[turn][name] for turn in shared], averaged, qrels, complete)
            assert _close(got[name, "all"], want), (name, got[name, "all"], want)


def test_long_rankings_and_many_relevant_items(tmp_path):
    """Hundreds of items a turn, many relevant at every grade: long sums added in order, all the walks."""
    qrels = {f"t{t}": {f"d{i}": (i * 7 + t) % 6 - 1 for i in range(300)} for t in range(6)}
    run = {f"t{t}": {f"d{i}": float((i * 13 + t) % 97) / 7.0 for i in range(0, 400, 1 + t % 2)} for t in range(5)}
    qrels_path, run_path = _write(tmp_path, qrels, run)
    for rel_level in (1, 2, 4):
        options = TrecEvalOptions(("all_trec",), rel_level, per_query=True)
        with streaming() as calls:
            lines = list(trec_eval_file_lines(qrels_path, run_path, options))  # an iterator when streamed
        assert calls
        expected = _oracle(qrels, run, rel_level, "double", ["all_trec"])
        for name, turn, value in lines:
            if turn != "all" and name not in ("relstring", "runid"):
                assert value == pytest.approx(expected[turn][name], abs=1e-12, rel=1e-12), (name, turn, rel_level)


@pytest.mark.parametrize("qrels_text, message", [
    ("t1 0 a -1\nt1 0 b -2\nt2 0 c 1\n", "topic t1: every label is negative"),
    ("t1 0 a 1001\nt1 0 b 0\nt2 0 c 1\n", "topic t1, item a: label 1001 is above 1000"),
])
def test_evaluate_streamed_refuses_what_trec_eval_cannot_evaluate_as_the_rules_do(tmp_path, qrels_text, message):
    """A turn labelled only below 0, or above 1,000: refused for the measures that refuse it, in the rules' words,
    whether the files are streamed or read whole; the measures that take any label compute it."""
    qrels_path, run_path = tmp_path / "q.qrel", tmp_path / "r.run"
    qrels_path.write_text(qrels_text)
    run_path.write_text("t1 Q0 a 1 0.9 x\nt1 Q0 z 2 0.8 x\nt2 Q0 c 1 0.7 x\n")
    errors, computed = [], []
    for streamed in (True, False):
        with (streaming() if streamed else contextlib.nullcontext()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(InputError) as refusal:
                evaluate_file_rows([run_path], [(None, qrels_path)], measures=["bpref"], rel_level=1)
            rows = evaluate_file_rows([run_path], [(None, qrels_path)], measures=["P@1", "AP"], rel_level=1)
        assert message in str(refusal.value) and str(qrels_path) in str(refusal.value)
        errors.append(str(refusal.value))
        computed.append(rows)
    assert errors[0] == errors[1]
    # t1's item a is relevant at label 1001 and not at -1.
    assert computed[0] == computed[1] and ("t", "q", "P@1", "all", 1.0 if "1001" in qrels_text else 0.5) in [
        ("t", "q", m, t, v) for _, _, m, t, v in computed[0]]
