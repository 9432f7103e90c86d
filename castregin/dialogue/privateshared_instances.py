"""New privateshared games in castregin's own wording: ``castregin play privateshared --generate``.

castregin ships a game folder of its own (``castregin/dialogue/privateshared_texts``: three
experiments, ``flat-viewing``, ``clinic-reception`` and ``colour-animal``, each with slot values,
request texts, probing questions and an initial prompt template; the words and reprompt suffixes),
laid out as clembench's ``privateshared/`` so that the same game master plays it under clembench 2.0's
rules. :func:`generate_game` draws instances from it as clembench's instance generator does (per
instance: one value per slot, a random request order, a random request text per slot and a random
probing question per slot and round), seeded, with Python's :class:`random.Random` of its own.

The values are checked first as clembench's ``checkvalues.py`` checks them (no value twice in an
experiment, none inside another), case-insensitively because the game compares lowercased text, and
castregin adds one check: no value may occur in the experiment's request texts or probing
questions, which would give it away (a slot is filled when the answer contains its value).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from importlib import resources

from ..errors import InputError
from ..formats.privateshared import INSTANCES_PATH, PROBES_PATH, REPROMPTS_PATH, REQUESTS_PATH, WORDS_PATH

TEXTS_PACKAGE = "privateshared_texts"
SLOT_VALUES_PATH = "resources/texts/{}/slot_values.json"
PROMPT_PATH = "resources/initial_prompts/{}.template"
LANG = "en"


def _data():
    return resources.files(__package__).joinpath(TEXTS_PACKAGE)


def _text(relative: str) -> str:
    return _data().joinpath(relative).read_text(encoding="utf-8")


def _json(relative: str):
    return json.loads(_text(relative))


def value_overlaps(slot_values: Mapping[str, list[str]], texts: Sequence[str] = ()) -> list[str]:
    """What clembench's ``checkvalues.py`` reports, case-insensitively: values that appear twice, values
    inside other values; and values that occur in one of ``texts``. Empty when the values are fine."""
    values = [value for slot in slot_values.values() for value in slot]
    problems = []
    lowered = [v.lower() for v in values]
    for i, value in enumerate(values):
        if lowered.index(lowered[i]) != i:
            problems.append(f"{value!r} appears twice")
        problems.extend(f"{value!r} is inside {other!r}" for other in values
                        if lowered[i] in other.lower() and lowered[i] != other.lower())
        problems.extend(f"{value!r} occurs in {text!r}" for text in texts if lowered[i] in text.lower())
    return problems


def experiments() -> list[dict]:
    """castregin's experiments: ``{"name", "tag", "what"}`` each."""
    return _json("experiments.json")["experiments"]


def _sample_instance(rng: random.Random, game_id: int, experiment: dict, words: dict) -> dict:
    name = experiment["name"]
    slot_values = _json(SLOT_VALUES_PATH.format(name))
    request_texts = _json(REQUESTS_PATH.format(name))
    probing_questions = _json(PROBES_PATH.format(name))
    slots = {slot: rng.choice(values) for slot, values in slot_values.items()}
    card = "\n".join([f"WHAT: {experiment['what']}", *(f"{slot.upper()}: {value}" for slot, value in slots.items())])
    prompt = (_text(PROMPT_PATH.format(name)).strip("\n").replace("$INSTANCE$", card)
              .replace("$QUESTIONER$", experiment["tag"]).replace("$ANSWER$", words["ANSWER"])
              .replace("$ASIDE$", words["ASIDE"]).replace("$ME$", words["ME"]))
    return {
        "game_id": game_id,
        "tag": experiment["tag"],
        "slots": slots,
        "initial_prompt": prompt,
        "request_order": rng.sample(list(slots), len(slots)),
        "requests": {slot: rng.randrange(len(request_texts[slot])) for slot in slots},
        "probes": {str(r): {slot: rng.randrange(len(probing_questions[slot])) for slot in slots}
                   for r in range(len(slots) + 1)},
        "lang": LANG,
    }


def generate_instances(seed: int, games: int) -> dict:
    """``instances.json`` with ``games`` instances of every experiment, drawn with ``random.Random(seed)``."""
    words = _json(WORDS_PATH.format(LANG))
    for experiment in experiments():
        name = experiment["name"]
        texts = [t for path in (REQUESTS_PATH, PROBES_PATH) for ts in _json(path.format(name)).values() for t in ts]
        problems = value_overlaps(_json(SLOT_VALUES_PATH.format(name)), texts)
        if problems:  # castregin's own texts: a test keeps them clean
            raise ValueError(f"slot values of {name}: {'; '.join(problems)}")
    rng = random.Random(seed)
    return {"experiments": [{"name": experiment["name"],
                             "game_instances": [_sample_instance(rng, game_id, experiment, words)
                                                for game_id in range(games)]}
                            for experiment in experiments()]}


def game_files(seed: int, games: int) -> dict[str, bytes]:
    """A whole game folder (relative path -> bytes): castregin's resources and new ``in/instances.json``."""
    if games < 1:
        raise InputError(f"--games must be at least 1, not {games}", argument="--games")
    files = {}
    for experiment in experiments():
        name = experiment["name"]
        for path in (SLOT_VALUES_PATH, REQUESTS_PATH, PROBES_PATH, PROMPT_PATH):
            files[path.format(name)] = _text(path.format(name)).encode()
    for path in (REPROMPTS_PATH, WORDS_PATH.format(LANG)):
        files[path] = _text(path).encode()
    files[INSTANCES_PATH] = (json.dumps(generate_instances(seed, games), ensure_ascii=False, indent=1)
                             + "\n").encode()
    return files
