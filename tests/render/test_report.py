"""report: the HTML report of the CAsT 2022 baseline runs, its figures, and its data helpers."""

from __future__ import annotations

import base64
import re

import pytest
from reference_runs import write_reference_runs

from castregin import Qrels, Run, formats
from castregin.evaluation.evaluate import evaluate
from castregin.render.report import build_report, label_distribution, per_turn_versus_median

TAGS = ["bm25_baseline_mi_run", "miniLM_bert_sample_mi_run", "T5_raw", "T5_rewrite"]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run_paths(cast2022, tmp_path_factory):
    return write_reference_runs(cast2022, tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def report_dir(cast2022, run_paths, tmp_path_factory):
    from click.testing import CliRunner

    from castregin.cli import main

    out = tmp_path_factory.mktemp("report") / "report"
    qrels = cast2022 / "regin/qrels/question_relevance_all.qrel"
    args = ["report", *map(str, run_paths), "--qrels", str(qrels), "--out", str(out), "-m", "nDCG@3", "-m", "P@1",
            "--baseline", str(run_paths[2])]  # T5_raw, which bm25 and miniLM beat significantly on nDCG@3
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def test_report_is_written_self_contained_with_every_run(report_dir):
    page = (report_dir / "index.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for tag in TAGS:
        assert tag in page
    # Nothing fetched from the network: no URL anywhere, no external stylesheet, script or font.
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page and "@import" not in page and "url(" not in page
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 1 + 2 * len(TAGS)  # qrels histogram; per-turn and top-k labels of each run
    assert all(base64.b64decode(data).startswith(PNG) for data in images)
    assert re.findall(r"<img [^>]*src=\"(?!data:)", page) == []
    for section in ("Leaderboard", "Significance matrix", "Qrels", "judged@10"):
        assert section in page
    leaderboard = page[page.index('id="leaderboard"'):page.index('id="significance"')]
    bm25_row = next(row for row in leaderboard.split("<tr>") if row.startswith("<td>bm25_baseline_mi_run"))
    assert "<strong>0.2425</strong>" not in bm25_row and "0.2425<sup>\u2020</sup>" in bm25_row
    assert "<strong>0.2437</strong><sup>\u2020</sup>" in leaderboard  # miniLM: best nDCG@3, beats T5_raw
    assert "T5_raw <em>(baseline)</em>" in leaderboard


def test_figures_exist_as_png_files_matching_the_embedded_ones(report_dir):
    figures = sorted(p.name for p in (report_dir / "figures").iterdir())
    assert figures == sorted(
        ["qrels-01-question_relevance_all-labels.png"]
        + [f"run-{i:02d}-{tag}-question_relevance_all-{kind}.png"
           for i, tag in enumerate(TAGS, 1) for kind in ("per-turn-nDCG_3", "top10-labels")])
    page = (report_dir / "index.html").read_text(encoding="utf-8")
    for name in figures:
        data = (report_dir / "figures" / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 5000
        assert base64.b64encode(data).decode() in page
        assert b"http" not in data  # no Software chunk with matplotlib's URL
    assert not [p for p in report_dir.rglob(".*.tmp")]  # atomic writes leave no temporary file


def test_report_is_deterministic(cast2022, run_paths):
    runs = [formats.read_run(p) for p in run_paths[:2]]
    qrels = [formats.read_qrels(cast2022 / "regin/qrels/question_relevance_mi_subset.qrel")]
    first = build_report(runs, qrels, ["P@1"])
    second = build_report(runs, qrels, ["P@1"])
    assert first.html == second.html and first.figures == second.figures
    assert "bm25_baseline_mi_run" in first.html and "miniLM_bert_sample_mi_run" in first.html


def test_report_refuses_to_overwrite_an_input_and_rejects_unknown_baseline(cli, run_paths, cast2022, tmp_path):
    qrels = cast2022 / "regin/qrels/question_relevance_all.qrel"
    result = cli("report", run_paths[0], "--qrels", qrels, "--out", tmp_path / "r", "--baseline", "nope")
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert "unknown --baseline 'nope'" in result.stderr
    assert not (tmp_path / "r").exists()


# --- helpers on hand-made data ----------------------------------------------------------------------

QRELS = Qrels({"t1": {"Q1": 2, "Q2": 0}, "t2": {"Q5": 3}}, name="q")


def _run(tag, scores):
    return Run(tag, scores, {t: {i: k for k, i in enumerate(items, 1)} for t, items in scores.items()})


def test_label_distribution_counts_unjudged_and_uses_trec_eval_order():
    # t1 ties on score: trec_eval puts Q2 (higher id) first; t3 is not judged at all and is left out.
    run = _run("r", {"t1": {"Q1": 1.0, "Q2": 1.0, "Q7": 0.5}, "t2": {"Q9": 2.0, "Q5": 1.0}, "t3": {"Q1": 1.0}})
    frame = label_distribution(run, QRELS, depth=3)
    assert list(frame.columns) == [0, 2, 3, "unjudged"]
    assert frame.loc[1].tolist() == [1, 0, 0, 1]
    assert frame.loc[2].tolist() == [0, 1, 1, 0]
    assert frame.loc[3].tolist() == [0, 0, 0, 1]


def _leaderboard_judged(runs, qrels, k):
    """The judged@k column of the report's leaderboard, run by run."""
    page = build_report(runs, [qrels], ["P@1"], depth=k).html
    board = page.split('id="leaderboard"')[1].split('id="significance"')[0]
    return [float(cells[-1]) for cells in re.findall(r"<tr>(.*?)</tr>", board)
            for cells in [re.findall(r"<td[^>]*>([^<]*)</td>", cells)] if cells]


def test_report_judged_at_k_is_evaluates_judged_at_k_with_ties():
    import ir_measures

    # t1's two items tie: ir_measures' Judged takes Q1 first (judged), trec_eval's order Q3 (not judged).
    # Before, the report ranked in trec_eval's order and said 0.5 where `evaluate -m Judged@1` said 1.0.
    runs = [_run("tied", {"t1": {"Q1": 1.0, "Q3": 1.0}, "t2": {"Q9": 2.0, "Q5": 1.0, "Q8": 0.1}}),
            _run("short", {"t1": {"Q7": 0.5, "Q1": 1.0}, "t2": {"Q8": 3.0}, "t3": {"Q1": 1.0}})]
    for k in (1, 2, 3, 10):
        expected = []
        for run in runs:
            shared = {t: s for t, s in run.scores.items() if t in QRELS.labels}
            expected.append(ir_measures.calc_aggregate([ir_measures.Judged @ k], QRELS.labels, shared)[
                ir_measures.Judged @ k])
            rows = evaluate(run, QRELS, [f"Judged@{k}"])
            assert rows[rows["measure"] == f"Judged@{k}"]["value"].item() == pytest.approx(expected[-1])
        assert _leaderboard_judged(runs, QRELS, k) == pytest.approx([round(v, 4) for v in expected], abs=1e-9)
    assert _leaderboard_judged(runs, QRELS, 1)[0] == 0.5  # trec_eval's order would give 0.0


def test_per_turn_versus_median_and_best():
    a = _run("a", {"t1": {"Q1": 1.0}, "t2": {"Q5": 1.0}})
    b = _run("b", {"t1": {"Q2": 1.0}, "t2": {"Q9": 1.0}})
    c = _run("c", {"t1": {"Q1": 1.0}})
    results = evaluate([a, b, c], QRELS, ["P@1"], per_turn=True)
    table = per_turn_versus_median(results, "q", "P@1", "b")
    assert table.to_dict("list") == {"turn": ["t1", "t2"], "value": [0.0, 0.0], "median": [1.0, 0.5],
                                     "best": [1.0, 1.0]}
