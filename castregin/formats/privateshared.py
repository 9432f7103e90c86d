"""Files of clembench's privateshared game: the game folder, its instances, and the episodes it records.

* **The game folder** (``--game-dir``), as clembench publishes ``privateshared/``:
  ``in/instances.json``; ``resources/texts/EXPERIMENT/probing_questions.json`` and ``requests.json``
  (per slot, a list of texts; an instance picks one by index); ``resources/texts/reprompts.json``
  (``{"suffixes": [...]}``: one per try of a probe, the first usually empty); and, for clembench 2.0's
  rules, ``resources/LANG_words.json`` (the tags ``ANSWER: ``, ``ASIDE: ``, ``ME: ``, the probe
  frame, ``yes``/``no``, the ``Ok.`` that answers the initial prompt). Only the files the played
  instances need are read; a missing one is a one-line :class:`~castregin.errors.InputError`.
* **Instances** (``instances.json``): ``{"experiments": [{"name", "game_instances": [{"game_id",
  "tag", "slots": {slot: value}, "initial_prompt", "request_order": [slot...], "requests": {slot:
  text index}, "probes": {"0": {slot: text index}, ... "n": {...}}, "lang"}]}]}``. Checked as a
  whole before anything is played (:func:`check_instances`): every slot has texts, every index is
  in range, the request order names each slot once, there is one probing round per request plus one.
* **Episodes**, in clembench's results layout: ``OUT/MODEL/privateshared/I_EXPERIMENT/`` with
  ``experiment_EXPERIMENT.json``, and ``episode_N/`` with ``instance.json``, ``interactions.json``,
  ``requests.json`` and ``scores.json`` (:func:`episode_files`). JSON as clembench's ``json.dump``
  writes it (one line, ``ensure_ascii=False``; scores as :func:`castregin.formats.dialogue.scores_text`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from . import schema
from .common import display_name, read_json

GAME = "privateshared"
INSTANCES = "instances.json"
INSTANCE = "instance.json"
REQUESTS = "requests.json"

#: The files of a game folder, relative to it.
INSTANCES_PATH = "in/instances.json"
PROBES_PATH = "resources/texts/{}/probing_questions.json"
REQUESTS_PATH = "resources/texts/{}/requests.json"
REPROMPTS_PATH = "resources/texts/reprompts.json"
WORDS_PATH = "resources/{}_words.json"


@dataclass(frozen=True)
class Words:
    """The fixed wording of the game in one language (clembench 2.0: ``resources/LANG_words.json``)."""

    answer: str  # the tag of an answer to the questioner, "ANSWER: "
    aside: str  # the tag of an answer to a probe, "ASIDE: "
    me: str  # the tag of a probe, "ME: "
    probe: str  # the frame of a probing question, "ME: {} Please answer yes or no."
    dummy_prompt: str  # what the game master "sends" the programmatic questioner
    yes: str
    no: str
    ok: str  # the answer put in the model's mouth after the initial prompt (2.0 only)

    @classmethod
    def from_json(cls, data: Mapping) -> Words:
        return cls(answer=data["ANSWER"], aside=data["ASIDE"], me=data["ME"], probe=data["PROBE"],
                   dummy_prompt=data["DUMMY_PROMPT"], yes=data["YES"], no=data["NO"], ok=data["OK"])


#: clembench 0.9 and 1.0 had the words in its code (privateshared/constants.py), English only.
WORDS_1_0 = Words(answer="ANSWER: ", aside="ASIDE: ", me="ME: ", probe="ME: {} Please answer yes or no.",
                  dummy_prompt="What is the next request?", yes="yes", no="no", ok="")


@dataclass(frozen=True)
class Instance:
    """One game instance, checked (:func:`check_instances`)."""

    game_id: int
    tag: str
    slots: dict[str, str]
    initial_prompt: str
    request_order: list[str]
    requests: dict[str, int]
    probes: dict[str, dict[str, int]]
    lang: str | None
    raw: dict = field(repr=False)  # as read: instance.json is written from it


@dataclass(frozen=True)
class Experiment:
    """An experiment of an instances file: its position (the results directory is ``INDEX_NAME``), its
    configuration (every key but ``game_instances``) and its instances."""

    index: int
    name: str
    config: dict
    instances: list[Instance]

    @property
    def directory(self) -> str:
        return f"{self.index}_{self.name}"


@dataclass(frozen=True)
class GameTexts:
    """What the game master reads from the game folder for the experiments it plays."""

    probing_questions: dict[str, dict[str, list[str]]]  # experiment -> slot -> texts
    requests: dict[str, dict[str, list[str]]]  # experiment -> slot -> texts
    reprompts: list[str]
    words: dict[str, Words]  # language -> words (empty for clembench 1.0's rules)


def read_instances(path: str | os.PathLike) -> list[Experiment]:
    """The experiments of a privateshared ``instances.json``, shape-checked (see :func:`check_instances`)."""
    source = display_name(path)
    data = read_json(path)
    schema.validate(data, "privateshared-instances", source)
    experiments = []
    for index, experiment in enumerate(data["experiments"]):
        config = {k: v for k, v in experiment.items() if k != "game_instances"}
        instances = [Instance(game_id=g["game_id"], tag=g["tag"], slots=dict(g["slots"]),
                              initial_prompt=g["initial_prompt"], request_order=list(g["request_order"]),
                              requests=dict(g["requests"]), probes={k: dict(v) for k, v in g["probes"].items()},
                              lang=g.get("lang"), raw=g)
                     for g in experiment["game_instances"]]
        experiments.append(Experiment(index, experiment["name"], config, instances))
    names = [e.name for e in experiments]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise InputError(f"experiments[{i}].name: {name!r} appears twice", source=source)
        ids = [g.game_id for g in experiments[i].instances]
        for j, game_id in enumerate(ids):
            if game_id in ids[:j]:
                raise InputError(f"experiments[{i}].game_instances[{j}].game_id: {game_id} appears twice in "
                                 f"experiment {name!r}", source=source)
    return experiments


def _read_resource(game_dir: Path, relative: str, schema_name: str, what: str):
    path = game_dir / relative
    if not path.is_file():
        raise InputError(f"the game folder has no {relative} ({what}); give clembench's privateshared/ folder "
                         "as published, or make a game with --generate", source=str(game_dir))
    data = read_json(path)
    schema.validate(data, schema_name, str(path))
    return data


def read_game_texts(game_dir: str | os.PathLike, experiments: Iterable[Experiment], *,
                    words: bool) -> GameTexts:
    """Read what ``experiments`` need from the game folder; ``words``: also each language's words file
    (clembench 2.0's rules; an instance without ``lang`` is English, ``en``)."""
    root = Path(game_dir)
    if not root.is_dir():
        raise InputError("no such directory; give clembench's privateshared/ folder", source=str(game_dir))
    experiments = list(experiments)
    probing, requests = {}, {}
    for experiment in experiments:
        probing[experiment.name] = _read_resource(root, PROBES_PATH.format(experiment.name), "privateshared-texts",
                                                  f"the probing questions of experiment {experiment.name}")
        requests[experiment.name] = _read_resource(root, REQUESTS_PATH.format(experiment.name), "privateshared-texts",
                                                   f"the requests of experiment {experiment.name}")
    reprompts = _read_resource(root, REPROMPTS_PATH, "privateshared-reprompts", "the reprompt suffixes")["suffixes"]
    languages = sorted({g.lang or "en" for e in experiments for g in e.instances}) if words else []
    words_by_language = {lang: Words.from_json(_read_resource(root, WORDS_PATH.format(lang), "privateshared-words",
                                                              f"the words of language {lang!r}"))
                         for lang in languages}
    return GameTexts(probing, requests, reprompts, words_by_language)


def check_instances(experiments: Iterable[Experiment], texts: GameTexts, source: str) -> None:
    """Every instance can be played with ``texts``; the first problem is an InputError with its JSON path.

    The request order names every slot once; each slot has a request text and probing questions in
    its experiment, and every index picks an existing text; rounds ``"0"`` to ``"n"`` of probes
    exist (n requests, one probing round before the first and one after each).
    """
    for experiment in experiments:
        probing, requests = texts.probing_questions[experiment.name], texts.requests[experiment.name]
        for j, game in enumerate(experiment.instances):
            where = f"experiments[{experiment.index}].game_instances[{j}]"

            def fail(path: str, problem: str, where: str = where):
                raise InputError(f"{where}.{path}: {problem}", source=source)

            order = game.request_order
            for slot in order:
                if order.count(slot) > 1:
                    fail("request_order", f"names slot {slot!r} twice")
            if set(order) != set(game.slots):
                fail("request_order", f"names the slots {sorted(order)}, but the instance has {sorted(game.slots)}")
            for slot in game.slots:
                if slot not in probing:
                    fail(f"slots.{slot}", f"the slot has no probing questions in {PROBES_PATH.format(experiment.name)}")
                if slot not in requests:
                    fail(f"slots.{slot}", f"the slot has no request texts in {REQUESTS_PATH.format(experiment.name)}")
                if slot not in game.requests:
                    fail("requests", f"missing the key {slot!r} (which request text asks for the slot)")
                if game.requests[slot] >= len(requests[slot]):
                    fail(f"requests.{slot}", f"{game.requests[slot]} is out of range: slot {slot!r} has "
                                             f"{len(requests[slot])} request texts")
            for round_number in range(len(order) + 1):
                key = str(round_number)
                if key not in game.probes:
                    fail("probes", f"missing round \"{key}\": a game of {len(order)} requests probes "
                                   f"{len(order) + 1} times, rounds \"0\" to \"{len(order)}\"")
                for slot, index in game.probes[key].items():
                    if slot not in game.slots:
                        fail(f"probes.{key}.{slot}", "the instance has no such slot")
                    if index >= len(probing[slot]):
                        fail(f"probes.{key}.{slot}", f"{index} is out of range: slot {slot!r} has "
                                                     f"{len(probing[slot])} probing questions")
                if not game.probes[key]:
                    fail(f"probes.{key}", "a probing round without probes")
            if texts.words and (game.lang or "en") not in texts.words:
                fail("lang", f"no words for language {game.lang!r}")


@dataclass(frozen=True)
class Game:
    """A game folder read and checked for playing: the instances file, the experiments chosen, their texts."""

    directory: str
    instances_path: str
    experiments: list[Experiment]
    texts: GameTexts

    def paths(self) -> list[str]:
        """The files the game is read from (none may be an output)."""
        return [self.instances_path, *(str(p) for p in sorted(Path(self.directory).rglob("*.json")))]


def read_game(game_dir: str | os.PathLike, instances: str | os.PathLike | None = None,
              experiments: Iterable[str] = (), *, rules: str) -> Game:
    """The game of ``game_dir`` (clembench's ``privateshared/`` folder, or one ``--generate`` wrote) for
    ``rules`` (``"1.0"``, ``"2.0"``): the instances of ``instances`` (default ``DIR/in/instances.json``),
    only the ``experiments`` named (default all), what they need read from the folder, and all of it
    checked (:func:`check_instances`) before anything is played."""
    instances_path = os.fspath(instances) if instances is not None else os.path.join(game_dir, INSTANCES_PATH)
    if instances is None and not os.path.isfile(instances_path):
        raise InputError(f"the game folder has no {INSTANCES_PATH}; give clembench's privateshared/ folder, "
                         "or the instances file", source=os.fspath(game_dir))
    chosen = read_instances(instances_path)
    names = list(experiments)
    if names:
        unknown = [name for name in names if name not in {e.name for e in chosen}]
        if unknown:
            raise InputError(f"{unknown[0]}: no such experiment; the instances have "
                             f"{', '.join(e.name for e in chosen)}", source=display_name(instances_path),
                             argument="experiments")
        chosen = [e for e in chosen if e.name in names]
    texts = read_game_texts(game_dir, chosen, words=rules == "2.0")
    check_instances(chosen, texts, display_name(instances_path))
    return Game(os.fspath(game_dir), instances_path, chosen, texts)


# --- writing episodes -------------------------------------------------------------------------------------

def clembench_json(data) -> str:
    """JSON as clembench's ``store_file`` writes it: ``json.dump(data, f, ensure_ascii=False)``, one line,
    no final newline, NaN as ``NaN``."""
    return json.dumps(data, ensure_ascii=False)


def experiment_path(model: str, experiment: Experiment) -> str:
    """``MODEL/privateshared/I_EXPERIMENT``, relative to the results directory."""
    return f"{model}/{GAME}/{experiment.directory}"


def clemcore_json(data) -> str:
    """JSON as clemcore's ``store_json`` writes it (clembench 2.0): ``indent=2``, ``ensure_ascii=False``, no final
    newline."""
    return json.dumps(data, ensure_ascii=False, indent=2)


def results_folder(model: str, temperature: float, rules: str) -> str:
    """The directory of a model's results: ``MODEL-tT--MODEL-tT`` (clembench 1.0: a pair, the single player
    plays against itself), ``MODEL-tT`` (2.0). A ``/`` in the model's name (``org/model``) becomes ``_``."""
    name = f"{model.replace('/', '_')}-t{float(temperature)}"
    return f"{name}--{name}" if rules == "1.0" else name


def experiment_directory(experiment: Experiment, rules: str) -> str:
    """``I_EXPERIMENT`` (1.0, ``I`` its place in the instances file), ``EXPERIMENT`` (2.0)."""
    return experiment.directory if rules == "1.0" else experiment.name


def episode_directory(experiment: Experiment, position: int, rules: str) -> str:
    """``episode_N`` (1.0, N the instance's place in its experiment), ``instance_NNNNN`` (2.0, its game id)."""
    if rules == "1.0":
        return f"episode_{position}"
    return f"instance_{experiment.instances[position].game_id:05d}"


#: The run log of ``play privateshared``, beside a model's experiments: ``RESULTS/MODEL-tT/privateshared/run_log.json``.
RUN_LOG = "run_log.json"


def run_log_path(results_dir: str | os.PathLike, folder: str) -> str:
    """Where the run log of the model whose results go to ``folder`` is written in ``results_dir``."""
    return os.path.join(results_dir, folder, GAME, RUN_LOG)


def episodes_to_play(results_dir: str | os.PathLike, directories: Iterable[str], rules: str) -> list[str]:
    """The episode directories of ``directories`` not yet played in ``results_dir`` (not all their files there).

    An episode with some of its files but not all was not written by castregin (it writes them together):
    an :class:`InputError`, since playing it again would overwrite what someone else wrote."""
    names = episode_file_names(rules)
    left = []
    for directory in directories:
        present = [name for name in names if os.path.lexists(os.path.join(results_dir, directory, name))]
        if len(present) == len(names):
            continue  # played in an earlier run
        if present:
            raise InputError(f"{directory} holds {present[0]} but not every file of an episode; it was not "
                             "written by castregin: move it away", source=os.fspath(results_dir))
        left.append(directory)
    return left


def episode_file_names(rules: str) -> tuple[str, ...]:
    """The files of an episode: all of them exist once it is played (they are written together)."""
    if rules == "1.0":
        return (INSTANCE, "interactions.json", REQUESTS, "scores.json")
    return (INSTANCE, "interactions.json", "player_1.requests.json", "player_2.requests.json", "scores.json")


def experiment_file_name(experiment: Experiment, rules: str) -> str:
    """The name of the experiment's own file beside its episodes (:func:`experiment_file`)."""
    return f"experiment_{experiment.name}.json" if rules == "1.0" else "experiment.json"


def experiment_file(experiment: Experiment, model: str, rules: str, timestamp: str) -> tuple[str, str]:
    """(name, text) of the experiment's own file beside its episodes: ``experiment_NAME.json`` (1.0, the
    experiment's configuration, the time and the dialogue partners) or ``experiment.json`` (2.0)."""
    name = experiment_file_name(experiment, rules)
    if rules == "1.0":
        return name, clembench_json({**experiment.config, "timestamp": timestamp, "dialogue_partners": [model]})
    return name, clemcore_json({**experiment.config, "timestamp": timestamp, "game_name": GAME,
                                "player_models": {"0": {"model_name": model}}})


def episode_files(records, rules: str) -> dict[str, str]:
    """name -> text of an episode's files (:func:`episode_file_names`) from its
    :class:`~castregin.dialogue.privateshared_game.EpisodeRecords`."""
    from .dialogue import scores_text

    if rules == "1.0":
        return {INSTANCE: clembench_json(records.instance), "interactions.json": clembench_json(records.interactions),
                REQUESTS: clembench_json(records.requests["Player 1"]), "scores.json": scores_text(records.scores)}
    meta = records.interactions["meta"]
    files = {INSTANCE: clemcore_json(records.instance), "interactions.json": clemcore_json(records.interactions)}
    answerer = records.interactions["players"]["Player 1"]["model_name"]
    for number, (player, role, model) in enumerate((("Player 1", "Answerer", answerer),
                                                    ("Player 2", "Questioner", "programmatic")), start=1):
        files[f"player_{number}.requests.json"] = clemcore_json({
            "meta": {"game_name": GAME, "experiment_name": meta["experiment_name"], "game_id": meta["game_id"],
                     "player_name": player, "game_role": role, "model_name": model,
                     "round_count": meta["round_count"], "completed": True},
            "calls": records.requests[player]})
    files["scores.json"] = clemcore_json({"meta": {}, "players": {}, **records.scores})
    return files
