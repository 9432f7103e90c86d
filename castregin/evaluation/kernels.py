"""The array kernels of trec_eval's arithmetic: per-turn sums, positions and maxima over the engine's arrays.

What the streaming engine (:mod:`castregin.evaluation.engine`) and the measures' vectorised computations
(:mod:`castregin.evaluation.measures`) share: sums added strictly left to right, as trec_eval's C loops
add them (numpy's pairwise ``sum`` would differ in the last bits), running sums and maxima within each
turn, and the C library's functions (``log2``, ``log``) per distinct value. Every array holds the lines
of many turns one turn after the other: ``segments`` (non-decreasing) says which turn each line is.

Below both the engine and the measures, so that neither imports the other for them. numpy is imported
when a kernel runs, not with this module: the measures import it, and parsing a measure's name (every
command line) must not load numpy (tests/cli/test_startup.py).
"""

from __future__ import annotations

import functools
import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np


@functools.cache
def _log2_values(size: int) -> np.ndarray:
    # A new read-only array per size, never a shared list grown in place: runs are scored in threads.
    import numpy as np

    table = np.array([math.log2(i) if i else 0.0 for i in range(size)])
    table.flags.writeable = False
    return table


def log2_table(n: int) -> np.ndarray:
    """``log2(i)`` for i in 0..n-1 from the C library, as trec_eval computes it (index 0 unused).

    Read-only; sizes are rounded up to a power of two, so a handful of tables serve every run.
    """
    return _log2_values(max(64, 1 << max(n - 1, 1).bit_length()))[:n]


def _longest_first(segments: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The segments of a non-empty non-decreasing ``segments``, longest first (ties in order): each one's start
    and length, and for each step j how many segments are longer than j (those still running)."""
    import numpy as np

    starts = np.flatnonzero(np.r_[True, segments[1:] != segments[:-1]])
    lengths = np.diff(np.r_[starts, len(segments)])
    by_length = np.argsort(-lengths, kind="stable")
    starts, lengths = starts[by_length], lengths[by_length]
    running = np.searchsorted(-lengths, -np.arange(int(lengths[0])), side="left")
    return starts, lengths, running


def sequential_sums(values: np.ndarray, segments: np.ndarray, n: int) -> np.ndarray:
    """Per-segment sums of ``values``, added strictly left to right as a C loop does.

    ``segments`` (non-decreasing, in ``0..n-1``) says which segment each value belongs to.
    Step j adds the j-th value of every segment that has one: as many vector additions as the
    longest segment, each over the segments still running.
    """
    import numpy as np

    out = np.zeros(n)
    if len(values) == 0:
        return out
    starts, lengths, running = _longest_first(segments)
    ids = segments[starts]
    acc = np.zeros(len(starts))
    for j, count in enumerate(running.tolist()):
        if count == 1:
            # One segment left: numpy's cumsum is a sequential accumulation too.
            rest = values[starts[0] + j: starts[0] + lengths[0]]
            acc[0] = np.cumsum(np.r_[acc[0], rest])[-1]
            break
        acc[:count] += values[starts[:count] + j]
    out[ids] = acc
    return out


def segment_positions(segments: np.ndarray) -> np.ndarray:
    """0-based position of each element within its run of equal (sorted) segment ids."""
    import numpy as np

    if len(segments) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, segments[1:] != segments[:-1]])
    lengths = np.diff(np.r_[starts, len(segments)])
    return np.arange(len(segments)) - np.repeat(starts, lengths)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator as doubles, 0 where the denominator is 0 (trec_eval's guard)."""
    import numpy as np

    numerator = numerator.astype(np.float64)
    return np.divide(numerator, denominator.astype(np.float64), out=np.zeros_like(numerator), where=denominator > 0)


def sequential_prefix_sums(values: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Each value's running sum within its segment, added strictly left to right as a C loop does.

    ``segments`` is non-decreasing; as :func:`sequential_sums`, step j adds the j-th value of every
    segment that has one.
    """
    import numpy as np

    out = np.empty(len(values))
    if len(values) == 0:
        return out
    starts, lengths, running = _longest_first(segments)
    acc = np.zeros(len(starts))
    for j, count in enumerate(running.tolist()):
        if count == 1:
            begin, end = starts[0] + j, starts[0] + lengths[0]
            out[begin:end] = np.cumsum(np.r_[acc[0], values[begin:end]])[1:]
            break
        at = starts[:count] + j
        acc[:count] += values[at]
        out[at] = acc[:count]
    return out


def segment_suffix_max(values: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Each value's maximum with the values after it in its segment (``segments`` non-decreasing), exactly:
    on the ranks of the distinct values, so that no arithmetic touches them."""
    import numpy as np

    if len(values) == 0:
        return values.copy()
    distinct, inverse = np.unique(values, return_inverse=True)
    block = (int(segments[-1]) - segments[::-1]).astype(np.int64) * len(distinct)
    # Reversed, the segments come in decreasing order: each one's keys lie above the one's before.
    best = np.maximum.accumulate(block + inverse[::-1]) - block
    return distinct[best[::-1]]


def libm(function, values: np.ndarray) -> np.ndarray:
    """``function`` (``math.log``, ``math.log2``: the C library's, as trec_eval calls it) of each value,
    computed once per distinct value (numpy's own versions may differ in the last bit)."""
    import numpy as np

    if len(values) == 0:
        return np.zeros(0)
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([function(value) for value in distinct.tolist()], dtype=np.float64)[inverse]


def prefix_before(prefix: np.ndarray, segment: np.ndarray, position: np.ndarray, depth: int | None,
                  n: int) -> np.ndarray:
    """Per segment, the running sum ``prefix`` (of lines in (segment, position) order) over its lines ranked above
    ``depth`` (all with None): the sum a loop stopping there gives, to the bit; 0 where no line is."""
    import numpy as np

    counts = np.bincount(segment if depth is None else segment[position < depth], minlength=n)
    first = segment_starts(segment, n)[:-1]
    out = np.zeros(n)
    some = counts > 0
    out[some] = prefix[first[some] + counts[some] - 1]
    return out


def segment_starts(segments: np.ndarray, n: int) -> np.ndarray:
    """Where each of ``n`` segments begins among ``segments`` (non-decreasing; an empty one where the next begins)."""
    import numpy as np

    return np.searchsorted(segments, np.arange(n + 1))
