"""Prediction-powered estimates (``analyze ppi``): equal to ppi_py's, and intervals that cover the truth.

Oracles: the ppi-python package (``ppi_py``, a test-only dependency): ``ppi_mean_pointestimate`` and
``ppi_mean_ci`` (with their defaults, lambda power-tuned; ppi_py's default alpha is 0.1, castregin's
confidence 0.95, so both levels are compared), ``classical_mean_ci`` and ``ppi_mean_power`` (the plan).
They agree to 1e-15: ppi_py rescales its unit weights (``w / w.sum() * n``) between its calls, which moves
the last bit. Coverage: simulated collections whose truth is known.
"""

from __future__ import annotations

import json
import math
import random
import warnings

import numpy as np
import pytest

from castregin.data import Qrels, Run
from castregin.errors import CoverageWarning, InputError
from castregin.evaluation.ppi import classical_mean, ppi_correlation, ppi_estimates, ppi_mean, turns_needed

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is the test extra's oracle (pip install -e '.[test]')")


def _draw(rng: np.random.Generator, n: int, big_n: int, noise: float, grid: bool = False):
    truth = rng.random(n + big_n)
    if grid:
        truth = np.round(truth * 3) / 3  # per-turn scores of graded judgments take few values, with ties
    model = np.clip(truth + rng.normal(0, noise, n + big_n), 0, 1)
    return truth[:n], model[:n], model[n:]


def _oracle(y, yhat, unlabeled, alpha=None):
    kwargs = {} if alpha is None else {"alpha": alpha}
    estimate = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled)))
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, yhat, unlabeled, **kwargs))
    return estimate, low, high


@pytest.mark.parametrize("seed", range(40))
def test_equal_to_ppi_py(seed):
    rng = np.random.default_rng(seed)
    y, yhat, unlabeled = _draw(rng, int(rng.integers(2, 80)), int(rng.integers(1, 400)), float(rng.random()),
                               grid=seed % 3 == 0)
    for alpha in (None, 0.05):  # ppi_py's default (0.1), and castregin's 95%
        estimate, low, high = _oracle(y, yhat, unlabeled, alpha)
        interval, lam = ppi_mean(y, yhat, unlabeled, 0.1 if alpha is None else alpha)
        assert interval.estimate == pytest.approx(estimate, abs=1e-15)
        assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-15)
        assert 0 <= lam <= 1
        c_low, c_high = ppi_py.classical_mean_ci(y, **({} if alpha is None else {"alpha": alpha}))
        classical = classical_mean(y, 0.1 if alpha is None else alpha)
        assert (classical.low, classical.high) == pytest.approx((c_low, c_high), abs=1e-15)
        assert classical.estimate == pytest.approx(float(np.mean(y)), abs=1e-15)


def test_lambda_zero_is_the_classical_interval_and_one_is_plain_ppi():
    rng = np.random.default_rng(3)
    y, yhat, unlabeled = _draw(rng, 50, 300, 0.2)
    interval, _ = ppi_mean(y, yhat, unlabeled, 0.05, lam=0.0)
    low, high = ppi_py.classical_mean_ci(y, alpha=0.05)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-15)
    interval, _ = ppi_mean(y, yhat, unlabeled, 0.05, lam=1.0)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=0.05, lam=1)
    assert (interval.low, interval.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-15)


@pytest.mark.parametrize("noise", [0.05, 0.3, 2.0])
def test_the_intervals_cover_the_true_mean(noise):
    """Repeated collections from a known distribution: the 95% intervals hold its mean about 95% of the time.

    Per-turn scores uniform on [0, 1] (mean 0.5), the model's a noisy copy; 100 human-judged turns, 900 more
    the model labels. A useless model (noise 2) must still cover: power tuning then falls back on people.
    """
    rng = np.random.default_rng(11)
    repetitions = 2000
    covered = classical_covered = 0
    for _ in range(repetitions):
        y, yhat, unlabeled = _draw(rng, 100, 900, noise)
        interval, _ = ppi_mean(y, yhat, unlabeled, 0.05)
        classical = classical_mean(y, 0.05)
        covered += interval.low <= 0.5 <= interval.high
        classical_covered += classical.low <= 0.5 <= classical.high
    # 2000 draws: the share's standard error is 0.005; 0.93-0.97 holds 95% coverage with room.
    assert 0.93 <= covered / repetitions <= 0.97
    assert 0.93 <= classical_covered / repetitions <= 0.97


def _collection(seed: int, turns: int = 400):
    """Three runs over ``turns`` turns of 20 items, true labels 0-3 (mostly 0), and a model that gets a label one
    off 30% of the time. The runs' mean nDCG@3 is 0.43, 0.58 and 0.77 on seed 5: per-turn scores piled at 1
    make intervals from few turns too narrow (the normal approximation), for people's labels alone as for PPI."""
    rng = random.Random(seed)
    truth, model = {}, {}
    for t in range(turns):
        turn = f"{t // 6 + 100}_1-{t % 6 + 1}"
        truth[turn] = {f"i{k}": rng.choice([0] * 9 + [1, 1, 2, 3]) for k in range(20)}
        model[turn] = {item: min(3, max(0, label + rng.choice([-1, 1]))) if rng.random() < 0.3 else label
                       for item, label in truth[turn].items()}
    runs = []
    for r, skill in enumerate((0.3, 0.6, 1.0)):
        scores = {turn: {item: label * skill + rng.random() * 4 for item, label in labels.items()}
                  for turn, labels in truth.items()}
        runs.append(Run(f"run{r}", scores))
    return runs, Qrels(truth, "truth"), Qrels(model, "model")


def test_the_intervals_cover_the_collections_mean_from_qrels():
    """End to end, from qrels and runs: the estimand is each run's mean nDCG@3 over every turn by the true labels.

    Each repetition judges a new random 80 of the 400 turns "by people" (the true labels); the model's
    qrels label all. The interval is built for turns drawn independently from an endless supply: for the
    mean of a finite collection, sampled without replacement (the judged and unjudged turns its two parts),
    it is conservative, so coverage is 95% or more (about 98% here).
    """
    runs, truth, model = _collection(5)
    from castregin.evaluation.evaluate import evaluate_rows

    true_means = [value for run, _, measure, turn, value in evaluate_rows(runs, truth, ["nDCG@3"], complete=True)
                  if turn == "all" and measure == "nDCG@3"]
    rng = random.Random(8)
    covered, total = 0, 0
    for _ in range(50):
        sample = rng.sample(sorted(truth.labels), 80)
        human = truth.subset(sample)
        result = ppi_estimates(runs, human, model, ["nDCG@3"], pairs=False)
        for estimate, true in zip(result.runs, true_means, strict=True):
            covered += estimate.ppi.low <= true <= estimate.ppi.high
            total += 1
    assert covered / total >= 0.93


def test_runs_and_differences_from_qrels_equal_ppi_py_on_their_per_turn_scores():
    runs, truth, model = _collection(2, turns=120)
    human = truth.subset(random.Random(4).sample(sorted(truth.labels), 50))
    result = ppi_estimates(runs, human, model, ["nDCG@3", "P@3"], confidence=0.9)
    from castregin import api

    labelled = [t for t in model.labels if t in human.labels]
    unlabelled = [t for t in model.labels if t not in human.labels]

    def per_turn(qrels, measure):
        table = api.evaluate(runs, qrels, [measure], per_turn=True, complete=True)
        table = table[table.turn != "all"]
        return {(row.run, row.turn): row.value for row in table.itertuples()}

    for measure in ("nDCG@3", "P@3"):
        mine, theirs = per_turn(human, measure), per_turn(model, measure)
        arrays = {run.tag: (np.array([mine[run.tag, t] for t in labelled]),
                            np.array([theirs[run.tag, t] for t in labelled]),
                            np.array([theirs[run.tag, t] for t in unlabelled])) for run in runs}
        for row in (r for r in result.runs if r.measure == measure):
            estimate, low, high = _oracle(*arrays[row.run], alpha=0.1)
            assert (row.ppi.estimate, row.ppi.low, row.ppi.high) == pytest.approx((estimate, low, high), abs=1e-15)
            c_low, c_high = ppi_py.classical_mean_ci(arrays[row.run][0], alpha=0.1)
            # The effective sample size: n times the ratio of the classical and PPI++ variances.
            width_ratio = (c_high - c_low) / (high - low)
            assert row.effective_n == pytest.approx(len(labelled) * width_ratio ** 2, rel=1e-12)
            assert row.n == 50 and row.N == 70
            # The model alone: its labels' mean over every turn, as evaluate averages them (complete).
            model_only = api.evaluate([r for r in runs if r.tag == row.run], model, [measure], complete=True)
            assert list(model_only.measure) == ["num_q", measure] and model_only.value.iloc[0] == 120
            assert row.model_mean == pytest.approx(float(model_only.value.iloc[1]), rel=1e-12)
        for row in (r for r in result.differences if r.measure == measure):
            a, b = arrays[row.run_a], arrays[row.run_b]
            estimate, low, high = _oracle(a[0] - b[0], a[1] - b[1], a[2] - b[2], alpha=0.1)
            assert (row.ppi.estimate, row.ppi.low, row.ppi.high) == pytest.approx((estimate, low, high), abs=1e-15)
    assert len(result.differences) == 6  # 3 pairs, 2 measures


def test_the_plan_is_ppi_pys_sample_size_and_gives_the_width_asked():
    rng = np.random.default_rng(21)
    y, yhat, _ = _draw(rng, 80, 0, 0.15)
    total, width = 2000, 0.04
    plan = turns_needed(y, yhat, total, width, 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ppi_py divides by its zero prediction cost
        oracle = ppi_py.ppi_mean_power(y, yhat, cost_Y=1.0, cost_Yhat=1e-9, effective_n=(
            2 * 1.959963984540054 * float(np.std(y)) / width) ** 2, n_max=total)
    assert plan["rho"] == pytest.approx(oracle["ppi_corr"], abs=1e-15)
    assert round(plan["exact"]) == oracle["n"] and plan["ppi"] == math.ceil(plan["exact"])
    # The planned number of human-judged turns gives intervals about that wide (mean over collections of the
    # same distribution: the spread and agreement observed were estimates).
    widths = []
    for _ in range(300):
        truth = rng.random(total)
        model = np.clip(truth + rng.normal(0, 0.15, total), 0, 1)
        interval, _ = ppi_mean(truth[:plan["ppi"]], model[:plan["ppi"]], model[plan["ppi"]:], 0.05)
        widths.append(interval.high - interval.low)
    assert float(np.mean(widths)) == pytest.approx(width, rel=0.06)
    assert plan["classical"] > plan["ppi"]
    assert turns_needed(y, yhat, 50, 0.001)["ppi"] is None  # not even all 50 turns would do
    assert ppi_correlation(y, y) == pytest.approx(1 - 1 / len(y))  # ppi_py's cap


def test_bad_input_is_one_line():
    runs, truth, model = _collection(1, turns=30)
    with pytest.raises(InputError, match="not in the model's qrels"):
        ppi_estimates(runs, truth, model.subset(list(model.labels)[:10]))
    with pytest.raises(InputError, match="PPI needs at least 2"):
        ppi_estimates(runs, truth.subset(list(truth.labels)[:1]), model)
    with pytest.raises(InputError, match="people judged every turn"):
        ppi_estimates(runs, truth, model)
    with pytest.raises(InputError, match="confidence"):
        ppi_estimates(runs, truth.subset(list(truth.labels)[:5]), model, confidence=1.5)


def test_cli_json_and_tables(cli, tmp_path):
    runs, truth, model = _collection(3, turns=60)
    args = _cli_files(tmp_path, runs, truth, model)
    result = cli(*args, "--format", "json", "--plan-width", "0.2")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [row["run"] for row in data["runs"]] == ["run0", "run1", "run2"]
    assert data["settings"] == {"confidence": 0.95, "human_turns": 20, "model_turns": 60}
    assert len(data["differences"]) == 3 and len(data["plan"]) == 3
    table = cli(*args, "-m", "P@1", "--no-pairs")
    assert table.exit_code == 0 and "Differences" not in table.stdout and "PPI++ means (95% intervals)" in table.stdout
    bad = cli(*args[:-2], "--model-qrels", tmp_path / "human.qrel", "--qrels", tmp_path / "model.qrel")
    assert bad.exit_code == 1 and "people judged every turn" not in bad.stderr and bad.stderr.count("\n") == 1


def test_scores_that_never_vary_give_the_classical_estimate_without_a_numpy_warning():
    """A run whose per-turn scores are all 0 (it shares no turn with the qrels): lambda's 0/0 was numpy's
    "RuntimeWarning: invalid value encountered" on standard error, and the effective sample size 0/0 printed as
    inf. Both estimates are exact on the sample: the effective sample size is n, nothing gained."""
    zeros = Run("zeros", {"elsewhere": {"d1": 1.0}})
    runs, truth, model = _collection(1, turns=12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", CoverageWarning)  # the run shares no turn with the qrels, said so
        result = ppi_estimates([zeros, *runs], truth.subset(list(truth.labels)[:6]), model, ["P@1"])
    row = result.runs[0]
    assert (row.ppi.estimate, row.ppi.low, row.ppi.high, row.lam) == (0.0, 0.0, 0.0, 0.0)
    assert row.effective_n == 6 and row.gained == 0
    # ppi_py itself: the same estimate, its lambda 0/0 too (nan, numpy's warning silenced here).
    with np.errstate(invalid="ignore", divide="ignore"):
        assert float(np.squeeze(ppi_py.ppi_mean_pointestimate(np.zeros(6), np.zeros(6), np.zeros(6), lam=0))) == 0.0


def _cli_files(tmp_path, runs, truth, model):
    from castregin.formats import format_qrels, format_run

    paths = []
    for run in runs:
        paths.append(tmp_path / f"{run.tag}.run")
        ranks = {turn: dict.fromkeys(scores, 1) for turn, scores in run.scores.items()}
        paths[-1].write_text(format_run(Run(run.tag, run.scores, ranks)))
    (tmp_path / "human.qrel").write_text(format_qrels(truth.subset(list(truth.labels)[::3])))
    (tmp_path / "model.qrel").write_text(format_qrels(model))
    return ["analyze", "ppi", *paths, "--qrels", tmp_path / "human.qrel", "--model-qrels", tmp_path / "model.qrel"]


@pytest.mark.parametrize("name", ["P.1,3", "official"])
def test_a_name_for_several_measures_is_refused(cli, tmp_path, name):
    """``-m P.1,3`` printed P_3's numbers under the name P.1,3 (the last measure of the family), exit 0."""
    runs, truth, model = _collection(2, turns=30)
    result = cli(*_cli_files(tmp_path, runs, truth, model), "-m", name)
    assert result.exit_code == 1 and result.stdout == ""
    assert f"{name} stands for several measures: give one" in result.stderr and result.stderr.count("\n") == 1
    from castregin import api

    with pytest.raises(InputError, match="stands for several measures: give one"):
        api.ppi(runs, truth.subset(list(truth.labels)[::3]), model, ["P@1", name])


def test_csv_says_what_it_leaves_out_and_the_level_keeps_its_digits(cli, tmp_path):
    """csv with --plan-width printed the plan alone (the estimates dropped in silence); 0.999 was "100% intervals"."""
    runs, truth, model = _collection(2, turns=30)
    args = _cli_files(tmp_path, runs, truth, model)
    refused = cli(*args, "--format", "csv", "--plan-width", "0.1")
    assert refused.exit_code == 2 and refused.stdout == "" and refused.stderr.count("\n") == 1
    assert "--format csv" in refused.stderr and "table, markdown, latex or json" in refused.stderr
    csv = cli(*args, "--format", "csv")
    assert csv.exit_code == 0 and csv.stdout.splitlines()[0].startswith("run,measure,n,N,estimate")
    assert len(csv.stdout.splitlines()) == 1 + len(runs)
    for confidence, shown in (("0.999", "99.9%"), ("0.95", "95%"), ("0.1", "10%"), ("0.9995", "99.95%")):
        table = cli(*args, "--confidence", confidence, "--plan-width", "0.1")
        assert table.exit_code == 0, table.stderr
        assert f"PPI++ means ({shown} intervals)" in table.stdout
        assert f"Differences of means (run_a - run_b), {shown} intervals" in table.stdout
        assert f"for a {shown} interval of the width asked" in table.stdout


def test_the_plan_is_classical_where_the_agreement_is_negative():
    """rho <= 0: the estimator clips lambda to 0 (people alone), but the plan counted rho^2 as a gain."""
    rng = np.random.default_rng(5)
    y = rng.random(80)
    yhat = np.clip(1 - y + rng.normal(0, 0.1, 80), 0, 1)  # a model that disagrees
    assert ppi_correlation(y, yhat) < 0
    total, width = 3000, 0.05
    plan = turns_needed(y, yhat, total, width, 0.05)
    # ppi_py's classical interval of these 80 turns is c_high - c_low wide; it narrows as 1/sqrt(n).
    c_low, c_high = ppi_py.classical_mean_ci(y, alpha=0.05)
    classical_n = 80 * ((c_high - c_low) / width) ** 2
    assert plan["exact"] == pytest.approx(classical_n, rel=1e-12)
    assert plan["ppi"] == plan["classical"] == math.ceil(classical_n)
    assert plan["lambda"] == 0 and not plan["optimistic"]
    # And the estimator there is the classical one: power tuning gives lambda 0 on such a sample.
    _, lam = ppi_mean(y, yhat, np.clip(1 - rng.random(total - 80), 0, 1), 0.05)
    assert lam == 0


def test_a_plan_whose_lambda_would_exceed_1_is_optimistic_and_says_so(cli, tmp_path):
    """The model's scores a third of people's spread: the best lambda is about 3, clipped to 1, so the planned
    turns give a wider interval than asked (simulated here), and a warning says so."""
    rng = np.random.default_rng(9)
    total, width = 2000, 0.04
    y = rng.random(100)
    plan = turns_needed(y, y / 3 + rng.normal(0, 0.01, 100), total, width, 0.05)
    assert plan["optimistic"] and plan["lambda"] > 1
    widths = []
    for _ in range(200):
        truth = rng.random(total)
        model = truth / 3 + rng.normal(0, 0.01, total)
        low, high = ppi_py.ppi_mean_ci(truth[:plan["ppi"]], model[:plan["ppi"]], model[plan["ppi"]:], alpha=0.05)
        widths.append(float(high[0] - low[0]))
    assert float(np.mean(widths)) > 1.2 * width  # ppi_py's intervals at the planned turns: wider than asked
    good = turns_needed(y, np.clip(y + rng.normal(0, 0.15, 100), 0, 1), total, width, 0.05)
    assert 0 < good["lambda"] <= 1 and not good["optimistic"]
    # Through the command: a run ranking a, b, c on every turn; people find k of them relevant (P@3 = k/3), the
    # model only one where k > 0 (P@3 1/3 or 0): its scores spread a third as much; one warning line names the run.
    k_of = random.Random(2)
    truth, model = {}, {}
    for t in range(60):
        k = k_of.randrange(4)
        truth[f"t{t}"] = {item: 2 if n < k else 0 for n, item in enumerate("abc")}
        model[f"t{t}"] = {item: 2 if n < min(k, 1) else 0 for n, item in enumerate("abc")}
    runs = [Run("flat", {turn: {"a": 3.0, "b": 2.0, "c": 1.0} for turn in truth})]
    args = _cli_files(tmp_path, runs, Qrels(truth, "people"), Qrels(model, "model"))
    result = cli(*args, "-m", "P@3", "--plan-width", "0.3", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("\n") == 1 and "the plan of --plan-width is optimistic for flat (P@3)" in result.stderr
    assert json.loads(result.stdout)["plan"][0]["turns_ppi"] >= 1
