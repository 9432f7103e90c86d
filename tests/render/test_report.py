"""report: the HTML report of the CAsT 2022 baseline runs and of 30 simulated runs, its figures, its
reproducibility block, the runs' own pages, and its data helpers."""

from __future__ import annotations

import base64
import html
import re
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest
from evaluation.test_ranking_agreement import _pytrec_means
from reference_runs import write_reference_runs

import castregin.render
from castregin import Qrels, Run, formats
from castregin.evaluation.evaluate import evaluate
from castregin.evaluation.measures import DEFAULT_MEASURES
from castregin.evaluation.report_data import ReportSettings, label_distribution, report_data, turn_statistics
from castregin.formats.output import replace_directory
from castregin.formats.provenance import provenance
from castregin.render.report import INDEX, REPORT_FILES, build_report, report_files

TAGS = ["bm25_baseline_mi_run", "miniLM_bert_sample_mi_run", "T5_raw", "T5_rewrite"]
PNG = b"\x89PNG\r\n\x1a\n"


def report_of(runs, qrels, measures=DEFAULT_MEASURES, *, date="2024-01-01T00:00:00Z", **settings):
    """The report of ``runs`` in memory, computed and rendered as the report command does."""
    data = report_data(runs, qrels, ReportSettings(measures=tuple(measures), **settings))
    return build_report(data, provenance([], command="castregin report", date=date))


def write_report(runs, qrels, out_dir, **settings):
    """:func:`report_of` written into ``out_dir`` as the report command writes it; the path of index.html."""
    return replace_directory(out_dir, report_files(report_of(runs, qrels, **settings)), kind="report",
                             allowed=REPORT_FILES) / INDEX


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
    # The stylesheet is the package's report.css verbatim (escaped, its quoted font names were lost).
    css = (Path(castregin.render.__file__).parent / "templates" / "report.css").read_text(encoding="utf-8")
    assert f"<style>\n{css}</style>" in page and '"Segoe UI"' in css
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2 + 2 * len(TAGS)  # qrels histogram, leaderboard; per-turn and top-k labels of each run
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
        ["qrels-01-question_relevance_all-labels.png", "leaderboard-01-question_relevance_all-nDCG_3.png"]
        + [f"run-{i:02d}-{tag}-question_relevance_all-{kind}.png"
           for i, tag in enumerate(TAGS, 1) for kind in ("per-turn-nDCG_3", "top10-labels")])
    page = (report_dir / "index.html").read_text(encoding="utf-8")
    for name in figures:
        data = (report_dir / "figures" / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 5000
        assert base64.b64encode(data).decode() in page
        assert b"http" not in data  # no Software chunk with matplotlib's URL
    assert not list(report_dir.rglob(".*.tmp"))  # atomic writes leave no temporary file


def test_report_is_deterministic(cast2022, run_paths):
    runs = [formats.read_run(p) for p in run_paths[:2]]
    qrels = [formats.read_qrels(cast2022 / "regin/qrels/question_relevance_mi_subset.qrel")]
    first = report_of(runs, qrels, ["P@1"], date="2024-01-01T00:00:00Z")
    second = report_of(runs, qrels, ["P@1"], date="2024-01-01T00:00:00Z")
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
    """The judged@k column of the report's leaderboard, in the order of ``runs`` (the board is sorted)."""
    page = report_of(runs, [qrels], ["P@1"], depth=k).html
    board = page.split('id="leaderboard"')[1].split('id="significance"')[0]
    judged = {cells[0].split(" (")[0]: float(cells[-1]) for cells in re.findall(r"<tr>(.*?)</tr>", board)
              for cells in [re.findall(r"<td[^>]*>([^<]*)</td>", cells)] if cells}
    return [judged[run.tag] for run in runs]


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
    table = turn_statistics(results, "q", "P@1").versus("b")
    assert table.to_dict("list") == {"turn": ["t1", "t2"], "value": [0.0, 0.0], "median": [1.0, 0.5],
                                     "best": [1.0, 1.0], "worst": [0.0, 0.0]}


# --- a report of 30 simulated runs ---------------------------------------------------------------------------

SIMULATED_RUNS = 30
EPOCH = 1_700_000_000  # SOURCE_DATE_EPOCH of the simulated report: its date is 2023-11-14T22:13:20Z


def simulated_names(count: int, rng) -> list[str]:
    """Run tags of varying length, 3 to 40 characters, one of them 40 characters without a break."""
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789_-"))
    names = ["x" * 40]
    while len(names) < count:
        name = "".join(rng.choice(alphabet, size=int(rng.integers(3, 41))))
        if name not in names:
            names.append(name)
    return names


def write_simulated(directory, runs: int = SIMULATED_RUNS, topics: int = 6, seed: int = 7):
    """Qrels and ``runs`` TREC runs of CAsT-like turns (5 a topic), each run better or worse at random.

    Returns the qrels path and the run paths. A run ranks 20 of a turn's judged items and 40 others by
    its quality times the label plus noise, so that runs differ and some differences are significant.
    """
    rng = np.random.default_rng(seed)
    turns = [f"{132 + t}_{1 + k // 3}-{1 + k % 3}" for t in range(topics) for k in range(5)]
    judged = {turn: {f"Q{rng.integers(0, 10**6):06d}": int(rng.choice(5, p=[.4, .2, .2, .1, .1]))
                     for _ in range(15)} for turn in turns}
    qrels = directory / "simulated.qrel"
    qrels.write_text("".join(f"{t} 0 {item} {label}\n" for t in turns for item, label in sorted(judged[t].items())))
    paths = []
    for index, name in enumerate(simulated_names(runs, rng)):
        quality = rng.uniform(0.0, 1.0)
        lines = []
        for turn in turns:
            candidates = list(dict.fromkeys([*judged[turn], *(f"Q{rng.integers(0, 10**6):06d}" for _ in range(40))]))
            scores = {item: quality * judged[turn].get(item, 0) + rng.normal(0, 1.5) for item in candidates}
            items = sorted(candidates, key=lambda item: -scores[item])[:20]
            lines += [f"{turn} Q0 {item} {rank} {20 - rank}.5 {name}\n" for rank, item in enumerate(items, 1)]
        path = directory / f"run{index:02d}.run"
        path.write_text("".join(lines))
        paths.append(path)
    return qrels, paths


def report_simulated(directory, *extra):
    """The CLI's report of the simulated runs with every option on; its directory and the inputs."""
    from click.testing import CliRunner

    from castregin.cli import main

    qrels, runs = write_simulated(directory)
    out = directory / "report"
    args = ["report", *map(str, runs), "--qrels", f"sim={qrels}", "--out", str(out), "--per-run-files",
            "--correlation", "--loro-depth", "3", "-m", "nDCG@3", "-m", "P@1", "-m", "AP", *extra]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
        patch.setattr(sys, "argv", ["castregin", *args])  # as the shell would have set it
        result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out, [*runs, qrels]


def _pages(out):
    return {path.relative_to(out).as_posix(): path.read_text(encoding="utf-8")
            for path in [out / "index.html", *sorted((out / "runs").glob("*.html"))]}


def test_simulated_report_never_prints_negative_zero(simulated):
    out, _ = simulated
    for name, page in _pages(out).items():
        assert not re.search(r"-0\.0+(?![0-9])", page), name
        assert not re.search(r"\+0\.0+(?![0-9])", page), name  # a zero has no sign either


def test_leaderboard_is_sorted_by_the_first_measure_with_intervals(simulated):
    out, _ = simulated
    page = (out / "index.html").read_text(encoding="utf-8")
    board = page[page.index('id="leaderboard"'):page.index('id="significance"')]
    rows = re.findall(r"<tr><td[^>]*>([^<]*)</td>(.*?)</tr>", board)
    assert len(rows) == SIMULATED_RUNS
    means, intervals = [], []
    for _name, cells in rows:
        first = re.findall(r"<td class=\"num\">(?:<strong>)?([0-9.]+)(?:</strong>)?(?:<sup>[a-z]+</sup>)?"
                           r"<br><small><span>\[([0-9.]+), ([0-9.]+)\]</span>", cells)[0]
        means.append(float(first[0]))
        intervals.append((float(first[1]), float(first[2])))
    assert means == sorted(means, reverse=True) and len(set(means)) > 5
    assert all(low <= mean <= high for mean, (low, high) in zip(means, intervals, strict=True))
    assert "Sorted by nDCG@3, highest first" in board


def test_bootstrap_intervals_are_percentile_interval_of_the_turns(simulated):
    from castregin.evaluation.analysis import percentile_interval
    from castregin.evaluation.report_data import mean_intervals

    out, inputs = simulated
    runs, qrels = [formats.read_run(p) for p in inputs[:3]], formats.read_qrels(inputs[-1], "sim")
    results = evaluate(runs, qrels, ["nDCG@3"], per_turn=True)
    intervals = mean_intervals(results, ["nDCG@3"], samples=1000, seed=42)
    rows = results[(results["run"] == runs[1].tag) & (results["turn"] != "all") & (results["measure"] == "nDCG@3")]
    values = dict(zip(rows["turn"], rows["value"], strict=True))
    expected = percentile_interval([values[t] for t in sorted(values)], samples=1000, seed=42)
    assert intervals[("sim", "nDCG@3", runs[1].tag)] == expected
    low, high = expected
    assert f"[{low:.4f}, {high:.4f}]" in (out / "index.html").read_text(encoding="utf-8")


def test_reproducibility_block_lists_every_input_with_its_sha256(simulated):
    import hashlib

    from castregin.formats.provenance import castregin_version

    out, inputs = simulated
    page = (out / "index.html").read_text(encoding="utf-8")
    block = page[page.index('id="reproducibility"'):]
    rows = dict(re.findall(r"<tr><td>([^<]*)</td><td><code>([0-9a-f]{64})</code></td></tr>", block))
    assert rows == {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in inputs}
    assert "2023-11-14T22:13:20Z" in block and castregin_version() in block
    command = html.unescape(re.search(r"<dt>Command</dt><dd><code>([^<]*)</code>", block).group(1))
    words = shlex.split(command)
    assert words[:2] == ["castregin", "report"] and words[2:2 + len(inputs) - 1] == [str(p) for p in inputs[:-1]]
    assert words[-10:] == ["--per-run-files", "--correlation", "--loro-depth", "3", "-m", "nDCG@3", "-m", "P@1",
                           "-m", "AP"] and f"sim={inputs[-1]}" in words


def test_per_run_files_are_self_contained_pages_of_each_run(simulated):
    from castregin.render.report import run_file_names

    out, inputs = simulated
    tags = [formats.read_run(p).tag for p in inputs[:-1]]
    files = run_file_names(tags)
    assert sorted(p.relative_to(out).as_posix() for p in (out / "runs").iterdir()) == sorted(files.values())
    index = (out / "index.html").read_text(encoding="utf-8")
    for tag, name in files.items():
        page = (out / name).read_text(encoding="utf-8")
        assert f"<h1>castregin report: {tag}</h1>" in page and f'href="{name}"' in index
        assert "http://" not in page and "https://" not in page and "<script" not in page and "<link" not in page
        assert "url(" not in page and not re.findall(r"\s(?:src|href)=\"(?!data:|#)", page)
        assert len(re.findall(r'<img src="data:image/png;base64,', page)) == 2  # per-turn plot, top-k labels
        assert "<details class=\"turns\" open>" in page and 'id="reproducibility"' in page
    assert len(files) == SIMULATED_RUNS


def test_per_turn_tables_hold_best_median_and_worst_of_all_runs(simulated):
    out, inputs = simulated
    runs, qrels = [formats.read_run(p) for p in inputs[:-1]], formats.read_qrels(inputs[-1], "sim")
    results = evaluate(runs, qrels, ["nDCG@3"], per_turn=True)
    statistics = turn_statistics(results, "sim", "nDCG@3")
    table = statistics.versus(runs[4].tag)
    by_turn = results[(results["turn"] != "all") & (results["measure"] == "nDCG@3")].groupby("turn")["value"]
    assert list(table["best"]) == [by_turn.max()[t] for t in table["turn"]]
    assert list(table["worst"]) == [by_turn.min()[t] for t in table["turn"]]
    assert list(table["median"]) == pytest.approx([by_turn.median()[t] for t in table["turn"]])
    page = (out / "index.html").read_text(encoding="utf-8")
    section = page[page.index(f'<h3 id="run-5">{runs[4].tag}'):page.index('<h3 id="run-6">')]
    turn, value, median, best, worst = next(table.itertuples(index=False))
    assert re.search(f"<td>{turn}</td><td class=\"num\">(<strong>)?{value:.4f}(</strong>)?</td>"
                     f"<td class=\"num\">{best:.4f}</td><td class=\"num\">{median:.4f}</td>"
                     f"<td class=\"num\">{worst:.4f}</td>", section)


def test_correlation_and_loro_tables_when_asked(simulated):
    out, _ = simulated
    page = (out / "index.html").read_text(encoding="utf-8")
    correlation = page[page.index('id="correlation"'):page.index('id="loro"')]
    # Three measures on one qrels: three pairs of rankings.
    assert len(re.findall(r"<tr><td>sim</td><td>", correlation)) == 3
    loro = page[page.index('id="loro"'):page.index('id="qrels"')]
    assert len(re.findall(r"<tr>", loro)) == SIMULATED_RUNS + 1 and "at depth 3" in loro and "nDCG@3" in loro


def test_matrix_header_cuts_long_names_and_keeps_them_whole_in_the_tooltip(simulated):
    from castregin.render.report import HEADER_CHARACTERS

    out, _inputs = simulated
    page = (out / "index.html").read_text(encoding="utf-8")
    matrix = page[page.index('id="significance"'):page.index('id="correlation"')]
    headers = re.findall(r'<th class="num rot" title="([^"]*)"><span>([^<]*)</span></th>', matrix)
    assert len(headers) == 3 * SIMULATED_RUNS  # three measures
    for full, shown in headers:
        assert len(shown) <= HEADER_CHARACTERS and (shown == full or (shown.endswith("…")
                                                                      and full.startswith(shown[:-1])))
    assert any(shown != full for full, shown in headers)


# --- the report's helpers ---------------------------------------------------------------------------------


def test_rounded_never_gives_a_signed_zero():
    from castregin.render.comparison import rounded

    assert rounded(-0.00001, 3, sign=True) == "0.000" and rounded(-0.0, 3) == "0.000"
    assert rounded(0.0, 4, sign=True) == "0.0000" and rounded(-0.0004, 3) == "0.000"
    assert rounded(-0.0006, 3) == "-0.001" and rounded(0.0006, 3, sign=True) == "+0.001"
    assert rounded(5.0, integer=True) == "5" and rounded(float("nan")) == "nan"


def test_run_file_names_are_unique_even_when_slugs_collide():
    from castregin.render.report import run_file_names

    assert run_file_names(["a b", "a_b", "A_B", "c@1"]) == {
        "a b": "runs/a_b.html", "a_b": "runs/a_b-2.html", "A_B": "runs/A_B-3.html", "c@1": "runs/c_1.html"}


def test_sha256_is_streamed_and_equals_hashlib(tmp_path, monkeypatch):
    import hashlib
    import io

    from castregin import formats
    from castregin.formats import provenance as record_module
    from castregin.formats.common import stream_digests

    path = tmp_path / "big.run"
    path.write_bytes(bytes(range(256)) * 20_000)  # 5 MB: several chunks
    monkeypatch.setattr(record_module, "_HASH_CHUNK", 1 << 16)
    assert record_module.sha256_file(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    # Standard input is hashed as it was read (it cannot be read twice): see tests/formats/test_provenance.py.
    standard_input = io.BytesIO(b"t1 0 Q1 2\n")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(standard_input))
    with stream_digests():
        formats.read_qrels("-")
        record = record_module.provenance([path, "-"], command="castregin report x", date="2024-01-01T00:00:00Z")
    assert record.inputs == [(str(path), hashlib.sha256(path.read_bytes()).hexdigest()),
                             ("-", hashlib.sha256(b"t1 0 Q1 2\n").hexdigest())]


def test_date_is_utc_iso_and_honours_source_date_epoch(monkeypatch):
    from castregin.formats.provenance import utc_date

    assert utc_date(0) == "1970-01-01T00:00:00Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    assert utc_date() == "2023-11-14T22:13:20Z"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", utc_date())


def test_plot_measure_is_chosen_and_checked(cli, tmp_path):
    qrels, runs = write_simulated(tmp_path, runs=3, topics=2)
    qrels_list, run_list = [formats.read_qrels(qrels)], [formats.read_run(p) for p in runs]
    report = report_of(run_list, qrels_list, ["P@1"], plot_measure="AP", date="2024-01-01T00:00:00Z")
    assert sum(name.endswith("-per-turn-AP.png") for name in report.figures) == 3
    assert "AP per turn on simulated" in report.html
    # The same measure under its trec_eval name is evaluated once and plotted under the name given.
    report = report_of(run_list, qrels_list, ["ndcg_cut_3"], date="2024-01-01T00:00:00Z")
    assert sum(name.endswith("-per-turn-ndcg_cut_3.png") for name in report.figures) == 3
    result = cli("report", *runs, "--qrels", qrels, "--out", tmp_path / "r", "--plot-measure", "num_q")
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert "--plot-measure" in result.stderr and "per turn" in result.stderr
    assert not (tmp_path / "r").exists()


def test_ranking_agreement_section_with_two_qrels(tmp_path):
    from scipy import stats

    qrels_path, run_paths = write_simulated(tmp_path, runs=6, topics=3)
    runs = [formats.read_run(path) for path in run_paths]
    human = formats.read_qrels(qrels_path, "human")
    rng = np.random.default_rng(2)
    llm = Qrels({turn: {item: int(rng.integers(0, 5)) if rng.random() < 0.5 else label for item, label in items.items()}
                 for turn, items in human.labels.items()}, "llm")
    report = report_of(runs, [human, llm], ["nDCG@3", "P@1"], plot_measure="P@1", top_k=3)
    page = report.html
    section = page[page.index('id="agreement"'):page.index('id="qrels"')]
    # Each run's P@1 mean under each source from pytrec_eval, not from castregin's evaluate.
    a, b = (np.array(_pytrec_means(runs, qrels, "P_1")) for qrels in (human, llm))
    assert "<h3>A = human, B = llm</h3>" in section
    assert f'<td class="num">{stats.kendalltau(a, b).statistic:.3f}</td>' in section
    assert f'<td class="num">{stats.spearmanr(a, b).statistic:.3f}</td>' in section
    changed = np.flatnonzero(stats.rankdata(-a, method="min") != stats.rankdata(-b, method="min"))
    movers = section.split("<table>")[2] if len(changed) else ""
    assert len(re.findall(r"<tr><td>", movers)) == len(changed) > 0
    assert all(f"<td>{runs[i].tag}</td>" in movers for i in changed)
    (figure,) = [name for name in report.figures if name.startswith("figures/agreement-")]
    assert figure == "figures/agreement-01-human-llm-P_1.png" and report.figures[figure].startswith(PNG)
    assert 'id="agreement"' not in report_of(runs, [human], ["P@1"], plot_measure="P@1").html
