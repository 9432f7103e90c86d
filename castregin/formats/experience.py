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
from . import schema
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


def _target(turn: dict, path: str, source: str, line: int) -> tuple[tuple[str, float], ...]:
    """The target policy's replies: one sure reply, or a distribution (a reply listed twice is one reply
    with the summed probability) whose probabilities sum to 1."""
    if "target_response" in turn:
        return ((turn["target_response"], 1.0),)
    merged: dict[str, float] = {}
    for option in turn["target_responses"]:
        merged[option["text"]] = merged.get(option["text"], 0.0) + float(option["prob"])
    total = math.fsum(merged.values())
    if abs(total - 1.0) > PROB_TOLERANCE:
        raise InputError(f"{path}.target_responses: the probabilities sum to {total:.9g}, not 1 "
                         f"(tolerance {PROB_TOLERANCE:g})", source=source, line=line)
    return tuple((text, prob / total) for text, prob in merged.items() if prob > 0)


def _number_in(value, low: float, high: float) -> bool:
    return type(value) in (int, float) and low <= value <= high  # NaN fails both comparisons


def _valid(obj) -> bool:
    """The fast test of a line, at least as strict as ``schemas/experience.json``: only a line it
    refuses is walked by jsonschema (for the message), which takes ten times longer than the rest of
    the reading (a 100,000-dialogue file: 44 s of 47)."""
    if type(obj) is not dict or type(obj.get("dialogue_id")) not in (str, int):
        return False
    if not _number_in(obj.get("reward"), 0.0, math.inf) or obj["reward"] == math.inf:
        return False
    turns = obj.get("turns")
    if type(turns) is not list or not turns:
        return False
    for turn in turns:
        if type(turn) is not dict or type(turn.get("context")) is not str or type(turn.get("response")) is not str:
            return False
        if ("target_response" in turn) == ("target_responses" in turn):
            return False
        if "target_response" in turn:
            if type(turn["target_response"]) is not str:
                return False
            continue
        options = turn["target_responses"]
        if type(options) is not list or not options:
            return False
        for option in options:
            if type(option) is not dict or type(option.get("text")) is not str or \
                    not _number_in(option.get("prob"), 0.0, 1.0):
                return False
    return True


def parse_dialogue(text: str, source: str, line: int) -> Dialogue:
    """One JSONL line as a :class:`Dialogue`, checked against ``schemas/experience.json``; any problem
    is an InputError naming ``source:line`` and the JSON path."""
    obj = parse_json_text(text, source, line)
    if not _valid(obj):
        schema.validate(obj, "experience", source, line)
    turns = tuple(Turn(turn["context"], turn["response"], _target(turn, f"turns[{k}]", source, line))
                  for k, turn in enumerate(obj["turns"]))
    return Dialogue(str(obj["dialogue_id"]), turns, float(obj["reward"]), line, source)


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
        entry: dict[str, object] = {"context": turn.context, "response": turn.response}
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
