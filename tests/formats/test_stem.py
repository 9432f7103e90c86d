"""A file's stem (the name of a run or qrels read from it) is pathlib's rule, computed without loading pathlib."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from castregin.formats.common import COMPRESSION_SUFFIXES, stem

NAMES = ["bm25.run", "runs/bm25.run.gz", "/abs/dir/q.qrel.bz2", "a", "a.", ".hidden", ".hidden.gz", "x.tar.gz",
         "dir/", "dir/.", "./a.b.c", "a/../b.run", "..", ".", "/", "//srv//x.xz", "x.GZ", "x.zst", ".gz", "a..b",
         "trailing.dot.", "spaces in name.run", "ünïcode.qrels.gz", "a/b/./c.d/"]


def pathlib_stem(path: str) -> str:
    """What stem() computed with pathlib before (castregin/formats/common.py at 3a77081)."""
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in COMPRESSION_SUFFIXES and len(name) > len(suffix):
        name = name[: -len(suffix)]
    return PurePosixPath(name).stem if name else name


@pytest.mark.parametrize("path", NAMES)
def test_the_stem_is_pathlibs(path):
    assert stem(path) == pathlib_stem(path)


def test_standard_input_is_stdin():
    assert stem("-") == "stdin"
