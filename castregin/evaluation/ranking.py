"""How scores are compared when a turn's items are ranked: one rule for every castregin evaluation.

trec_eval ranks a topic's items by score descending, ties broken by item id in descending byte
order. Which scores tie depends on how it stores them, and "trec_eval 9.0.8" names two programs:

- the tag ``trec_eval-9.0.8`` of usnistgov/trec_eval (2023, commit fa69fd7 "Convert float to
  double"), castregin's reference, stores scores as C ``double`` (64 bits): ``"double"``, the default;
- the tag ``v9.0.8`` (2020) and every earlier release store them as ``float`` (32 bits), and so
  does pytrec_eval (hence ir_measures), built on that code: ``"float"``, for comparing with numbers
  computed that way.

The two give different numbers only where two scores of a turn are equal as 32-bit floats and not
as doubles (dense retrieval's 0.81234567 and 0.81234568): the float rule ties them and lets the
item ids decide. In both, ``-0.0`` equals ``0.0`` (a tie), as in C.
"""

from __future__ import annotations

import math

from ..errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: The score precisions castregin ranks with, and their bits.
SCORE_PRECISIONS = {"double": 64, "float": 32}
#: The rule of every evaluation unless asked otherwise: that of castregin's reference, trec_eval-9.0.8.
DEFAULT_SCORE_PRECISION = "double"
#: k of the overlap of two rankings of systems' top k (:func:`castregin.evaluation.analysis.top_k_overlap`)
#: when none is given; here, with no import, so that the command line's option can show it.
DEFAULT_TOP_K = 5
#: Its bits.
DEFAULT_BITS = SCORE_PRECISIONS[DEFAULT_SCORE_PRECISION]


def score_bits(precision: object) -> int:
    """The bits of ``precision`` (``"double"``: 64, ``"float"``: 32); anything else is an :class:`InputError`."""
    bits = SCORE_PRECISIONS.get(precision) if isinstance(precision, str) else None
    if bits is None:
        raise InputError(f"{precision!r} is not a score precision; give 'double' (trec_eval-9.0.8, the default) "
                         "or 'float' (pytrec_eval, ir_measures, trec_eval up to v9.0.8 of 2020)",
                         argument="score_precision")
    return bits


def float32(value: float) -> float:
    """``value`` rounded to a 32-bit float, as trec_eval up to v9.0.8 stores scores (beyond its range: an infinity)."""
    import struct  # here: most evaluations rank on doubles, and this module is imported by every one

    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def ranked_items(scores: Mapping[str, float], bits: int = DEFAULT_BITS) -> list[str]:
    """A turn's items in trec_eval's order: score descending, compared as ``bits``-bit floats (see
    :func:`score_bits`), ties by item id descending (Python compares ``str`` by code point, which is
    UTF-8's byte order)."""
    values = scores.values() if bits == 64 else map(float32, scores.values())
    # The (score, item) pairs in reverse; -0.0 == 0.0, so such pairs compare by item.
    return [item for _, item in sorted(zip(values, scores, strict=True), reverse=True)]
