"""Compressed inputs and outputs in castregin.formats: recognised by their first bytes, read as streams,
errors in one line; ``.gz``, ``.bz2`` and ``.xz`` outputs written reproducibly; directories of runs."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import sys
import threading
from types import SimpleNamespace

import numpy as np
import pytest
from compressed_files import NEEDS_ZSTD, SUFFIXES, compress, suffix_params

from castregin.errors import InputError
from castregin.formats import columnar, common, expand_run_paths, open_input, read_bytes, read_qrels, read_run
from castregin.formats.output import OutputSet, write_text

RUN = "".join(f"t{t}\tQ0\td{i}\t{i + 1}\t{10 - i}.5\tr\n" for t in range(40) for i in range(6))
QRELS = "".join(f"t{t} 0 d{i} {(t + i) % 4}\n" for t in range(40) for i in range(4))
FORMAT_OF = {"gz": "gzip", "bz2": "bzip2", "xz": "xz", "zst": "zstd"}


# --- recognising and reading -------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_each_format_is_recognised_by_its_first_bytes(suffix):
    assert common.compression_of(compress(b"t1 0 d1 1\n", suffix)[:10]) == FORMAT_OF[suffix]


@pytest.mark.parametrize("text", [b"", b"t1 0 d1 1\n", b"BZh9 is a turn id\n", b"BZh", b"\x1f\x8b", b"\xfd7zX"])
def test_plain_text_is_not_taken_for_compressed(text):
    assert common.compression_of(text) is None


@pytest.mark.parametrize("suffix", suffix_params())
def test_read_bytes_decompresses_whatever_the_name(tmp_path, suffix):
    data = RUN.encode()
    for name in (f"r.run.{suffix}", "r.run", "r.gz"):
        (tmp_path / name).write_bytes(compress(data, suffix))
        assert read_bytes(tmp_path / name) == data
    (tmp_path / "plain.gz").write_bytes(data)
    assert read_bytes(tmp_path / "plain.gz") == data


@pytest.mark.parametrize("suffix", suffix_params())
def test_concatenated_members_are_read_whole(tmp_path, suffix):
    # `cat a.gz b.gz > ab.gz` holds two members (frames, streams); the tools read both, so does castregin.
    (tmp_path / "ab").write_bytes(compress(b"first\n", suffix) + compress(b"second\n", suffix))
    assert read_bytes(tmp_path / "ab") == b"first\nsecond\n"


class _Trickle(io.RawIOBase):
    """A pipe that hands over at most three bytes a read and cannot seek."""

    def __init__(self, data: bytes):
        self._data = data

    def readable(self):
        return True

    def readinto(self, buffer):
        chunk, self._data = self._data[:3], self._data[3:]
        buffer[: len(chunk)] = chunk
        return len(chunk)


@pytest.mark.parametrize("suffix", [*suffix_params(), None])
def test_standard_input_that_cannot_seek(monkeypatch, suffix):
    data = RUN.encode()
    piped = compress(data, suffix) if suffix else data
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(_Trickle(piped))))
    with open_input("-") as opened:
        assert opened.compression == (FORMAT_OF[suffix] if suffix else None)
        assert not opened.in_place
        assert opened.read() == data


def test_a_regular_plain_file_is_read_in_place(tmp_path):
    (tmp_path / "q.gz").write_text(QRELS)
    with open_input(tmp_path / "q.gz") as opened:
        assert opened.in_place and opened.compression is None
        block = bytearray(7)
        assert opened.readinto(block) == 7 and bytes(block) == QRELS[:7].encode()


@pytest.mark.parametrize("suffix", suffix_params())
def test_truncated_and_corrupt_files_are_one_line(tmp_path, suffix):
    data = compress(RUN.encode() * 20, suffix)
    (tmp_path / "cut").write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(InputError, match=rf"^{tmp_path}/cut: not a valid {FORMAT_OF[suffix]} stream \(.+\): the "
                                         "file is corrupt or truncated; compress it again, or give the "
                                         "uncompressed file$"):
        read_bytes(tmp_path / "cut")
    damaged = bytearray(data)
    damaged[len(data) // 2: len(data) // 2 + 16] = bytes(range(16))
    (tmp_path / "damaged").write_bytes(bytes(damaged))
    with pytest.raises(InputError, match=f"damaged: not a valid {FORMAT_OF[suffix]} stream") as caught:
        read_bytes(tmp_path / "damaged")
    assert "\n" not in str(caught.value)


def test_missing_files_and_directories(tmp_path):
    with pytest.raises(InputError, match="nothing: no such file; check the path"):
        read_bytes(tmp_path / "nothing")
    with pytest.raises(InputError, match="is a directory, expected a file"):
        read_bytes(tmp_path)


def test_zstd_without_a_decompressor_says_what_to_install(tmp_path, monkeypatch):
    from castregin import arrays

    monkeypatch.setitem(sys.modules, "zstandard", None)  # importing it fails
    no_zstd = SimpleNamespace(Codec=SimpleNamespace(is_available=lambda name: False))  # a pyarrow built without
    monkeypatch.setattr(arrays, "arrow", lambda: (no_zstd, None, None))
    (tmp_path / "r.run.zst").write_bytes(b"\x28\xb5\x2f\xfd" + bytes(20))
    with pytest.raises(InputError, match=r"r.run.zst: is zstd-compressed; install zstandard \(pip install "):
        read_bytes(tmp_path / "r.run.zst")


@NEEDS_ZSTD
def test_zstd_through_the_zstandard_package(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    (tmp_path / "r.zst").write_bytes(zstandard.ZstdCompressor().compress(RUN.encode()))
    assert read_bytes(tmp_path / "r.zst") == RUN.encode()


# --- the readers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", suffix_params())
def test_runs_and_qrels_read_the_same_compressed(tmp_path, suffix):
    (tmp_path / "r.run").write_text(RUN)
    (tmp_path / "q.qrel").write_text(QRELS)
    (tmp_path / f"r.run.{suffix}").write_bytes(compress(RUN.encode(), suffix))
    (tmp_path / f"q.qrel.{suffix}").write_bytes(compress(QRELS.encode(), suffix))
    assert read_run(tmp_path / f"r.run.{suffix}").scores == read_run(tmp_path / "r.run").scores
    qrels = read_qrels(tmp_path / f"q.qrel.{suffix}")
    assert (qrels.name, qrels.labels) == ("q", read_qrels(tmp_path / "q.qrel").labels)
    fast, plain = columnar.read_run(tmp_path / f"r.run.{suffix}"), columnar.read_run(tmp_path / "r.run")
    assert np.array_equal(fast.scores, plain.scores) and fast.items.to_pylist() == plain.items.to_pylist()
    fast_qrels = columnar.read_qrels(tmp_path / f"q.qrel.{suffix}")
    assert fast_qrels.name == "q" and np.array_equal(fast_qrels.labels, columnar.read_qrels(tmp_path / "q.qrel").labels)


def test_the_fast_path_reads_compressed_and_oddly_named_files(tmp_path):
    # The pyarrow parser, not the line reader: a .gz name holding plain text is not handed to pyarrow's
    # own gzip detection, and a compressed file is parsed from its decompressed bytes.
    (tmp_path / "plain.gz").write_text(RUN)
    (tmp_path / "packed.run").write_bytes(compress(RUN.encode(), "gz"))
    for name in ("plain.gz", "packed.run"):
        run, _ = columnar._fast_run(tmp_path / name, name)
        assert run is not None and len(run) == RUN.count("\n"), name


def test_a_fifo_is_read_once(tmp_path):
    # A pipe (process substitution, <(zcat x.gz)) cannot be read twice: it is read whole, then parsed.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(RUN), daemon=True)
    writer.start()
    run = columnar.read_run(fifo)
    writer.join(5)
    assert len(run) == RUN.count("\n")


def test_stem_leaves_out_the_compression_suffix():
    assert [common.stem(p) for p in ("runs/bm25.run.gz", "q.qrel.XZ", "x.gz", "a.b.zst", ".gz", "-", "b.tar")] == [
        "bm25", "q", "x", "a", ".gz", "stdin", "b"]


# --- compressed outputs ------------------------------------------------------------------------------------


def test_gzip_output_is_byte_identical_and_has_no_name_or_time(tmp_path):
    write_text(tmp_path / "a.run.gz", RUN)
    first = (tmp_path / "a.run.gz").read_bytes()
    os.utime(tmp_path / "a.run.gz", (0, 0))
    write_text(tmp_path / "a.run.gz", RUN)
    write_text(tmp_path / "b.run.gz", RUN)
    assert (tmp_path / "a.run.gz").read_bytes() == first == (tmp_path / "b.run.gz").read_bytes()
    assert first[3] == 0 and first[4:8] == bytes(4)  # flags: no name; mtime: 0
    assert gzip.decompress(first) == RUN.encode()


@pytest.mark.parametrize(("name", "unpack"), [("o.bz2", bz2.decompress), ("o.xz", lzma.decompress),
                                              ("o.GZ", gzip.decompress), ("o.run", bytes)])
def test_outputs_compressed_by_their_name(tmp_path, name, unpack):
    with OutputSet() as outputs:
        with outputs.open(tmp_path / name) as handle:
            for line in RUN.splitlines(keepends=True):
                handle.write(line)
        outputs.write_bytes(tmp_path / f"bytes-{name}", RUN.encode())
    assert unpack((tmp_path / name).read_bytes()) == RUN.encode()
    assert unpack((tmp_path / f"bytes-{name}").read_bytes()) == RUN.encode()
    assert read_bytes(tmp_path / name) == RUN.encode()


def test_a_failed_compressed_output_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), OutputSet() as outputs:  # noqa: PT012 - the failure must come inside the output's block
        outputs.write_text(tmp_path / "x.run.gz", RUN)
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_a_symlink_named_gz_is_followed_and_its_target_compressed(tmp_path):
    (tmp_path / "target.gz").write_text("old")
    (tmp_path / "link.gz").symlink_to("target.gz")
    write_text(tmp_path / "link.gz", RUN)
    assert (tmp_path / "link.gz").is_symlink()
    assert gzip.decompress((tmp_path / "target.gz").read_bytes()) == RUN.encode()


def test_special_files_stay_plain(tmp_path):
    fifo = tmp_path / "pipe.gz"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_text(fifo, RUN)
    reader.join(5)
    assert received == [RUN.encode()]


# --- directories of runs -----------------------------------------------------------------------------------


def test_expand_run_paths(tmp_path):
    names = ["b.run", "B.run", "_x.run", "é.run", "z.run", "10.run", "9.run"]
    for name in names:
        (tmp_path / name).write_text(RUN)
    (tmp_path / ".hidden").write_text(RUN)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.run").write_text(RUN)
    (tmp_path / "link.run").symlink_to("b.run")
    (tmp_path / "dangling.run").symlink_to("nowhere")
    expected = sorted([*names, "link.run"], key=lambda n: n.encode())
    assert expected[:3] == ["10.run", "9.run", "B.run"] and expected[-1] == "é.run"
    assert expand_run_paths(["-", tmp_path / "b.run", tmp_path]) == [
        "-", str(tmp_path / "b.run"), *(os.path.join(tmp_path, n) for n in expected)]
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="empty: the directory holds no run file"):
        expand_run_paths([tmp_path / "empty"])
    assert expand_run_paths([tmp_path / "missing.run"]) == [str(tmp_path / "missing.run")]  # reading will say
