"""Decompression bombs: a compressed input that castregin holds whole is bounded in decompressed size and in
ratio (castregin/limits.py, raised by environment variables), and the refusal says which file, which bound
and how to raise it. Streamed inputs are not bounded. Running out of memory while reading is one line.

The bombs here are megabytes, the bounds lowered to match: what is tested is where reading stops.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from compressed_files import compress, suffix_params

from castregin import limits

REPO = Path(__file__).resolve().parents[2]
#: Two megabytes of ASCII zeros (a JSON number, a CSV header, a line of a run: each reader takes it in).
BOMB = b"0" * (2 << 20)
RUN = "".join(f"t{t}\tQ0\td{i}\t{i + 1}\t{10 - i}.5\tr\n" for t in range(40) for i in range(6))
QRELS = "".join(f"t{t} 0 d{i} {(t + i) % 4}\n" for t in range(40) for i in range(4))


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("r.run").write_text(RUN)
    Path("q.qrel").write_text(QRELS)
    for name in ("runs/alpha.json", "question_bank.json", "crowd/judgments.csv"):
        shutil.copy(REPO / "data" / name, Path(name).name)
    Path("pool.txt").write_text("101_1-1\tQ0\tQ0001\t1\t0.0\tdummytag\n")
    Path("d.csv").write_text("id,x\na,1\n")
    return tmp_path


#: Every kind of input castregin reads whole, as an argument list with BOMB where the bomb goes.
WHOLE_READS = {
    "run (trec_eval)": ["trec_eval", "q.qrel", "BOMB"],
    "run (evaluate, not streamable)": ["evaluate", "BOMB", "--qrels", "q.qrel"],
    "run (pool)": ["pool", "BOMB"],
    "qrels": ["qrels", "stats", "BOMB"],
    "turn list": ["evaluate", "r.run", "--qrels", "q.qrel", "--turns", "BOMB"],
    "bank": ["convert", "questions", "alpha.json", "--bank", "BOMB", "-o", "out.run"],
    "JSON run": ["convert", "questions", "BOMB", "--bank", "question_bank.json", "-o", "out.run"],
    "crowd CSV": ["aggregate", "BOMB", "--criteria", "relevance", "--out-dir", "out"],
    "gold CSV": ["aggregate", "judgments.csv", "--criteria", "relevance", "--gold", "BOMB", "--out-dir", "out"],
    "episode": ["scorekeeping", "score", "BOMB"],
    "experience": ["ope", "estimate", "BOMB"],
    "topics": ["tasks", "pool.txt", "--bank", "question_bank.json", "--topics", "BOMB", "--criteria", "relevance",
               "--out-dir", "out"],
    "pool": ["tasks", "BOMB", "--bank", "question_bank.json", "--topics", "t.json", "--criteria", "relevance",
             "--out-dir", "out"],
    "AVM matrix": ["paradise", "kappa", "BOMB"],
    "dialogue CSV": ["paradise", "predict", "BOMB", "d.csv"],
}


def _one_line(result, *words) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stderr)
    assert result.stderr.startswith("castregin: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert all(word in result.stderr for word in words), result.stderr
    return result.stderr


@pytest.mark.parametrize("args", WHOLE_READS.values(), ids=WHOLE_READS.keys())
def test_a_bomb_read_whole_stops_at_the_size_bound(cli, inputs, monkeypatch, args):
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "1M")
    Path("bomb.gz").write_bytes(gzip.compress(BOMB, mtime=0))
    result = cli(*("bomb.gz" if a == "BOMB" else a for a in args))
    message = _one_line(result, "bomb.gz: ", "1 MiB", "CASTREGIN_MAX_DECOMPRESSED=")
    assert "corrupt" not in message


@pytest.mark.parametrize("suffix", suffix_params())
def test_a_bomb_stops_at_the_ratio_bound_early(cli, inputs, monkeypatch, suffix):
    # Past the point where the ratio is checked, zeros (about 1000:1 in gzip, more in the others) stop reading.
    monkeypatch.setattr(limits, "RATIO_CHECKED_FROM", 256 << 10)
    Path("bomb").write_bytes(compress(b"\0" * (8 << 20), suffix))
    message = _one_line(cli("qrels", "stats", "bomb"), "bomb: ", f"{limits.MAX_COMPRESSION_RATIO} times",
                        "CASTREGIN_MAX_COMPRESSION_RATIO=")
    assert "corrupt" not in message


def test_the_bounds_are_raised_by_the_environment(cli, inputs, monkeypatch):
    monkeypatch.setattr(limits, "RATIO_CHECKED_FROM", 64 << 10)
    # A qrels of long ids that compresses several hundred times: genuine, though no real qrels does that.
    Path("q.gz").write_bytes(gzip.compress("".join(f"t0 0 {'d' * 8000}{i:06d} 1\n" for i in range(300)).encode()))
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "1K")
    _one_line(cli("qrels", "stats", "q.gz"), "CASTREGIN_MAX_DECOMPRESSED")
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "4M")
    _one_line(cli("qrels", "stats", "q.gz"), "CASTREGIN_MAX_COMPRESSION_RATIO")
    monkeypatch.setenv("CASTREGIN_MAX_COMPRESSION_RATIO", "5000")
    result = cli("qrels", "stats", "q.gz")
    assert result.exit_code == 0, result.stderr
    monkeypatch.setenv("CASTREGIN_MAX_COMPRESSION_RATIO", "none")
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "none")
    assert cli("qrels", "stats", "q.gz").exit_code == 0


@pytest.mark.parametrize("value", ["lots", "-1", "1.5Q", "0"])
def test_a_bad_bound_in_the_environment_is_one_line(cli, inputs, monkeypatch, value):
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", value)
    Path("q.gz").write_bytes(gzip.compress(QRELS.encode()))
    _one_line(cli("qrels", "stats", "q.gz"), "CASTREGIN_MAX_DECOMPRESSED", repr(value))


def test_plain_files_are_not_bounded(cli, inputs, monkeypatch):
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "1K")
    assert cli("qrels", "stats", "q.qrel").exit_code == 0


def test_streamed_inputs_are_not_bounded(cli, inputs, monkeypatch):
    # evaluate streams runs and qrels written turn by turn; convert streams JSON runs (holding a turn at a time).
    monkeypatch.setattr("castregin.formats.submissions.CHUNK_SIZE", 256)
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "2K")
    monkeypatch.setenv("CASTREGIN_MAX_COMPRESSION_RATIO", "1")
    Path("r.gz").write_bytes(gzip.compress(RUN.encode()))
    Path("q.gz").write_bytes(gzip.compress(QRELS.encode()))
    result = cli("evaluate", "r.gz", "--qrels", "q.gz")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == cli("evaluate", "r.run", "--qrels", "q.qrel").stdout
    Path("alpha.json.gz").write_bytes(gzip.compress(Path("alpha.json").read_bytes()))
    result = cli("convert", "questions", "alpha.json.gz", "--bank", "question_bank.json", "-o", "a.run")
    assert result.exit_code == 0, result.stderr


def test_a_json_run_stream_holding_one_huge_value_is_bounded(cli, inputs, monkeypatch):
    # Streamed a turn at a time, but a single value is held whole: an unterminated string of 2 MB.
    monkeypatch.setattr("castregin.formats.submissions.CHUNK_SIZE", 64 << 10)
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "1M")
    Path("r.json.gz").write_bytes(gzip.compress(b'{"run_name": "' + b"a" * (2 << 20)))
    _one_line(cli("convert", "questions", "r.json.gz", "--bank", "question_bank.json", "-o", "o.run"),
              "r.json.gz: ", "CASTREGIN_MAX_DECOMPRESSED")


def test_whitespace_does_not_pile_up_in_the_json_run_stream(inputs, monkeypatch):
    from castregin.errors import InputError
    from castregin.formats import submissions

    monkeypatch.setattr(submissions, "CHUNK_SIZE", 1 << 10)
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "64K")
    Path("r.json.gz").write_bytes(gzip.compress(b'{"turns": [' + b"\n" * (1 << 20) + b'   x]}'))
    with pytest.raises(InputError) as caught:
        submissions.read_mi_run("r.json.gz")
    # As json.loads reports it on the whole text, though the stream dropped the whitespace as it went.
    assert str(caught.value) == "r.json.gz:1048577: invalid JSON at column 4: Expecting value"


def test_running_out_of_memory_while_decompressing_is_one_line(cli, inputs, monkeypatch):
    Path("q.gz").write_bytes(gzip.compress(QRELS.encode()))

    def exhausted(self, *args):
        raise MemoryError

    monkeypatch.setattr(gzip.GzipFile, "read", exhausted)
    message = _one_line(cli("qrels", "stats", "q.gz"), "q.gz: ", "memory")
    assert "corrupt" not in message


def test_running_out_of_memory_anywhere_in_reading_is_one_line(cli, inputs, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("castregin.formats.trec.parse_qrels", exhausted)
    monkeypatch.setattr("castregin.formats.columnar.TurnStream", exhausted)
    _one_line(cli("qrels", "stats", "q.qrel"), "memory")


def test_a_bomb_on_standard_input_stops_at_the_ratio_bound(cli, inputs, monkeypatch):
    monkeypatch.setattr(limits, "RATIO_CHECKED_FROM", 256 << 10)
    _one_line(cli("qrels", "stats", "-", input=gzip.compress(b"\0" * (8 << 20))), "<stdin>: ",
              "CASTREGIN_MAX_COMPRESSION_RATIO=")
