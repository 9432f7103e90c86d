"""trec_eval's ``-Z``: each topic's values as z-scores from a file of means and deviations (``get_zscores.c``,
``convert_zscores.c``), as :func:`castregin.evaluation.plain.evaluate` applies them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .trec_rules import TrecEvalRefusal

#: The value trec_eval gives a measure that has no mean and deviation in the ``-Z`` file.
MISSING_ZSCORE = -1000000.0


@dataclass(frozen=True)
class ZScores:
    """A ``-Z`` file: per topic, its lines ``(measure, mean, deviation)`` sorted by measure (byte order),
    topics sorted by id, as trec_eval holds them."""

    topics: tuple[str, ...]
    #: Per topic (same order), the sorted lines.
    lines: tuple[tuple[tuple[str, float, float], ...], ...]
    source: str | None = None

    @classmethod
    def of(cls, lines: Sequence[tuple[str, str, float, float]], source: str | None = None) -> ZScores:
        """From ``(topic, measure, mean, deviation)`` lines (as :func:`castregin.formats.zscores.read_zscores`
        reads)."""
        by_topic: dict[str, list[tuple[str, float, float]]] = {}
        for topic, measure, mean, deviation in sorted(lines, key=lambda line: (line[0], line[1])):
            by_topic.setdefault(topic, []).append((measure, mean, deviation))
        return cls(tuple(by_topic), tuple(tuple(topic_lines) for topic_lines in by_topic.values()), source)


def _search(keys: Sequence[str], key: str, next_key: str | None) -> int | None:
    """trec_eval's binary search of ``convert_zscores.c``: its upper bound is one past the last entry.

    Returns the index found (``len(keys)`` for ``next_key``, the entry stored after the table), or None.
    A probe past the table with no ``next_key`` is memory trec_eval does not own: :class:`TrecEvalRefusal`.
    """
    start, end = 0, len(keys)
    while start <= end:
        current = (start + end) // 2
        if current == len(keys):
            if next_key is None:
                raise _PastTheTable
            probe = next_key
        else:
            probe = keys[current]
        if key < probe:
            end = current - 1
        elif key > probe:
            start = current + 1
        else:
            return current
    return None


class _PastTheTable(Exception):
    pass


def zscore_values(zscores: ZScores, topic: str, names: Sequence[str], values: list[float]) -> list[float]:
    """One topic's values as trec_eval's ``-Z`` turns them (``te_convert_to_zscore``).

    ``(value - mean) / deviation``; a deviation of 0 gives 0 where the value is the mean; a topic
    or measure the file lacks, or a deviation of 0 with another value, gives -1000000.
    """
    try:
        found = _search(zscores.topics, topic, None)
    except _PastTheTable:
        raise TrecEvalRefusal(
            f"topic {topic} sorts after every topic of the Z-score file {zscores.source or ''}: trec_eval 9.0.8 "
            "then reads past the end of its table (it crashes or reads garbage); add the topic's lines to the "
            "file") from None
    if found is None:
        return [MISSING_ZSCORE] * len(values)
    lines = zscores.lines[found]
    keys = [line[0] for line in lines]
    following = zscores.lines[found + 1][0] if found + 1 < len(zscores.lines) else None
    out = []
    for name, value in zip(names, values, strict=True):
        try:
            index = _search(keys, name, following[0] if following else None)
        except _PastTheTable:
            raise TrecEvalRefusal(
                f"measure {name} sorts after every measure of topic {topic} in the Z-score file "
                f"{zscores.source or ''}: trec_eval 9.0.8 then reads past the end of its table (it crashes or "
                f"reads garbage); add a line for {name} of topic {topic}") from None
        if index is None:
            out.append(MISSING_ZSCORE)
            continue
        # Past the topic's lines, trec_eval's search reads the next topic's first line.
        row = lines[index] if index < len(lines) else following
        if row is None:
            raise ValueError(f"{name}: found past the last topic of the Z-score table")  # _search refuses that
        _, mean, deviation = row
        if deviation:
            out.append((value - mean) / deviation)
        else:
            out.append(0.0 if value == mean else MISSING_ZSCORE)
    return out
