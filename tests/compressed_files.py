"""Compressed copies of test inputs in every format castregin reads (shared by the compression tests)."""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest

#: The name endings of the formats castregin reads.
SUFFIXES = ["gz", "bz2", "xz", "zst"]


def zstd_readable() -> bool:
    """Whether castregin can read zstd here: the zstandard package, or pyarrow's zstd codec."""
    try:
        import zstandard  # noqa: F401 - imported to see whether it is installed
    except ImportError:
        import pyarrow as pa

        return pa.Codec.is_available("zstd")
    return True


def compress(data: bytes, suffix: str) -> bytes:
    """``data`` compressed as a file ending in ``.suffix`` holds it (gzip without a time in its header)."""
    if suffix == "gz":
        return gzip.compress(data, mtime=0)
    if suffix == "bz2":
        return bz2.compress(data)
    if suffix == "xz":
        return lzma.compress(data, preset=1)  # fast: the tests compress megabytes
    if suffix == "zst":
        import pyarrow as pa

        return pa.compress(data, codec="zstd", asbytes=True)  # one zstd frame, as `zstd` writes
    raise ValueError(suffix)


#: Skips a test that reads zstd where castregin cannot.
NEEDS_ZSTD = pytest.mark.skipif(not zstd_readable(), reason="neither zstandard nor pyarrow's zstd codec is here")


def suffix_params(value=lambda suffix: suffix) -> list:
    """A pytest parameter per suffix (``value(suffix)``, named by the suffix), zstd skipped where unreadable."""
    return [pytest.param(value(s), id=s, marks=[NEEDS_ZSTD] if s == "zst" else []) for s in SUFFIXES]
