"""Numbers as people read them: the one number formatter of every table.

Fixed decimals (four, like trec_eval), counts as integers, ``-`` where there is no value and ``nan``
where a value is undefined (some tables say ``-`` for both). JSON for programs is written by
:func:`castregin.formats.common.json_text` (no NaN there: ``null``).
"""

from __future__ import annotations

import math

#: A cell with no value at all (a measure without per-turn values, on a per-turn row).
MISSING = "-"


def fixed(value, decimals: int = 4, *, sign: bool = False, integer: bool = False, undefined: str = "nan") -> str:
    """``value`` with ``decimals`` decimals (``+`` first with ``sign``), a whole ``integer`` as one.

    ``None`` is :data:`MISSING`; NaN is ``undefined``; booleans are 0 and 1; Python ints stay ints.
    """
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return f"{value:+d}" if sign else str(value)
    value = float(value)
    if math.isnan(value):
        return undefined
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if integer and value.is_integer():
        return f"{int(value):+d}" if sign else str(int(value))
    return f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}"


def p_value(p: float | None, decimals: int = 4) -> str:
    """A p-value: ``decimals`` decimals, or two significant digits when smaller (``1.7e-09``)."""
    if p is not None and 0 < p < 10 ** -decimals:
        return f"{p:.1e}"
    return fixed(p, decimals)
