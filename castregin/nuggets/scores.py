"""Nugget scores of generated answers: nuggetizer's four, and iKAT 2024's nugget recall.

Per (run, turn), from the labels of the turn's nuggets (castorini/nuggetizer,
``src/nuggetizer/core/metrics.py``, which the tests run as the oracle):

- ``strict_vital_score``: the share of the vital nuggets labelled ``support``;
- ``strict_all_score``: the share of all nuggets labelled ``support``;
- ``vital_score``: as strict_vital_score, a ``partial_support`` counting 0.5;
- ``all_score``: as strict_all_score, a ``partial_support`` counting 0.5;
- ``nugget_recall``: iKAT 2024's nugget recall as CONE-RAG computes it (``matching/NtR.py``, nugget-to-response
  matching): the share of the turn's nuggets the answer covers (``support``; its matcher says yes or no, so a
  ``partial_support`` covers nothing), averaged over the turns that have nuggets and a non-empty answer only
  (an assignment without ``answer_text`` counts as answered).

A run's ``all`` value of each is the mean over its turns, as nuggetizer's ``calculate_global_metrics``
takes it (:func:`statistics.mean`, exact); ``num_q`` is the number of turns of the run. A turn without a vital
nugget scores 0 on the vital scores in nuggetizer (the share of nothing): castregin does the same by default,
so that its numbers are nuggetizer's, and says which turns (an :class:`~castregin.errors.InputWarning`);
``no_vital="skip"`` leaves those turns out of the vital scores instead (no per-turn value, not in the mean).
A turn without any nugget scores 0 on all four in nuggetizer, and is said likewise.

iKAT 2024's nugget precision (CONE-RAG's ``matching/NtN.py``: the share of the nuggets extracted from the
answer that match a gold nugget) needs the answer's own nuggets and a matcher; it is not computed from
assignments.

An assignment source (:func:`unit_labels`) is the label of each (qid, run_id, nugget index) by one way of
assigning (people, a model), shaped as qrels: the turn is the qid, the item ``run_id#index``, the label 2
(support), 1 (partial_support) or 0 (not_support). Two sources over the same nuggets (:func:`check_same_nuggets`)
are compared label by label (``castregin agreement``) and by the ranking of runs their scores give.
"""

from __future__ import annotations

import statistics
import warnings
from collections.abc import Iterable, Sequence

from ..data import natural_key
from ..errors import InputError, InputWarning
from ..formats.nuggets import NOT_SUPPORT, PARTIAL_SUPPORT, SUPPORT, VITAL, Assignment

STRICT_VITAL, STRICT_ALL, VITAL_SCORE, ALL_SCORE = "strict_vital_score", "strict_all_score", "vital_score", "all_score"
NUGGET_RECALL = "nugget_recall"
#: nuggetizer's four scores, in its order.
NUGGETIZER_MEASURES = (STRICT_VITAL, STRICT_ALL, VITAL_SCORE, ALL_SCORE)
#: Every measure ``nuggets score`` gives.
MEASURES = (*NUGGETIZER_MEASURES, NUGGET_RECALL)
#: Short names a caller may use: the scores as nuggetizer's papers name them.
ALIASES = {"strict_vital": STRICT_VITAL, "strict_all": STRICT_ALL, "vital": VITAL_SCORE, "all": ALL_SCORE,
           "recall": NUGGET_RECALL}
_VITAL_MEASURES = (STRICT_VITAL, VITAL_SCORE)
ALL_TURNS = "all"
NUM_Q = "num_q"
#: What a turn without a vital nugget scores on the vital scores: 0 (nuggetizer), or nothing.
NO_VITAL_CHOICES = ("zero", "skip")
#: Turns named in a warning; more are counted.
_NAMED_TURNS = 10


def turn_scores(importances: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """nuggetizer's four scores of one answer: ``importances[i]`` and ``labels[i]`` are those of nugget ``i``.

    The arithmetic is nuggetizer's, step for step (full supports counted, then 0.5 added for each partial
    support, then divided), so that the values are its values to the last bit. No vital nugget: 0.0 on the
    vital scores; no nugget: 0.0 on all four.
    """
    vital = [label for importance, label in zip(importances, labels, strict=True) if importance == VITAL]
    strict_vital = sum(1 for label in vital if label == SUPPORT)
    strict_all = sum(1 for label in labels if label == SUPPORT)
    vital_supported = strict_vital + sum(0.5 for label in vital if label == PARTIAL_SUPPORT)
    all_supported = strict_all + sum(0.5 for label in labels if label == PARTIAL_SUPPORT)
    return {STRICT_VITAL: strict_vital / len(vital) if vital else 0.0,
            STRICT_ALL: strict_all / len(labels) if labels else 0.0,
            VITAL_SCORE: vital_supported / len(vital) if vital else 0.0,
            ALL_SCORE: all_supported / len(labels) if labels else 0.0}


def parse_measure_names(names: Iterable[str] | None) -> list[str]:
    """The measures asked for (their names or :data:`ALIASES`), each once, in :data:`MEASURES`' order given;
    ``None`` or nothing: every measure."""
    if not names:
        return list(MEASURES)
    chosen = []
    for name in names:
        measure = ALIASES.get(name, name)
        if measure not in MEASURES:
            raise InputError(f"unknown nugget measure {name!r}; use one of {', '.join(MEASURES)} "
                             f"(or {', '.join(ALIASES)})", argument="measures")
        if measure not in chosen:
            chosen.append(measure)
    return chosen


def _turn_list(found: dict[str, list[str]], runs: dict[str, int]) -> str:
    """``found`` (turn -> the runs where it lacks nuggets) as text: a turn lacking them in only some of the runs
    that answer it names those runs."""
    ordered = sorted(found, key=natural_key)
    named = ", ".join(turn if len(found[turn]) == runs[turn] else f"{turn} ({', '.join(found[turn])})"
                      for turn in ordered[:_NAMED_TURNS])
    return named + (f" and {len(ordered) - _NAMED_TURNS} more" if len(ordered) > _NAMED_TURNS else "")


def _warn_empty_turns(assignments: Sequence[Assignment], no_vital: str, measures: Sequence[str]) -> None:
    """Say which turns have no nugget, and which no vital nugget, and what they score (not silently 0)."""
    runs: dict[str, int] = {}
    without_nuggets: dict[str, list[str]] = {}
    without_vital: dict[str, list[str]] = {}
    for a in assignments:
        runs[a.qid] = runs.get(a.qid, 0) + 1
        if not a.nuggets:
            without_nuggets.setdefault(a.qid, []).append(a.run_id)
        elif VITAL not in (n.importance for n in a.nuggets):
            without_vital.setdefault(a.qid, []).append(a.run_id)
    if without_nuggets:
        warnings.warn(InputWarning(
            f"{len(without_nuggets)} turn(s) have no nugget: {_turn_list(without_nuggets, runs)}; they score 0 on "
            "every nugget measure, as nuggetizer scores them"), stacklevel=3)
    if without_vital and any(m in _VITAL_MEASURES for m in measures):
        what = ("they score 0 on strict_vital_score and vital_score, as nuggetizer scores them (--no-vital skip "
                "leaves them out of those means)" if no_vital == "zero" else
                "they are left out of strict_vital_score and vital_score (--no-vital skip)")
        warnings.warn(InputWarning(
            f"{len(without_vital)} turn(s) have no vital nugget: {_turn_list(without_vital, runs)}; {what}"),
            stacklevel=3)


def score_assignments(assignments: Sequence[Assignment], source: str = "nuggets",
                      measures: Iterable[str] | None = None, per_turn: bool = False,
                      no_vital: str = "zero") -> list[tuple]:
    """The nugget scores of every run in ``assignments``, as evaluate's rows ``(run, source, measure, turn,
    value)``: per run a ``num_q`` row (its turns), then each measure's ``all`` value (the mean) and, with
    ``per_turn``, its value on each turn (turns in natural order). Runs in order of first appearance.

    ``source`` fills the column evaluate fills with the qrels' name: the name of the assignment source
    (``human``, ``gpt-4o``). ``no_vital``: see the module documentation.
    """
    if no_vital not in NO_VITAL_CHOICES:
        raise InputError(f"unknown choice {no_vital!r}; use one of {', '.join(NO_VITAL_CHOICES)}",
                         argument="no_vital")
    chosen = parse_measure_names(measures)
    if not assignments:
        raise InputError("no assignment to score", argument="assignments")
    _warn_empty_turns(assignments, no_vital, chosen)
    by_run: dict[str, list[Assignment]] = {}
    for assignment in assignments:
        by_run.setdefault(assignment.run_id, []).append(assignment)
    rows: list[tuple] = []
    for run, unordered in by_run.items():
        answers = sorted(unordered, key=lambda a: natural_key(a.qid))
        values: dict[str, dict[str, float]] = {m: {} for m in chosen}
        for a in answers:
            scores = turn_scores([n.importance for n in a.nuggets], a.labels)
            has_vital = any(n.importance == VITAL for n in a.nuggets)
            for measure in chosen:
                if measure == NUGGET_RECALL:
                    if a.nuggets and (a.answer_text is None or a.answer_text.strip()):
                        values[measure][a.qid] = scores[STRICT_ALL]
                elif measure in _VITAL_MEASURES and not has_vital and no_vital == "skip":
                    continue
                else:
                    values[measure][a.qid] = scores[measure]
        rows.append((run, source, NUM_Q, ALL_TURNS, float(len(answers))))
        for measure in chosen:
            turns = values[measure]
            # nuggetizer's mean (statistics.mean: exact, then rounded once); no turn: no mean to take.
            mean = statistics.mean(turns.values()) if turns else float("nan")
            rows.append((run, source, measure, ALL_TURNS, mean))
            if per_turn:
                rows.extend((run, source, measure, qid, value) for qid, value in turns.items())
    return rows


#: An assignment's label as a number, for agreement: the order of support, from none to full.
LABEL_VALUES = {NOT_SUPPORT: 0, PARTIAL_SUPPORT: 1, SUPPORT: 2}
#: Nugget texts shown in a message are cut to this many characters.
_SHOWN_TEXT = 60


def unit_item(run_id: str, index: int) -> str:
    """The item of nugget ``index`` of a run's answer in an assignment source: ``run_id#index``."""
    return f"{run_id}#{index}"


def unit_labels(assignments: Iterable[Assignment]) -> dict[str, dict[str, int]]:
    """An assignment source as qrels-shaped labels ``{qid: {run_id#index: label}}``, :data:`LABEL_VALUES`: the unit
    on which two sources that assigned the same nuggets (people and a model) agree or not."""
    labels: dict[str, dict[str, int]] = {}
    for a in assignments:
        items = labels.setdefault(a.qid, {})
        for index, label in enumerate(a.labels):
            items[unit_item(a.run_id, index)] = LABEL_VALUES[label]
    return labels


def _shown(nugget) -> str:
    text = nugget.text if len(nugget.text) <= _SHOWN_TEXT else nugget.text[:_SHOWN_TEXT - 3] + "..."
    return f"{text!r} ({nugget.importance})"


def check_same_nuggets(sources: Sequence[tuple[str, Sequence[Assignment]]]) -> None:
    """Refuse, in one line naming the first mismatch, two sources (``(name, assignments)``) whose nugget at the
    same (qid, run, index) differs in text or importance: their labels would be of different nuggets."""
    first: dict[tuple[str, str, int], tuple[str, Assignment]] = {}
    for name, assignments in sources:
        for a in assignments:
            for index, nugget in enumerate(a.nuggets):
                known = first.setdefault((a.qid, a.run_id, index), (name, a))
                other_name, other = known
                if other is a or other.nuggets[index] == nugget:
                    continue
                raise InputError(
                    f"{other_name} and {name} assign different nuggets: qid {a.qid}, run {a.run_id}, nugget {index} is "
                    f"{_shown(other.nuggets[index])} in {other_name} ({other.source}:{other.line}) and "
                    f"{_shown(nugget)} in {name} ({a.source}:{a.line}); compare assignments of the same nuggets",
                    argument="sources")
