"""Stratified qrels: the qrels of a sampled pool, as NIST's ``sample_eval.pl`` reads them.

One line per pooled item: ``turn 0 item stratum label``. The stratum names the part of the pool the
item was drawn from (castregin's ``pool --sample`` numbers them 1, 2, ... from the shallowest); the
label is the judgment of a sampled item (0 and up) or -1 for an item of the pool left out of the sample.
Any label below 0 is "in the pool, not sampled", as sample_eval reads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..data import Qrels, is_judged
from ..errors import InputError
from .common import decode, display_name, read_bytes, stem
from .trec import _fields, _parse_int

STRATIFIED_WHAT = "stratified qrels file (turn 0 item stratum label)"
#: The label of a pooled item left out of the sample (sample_eval.pl reads any label below 0 so).
NOT_SAMPLED = -1


@dataclass
class StratifiedQrels(Qrels):
    """Labels per (turn, item) and the stratum each pooled item was sampled from.

    ``labels[turn][item]`` is the judgment (0 and up) or a label below 0 for an item of the pool that
    was not sampled; ``strata[turn][item]`` its stratum, a name (``"1"``, ``"2"``...).
    """

    strata: dict[str, dict[str, str]] = field(default_factory=dict)

    def judged(self) -> Qrels:
        """The sampled items' judgments as plain qrels (what evaluate reads; unsampled items left out)."""
        kept = {turn: {item: label for item, label in items.items() if is_judged(label)}
                for turn, items in self.labels.items()}
        return Qrels({turn: items for turn, items in kept.items() if items}, self.name, self.source)


def read_stratified_qrels(path: str | os.PathLike, name: str | None = None) -> StratifiedQrels:
    """Read stratified qrels (``turn 0 item stratum label``, integer labels, any whitespace)."""
    return parse_stratified_qrels(read_bytes(path), display_name(path), name or stem(path))


def parse_stratified_qrels(data: bytes, source: str, name: str) -> StratifiedQrels:
    """:func:`read_stratified_qrels` on the bytes of a file that ``source`` names in messages.

    A line of another width is an error (sample_eval.pl reads the file as one stream of fields, five at
    a time, so one missing field shifts every later line: castregin refuses what it would misread), as
    are a label that is not an integer and a (turn, item) listed twice.
    """
    qrels = StratifiedQrels(name=name, source=source)
    for line, fields in _fields(decode(data, source), source, STRATIFIED_WHAT):
        if len(fields) != 5:
            hint = ("; plain qrels (turn 0 item label) have no stratum: pool --sample --strata-out writes one"
                    if len(fields) == 4 else "")
            raise InputError(f"expected 5 columns (turn 0 item stratum label), found {len(fields)}{hint}",
                             source=source, line=line)
        turn, _, item, stratum, label_text = fields
        label = _parse_int(label_text, "label", source, line)
        labels = qrels.labels.setdefault(turn, {})
        if item in labels:
            raise InputError(f"item {item} is listed twice for turn {turn}", source=source, line=line)
        labels[item] = label
        qrels.strata.setdefault(turn, {})[item] = stratum
    return qrels


def format_stratified_qrels(qrels: StratifiedQrels) -> str:
    """Stratified qrels as text, space-separated, sorted by turn then item id (as qrels are written)."""
    return "".join(
        f"{turn} 0 {item} {qrels.strata[turn][item]} {qrels.labels[turn][item]}\n"
        for turn in sorted(qrels.labels) for item in sorted(qrels.labels[turn])
    )


def stratified(strata: Mapping[str, Mapping[str, str]], sampled: Mapping[str, Iterable[str]],
               judged: Qrels | None = None, name: str = "qrels") -> tuple[StratifiedQrels, int]:
    """The stratified qrels of a sample: every pooled item with its stratum, labelled from ``judged``.

    An item not in ``sampled`` is :data:`NOT_SAMPLED`; a sampled item takes its label in ``judged``, and
    one ``judged`` lacks (not judged yet) is written as not sampled too. Returns the qrels and how many
    sampled items had no judgment.
    """
    labels_of = judged.labels if judged is not None else {}
    out = StratifiedQrels(name=name)
    missing = 0
    for turn, items in strata.items():
        chosen = set(sampled.get(turn, ()))
        for item, stratum in items.items():
            label = NOT_SAMPLED
            if item in chosen:
                given = labels_of.get(turn, {}).get(item)
                if given is not None and is_judged(given):
                    label = given
                else:
                    missing += 1
            out.labels.setdefault(turn, {})[item] = label
            out.strata.setdefault(turn, {})[item] = stratum
    return out, missing
