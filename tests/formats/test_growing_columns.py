"""The columns the streaming qrels reader grows in place (castregin.formats.growing)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from castregin.formats.growing import Growing, GrowingStrings, as_strings


def test_growing_holds_what_was_appended_across_many_regrowths():
    growing = Growing(np.int32, capacity=3)
    expected = []
    for start in range(0, 10_000, 7):
        piece = np.arange(start, start + 7, dtype=np.int32)
        growing.append(piece)
        expected.extend(piece.tolist())
    assert growing.done().tolist() == expected


def test_growing_widens_without_losing_values():
    growing = Growing(np.int8)
    growing.append(np.array([1, -2, 3], dtype=np.int8))
    growing.widen(np.int64)
    growing.append(np.array([1 << 40], dtype=np.int64))
    done = growing.done()
    assert done.dtype == np.int64 and done.tolist() == [1, -2, 3, 1 << 40]


def test_an_empty_growing_column_is_empty():
    assert Growing(np.float64).done().tolist() == []
    strings = GrowingStrings()
    strings.append(pa.array([], type=pa.string()))
    assert as_strings(strings.done()).to_pylist() == []


def test_strings_of_one_width_drop_their_offsets_and_read_back_as_strings():
    strings = GrowingStrings()
    strings.append(pa.array(["Q001", "Q002"]).slice(1))
    strings.append(pa.array(["Q003", "Q004"]))
    held = strings.done()
    assert pa.types.is_fixed_size_binary(held.type)
    assert as_strings(held).to_pylist() == ["Q002", "Q003", "Q004"]
    assert as_strings(held.slice(1, 2)).to_pylist() == ["Q003", "Q004"]
    assert as_strings(held.take(pa.array([2, 0]))).to_pylist() == ["Q004", "Q002"]


@pytest.mark.parametrize("pieces", [
    [["Q001", "Q002"], ["Q0003"], ["Q4"]],   # the width changes in the second piece
    [["Q1", "Q22"], ["Q333"]],               # and within the first
    [["a"], ["bb", "cc"], ["d"]],
])
def test_strings_of_several_widths_keep_offsets(pieces):
    strings = GrowingStrings()
    for piece in pieces:
        strings.append(pa.array(piece))
    held = strings.done()
    assert held.type == pa.string()
    assert held.to_pylist() == [value for piece in pieces for value in piece]
