"""Columns of unknown length appended to in place, in memory that holds their values and little more.

The streaming qrels reader (:func:`castregin.formats.columnar.read_qrels`) keeps only the lines'
items and labels, appended piece by piece: :class:`Growing` (numbers) and :class:`GrowingStrings`
(strings) grow without copying what they hold, and :func:`as_strings` reads the compact strings back.
"""

from __future__ import annotations

import contextlib
import mmap

import numpy as np

from ..arrays import arrow
from .arrow_csv import offsets


class Growing:
    """A numpy array appended to in place, for columns of unknown length read piece by piece.

    The values live in an anonymous private memory map that grows by ``mremap`` (``mmap.resize``):
    no copy, and pages of the spare capacity are not touched until written, so memory holds the
    values appended and nothing more (``ndarray.resize`` would zero-fill the new capacity, and
    concatenating pieces would hold everything twice). Where a map cannot be resized (not Linux),
    a numpy array grows instead.
    """

    def __init__(self, dtype, capacity: int = 1 << 12):
        self._start(dtype, capacity)

    def _start(self, dtype, capacity: int) -> None:
        self.dtype = np.dtype(dtype)
        self.size = 0
        self._map: mmap.mmap | None = mmap.mmap(-1, capacity * self.dtype.itemsize,
                                                 flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self._array: np.ndarray | None = None

    def _numpy(self) -> np.ndarray:
        """The array holding the values once the map could not grow (there is always one or the other)."""
        if self._array is None:
            raise ValueError("neither a memory map nor an array holds the values")
        return self._array

    @property
    def capacity(self) -> int:
        return len(self._map) // self.dtype.itemsize if self._map is not None else len(self._numpy())

    def append(self, values: np.ndarray) -> None:
        end = self.size + len(values)
        if end > self.capacity:
            self._grow(max(end, 2 * self.capacity))
        if self._map is not None:
            np.frombuffer(self._map, self.dtype, len(values), self.size * self.dtype.itemsize)[:] = values
        else:
            self._numpy()[self.size:end] = values
        self.size = end

    def _grow(self, capacity: int) -> None:
        if self._map is not None:
            try:
                self._map.resize(capacity * self.dtype.itemsize)
                return
            except (OSError, SystemError, ValueError):  # no mremap here
                self._array = np.frombuffer(self._map, self.dtype, self.size).copy()
                self._map.close()
                self._map = None
        self._numpy().resize(capacity, refcheck=False)

    def widen(self, dtype) -> None:
        """Hold values of ``dtype`` from now on (the ones held are converted)."""
        held = self.done()
        self._start(dtype, max(len(held), 1))
        self.append(held)

    def done(self) -> np.ndarray:
        """The values appended, the spare capacity given back."""
        if self.size == 0:
            return np.zeros(0, dtype=self.dtype)
        if self._map is not None:
            with contextlib.suppress(OSError, SystemError, ValueError):
                self._map.resize(self.size * self.dtype.itemsize)
            return np.frombuffer(self._map, self.dtype, self.size)
        array = self._numpy()
        array.resize(self.size, refcheck=False)
        return array


class GrowingStrings:
    """Strings appended array by array, held as the buffers of one pyarrow array.

    While every string has the same length (ids of one width, as zero-padded ids are), no offsets
    are kept and the result is a ``fixed_size_binary`` array (:func:`as_strings` reads it as
    strings): four bytes a string less, a quarter of a large qrels' memory.
    """

    def __init__(self):
        self.width: int | None = None  # the common length so far; -1 once lengths differ
        self.count = 0
        self.offsets: Growing | None = None
        self.data = Growing(np.uint8, 1 << 16)

    def append(self, strings) -> None:
        """Append the values of a pyarrow string (or binary) array."""
        if not len(strings):
            return
        bounds = offsets(strings)
        begin, end = int(bounds[0]), int(bounds[-1])
        base = self.data.size
        if base + end - begin >= 1 << 31:
            raise OverflowError("strings of more than 2 GB in all")  # beyond int32 offsets
        if self.width != -1:
            lengths = np.diff(bounds)
            width = int(lengths[0]) if self.width is None else self.width
            if width and (lengths == width).all():
                self.width = width
            else:  # lengths differ from now on: offsets for the strings held so far, then as they come
                self.offsets = Growing(np.int32, max(self.count + len(strings), 1 << 12) + 1)
                self.offsets.append(np.arange(self.count + 1, dtype=np.int32) * np.int32(self.width or 0))
                self.width = -1
        self.data.append(np.frombuffer(strings.buffers()[2], np.uint8, end - begin, begin))
        if self.offsets is not None:
            self.offsets.append(bounds[1:] + np.int32(base - begin))
        self.count += len(strings)

    def done(self):
        """The strings as a pyarrow array (sharing the buffers' memory): string, or fixed_size_binary."""
        pa = arrow()[0]
        data = self.data.done()
        if self.offsets is None:
            return pa.Array.from_buffers(pa.binary(self.width or 1), self.count, [None, pa.py_buffer(data)])
        bounds = self.offsets.done()
        return pa.Array.from_buffers(pa.string(), len(bounds) - 1, [None, pa.py_buffer(bounds), pa.py_buffer(data)])


def as_strings(array):
    """A pyarrow string array of ``array``'s values: itself, or, for a ``fixed_size_binary`` array (see
    :class:`GrowingStrings`), the same bytes with offsets (no copy of the bytes)."""
    pa = arrow()[0]
    if not pa.types.is_fixed_size_binary(array.type):
        return array
    width, count = array.type.byte_width, len(array)
    bounds = np.arange(count + 1, dtype=np.int32) * np.int32(width)
    data = array.buffers()[1].slice(array.offset * width, count * width) if count else pa.py_buffer(b"")
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(bounds), data])
