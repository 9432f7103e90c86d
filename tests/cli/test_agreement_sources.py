"""`castregin agreement SOURCE...` on the command line: sources of each kind, every format, the plot, and
each refusal in one line. The numbers are checked against scikit-learn (the stage's own tests hold the
full comparison with scikit-learn, krippendorff and scipy)."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from pathlib import Path

import pytest

sklearn_metrics = pytest.importorskip("sklearn.metrics")

REPO = Path(__file__).resolve().parent.parent.parent
LLMJUDGE = REPO / "tests" / "data" / "llmjudge"
HUMAN, GPT4O, UMBRELA = (LLMJUDGE / f"{n}.qrel" for n in ("human", "Olz-gpt4o", "willia-umbrela1"))
CROWD = REPO / "data" / "crowd"
PNG = b"\x89PNG\r\n\x1a\n"


def table_of(path: Path) -> dict[tuple[str, str], int]:
    return {(t, i): int(label) for t, _, i, label in (line.split() for line in path.read_text().splitlines())}


def kappas(a: dict, b: dict) -> dict[str, float]:
    keys = sorted(a.keys() & b.keys())
    x, y = [a[k] for k in keys], [b[k] for k in keys]
    return {name: sklearn_metrics.cohen_kappa_score(x, y, weights=w)
            for name, w in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic"))}


def test_json_holds_the_oracles_numbers(cli, tmp_path):
    out = tmp_path / "a.json"
    result = cli("agreement", f"human={HUMAN}", f"gpt4o={GPT4O}", "--samples", "200", "--format", "json", "-o", out)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    (pair,) = data["pairs"]
    assert (pair["a"], pair["b"], pair["both"], pair["only_a"], pair["only_b"]) == ("human", "gpt4o", 4423, 0, 0)
    for name, value in kappas(table_of(HUMAN), table_of(GPT4O)).items():
        assert pair["statistics"][name] == pytest.approx(value, abs=1e-12)
    low, high = pair["intervals"]["kappa"]
    assert low < pair["statistics"]["kappa"] < high
    assert data["settings"] == {"rel_level": 2, "samples": 200, "seed": 0, "confidence": 0.95,
                                "negative_labels": "unjudged"}
    assert data["overall"] is None


def test_every_record_format(cli):
    args = ("agreement", f"human={HUMAN}", f"gpt4o={GPT4O}", f"umbrela={UMBRELA}", "--samples", "50")
    table = cli(*args).stdout
    assert "human vs gpt4o" in table and "only_a" in table and "only_b" in table and "confusion: human" in table
    assert "all sources together" in table
    markdown = cli(*args, "--format", "markdown").stdout
    assert "| statistic | human vs gpt4o |" in markdown
    latex = cli(*args, "--format", "latex", "--show", "pairs").stdout
    assert latex.count("\\begin{tabular}") == 1 and "only\\_a" in latex
    rows = list(csv.DictReader(io.StringIO(cli(*args, "--format", "csv").stdout)))
    assert {(r["a"], r["b"]) for r in rows} == {("human", "gpt4o"), ("human", "umbrela"), ("gpt4o", "umbrela")}
    want = kappas(table_of(HUMAN), table_of(UMBRELA))["kappa_quadratic"]
    (row,) = [r for r in rows if (r["a"], r["b"], r["statistic"]) == ("human", "umbrela", "kappa_quadratic")]
    assert float(row["value"]) == pytest.approx(want, abs=1e-12) and float(row["ci_low"]) < want
    confusion = list(csv.DictReader(io.StringIO(cli(*args, "--format", "csv", "--show", "confusion").stdout)))
    human, gpt4o = table_of(HUMAN), table_of(GPT4O)
    matrix = sklearn_metrics.confusion_matrix([human[k] for k in sorted(human)], [gpt4o[k] for k in sorted(human)])
    got = {(int(r["label_a"]), int(r["label_b"])): int(r["count"]) for r in confusion if r["b"] == "gpt4o"
           and r["a"] == "human"}
    assert got == {(i, j): int(matrix[i, j]) for i in range(4) for j in range(4)}
    topics = cli(*args, "--show", "topics").stdout
    assert "q49" in topics


def four_decimals(value: float) -> str:
    """A number as the tables for people print it: four decimals, no sign on a zero (-2e-16 is 0.0000)."""
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_the_numbers_people_read_are_sklearns(cli, tmp_path, fmt):
    """A small case whose kappa is -2.2e-16 in floating point (scikit-learn's too): 0.0000 in every format
    for people, and each statistic the oracle's to four decimals."""
    x, y = [3, 3, 1, 3, 0, 2], [3, 2, 3, 1, 3, 2]
    paths = []
    for name, labels in (("x", x), ("y", y)):
        paths.append(tmp_path / f"{name}.qrel")
        paths[-1].write_text("".join(f"1_1 0 d{i} {v}\n" for i, v in enumerate(labels)))
    result = cli("agreement", *paths, "--samples", "0", "--show", "pairs,labels", "--format", fmt)
    assert result.exit_code == 0, result.stderr
    want = {name: sklearn_metrics.cohen_kappa_score(x, y, weights=w)
            for name, w in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic"))}
    assert -1e-12 < want["kappa"] < 0  # the case this test is about
    want["exact"] = sklearn_metrics.accuracy_score(x, y)
    want["binary_kappa"] = sklearn_metrics.cohen_kappa_score([v >= 2 for v in x], [v >= 2 for v in y])
    cells = {}
    for line in result.stdout.splitlines():
        parts = [p.strip() for p in re.split(r"\s*(?:\||&|\\\\)\s*|\s{2,}", line.strip()) if p.strip()]
        if len(parts) == 2:
            cells[parts[0].replace("\\_", "_")] = parts[1]
    assert {name: cells[name] for name in want} == {name: four_decimals(v) for name, v in want.items()}
    assert "-0.0000" not in result.stdout


def test_only_a_and_only_b_are_shown(cli, tmp_path):
    part = tmp_path / "part.qrel"
    lines = HUMAN.read_text().splitlines()
    part.write_text("\n".join(lines[:1000]) + "\nq1 0 new1 2\nq1 0 new2 0\n")
    result = cli("agreement", HUMAN, part, "--samples", "0", "--show", "pairs")
    assert result.exit_code == 0, result.stderr
    counts = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()[3:6]}
    assert counts == {"both": "1000", "only_a": "3423", "only_b": "2"}
    assert "no bootstrap" in result.stdout


def test_a_label_below_0_is_no_judgment_and_the_output_says_so(cli, tmp_path):
    """-1 in a qrels is "in the pool but unjudged" (as for qrels merge and judge --only-unjudged): the pair
    counts as only_a or only_b, the statistics are sklearn's on the labels >= 0; on request a category."""
    human = table_of(HUMAN)
    keys = sorted(human)[:400]
    pooled = {k: -1 if n % 7 == 0 else human[k] for n, k in enumerate(keys)}
    llm = {k: -1 if n % 5 == 0 else table_of(GPT4O)[k] for n, k in enumerate(keys)}
    paths = []
    for name, labels in (("pooled", pooled), ("llm", llm)):
        paths.append(tmp_path / f"{name}.qrel")
        paths[-1].write_text("".join(f"{t} 0 {i} {label}\n" for (t, i), label in labels.items()))
    result = cli("agreement", *paths, "--samples", "0", "--format", "json")
    assert result.exit_code == 0, result.stderr
    (pair,) = json.loads(result.stdout)["pairs"]
    judged_a = {k for k, v in pooled.items() if v >= 0}
    judged_b = {k for k, v in llm.items() if v >= 0}
    assert (pair["both"], pair["only_a"], pair["only_b"]) == (len(judged_a & judged_b), len(judged_a - judged_b),
                                                             len(judged_b - judged_a))
    want = kappas({k: pooled[k] for k in judged_a}, {k: llm[k] for k in judged_b})
    for name, value in want.items():
        assert pair["statistics"][name] == pytest.approx(value, abs=1e-12)
    table = cli("agreement", *paths, "--samples", "0", "--show", "pairs").stdout
    assert (f"labels below 0 (in the pool but unjudged) are no judgment, left out: pooled {len(keys) - len(judged_a)}, "
            f"llm {len(keys) - len(judged_b)}") in table
    category = cli("agreement", *paths, "--samples", "0", "--format", "json", "--negative-labels", "category")
    (pair,) = json.loads(category.stdout)["pairs"]
    assert pair["both"] == len(keys) and pair["labels"][0] == -1
    assert pair["statistics"]["kappa"] == pytest.approx(kappas(pooled, llm)["kappa"], abs=1e-12)


def test_plot_is_written(cli, tmp_path):
    plot = tmp_path / "cm.png"
    result = cli("agreement", HUMAN, GPT4O, UMBRELA, "--samples", "0", "--plot", plot, "-o", tmp_path / "t.txt")
    assert result.exit_code == 0, result.stderr
    data = plot.read_bytes()
    assert data.startswith(PNG) and len(data) > 5000
    assert (tmp_path / "t.txt").read_text().startswith("agreement on")


def test_crowd_source_is_aggregated_with_the_aggregate_options(cli, tmp_path):
    out = tmp_path / "qrels"
    assert cli("aggregate", CROWD / "judgments.csv", "--criteria", "relevance", "--gold", CROWD / "gold.csv",
               "--method", "dawid-skene", "--out-dir", out).exit_code == 0
    qrels = out / "question_relevance.qrel"
    result = cli("agreement", f"nist={qrels}", f"crowd={CROWD / 'judgments.csv'}", "--criteria", "relevance",
                 "--gold", CROWD / "gold.csv", "--method", "dawid-skene", "--format", "json", "--samples", "0")
    assert result.exit_code == 0, result.stderr
    (pair,) = json.loads(result.stdout)["pairs"]
    assert pair["statistics"]["exact"] == 1.0 and pair["only_a"] == pair["only_b"] == 0  # the same labels
    mode_mean = cli("agreement", f"nist={qrels}", f"crowd={CROWD / 'judgments.csv'}", "--criteria", "relevance",
                    "--gold", CROWD / "gold.csv", "--format", "json", "--samples", "0")
    assert json.loads(mode_mean.stdout)["pairs"][0]["statistics"]["exact"] < 1.0


def test_per_worker_compares_each_worker_with_the_other_sources_only(cli, tmp_path):
    import pandas as pd

    qrels = tmp_path / "q.qrel"
    frame = pd.read_csv(CROWD / "judgments.csv", dtype=str, keep_default_na=False)
    frame = frame[frame["relevance"] != ""]
    reference = {}
    for turn, item in sorted(set(zip(frame["turn_id"], frame["item_id"], strict=True))):
        reference[turn, item] = (len(turn) + len(item)) % 4
    qrels.write_text("".join(f"{t} 0 {i} {label}\n" for (t, i), label in reference.items()))
    result = cli("agreement", qrels, f"crowd:{CROWD / 'judgments.csv'}", "--criteria", "relevance", "--per-worker",
                 "--format", "json", "--samples", "0")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    workers = sorted(set(frame["worker_id"]))
    assert [(p["a"], p["b"]) for p in data["pairs"]] == [("q", f"judgments:{w}") for w in workers]
    table = cli("agreement", qrels, f"crowd:{CROWD / 'judgments.csv'}", "--criteria", "relevance", "--per-worker",
                "--samples", "0", "--show", "pairs").stdout.splitlines()
    assert table[1].split()[:5] == ["a", "b", "both", "only_a", "only_b"]  # a row per pair when there are many
    assert [line.split()[1] for line in table[3:]] == [f"judgments:{w}" for w in workers]
    for pair, worker in zip(data["pairs"], workers, strict=True):
        mine = frame[frame["worker_id"] == worker]
        x = [reference[t, i] for t, i in zip(mine["turn_id"], mine["item_id"], strict=True)]
        y = mine["relevance"].astype(int).tolist()
        assert pair["both"] == len(x)
        assert pair["statistics"]["kappa_quadratic"] == pytest.approx(
            sklearn_metrics.cohen_kappa_score(x, y, weights="quadratic"), abs=1e-12)


def test_one_crowd_alone_is_the_within_mode_and_within_concatenates(cli, tmp_path):
    alone = cli("agreement", CROWD / "judgments.csv", "--criteria", "relevance,novelty", "--format", "json")
    assert alone.exit_code == 0, alone.stderr
    assert set(json.loads(alone.stdout)) == {"relevance", "novelty"}
    lines = (CROWD / "judgments.csv").read_text().splitlines()
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("\n".join(lines[:100]) + "\n")
    second.write_text("\n".join([lines[0], *lines[100:]]) + "\n")
    both = cli("agreement", first, second, "--within", "--criteria", "relevance,novelty", "--format", "json")
    assert both.exit_code == 0, both.stderr
    assert json.loads(both.stdout) == json.loads(alone.stdout)


def test_sources_from_standard_input_and_kind_overrides(cli, tmp_path):
    odd = tmp_path / "labels.txt"
    odd.write_text(HUMAN.read_text())
    result = cli("agreement", "h=-", f"g=qrels:{odd}", "--samples", "0", "--format", "json", input=GPT4O.read_text())
    assert result.exit_code == 0, result.stderr
    (pair,) = json.loads(result.stdout)["pairs"]
    assert (pair["a"], pair["b"]) == ("h", "g")
    assert pair["statistics"]["kappa"] == pytest.approx(kappas(table_of(GPT4O), table_of(HUMAN))["kappa"])


@pytest.mark.parametrize(("args", "message"), [
    (["data/demo.sh", str(HUMAN)], "data/demo.sh: cannot tell whether this is qrels"),
    ([str(HUMAN)], "one source of labels (human): name a second one"),
    ([str(HUMAN), str(CROWD / "judgments.csv"), "--criteria", "relevance,novelty"], "needs exactly one criterion"),
    ([str(HUMAN), str(CROWD / "judgments.csv")], "needs exactly one criterion"),
    ([str(HUMAN), str(CROWD / "judgments.csv"), "--criteria", "relevance", "--within"], "holds qrels"),
    ([str(CROWD / "judgments.csv"), "--criteria", "relevance", "--format", "csv"], "table or json, not csv"),
    ([str(HUMAN), str(GPT4O), "--format", "csv", "--show", "pairs,labels"], "csv holds one table"),
    ([str(HUMAN), str(GPT4O), "--show", "nope"], "is no section"),
    ([str(HUMAN), str(GPT4O), "--confidence", "1"], "--confidence"),
    ([str(CROWD / "judgments.csv"), "--criteria", "relevance", "--within", "--per-worker"], "choose one"),
    ([str(CROWD / "judgments.csv"), "--criteria", "relevance", "--plot", "x.png"], "--plot: only for comparing"),
    ([str(CROWD / "judgments.csv"), "--criteria", "relevance", "--samples", "10"], "--samples: only for comparing"),
    ([str(HUMAN), str(CROWD / "judgments.csv"), "--criteria", "relevance"], "no (turn, item) pair is judged by two"),
])
def test_refusals_are_one_line(cli, args, message, monkeypatch):
    monkeypatch.chdir(REPO)
    result = cli("agreement", *args)
    assert result.exit_code != 0
    error = result.stderr.strip()
    assert message in error and "Traceback" not in error
    assert len(error.splitlines()) == 1


def test_an_empty_file_asks_for_its_kind(cli, tmp_path):
    empty = tmp_path / "empty.qrel"
    empty.write_text("")
    result = cli("agreement", empty, HUMAN)
    assert result.exit_code == 1
    assert ("is empty: neither qrels, crowd judgments nor nugget assignments; write qrels:PATH, crowd:PATH or "
            "nuggets:PATH") in result.stderr


def test_output_is_never_an_input(cli, tmp_path):
    copy = tmp_path / "h.qrel"
    copy.write_text(HUMAN.read_text())
    result = cli("agreement", f"x={copy}", GPT4O, "--plot", copy)
    assert result.exit_code == 1 and copy.read_text() == HUMAN.read_text()
    result = cli("agreement", f"x=qrels:{copy}", GPT4O, "-o", copy)
    assert result.exit_code == 1 and "input" in result.stderr and copy.read_text() == HUMAN.read_text()


def printed_examples(text: str) -> list[tuple[str, str]]:
    """(command, output) of each ```sh block holding one `castregin agreement` line followed by a ```text block."""
    found = []
    for sh, output in re.findall(r"```sh\n(castregin agreement [^\n]*)\n```\n\n```text\n(.*?)```", text, re.DOTALL):
        found.append((sh, output))
    return found


@pytest.mark.parametrize("page", ["docs/agreement.md"])
def test_the_printed_examples_are_what_castregin_prints(cli, page, monkeypatch):
    monkeypatch.chdir(REPO)
    examples = printed_examples((REPO / page).read_text(encoding="utf-8"))
    assert examples
    for command, output in examples:
        result = cli(*shlex.split(command)[1:])
        assert result.exit_code == 0, result.stderr
        assert result.stdout == output, command


def test_kinds_are_told_through_compression_and_a_bom(cli, tmp_path):
    import gzip

    packed = tmp_path / "human.qrel.gz"
    packed.write_bytes(gzip.compress(HUMAN.read_bytes()))
    crowd = tmp_path / "crowd.csv"
    crowd.write_bytes(b"\xef\xbb\xbf" + (CROWD / "judgments.csv").read_bytes())
    result = cli("agreement", packed, GPT4O, "--samples", "0", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["pairs"][0]["a"] == "human"
    within = cli("agreement", crowd, "--criteria", "relevance", "--format", "json")
    assert within.exit_code == 0, within.stderr
    assert set(json.loads(within.stdout)) == {"relevance"}


# --- --runs: how far the sources agree on the ranking of systems --------------------------------------------


def _random_runs(directory: Path, count: int = 6, seed: int = 7) -> list[Path]:
    """Runs over the LLMJudge pairs: each ranks a turn's judged passages (and one unjudged) by a random
    score, with distinct scores as 32-bit floats too (so pytrec_eval, the oracle, ranks as we do)."""
    import random

    rng = random.Random(seed)
    labels: dict[str, list[str]] = {}
    for (turn, item) in table_of(HUMAN):
        labels.setdefault(turn, []).append(item)
    paths = []
    for number in range(count):
        path = directory / f"sys{number}.run"
        lines = []
        for turn, items in sorted(labels.items()):
            chosen = [*rng.sample(items, min(len(items), 12)), f"unjudged{number}"]
            scores = rng.sample(range(1, 10_000), len(chosen))
            ranked = sorted(zip(chosen, scores, strict=True), key=lambda p: -p[1])
            lines.extend(f"{turn} Q0 {item} {rank} {score / 8} sys{number}"
                         for rank, (item, score) in enumerate(ranked, 1))
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def _oracle_means(run_paths: list[Path], qrels_path: Path, measure: str) -> list[float]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict[str, dict[str, int]] = {}
    for (turn, item), label in table_of(qrels_path).items():
        qrels.setdefault(turn, {})[item] = label
    means = []
    for path in run_paths:
        run: dict[str, dict[str, float]] = {}
        for line in path.read_text().splitlines():
            turn, _, item, _, score, _ = line.split()
            run.setdefault(turn, {})[item] = float(score)
        values = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=2).evaluate(run)
        means.append(sum(v[measure] for v in values.values()) / len(values))
    return means


def test_runs_ranked_under_each_source_agree_as_scipy_says(cli, tmp_path):
    scipy_stats = pytest.importorskip("scipy.stats")
    runs = _random_runs(tmp_path)
    out = tmp_path / "a.json"
    result = cli("agreement", f"human={HUMAN}", f"gpt4o={GPT4O}", "--samples", "0", "--runs", tmp_path,
                 "-m", "nDCG@10", "--top-k", "3", "--format", "json", "-o", out)
    assert result.exit_code == 0, result.stderr
    (ranking,) = json.loads(out.read_text())["ranking"]
    a, b = _oracle_means(runs, HUMAN, "ndcg_cut_10"), _oracle_means(runs, GPT4O, "ndcg_cut_10")
    by_run = {row["run"]: row for row in ranking["runs"]}
    for number, (score_a, score_b) in enumerate(zip(a, b, strict=True)):
        assert by_run[f"sys{number}"]["score_a"] == pytest.approx(score_a, abs=1e-12)
        assert by_run[f"sys{number}"]["score_b"] == pytest.approx(score_b, abs=1e-12)
    statistics = ranking["statistics"]
    assert statistics["kendall_tau"] == pytest.approx(scipy_stats.kendalltau(a, b).statistic, abs=1e-12)
    assert statistics["spearman_rho"] == pytest.approx(scipy_stats.spearmanr(a, b).statistic, abs=1e-12)
    best_a = {f"sys{i}" for i in sorted(range(len(a)), key=lambda i: -a[i])[:3]}
    best_b = {f"sys{i}" for i in sorted(range(len(b)), key=lambda i: -b[i])[:3]}
    assert statistics["top_k_overlap"] == pytest.approx(len(best_a & best_b) / 3)
    assert (ranking["qrels_a"], ranking["qrels_b"], ranking["measure"]) == ("human", "gpt4o", "nDCG@10")


def test_runs_section_in_text_and_csv_and_a_scatter_per_pair(cli, tmp_path):
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    _random_runs(runs_dir, count=4)
    args = ("agreement", f"human={HUMAN}", f"gpt4o={GPT4O}", f"umbrela={UMBRELA}", "--samples", "0",
            "--runs", runs_dir)
    table = cli(*args, "--scatter", tmp_path / "scores.png").stdout
    assert "Ranking agreement, nDCG@3 of 4 runs: A = human, B = gpt4o" in table
    assert "Ranking agreement, nDCG@3 of 4 runs: A = gpt4o, B = umbrela" in table
    pictures = sorted(p.name for p in tmp_path.glob("scores-*.png"))
    assert pictures == ["scores-gpt4o-umbrela.png", "scores-human-gpt4o.png", "scores-human-umbrela.png"]
    assert all((tmp_path / name).read_bytes().startswith(PNG) for name in pictures)
    rows = list(csv.DictReader(io.StringIO(cli(*args, "--format", "csv", "--show", "ranking").stdout)))
    assert len(rows) == 3 * 4 and {r["qrels_a"] for r in rows} == {"human", "gpt4o"}


@pytest.mark.parametrize(("extra", "message"), [
    (("-m", "AP"), "--measure: scores runs: give them with --runs"),
    (("--show", "ranking"), "--show: the section 'ranking' needs runs to rank"),
    (("--runs", "RUNS", "--per-worker"), "--runs: --runs ranks the runs under whole sources of labels"),
    (("--runs", "RUNS", "-m", "P.1,3"), "P.1,3 stands for several measures: give one"),
])
def test_runs_refusals_are_one_line(cli, tmp_path, extra, message):
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    _random_runs(runs_dir, count=2)
    extra = tuple(runs_dir if part == "RUNS" else part for part in extra)
    sources = (f"human={HUMAN}", f"crowd={CROWD / 'judgments.csv'}", "--criteria", "relevance") \
        if "--per-worker" in extra else (f"human={HUMAN}", f"gpt4o={GPT4O}")
    result = cli("agreement", *sources, "--samples", "0", *extra)
    assert result.exit_code == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex"])
def test_a_source_name_with_a_newline_or_an_escape_code_stays_on_its_line(cli, tmp_path, fmt):
    # A name holding a newline broke the table's rows (and ended LaTeX's % comment early); an escape code reached
    # the terminal. Each is shown escaped, as Python writes it: hu\nman, ll\x1b[31mm.
    (tmp_path / "a.qrel").write_text("t1 0 Q1 2\nt1 0 Q2 0\n")
    (tmp_path / "b.qrel").write_text("t1 0 Q1 1\nt1 0 Q2 2\n")
    result = cli("agreement", f"hu\nman={tmp_path / 'a.qrel'}", f"ll\x1b[31mm={tmp_path / 'b.qrel'}", "--samples",
                 "0", "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout
    lines = result.stdout.splitlines()
    assert not any(line.startswith("man") for line in lines)
    named = [line for line in lines if "hu" in line]
    assert len(named) >= 5 and all("nman" in line and "x1b[31mm" in line for line in named if "ll" in line)


def test_one_line_escapes_what_ends_a_line():
    from castregin.render.tables import one_line, text_table

    assert one_line("a\nb\r\tc\x1b[0m\u2028d\x7f") == "a\\nb\\r\\tc\\x1b[0m\\u2028d\\x7f"
    assert one_line("plain é") == "plain é"
    assert text_table(["x\ny"], [["1"]]) == "x\\ny\n----\n1\n"
