"""``castregin gdeval`` and ``castregin ndeval`` print what gdeval.pl and ndeval.c print, byte for byte.

Oracles: the originals' outputs kept in tests/cli/data/gdeval_ndeval (see gdeval_ndeval_oracle.py for
their source and how they were made), and the live originals when ``$CASTREGIN_GDEVAL`` /
``$CASTREGIN_NDEVAL`` name them. On CAsT 2022, the originals need numbers for ids: the turns are
mapped to 1..N for them, and castregin's output on the unmapped files must be theirs with the ids
mapped back.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gdeval_ndeval_oracle import cases, kept_outputs, live_command, risk_cases, run_original

CASES = cases()
RISK = risk_cases()
KEPT = kept_outputs()


@pytest.mark.parametrize("name", sorted(CASES, key=lambda n: (n[:6], int(n[6:]))))
def test_drop_in_equals_the_original(name, cli, tmp_path):
    tool, qrels_text, run_text, options = CASES[name]
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    result = cli(tool, *options, qrels, run)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == KEPT[name]
    if live_command(tool) is not None:
        assert result.stdout == run_original(tool, qrels, run, options)


@pytest.mark.parametrize("name", sorted(RISK, key=lambda n: (n[:6], int(n[10:]))))
def test_risk_sensitive_equals_the_original(name, cli, tmp_path):
    qrels_text, run_text, baseline_text, options = RISK[name]
    qrels, run, baseline = tmp_path / "q", tmp_path / "r", tmp_path / "b"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    baseline.write_text(baseline_text)
    options = [str(baseline) if option == "BASELINE" else option for option in options]
    tool = name[:6]
    result = cli(tool, *options, qrels, run)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == KEPT[name]
    if live_command(tool) is not None:
        assert result.stdout == run_original(tool, qrels, run, options)


#: Ways of writing a case's files that the fast reader leaves to the originals' line readers (it cannot vouch that
#: the parser splits them as those do), each read by gdeval.pl and ndeval.c as the plain file.
LINE_READER_FORMS = {
    "carriage returns": lambda text: text.replace("\n", "\r\n"),
    "tabs and spaces": lambda text: re.sub(r"(?m)^(\S+) ", "\\1\t", text),
    "runs of spaces": lambda text: text.replace(" ", "   "),
}
#: Every tenth case.
SAMPLE = sorted(CASES, key=lambda n: (n[:6], int(n[6:])))[::10]


@pytest.mark.parametrize("form", sorted(LINE_READER_FORMS))
@pytest.mark.parametrize("name", SAMPLE)
def test_files_the_fast_reader_leaves_to_the_line_readers_give_the_originals_output(name, form, cli, tmp_path):
    tool, qrels_text, run_text, options = CASES[name]
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text(LINE_READER_FORMS[form](qrels_text), newline="")
    run.write_text(LINE_READER_FORMS[form](run_text), newline="")
    result = cli(tool, *options, qrels, run)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == KEPT[name]


@pytest.mark.parametrize("name", SAMPLE)
def test_plain_files_are_read_without_the_line_readers(name, cli, tmp_path, monkeypatch):
    """The cases' files (single spaces, ASCII, numbers as the originals read them) take the fast reader."""
    from castregin.formats import diversity

    def unwanted(*args, **kwargs):
        raise AssertionError("read line by line")

    for reader in ("gdeval_qrels_lines", "gdeval_run_lines", "ndeval_qrels_lines", "ndeval_run_lines"):
        monkeypatch.setattr(diversity, reader, unwanted)
    tool, qrels_text, run_text, options = CASES[name]
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    assert cli(tool, *options, qrels, run).stdout == KEPT[name]


def test_the_cases_cover_the_quirks():
    """The kept outputs hold what the cases are meant to exercise (else a test could not fail there)."""
    ndeval = "".join(KEPT[n] for n in CASES if n.startswith("ndeval"))
    assert ",-nan," in ndeval  # a topic without a relevant item: ndeval's nNRBP 0/0
    assert len(KEPT) == len(CASES) + len(RISK) and len(CASES) >= 300
    for tool in ("gdeval", "ndeval"):
        risky = "".join(KEPT[n] for n in RISK if n.startswith(tool))
        assert "rs=1+a; a=0.5)" in risky and ",-0." in risky  # losses, weighted
    gdeval_options = {tuple(CASES[n][3]) for n in CASES if n.startswith("gdeval")}
    assert {("-c",), ("-k", "1")} <= gdeval_options


def test_ids_of_any_shape_and_the_rewrite(cli, tmp_path):
    """CAsT ids are kept; --rewrite-ids keeps gdeval's digits after the last '-', which mixes turns up."""
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("132_1-3 0 a 2\n132_1-3 0 b 1\n133_2-3 0 e 0\n133_2-3 0 c 3\n")
    run.write_text("132_1-3 Q0 b 1 2 r\n132_1-3 Q0 a 2 1 r\n133_2-3 Q0 c 1 1 r\n")
    mapped_q, mapped_r = tmp_path / "mq", tmp_path / "mr"
    mapped_q.write_text(qrels.read_text().replace("132_1-3", "1").replace("133_2-3", "2"))
    mapped_r.write_text(run.read_text().replace("132_1-3", "1").replace("133_2-3", "2"))
    got = cli("gdeval", qrels, run).stdout
    assert got == KEPT_LIKE(cli, mapped_q, mapped_r).replace("r,1,", "r,132_1-3,").replace("r,2,", "r,133_2-3,")
    rewritten = cli("gdeval", "--rewrite-ids", qrels, run)
    assert rewritten.exit_code == 0
    assert rewritten.stdout.splitlines()[1:] != got.splitlines()[1:]  # both turns became topic 3
    assert ",3," in rewritten.stdout
    refused = cli("ndeval", "--rewrite-ids", qrels, run)
    assert refused.exit_code == 1 and "syntax error" in refused.stderr


def KEPT_LIKE(cli, qrels, run) -> str:
    """gdeval's output on numeric ids: the live original when configured, else castregin's (checked above)."""
    if live_command("gdeval") is not None:
        return run_original("gdeval", qrels, run, [])
    return cli("gdeval", qrels, run).stdout


def test_labels_above_gdevals_maximum_grade_are_refused(cli, tmp_path):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 5\n")
    run.write_text("1 Q0 a 1 1 r\n")
    result = cli("gdeval", qrels, run)
    assert result.exit_code == 1 and "format error" in result.stderr


# --- CAsT 2022, ids mapped to numbers for the originals -------------------------------------------------------

#: SHA-256 of the originals' outputs on the mapped CAsT files (too large to keep whole): "tool run" -> digest (gdeval
#: on the relevance qrels, ndeval -traditional on the diversity one), and "ndeval graded run": ndeval -traditional
#: on the relevance qrels (one subtopic), for tests/evaluation/test_novelty_measures.py.
CAST_DIGESTS = json.loads((Path(__file__).resolve().parent / "data" / "gdeval_ndeval" / "cast2022.json").read_text())


def cast_files(cast2022: Path, run_path: Path, directory: Path) -> dict[str, Path]:
    """The relevance qrels (gdeval), relevance/novelty/diversity as subtopics 1-3 (ndeval), and the run: as they
    are, and with the turns mapped to 1..N in byte order."""
    qrels_dir = cast2022 / "regin" / "qrels"
    graded = (qrels_dir / "question_relevance_all.qrel").read_text()
    diversity = "".join(f"{line.split()[0]} {subtopic} {' '.join(line.split()[2:])}\n"
                        for subtopic, criterion in enumerate(("relevance_all", "novelty", "diversity"), start=1)
                        for line in (qrels_dir / f"question_{criterion}.qrel").read_text().splitlines())
    run = run_path.read_text()
    turns = sorted({line.split()[0] for line in (graded + run).splitlines()})
    number = {turn: str(n) for n, turn in enumerate(turns, start=1)}
    files = {}
    for name, text in (("graded", graded), ("diversity", diversity), ("run", run)):
        files[name] = directory / name
        files[name].write_text(text)
        files[f"mapped_{name}"] = directory / f"mapped_{name}"
        files[f"mapped_{name}"].write_text(re.sub(r"^(\S+)", lambda m: number[m[1]], text, flags=re.MULTILINE))
    files["numbers"] = number  # type: ignore[assignment]
    return files


@pytest.mark.parametrize("tool", ["gdeval", "ndeval"])
def test_cast2022_runs(tool, cast2022, run_paths, cli, tmp_path):
    for run_path in run_paths:
        files = cast_files(cast2022, run_path, tmp_path)
        qrels = files["graded" if tool == "gdeval" else "diversity"]
        mapped_qrels = files["mapped_graded" if tool == "gdeval" else "mapped_diversity"]
        options = ["-traditional"] if tool == "ndeval" else []
        mapped = cli(tool, *options, mapped_qrels, files["mapped_run"])
        assert mapped.exit_code == 0, mapped.stderr
        assert hashlib.sha256(mapped.stdout.encode()).hexdigest() == CAST_DIGESTS[f"{tool} {run_path.stem}"]
        if live_command(tool) is not None:
            assert mapped.stdout == run_original(tool, mapped_qrels, files["mapped_run"], options)
        # Unmapped: the same lines with the turn ids, in castregin's topic order (byte order of the turns here).
        unmapped = cli(tool, *options, qrels, files["run"]).stdout.splitlines()
        turn_of = {n: t for t, n in files["numbers"].items()}
        back = [re.sub(r"^([^,]*),(\d+),", lambda m, turn_of=turn_of: f"{m[1]},{turn_of[m[2]]},", line)
                for line in mapped.stdout.splitlines()]
        assert unmapped == back


@pytest.mark.parametrize("tool", ["gdeval", "ndeval"])
def test_a_negative_risk_alpha_is_a_usage_error(tool, cli, tmp_path):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 d1 1\n" if tool == "gdeval" else "1 1 d1 1\n")
    run.write_text("1 Q0 d1 1 1.0 x\n")
    result = cli(tool, "-baseline", run, "-riskAlpha", "-1", qrels, run)
    assert result.exit_code == 2
    assert "-riskAlpha: must be 0 or more" in result.stderr


@pytest.mark.parametrize(("tool", "flag", "value", "message"), [
    ("gdeval", "-k", "inf", "not a finite number"), ("gdeval", "-k", "1e400", "not a finite number"),
    ("ndeval", "-riskAlpha", "nan", "not a finite number"), ("ndeval", "-alpha", "nan", "not a finite number"),
    # -riskAlpha is parsed once, by the command line: 1_0 (10 to Python, 1 to Perl and sscanf) is refused.
    ("gdeval", "-riskAlpha", "1_0", "not a number"), ("ndeval", "-riskAlpha", "0_5", "not a number"),
    ("gdeval", "-k", "1_0", "not a number"), ("ndeval", "-alpha", "\u0660.5", "not a number")])
def test_a_number_not_finite_or_read_otherwise_than_by_the_originals_is_a_usage_error(tool, flag, value, message,
                                                                                       cli, tmp_path):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 d1 1\n" if tool == "gdeval" else "1 1 d1 1\n")
    run.write_text("1 Q0 d1 1 1.0 x\n")
    extra = ["-baseline", str(run)] if flag == "-riskAlpha" else []
    result = cli(tool, *extra, flag, value, qrels, run)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
