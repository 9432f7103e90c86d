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
    assert data["settings"] == {"rel_level": 2, "samples": 200, "seed": 0, "confidence": 0.95}
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


def test_only_a_and_only_b_are_shown(cli, tmp_path):
    part = tmp_path / "part.qrel"
    lines = HUMAN.read_text().splitlines()
    part.write_text("\n".join(lines[:1000]) + "\nq1 0 new1 2\nq1 0 new2 0\n")
    result = cli("agreement", HUMAN, part, "--samples", "0", "--show", "pairs")
    assert result.exit_code == 0, result.stderr
    counts = {line.split()[0]: line.split()[1] for line in result.stdout.splitlines()[3:6]}
    assert counts == {"both": "1000", "only_a": "3423", "only_b": "2"}
    assert "no bootstrap" in result.stdout


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
    assert len(error.splitlines()) == 1 or error.startswith("Usage:")


def test_an_empty_file_asks_for_its_kind(cli, tmp_path):
    empty = tmp_path / "empty.qrel"
    empty.write_text("")
    result = cli("agreement", empty, HUMAN)
    assert result.exit_code == 1
    assert "is empty: neither qrels nor crowd judgments; write qrels:PATH or crowd:PATH" in result.stderr


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


@pytest.mark.parametrize("page", ["README.md", "docs/agreement.md"])
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
