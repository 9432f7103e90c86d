"""trec_eval's output layout: ``measure<pad to 22>\\tquery\\tvalue``, values as trec_eval prints them.

The one place that writes this layout, for ``castregin trec_eval`` and ``evaluate --format trec``.
trec_eval prints floats with ``%6.4f`` and counts with ``%ld``; Python's ``%`` formatting rounds the
double's exact value as glibc's printf does, so the digits agree.
"""

from __future__ import annotations

import math
from itertools import islice

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence


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
    at 50,000 topics). Lines that come as columns (a streamed evaluation's per-query values: ``lines.blocks``
    gives each block of topics' ``(topics, columns)``, ``lines.summary`` the ``all`` lines) are written a
    block at a time by :func:`trec_eval_columns_text`."""
    blocks = getattr(lines, "blocks", None)
    if blocks is not None:
        for topics, columns in blocks():
            yield trec_eval_columns_text(topics, columns)
        lines = lines.summary  # type: ignore[attr-defined]
    remaining = iter(lines)
    while block := list(islice(remaining, LINES_PER_CHUNK)):
        yield trec_eval_text(block, zscores)


def trec_eval_columns_text(topics: Sequence[str], columns: Sequence[tuple[str, object, str]]) -> str:
    """The per-query lines of ``topics``, topic by topic, of measures given as columns ``(name, values, kind)``
    (a value per topic, in their order; ``kind``: ``text``, quoted; ``integer``, a count; ``float``): the text
    :func:`trec_eval_text` writes for them, made whole (by pyarrow's kernels, a few calls for all the lines)
    rather than line by line."""
    import numpy as np

    from ..arrays import arrow, arrow_indices, arrow_values, repeated_strings, strings

    if not topics or not columns:
        return ""
    pa, pc, _ = arrow()
    count, width = len(topics), len(columns)
    # Each kind's values as one array, topic by topic (line t * width + c is column c's line for topic t).
    by_kind: dict[str, list[int]] = {}
    for c, (_, _, kind) in enumerate(columns):
        by_kind.setdefault(kind, []).append(c)
    parts, where = [], np.empty((count, width), dtype=np.int64)
    start = 0
    for kind, chosen in by_kind.items():
        values = np.stack([np.asarray(columns[c][1]) for c in chosen], axis=1)  # topics x chosen columns
        if kind == "text":
            texts = strings([f"'{text}'" for text in values.ravel().tolist()])
        elif kind == "integer":
            texts = pc.cast(arrow_values(values.ravel().astype(np.int64)), pa.string())
        else:
            texts = _fixed_four(values.ravel().astype(np.float64))
        parts.append(texts)
        where[:, chosen] = start + np.arange(values.size).reshape(values.shape)
        start += values.size
    texts = pa.concat_arrays(parts).take(arrow_indices(where.ravel()))
    names = strings([f"{name:<22}" for name, _, _ in columns])
    between = strings([f"\t{topic}\t" for topic in topics])
    lines = pc.binary_join_element_wise(names.take(arrow_indices(np.tile(np.arange(width), count))),
                                        between.take(arrow_indices(np.repeat(np.arange(count), width))), texts,
                                        repeated_strings("\n", len(texts)), repeated_strings("", len(texts)))
    offsets = np.frombuffer(lines.buffers()[1], np.int32, len(lines) + 1, lines.offset)
    return lines.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]].decode("utf-8")


#: Values whose ``%6.4f`` :func:`_fixed_four` computes in integers: smaller in magnitude than this (the others,
#: rare in a measure's values, are printed one by one).
_FIXED_BOUND = 1e5


def _fixed_four(values):
    """``%6.4f`` of each value (as :func:`trec_eval_value`), as a pyarrow string array.

    printf rounds the double's exact value times 10^4 to the nearest integer, ties to even; here it is
    multiplied in doubles (within 1e-7 of the exact product below the bound), so where the product is not
    within 1e-6 of a tie the nearest integer is the same; the rest (ties, infinities, NaN, the large) are
    formatted one by one. A negative value keeps its sign even where it rounds to 0, as printf's does.
    """
    import numpy as np

    from ..arrays import arrow, arrow_values, repeated_strings, strings

    pa, pc, _ = arrow()
    count = len(values)
    with np.errstate(over="ignore", invalid="ignore"):  # infinities and NaN: formatted one by one below
        scaled = values * 10000.0
        alone = ~(np.abs(values) < _FIXED_BOUND) | (np.abs(scaled - np.floor(scaled) - 0.5) <= 1e-6)
    units = np.abs(np.rint(np.where(alone, 0.0, scaled))).astype(np.int64)
    # Constant strings as arrays: a pyarrow scalar's first use imports pandas (a quarter of a second).
    texts = pc.binary_join_element_wise(repeated_strings("-", count, np.signbit(values) & ~alone),
                                        pc.cast(arrow_values(units // 10000), pa.string()),
                                        repeated_strings(".", count),
                                        pc.utf8_lpad(pc.cast(arrow_values(units % 10000), pa.string()), width=4,
                                                     padding="0"), repeated_strings("", count))
    if alone.any():
        exact = strings([trec_eval_value(value) for value in values[alone].tolist()])
        texts = pc.replace_with_mask(texts, arrow_values(alone), exact)
    return texts


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
