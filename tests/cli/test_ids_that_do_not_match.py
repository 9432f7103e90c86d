"""The spec's rule: "A table that would be all zeros because ids don't match gets a warning, not silence".

Each command that scores runs against qrels (evaluate, compare, report, agreement --runs) is given a qrels that
shares no turn with the runs (the turn ids written 132-1-1 where the runs say 132_1-1): each warns, one line per
run naming the qrels. `report` ended in a KeyError traceback there (its significance matrix looked up pairs of
runs that compare had not tested: no turn to test them on).
"""

from __future__ import annotations

import pytest

RUNS = {"a": [("Q1", 2.0), ("Q2", 1.0)], "b": [("Q2", 2.0), ("Q1", 1.0)]}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    turns = [f"132_1-{t}" for t in range(1, 6)]
    for tag, ranking in RUNS.items():
        (tmp_path / f"{tag}.run").write_text("".join(f"{turn} Q0 {item} {rank} {score} {tag}\n" for turn in turns
                                                     for rank, (item, score) in enumerate(ranking, start=1)))
    (tmp_path / "dashed.qrel").write_text("".join(f"{turn.replace('_', '-')} 0 Q1 2\n{turn.replace('_', '-')} 0 Q2 0\n"
                                                  for turn in turns))
    (tmp_path / "other.qrel").write_text("".join(f"{turn.replace('_', '-')} 0 Q1 1\n{turn.replace('_', '-')} 0 Q2 2\n"
                                                 for turn in turns))
    return tmp_path


def _warning(run: str, qrels: str) -> str:
    return (f"castregin: warning: run '{run}' shares no turn with qrels '{qrels}' (5 turns): every value is 0; check "
            "the turn ids (the qrels' look like '132-1-1')\n")


def _warned(result, qrels=("dashed",)) -> None:
    assert "Traceback" not in result.stderr
    for name in qrels:
        for run in RUNS:
            assert _warning(run, name) in result.stderr, result.stderr


def test_evaluate(cli, files):
    result = cli("evaluate", "a.run", "b.run", "--qrels", "dashed.qrel", "-m", "P@1")
    assert result.exit_code == 0
    _warned(result)
    assert [line.split()[1:] for line in result.stdout.splitlines()[2:]] == [["0", "0.0000"], ["0", "0.0000"]]


def test_compare(cli, files):
    result = cli("compare", "a.run", "b.run", "--qrels", "dashed.qrel", "-m", "P@1", "--format", "json")
    assert result.exit_code == 0 and result.stdout.strip() == "[]"  # nothing to test
    _warned(result)


def test_report(cli, files):
    result = cli("report", "a.run", "b.run", "--qrels", "dashed.qrel", "-m", "P@1", "--ci-samples", "10",
                 "--out", "report")
    assert result.exit_code == 0, result.stderr
    _warned(result)
    page = (files / "report" / "index.html").read_text(encoding="utf-8")
    assert "a and b have no turn on dashed in common: nothing to compare" in page


def test_agreement_ranking(cli, files):
    result = cli("agreement", "dashed.qrel", "other.qrel", "--runs", "a.run", "--runs", "b.run", "-m", "P@1",
                 "--samples", "0")
    assert result.exit_code == 0
    _warned(result, ("dashed", "other"))
    # As castregin lines, not Python's warnings (the ranking was evaluated outside the command's warning block).
    assert "CoverageWarning" not in result.stderr
