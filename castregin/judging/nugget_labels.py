"""People's nugget labels back into nuggetizer's files (``castregin nuggets aggregate``): one label per item by the
crowd rules castregin aggregates relevance with (:func:`castregin.judging.aggregate.aggregate`: the gold filter per
topic, the mode with a tie rule, Dawid-Skene or GLAD), then

- ``assign``: each answer's nuggets labelled 2 support, 1 partial_support, 0 not_support: nuggetizer's assignment
  records (``nuggets score`` reads them); an empty answer supports nothing; an answer with a nugget nobody
  labelled is left out (and said): its scores would not be the people's;
- ``importance``: each turn's nuggets, 2 vital, 1 okay, 0 dropped (not a nugget of the turn), vital first (as
  nuggetizer orders them), each group in the file's order: a nuggets file (``nuggets assign`` reads it); a nugget
  nobody labelled keeps its importance, and is said;
- ``cite``: each (sentence, cited passage) pair, 2 full_support, 1 partial_support, 0 no_support: the citation
  support CSV ``nuggets cite`` writes (``nuggets cite --labels`` scores it).

Nuggets people write (``create``) are merged per turn by :func:`merge_written`: texts equal but for case and
spacing are one nugget (the first spelling read is kept), vital or okay by the same majority and tie rules over
the votes of the workers who wrote it; ``min_writers`` keeps only nuggets written by that many workers.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data import natural_key
from ..errors import InputError, InputWarning
from ..formats.citations import FULL_SUPPORT, NO_SUPPORT, PARTIAL_SUPPORT, PairKey
from ..formats.nugget_tasks import WrittenNugget
from ..formats.nuggets import NOT_SUPPORT, OKAY, SUPPORT, VITAL, Assignment, Nugget, TurnNuggets
from ..formats.nuggets import PARTIAL_SUPPORT as PARTIAL
from .aggregate import Aggregation, aggregate, decide
from .nugget_tasks import CRITERIA, SCALE
from .sources import CrowdRules, read_crowd
from .tasks import fold_text

#: What each label 0-2 becomes, by kind (importance: 0 drops the nugget).
ASSIGNMENT_LABELS = (NOT_SUPPORT, PARTIAL, SUPPORT)
IMPORTANCE_LABELS = (None, OKAY, VITAL)
CITATION_LABELS = (NO_SUPPORT, PARTIAL_SUPPORT, FULL_SUPPORT)
_NAMED = 10


@dataclass
class NuggetLabels:
    """What :func:`aggregate_nugget_labels` gives: the kind's records (``assignments``, ``turns`` or ``citations``),
    the aggregation (its audit), and ``left_out`` (answers or nuggets without a label, ``unknown``: labelled items
    that are no task)."""

    kind: str
    aggregation: Aggregation | None = None
    assignments: list[Assignment] = field(default_factory=list)
    turns: list[TurnNuggets] = field(default_factory=list)
    citations: dict[PairKey, str] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    merge: dict = field(default_factory=dict)

    def audit(self) -> dict:
        """``audit.json``: the aggregation's audit (gold removals, decisions, agreement, workers, suspects) or the
        merge's counts, with what was left out."""
        base = self.aggregation.audit() if self.aggregation is not None else {"merge": self.merge}
        return {"kind": self.kind, **base, "left_out": self.left_out, "unknown_items": self.unknown}


def _said(what: str, names: Sequence[str]) -> None:
    if names:
        warnings.warn(InputWarning(f"{len(names)} {what}: {', '.join(names[:_NAMED])}"
                                   + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")),
                      stacklevel=3)


def aggregate_nugget_labels(manifest: dict, paths: Sequence[str | os.PathLike], rules: CrowdRules | None = None,
                            *, time_column: str | None = "auto") -> NuggetLabels:
    """The crowd's labels of a labelling kind's tasks (``manifest``: :func:`castregin.formats.nugget_tasks.
    read_manifest`), aggregated with ``rules`` (their criterion and scale are the manifest's), back into the kind's
    records (see the module)."""
    kind = manifest["kind"]
    if kind not in CRITERIA:
        raise InputError(f"{kind} tasks collect written nuggets, not labels: merge them (merge_written)",
                         argument="manifest")
    criterion = CRITERIA[kind]
    rules = dataclasses.replace(rules or CrowdRules(), criteria=[criterion], scale=SCALE)
    data, gold_frame = read_crowd(paths, rules)
    result = aggregate(data, gold_frame, time_column=time_column, **rules.decision())
    labels = result.qrels[criterion]
    planted = {tuple(pair) for pair in manifest.get("planted", [])}
    out = NuggetLabels(kind, result)
    known: set[tuple[str, str]] = set()
    if kind == "assign":
        _assignments(manifest["records"], labels, out, known)
    elif kind == "importance":
        _importance(manifest["records"], labels, out, known)
    else:
        _citations(manifest, labels, out, known)
    out.unknown = sorted((f"{turn}:{item}" for turn, items in labels.items() for item in items
                          if (turn, item) not in known and (turn, item) not in planted), key=natural_key)
    _said("labelled item(s) are no task of these tasks and are ignored (labels of other tasks?)", out.unknown)
    _check_not_empty(out, result, sum((turn, item) in known for turn, items in labels.items() for item in items))
    return out


def _check_not_empty(out: NuggetLabels, result: Aggregation, labelled: int) -> None:
    """A file made of no label is no result: say why, write nothing (the rule of every command, docs/inputs.md).
    ``labelled``: how many tasks have a label."""
    removed = len({r["worker_id"] for r in result.removed})
    if removed and not any(result.qrels.values()):
        raise InputError(f"no label is left to write: the gold filter removed every label ({removed} worker(s) in "
                         f"{len(result.removed)} (worker, topic) pair(s)); check the ranges of --gold; nothing "
                         "written")
    empty, what = {"assign": (not out.assignments, "no answer has a label for each of its nuggets"),
                   "importance": (not any(t.nuggets for t in out.turns), "every nugget is rated 0 (not a nugget)"),
                   "cite": (not out.citations, "no cited pair has a label")}[out.kind]
    if empty or not labelled:
        raise InputError(f"{what if empty else 'no task has a label'}; check that the judgments are of these tasks "
                         "(their turn and item ids); nothing written")


def _assignments(records, labels, out: NuggetLabels, known: set) -> None:
    words = ASSIGNMENT_LABELS
    for record in records:
        qid, run = record["qid"], record["run_id"]
        nuggets = tuple(Nugget(n["text"], n["importance"]) for n in record["nuggets"])
        items = [f"{run}#{k}" for k in range(len(nuggets))]
        known.update((qid, item) for item in items)
        text = record.get("answer_text", "")
        if not text.strip():
            given: list[int | None] = [0] * len(nuggets)
        else:
            given = [labels.get(qid, {}).get(item) for item in items]
        if any(label is None for label in given):
            out.left_out.append(f"{run}:{qid}")
            continue
        out.assignments.append(Assignment(run, qid, record.get("query", ""), nuggets,
                                          tuple(words[int(label)] for label in given if label is not None), text))
    _said("answer(s) have a nugget nobody labelled and are left out", out.left_out)


def _importance(records, labels, out: NuggetLabels, known: set) -> None:
    unlabelled = []
    for record in records:
        qid = record["qid"]
        vital, okay = [], []
        for k, nugget in enumerate(record["nuggets"]):
            known.add((qid, str(k)))
            label = labels.get(qid, {}).get(str(k))
            importance = nugget["importance"] if label is None else IMPORTANCE_LABELS[label]
            if label is None:
                unlabelled.append(f"{qid}:{k}")
            if importance == VITAL:
                vital.append(Nugget(nugget["text"], VITAL))
            elif importance == OKAY:
                okay.append(Nugget(nugget["text"], OKAY))
        out.turns.append(TurnNuggets(qid, record.get("query", ""), (*vital, *okay)))
    out.left_out = unlabelled
    _said("nugget(s) have no label and keep the importance they had", unlabelled)


def _citations(manifest, labels, out: NuggetLabels, known: set) -> None:
    max_citations = int(manifest["max_citations"])
    words = CITATION_LABELS
    for record in manifest["records"]:
        qid, run = record["qid"], record["run_id"]
        for index, sentence in enumerate(record["sentences"]):
            for position, passage_id in enumerate(list(dict.fromkeys(sentence["citations"]))[:max_citations]):
                item = f"{run}#{index}#{position}"
                known.add((qid, item))
                label = labels.get(qid, {}).get(item)
                if label is None:
                    out.left_out.append(f"{run}:{qid}:{index}:{passage_id}")
                else:
                    out.citations[run, qid, index, passage_id] = words[label]
    _said("cited pair(s) have no label (their answers will not be scored)", out.left_out)


def merge_written(manifest: dict, written: Sequence[WrittenNugget], *, min_writers: int = 1,
                  majority: str = "plurality", tie: str = "mean", rounding: str = "half-up") -> NuggetLabels:
    """The nuggets people wrote for the turns of a ``create`` manifest, merged per turn (see the module)."""
    if manifest["kind"] != "create":
        raise InputError(f"{manifest['kind']} tasks collect labels: aggregate them (aggregate_nugget_labels)",
                         argument="manifest")
    if min_writers < 1:
        raise InputError(f"expected a number >= 1, got {min_writers}", argument="min_writers")
    queries = {r["qid"]: r.get("query", "") for r in manifest["records"]}
    unknown = sorted({f"{w.turn_id} ({w.source}:{w.line})" for w in written if w.turn_id not in queries},
                     key=natural_key)
    # One vote per worker and nugget: a worker writing a nugget twice in a turn votes once (their first).
    merged: dict[str, dict[str, dict]] = {}
    for w in sorted(written, key=lambda w: (w.worker_id, w.source, w.line)):
        if w.turn_id not in queries:
            continue
        entry = merged.setdefault(w.turn_id, {}).setdefault(fold_text(w.text), {"text": w.text, "votes": {}})
        entry["votes"].setdefault(w.worker_id, 1 if w.importance == VITAL else 0)
    turns, dropped, counts = [], 0, {"written": len(written), "turns": 0, "nuggets": 0, "vital": 0}
    for qid in sorted(queries, key=natural_key):
        entries = [e for e in merged.get(qid, {}).values() if len(e["votes"]) >= min_writers]
        dropped += len(merged.get(qid, {})) - len(entries)
        if not entries:
            continue
        vital_votes = np.array([sum(e["votes"].values()) for e in entries])
        writers = np.array([len(e["votes"]) for e in entries])
        decided, _ = decide(np.stack([writers - vital_votes, vital_votes], axis=1), [0, 1], majority=majority, tie=tie,
                            rounding=rounding)
        nuggets = [Nugget(e["text"], VITAL if label else OKAY) for e, label in zip(entries, decided.tolist(),
                                                                                   strict=True)]
        ordered = (*(n for n in nuggets if n.importance == VITAL), *(n for n in nuggets if n.importance == OKAY))
        turns.append(TurnNuggets(qid, queries[qid], ordered))
        counts["turns"] += 1
        counts["nuggets"] += len(ordered)
        counts["vital"] += sum(n.importance == VITAL for n in ordered)
    if not turns:
        raise InputError("no nugget is left: none was written for these tasks' turns"
                         + (f" by {min_writers} workers or more (--min-writers)" if min_writers > 1 else ""),
                         argument="written")
    counts["below_min_writers"] = dropped
    out = NuggetLabels("create", turns=turns, unknown=unknown, merge=counts)
    out.left_out = [qid for qid in sorted(queries, key=natural_key) if qid not in {t.qid for t in turns}]
    _said("written nugget(s) are for turns these tasks do not hold and are ignored", unknown)
    _said("turn(s) have no nugget written" + (f" by {min_writers} workers or more" if min_writers > 1 else ""),
          out.left_out)
    return out
