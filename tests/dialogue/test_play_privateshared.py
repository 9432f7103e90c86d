"""``castregin play privateshared`` and ``castregin.api.play_privateshared`` against a real HTTP server on 127.0.0.1.

The server (game_server.py) speaks chat completions and answers as the scripted players of
privateshared_players.py, written from the game's rules alone. The expected scores are the rules' (worked by
hand in test_privateshared_game.hand_scores), never castregin's output; disturbed runs (429 with
Retry-After, 500s, dropped connections, a budget, a call failing after every retry, SIGTERM to a
subprocess) are compared byte for byte with an undisturbed run. Timestamps are deterministic:
``SOURCE_DATE_EPOCH`` is set for every test (tests/conftest.py), and the game master's clock honours it.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from castregin.dialogue.privateshared_instances import game_files
from castregin.formats.privateshared import episode_files

from .game_server import serve_game
from .test_privateshared_game import CLEMBENCH_GAME, assert_scores, copy_game, hand_scores

KEY = "sk-test-play-0123456789abcdef-SECRET"
INSTANCES_1_0 = CLEMBENCH_GAME / "in" / "instances_v1.0.json"
#: The episodes of clembench's game (tests/data/privateshared/clembench, in/instances.json): slots each.
EPISODES = {"job-interview/instance_00000": 5, "job-interview/instance_00001": 5,
            "letter-number/instance_00000": 10, "travel-booking/instance_00000": 5}


@pytest.fixture(autouse=True)
def keyed(monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", KEY)


@pytest.fixture
def server():
    running = serve_game(CLEMBENCH_GAME)
    yield running
    running.shutdown()


@pytest.fixture(scope="module")
def own_game(tmp_path_factory) -> Path:
    """castregin's own game (--generate), one instance per experiment."""
    directory = tmp_path_factory.mktemp("own-game")
    for name, data in game_files(seed=11, games=1).items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)
    return directory


def play_args(game_dir, out, model, server, *more) -> list:
    return ["play", "privateshared", "--game-dir", game_dir, "--model", model, "--base-url", server.base_url,
            "--out-dir", out, "--api-key-env", "CASTREGIN_TEST_KEY", "--retry-wait", "0.01", "--timeout", "20",
            *more]


def outputs(out: Path) -> dict[str, bytes]:
    """Every file written but the cache and the run log (which says what this one run did)."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.name.startswith("cache.sqlite") and p.name != "run_log.json"}


def run_log(out: Path, folder: str) -> dict:
    return json.loads((out / folder / "privateshared" / "run_log.json").read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, bytes]:
    """An undisturbed run of the truthful player over clembench's game; its scores checked against the rules'."""
    from click.testing import CliRunner

    from castregin.cli import main

    running = serve_game(CLEMBENCH_GAME)
    out = tmp_path_factory.mktemp("reference") / "out"
    result = CliRunner().invoke(main, [str(a) for a in play_args(CLEMBENCH_GAME, out, "truthful", running)],
                                env={"CASTREGIN_TEST_KEY": KEY, "SOURCE_DATE_EPOCH": "1700000000"},
                                catch_exceptions=False)
    running.shutdown()
    assert result.exit_code == 0, result.stderr
    found = outputs(out)
    for episode, slots in EPISODES.items():
        scores = json.loads(found[f"truthful-t0.0/privateshared/{episode}/scores.json"])
        assert_scores(scores["episode scores"], hand_scores("truthful", slots, "2.0"))
    assert max(running.answered.values()) == 1
    return found


# --- scores that follow from the rules alone ------------------------------------------------------------------

PLAYERS = ["truthful", "always-yes", "unparseable-first", "never-parseable"]


@pytest.mark.parametrize("name", PLAYERS)
@pytest.mark.parametrize(("rules", "more"), [
    ("2.0", ["--experiment", "job-interview"]),
    ("1.0", ["--instances", INSTANCES_1_0, "--experiment", "job-interview"]),
])
def test_scripted_players_over_http_score_as_the_rules_say(cli, server, tmp_path, name, rules, more):
    out = tmp_path / "out"
    result = cli(*play_args(CLEMBENCH_GAME, out, name, server, "--rules", rules, *more, "--format", "json"))
    assert result.exit_code == 0, result.stderr
    played = sorted(out.rglob("scores.json"))
    assert len(played) == (2 if rules == "2.0" else 1)
    for path in played:
        mine = json.loads(path.read_text())
        assert_scores(mine["episode scores"], hand_scores(name, 5, rules))
        # castregin's scorekeeping of the interactions.json beside it gives the scores.json it wrote
        scored = json.loads(cli("scorekeeping", "score", path.parent / "interactions.json", "--format",
                                "json").stdout)
        assert scored["episode scores"] == mine["episode scores"]
        assert scored["turn scores"] == mine["turn scores"]
    rows = {row["experiment"]: row for row in json.loads(result.stdout)}
    expected_quality = {"truthful": 100.0, "always-yes": 0.0, "unparseable-first": 100.0}.get(name, math.nan)
    row = rows["all"]
    assert row["played"] == (0.0 if name == "never-parseable" else 100.0)
    quality = math.nan if row["quality"] is None else row["quality"]
    assert quality == expected_quality or (math.isnan(quality) and math.isnan(expected_quality))
    # every answer and every try of a probe is one request: the rules' request counts
    assert server.requests == len(played) * hand_scores(name, 5, rules)["Request Count"]


def test_the_always_yes_player_of_a_five_slot_game(cli, server, tmp_path):
    """The issue's example: Accuracy 0.5, Middle-Accuracy 0.4, Kappa 0, Main Score 0."""
    out = tmp_path / "out"
    assert cli(*play_args(CLEMBENCH_GAME, out, "always-yes", server, "--experiment", "job-interview")).exit_code == 0
    for path in out.rglob("scores.json"):
        scores = json.loads(path.read_text())["episode scores"]
        assert (scores["Accuracy"], scores["Middle-Accuracy"], scores["Kappa"], scores["Main Score"]) == (
            0.5, 0.4, 0, 0)


def test_never_parseable_is_aborted_after_five_requests(cli, server, tmp_path):
    out = tmp_path / "out"
    assert cli(*play_args(CLEMBENCH_GAME, out, "never-parseable", server)).exit_code == 0
    for episode in EPISODES:
        scores = json.loads((out / "never-parseable-t0.0/privateshared" / episode / "scores.json").read_text())
        assert scores["episode scores"]["Aborted"] == 1 and scores["episode scores"]["Request Count"] == 5
    assert server.requests == 5 * len(EPISODES)


def test_the_leaderboard_of_two_models(cli, server, tmp_path):
    """Two models' runs in one results directory: the table play prints is scorekeeping summary's, and its
    numbers are the rules' (truthful: every episode played, Main Score 100; always yes: played, Main Score 0)."""
    out = tmp_path / "out"
    assert cli(*play_args(CLEMBENCH_GAME, out, "truthful", server, "--format", "csv")).exit_code == 0
    second = cli(*play_args(CLEMBENCH_GAME, out, "always-yes", server, "--format", "csv"))
    assert second.exit_code == 0, second.stderr
    assert second.stdout == cli("scorekeeping", "summary", out, "--format", "csv").stdout
    header, *lines = second.stdout.splitlines()
    assert header == "model,game,experiment,episodes,played,quality,quality_std,clemscore"
    std = {"job-interview": "0.0", "letter-number": "", "travel-booking": "", "all": "0.0"}
    count = {"job-interview": 2, "letter-number": 1, "travel-booking": 1, "all": 4}
    expected = [f"{model}-t0.0,privateshared,{experiment},{count[experiment]},100.0,{score},{std[experiment]},{score}"
                for model, score in (("always-yes", "0.0"), ("truthful", "100.0"))
                for experiment in ("job-interview", "letter-number", "travel-booking", "all")]
    assert lines == expected
    markdown = cli("scorekeeping", "summary", out, "--format", "markdown").stdout
    assert "| truthful-t0.0 | privateshared | all | 4 | 100.00 | 100.00 | 0.00 | 100.00 |" in markdown


# --- everything judge has: faults, retries, concurrency, budget, resume, the key --------------------------------

def test_faults_are_retried_and_the_outputs_are_an_undisturbed_runs(cli, tmp_path, reference):
    faulty = serve_game(CLEMBENCH_GAME, faults=("rate_limit", "server_error", "drop"), delay=0.01)
    out = tmp_path / "out"
    try:
        result = cli(*play_args(CLEMBENCH_GAME, out, "truthful", faulty, "--concurrency", "3"))
    finally:
        faulty.shutdown()
    assert result.exit_code == 0, result.stderr
    assert outputs(out) == reference
    this_run = run_log(out, "truthful-t0.0")["this_run"]
    injected = sum(n > 1 for n in faulty.seen.values())
    assert injected > 30  # the digest picks a fault for about 3 calls in 10 of 225
    assert sum(this_run["failures"].values()) == injected and this_run["requests"] == faulty.requests
    assert set(this_run["failures"]) == {"rate_limited", "server_error", "connection"}
    assert max(faulty.answered.values()) == 1  # no call answered twice
    # --concurrency 3: episodes side by side, never more than 3 requests in flight
    assert 2 <= faulty.most_in_flight <= 3
    # the key went to the server, in the header only, and is in no file written
    assert set(faulty.authorizations) == {f"Bearer {KEY}"}
    for path in out.rglob("*"):
        if path.is_file():
            assert b"SECRET" not in path.read_bytes(), path
    assert KEY not in result.stderr + result.stdout


def test_retry_after_is_honoured(cli, tmp_path):
    slow_down = serve_game(CLEMBENCH_GAME, retry_after="0.4")
    times: dict[str, list[float]] = {}

    def fault_for(key: str, attempt: int) -> str | None:
        times.setdefault(key, []).append(time.monotonic())
        return "rate_limit" if attempt == 0 and len(times) <= 3 else None

    slow_down.fault_for = fault_for
    try:
        result = cli(*play_args(CLEMBENCH_GAME, tmp_path / "out", "truthful", slow_down, "--rules", "1.0",
                                "--instances", INSTANCES_1_0, "--experiment", "job-interview"))
    finally:
        slow_down.shutdown()
    assert result.exit_code == 0, result.stderr
    limited = [t for t in times.values() if len(t) > 1]
    assert len(limited) == 3 and all(len(t) == 2 and t[1] - t[0] >= 0.4 for t in limited)


def test_a_budget_plays_what_it_can_and_the_next_run_goes_on(cli, server, tmp_path, reference):
    out = tmp_path / "out"
    # 35 calls each for the first episode (travel-booking, then job-interview's two); letter-number has 120
    first = cli(*play_args(CLEMBENCH_GAME, out, "truthful", server, "--max-requests", "80", "--concurrency", "1"))
    assert first.exit_code == 0, first.stderr
    log = run_log(out, "truthful-t0.0")
    assert (log["episodes_played"], log["complete"], log["this_run"]["budget_spent"]) == (2, False, True)
    assert [(e["episode"].split("/", 2)[2], e["status"]) for e in log["not_played"]] == [
        ("job-interview/instance_00001", "budget"), ("letter-number/instance_00000", "budget")]
    assert "2 episode(s) not played (2: the budget of --max-requests is spent)" in first.stderr
    assert "truthful-t0.0/privateshared/job-interview/instance_00001" in first.stderr
    assert server.requests == 80
    assert len(list(out.rglob("scores.json"))) == 2  # the unfinished episodes are not written
    again = cli(*play_args(CLEMBENCH_GAME, out, "truthful", server))
    assert again.exit_code == 0, again.stderr
    assert outputs(out) == reference
    log = run_log(out, "truthful-t0.0")
    # the 10 answers of the unfinished episode came from the cache; nothing was asked twice
    assert (log["episodes_already_played"], log["episodes_played"], log["this_run"]["from_cache"]) == (2, 2, 10)
    assert server.requests == sum(35 if slots == 5 else 120 for slots in EPISODES.values())
    assert max(server.answered.values()) == 1


def test_no_episode_played_is_an_error_and_writes_nothing(cli, server, tmp_path):
    out = tmp_path / "out"
    result = cli(*play_args(CLEMBENCH_GAME, out, "truthful", server, "--max-requests", "3"))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(
        "castregin: error: no episode could be played (4 episode(s): the budget of --max-requests is spent)")
    assert result.stderr.endswith("nothing written: the answers received are kept in the cache for the next run\n")
    assert sorted(p.name for p in out.iterdir()) == ["cache.sqlite"]  # the 3 answers, for the next run


def test_an_episode_whose_call_fails_is_not_played(cli, tmp_path, reference):
    """A call that fails after every retry ends its episode only; the run says which, and the next run plays it."""
    # words of the letter-number instance's initial prompt: every call of that episode gets a 500
    broken = serve_game(CLEMBENCH_GAME, broken=["WHAT: Numbered letters"])
    out = tmp_path / "out"
    try:
        result = cli(*play_args(CLEMBENCH_GAME, out, "truthful", broken, "--max-retries", "2", "--concurrency", "1"))
        assert result.exit_code == 0, result.stderr
        assert ("1 episode(s) not played (1: a call failed after every retry); the first error: HTTP 500"
                in result.stderr)
        assert "truthful-t0.0/privateshared/letter-number/instance_00000; run the same command again" in result.stderr
        log = run_log(out, "truthful-t0.0")
        assert [e["status"] for e in log["not_played"]] == ["failed"] and log["episodes_played"] == 3
        broken.broken = ()
        again = cli(*play_args(CLEMBENCH_GAME, out, "truthful", broken))
    finally:
        broken.shutdown()
    assert again.exit_code == 0, again.stderr
    assert outputs(out) == reference


def test_an_endpoint_that_answers_nothing_is_not_asked_every_episode(cli, tmp_path):
    dead = serve_game(CLEMBENCH_GAME, broken=[""])  # every call: 500
    out = tmp_path / "out"
    try:
        result = cli(*play_args(CLEMBENCH_GAME, out, "truthful", dead, "--max-retries", "2", "--concurrency", "1"))
    finally:
        dead.shutdown()
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(
        "castregin: error: no episode could be played (1 episode(s): a call failed after every retry; 3 episode(s): "
        "not sent: the endpoint answered no call); the first error: HTTP 500")
    # No answer was received: the line does not say that answers are kept in a cache (there is none).
    assert result.stderr.endswith("; nothing written\n"), result.stderr
    assert dead.requests == 3  # one call, tried 3 times
    assert not out.exists()


def test_a_refused_request_is_one_line_and_leaves_nothing(cli, tmp_path):
    refusing = serve_game(CLEMBENCH_GAME)
    refusing.fault_for = lambda key, attempt: "echo_key"  # a 401 whose message holds the request's key
    try:
        result = cli(*play_args(CLEMBENCH_GAME, tmp_path / "out", "truthful", refusing))
    finally:
        refusing.shutdown()
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "HTTP 401" in result.stderr and "***" in result.stderr
    assert KEY not in result.stderr
    assert refusing.requests == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("concurrency", ["3"])
def test_sigterm_then_a_rerun_gives_the_undisturbed_outputs(cli, tmp_path, reference, concurrency):
    slow = serve_game(CLEMBENCH_GAME, delay=0.01)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "castregin",
               *map(str, play_args(CLEMBENCH_GAME, out, "truthful", slow, "--concurrency", concurrency))]
    try:
        process = subprocess.Popen(command, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        deadline = time.monotonic() + 60
        while not list(out.rglob("scores.json")) and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 128 + signal.SIGTERM, stderr
        assert "castregin: stopped by SIGTERM; the " in stderr and "run the same command again to go on" in stderr
        # the episodes written are whole, nothing else is there, no temporary file is left
        written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
        assert not [name for name in written if ".castregin-" in name or name.endswith(".tmp")]
        episodes = {name.rsplit("/", 1)[0] for name in written if name.endswith("scores.json")}
        assert 1 <= len(episodes) < len(EPISODES)
        for episode in episodes:
            assert {n for n in written if n.startswith(episode + "/")} == {
                f"{episode}/{n}" for n in ("instance.json", "interactions.json", "player_1.requests.json",
                                           "player_2.requests.json", "scores.json")}
            for name in written:
                if name.startswith(episode + "/"):
                    assert (out / name).read_bytes() == reference[name]
        while slow.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        rerun = cli(*command[3:])
    finally:
        slow.shutdown()
    assert rerun.exit_code == 0, rerun.stderr
    assert outputs(out) == reference
    # the requests in flight at the signal were let finish and stored: no call is asked again
    assert max(slow.answered.values()) == 1
    assert sum(slow.answered.values()) == sum(35 if slots == 5 else 120 for slots in EPISODES.values())


# --- the Python API ---------------------------------------------------------------------------------------------

def test_the_api_plays_what_the_command_writes(server, tmp_path, reference):
    from castregin.api import play_privateshared

    run = play_privateshared(CLEMBENCH_GAME, model="truthful", base_url=server.base_url, cache=tmp_path / "c.sqlite",
                             api_key_env="CASTREGIN_TEST_KEY", experiments=["job-interview", "letter-number"],
                             retry_wait=0.01)
    assert [o.plan.directory for o in run.played] == [
        "truthful-t0.0/privateshared/job-interview/instance_00000",
        "truthful-t0.0/privateshared/job-interview/instance_00001",
        "truthful-t0.0/privateshared/letter-number/instance_00000"]
    for outcome in run.played:
        for name, text in episode_files(outcome.records, "2.0").items():
            assert text.encode() == reference[f"{outcome.plan.directory}/{name}"], name
    assert run.log["complete"] and run.log["this_run"]["requests"] == server.requests == 2 * 35 + 120
    again = play_privateshared(CLEMBENCH_GAME, model="truthful", base_url=server.base_url,
                               cache=tmp_path / "c.sqlite", api_key_env="CASTREGIN_TEST_KEY",
                               experiments="letter-number")
    assert again.log["this_run"]["from_cache"] == 120 and server.requests == 2 * 35 + 120


def test_the_api_refuses_bad_arguments(tmp_path):
    from castregin.api import play_privateshared
    from castregin.errors import InputError

    with pytest.raises(InputError, match=r"rules: expected one of 1\.0, 2\.0"):
        play_privateshared(CLEMBENCH_GAME, model="m", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c",
                           rules="3.0")
    with pytest.raises(InputError, match="temperature: expected a finite number 0 to 2"):
        play_privateshared(CLEMBENCH_GAME, model="m", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c",
                           temperature=3)
    with pytest.raises(InputError, match="experiments: nope: no such experiment"):
        play_privateshared(CLEMBENCH_GAME, model="m", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c",
                           experiments=["nope"])
    assert not (tmp_path / "c").exists()


# --- layouts, bad input, --generate -----------------------------------------------------------------------------

def test_play_1_0_layout(cli, server, tmp_path):
    result = cli(*play_args(CLEMBENCH_GAME, tmp_path / "out", "truthful", server, "--rules", "1.0", "--instances",
                            INSTANCES_1_0, "--experiment", "letter-number", "--format", "markdown"))
    assert result.exit_code == 0, result.output
    files = set(outputs(tmp_path / "out"))
    base = "truthful-t0.0--truthful-t0.0/privateshared/4_letter-number"
    assert files == {f"{base}/experiment_letter-number.json",
                     *(f"{base}/episode_0/{n}" for n in ("instance.json", "interactions.json", "requests.json",
                                                         "scores.json"))}
    assert (tmp_path / "out" / "truthful-t0.0--truthful-t0.0" / "privateshared" / "run_log.json").is_file()
    # the experiment as the leaderboard names clembench 1.0's directories
    assert result.stdout.splitlines()[2].startswith("| truthful-t0.0--truthful-t0.0 | privateshared | "
                                                    "4_letter-number | 1 | 100.00 | 100.00 |  | 100.00 |")


def test_a_rerun_asks_nothing_and_says_so(cli, server, tmp_path):
    out = tmp_path / "out"
    args = play_args(CLEMBENCH_GAME, out, "truthful", server, "--experiment", "travel-booking")
    assert cli(*args).exit_code == 0
    before = outputs(out)
    requests = server.requests
    again = cli(*args)
    assert again.exit_code == 0 and server.requests == requests and outputs(out) == before
    # nothing to play: no client, no run log rewritten; the one line says why nothing was played
    assert again.stderr == (f"castregin: every episode to play is in {out} already: none was played in this run (the "
                            "table is of the episodes there)\n")


def test_bad_game_folder_writes_nothing(cli, server, tmp_path):
    directory = copy_game(CLEMBENCH_GAME, tmp_path / "game")
    (directory / "resources" / "texts" / "reprompts.json").unlink()
    result = cli(*play_args(directory, tmp_path / "out", "m", server))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "resources/texts/reprompts.json" in result.stderr
    assert not (tmp_path / "out").exists() and server.requests == 0


def test_usage_errors(cli, own_game, tmp_path):
    result = cli("play", "privateshared", "--game-dir", own_game, "--out-dir", tmp_path / "out")
    assert result.exit_code == 2 and "--model" in result.stderr
    result = cli("play", "privateshared", "--generate", tmp_path / "g", "--out-dir", tmp_path / "o")
    assert result.exit_code == 2
    result = cli("play", "privateshared", "--game-dir", own_game, "--out-dir", tmp_path / "o", "--model", "m",
                 "--base-url", "http://127.0.0.1:9/v1", "--concurrency", "0")
    assert result.exit_code == 2 and "--concurrency" in result.stderr
    result = cli("play", "privateshared", "--game-dir", own_game, "--out-dir", tmp_path / "o", "--model", "m",
                 "--base-url", "ftp://127.0.0.1/v1")
    assert result.exit_code == 1 and "--base-url" in result.stderr
    assert not (tmp_path / "o").exists()


def test_generate_then_play_the_generated_game(cli, tmp_path):
    result = cli("play", "privateshared", "--generate", tmp_path / "g", "--seed", "4", "--games", "1")
    assert result.exit_code == 0, result.output
    again = cli("play", "privateshared", "--generate", tmp_path / "g", "--seed", "4", "--games", "1")
    assert again.exit_code == 0
    assert {p.relative_to(tmp_path / "g").as_posix(): p.read_bytes() for p in (tmp_path / "g").rglob("*")
            if p.is_file()} == game_files(4, 1) | {
        ".castregin-output": (tmp_path / "g" / ".castregin-output").read_bytes()}
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    refused = cli("play", "privateshared", "--generate", tmp_path / "mine")
    assert refused.exit_code == 1 and (tmp_path / "mine" / "notes.txt").read_text() == "keep"
    own = serve_game(tmp_path / "g")
    try:
        played = cli(*play_args(tmp_path / "g", tmp_path / "out", "truthful", own, "--format", "csv"))
    finally:
        own.shutdown()
    assert played.exit_code == 0, played.output
    # three episodes of Main Score 100: quality 100, its standard deviation 0
    assert "truthful-t0.0,privateshared,all,3,100.0,100.0,0.0,100.0" in played.stdout
    for path in (tmp_path / "out").rglob("scores.json"):
        assert_scores(json.loads(path.read_text())["episode scores"], hand_scores("truthful", 5, "2.0"))


def test_the_readme_command_prints_the_readme_table(cli, server, tmp_path):
    from test_docs_examples import README, shell_commands

    text = README.read_text(encoding="utf-8")
    heading = "## Playing clembench's game"
    [command] = shell_commands(text, heading)
    printed = text.split(heading, 1)[1].split("```sh\n", 1)[1].split("\n```\n```\n", 1)[1].split("\n```", 1)[0]
    assert command[command.index("--base-url") + 1] == "http://127.0.0.1:8000/v1"
    command[command.index("--base-url") + 1] = server.base_url  # the README's port may be taken here
    command[command.index("--out-dir") + 1] = str(tmp_path / "results")
    assert command[command.index("--game-dir") + 1] == "tests/data/privateshared/clembench"
    command[command.index("--game-dir") + 1] = str(CLEMBENCH_GAME)
    result = cli(*command[1:])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == printed + "\n"


def test_tokens_and_cost_are_the_servers_count(cli, server, tmp_path):
    """The run log's tokens are what the server reported in its answers' usage (its own count: words of the
    prompt and the answer); the cost is them at --price-in and --price-out per million tokens."""
    out = tmp_path / "out"
    result = cli(*play_args(CLEMBENCH_GAME, out, "truthful", server, "--experiment", "travel-booking",
                            "--price-in", "2000000", "--price-out", "5000000"))
    assert result.exit_code == 0, result.stderr
    log = run_log(out, "truthful-t0.0")
    assert log["tokens"] == {"prompt": server.prompt_tokens, "completion": server.completion_tokens}
    assert log["cost"]["usd"] == 2 * server.prompt_tokens + 5 * server.completion_tokens
    assert log["calls"] == server.requests == 35
    assert f"cost ${log['cost']['usd']:.4f}" in result.stderr


def test_progress_is_told_of_every_episode(server, tmp_path):
    from castregin.dialogue.privateshared_game import plan_episodes
    from castregin.dialogue.privateshared_play import play_game
    from castregin.formats.privateshared import read_game
    from castregin.llm import EndpointSettings

    game = read_game(CLEMBENCH_GAME, rules="2.0")
    plans = plan_episodes(game.experiments, "truthful-t0.0", "2.0")
    told: list = []

    def progress(total: int):
        told.append(total)
        return lambda outcome, stats, cost: told.append((outcome.plan.directory, outcome.status, stats.requests))

    settings = EndpointSettings(model="truthful", base_url=server.base_url, api_key_env="CASTREGIN_TEST_KEY",
                                concurrency=1, max_requests=80)
    run = play_game(plans, game.texts, settings, str(tmp_path / "cache.sqlite"), rules="2.0", folder="truthful-t0.0",
                    progress=progress)
    assert told == [4, *((o.plan.directory, o.status, r) for o, r in zip(run.outcomes, (35, 70, 80, 80), strict=True))]
    assert [o.status for o in run.outcomes] == ["played", "played", "budget", "budget"]


def test_a_failure_after_episodes_were_replayed_says_what_the_run_wrote(cli, server, tmp_path):
    # A budget run plays two episodes (35 calls each) and ten calls of the third; its two episodes are then
    # removed, and the next run replays them from the cache before its first request is refused (a 401).
    out = tmp_path / "out"
    first = cli(*play_args(CLEMBENCH_GAME, out, "truthful", server, "--max-requests", "80", "--concurrency", "1"))
    assert first.exit_code == 0, first.stderr
    played = sorted(p.parent for p in out.rglob("scores.json"))
    assert len(played) == 2
    for episode in played:
        shutil.rmtree(episode)
    refusing = serve_game(CLEMBENCH_GAME)
    refusing.fault_for = lambda key, attempt: "echo_key"
    try:
        result = cli(*play_args(CLEMBENCH_GAME, out, "truthful", refusing, "--concurrency", "1"))
    finally:
        refusing.shutdown()
    assert result.exit_code == 1 and refusing.requests == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[1].startswith("castregin: error: ") and "HTTP 401" in lines[1]
    assert lines[0] == (f"castregin: the 2 episode(s) played in this run are written to {out}; run the same command "
                        "again to go on")
    assert sorted(p.parent for p in out.rglob("scores.json")) == played
