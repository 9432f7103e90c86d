"""Provenance hashes what was parsed, in one read: pipes, FIFOs and standard input too.

`qrels merge <(cat a.qrel) ... --provenance` and `report` with process substitution recorded the SHA-256 of
nothing (e3b0c442..., the empty input: the pipe, read once to parse it, was read again to hash it), and a FIFO
blocked forever (opened again with no writer). The oracle is hashlib on the bytes the shell fed in.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from castregin.errors import InputError
from castregin.formats.output import OutputSet

CASTREGIN = str(Path(sys.executable).parent / "castregin")
QRELS = b"t1 0 Q1 2\nt1 0 Q2 0\nt2 0 Q5 3\n"
EXTRA = b"t1 0 Q3 1\nt3 0 Q9 2\n"
RUN = b"t1 Q0 Q1 1 2.0 alpha\nt1 Q0 Q2 2 1.0 alpha\nt2 Q0 Q5 1 1.0 alpha\n"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "a.qrel").write_bytes(QRELS)
    (tmp_path / "extra.qrel").write_bytes(EXTRA)
    (tmp_path / "a.run").write_bytes(RUN)
    (tmp_path / "b.run").write_bytes(RUN.replace(b"alpha", b"beta").replace(b"2.0", b"0.5"))
    return tmp_path


def _bash(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def _sources(path: Path) -> dict[str, str]:
    return {source["path"]: source["sha256"] for source in json.loads(path.read_text())["sources"]}


def test_qrels_merge_hashes_a_process_substitution_as_parsed(files):
    done = _bash(f"{CASTREGIN} qrels merge <(cat a.qrel) extra.qrel -o m.qrel --provenance p.json", files)
    assert done.returncode == 0, done.stderr
    digests = _sources(files / "p.json")
    pipe = next(path for path in digests if path.startswith("/dev/fd/"))
    assert digests[pipe] == hashlib.sha256(QRELS).hexdigest() != EMPTY_SHA256
    assert digests["extra.qrel"] == hashlib.sha256(EXTRA).hexdigest()


def test_a_compressed_pipe_is_hashed_as_it_came(files):
    (files / "a.qrel.gz").write_bytes(gzip.compress(QRELS, mtime=0))
    done = _bash(f"{CASTREGIN} qrels merge <(cat a.qrel.gz) extra.qrel -o m.qrel --provenance p.json", files)
    assert done.returncode == 0, done.stderr
    pipe = next(path for path in _sources(files / "p.json") if path.startswith("/dev/fd/"))
    assert _sources(files / "p.json")[pipe] == hashlib.sha256((files / "a.qrel.gz").read_bytes()).hexdigest()


def test_standard_input_is_hashed_too(files):
    done = subprocess.run([CASTREGIN, "qrels", "merge", "-", "extra.qrel", "-o", "m.qrel", "--provenance", "p.json"],
                          input=QRELS, cwd=files, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert _sources(files / "p.json")["-"] == hashlib.sha256(QRELS).hexdigest()


def test_a_fifo_is_read_once_and_never_waited_for_again(files):
    fifo = files / "labels.fifo"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as writer:
            writer.write(QRELS)

    writer = threading.Thread(target=feed)
    writer.start()
    # Before the fix this waited forever: the FIFO, opened again to hash it, had no writer any more.
    done = subprocess.run([CASTREGIN, "qrels", "merge", fifo.name, "extra.qrel", "-o", "m.qrel", "--provenance",
                           "p.json"], cwd=files, capture_output=True, text=True, timeout=60, check=False)
    writer.join(timeout=10)
    assert done.returncode == 0, done.stderr
    assert _sources(files / "p.json")[fifo.name] == hashlib.sha256(QRELS).hexdigest()


def test_report_hashes_process_substitutions_as_parsed(files):
    done = _bash(f"{CASTREGIN} report <(cat a.run) b.run --qrels <(cat a.qrel) -m P@1 --ci-samples 10 --out rep",
                 files)
    assert done.returncode == 0, done.stderr
    page = (files / "rep" / "index.html").read_text(encoding="utf-8")
    for content in (RUN, QRELS, (files / "b.run").read_bytes()):
        assert f"<code>{hashlib.sha256(content).hexdigest()}</code>" in page
    assert EMPTY_SHA256 not in page


def test_a_fifo_not_read_has_no_digest_and_is_not_opened(tmp_path):
    from castregin.formats.provenance import provenance

    fifo = tmp_path / "unread.fifo"
    os.mkfifo(fifo)  # opening it would wait for a writer
    with pytest.raises(InputError, match="was not read to its end, so its SHA-256 is unknown"):
        provenance([fifo])


# --- two outputs on standard output ------------------------------------------------------------------------------


def test_qrels_merge_refuses_both_outputs_on_standard_output(cli, files, monkeypatch):
    monkeypatch.chdir(files)
    result = cli("qrels", "merge", "a.qrel", "extra.qrel", "--provenance", "-")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == ("castregin: error: --output and --provenance both write to standard output ('-'); "
                             "give all but one of them a file; see 'castregin qrels merge --help'\n")
    result = cli("qrels", "merge", "a.qrel", "extra.qrel", "--provenance", "-", "-o", "m.qrel")
    assert result.exit_code == 0 and json.loads(result.stdout)["labels"]


def test_the_writer_refuses_two_outputs_on_standard_output(capsys):
    outputs = OutputSet()
    outputs.write_text("-", "one\n")
    with pytest.raises(InputError, match=r"two outputs go to standard output"):
        outputs.write_text("-", "two\n")
    outputs.discard()
    assert capsys.readouterr().out == ""
