"""analyze holes: each score as the exact interval over every labelling of the unjudged items in the top k.

Oracles: pytrec_eval (scores on the qrels, on every labelling of the holes for the brute force, on the
labellings castregin says give the ends, on the full truth of a simulated collection), and by-hand
arithmetic for the cases where a relevant hole lowers the score.
"""

from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import pytest
import pytrec_eval
from reference_runs import read_qrels_plain, read_run_plain

from castregin import api, formats
from castregin.data import Qrels, Run
from castregin.errors import InputError
from castregin.evaluation import holes as holes_module
from castregin.evaluation.analysis import _without, unique_contributions
from castregin.evaluation.holes import hole_intervals, possible_flips

#: castregin's name -> (pytrec_eval's measure, its key).
PYTREC = {
    "P@3": ("P.3", "P_3"), "P@5": ("P.5", "P_5"),
    "Success@3": ("success.3", "success_3"),
    "R@5": ("recall.5", "recall_5"), "RR": ("recip_rank", "recip_rank"), "AP": ("map", "map"),
    "AP@5": ("map_cut.5", "map_cut_5"), "Rprec": ("Rprec", "Rprec"), "nDCG": ("ndcg", "ndcg"),
    "nDCG@3": ("ndcg_cut.3", "ndcg_cut_3"), "nDCG@5": ("ndcg_cut.5", "ndcg_cut_5"),
    "nDCG@10": ("ndcg_cut.10", "ndcg_cut_10"),
}
MEASURES = list(PYTREC)


def pytrec(qrels: dict, run: dict, measure: str, rel_level: int) -> dict[str, float]:
    """pytrec_eval's per-turn values of a castregin measure name."""
    name, key = PYTREC[measure]
    values = pytrec_eval.RelevanceEvaluator(qrels, {name}, relevance_level=rel_level).evaluate(run)
    return {turn: v[key] for turn, v in values.items()}


def random_turn(rng: random.Random, items: int, judged_share: float, largest: int) -> tuple[dict, dict]:
    """A turn's scores (distinct whole numbers: no ties, as floats either) and labels for some of its items."""
    names = [f"d{i}" for i in range(items)]
    scores = dict(zip(names, map(float, rng.sample(range(1000), items)), strict=True))
    labels = {item: rng.choice(range(largest + 1)) for item in names if rng.random() < judged_share}
    labels.update({f"j{i}": rng.randint(0, largest) for i in range(rng.randint(0, 3))})  # judged, not retrieved
    if not labels:
        labels["j0"] = largest
    return scores, labels


# --- the cases where "holes as relevant" is not the top of the range ---------------------------------------------


def test_a_relevant_hole_at_rank_10_lowers_ndcg_so_the_interval_is_not_all_0_to_all_L():
    scores = {f"d{i}": 100.0 - i for i in range(1, 11)}
    labels = {"d1": 3, "d2": 3, **{f"d{i}": 0 for i in range(3, 10)}}  # d10 is the one hole
    result = hole_intervals([Run("r", {"t": scores})], Qrels({"t": labels}), ["nDCG@10", "AP"], depth=10)
    ndcg, ap = result.turns
    dcg = 3 + 3 / math.log2(3)
    # Label 1, 2 or 3 at rank 10 adds g/log2(11) to the DCG and g/log2(4) to the ideal DCG: the least is at 3.
    by_label = {g: (dcg + g / math.log2(11)) / (dcg + g / math.log2(4)) for g in (1, 2, 3)}
    assert by_label[3] < by_label[2] < by_label[1] < 1.0
    assert (ndcg.score, ndcg.high) == (1.0, 1.0)
    assert ndcg.low == pytest.approx(by_label[3], abs=1e-15)
    assert (dict(ndcg.low_labels), ndcg.holes, ndcg.judged) == ({"d10": 3}, 1, 0.9)
    # AP: R grows to 3, the precision sum by 3/10 only.
    assert (ap.score, ap.high) == (1.0, 1.0)
    assert ap.low == pytest.approx((1 + 1 + 3 / 10) / 3, abs=1e-15)


def test_a_label_between_0_and_L_can_give_the_greatest_ndcg():
    # d1 judged 0, d2 the hole, d3 judged 1 (the largest label is 3, from another turn).
    scores = {"d1": 3.0, "d2": 2.0, "d3": 1.0}
    labels = {"d1": 0, "d3": 1}
    qrels = Qrels({"t": labels, "u": {"y": 3}})
    (row,) = hole_intervals([Run("r", {"t": scores})], qrels, ["nDCG@3"]).turns

    def by_hand(g):
        dcg = g / math.log2(3) + 1 / 2
        ideal = sorted([g, 1], reverse=True)
        return dcg / (ideal[0] + ideal[1] / math.log2(3))

    values = {g: by_hand(g) for g in range(4)}
    for g, value in values.items():  # the arithmetic above is pytrec_eval's
        assert value == pytest.approx(pytrec({"t": {**labels, "d2": g}}, {"t": scores}, "nDCG@3", 1)["t"])
    assert max(values, key=values.get) == 1  # neither 0 nor 3
    assert values[3] < values[2] < values[1]
    assert (row.score, row.low) == (0.5, 0.5)
    assert row.high == pytest.approx(values[1], abs=1e-15)
    assert dict(row.high_labels) == {"d2": 1}


# --- exactness against all labellings ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_the_interval_is_the_least_and_greatest_over_all_labellings(seed):
    """Brute force: every (L+1)^h labelling of the holes, scored by pytrec_eval."""
    rng = random.Random(seed)
    largest = rng.choice([1, 2, 3])
    rel_level = rng.choice([1, 2]) if largest >= 2 else 1
    depth = rng.choice([4, 5, 6])
    scores, labels = random_turn(rng, rng.randint(6, 12), 0.5, largest)
    run = Run("r", {"t": scores})
    result = hole_intervals([run], Qrels({"t": labels}), MEASURES, depth=depth, hole_label=largest,
                            rel_level=rel_level)
    top = sorted(scores, key=lambda item: -scores[item])[:depth]
    hole_items = [item for item in top if item not in labels]
    labellings = list(itertools.product(range(largest + 1), repeat=len(hole_items)))
    qrels = {f"t{i}": {**labels, **dict(zip(hole_items, fill, strict=True))} for i, fill in enumerate(labellings)}
    runs = dict.fromkeys(qrels, scores)
    for row in result.turns:
        values = pytrec(qrels, runs, row.measure, rel_level)
        assert list(row.hole_items) == hole_items
        assert row.low == pytest.approx(min(values.values()), abs=1e-12), row.measure
        assert row.high == pytest.approx(max(values.values()), abs=1e-12), row.measure
        assert row.score == pytest.approx(values["t0"], abs=1e-12)  # all holes 0: trec_eval's score


def _every_labelling_values(order: list[str], labels: dict[str, int], holes: list[str], hole_label: int,
                            rel_level: int) -> dict[str, np.ndarray]:
    """Each measure's value under every labelling of ``holes`` (``(hole_label + 1)^h`` of them), from trec_eval's
    definitions in numpy (not castregin's code): the ranking ``order``, gains the labels, discounts
    log2(rank + 1), R the qrels' items labelled ``rel_level`` or more, unjudged items non-relevant."""
    n = len(order)
    hole_at = [order.index(item) for item in holes]
    base = np.array([labels.get(item, -1) for item in order])
    others = [label for item, label in labels.items() if item not in holes and label >= 0]
    discount = np.log2(np.arange(2, n + len(others) + len(holes) + 2))
    out: dict[str, list] = {}
    base_l = hole_label + 1
    places = base_l ** np.arange(len(holes) - 1, -1, -1)
    for begin in range(0, base_l ** len(holes), 1 << 16):
        # Labellings begin.. in itertools.product's order: each one's digits in base L + 1.
        codes = np.arange(begin, min(begin + (1 << 16), base_l ** len(holes)))
        fill = codes[:, None] // places % base_l
        ranked = np.tile(base, (len(fill), 1))
        ranked[:, hole_at] = fill
        relevant = ranked >= rel_level
        num_rel = sum(label >= rel_level for label in others) + (fill >= rel_level).sum(axis=1)
        found = np.cumsum(relevant, axis=1)
        first = np.where(relevant.any(axis=1), relevant.argmax(axis=1) + 1, 0)
        precision_sums = np.cumsum(found / np.arange(1, n + 1) * relevant, axis=1)
        r_found = np.take_along_axis(found, np.clip(np.minimum(num_rel, n) - 1, 0, None)[:, None], axis=1)[:, 0]
        dcg = np.cumsum(np.maximum(ranked, 0) / discount[:n], axis=1)
        ideal_labels = -np.sort(-np.concatenate([np.tile(others, (len(fill), 1)), fill], axis=1), axis=1)
        ideal = np.cumsum(np.maximum(ideal_labels, 0) / discount[:ideal_labels.shape[1]], axis=1)

        def ratio(a, b):
            return np.divide(a, b, out=np.zeros(len(a)), where=b > 0)

        values = {"RR": np.divide(1.0, first, out=np.zeros(len(fill)), where=first > 0),
                  "AP": ratio(precision_sums[:, -1], num_rel), "Rprec": ratio(r_found * (num_rel > 0), num_rel),
                  "nDCG": ratio(dcg[:, -1], ideal[:, -1])}
        for k in (3, 5, 10, 20):
            values[f"P@{k}"] = found[:, k - 1] / k
            values[f"Success@{k}"] = (found[:, k - 1] > 0).astype(float)
            values[f"R@{k}"] = ratio(found[:, k - 1], num_rel)
            values[f"AP@{k}"] = ratio(precision_sums[:, k - 1], num_rel)
            values[f"nDCG@{k}"] = ratio(dcg[:, k - 1], ideal[:, k - 1])
        for name, value in values.items():
            out.setdefault(name, []).append(value)
    return {name: np.concatenate(parts) for name, parts in out.items()}


@pytest.mark.parametrize(("holes", "hole_label", "rel_level", "seed"), [(10, 3, 2, 0), (10, 2, 1, 1), (20, 1, 1, 2)])
def test_ten_and_twenty_holes_equal_brute_force_over_every_labelling(holes, hole_label, rel_level, seed):
    """10 holes labelled 0..3 (1,048,576 labellings) or 0..2 (59,049), 20 holes labelled 0..1 (1,048,576), among
    judged relevant items ranked above them: the
    interval is the least and greatest value over every labelling, from trec_eval's definitions (numpy, above);
    the labellings reported for the ends give them (pytrec_eval); the score is pytrec_eval's."""
    rng = random.Random(seed)
    order = [f"d{i:02d}" for i in range(30)]
    scores = {item: float(100 - rank) for rank, item in enumerate(order)}
    depth = holes + 4
    labels = {item: rng.choice(range(hole_label + 1)) for item in order[depth:] if rng.random() < 0.6}
    labels.update({order[rank]: hole_label for rank in range(4)})  # judged relevant above the holes
    labels.update({f"x{i}": hole_label if i < 2 else 0 for i in range(6)})  # judged, not retrieved
    labels[order[4]] = -1  # in the pool but unjudged: a hole too
    hole_items = [item for item in order[:depth] if labels.get(item, -1) < 0]
    assert len(hole_items) == holes
    measures = [*PYTREC, "P@20", "nDCG@20", "Success@10", "AP@10"]
    measures = [name for name in measures if name in ("RR", "AP", "Rprec", "nDCG") or int(name.split("@")[1]) <= depth]
    result = hole_intervals([Run("r", {"t": scores})], Qrels({"t": labels}), measures, depth=depth,
                            hole_label=hole_label, rel_level=rel_level)
    truth = _every_labelling_values(order, labels, hole_items, hole_label, rel_level)
    for row in result.turns:
        values = truth[row.measure]
        assert list(row.hole_items) == hole_items
        assert row.low == pytest.approx(values.min(), abs=1e-12), row.measure
        assert row.high == pytest.approx(values.max(), abs=1e-12), row.measure
        assert row.score == pytest.approx(values[0], abs=1e-12)  # every hole 0 (the first labelling)
        if row.measure in PYTREC:
            for end, fill in ((row.low, row.low_labels), (row.high, row.high_labels)):
                value = pytrec({"t": {**labels, **fill}}, {"t": scores}, row.measure, rel_level)["t"]
                assert end == pytest.approx(value, abs=1e-12), row.measure
    # Ends that neither "every hole 0" nor "every hole L" gives (the first and the last labelling).
    assert any(min(truth[row.measure][[0, -1]]) > row.low for row in result.turns)
    if holes == 10:
        assert any(max(truth[row.measure][[0, -1]]) < row.high for row in result.turns)


# --- a simulated collection whose full truth is known -------------------------------------------------------------


def simulated_collection(seed: int, turns: int = 6, items: int = 60, pool_runs: int = 4, retrieved: int = 30):
    """Truth 0-3 for every item; runs that rank by truth plus noise; the last run contributes to no pool."""
    rng = random.Random(seed)
    truth = {f"{seed}_{t}": {f"d{i}": rng.choices(range(4), weights=[60, 20, 12, 8])[0] for i in range(items)}
             for t in range(turns)}
    runs = []
    for r in range(pool_runs + 1):
        noise = rng.uniform(0.5, 3.0)
        scores = {}
        for turn, labels in truth.items():
            noisy = {item: label + rng.gauss(0, noise) for item, label in labels.items()}
            top = sorted(noisy, key=lambda item: -noisy[item])[:retrieved]
            # Distinct whole-number scores, so that no tie hides in float32 (pytrec_eval's precision).
            scores[turn] = {item: float(retrieved - rank) for rank, item in enumerate(top)}
        runs.append(Run(f"r{r}", scores))
    return truth, runs[:pool_runs], runs[pool_runs]


def top_k(scores: dict, k: int) -> list[str]:
    return sorted(scores, key=lambda item: (-scores[item], item))[:k]


@pytest.mark.parametrize("seed", range(15))
def test_the_interval_holds_the_true_score_of_a_run_outside_the_pool(seed):
    depth = [3, 5, 10][seed % 3]
    truth, pool_runs, new_run = simulated_collection(seed)
    pooled = {turn: {item for run in pool_runs for item in top_k(run.scores[turn], depth)} for turn in truth}
    qrels = {turn: {item: truth[turn][item] for item in pooled[turn]} for turn in truth}
    # What judging the new run's holes would give: the pool's labels plus the truth of its top k.
    judged = {turn: {**qrels[turn], **{item: truth[turn][item] for item in top_k(new_run.scores[turn], depth)}}
              for turn in truth}
    result = hole_intervals([new_run, *pool_runs], Qrels(qrels), MEASURES, depth=depth)
    assert result.settings["hole_label"] == max(max(v.values()) for v in qrels.values())
    holes_seen = 0
    for measure in MEASURES:
        true_values = pytrec(judged, new_run.scores, measure, 2)
        rows = [row for row in result.turns if row.run == "r4" and row.measure == measure]
        assert len(rows) == len(truth)
        for row in rows:
            assert row.low - 1e-12 <= true_values[row.turn] <= row.high + 1e-12, (measure, row)
            holes_seen += row.holes
        summary = next(r for r in result.runs if r.run == "r4" and r.measure == measure)
        true_mean = sum(true_values.values()) / len(true_values)
        assert summary.low - 1e-12 <= true_mean <= summary.high + 1e-12
        # The pool's runs have no hole in their top k: their interval is their trec_eval score.
        for run in pool_runs:
            expected = pytrec(qrels, run.scores, measure, 2)
            for row in (row for row in result.turns if row.run == run.tag and row.measure == measure):
                assert row.holes == 0 and row.judged == 1.0
                assert row.low == row.high == row.score == pytest.approx(expected[row.turn], abs=1e-12)
    assert holes_seen > 0


@pytest.mark.parametrize("seed", range(4))
def test_the_ends_are_pytrec_eval_scores_on_the_labellings_that_give_them(seed):
    truth, pool_runs, new_run = simulated_collection(100 + seed)
    depth = 5
    pooled = {turn: {item for run in pool_runs for item in top_k(run.scores[turn], depth)} for turn in truth}
    qrels = {turn: {item: truth[turn][item] for item in pooled[turn]} for turn in truth}
    result = hole_intervals([new_run], Qrels(qrels), MEASURES, depth=depth)
    for row in result.turns:
        for end, fill in (("low", row.low_labels), ("high", row.high_labels)):
            filled = {row.turn: {**qrels[row.turn], **fill}}
            assert set(fill) == set(row.hole_items)
            assert all(0 <= label <= 3 for label in fill.values())
            value = pytrec(filled, {row.turn: new_run.scores[row.turn]}, row.measure, 2)[row.turn]
            assert getattr(row, end) == pytest.approx(value, abs=1e-12), (row.measure, end)
        assert row.score == pytest.approx(pytrec(qrels, new_run.scores, row.measure, 2)[row.turn], abs=1e-12)


def test_means_are_over_the_turns_both_have_and_the_rest_is_counted():
    run = Run("r", {"1_1": {"a": 2.0, "b": 1.0}, "1_2": {"c": 1.0}, "9_9": {"z": 1.0}})
    qrels = Qrels({"1_1": {"a": 2}, "1_2": {"c": 0, "x": 2}, "5_5": {"q": 1}})
    result = hole_intervals([run], qrels, ["P@2"])
    (summary,) = result.runs
    assert (summary.turns, summary.run_turns_not_judged, summary.qrels_turns_not_run) == (2, 1, 1)
    # 1_1: P@2 0.5, with b relevant 1.0; 1_2: one item retrieved, judged 0: P@2 = 0.
    assert (summary.score, summary.low, summary.high) == (0.25, 0.25, 0.5)
    assert (summary.holes, summary.turns_with_holes, summary.judged) == (1, 1, 0.75)


def test_each_turn_is_ranked_once_whatever_the_measures(monkeypatch):
    made = []
    original = holes_module.ranked_items
    monkeypatch.setattr(holes_module, "ranked_items", lambda scores, bits: made.append(1) or original(scores, bits))
    run = Run("r", {"1_1": {"a": 2.0, "b": 1.0}, "1_2": {"c": 1.0, "d": 0.5}})
    qrels = Qrels({"1_1": {"a": 2}, "1_2": {"c": 0, "x": 2}})
    hole_intervals([run], qrels, ["P@2", "nDCG@2", "AP@2"])
    assert len(made) == 2


def test_a_run_sharing_no_turn_with_the_qrels_is_warned_about():
    from castregin.errors import CoverageWarning

    with pytest.warns(CoverageWarning, match="shares no turn"):
        result = hole_intervals([Run("r", {"a": {"x": 1.0}})], Qrels({"b": {"x": 1}}), ["P@1"])
    assert (result.runs[0].turns, result.runs[0].run_turns_not_judged, result.runs[0].qrels_turns_not_run) == (0, 1, 1)


def test_a_label_below_0_is_a_hole_and_a_binary_measure_needs_the_level():
    run = Run("r", {"t": {"a": 2.0, "b": 1.0}})
    qrels = Qrels({"t": {"a": -1, "b": 2}})
    (row,) = hole_intervals([run], qrels, ["P@1"]).turns
    assert (row.hole_items, row.score, row.low, row.high) == (("a",), 0.0, 0.0, 1.0)
    # Holes labelled at most 1 never reach level 2.
    (row,) = hole_intervals([run], qrels, ["P@1"], hole_label=1).turns
    assert (row.low, row.high) == (0.0, 0.0)


# --- flips ---------------------------------------------------------------------------------------------------


def test_flips_are_the_pairs_whose_intervals_let_the_one_behind_end_above():
    from castregin.evaluation.holes import RunInterval

    def interval(name, score, low, high):
        return RunInterval(name, "m", 3, 1, 0, 0, 1.0, score, low, high, 0, 0)

    runs = [interval("a", 0.5, 0.5, 0.9), interval("b", 0.4, 0.4, 0.6), interval("c", 0.2, 0.2, 0.4),
            interval("d", 0.4, 0.4, 0.4), interval("e", 0.4, 0.4, 0.4)]
    pairs = {(f["run_a"], f["run_b"]) for f in possible_flips(runs)}
    # b (up to 0.6) could pass a (from 0.5); c reaches 0.4 only: it could tie b, d, e, never pass them.
    # d and e tie on a single point: nothing to flip.
    assert pairs == {("a", "b"), ("b", "d"), ("b", "e")}


def _brute_force_ndcg3_interval(scores: dict[str, float], labels: dict[str, int], hole_label: int):
    """(score, low, high) of trec_eval's ndcg_cut.3 on one turn, from the definition: the top 3 by score then item
    id descending, gain = label, discount log2(rank + 1), over the ideal top 3 of the turn's positive labels; every
    labelling 0..hole_label of the top 3's holes (items unjudged or labelled below 0) tried."""
    top = sorted(scores, key=lambda item: (scores[item], item), reverse=True)[:3]
    holes = [item for item in top if labels.get(item, -1) < 0]
    others = [label for item, label in labels.items() if label > 0 and item not in holes]

    def ndcg(fill: dict[str, int]) -> float:
        gains = [fill[item] if item in fill else max(labels.get(item, 0), 0) for item in top]
        ideal = sorted(others + [label for label in fill.values() if label > 0], reverse=True)[:3]
        best = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
        return sum(gain / math.log2(rank + 2) for rank, gain in enumerate(gains)) / best if best else 0.0

    values = [ndcg(dict(zip(holes, fill, strict=True)))
              for fill in itertools.product(range(hole_label + 1), repeat=len(holes))]
    return ndcg(dict.fromkeys(holes, 0)), min(values), max(values)


def test_cast_flips_equal_brute_force_from_the_definitions(cast_data):
    """On CAsT 2022 (nDCG@3, holes in the top 3): each run's interval is the means of the least and greatest
    ndcg_cut.3 over every labelling of each turn's holes, found by brute force from trec_eval's definition (not
    castregin's code), its score pytrec_eval's; the flips listed are the pairs whose brute-force intervals let
    the run behind end above the run ahead."""
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    plain_qrels = read_qrels_plain(qrels_path)
    hole_label = max(label for labels in plain_qrels.values() for label in labels.values())
    result = hole_intervals([formats.read_run(p) for p in run_paths], formats.read_qrels(qrels_path), ["nDCG@3"])
    assert result.settings["hole_label"] == hole_label
    by_run = {r.run: r for r in result.runs}
    truth = {}
    for path in run_paths:
        plain_run = read_run_plain(path)
        name = path.read_text().split("\n", 1)[0].split()[5]
        shared = [turn for turn in plain_run if turn in plain_qrels]
        turns = [_brute_force_ndcg3_interval(plain_run[turn], plain_qrels[turn], hole_label) for turn in shared]
        score, low, high = (math.fsum(values) / len(turns) for values in zip(*turns, strict=True))
        pytrec_scores = pytrec(plain_qrels, plain_run, "nDCG@3", 2)
        assert score == pytest.approx(math.fsum(pytrec_scores[t] for t in shared) / len(shared), abs=1e-12)
        truth[name] = (score, low, high)
        assert (by_run[name].score, by_run[name].low, by_run[name].high) == pytest.approx(truth[name], abs=1e-12)
    assert sum(high > low for _, low, high in truth.values()) >= 2  # holes that matter
    expected = set()
    ordered = sorted(truth, key=lambda name: (-truth[name][0], name))
    for a, b in itertools.combinations(ordered, 2):
        (score_a, low_a, _), (score_b, _, high_b) = truth[a], truth[b]
        assert abs(high_b - low_a) > 1e-9 and score_a != score_b  # no pair on the edge of a flip (nor a tie)
        if high_b > low_a:
            expected.add((a, b))
    assert {(f["run_a"], f["run_b"]) for f in result.flips} == expected
    assert 0 < len(expected) < math.comb(len(truth), 2)  # some pairs could flip, some could not


# --- refusals ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("measure", "words"), [
    ("bpref", "supports P@k"), ("infAP", "supports"), ("nDCG(gains={0:0,1:5,2:1})", "gain map"),
    ("Judged@3", "supports"), ("num_rel_ret", "supports"),
])
def test_measures_without_an_exact_bound_are_refused(measure, words):
    with pytest.raises(InputError, match=r"analyze holes supports|gain map") as caught:
        hole_intervals([Run("r", {"t": {"a": 1.0}})], Qrels({"t": {"a": 1}}), [measure], depth=3)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_measures_without_a_cutoff_need_a_depth_and_labels_are_bounded(monkeypatch):
    run, qrels = Run("r", {"t": {f"d{i}": float(i) for i in range(20)}}), Qrels({"t": {"x": 3}})
    with pytest.raises(InputError, match="no cutoff"):
        hole_intervals([run], qrels, ["AP"])
    with pytest.raises(InputError, match="hole label"):
        hole_intervals([run], qrels, ["P@3"], hole_label=-1)
    monkeypatch.setattr(holes_module, "MAX_HOLE_LABELLINGS", 100)
    with pytest.raises(InputError, match=r"10 holes in the top 10 .* 286 label multisets .* more than 100"):
        hole_intervals([run], qrels, ["nDCG@10"])
    # A binary measure tries h + 1 multisets: within the bound.
    assert hole_intervals([run], qrels, ["P@10"]).runs[0].high == pytest.approx(1.0)


# --- command line, API, CAsT ------------------------------------------------------------------------------------


def test_cli_formats_and_api(tmp_path, cli):
    run = tmp_path / "new.run"
    run.write_text("t\tQ0\ta\t1\t3\tnew\nt\tQ0\tb\t2\t2\tnew\nt\tQ0\tc\t3\t1\tnew\n")
    qrels = tmp_path / "q.qrel"
    qrels.write_text("t 0 a 2\nt 0 x 3\n")
    data = json.loads(cli("analyze", "holes", run, "--qrels", qrels, "--per-turn", "--format", "json").stdout)
    assert set(data) == {"settings", "runs", "flips", "turns"}
    assert data["settings"]["hole_label"] == 3 and data["settings"]["depths"] == {"nDCG@3": 3}
    assert data["turns"][0]["hole_items"] == ["b", "c"]
    assert data == api.holes(str(run), str(qrels))
    csv_text = cli("analyze", "holes", run, "--qrels", qrels, "-m", "P@3", "--format", "csv").stdout
    header, row = csv_text.splitlines()
    assert header.startswith("run,measure,depth,turns,holes,turns_with_holes,judged,score,low,high")
    # P@3: a relevant; b and c may be.
    assert row.startswith("new,P@3,3,1,2,1,0.3333333333333333,0.3333333333333333,0.3333333333333333,1.0")
    for fmt in ("table", "markdown", "latex"):
        text = cli("analyze", "holes", run, "--qrels", qrels, "--per-turn", "--format", fmt).stdout
        assert "new" in text and "Per turn" in text
    result = cli("analyze", "holes", run, "--qrels", qrels, "-m", "bpref", "--depth", "3")
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and "analyze holes supports" in result.stderr


def test_large_inputs_are_parsed_into_columns_and_give_what_the_line_readers_give(cli, tmp_path, monkeypatch):
    """A run above the small-input bound (1 MiB) is read through the columnar parser, then made the same dicts
    (the line reader would take three times as long): the same output as hole_intervals on the line reader's."""
    rng = random.Random(5)
    run_lines, qrels_lines = [], []
    for t in range(300):
        turn = f"{101 + t // 50}_{t % 50}-1"
        items = [f"doc{rng.randrange(10**6):06d}" for _ in range(120)]
        items = list(dict.fromkeys(items))
        run_lines += [f"{turn} Q0 {item} {r + 1} {rng.uniform(0, 30):.5f} big" for r, item in enumerate(items)]
        qrels_lines += [f"{turn} 0 {item} {rng.choice([-1, 0, 0, 1, 2, 3])}" for item in items[3::3]]
    run, qrels = tmp_path / "big.run", tmp_path / "big.qrel"
    run.write_text("\n".join(run_lines) + "\n")
    qrels.write_text("\n".join(sorted(qrels_lines)) + "\n")
    assert run.stat().st_size > 1 << 20
    expected = hole_intervals([formats.read_run(run)], formats.read_qrels(qrels), ["AP", "nDCG@10", "P@5"],
                              depth=10).records()

    def unwanted(*args, **kwargs):
        raise AssertionError("read line by line")

    monkeypatch.setattr("castregin.cli.options.read_run", unwanted)
    got = cli("analyze", "holes", run, "--qrels", qrels, "-m", "AP", "-m", "nDCG@10", "-m", "P@5", "--depth", "10",
              "--per-turn", "--format", "json")
    assert got.exit_code == 0, got.stderr
    assert json.loads(got.stdout) == json.loads(json.dumps(expected))
    assert sum(row["holes"] for row in expected["turns"]) > 1000


def test_cast_baselines_scores_and_ends_equal_pytrec_eval(cast_data):
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    plain_qrels = read_qrels_plain(qrels_path)
    runs = [formats.read_run(p) for p in run_paths]
    for depth in (1, 3):
        result = hole_intervals(runs, formats.read_qrels(qrels_path), ["nDCG@3", "P@1", "RR"], depth=depth,
                                score_precision="float")  # pytrec_eval's ranking
        for path, run in zip(run_paths, runs, strict=True):
            plain_run = read_run_plain(path)
            for measure, (name, key) in {"nDCG@3": ("ndcg_cut.3", "ndcg_cut_3"), "P@1": ("P.1", "P_1"),
                                         "RR": ("recip_rank", "recip_rank")}.items():
                rows = [r for r in result.turns if r.run == run.tag and r.measure == measure]
                extremes = {}
                for row in rows:
                    extremes[f"{row.turn} low"] = {**plain_qrels[row.turn], **row.low_labels}
                    extremes[f"{row.turn} high"] = {**plain_qrels[row.turn], **row.high_labels}
                tested_run = {query: plain_run[query.split()[0]] for query in extremes}
                values = pytrec_eval.RelevanceEvaluator(extremes, {name}, relevance_level=2).evaluate(tested_run)
                scores = pytrec_eval.RelevanceEvaluator(plain_qrels, {name}, relevance_level=2).evaluate(plain_run)
                for row in rows:
                    assert row.low == pytest.approx(values[f"{row.turn} low"][key], abs=1e-12)
                    assert row.high == pytest.approx(values[f"{row.turn} high"][key], abs=1e-12)
                    assert row.score == pytest.approx(scores[row.turn][key], abs=1e-12)
    # The depth-1 pool judged every baseline's top item but T5_raw's in one turn (not one of the slice's).
    at_1 = {(r.run, r.measure): r for r in hole_intervals(runs, formats.read_qrels(qrels_path), ["nDCG@3"],
                                                         depth=1).runs}
    assert [at_1[run.tag, "nDCG@3"].holes for run in runs] == ([0, 0, 1, 0] if cast_data.name == "cast2022" else
                                                                [0, 0, 0, 0])


def test_cast_a_baseline_without_its_own_judgments_has_its_full_score_inside_the_interval(cast_data):
    """The new-system case on real data: each baseline scored on the qrels without the items only it
    brought to the depth-1 pool (as analyze loro); judging them again is the full qrels' score (pytrec_eval's
    mean over the turns the run shares with the qrels)."""
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    qrels, plain_qrels = formats.read_qrels(qrels_path), read_qrels_plain(qrels_path)
    runs = [formats.read_run(p) for p in run_paths]
    full = {}
    for path, run in zip(run_paths, runs, strict=True):
        plain_run = read_run_plain(path)
        shared = [turn for turn in plain_run if turn in plain_qrels]
        for measure in ("nDCG@3", "AP"):
            values = pytrec(plain_qrels, plain_run, measure, 2)
            full[run.tag, measure] = math.fsum(values[turn] for turn in shared) / len(shared)
    for run, removed in zip(runs, unique_contributions(runs, 1), strict=True):
        reduced = hole_intervals([run], _without(qrels, removed), ["nDCG@3", "AP"], depth=3)
        for summary in reduced.runs:
            assert summary.low <= full[run.tag, summary.measure] <= summary.high
            assert summary.score < full[run.tag, summary.measure]  # trec_eval's number is too low
