"""Integer labels: exact rounding of their means, and the turns that hold a label at a level.

The judging stage (aggregating a crowd) and the track stage (combining criteria) both turn several
labels into one; they share these rules, computed in integers so that 2.5 never becomes 2 by way of
floating point (Python's ``round`` rounds half to even).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .errors import InputError

ROUNDINGS = ("half-up", "half-even", "floor", "ceil")


def divide_rounded(numerator, denominator, rounding: str = "half-up"):
    """``numerator / denominator`` rounded to an integer, exactly, for ints or integer arrays.

    ``half-up`` rounds .5 towards +infinity (1.5 -> 2, 2.5 -> 3, -1.5 -> -1), ``half-even`` to the even
    neighbour (2.5 -> 2), ``floor`` and ``ceil`` as their names say. ``denominator`` must be > 0.
    """
    scalar = isinstance(numerator, int) and isinstance(denominator, int)
    if scalar:
        # Python's ints (exact at any size, // floors as numpy's does): a mean of a few labels, which
        # should not import numpy (the evaluation of a small run loads this module).
        n, d = numerator, denominator
    else:
        import numpy as np

        n = np.asarray(numerator, dtype=np.int64)
        d = np.asarray(denominator, dtype=np.int64)
    if rounding == "half-up":
        result = (2 * n + d) // (2 * d)
    elif rounding == "floor":
        result = n // d
    elif rounding == "ceil":
        result = -((-n) // d)
    elif rounding == "half-even":
        quotient = n // d
        twice_rest = 2 * (n - quotient * d)
        result = quotient + (twice_rest > d) + ((twice_rest == d) & (quotient % 2 == 1))
    else:
        raise InputError(f"unknown rounding {rounding!r}; expected one of {', '.join(ROUNDINGS)}",
                         argument="rounding")
    if scalar:
        return result
    import numpy as np  # loaded above already: the arrays are numpy's
    if np.ndim(result) == 0 and np.ndim(numerator) == 0 and np.ndim(denominator) == 0:
        return int(result)
    return result


def mean_rounded(labels: Sequence[int], rounding: str = "half-up") -> int:
    """The mean of integer labels as an integer (half up by default: CAsT-ReGIn's rule)."""
    if not labels:
        raise InputError("no labels to average", argument="labels")
    return divide_rounded(sum(labels), len(labels), rounding)


def turns_with_label(labels: Mapping[str, Mapping[str, int]], min_label: int) -> list[str]:
    """The turns (in order) where some item has a label >= ``min_label``."""
    return [turn for turn, items in labels.items() if any(label >= min_label for label in items.values())]


def distinct_criteria(criteria: Sequence[str]) -> list[str]:
    """The criteria as a list; one listed twice is an :class:`InputError` naming ``criteria`` (the one rule of
    every command's ``--criteria`` and of the API)."""
    if len(set(criteria)) != len(criteria):
        raise InputError("a criterion is listed twice", argument="criteria")
    return list(criteria)
