"""Arrays between pyarrow and numpy, and work spread over threads: what the readers and the engine share.

The one place where the array libraries are imported on first use: this module imports neither,
so that ``castregin --help`` and the evaluation of a small run (plain Python) pay for neither
(numpy and pyarrow take a quarter of a second to import). pyarrow's arrays are viewed through
their buffers, since pyarrow's own conversions import pandas (another quarter of a second).
"""

from __future__ import annotations

import os
import sys
import time
from itertools import pairwise

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy as np

#: Threads for the work on one run's batches (callers running several runs at once pass 1).
THREADS = min(4, os.cpu_count() or 1)

_arrow_modules: tuple | None = None
#: Whether the command line asked for jemalloc (see :func:`choose_allocator`) before pyarrow was loaded.
_allocator_wanted = False


def arrow() -> tuple:
    """``(pyarrow, pyarrow.compute, pyarrow.csv)``, imported on first use."""
    global _arrow_modules  # noqa: PLW0603 - a cache of the modules, filled on first use (lazy import)
    if _arrow_modules is None:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pa_csv

        _arrow_modules = (pa, pc, pa_csv)
        if _allocator_wanted:
            _set_allocator()
    return _arrow_modules


def choose_allocator() -> None:
    """Let pyarrow allocate with jemalloc (else malloc), unless ``ARROW_DEFAULT_MEMORY_POOL`` chooses.

    For a command-line process, which owns its allocator. pyarrow's default, mimalloc, takes
    fresh memory in huge pages that the kernel must zero (and, with transparent huge pages on
    request, compact) before use: a third of a second more system time on a 200 MB run, and up
    to a second in some processes. jemalloc reuses freed memory and is as fast otherwise. Takes
    effect when pyarrow is first imported (at once if it is loaded already): a command that ends
    up not needing pyarrow does not load it for this.
    """
    global _allocator_wanted  # noqa: PLW0603 - remembered for the lazy import above, once per process
    _allocator_wanted = True
    if _arrow_modules is not None:
        _set_allocator()


def _set_allocator() -> None:
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return
    pa = arrow()[0]  # loaded: this runs once pyarrow is
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:  # a pyarrow built without jemalloc
        pa.set_memory_pool(pa.system_memory_pool())


def to_numpy(array, dtype, fill=None) -> np.ndarray:
    """A pyarrow array or chunked array of a fixed-width type as numpy ``dtype``.

    A view of a single array's buffer; chunks are concatenated. Nulls become ``fill``, which an
    array with nulls needs.
    """
    import numpy as np

    if hasattr(array, "chunks"):
        chunks = array.chunks
        if len(chunks) != 1:
            if not chunks:
                return np.zeros(0, dtype)
            return np.concatenate([to_numpy(chunk, dtype, fill) for chunk in chunks])
        array = chunks[0]
    dtype = np.dtype(dtype)
    values = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)
    if array.null_count:
        if fill is None:
            raise ValueError("to_numpy needs a fill value for an array with nulls")
        bits = np.frombuffer(array.buffers()[0], dtype=np.uint8)
        valid = np.unpackbits(bits, bitorder="little")[array.offset: array.offset + len(array)].view(bool)
        values = np.where(valid, values, fill).astype(dtype, copy=False)
    return values


#: The longest wait for pyarrow to let go of bytes it read (:func:`read_csv_bytes`); it takes microseconds.
_RELEASE_SECONDS = 5.0


def read_csv_bytes(data: bytes, **options):
    """``pyarrow.csv.read_csv`` of ``data``, returned only once pyarrow has let go of the bytes.

    pyarrow's threaded reader drops its last hold on its input on one of its own threads, after
    ``read_csv`` has returned (about half of the time), and that takes the GIL, the input being a
    Python object. A command that stops on an error found in the table exits at once: were the
    interpreter finalizing by then, that thread would be ended inside C++ code, which aborts the
    process ("terminate called without an active exception", SIGABRT: ``castregin agreement``
    with a ``nan`` label, about once in fifty runs). So the caller waits, the GIL released, until
    the bytes are its own again.
    """
    pa, _, pa_csv = arrow()
    held_before = sys.getrefcount(data)
    try:
        return pa_csv.read_csv(pa.py_buffer(data), **options)
    finally:
        deadline = time.monotonic() + _RELEASE_SECONDS
        while sys.getrefcount(data) > held_before and time.monotonic() < deadline:
            time.sleep(0.0001)


def arrow_indices(indices: np.ndarray):
    """Integer indices as a pyarrow int64 array (for ``take``), sharing numpy's memory."""
    import numpy as np

    pa = arrow()[0]
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(indices), [None, pa.py_buffer(indices)])


def strings(values: Iterable[str]):
    """Python strings as a pyarrow string array (the string column the readers produce), built from its buffers:
    ``pyarrow.array`` would import pandas on its first call (a quarter of a second)."""
    import numpy as np

    pa = arrow()[0]
    encoded = [value.encode() for value in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(value) for value in encoded], out=offsets[1:])
    kind = pa.string() if offsets[-1] < 1 << 31 else pa.large_string()
    if kind == pa.string():
        offsets = offsets.astype(np.int32)
    return pa.Array.from_buffers(kind, len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def repeated_strings(text: str, count: int, where: np.ndarray | None = None):
    """``text`` ``count`` times (or where ``where`` holds, "" elsewhere) as a pyarrow string array, built from its
    buffers (see :func:`strings`): a pyarrow scalar would import pandas too."""
    import numpy as np

    pa = arrow()[0]
    chosen = np.ones(count, dtype=bool) if where is None else where
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.cumsum(chosen * len(text.encode()), out=offsets[1:])
    data = text.encode() * int(np.count_nonzero(chosen))
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def arrow_values(values: np.ndarray):
    """A numpy array of numbers or booleans as a pyarrow array, built on its buffer (see :func:`strings`)."""
    import numpy as np

    pa = arrow()[0]
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def byte_order_ranks(values, codes: np.ndarray | None = None) -> np.ndarray:
    """Rank of each string ``values[codes]`` (a pyarrow array) in byte order (strcmp), as int64.

    With ``codes=None`` the ranks of all of ``values``. UTF-8 byte order equals code point order,
    so pyarrow's binary sort gives strcmp's order.
    """
    import numpy as np

    pc = arrow()[1]
    subset = values if codes is None else values.take(arrow_indices(codes))
    order = to_numpy(pc.sort_indices(subset), np.uint64).astype(np.int64)
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def in_threads(function, count: int, threads: int) -> list:
    """``[function(range_0), function(range_1), ...]``: ``range(count)`` cut into consecutive parts, one a thread.

    For work on batches that releases the GIL (pyarrow's kernels, numpy's big loops); with one
    part (one batch, or ``threads=1``) the function runs in the calling thread.
    """
    from concurrent.futures import ThreadPoolExecutor  # here: it loads logging, which small inputs never need

    parts = max(1, min(threads, count))
    bounds = [count * p // parts for p in range(parts + 1)]
    ranges = [range(begin, end) for begin, end in pairwise(bounds)]
    if parts == 1:
        return [function(ranges[0])]
    with ThreadPoolExecutor(max_workers=parts) as pool:
        return list(pool.map(function, ranges))

