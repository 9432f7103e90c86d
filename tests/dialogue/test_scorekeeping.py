"""Scorekeeping (clembench's privateshared game): every published episode of ../shared/clembench
reproduced (the whole scores.json, NaNs included, and byte for byte with --write), hand-made episodes
whose scores are computed independently here, the leaderboard summary, and malformed
interactions.json answered with one line and exit code 1.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics

import numpy as np
import pytest

from castregin.dialogue import scorekeeping
from castregin.errors import InputError


def episodes(clembench):
    found = sorted(clembench.rglob("interactions.json"))
    assert len(found) >= 3, "the shared clembench data should hold at least three episodes"
    return found


def assert_same_scores(got, published, path=""):
    """Same keys in the same order, same number types, numbers equal to 1e-12, NaN where NaN."""
    if isinstance(published, dict):
        assert isinstance(got, dict), path
        assert list(got) == list(published), path
        for key in published:
            assert_same_scores(got[key], published[key], f"{path}/{key}")
        return
    assert type(got) is type(published), f"{path}: {type(got).__name__} vs {type(published).__name__}"
    if isinstance(published, float) and math.isnan(published):
        assert math.isnan(got), path
    else:
        assert got == pytest.approx(published, abs=1e-12, rel=0), path


def test_every_published_episode_is_reproduced(clembench):
    aborted = 0
    for path in episodes(clembench):
        published = json.loads((path.parent / "scores.json").read_text())
        got = scorekeeping.score_episode(json.loads(path.read_text()), source=str(path))
        assert_same_scores(got, published, str(path))
        aborted += published["episode scores"]["Aborted"]
    assert aborted >= 1  # the shared data include an aborted episode


def test_cli_json_is_the_published_structure(cli, clembench):
    paths = episodes(clembench)
    result = cli("scorekeeping", "score", paths[0].parent, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert_same_scores(json.loads(result.stdout), json.loads((paths[0].parent / "scores.json").read_text()))
    several = cli("scorekeeping", "score", *paths, "--format", "json")
    data = json.loads(several.stdout)
    assert list(data) == [str(p) for p in paths]
    for path in paths:
        assert_same_scores(data[str(path)], json.loads((path.parent / "scores.json").read_text()))


def test_write_gives_clembench_bytes(cli, clembench, tmp_path):
    copy_root = tmp_path / "results"
    copies = []
    for path in episodes(clembench):  # the interactions alone (the shared tree is read-only)
        target = copy_root / path.relative_to(clembench)
        target.parent.mkdir(parents=True)
        shutil.copyfile(path, target)
        copies.append(target)
    result = cli("scorekeeping", "score", *(p.parent for p in copies), "--write")
    assert result.exit_code == 0, result.stderr
    for path in copies:
        original = clembench / path.parent.relative_to(copy_root) / "scores.json"
        assert (path.parent / "scores.json").read_bytes() == original.read_bytes()


def test_the_published_aborted_episode(clembench):
    aborted = [p for p in episodes(clembench) if json.loads(p.read_text())["Aborted"]]
    assert aborted
    interactions = json.loads(aborted[0].read_text())
    scores = scorekeeping.score_episode(interactions)
    played = interactions["Played Probe Rounds"]
    assert len(interactions["probes"]) == played + 1  # a half-played round, not scored
    assert list(scores["turn scores"]) == [str(t) for t in range(played)]
    episode = scores["episode scores"]
    for name in scorekeeping.GAME_SCORES:
        assert math.isnan(episode[name])
    assert (episode["Aborted"], episode["Lose"], episode["Success"]) == (1, 0, 0)
    assert episode["Request Count"] == sum(interactions["Request Count"])  # the aborted round's included
    assert episode["Request Success Ratio"] == sum(interactions["Parsed Request Count"]) / episode["Request Count"]


# --- hand-made episodes ------------------------------------------------------------------------------------

def make_episode(rounds, *, filled, aborted=False, played=None, extra_round=None, slots=None):
    """An interactions.json: rounds is a list of (gt list, answer list); ``slots`` defaults to one per
    request after the first probing round (a whole game)."""
    probes = [[{"target": f"S{i}", "gt": g, "value": v, "tries": 1}
               for i, (g, v) in enumerate(zip(gts, answers, strict=True))]
              for gts, answers in rounds]
    if extra_round is not None:
        probes.append([{"target": "S0", "gt": g, "value": v, "tries": 6} for g, v in zip(*extra_round, strict=True)])
    n = len(probes)
    return {
        "players": {"GM": "Game master for privateshared"},
        "turns": [],
        "probes": probes,
        "Request Count": [len(r[0]) + (1 if t else 0) for t, r in enumerate(rounds)] + ([9] if extra_round else []),
        "Parsed Request Count": [len(r[0]) + (1 if t else 0) for t, r in enumerate(rounds)]
                                + ([2] if extra_round else []),
        "Violated Request Count": [0] * len(rounds) + ([7] if extra_round else []),
        "Filled Slots": filled,
        "Aborted": aborted,
        "Played Probe Rounds": n if played is None else played,
        "realised_slots": {f"S{i}": i for i in range(len(rounds) - 1 if slots is None else slots)},
    }


def cohen_textbook(a, b):
    """Cohen's kappa as (p_o - p_e) / (1 - p_e), the marginals of both raters."""
    a, b = np.array(a), np.array(b)
    labels = np.union1d(a, b)
    p_o = np.mean(a == b)
    p_e = sum(np.mean(a == label) * np.mean(b == label) for label in labels)
    return (p_o - p_e) / (1 - p_e)


ROUNDS = [
    ([0, 0, 0, 0], [0, 0, 1, 0]),
    ([1, 0, 0, 0], [1, 0, 0, 0]),
    ([1, 1, 0, 0], [1, 0, 0, 1]),
    ([1, 1, 1, 0], [1, 1, 1, 0]),
    ([1, 1, 1, 1], [1, 1, 0, 1]),
]


def test_hand_made_episode():
    interactions = make_episode(ROUNDS, filled=[True, True, False, True])
    scores = scorekeeping.score_episode(interactions)
    gts = [g for gt, _ in ROUNDS for g in gt]
    answers = [a for _, ans in ROUNDS for a in ans]
    turn = scores["turn scores"]
    assert list(turn) == ["0", "1", "2", "3", "4"]
    assert [turn[str(t)]["Accuracy"] for t in range(5)] == [0.75, 1.0, 0.5, 1.0, 0.75]
    assert "Slot Filled?" not in turn["0"]
    assert [turn[str(t)]["Slot Filled?"] for t in range(1, 5)] == [1, 1, 0, 1]
    assert turn["2"]["Request Count"] == 5
    episode = scores["episode scores"]
    # clembench's privateshared scores, in the order its scores.json holds them.
    assert list(episode) == ["Middle-Accuracy", "Accuracy", "Kappa", "Truncated Kappa", "Slot-Filling-Accuracy",
                             "Main Score", "Aborted", "Lose", "Success", "Request Count", "Parsed Request Count",
                             "Violated Request Count", "Request Success Ratio"]
    assert episode["Middle-Accuracy"] == 1.0  # 4 slots: round int((4 + 1) / 2) - 1 = 1
    assert episode["Accuracy"] == 16 / 20
    kappa = cohen_textbook(gts, answers)
    assert episode["Kappa"] == pytest.approx(kappa, abs=1e-14)
    assert episode["Truncated Kappa"] == episode["Kappa"]
    assert episode["Slot-Filling-Accuracy"] == 0.75
    sf, tk = 0.75, kappa
    assert episode["Main Score"] == pytest.approx(100 * 2 * sf * tk / (sf + tk), abs=1e-12)
    assert (episode["Aborted"], episode["Lose"], episode["Success"]) == (0, 1, 0)
    assert episode["Request Count"] == 4 + 4 * 5
    assert episode["Request Success Ratio"] == 1.0


@pytest.mark.parametrize(("slots", "middle"), [(2, 0), (3, 1), (4, 1), (5, 2), (9, 4), (10, 4), (11, 5)])
def test_middle_accuracy_is_the_round_clembench_names(slots, middle):
    # clembench's scorer: "n_probes = n_slots + 1", middle round int((n_slots + 1) / 2) - 1. The published
    # 11-round letter-number episode (10 slots) reports round 4; 6-round games (5 slots) round 2.
    rounds = [([0] * t + [1], [0] * t + [1]) if t != middle else ([1], [0]) for t in range(slots + 1)]
    interactions = make_episode(rounds, filled=[True] * slots)
    episode = scorekeeping.score_episode(interactions)["episode scores"]
    assert episode["Middle-Accuracy"] == 0.0
    assert [scorekeeping.score_episode(interactions)["turn scores"][str(t)]["Accuracy"]
            for t in range(slots + 1)].count(0.0) == 1
    del interactions["realised_slots"]  # then the number of slots is the length of "Request Count" minus one
    assert scorekeeping.score_episode(interactions)["episode scores"]["Middle-Accuracy"] == 0.0


def test_middle_accuracy_absent_when_its_round_was_not_played():
    # clembench logs Middle-Accuracy inside its loop over played rounds; an episode aborted before the middle
    # round has none, and one aborted after it has NaN (the published aborted episode).
    early = make_episode(ROUNDS[:2], filled=[True], aborted=True, played=2, slots=10)
    episode = scorekeeping.score_episode(early)["episode scores"]
    assert "Middle-Accuracy" not in episode
    assert next(iter(episode)) == "Accuracy" and math.isnan(episode["Accuracy"])
    late = make_episode(ROUNDS[:3], filled=[True, True], aborted=True, played=3, slots=4)
    assert math.isnan(scorekeeping.score_episode(late)["episode scores"]["Middle-Accuracy"])


def test_negative_kappa_truncates_to_integer_zero():
    rounds = [([0, 1], [1, 0]), ([1, 0], [0, 1])]
    episode = scorekeeping.score_episode(make_episode(rounds, filled=[True]))["episode scores"]
    assert episode["Kappa"] == pytest.approx(cohen_textbook([0, 1, 1, 0], [1, 0, 0, 1])) == -1
    assert episode["Truncated Kappa"] == 0 and type(episode["Truncated Kappa"]) is int
    assert episode["Main Score"] == pytest.approx(0)  # sf = 1, tk = 0: harmonic mean 0
    assert scorekeeping.main_score(0, 0) == 0


def test_perfect_episode_is_a_success():
    rounds = [([0, 0], [0, 0]), ([1, 0], [1, 0]), ([1, 1], [1, 1])]
    episode = scorekeeping.score_episode(make_episode(rounds, filled=[True, True]))["episode scores"]
    assert (episode["Kappa"], episode["Main Score"]) == (1.0, 100.0)
    assert (episode["Success"], episode["Lose"]) == (1, 0)


def test_hand_made_aborted_episode():
    interactions = make_episode(ROUNDS[:3], filled=[True, True], aborted=True, extra_round=([1, 1, 0, 0], [2, 2, 0, 1]))
    assert interactions["Played Probe Rounds"] == 4
    interactions["Played Probe Rounds"] = 3
    scores = scorekeeping.score_episode(interactions)
    assert list(scores["turn scores"]) == ["0", "1", "2"]
    episode = scores["episode scores"]
    assert all(math.isnan(episode[name]) for name in scorekeeping.GAME_SCORES)
    assert (episode["Aborted"], episode["Lose"], episode["Success"]) == (1, 0, 0)
    assert episode["Request Count"] == 4 + 5 + 5 + 9
    assert episode["Request Success Ratio"] == (4 + 5 + 5 + 2) / 23


def test_cohen_kappa_as_scikit_learn():
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = rng.integers(0, 3, 40)
        b = np.where(rng.random(40) < 0.6, a, rng.integers(0, 3, 40))
        assert scorekeeping.cohen_kappa(a, b) == pytest.approx(cohen_textbook(a, b), abs=1e-13)
    assert math.isnan(scorekeeping.cohen_kappa([1, 1, 1], [1, 1, 1]))  # one label: 0 / 0


# --- malformed input ---------------------------------------------------------------------------------------

def one_line_error(result, message):
    assert result.exit_code == 1, result.stdout
    assert result.stderr.startswith("castregin: error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def broken(change):
    interactions = make_episode(ROUNDS, filled=[True] * 4)
    change(interactions)
    return json.dumps(interactions)


@pytest.mark.parametrize("text, message", [
    ('{"probes": [', ":1: invalid JSON at column"),
    ("[]", "expected an object, got an array"),
    ('{"turns": []}', "missing the key \"probes\" (is this a clembench privateshared episode's interactions.json?)"),
    (broken(lambda d: d.update(probes=3)), "probes: expected an array, got 3"),
    (broken(lambda d: d["probes"][2][1].update(gt="yes")), 'probes[2][1].gt: expected an integer, got "yes"'),
    (broken(lambda d: d["probes"][0][0].pop("value")), "probes[0][0]: missing the key \"value\""),
    (broken(lambda d: d.update({"Played Probe Rounds": 9})), "Played Probe Rounds: 9 is not between 0 and the 5"),
    (broken(lambda d: d.update(Aborted="no")), 'Aborted: expected true or false, got "no"'),
    (broken(lambda d: d.update({"Filled Slots": [True]})), "Filled Slots: has 1 entries"),
    (broken(lambda d: d["Request Count"].pop()), "Request Count: has 4 entries, fewer than the 5"),
    (broken(lambda d: d["Violated Request Count"].__setitem__(1, 0.5)),
     "Violated Request Count[1]: expected an integer"),
    # Not scored, but clembench's rounds of messages are an array whatever its version.
    (broken(lambda d: d.update(turns="x")), ('turns: expected an array (clembench\'s rounds of messages; castregin '
                                             'does not score them), got "x"')),
])
def test_malformed_interactions_json(cli, tmp_path, text, message):
    path = tmp_path / "interactions.json"
    path.write_text(text)
    one_line_error(cli("scorekeeping", "score", path), message)
    one_line_error(cli("scorekeeping", "score", tmp_path), message)  # the episode directory


def test_missing_episode(cli, tmp_path):
    one_line_error(cli("scorekeeping", "score", tmp_path), "no interactions.json in that directory")


def test_parse_episode_raises_input_error():
    with pytest.raises(InputError, match="a game that was not aborted must have played a probing round"):
        scorekeeping.score_episode(make_episode([], filled=[True]))


# --- the leaderboard summary -------------------------------------------------------------------------------

def test_summary_of_the_shared_runs(cli, clembench):
    result = cli("scorekeeping", "summary", clembench, "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    rescored = json.loads(cli("scorekeeping", "summary", clembench, "--rescore", "--format", "json").stdout)
    assert rows == rescored
    expected = {}
    for path in episodes(clembench):
        parts = path.relative_to(clembench).parts  # ...MODEL/GAME/EXPERIMENT/EPISODE/interactions.json
        model, experiment = "/".join(parts[:-4]), parts[-3]
        scores = json.loads((path.parent / "scores.json").read_text())["episode scores"]
        expected.setdefault((model, experiment), []).append(scores)
        expected.setdefault((model, "all"), []).append(scores)
    by_model = {(r["model"], r["experiment"]): r for r in rows}
    assert set(by_model) == set(expected)
    for key, scores in expected.items():
        row = by_model[key]
        main = [s["Main Score"] for s in scores if not s["Aborted"]]
        assert row["game"] == "privateshared" and row["episodes"] == len(scores)
        assert row["played"] == pytest.approx(100 * len(main) / len(scores))
        if main:
            assert row["quality"] == pytest.approx(statistics.mean(main), abs=1e-12)
        else:
            assert row["quality"] is None  # NaN: every episode aborted
        if len(main) > 1:
            assert row["quality_std"] == pytest.approx(statistics.stdev(main), abs=1e-12)
        else:
            assert row["quality_std"] is None
    assert by_model[("v0.9/claude-v1.3-t0.0--claude-v1.3-t0.0", "all")]["quality"] == pytest.approx(
        57.14285714285715, abs=1e-12)
    table = cli("scorekeeping", "summary", clembench).stdout
    assert "% played" in table.splitlines()[0]


def write_scores(root, model, experiment, episode, main, aborted):
    directory = root / model / "privateshared" / experiment / episode
    directory.mkdir(parents=True)
    scores = {"turn scores": {}, "episode scores": {"Main Score": math.nan if aborted else main,
                                                    "Aborted": int(aborted)}}
    (directory / "scores.json").write_text(json.dumps(scores))


def test_summary_mean_and_sample_std(cli, tmp_path):
    data = {
        ("model-a", "0_easy"): [(80.0, False), (50.0, False), (None, True), (20.0, False)],
        ("model-a", "1_hard"): [(10.0, False), (None, True)],
        ("model-b", "0_easy"): [(None, True), (None, True)],
    }
    for (model, experiment), episodes_ in data.items():
        for i, (main, aborted) in enumerate(episodes_):
            write_scores(tmp_path, model, experiment, f"episode_{i}", main, aborted)
    rows = json.loads(cli("scorekeeping", "summary", tmp_path, "--format", "json").stdout)
    got = {(r["model"], r["experiment"]): r for r in rows}
    assert list(got) == [("model-a", "0_easy"), ("model-a", "1_hard"), ("model-a", "all"),
                         ("model-b", "0_easy"), ("model-b", "all")]
    easy = got[("model-a", "0_easy")]
    assert easy["played"] == 75.0
    assert easy["quality"] == pytest.approx(statistics.mean([80, 50, 20]), abs=1e-12)
    assert easy["quality_std"] == pytest.approx(statistics.stdev([80, 50, 20]), abs=1e-12)
    assert easy["clemscore"] == pytest.approx(0.75 * 50, abs=1e-12)
    overall = got[("model-a", "all")]
    assert overall["played"] == pytest.approx(100 * 4 / 6)
    assert overall["quality_std"] == pytest.approx(statistics.stdev([80, 50, 20, 10]), abs=1e-12)
    assert got[("model-a", "1_hard")]["quality_std"] is None
    assert got[("model-b", "0_easy")]["played"] == 0.0 and got[("model-b", "0_easy")]["quality"] is None
    csv_text = cli("scorekeeping", "summary", tmp_path, "--format", "csv", "--no-overall").stdout
    assert csv_text.splitlines()[0] == "model,game,experiment,episodes,played,quality,quality_std,clemscore"
    assert len(csv_text.splitlines()) == 4


def test_summary_bad_layout(cli, tmp_path):
    one_line_error(cli("scorekeeping", "summary", tmp_path), "no interactions.json or scores.json below")
    (tmp_path / "episode_0").mkdir()
    (tmp_path / "episode_0" / "scores.json").write_text("{}")
    one_line_error(cli("scorekeeping", "summary", tmp_path), "RUNS_DIR/MODEL/GAME/EXPERIMENT/EPISODE/")

