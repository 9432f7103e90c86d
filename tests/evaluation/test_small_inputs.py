"""Which path an evaluation of files takes (castregin.evaluation.small): by sizes, before any heavy import."""

from __future__ import annotations

import gzip
import json
import os
import statistics

import pytest
import pytrec_eval

from castregin.evaluation import small


def _file(tmp_path, name: str, size: int, compressed: bool = False):
    path = tmp_path / name
    data = b"t 0 d 1\n" * (size // 8)
    path.write_bytes(gzip.compress(data) if compressed else data)
    return path


def test_runs_and_qrels_have_their_own_bounds(tmp_path, monkeypatch):
    monkeypatch.setattr(small, "SMALL_RUN_BYTES", 800)
    monkeypatch.setattr(small, "SMALL_QRELS_BYTES", 4000)
    run, qrels = _file(tmp_path, "r", 400), _file(tmp_path, "q", 4000)
    assert small.small_inputs([run], [qrels])
    assert small.small_inputs([run, run], [qrels])  # 800 bytes of runs: at the bound
    assert not small.small_inputs([run, run, run], [qrels])
    assert not small.small_inputs([run], [qrels, _file(tmp_path, "q2", 8)])
    # A qrels of the run's bound is small; a run of the qrels' size is not.
    assert not small.small_inputs([qrels], [run])


def test_a_compressed_file_counts_what_it_decompresses_to(tmp_path, monkeypatch):
    monkeypatch.setattr(small, "SMALL_RUN_BYTES", 10_000)
    tiny, bomb = _file(tmp_path, "r.gz", 800, compressed=True), _file(tmp_path, "b.gz", 80_000, compressed=True)
    assert os.path.getsize(bomb) < 10_000  # small on disk, large once decompressed
    assert small.small_inputs([tiny], [])
    assert not small.small_inputs([bomb], [])


def test_standard_input_and_pipes_are_not_small(tmp_path):
    assert not small.small_inputs(["-"], [])
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not small.small_inputs([fifo], [])  # not opened: that would wait for a writer


def test_a_missing_file_is_left_to_the_reader(tmp_path, cli):
    assert small.small_inputs([tmp_path / "missing.run"], [])
    qrels = tmp_path / "q.qrel"
    qrels.write_text("t 0 d 1\n")
    result = cli("evaluate", tmp_path / "missing.run", "--qrels", qrels)
    assert result.exit_code == 1
    assert "missing.run: no such file" in result.stderr


@pytest.mark.parametrize("measure", ["P@3", "bpref"])
def test_both_paths_print_the_same(tmp_path, cli, monkeypatch, measure):
    run = tmp_path / "r.run"
    run.write_text("".join(f"t{t} Q0 d{i} {i} {(7 * i + t) % 5}.5 r\n" for t in range(4) for i in range(9)))
    qrels = tmp_path / "q.qrel"
    qrels.write_text("".join(f"t{t} 0 d{i} {(i + t) % 4}\n" for t in range(5) for i in range(0, 9, 2)))
    args = ("evaluate", run, "--qrels", qrels, "-m", measure, "-m", "nDCG@5", "-q", "--format", "json")
    plain = cli(*args)
    monkeypatch.setattr(small, "SMALL_RUN_BYTES", 0)
    engine = cli(*args)
    assert plain.exit_code == engine.exit_code == 0, (plain.stderr, engine.stderr)
    assert plain.stdout == engine.stdout
    # Both paths are castregin's: the values themselves are pytrec_eval's (CAsT's relevance level 2).
    scores = {f"t{t}": {f"d{i}": (7 * i + t) % 5 + 0.5 for i in range(9)} for t in range(4)}
    labels = {f"t{t}": {f"d{i}": (i + t) % 4 for i in range(0, 9, 2)} for t in range(5)}
    names = {"P@3": "P_3", "bpref": "bpref", "nDCG@5": "ndcg_cut_5"}
    oracle = pytrec_eval.RelevanceEvaluator(labels, {"P.3", "bpref", "ndcg_cut.5"}, relevance_level=2).evaluate(scores)
    printed = {(row["measure"], row["turn"]): row["value"] for row in json.loads(plain.stdout)}
    for name in (measure, "nDCG@5"):
        want = {turn: values[names[name]] for turn, values in oracle.items()}
        assert {turn: printed[name, turn] for turn in want} == pytest.approx(want, abs=1e-12), name
        assert printed[name, "all"] == pytest.approx(statistics.fmean(want.values()), abs=1e-12), name
        assert {turn for (printed_name, turn) in printed if printed_name == name} == {*want, "all"}, name


def test_a_compressed_file_beyond_the_bomb_bounds_is_streamed(tmp_path, monkeypatch):
    # The line reader would hold it whole and refuse it; the streaming reader is not bounded.
    run = _file(tmp_path, "r.gz", 800, compressed=True)
    assert small.small_inputs([run], [])
    monkeypatch.setenv("CASTREGIN_MAX_DECOMPRESSED", "500")
    assert not small.small_inputs([run], [])


def test_sizes_are_not_read_for_diversity_measures(tmp_path, cli, monkeypatch):
    # ndeval's measures read whole files whatever their size: decompressing MiBs to size them would be waste.
    from castregin.evaluation import evaluate

    sized = []
    monkeypatch.setattr(evaluate, "small_inputs", lambda runs, qrels: sized.append(runs) or True)
    run, qrels = tmp_path / "r.run", tmp_path / "q.qrel"
    run.write_text("t1 Q0 d1 1 2.0 r\nt1 Q0 d2 2 1.0 r\n")
    qrels.write_text("t1 0 d1 1\nt1 0 d2 0\n")
    assert cli("evaluate", run, "--qrels", qrels, "-m", "alpha_nDCG@5").exit_code == 0
    assert sized == []
    assert cli("evaluate", run, "--qrels", qrels, "-m", "P@1").exit_code == 0
    assert len(sized) == 1  # the same call path as above: the monkeypatch does reach it
