"""castregin's privateshared game master against three independent sources:

* the published clembench 0.9/1.0 episodes of ../shared/clembench: replaying their model answers under
  the 1.0 rules reproduces their interactions.json and scores.json byte for byte (timestamps fed back);
* clembench's own current game master (clembench a717f23 on clemcore 3.4.2) playing the scripted
  players of ``privateshared_players.py``, its records kept in ``tests/data/privateshared/oracle-2.0.tar.xz``
  (made by ``make_privateshared_oracle.py``): castregin's records of the same players are the same;
* the game's rules, worked by hand for players whose scores follow from them alone (below).
"""

from __future__ import annotations

import json
import math
import tarfile
from pathlib import Path

import pytest

from castregin.dialogue import privateshared_game as game
from castregin.dialogue.privateshared_instances import game_files, generate_instances, value_overlaps
from castregin.dialogue.scorekeeping import score_episode
from castregin.errors import InputError
from castregin.formats.privateshared import (
    check_instances,
    episode_files,
    read_game_texts,
    read_instances,
    results_folder,
)

from .privateshared_players import make_players

DATA = Path(__file__).resolve().parent.parent / "data" / "privateshared"
CLEMBENCH_GAME = DATA / "clembench"
ORACLE = DATA / "oracle-2.0.tar.xz"


def load_game(game_dir: Path, instances: str = "in/instances.json", rules: str = "2.0"):
    experiments = read_instances(game_dir / instances)
    texts = read_game_texts(game_dir, experiments, words=rules == "2.0")
    check_instances(experiments, texts, instances)
    return experiments, texts


def episodes_of(experiments):
    return [(experiment, instance) for experiment in experiments for instance in experiment.instances]


@pytest.fixture(scope="module")
def own_game(tmp_path_factory) -> Path:
    """castregin's own game, two instances per experiment."""
    directory = tmp_path_factory.mktemp("own-game")
    for name, data in game_files(seed=11, games=2).items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)
    return directory


# --- the published episodes (clembench 0.9 and 1.0) -------------------------------------------------------

PUBLISHED = [  # run directory, experiment, model as the records name it
    ("v0.9/claude-v1.3-t0.0--claude-v1.3-t0.0", "job-interview", "claude-v1.3"),
    ("v1.0/gpt-3.5-turbo-0613-t0.0--gpt-3.5-turbo-0613-t0.0", "job-interview", "gpt-3.5-turbo-0613"),
    ("v1.0/vicuna-33b-v1.3-t0.0--vicuna-33b-v1.3-t0.0", "job-interview", "vicuna-33b-v1.3"),
    ("v1.0/vicuna-33b-v1.3-t0.0--vicuna-33b-v1.3-t0.0", "letter-number", "vicuna-33b-v1.3"),
]


@pytest.mark.parametrize(("run", "experiment_name", "model"), PUBLISHED)
def test_replaying_a_published_episode_reproduces_its_records(clembench, run, experiment_name, model):
    experiments, texts = load_game(CLEMBENCH_GAME, "in/instances_v1.0.json", rules="1.0")
    experiment = next(e for e in experiments if e.name == experiment_name)
    directory = clembench / run / "privateshared" / experiment.directory / "episode_0"
    published = (directory / "interactions.json").read_text(encoding="utf-8")
    events = [event for turn in json.loads(published)["turns"] for event in turn]
    answers = iter([e["action"]["content"] for e in events if e["from"] == "Player 1"])
    timestamps = iter([e["timestamp"] for e in events])
    prompts = []

    def replay(messages):
        prompts.append(messages)
        return next(answers)

    records = game.play_episode(experiment, experiment.instances[0], texts, replay, model=model, rules="1.0",
                                clock=lambda: next(timestamps))
    files = episode_files(records, "1.0")
    assert files["interactions.json"] == published
    assert files["scores.json"] == (directory / "scores.json").read_text(encoding="utf-8")
    assert next(answers, None) is None
    # every answer was asked for with the published question last
    questions = [e["action"]["content"] for e in events if e["to"] == "Player 1" and e["from"] == "GM"][1:]
    assert [p[-1]["content"] for p in prompts] == questions
    assert records.requests["Player 1"] == [{"timestamp": r["timestamp"], "manipulated_prompt_obj": p,
                                             "raw_response_obj": None}
                                            for r, p in zip(records.requests["Player 1"], prompts, strict=True)]


# --- clembench's own game master (2.0) ----------------------------------------------------------------------

def oracle_files() -> dict[str, bytes]:
    with tarfile.open(ORACLE) as archive:
        return {member.name.removeprefix("./"): archive.extractfile(member).read()
                for member in archive.getmembers() if member.isfile()}


def without_timestamps(data):
    if isinstance(data, dict):
        return {k: without_timestamps(v) for k, v in data.items() if k != "timestamp"}
    if isinstance(data, list):
        return [without_timestamps(v) for v in data]
    return data


ORACLE_PLAYERS = ["truthful", "always-yes", "unparseable-first", "never-parseable", "eager", "untagged"]


@pytest.fixture(scope="module")
def oracle():
    return oracle_files()


@pytest.mark.parametrize("name", ORACLE_PLAYERS)
def test_records_equal_clembench_game_master(oracle, name):
    experiments, texts = load_game(CLEMBENCH_GAME)
    player = make_players(CLEMBENCH_GAME)[name]
    model = f"scripted-{name}"
    folder = results_folder(model, 0.0, "2.0")
    assert folder == "scripted-" + name + "-t0.0"
    played = 0
    for experiment, instance in episodes_of(experiments):
        records = game.play_episode(experiment, instance, texts, player, model=model, rules="2.0",
                                    results_folder=folder)
        where = f"{folder}/privateshared/{experiment.name}/instance_{instance.game_id:05d}"
        for file_name, text in episode_files(records, "2.0").items():
            theirs = oracle[f"{where}/{file_name}"].decode("utf-8")
            if file_name in ("instance.json", "scores.json"):
                assert text == theirs, f"{where}/{file_name}"
                continue
            mine, theirs = json.loads(text), json.loads(theirs)
            if file_name == "interactions.json":
                # what names the software and the model's registry entry differ by nature
                assert mine["meta"].pop("clem_version").startswith("castregin ")
                theirs["meta"].pop("clem_version")
                mine.pop("player_models"), theirs.pop("player_models")
            else:
                for call in theirs["calls"]:
                    prompt = call["call"]["manipulated_prompt_obj"]
                    for message in prompt if isinstance(prompt, list) else []:
                        message.pop("label", None)  # clembench's mark of the "Ok." exchange, not sent as text
                        call["call"]["raw_response_obj"] = None  # the scripted backend's own object
                if file_name == "player_2.requests.json":
                    for call in mine["calls"]:  # castregin's questioner is no model: nothing is sent
                        call["call"]["raw_response_obj"] = None
                    for call in theirs["calls"]:
                        call["call"]["raw_response_obj"] = None
            assert without_timestamps(mine) == without_timestamps(theirs), f"{where}/{file_name}"
        played += 1
    assert played == 4


@pytest.mark.parametrize("name", ORACLE_PLAYERS)
def test_scorekeeping_scores_clembench_2_episodes_as_clembench(oracle, name):
    """castregin's scorekeeping on clembench 2.0's own interactions.json (aborted rounds with unasked probes
    included) gives clembench's scores.json."""
    for path, data in oracle.items():
        if path.startswith(f"scripted-{name}-t0.0/") and path.endswith("interactions.json"):
            scores = json.loads(oracle[path.replace("interactions.json", "scores.json")])
            assert json.dumps(score_episode(json.loads(data))) == json.dumps(
                {k: scores[k] for k in ("turn scores", "episode scores")}), path


# --- scores that follow from the rules alone ----------------------------------------------------------------

def hand_scores(player: str, slots: int, rules: str) -> dict:
    """The episode scores of a scripted player in a game of ``slots`` slots (rounds 0..slots), worked out from
    clembench's rules, not from any code:

    * truthful: every probe right, every slot filled: accuracy and kappa 1, Main Score 100, a success;
      requests: slots probes in round 0, then per round one answer and slots probes: slots * (slots + 2).
    * always-yes: in round r, r slots have been requested (gt 1), the others not: round accuracy r / slots,
      pooled sum(r) / (slots * (slots + 1)) = 1/2; Middle-Accuracy is round int((slots + 1) / 2) - 1's; kappa 0
      (one predicted label: observed agreement = chance agreement), truncated to the integer 0, Main Score
      0.0 (100 * 2 * 1 * 0 / (1 + 0)).
    * unparseable-first: as truthful, each probe asked twice: slots * (2 * slots + 3) requests, of which
      slots * (slots + 1) violated.
    * never-parseable: 2.0 aborts after the first probe's 5 tries; 1.0 asks all slots probes 5 times first.
    """
    middle = int((slots + 1) / 2) - 1
    requests = slots * (slots + 2)
    if player == "never-parseable":
        asked = 5 if rules == "2.0" else 5 * slots
        return {"Accuracy": math.nan, "Kappa": math.nan, "Truncated Kappa": math.nan,
                "Slot-Filling-Accuracy": math.nan, "Main Score": math.nan, "Aborted": 1, "Lose": 0, "Success": 0,
                "Request Count": asked, "Parsed Request Count": 0, "Violated Request Count": asked,
                "Request Success Ratio": 0.0}
    if player == "always-yes":
        game_scores = {"Middle-Accuracy": middle / slots, "Accuracy": 0.5, "Kappa": 0.0, "Truncated Kappa": 0,
                       "Slot-Filling-Accuracy": 1.0, "Main Score": 0.0, "Aborted": 0, "Lose": 1, "Success": 0}
    else:
        game_scores = {"Middle-Accuracy": 1.0, "Accuracy": 1.0, "Kappa": 1.0, "Truncated Kappa": 1.0,
                       "Slot-Filling-Accuracy": 1.0, "Main Score": 100.0, "Aborted": 0, "Lose": 0, "Success": 1}
    violated = slots * (slots + 1) if player == "unparseable-first" else 0
    return {**game_scores, "Request Count": requests + violated, "Parsed Request Count": requests,
            "Violated Request Count": violated, "Request Success Ratio": requests / (requests + violated)}


def assert_scores(got: dict, expected: dict) -> None:
    assert list(got) == list(expected)
    for key, value in expected.items():
        assert type(got[key]) is type(value), key
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(got[key]), key
        else:
            assert got[key] == pytest.approx(value, abs=1e-12), key


HAND_PLAYERS = ["truthful", "always-yes", "unparseable-first", "never-parseable"]


@pytest.mark.parametrize("name", HAND_PLAYERS)
@pytest.mark.parametrize(("game_dir", "instances", "rules"), [
    (CLEMBENCH_GAME, "in/instances.json", "2.0"),
    (CLEMBENCH_GAME, "in/instances_v1.0.json", "1.0"),
    (None, "in/instances.json", "2.0"),  # castregin's own game
])
def test_scripted_players_score_as_the_rules_say(own_game, name, game_dir, instances, rules):
    game_dir = game_dir or own_game
    experiments, texts = load_game(game_dir, instances, rules)
    player = make_players(game_dir)[name]
    for experiment, instance in episodes_of(experiments):
        records = game.play_episode(experiment, instance, texts, player, model=name, rules=rules)
        assert_scores(records.scores["episode scores"], hand_scores(name, len(instance.slots), rules))


def test_the_always_yes_player_of_a_five_slot_game():
    """The issue's example: Accuracy 0.5, Middle-Accuracy 0.4, Kappa 0, Main Score 0."""
    experiments, texts = load_game(CLEMBENCH_GAME)
    experiment = next(e for e in experiments if e.name == "job-interview")
    records = game.play_episode(experiment, experiment.instances[0], texts, make_players(CLEMBENCH_GAME)["always-yes"],
                                model="m")
    scores = records.scores["episode scores"]
    assert (scores["Accuracy"], scores["Middle-Accuracy"], scores["Kappa"], scores["Main Score"]) == (0.5, 0.4, 0, 0)


def test_an_answer_without_its_tag_aborts_under_1_0_and_is_skipped_under_2_0():
    """1.0: the second answer is invalid, the episode ends there ("Abort: invalid format in slot filling.").
    2.0: it counts one violated request, round 2 has no probing and the game goes on."""
    slots = 5
    for rules, instances in (("1.0", "in/instances_v1.0.json"), ("2.0", "in/instances.json")):
        experiments, texts = load_game(CLEMBENCH_GAME, instances, rules)
        experiment = next(e for e in experiments if e.name == "job-interview")
        records = game.play_episode(experiment, experiment.instances[0], texts,
                                    make_players(CLEMBENCH_GAME)["untagged"], model="m", rules=rules)
        log = records.interactions
        if rules == "1.0":
            assert log["Request Count"] == [slots, slots + 1, 1, 0, 0, 0]
            assert log["Violated Request Count"] == [0, 0, 1, 0, 0, 0]
            assert (log["Played Probe Rounds"], log["Filled Slots"], log["Aborted"]) == (2, [True], True)
            assert log["turns"][2][-2]["action"] == {"type": "invalid format",
                                                     "content": "Abort: invalid format in slot filling."}
        else:
            # the invalid answer is no request clembench counts, only a violation; its round has no probes
            assert log["Request Count"] == [slots] + [slots + 1] + [0] + [slots + 1] * 3
            assert log["Violated Request Count"] == [0, 0, 1, 0, 0, 0]
            assert (log["Played Probe Rounds"], len(log["Filled Slots"]), log["Aborted"]) == (5, 4, False)


def test_probes_are_never_kept_and_retries_use_the_reprompt_suffixes():
    experiments, texts = load_game(CLEMBENCH_GAME)
    experiment = next(e for e in experiments if e.name == "job-interview")
    seen = []
    players = make_players(CLEMBENCH_GAME)

    def spy(messages):
        seen.append(messages)
        return players["unparseable-first"](messages)

    game.play_episode(experiment, experiment.instances[0], texts, spy, model="m")
    initial = experiment.instances[0].initial_prompt
    for messages in seen:
        assert messages[:2] == [{"role": "user", "content": initial}, {"role": "assistant", "content": "Ok."}]
        # the history holds requests and answers only: no probe ("ME:") but the last message
        assert not any(m["content"].startswith("ME:") for m in messages[:-1])
    probes = [m[-1]["content"] for m in seen if m[-1]["content"].startswith("ME:")]
    assert probes[0].startswith("ME:  ")  # the first suffix is empty
    assert probes[1].startswith("ME: Please answer this question carefully. ")
    assert probes[0].endswith(" Answer this question with yes or no and then stop.")


# --- castregin's own game -------------------------------------------------------------------------------------

def test_generated_games_are_seeded_and_checked():
    assert generate_instances(5, 3) == generate_instances(5, 3)
    assert generate_instances(5, 3) != generate_instances(6, 3)
    first = generate_instances(5, 3)["experiments"][0]["game_instances"][0]
    assert sorted(first["request_order"]) == sorted(first["slots"])
    assert sorted(first["probes"]) == [str(r) for r in range(len(first["slots"]) + 1)]
    assert game_files(5, 3) == game_files(5, 3)


def test_value_overlaps_are_what_checkvalues_reports():
    # clembench's checkvalues.py: a value listed twice, a value inside another; castregin also: inside a text
    problems = value_overlaps({"colour": ["Red", "Blue"], "drink": ["Red wine", "Water"], "car": ["Blue"]},
                              ["What is your water bottle?"])
    assert problems == ["'Red' is inside 'Red wine'", "'Water' occurs in 'What is your water bottle?'",
                        "'Blue' appears twice"]
    assert value_overlaps({"a": ["One"], "b": ["Two"]}) == []


def test_own_texts_are_not_clembenchs(own_game):
    ours = {p.relative_to(own_game).as_posix(): p.read_text(encoding="utf-8")
            for p in own_game.rglob("*") if p.is_file() and p.suffix in (".json", ".template")}
    theirs = [p.read_text(encoding="utf-8") for p in CLEMBENCH_GAME.rglob("*.json")]
    theirs_lines = {line.strip() for text in theirs for line in text.splitlines() if len(line.strip()) > 25}
    for name, text in ours.items():
        copied = [line for line in text.splitlines() if line.strip() in theirs_lines]
        assert not copied, f"{name}: {copied[:2]}"


# --- bad input --------------------------------------------------------------------------------------------------

def copy_game(source: Path, target: Path) -> Path:
    import shutil

    shutil.copytree(source, target)
    return target


def test_a_missing_resource_is_one_line(tmp_path):
    directory = copy_game(CLEMBENCH_GAME, tmp_path / "game")
    (directory / "resources" / "texts" / "job-interview" / "probing_questions.json").unlink()
    experiments = read_instances(directory / "in" / "instances.json")
    with pytest.raises(InputError, match=r"no resources/texts/job-interview/probing_questions.json \(the probing "
                                         r"questions of experiment job-interview\)"):
        read_game_texts(directory, experiments, words=True)
    (directory / "resources" / "en_words.json").unlink()
    with pytest.raises(InputError, match="the words of language 'en'"):
        read_game_texts(directory, [e for e in experiments if e.name != "job-interview"], words=True)


def test_an_instance_naming_a_slot_without_texts_is_one_line(tmp_path):
    directory = copy_game(CLEMBENCH_GAME, tmp_path / "game")
    path = directory / "in" / "instances.json"
    data = json.loads(path.read_text())
    instance = data["experiments"][0]["game_instances"][0]
    slot = instance["request_order"][0]
    texts = directory / "resources" / "texts" / data["experiments"][0]["name"] / "probing_questions.json"
    questions = json.loads(texts.read_text())
    del questions[slot]
    texts.write_text(json.dumps(questions))
    experiments = read_instances(path)
    with pytest.raises(InputError, match=rf"experiments\[0\]\.game_instances\[0\]\.slots\.{slot}: the slot has "
                                         "no probing questions"):
        check_instances(experiments, read_game_texts(directory, experiments, words=True), "instances.json")


@pytest.mark.parametrize(("change", "message"), [
    (lambda g: g["probes"].pop("5"), r"probes: missing round \"5\""),
    (lambda g: g["requests"].update({g["request_order"][0]: 99}), r"requests\..*: 99 is out of range"),
    (lambda g: g["request_order"].append(g["request_order"][0]), "names slot .* twice"),
    (lambda g: g.update(lang="xx"), r"no resources/xx_words.json \(the words of language 'xx'\)"),
    (lambda g: g.update(game_id="0"), r"game_id: expected an integer"),
])
def test_malformed_instances_are_one_line(tmp_path, change, message):
    directory = copy_game(CLEMBENCH_GAME, tmp_path / "game")
    path = directory / "in" / "instances.json"
    data = json.loads(path.read_text())
    change(data["experiments"][0]["game_instances"][0])
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message):
        load_game(directory)


# --- the command: tests/dialogue/test_play_privateshared.py (against a chat-completions server) -----------------

def test_oracle_archive_is_complete():
    names = set(oracle_files())
    assert len([n for n in names if n.endswith("interactions.json")]) == 4 * len(ORACLE_PLAYERS)
