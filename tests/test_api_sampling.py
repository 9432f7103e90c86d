"""The Python API of issue 33: sample_pool, sample_eval, adaptive_pool, simulate_pooling, ppi.

Oracles: sample_eval.pl's kept outputs (tests/cli/sample_eval_oracle.py), ppi_py, and orders worked by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from castregin import api
from castregin.errors import InputError
from castregin.formats.strata import format_stratified_qrels, parse_stratified_qrels
from castregin.render.sample_eval import sample_eval_text

sys.path.insert(0, str(Path(__file__).resolve().parent / "cli"))
from sample_eval_oracle import cases, kept_outputs


def test_sample_eval_from_a_path_and_from_stratified_qrels(tmp_path):
    qrels_text, run_text, options = cases()["sample7"]
    (tmp_path / "q").write_text(qrels_text)
    (tmp_path / "r").write_text(run_text)
    from_path = api.sample_eval(tmp_path / "q", tmp_path / "r")
    from_object = api.sample_eval(parse_stratified_qrels(qrels_text.encode(), "q", "q"), str(tmp_path / "r"))
    assert sample_eval_text(from_path, "-q" in options) == kept_outputs()["sample7"]
    assert from_object == from_path
    with pytest.raises(InputError, match="qrels: expected stratified qrels"):
        api.sample_eval({"1": {"d1": 1}}, tmp_path / "r")


def test_sample_pool_orders_a_python_run_by_score_and_labels_the_judged():
    runs = [{"t": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}, {"t": {"d": 9.0, "e": 1.0}}]
    pool, strata = api.sample_pool(runs, "1-1:1,2-3:#1", seed=4, judged={"t": {"a": 2, "d": 0}})
    assert strata.strata["t"] == {"a": "1", "d": "1", "b": "2", "c": "2", "e": "2"}
    assert {"a", "d"} <= pool["t"] and len(pool["t"]) == 3
    text = format_stratified_qrels(strata)
    assert "t 0 a 1 2\n" in text and "t 0 d 1 0\n" in text
    # The one sampled item of stratum 2 has no judgment yet: -1, like the items left out.
    assert sum(line.endswith(" -1") for line in text.splitlines()) == 3


def test_adaptive_pool_and_simulation():
    runs = [{"t": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}, {"t": {"e": 4.0, "a": 3.0, "f": 2.0, "g": 1.0}},
            {"t": {"h": 3.0, "i": 2.0, "e": 1.0}}]
    assert api.adaptive_pool(runs, "depth", 4) == {"t": ["a", "e", "h", "b"]}
    assert api.adaptive_pool(runs, "mtf", 4, judged={"t": {"a": 3}}) == {"t": ["b", "e", "h"]}
    qrels = {"t": {"a": 2, "c": 2, "e": 3, "f": 2, "g": 2}}
    simulation = api.simulate_pooling(runs, qrels, strategies=["mtf"], budgets=[9])
    assert simulation.points[0].relevant_found == 5 and simulation.points[0].kendall_tau == pytest.approx(1.0)
    with pytest.raises(InputError, match="strategy"):
        api.adaptive_pool(runs, "best", 4)


def test_ppi_equals_ppi_py():
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(0)
    labels = {f"t{k}": {"a": int(rng.integers(0, 4)), "b": int(rng.integers(0, 4))} for k in range(40)}
    model = {t: {i: max(0, min(3, v + int(rng.integers(-1, 2)))) for i, v in items.items()}
             for t, items in labels.items()}
    human = {t: labels[t] for t in list(labels)[:15]}
    run = {t: {"a": 2.0, "b": 1.0} for t in labels}
    result = api.ppi(run, human, model, "P@1")
    y = np.array([float(labels[t]["a"] >= 2) for t in human])
    yhat = np.array([float(model[t]["a"] >= 2) for t in human])
    unlabeled = np.array([float(model[t]["a"] >= 2) for t in labels if t not in human])
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=0.05)
    row = result.runs[0]
    assert (row.ppi.low, row.ppi.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-15)
    assert row.ppi.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled)[0]), abs=1e-15)
