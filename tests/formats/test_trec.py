"""Bad TREC files: one error line naming file and line, exit 1, no traceback, no output file."""

from __future__ import annotations

import pytest

from castregin import formats
from castregin.errors import InputError
from castregin.formats.output import open_output

GOOD_QRELS = "t1 0 a 2\nt1 0 b 0\n"
GOOD_RUN = "t1 Q0 a 1 2.5 tag\nt1 Q0 b 2 1.5 tag\n"

BAD_RUNS = [
    ("t1 Q0 a 1 2.5 tag\nt1 Q0 b 2 1.5\n", 2, "expected 6 columns (turn Q0 item rank score tag), found 5"),
    ("t1 Q0 a 1 high tag\n", 1, "score 'high' is not a number"),
    ("t1 Q0 a 1 2.5 tag\nt1 Q0 b 2 nan tag\n", 2, "score 'nan' is not a finite number"),
    ("t1 Q0 a 1 inf tag\n", 1, "score 'inf' is not a finite number"),
    ("t1 Q0 a 1 -Infinity tag\n", 1, "score '-Infinity' is not a finite number"),
    ("t1 Q0 a 1 2.5 tag\nt2 Q0 a 1 2.5 tag\nt1 Q0 a 3 0.5 tag\n", 3, "item a is listed twice for turn t1"),
    ("t1 Q0 a one 2.5 tag\n", 1, "rank 'one' is not a number"),
]

BAD_QRELS = [
    ("t1 0 a 2\nt1 0 b\n", 2, "expected 4 columns (turn 0 item label), found 3"),
    ("t1 0 a 2.5\n", 1, "label '2.5' is not an integer"),
    ("t1 0 a high\n", 1, "label 'high' is not an integer"),
    ("t1 0 a 2\nt1 0 a 1\n", 2, "item a is judged twice for turn t1"),
]


def _run_cli(cli, tmp_path, run_text, qrels_text):
    run = tmp_path / "bad.run"
    qrels = tmp_path / "bad.qrel"
    out = tmp_path / "out.txt"
    run.write_bytes(run_text if isinstance(run_text, bytes) else run_text.encode())
    qrels.write_bytes(qrels_text if isinstance(qrels_text, bytes) else qrels_text.encode())
    return cli("evaluate", run, "--qrels", qrels, "-o", out), run, qrels, out


def _assert_one_line_error(result, expected: str, out):
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines == [f"castregin: error: {expected}"]
    assert "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.parametrize("text,line,problem", BAD_RUNS)
def test_bad_run_is_one_line_naming_file_and_line(cli, tmp_path, text, line, problem):
    result, run, _, out = _run_cli(cli, tmp_path, text, GOOD_QRELS)
    _assert_one_line_error(result, f"{run}:{line}: {problem}", out)


@pytest.mark.parametrize("text,line,problem", BAD_QRELS)
def test_bad_qrels_is_one_line_naming_file_and_line(cli, tmp_path, text, line, problem):
    result, _, qrels, out = _run_cli(cli, tmp_path, GOOD_RUN, text)
    _assert_one_line_error(result, f"{qrels}:{line}: {problem}", out)


@pytest.mark.parametrize("which", ["run", "qrels"])
@pytest.mark.parametrize("empty", ["", "\n  \n"])
def test_empty_file_is_an_error(cli, tmp_path, which, empty):
    run_text, qrels_text = (empty, GOOD_QRELS) if which == "run" else (GOOD_RUN, empty)
    result, run, qrels, out = _run_cli(cli, tmp_path, run_text, qrels_text)
    path, kind = (run, "TREC run (turn Q0 item rank score tag)") if which == "run" else (
        qrels, "qrels file (turn 0 item label)")
    _assert_one_line_error(result, f"{path}: the file is empty, expected a {kind}", out)


def test_undecodable_bytes_name_their_line(cli, tmp_path):
    result, run, _, out = _run_cli(cli, tmp_path, b"t1 Q0 a 1 2.5 tag\nt1 Q0 b\xff 2 1.5 tag\n", GOOD_QRELS)
    _assert_one_line_error(result, f"{run}:2: byte 0xff is not valid UTF-8; save the file as UTF-8", out)


def test_missing_file(cli, tmp_path):
    result = cli("evaluate", tmp_path / "nope.run", "--qrels", tmp_path / "nope.qrel")
    assert result.exit_code == 1
    assert result.stderr.strip() == f"castregin: error: {tmp_path / 'nope.qrel'}: no such file; check the path"


def test_output_never_overwrites_an_input(cli, tmp_path):
    run = tmp_path / "a.run"
    run.write_text(GOOD_RUN)
    qrels = tmp_path / "a.qrel"
    qrels.write_text(GOOD_QRELS)
    result = cli("evaluate", run, "--qrels", qrels, "-o", run)
    assert result.exit_code == 1
    assert "refusing to overwrite the input file" in result.stderr
    assert run.read_text() == GOOD_RUN


def test_runs_read_any_whitespace_and_keep_file_order(tmp_path):
    path = tmp_path / "r.run"
    path.write_text("t2  Q0\tb 1 0.5 x\r\nt1 Q0 a 1 1e-3 x\n\nt2 Q0 a 2 0.25 x\n")
    run = formats.read_run(path)
    assert run.tag == "x"
    assert run.scores == {"t2": {"b": 0.5, "a": 0.25}, "t1": {"a": 0.001}}
    assert run.ranks == {"t2": {"b": 1, "a": 2}, "t1": {"a": 1}}


def test_writers_roundtrip_and_sort(tmp_path):
    qrels = formats.read_qrels(_write(tmp_path / "q", "t2 0 b 1\nt1 0 z 0\nt1 0 a 3\n"))
    assert formats.format_qrels(qrels) == "t1 0 a 3\nt1 0 z 0\nt2 0 b 1\n"
    run = formats.read_run(_write(tmp_path / "r", "t1 Q0 a 1 7.498799800872803 x\n"))
    assert formats.format_run(run) == "t1\tQ0\ta\t1\t7.498799800872803\tx\n"
    assert formats.format_pool({"t2": ["b"], "t1": ["c", "a"]}) == (
        "t1\tQ0\ta\t1\t0.0\tdummytag\nt1\tQ0\tc\t1\t0.0\tdummytag\nt2\tQ0\tb\t1\t0.0\tdummytag\n")
    assert formats.format_pool({"t2": ["b"], "t1": ["c", "a"]}, ordered=True) == (
        "t1\tQ0\tc\t1\t2.0\tdummytag\nt1\tQ0\ta\t2\t1.0\tdummytag\nt2\tQ0\tb\t1\t1.0\tdummytag\n")


def test_atomic_write_leaves_nothing_on_error(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), open_output(target) as handle:  # noqa: PT012 - the failure must come inside the output's block
        handle.write("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_turn_lists_in_three_shapes(tmp_path):
    assert formats.read_turn_list(_write(tmp_path / "a", "132_1-1\n\n132_1-3\n")) == ["132_1-1", "132_1-3"]
    assert formats.read_turn_list(_write(tmp_path / "b", "132_1-1 0 Q1 2\n132_1-1 0 Q2 0\n")) == ["132_1-1"]
    assert formats.read_turn_list(_write(tmp_path / "c", '{"132": ["1-1", "2-3"]}')) == ["132_1-1", "132_2-3"]
    with pytest.raises(InputError, match="expected a turn id"):
        formats.read_turn_list(_write(tmp_path / "d", "a b\n"))


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_a_json_submission_given_for_a_run_or_qrels_is_named_so(cli, tmp_path):
    # "expected 6 columns, found 1" said nothing of what the file was, nor of `castregin convert`.
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    pretty = tmp_path / "pretty.json"
    pretty.write_text('{\n  "run_name": "alpha",\n  "turns": []\n}\n')
    (tmp_path / "q.qrel").write_text("t1 0 Q1 2\n")
    for run in (repo / "data/runs/alpha.json", pretty):
        result = cli("evaluate", run, "--qrels", tmp_path / "q.qrel")
        assert result.exit_code == 1
        assert result.stderr == (f"castregin: error: {run}:1: the file looks like JSON, not a TREC run (turn Q0 item "
                                 "rank score tag): a CAsT JSON submission? `castregin convert questions` (or "
                                 "responses, passages) turns it into one\n")
    judgments = tmp_path / "judgments.json"
    judgments.write_text('[{"turn_id": "t1", "item_id": "Q1", "label": 2}]\n')
    result = cli("evaluate", repo / "data/runs/alpha.json", "--qrels", judgments)
    assert result.stderr.startswith(f"castregin: error: {judgments}:1: the file looks like JSON, not qrels (turn 0 "
                                    "item label)")
