"""Experience files for off-policy evaluation (``castregin ope``): logged, human-rated dialogues.

One JSON object per line (JSONL); blank lines are skipped::

    {"dialogue_id": "d1",
     "turns": [{"context": "...", "response": "...", "target_response": "..."},
               {"context": "...", "response": "...",
                "target_responses": [{"text": "...", "prob": 0.7}, {"text": "...", "prob": 0.3}]}],
     "reward": 0.75}

``context`` is what the policy sees at that turn, ``response`` what the logged (behaviour) policy
said, ``target_response`` one reply sampled from the target policy in that context, or
``target_responses`` its whole distribution (probabilities summing to 1 within 1e-6).
``reward`` is the final human score of the dialogue: a finite number >= 0. Other keys (for example
``policy``) are allowed and ignored. Every problem is an :class:`~castregin.errors.InputError` that
names the file and line.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

from ..errors import InputError
from .common import decode, display_name, parse_json_text, read_bytes

PROB_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Turn:
    """One logged turn: the context, the logged reply, the target policy's replies with probabilities."""

    context: str
    response: str
    # (reply, probability) pairs, replies distinct, probabilities summing to 1.
    target: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Dialogue:
    """One logged dialogue with its final human score; ``line`` is where it stands in its file."""

    dialogue_id: str
    turns: tuple[Turn, ...]
    reward: float
    line: int = 0
    source: str = ""


def _type_name(value) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(value), type(value).__name__)


def _string(obj: dict, key: str, where: str, source: str, line: int) -> str:
    if key not in obj:
        raise InputError(f"{where} has no {key!r}", source=source, line=line)
    value = obj[key]
    if not isinstance(value, str):
        raise InputError(f"{where}: {key!r} must be a string, found {_type_name(value)}", source=source, line=line)
    return value


def _number(value) -> bool:
    # JSON true/false load as bool, which Python counts as int: they are not ratings or probabilities.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _target(turn: dict, where: str, source: str, line: int) -> tuple[tuple[str, float], ...]:
    has_one, has_many = "target_response" in turn, "target_responses" in turn
    if has_one and has_many:
        raise InputError(f"{where} has both 'target_response' and 'target_responses'; keep one",
                         source=source, line=line)
    if not has_one and not has_many:
        raise InputError(f"{where} has no 'target_response' (or 'target_responses')", source=source, line=line)
    if has_one:
        return ((_string(turn, "target_response", where, source, line), 1.0),)
    options = turn["target_responses"]
    if not isinstance(options, list) or not options:
        raise InputError(f"{where}: 'target_responses' must be a non-empty array of {{\"text\", \"prob\"}}, "
                         f"found {_type_name(options) if options != [] else 'an empty array'}",
                         source=source, line=line)
    merged: dict[str, float] = {}
    for k, option in enumerate(options):
        spot = f"{where}, target_responses[{k}]"
        if not isinstance(option, dict):
            raise InputError(f"{spot} must be an object, found {_type_name(option)}", source=source, line=line)
        text = _string(option, "text", spot, source, line)
        if "prob" not in option:
            raise InputError(f"{spot} has no 'prob'", source=source, line=line)
        prob = option["prob"]
        if not _number(prob) or not math.isfinite(prob):
            raise InputError(f"{spot}: 'prob' must be a number, found {_type_name(prob)}", source=source, line=line)
        if prob < 0 or prob > 1:
            raise InputError(f"{spot}: 'prob' {prob} is outside [0, 1]", source=source, line=line)
        # The same reply listed twice is one reply with the summed probability.
        merged[text] = merged.get(text, 0.0) + float(prob)
    total = math.fsum(merged.values())
    if abs(total - 1.0) > PROB_TOLERANCE:
        raise InputError(f"{where}: the probabilities of 'target_responses' sum to {total:.9g}, not 1 "
                         f"(tolerance {PROB_TOLERANCE:g})", source=source, line=line)
    return tuple((text, prob / total) for text, prob in merged.items() if prob > 0)


def parse_dialogue(text: str, source: str, line: int) -> Dialogue:
    """One JSONL line as a :class:`Dialogue`; any problem is an InputError naming ``source:line``."""
    obj = parse_json_text(text, source, line)
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object (one dialogue per line), found {_type_name(obj)}",
                         source=source, line=line)
    if "dialogue_id" not in obj:
        raise InputError("the dialogue has no 'dialogue_id'", source=source, line=line)
    dialogue_id = obj["dialogue_id"]
    if isinstance(dialogue_id, bool) or not isinstance(dialogue_id, (str, int)):
        raise InputError(f"'dialogue_id' must be a string or an integer, found {_type_name(dialogue_id)}",
                         source=source, line=line)
    dialogue_id = str(dialogue_id)
    where = f"dialogue {dialogue_id}"
    if "turns" not in obj:
        raise InputError(f"{where} has no 'turns'", source=source, line=line)
    turns = obj["turns"]
    if not isinstance(turns, list):
        raise InputError(f"{where}: 'turns' must be an array, found {_type_name(turns)}", source=source, line=line)
    if not turns:
        raise InputError(f"{where}: 'turns' is empty; a dialogue needs at least one turn", source=source, line=line)
    parsed = []
    for k, turn in enumerate(turns):
        spot = f"{where}, turn {k}"
        if not isinstance(turn, dict):
            raise InputError(f"{spot} must be an object, found {_type_name(turn)}", source=source, line=line)
        context = _string(turn, "context", spot, source, line)
        response = _string(turn, "response", spot, source, line)
        parsed.append(Turn(context, response, _target(turn, spot, source, line)))
    if "reward" not in obj or obj["reward"] is None:
        raise InputError(f"{where} has no 'reward' (the final human score)", source=source, line=line)
    reward = obj["reward"]
    if not _number(reward) or not math.isfinite(reward):
        raise InputError(f"{where}: 'reward' must be a finite number, found {_type_name(reward)} {reward!r}",
                         source=source, line=line)
    if reward < 0:
        raise InputError(f"{where}: 'reward' {reward} is negative; scores must be >= 0", source=source, line=line)
    return Dialogue(dialogue_id, tuple(parsed), float(reward), line, source)


def parse_experience(data: bytes, source: str) -> list[Dialogue]:
    """The dialogues of an experience file's bytes (``source`` names it in messages)."""
    dialogues: list[Dialogue] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(decode(data, source).splitlines(), start=1):
        if not text.strip():
            continue
        dialogue = parse_dialogue(text, source, number)
        if dialogue.dialogue_id in seen:
            raise InputError(f"dialogue_id {dialogue.dialogue_id!r} repeats line {seen[dialogue.dialogue_id]}",
                             source=source, line=number)
        seen[dialogue.dialogue_id] = number
        dialogues.append(dialogue)
    if not dialogues:
        raise InputError("the file has no dialogues, expected one JSON object per line", source=source)
    return dialogues


def read_experience(path: str | os.PathLike) -> list[Dialogue]:
    """Read and validate an experience JSONL file (``-`` for standard input)."""
    return parse_experience(read_bytes(path), display_name(path))


def dialogue_to_json(dialogue: Dialogue) -> dict:
    """The JSON object of a dialogue (a distribution, or ``target_response`` for a single sure reply)."""
    turns = []
    for turn in dialogue.turns:
        entry = {"context": turn.context, "response": turn.response}
        if len(turn.target) == 1 and turn.target[0][1] == 1.0:
            entry["target_response"] = turn.target[0][0]
        else:
            entry["target_responses"] = [{"text": text, "prob": prob} for text, prob in turn.target]
        turns.append(entry)
    return {"dialogue_id": dialogue.dialogue_id, "turns": turns, "reward": dialogue.reward}


def format_experience(dialogues) -> str:
    """JSONL text of dialogues (one compact object per line, keys in a fixed order)."""
    return "".join(json.dumps(dialogue_to_json(d), ensure_ascii=False, separators=(",", ":")) + "\n"
                   for d in dialogues)
