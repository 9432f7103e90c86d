"""trec_eval's output layout: ``measure<pad to 22>\\tquery\\tvalue``, values as trec_eval prints them.

The one place that writes this layout, for ``castregin trec_eval`` and ``evaluate --format trec``.
trec_eval prints floats with ``%6.4f`` and counts with ``%ld``; Python's ``%`` formatting rounds the
double's exact value as glibc's printf does, so the digits agree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice


def trec_eval_value(value) -> str:
    """A value as trec_eval prints it: text as is, an int with ``%ld``, a float with ``%6.4f``."""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        # glibc prints a NaN's sign (trec_eval's 0/0 gives -nan on x86); Python's % does not.
        return ("-nan" if math.copysign(1.0, value) < 0 else "nan").rjust(6)
    return f"{value:6.4f}"


def trec_eval_text(lines: Iterable[tuple], zscores: bool = False) -> str:
    """``(measure, query, value)`` lines in trec_eval's layout (``%-22s\\t%s\\t...``).

    ``zscores``: trec_eval -Z's layout, a ``Z`` before the name of every numeric line (``Z%-22s``).
    """
    return "".join(f"{'Z' if zscores and not isinstance(value, str) else ''}{name:<22}\t{query}\t"
                   f"{trec_eval_value(value)}\n" for name, query, value in lines)


#: Lines put into one piece of text at a time by :func:`trec_eval_chunks`.
LINES_PER_CHUNK = 1 << 16


def trec_eval_chunks(lines: Iterable[tuple], zscores: bool = False) -> Iterator[str]:
    """:func:`trec_eval_text` of ``lines``, :data:`LINES_PER_CHUNK` lines at a time: the text of a large output
    written as it is made, never held whole (``castregin trec_eval -q -m all_trec`` prints 4.6 million lines
    at 50,000 topics)."""
    remaining = iter(lines)
    while block := list(islice(remaining, LINES_PER_CHUNK)):
        yield trec_eval_text(block, zscores)


def render_trec_rows(rows: Sequence[tuple], counts=frozenset()) -> str:
    """``evaluate``'s ``(run, qrels, measure, turn, value)`` rows in trec_eval's layout.

    One block per (run, qrels), in the order given, each as trec_eval prints one evaluation: the
    per-turn lines (turns in byte order, measures in the order asked), then ``runid`` (the run's name
    as evaluate shows it) and the ``all`` lines. ``counts`` are printed as integers. With several
    qrels, a ``qrels`` line names the qrels of each block (trec_eval has none: it takes one).
    """
    blocks: dict[tuple[str, str], list[tuple]] = {}
    for run, qrels, measure, turn, value in rows:
        blocks.setdefault((run, qrels), []).append((measure, turn, value))
    several_qrels = len({qrels for _, qrels in blocks}) > 1
    out = []
    for (run, qrels), block in blocks.items():
        measures = list(dict.fromkeys(measure for measure, _, _ in block))
        values = {(measure, turn): value for measure, turn, value in block}
        turns = sorted({turn for _, turn, _ in block if turn != "all"})
        lines: list[tuple[str, str, object]] = [(m, turn, _value(m, values[m, turn], counts))
                                                for turn in turns for m in measures if (m, turn) in values]
        lines.append(("runid", "all", run))
        if several_qrels:
            lines.append(("qrels", "all", qrels))
        lines.extend((m, "all", _value(m, values[m, "all"], counts)) for m in measures if (m, "all") in values)
        out.append(trec_eval_text(lines))
    return "".join(out)


def _value(measure: str, value: float, counts) -> int | float:
    return int(value) if measure in counts else float(value)
