"""Compressed inputs give every command the bytes the plain ones give, on the real reference data.

The track's commands read the CAsT 2022 slice of tests/data (runs, qrels, turn ids: in every clone), the
converters and the judging commands the full reference data of ../shared.

Each test lays the same inputs out twice: plain in ``plain/``, compressed in ``packed/`` (named
``NAME.gz`` and so on, or keeping the plain name: the format is recognised by its first bytes), runs
the command in each directory with the same arguments, and compares standard output and the files
written. Then the edges: standard input, a corrupt or truncated file, an error's line number, and
``-o FILE.gz``.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import json
import lzma
import subprocess
from pathlib import Path

import pytest
from compressed_files import compress, suffix_params

#: (suffix, whether the compressed file's name ends in it): each format, and gzip under the plain name.
VARIANTS = suffix_params(lambda suffix: (suffix, True))
VARIANTS.append(pytest.param(("gz", False), id="gz-under-the-plain-name"))


class Twins:
    """The same inputs plain (``plain/``) and compressed (``packed/``), and commands run on both."""

    def __init__(self, root: Path, suffix: str, renamed: bool):
        self.suffix, self.renamed = suffix, renamed
        self.plain, self.packed = root / "plain", root / "packed"
        self.names: dict[str, str] = {}  # plain name -> compressed file's name

    def add(self, name: str, source: Path | bytes, *, keep_name: bool = False) -> str:
        """Put ``source`` (a file or its bytes) under ``name`` in both directories; return ``name``."""
        data = source if isinstance(source, bytes) else source.read_bytes()
        packed = name if keep_name or not self.renamed else f"{name}.{self.suffix}"
        for path, content in ((self.plain / name, data), (self.packed / packed, _compressed(data, self.suffix))):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        self.names[name] = packed
        return name

    def _argument(self, argument: str) -> str:
        if "=" in argument and argument.split("=", 1)[1] in self.names:  # --qrels NAME=PATH
            label, name = argument.split("=", 1)
            return f"{label}={self.names[name]}"
        return self.names.get(argument, argument)

    def renamed_text(self, text: str) -> str:
        """``text`` with each input named as its compressed copy (for outputs that name their inputs)."""
        for name in sorted(self.names, key=len, reverse=True):
            text = text.replace(name, self.names[name])
        return text

    def run(self, cli, monkeypatch, *args, outputs=()) -> list[tuple[str, dict]]:
        """(standard output, {output: content}) of the command on the plain and on the compressed inputs."""
        results = []
        for directory, rename in ((self.plain, str), (self.packed, self._argument)):
            directory.mkdir(exist_ok=True)
            monkeypatch.chdir(directory)
            result = cli(*(rename(str(a)) for a in args))
            assert result.exit_code == 0, result.stderr
            results.append((result.stdout, {name: _content(directory / name) for name in outputs}))
        return results

    def same(self, cli, monkeypatch, *args, outputs=()) -> str:
        """Run on both and check byte-identical results; the plain standard output."""
        plain, packed = self.run(cli, monkeypatch, *args, outputs=outputs)
        assert packed == plain
        return plain[0]


@functools.lru_cache(maxsize=64)
def _compressed(data: bytes, suffix: str) -> bytes:
    return compress(data, suffix)  # the same reference files serve many tests


def _content(path: Path):
    if path.is_dir():
        return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}
    return path.read_bytes()


@pytest.fixture(params=VARIANTS)
def twins(request, tmp_path) -> Twins:
    suffix, renamed = request.param
    return Twins(tmp_path, suffix, renamed)


@pytest.fixture
def runs(twins, cast_slice) -> list[str]:
    """The four CAsT 2022 baseline runs (TREC), in both layouts."""
    return [twins.add(path.name, path) for path in cast_slice.run_paths]


@pytest.fixture
def turn_ids(twins, cast_slice) -> str:
    return twins.add("turn_ids.json", cast_slice.turn_ids)


@pytest.fixture
def official_turn_ids(twins, cast2022) -> str:
    """The 205 turns of the full data, for the converters of its runs."""
    return twins.add("turn_ids.json", cast2022 / "topics/2022_evaluation_topics_turn_ids.json")


def _qrels(twins, data, *names: str) -> list[str]:
    return [twins.add(f"question_{name}.qrel", data.qrels(name)) for name in names]


# --- the track's commands ----------------------------------------------------------------------------------


def test_evaluate(cli, monkeypatch, twins, cast_slice, runs, turn_ids):
    all_qrels, subset = _qrels(twins, cast_slice, "relevance_all", "relevance_mi_subset")
    out = twins.same(cli, monkeypatch, "evaluate", *runs, "--qrels", f"all={all_qrels}", "--qrels", subset,
                     "--turns", turn_ids, "--per-turn", "--format", "json")
    rows = json.loads(out)
    assert {row["qrels"] for row in rows} == {"all", "question_relevance_mi_subset"}  # the stem, suffix or not
    twins.same(cli, monkeypatch, "evaluate", *runs, "--qrels", all_qrels, "--complete", "-m", "all_trec",
               "-o", "scores.tsv", "--format", "tsv", outputs=["scores.tsv"])


def test_compare_with_a_compressed_baseline(cli, monkeypatch, twins, cast_slice, runs):
    (qrels,) = _qrels(twins, cast_slice, "relevance_all")
    out = twins.same(cli, monkeypatch, "compare", *runs[:3], "--qrels", qrels, "--baseline", runs[0],
                     "-m", "P@1", "-m", "nDCG@3", "--format", "json")
    assert json.loads(out)


def test_trec_eval(cli, monkeypatch, twins, cast_slice, runs):
    (qrels,) = _qrels(twins, cast_slice, "relevance_all")
    out = twins.same(cli, monkeypatch, "trec_eval", "-q", "-c", "-m", "all_trec", qrels, runs[0])
    assert out.splitlines()[-1].startswith("num_nonrel_judged_ret")


def test_analyses(cli, monkeypatch, twins, cast_slice, runs):
    all_qrels, novelty = _qrels(twins, cast_slice, "relevance_all", "novelty")
    twins.same(cli, monkeypatch, "analyze", "loro", *runs, "--qrels", all_qrels, "--depth", "1", "--format", "json")
    twins.same(cli, monkeypatch, "analyze", "correlation", *runs, "--qrels", all_qrels, "--qrels", novelty)
    twins.same(cli, monkeypatch, "analyze", "bootstrap", *runs[:2], "--qrels", all_qrels, "--samples", "200")
    twins.same(cli, monkeypatch, "evaluate", *runs[:2], "--qrels", all_qrels, "--by", "topic", "--ci", "95",
               "--samples", "200")


def test_pool(cli, monkeypatch, twins, runs):
    out = twins.same(cli, monkeypatch, "pool", *runs, "--depth", "2", "-o", "pool.run", outputs=["pool.run"])
    assert out == ""


def test_qrels_tools(cli, monkeypatch, twins, cast_slice, turn_ids):
    names = _qrels(twins, cast_slice, "relevance_all", "relevance_mi_subset", "novelty", "diversity")
    every, subset, novelty, diversity = names
    for args in (["filter", every, "--min-label", "2"], ["subset", every, "--turns", subset],
                 ["subset", every, "--turns", turn_ids], ["combine", every, novelty, diversity, "--how", "mean"],
                 ["stats", *names], ["stats", *names, "--format", "json"]):
        assert twins.same(cli, monkeypatch, "qrels", *args), args


@pytest.mark.parametrize("variant", [pytest.param(("gz", True), id="gz")])
def test_report(cli, monkeypatch, tmp_path, cast_slice, variant):
    twins = Twins(tmp_path, *variant)
    runs = [twins.add(path.name, path) for path in cast_slice.run_paths[:2]]
    (qrels,) = _qrels(twins, cast_slice, "relevance_all")
    plain, packed = twins.run(cli, monkeypatch, "report", *runs, "--qrels", qrels, "-m", "P@1", "--out", "report",
                              outputs=["report"])
    assert packed[0] == plain[0]
    # The reproducibility block names each input as given and hashes its bytes as stored: it is the one
    # part that must differ.
    assert _before_reproducibility(packed[1]["report"]) == _before_reproducibility(plain[1]["report"])
    assert b'id="reproducibility"' in plain[1]["report"]["index.html"]


def _before_reproducibility(files: dict) -> dict:
    return {name: data.split(b'<h2 id="reproducibility"')[0] for name, data in files.items()}


# --- convert -----------------------------------------------------------------------------------------------


def test_convert_questions(cli, monkeypatch, twins, cast2022, official_turn_ids):
    runs = [twins.add(f"{name}.json", cast2022 / f"runs/mi/{name}.json") for name in ("bm25_baseline_mi_run",
                                                                                        "T5_raw_run")]
    bank = twins.add("question_bank.json", cast2022 / "regin/question_bank.json")
    pool = twins.add("pool.json", cast2022 / "topics/2022_mixed_initiative_question_pool.json")
    twins.same(cli, monkeypatch, "convert", "questions", *runs, "--bank", bank, "--bank", pool, "--turns",
               official_turn_ids, "--bank-out", "bank.json", "--out-dir", "out", outputs=["out", "bank.json"])


def test_convert_responses_and_passages(cli, monkeypatch, twins, cast2022, official_turn_ids):
    run = twins.add("sample_run.json", cast2022 / "runs/main/sample_run.json")
    bank = twins.add("response_bank.json", cast2022 / "regin/response_bank.json")
    passages = twins.add("passage.qrels", cast2022 / "nist/2022-passage-qrels.txt")
    twins.same(cli, monkeypatch, "convert", "responses", run, "--bank", bank, "--passage-qrels", passages,
               "--turns", official_turn_ids, "--bank-out", "bank.json", "-o", "responses.run",
               outputs=["responses.run", "bank.json"])
    assert twins.same(cli, monkeypatch, "convert", "passages", run, "--turns", official_turn_ids, "-o", "-")


# --- judging -----------------------------------------------------------------------------------------------


def test_aggregate_and_agreement(cli, monkeypatch, twins, crowd_example):
    judgments = twins.add("judgments.csv", crowd_example / "judgments.csv")
    gold = twins.add("gold.csv", crowd_example / "gold.csv")
    criteria = ["--criteria", "relevance,novelty,diversity", "--gold", gold]
    twins.same(cli, monkeypatch, "aggregate", judgments, *criteria, "--prefix", "", "--out-dir", "out",
               outputs=["out"])
    assert (twins.packed / "out" / "relevance.qrel").read_bytes() == (crowd_example / "expected/relevance.qrel"
                                                                       ).read_bytes()
    assert twins.same(cli, monkeypatch, "agreement", judgments, *criteria, "--format", "json")


# --- dialogue ----------------------------------------------------------------------------------------------


def _episodes(clembench: Path) -> list[Path]:
    return sorted(clembench.rglob("interactions.json"))


def test_scorekeeping_score(cli, monkeypatch, twins, clembench):
    for path in _episodes(clembench):
        episode = twins.add(str(path.relative_to(clembench)), path)
        assert json.loads(twins.same(cli, monkeypatch, "scorekeeping", "score", episode, "--format", "json"))


def test_scorekeeping_summary(cli, monkeypatch, twins, clembench):
    # clembench's layout fixes the names: compressed files keep them.
    for path in sorted(clembench.rglob("*.json")):
        if path.name in ("interactions.json", "scores.json"):
            twins.add(f"results/{path.relative_to(clembench)}", path, keep_name=True)
    for rescore in ([], ["--rescore"]):
        assert twins.same(cli, monkeypatch, "scorekeeping", "summary", "results", "--format", "json", *rescore)


AVM = "key,a:1,a:2,b:1,b:2\na:1,9,1,0,0\na:2,2,8,0,0\nb:1,0,0,7,3\nb:2,0,0,1,9\n"
DIALOGUES = "dialogue,agent,US,kappa,turns\n" + "".join(
    f"d{i},{'AB'[i % 2]},{10 + (i * 7) % 13},{0.5 + (i * 3 % 5) / 10},{5 + (i * 11) % 9}\n" for i in range(20))


def test_paradise(cli, monkeypatch, twins):
    matrix = twins.add("avm.csv", AVM.encode())
    dialogues = twins.add("dialogues.csv", DIALOGUES.encode())
    assert twins.same(cli, monkeypatch, "paradise", "kappa", matrix, "--attribute-groups", "labels", "--format", "json")
    fit = ["paradise", "fit", dialogues, "--satisfaction", "US", "--success", "kappa", "--cost", "turns",
           "--group", "agent", "--alpha-level", "0.99"]
    twins.same(cli, monkeypatch, *fit, "--save", "function.json", "--format", "json", outputs=["function.json"])
    function = twins.add("saved.json", (twins.plain / "function.json").read_bytes())
    assert twins.same(cli, monkeypatch, "paradise", "predict", function, dialogues, "--id", "dialogue",
                      "--format", "csv")


def test_ope_estimate(cli, monkeypatch, twins, tmp_path):
    simulated = tmp_path / "simulated.jsonl"
    assert cli("ope", "simulate", "--dialogues", "300", "--seed", "3", "-o", simulated).exit_code == 0
    experience = twins.add("experience.jsonl", simulated)
    plain, packed = twins.run(cli, monkeypatch, "ope", "estimate", experience, "--format", "json")
    # The output names the file it read: the compressed one under its own name.
    assert packed[0] == twins.renamed_text(plain[0])
    assert json.loads(plain[0])["n_dialogues"] == 300


# --- standard input, errors, compressed outputs ------------------------------------------------------------

RUN = "t1 Q0 d1 1 2.0 r\nt1 Q0 d2 2 1.0 r\nt2 Q0 d1 1 1.0 r\n"
QRELS = "t1 0 d1 2\nt1 0 d2 0\nt2 0 d1 1\n"
#: A longer run: 150 lines, one turn each.
LONG_RUN = "".join(f"t{n} Q0 d1 1 1.0 r\n" for n in range(150))


@pytest.fixture
def small(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("r.run").write_text(RUN)
    Path("q.qrel").write_text(QRELS)
    return tmp_path


@pytest.mark.parametrize("suffix", suffix_params())
def test_compressed_standard_input(cli, small, suffix):
    plain = cli("evaluate", "r.run", "--qrels", "q.qrel")
    piped = cli("evaluate", "-", "--qrels", "q.qrel", input=compress(RUN.encode(), suffix))
    assert piped.exit_code == 0, piped.stderr
    assert piped.stdout == plain.stdout
    assert cli("qrels", "stats", "-", input=compress(QRELS.encode(), suffix)).stdout.startswith("qrels")


def test_a_plain_file_named_gz_is_read_as_plain(cli, small):
    Path("q.qrel.gz").write_text(QRELS)
    compressed = cli("evaluate", "r.run", "--qrels", "q.qrel.gz").stdout
    assert compressed == cli("evaluate", "r.run", "--qrels", "q.qrel").stdout


def _one_line(result, *words) -> str:
    assert (result.exit_code, result.stdout) == (1, ""), result.stderr
    assert result.stderr.startswith("castregin: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert all(word in result.stderr for word in words), result.stderr
    return result.stderr


@pytest.mark.parametrize("suffix", suffix_params())
def test_a_truncated_file_is_one_line(cli, small, suffix):
    data = compress(LONG_RUN.encode(), suffix)
    Path(f"cut.run.{suffix}").write_bytes(data[: len(data) // 2])
    _one_line(cli("evaluate", f"cut.run.{suffix}", "--qrels", "q.qrel"), f"cut.run.{suffix}: not a valid", "stream")


def test_a_corrupt_gzip_file_is_one_line(cli, small):
    data = bytearray(compress(LONG_RUN.encode(), "gz"))
    data[20:40] = bytes(20)
    Path("bad.run.gz").write_bytes(bytes(data))
    _one_line(cli("pool", "bad.run.gz"), "bad.run.gz: not a valid gzip stream", "compress it again")
    Path("bad.qrel.gz").write_bytes(bytes(data))
    _one_line(cli("evaluate", "r.run", "--qrels", "bad.qrel.gz"), "bad.qrel.gz: not a valid gzip stream")


@pytest.mark.parametrize("suffix", suffix_params())
def test_an_error_names_the_line_of_the_decompressed_text(cli, small, suffix):
    Path(f"bad.run.{suffix}").write_bytes(compress((LONG_RUN + "t9 Q0 d2 1 high r\n").encode(), suffix))
    _one_line(cli("evaluate", f"bad.run.{suffix}", "--qrels", "q.qrel"), f"bad.run.{suffix}:151: score 'high'")
    Path(f"bad.json.{suffix}").write_bytes(compress(b'{\n  "turns": [\n    {"turn_id": "1"},\n  ]\n}\n', suffix))
    _one_line(cli("convert", "passages", f"bad.json.{suffix}", "-o", "-"), f"bad.json.{suffix}:4: invalid JSON")


def test_gzip_output_is_reproducible(cli, small):
    for name in ("a.run.gz", "b.run.gz", "plain.run"):
        assert cli("pool", "r.run", "--depth", "2", "-o", name).exit_code == 0
    assert Path("a.run.gz").read_bytes() == Path("b.run.gz").read_bytes()
    assert gzip.decompress(Path("a.run.gz").read_bytes()) == Path("plain.run").read_bytes()
    header = Path("a.run.gz").read_bytes()[:10]
    assert header[3] == 0 and header[4:8] == bytes(4)  # no name, no time
    unpacked = subprocess.run(["gzip", "-dc", "a.run.gz"], capture_output=True, check=True).stdout
    assert unpacked == Path("plain.run").read_bytes()
    assert cli("pool", "r.run", "--depth", "2", "-o", "-").stdout == Path("plain.run").read_text()  # stays plain


@pytest.mark.parametrize("suffix", ["bz2", "xz"])
def test_bzip2_and_xz_outputs(cli, small, suffix):
    assert cli("qrels", "filter", "q.qrel", "--min-label", "1", "-o", f"f.qrel.{suffix}").exit_code == 0
    plain = cli("qrels", "filter", "q.qrel", "--min-label", "1").stdout
    unpack = bz2.decompress if suffix == "bz2" else lzma.decompress
    assert unpack(Path(f"f.qrel.{suffix}").read_bytes()).decode() == plain
    assert cli("qrels", "filter", f"f.qrel.{suffix}", "--min-label", "1").stdout == plain  # and read back
