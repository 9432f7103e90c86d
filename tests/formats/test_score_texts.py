"""The text of a score in a converted run is ``repr(float(score))`` (SPEC "Converting runs"), whether msgspec
or ``repr`` writes it (``score_texts``): checked against ``repr`` itself on doubles of every exponent."""

from __future__ import annotations

import math
import struct

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from castregin.formats.trec import score_texts

doubles = st.integers(0, 2**64 - 1).map(lambda bits: struct.unpack("<d", bits.to_bytes(8, "little"))[0])
scores = st.one_of(st.floats(), doubles, st.floats(min_value=-1e3, max_value=1e3), st.integers(-(2**60), 2**60),
                   st.sampled_from([0.0, -0.0, 5e-324, 1e-4, 9.999999999999999e-05, 1e-5, 1e16, 9999999999999998.0,
                                    1e22, math.inf, -math.inf, math.nan, True]))


@settings(deadline=None)
@given(st.lists(scores, max_size=30))
@example([0.1, 1e-07, 2.5])  # one score written with an exponent: the turn is repr's
@example([1.0, 2, 3.5])  # an integer among floats
@example([19.988618508798684, 1e+16])
def test_score_texts_are_repr(values):
    assert score_texts(values) == [repr(float(value)) for value in values]


def test_random_doubles_in_bulk():
    rng = np.random.default_rng(25)
    bits = rng.integers(0, 2**63, size=25_000, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, 25_000,
                                                                                           dtype=np.uint64)
    values = [value for value in bits.view(np.float64).tolist() if math.isfinite(value)]
    ranges = (rng.random(25_000) * 10.0 ** rng.integers(-6, 18, 25_000)).tolist()
    for turn in (values[i:i + 1000] for i in range(0, len(values), 1000)):
        assert score_texts(turn) == [repr(value) for value in turn]
    for turn in (ranges[i:i + 1000] for i in range(0, len(ranges), 1000)):
        assert score_texts(turn) == [repr(value) for value in turn]


def test_what_msgspec_cannot_write_is_repr_too():
    assert score_texts([np.float32(0.5), 1.5]) == ["0.5", "1.5"]
    assert score_texts((1.5, -0.0)) == ["1.5", "-0.0"]


def test_no_scores_have_no_texts():
    # An empty turn: msgspec writes "[]", which split on "," would give one empty text.
    assert score_texts([]) == [repr(float(value)) for value in []] == []
