"""A directory given where runs are expected stands for the regular files in it, sorted by name in byte order.

Hidden files and subdirectories are skipped; a directory without a run is a one-line error.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

QRELS = "t1 0 d1 2\nt1 0 d2 0\nt2 0 d1 1\nt2 0 d3 3\n"
#: Run files by name, in byte order ("B" < "_" < "a"), each with its own tag and ranking.
RUNS = {
    "B.run": "t1 Q0 d1 1 2.0 upper\nt1 Q0 d2 2 1.0 upper\nt2 Q0 d3 1 1.0 upper\n",
    "_c.run": "t1 Q0 d2 1 2.0 under\nt2 Q0 d1 1 3.0 under\nt2 Q0 d3 2 1.0 under\n",
    "a.run": "t1 Q0 d2 1 3.0 lower\nt1 Q0 d1 2 2.0 lower\nt2 Q0 d1 1 1.0 lower\n",
}


@pytest.fixture
def here(tmp_path, monkeypatch):
    """``runs/`` with three runs, a hidden file and a subdirectory; ``q.qrel`` beside it."""
    monkeypatch.chdir(tmp_path)
    Path("runs/sub").mkdir(parents=True)
    for name, text in RUNS.items():
        Path("runs", name).write_text(text)
    Path("runs/.hidden.run").write_text("not a run\n")
    Path("runs/sub/deeper.run").write_text("not read either\n")
    Path("q.qrel").write_text(QRELS)
    return tmp_path


SORTED = [f"runs/{name}" for name in ("B.run", "_c.run", "a.run")]


def _same(cli, *args, directory=("runs",), files=SORTED):
    """The command on the directory gives what it gives on the files in byte order."""
    on_files = cli(*args[:1], *files, *args[1:])
    assert on_files.exit_code == 0, on_files.stderr
    on_directory = cli(*args[:1], *directory, *args[1:])
    assert on_directory.exit_code == 0, on_directory.stderr
    assert on_directory.stdout == on_files.stdout
    return on_files.stdout


def test_evaluate(cli, here):
    out = _same(cli, "evaluate", "--qrels", "q.qrel", "-m", "P@1", "--format", "json")
    assert [row["run"] for row in json.loads(out) if row["measure"] == "P@1"] == ["upper", "under", "lower"]
    # A directory and a file together, in the order given; a trailing slash changes nothing.
    Path("extra.run").write_text(RUNS["a.run"].replace("lower", "extra"))
    _same(cli, "evaluate", "--qrels", "q.qrel", directory=["extra.run", "runs/"], files=["extra.run", *SORTED])


def test_compare_and_pool(cli, here):
    _same(cli, "compare", "--qrels", "q.qrel", "-m", "P@1", "--baseline", "runs/a.run")
    _same(cli, "pool", "--depth", "2")


def test_the_reference_runs_as_a_directory(cli, run_paths, cast2022):
    qrels = cast2022 / "regin/qrels/question_relevance_all.qrel"
    files = sorted(str(p) for p in run_paths[0].parent.iterdir())
    assert len(files) == 4
    _same(cli, "evaluate", "--qrels", qrels, "--per-turn", directory=[run_paths[0].parent], files=files)


def test_report(cli, here):
    for out, runs in (("by_files", SORTED), ("by_directory", ["runs"])):
        assert cli("report", *runs, "--qrels", "q.qrel", "-m", "P@1", "--out", out).exit_code == 0
    for page in Path("by_files").rglob("*"):
        if page.is_file():
            assert (Path("by_directory") / page.relative_to("by_files")).read_bytes() == page.read_bytes()


def test_compressed_runs_in_a_directory(cli, here):
    Path("packed").mkdir()
    for name, text in RUNS.items():
        Path("packed", f"{name}.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    assert (cli("evaluate", "packed", "--qrels", "q.qrel").stdout
            == cli("evaluate", "runs", "--qrels", "q.qrel").stdout)


MI_RUN = {"run_name": "{name}", "run_type": "automatic", "turns": [
    {"turn_id": "132_1-1", "questions": [{"question": "Q0001", "rank": 1, "score": 2.0},
                                         {"question": "What is {name}?", "rank": 2, "score": 1.0}]}]}


def test_convert(cli, here):
    Path("json").mkdir()
    for name in ("beta", "alpha"):
        Path("json", f"{name}.json").write_text(json.dumps(MI_RUN).replace("{name}", name))
    Path("json/.draft.json").write_text("{")
    Path("bank.json").write_text(json.dumps({"Q0001": "Is it?"}))
    args = ["--bank", "bank.json", "--bank-out"]
    by_files = cli("convert", "questions", "json/alpha.json", "json/beta.json", *args, "b1.json", "--out-dir", "o1")
    by_directory = cli("convert", "questions", "json", *args, "b2.json", "--out-dir", "o2")
    assert by_files.exit_code == by_directory.exit_code == 0, by_directory.stderr
    assert sorted(p.name for p in Path("o2").iterdir()) == ["alpha.run", "beta.run"]
    for name in ("alpha.run", "beta.run"):
        assert Path("o1", name).read_bytes() == Path("o2", name).read_bytes()
    # New ids are given in the order the runs are read: the same order, the same bank.
    assert Path("b1.json").read_bytes() == Path("b2.json").read_bytes()


@pytest.mark.parametrize("command", [
    ["evaluate", "DIR", "--qrels", "q.qrel"], ["compare", "DIR", "--qrels", "q.qrel"], ["pool", "DIR"],
    ["report", "DIR", "--qrels", "q.qrel", "--out", "r"],
    ["convert", "questions", "DIR", "--bank", "q.qrel", "-o", "-"],
    ["convert", "responses", "DIR", "--bank", "q.qrel", "-o", "-"], ["convert", "passages", "DIR", "-o", "-"],
])
def test_a_directory_without_runs_is_one_line(cli, here, command):
    Path("empty").mkdir()
    Path("hidden_only/sub").mkdir(parents=True)
    Path("hidden_only/.x.run").write_text(RUNS["a.run"])
    for directory in ("empty", "hidden_only"):
        result = cli(*(directory if part == "DIR" else part for part in command))
        assert result.exit_code == 1, result.stdout
        assert result.stderr == (f"castregin: error: {directory}: the directory holds no run file (hidden files "
                                 "and subdirectories are skipped); give run files or a directory of them\n")
