"""Stratified qrels: the qrels of a sampled pool, as NIST's ``sample_eval.pl`` reads them.

One line per pooled item: ``turn 0 item stratum label``. The stratum names the part of the pool the
item was drawn from (castregin's ``pool --sample`` numbers them 1, 2, ... from the shallowest); the
label is the judgment of a sampled item (0 and up) or -1 for an item of the pool left out of the sample.
Any label below 0 is "in the pool, not sampled", as sample_eval reads it.

The qrels are a :class:`~castregin.data.StratifiedQrels` (a :class:`~castregin.data.Qrels` with the
strata), read by the qrels reader (:func:`castregin.formats.trec.parse_qrels`): here strictly, five
columns a line; by ``evaluate``, ``compare``, ``report`` and the API when a file's first line has five.
"""

from __future__ import annotations

import os

from ..data import Qrels, StratifiedQrels, is_judged
from .common import display_name, read_bytes, stem
from .trec import parse_qrels

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

#: The label of a pooled item left out of the sample (sample_eval.pl reads any label below 0 so).
NOT_SAMPLED = -1


def read_stratified_qrels(path: str | os.PathLike, name: str | None = None) -> StratifiedQrels:
    """Read stratified qrels (``turn 0 item stratum label``, integer labels, any whitespace)."""
    return parse_stratified_qrels(read_bytes(path), display_name(path), name or stem(path))


def parse_stratified_qrels(data: bytes, source: str, name: str) -> StratifiedQrels:
    """:func:`read_stratified_qrels` on the bytes of a file that ``source`` names in messages.

    A line of another width is an error (sample_eval.pl reads the file as one stream of fields, five at
    a time, so one missing field shifts every later line: castregin refuses what it would misread), as
    are a label that is not an integer and a (turn, item) listed twice.
    """
    qrels = parse_qrels(data, source, name, stratified=True)
    assert isinstance(qrels, StratifiedQrels)  # noqa: S101 - for the type checker: stratified=True makes one
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
            out.add(turn, item, stratum, label)
    return out, missing
