"""What castregin refuses: sizes that would run for hours or exhaust memory, numbers no float holds, JSON
nested past recursion, and inputs that used to pass in silence (a gold row nobody can fail, a Main Score
that is text, a CSV row with an extra field, a label beyond 64 bits). Each is one line, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BANK = REPO / "data" / "question_bank.json"


def _one_line_error(result, code=1):
    assert result.exit_code == code, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("castregin: error: ") and result.stderr.count("\n") == 1
    return result.stderr


def _mi_run(path: Path, score_text: str) -> Path:
    path.write_text('{"run_name": "x", "turns": [{"turn_id": "101_1-1", "questions": '
                    f'[{{"question": "Q0001", "score": {score_text}}}]}}]}}')
    return path


# --- numbers no float holds, JSON nested past recursion ---------------------------------------------------


@pytest.mark.parametrize("digits", [401, 5001])
def test_an_integer_score_beyond_any_float(cli, tmp_path, digits):
    run = _mi_run(tmp_path / "big.json", "1" + "0" * (digits - 1))
    message = _one_line_error(cli("convert", "questions", run, "--bank", BANK, "-o", "-"))
    assert message == (f"castregin: error: {run}: turns[0].questions[0].score: expected a finite number, got an "
                       f"integer of {digits} digits, too large for a number (at most about 1.8e308)\n")


def test_json_nested_too_deeply_everywhere(cli, tmp_path, clembench):
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.json").write_text(deep)
    (tmp_path / "deep.jsonl").write_text(deep + "\n")
    episode = tmp_path / "ep"
    episode.mkdir()
    (episode / "interactions.json").write_text(deep)
    (tmp_path / "t.run").write_text("101_1-1 Q0 Q1 1 1.0 t\n")
    (tmp_path / "q.qrel").write_text("101_1-1 0 Q1 1\n")
    (tmp_path / "deep-object.json").write_text('{"a": ' * 100_000 + "1" + "}" * 100_000)
    calls = [
        ("convert", "questions", tmp_path / "deep.json", "--bank", BANK, "-o", "-"),
        ("convert", "questions", REPO / "data/runs/alpha.json", "--bank", tmp_path / "deep.json", "-o", "-"),
        ("ope", "estimate", tmp_path / "deep.jsonl"),
        ("scorekeeping", "score", episode),
        ("evaluate", tmp_path / "t.run", "--qrels", tmp_path / "q.qrel", "--turns", tmp_path / "deep-object.json"),
    ]
    for call in calls:
        message = _one_line_error(cli(*call))
        assert "JSON nested too deeply (more than 100 levels" in message, call


def _deep_inputs(directory: Path, depth: int) -> list[tuple]:
    """A command line per JSON input, the input holding an array nested ``depth`` deep where a value goes."""
    deep = "[" * depth + "]" * depth
    files = {
        "bank.json": '{"Q1": ' + deep + "}",
        "run.json": '{"run_name": "x", "turns": [{"turn_id": "1_1-1", "questions": [{"question": ' + deep + "}]}]}",
        "member.json": '{"run_name": "x", "extra": ' + deep + ', "turns": []}',
        "turns.json": '{"101": ' + deep + "}",
        "topics.json": '[{"number": ' + deep + "}]",
        "exp.jsonl": '{"dialogue": ' + deep + "}\n",
        "function.json": '{"factors": ' + deep + "}",
        "ep/interactions.json": '{"turns": ' + deep + "}",
        "hits.csv": 'WorkerId,AssignmentStatus,Answer.judgments\nW1,Approved,"[{""turn_id"": ' + deep + '}]"\n',
        "hits2.csv": 'WorkerId,AssignmentStatus,Answer.judgments\nW1,Approved,"' + deep + '"\n',
    }
    for name, text in files.items():
        (directory / name).parent.mkdir(exist_ok=True)
        (directory / name).write_text(text)
    (directory / "t.run").write_text("101_1-1 Q0 Q1 1 1.0 t\n")
    (directory / "q.qrel").write_text("101_1-1 0 Q1 1\n")
    (directory / "d.csv").write_text("id,x\na,1\n")
    d = directory
    return [
        ("convert", "questions", REPO / "data/runs/alpha.json", "--bank", d / "bank.json", "-o", d / "o.run"),
        ("convert", "questions", d / "run.json", "--bank", BANK, "-o", d / "o.run"),
        ("convert", "questions", d / "member.json", "--bank", BANK, "-o", d / "o.run"),
        ("evaluate", d / "t.run", "--qrels", d / "q.qrel", "--turns", d / "turns.json"),
        ("tasks", d / "t.run", "--bank", BANK, "--topics", d / "topics.json", "--criteria", "relevance",
         "--out-dir", d / "tasks"),
        ("ope", "estimate", d / "exp.jsonl"),
        ("paradise", "predict", d / "function.json", d / "d.csv"),
        ("scorekeeping", "score", d / "ep"),
        ("aggregate", d / "hits.csv", "--criteria", "relevance", "--out-dir", d / "qrels"),
        ("aggregate", d / "hits2.csv", "--criteria", "relevance", "--out-dir", d / "qrels"),
    ]


@pytest.mark.parametrize("below_the_limit", [None, 10, 25, 50])
def test_json_nested_near_python_s_recursion_limit_is_one_line_everywhere(cli, tmp_path, below_the_limit):
    # Values that Python's json still parses, a few levels below its recursion limit, then reached its limit
    # in the checks and messages that followed (a RecursionError traceback from an Answer.judgments cell).
    import sys

    depth = 101 if below_the_limit is None else sys.getrecursionlimit() - below_the_limit
    for call in _deep_inputs(tmp_path, depth):
        message = _one_line_error(cli(*call))
        assert "JSON nested too deeply (more than 100 levels" in message, (call, message)


def test_json_nested_within_the_limit_is_read(cli, tmp_path):
    # Documents nesting less than 100 levels are not refused for nesting (most inputs are then refused for
    # what they hold there; an extra member of a run is allowed).
    for call in _deep_inputs(tmp_path, 94):
        result = cli(*call)
        assert "Traceback" not in result.stderr and "nested too deeply" not in result.stderr, (call, result.stderr)


def test_json_nested_deep_where_castregin_reads_nothing_is_ignored(cli, tmp_path):
    # An extra key of a question is never read (the fast check of a turn skips it): nested 500 deep, the
    # run converts; at Python's recursion limit, the parser refuses it in one line, as anywhere.
    for depth, code in ((500, 0), (50_000, 1)):
        (tmp_path / "run.json").write_text('{"run_name": "x", "turns": [{"turn_id": "101_1-1", "questions": '
                                           '[{"question": "Q0001", "score": 1, "extra": ' + "[" * depth + "]" * depth
                                           + "}]}]}")
        result = cli("convert", "questions", tmp_path / "run.json", "--bank", BANK, "-o", tmp_path / "o.run")
        assert result.exit_code == code and "Traceback" not in result.stderr, result.stderr


def test_a_key_given_twice_in_a_bank_or_episode(cli, tmp_path):
    bank = tmp_path / "bank.json"
    bank.write_text('{"Q0001": "Is it a cat?", "Q0001": "Is it a dog?"}')
    message = _one_line_error(cli("convert", "questions", REPO / "data/runs/alpha.json", "--bank", bank, "-o", "-"))
    assert message == f"castregin: error: {bank}: the key 'Q0001' appears twice in one JSON object; keep one\n"


# --- sizes ---------------------------------------------------------------------------------------------------


def test_sizes_beyond_the_bounds_are_usage_errors(cli, tmp_path):
    (tmp_path / "a.run").write_text("t1 Q0 Q1 1 1.0 a\n")
    (tmp_path / "b.run").write_text("t1 Q0 Q2 1 1.0 b\n")
    (tmp_path / "q.qrel").write_text("t1 0 Q1 2\n")
    run, other, qrels = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "q.qrel"
    calls = {
        "--depth": ("report", run, "--qrels", qrels, "--depth", "10000", "--out", tmp_path / "r"),
        "--permutations": ("compare", run, other, "--qrels", qrels, "--test", "randomization",
                           "--permutations", "1000000000"),
        "--scale": ("aggregate", REPO / "data/crowd/judgments.csv", "--criteria", "relevance",
                    "--scale", "0-1000000000000", "--out-dir", tmp_path / "agg"),
        "--dim": ("ope", "estimate", run, "--features", "hashed", "--dim", str(10**11)),
        "--bootstrap": ("ope", "estimate", run, "--bootstrap", str(10**9)),
        "--dialogues": ("ope", "simulate", "--dialogues", str(10**9)),
        "--rel-level": ("evaluate", run, "--qrels", qrels, "--rel-level", str(2**64)),
    }
    for option, call in calls.items():
        message = _one_line_error(cli(*call), code=2)
        assert f"Invalid value for '{option}'" in message, option
    assert not (tmp_path / "r").exists() and not (tmp_path / "agg").exists()


def test_ope_padded_steps_are_bounded_before_any_allocation(cli, tmp_path):
    experience = tmp_path / "exp.jsonl"
    assert cli("ope", "simulate", "--dialogues", "101", "-o", experience).exit_code == 0
    message = _one_line_error(cli("ope", "estimate", experience, "--max-turns", "100000"))
    assert message == ("castregin: error: --max-turns: 101 dialogues padded to 100000 turns are 10100000 steps, "
                       "more than the 10000000 castregin estimates from (about 2 GB of memory); use fewer turns or "
                       "fewer dialogues\n")


def test_ope_padded_turns_are_bounded(cli, tmp_path):
    # One dialogue padded to 10^7 turns was within the steps' limit and ran for minutes (the solver's
    # time grows with the square of the turns): the turns have a limit of their own.
    from castregin.errors import InputError
    from castregin.formats.experience import read_experience
    from castregin.limits import MAX_TURNS
    from castregin.ope import estimate

    experience = tmp_path / "exp.jsonl"
    assert cli("ope", "simulate", "--dialogues", "1", "-o", experience).exit_code == 0
    assert MAX_TURNS == 100_000
    message = _one_line_error(cli("ope", "estimate", experience, "--max-turns", "10000000"), code=2)
    assert "Invalid value for '--max-turns': 10000000 is not in the range 1<=x<=100000" in message
    with pytest.raises(InputError, match=r"^max_turns: dialogues padded to 100001 turns are more than the 100000 "):
        estimate(read_experience(experience), max_turns=MAX_TURNS + 1)


def test_a_huge_cutoff_is_refused(cli, tmp_path):
    (tmp_path / "a.run").write_text("t1 Q0 Q1 1 1.0 a\n")
    (tmp_path / "q.qrel").write_text("t1 0 Q1 2\n")
    for measure in ("P@100000000000", "P_100000000000", "Judged@100000000000"):
        message = _one_line_error(cli("evaluate", tmp_path / "a.run", "--qrels", tmp_path / "q.qrel", "-m", measure))
        assert f"measure {measure!r}" in message and "1000000000" in message


# --- labels: one rule for every reader -------------------------------------------------------------------


@pytest.mark.parametrize("label", [str(2**63), str(-(2**63) - 1), "1" + "0" * 40])
def test_labels_beyond_64_bits_are_refused_alike_by_every_reader(cli, tmp_path, label):
    qrels = tmp_path / "q.qrel"
    qrels.write_text(f"t1 0 Q1 2\nt1 0 Q2 {label}\n")
    (tmp_path / "a.run").write_text("t1 Q0 Q1 1 1.0 a\n")
    messages = {_one_line_error(cli("qrels", "stats", qrels)),
                _one_line_error(cli("qrels", "filter", qrels)),
                _one_line_error(cli("evaluate", tmp_path / "a.run", "--qrels", qrels))}
    assert len(messages) == 1
    (message,) = messages
    assert message.startswith(f"castregin: error: {qrels}:2: label ") and "does not fit in 64 bits" in message
    qrels.write_text(f"t1 0 Q1 2\nt1 0 Q2 {2**63 - 1}\n")  # the largest C long is fine
    assert cli("evaluate", tmp_path / "a.run", "--qrels", qrels).exit_code == 0


# --- said instead of silently accepted ------------------------------------------------------------------------


def test_a_gold_file_naming_what_nobody_judged_is_said(cli, tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("turn_id,item_id,criterion,min_label,max_label\n101_1-1,Q0001,relevance,2,3\n"
                    "999_1-1,Q1,relevance,2,3\n101_1-1,Q9999,relevance,2,3\n101_1-1,Q0001,nvelty,2,3\n")
    result = cli("aggregate", REPO / "data/crowd/judgments.csv", "--criteria", "relevance", "--gold", gold,
                 "--out-dir", tmp_path / "out")
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("castregin: warning:")]
    assert warnings == [
        f"castregin: warning: {gold}:5: 1 gold row(s) name criteria that are not aggregated (nvelty); they are ignored",
        f"castregin: warning: {gold}:3: gold names topic(s) with no judgment (999); check the turn ids",
        f"castregin: warning: {gold}:4: 1 gold item(s) were never judged (first: 101_1-1 Q9999); they test no worker",
    ]


@pytest.mark.parametrize(("value", "shown"), [('"x"', '"x"'), ("Infinity", "Infinity"), ("null", "null"),
                                              ("true", "true"), ("1" + "0" * 400, "an integer of 401 digits")])
def test_a_main_score_that_is_not_a_number(cli, clembench, tmp_path, value, shown):
    source = next(clembench.glob("v1.0/gpt*/privateshared/1_job-interview/episode_0"))
    episode = tmp_path / "runs" / "model" / "privateshared" / "1_job-interview" / "episode_0"
    shutil.copytree(source, episode)
    scores = json.loads((episode / "scores.json").read_text())
    text = json.dumps(scores).replace(f'"Main Score": {json.dumps(scores["episode scores"]["Main Score"])}',
                                      f'"Main Score": {value}')
    (episode / "scores.json").write_text(text)
    message = _one_line_error(cli("scorekeeping", "summary", tmp_path / "runs"))
    assert message.startswith(f"castregin: error: {episode / 'scores.json'}: episode scores.Main Score: expected a "
                              f"number (NaN for an aborted episode), got {shown}")


def test_nan_main_score_of_an_aborted_episode_is_fine(cli, clembench):
    assert cli("scorekeeping", "summary", clembench).exit_code == 0


@pytest.mark.parametrize(("line", "more"), [("1,2,3,4", "more"), ("1,2", "fewer")])
def test_a_paradise_row_with_more_or_fewer_fields_than_the_header(cli, tmp_path, line, more):
    data = tmp_path / "d.csv"
    data.write_text("US,kappa,turns\n1,0.5,3\n2,0.7,4\n" + line + "\n")
    message = _one_line_error(cli("paradise", "fit", data, "--satisfaction", "US", "--success", "kappa",
                                  "--cost", "turns"))
    n = len(line.split(","))
    assert message == (f"castregin: error: {data}:4: the line has {n} fields, {more} than the 3 columns of the header; "
                       "quote fields that hold commas\n")


def test_paradise_values_near_the_largest_float(cli, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("US,kappa,turns\n1e308,1,2\n-1e308,2,3\n1e308,0,1\n5,1e308,2\n")
    result = cli("paradise", "fit", data, "--satisfaction", "US", "--success", "kappa", "--cost", "turns",
                 "--format", "json")
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert json.loads(result.stdout)["full"]["r_squared"] == pytest.approx(
        json.loads(cli("paradise", "fit", _scaled(data, tmp_path), "--satisfaction", "US", "--success", "kappa",
                       "--cost", "turns", "--format", "json").stdout)["full"]["r_squared"])


def _scaled(data: Path, tmp_path: Path) -> Path:
    # z-scores do not change when a column is divided by a constant: the same fit on small numbers.
    rows = [line.split(",") for line in data.read_text().splitlines()]
    out = tmp_path / "small.csv"
    out.write_text("\n".join([",".join(rows[0])] + [",".join(str(float(v) / 1e300) for v in r) for r in rows[1:]])
                   + "\n")
    return out


def test_a_crowd_csv_field_beyond_the_csv_module_s_limit(cli, tmp_path):
    # Python's csv refuses fields over 128 KiB (a traceback, from a header of 3 GB of zeros); pyarrow reads them.
    header = tmp_path / "header.csv"
    header.write_text("0" * 200_000 + "\n")
    message = _one_line_error(cli("aggregate", header, "--criteria", "relevance", "--out-dir", tmp_path / "o"))
    assert message == (f"castregin: error: {header}:1: malformed CSV header (field larger than field limit "
                       "(131072)); check the first line\n")
    cell = tmp_path / "cell.csv"
    cell.write_text("worker_id,turn_id,item_id,relevance\nW1,t1," + "d" * 200_000 + ",1\nW1,t1,d2,x\n")
    message = _one_line_error(cli("aggregate", cell, "--criteria", "relevance", "--out-dir", tmp_path / "o"))
    assert message.startswith(f"castregin: error: {cell}:3: relevance label 'x'")


@pytest.mark.parametrize("rows", [
    "W1,t1,d1,2\nW2,t1,d1\nW3,t1,d1,1\n",  # a field short
    "W1,t1,d1,2\nW2\n",  # one field
    'W1,t1,d1,"2"\nW2,t1,d1\n',  # quoted fields elsewhere
    "W1,t1,d1,2\r\nW2,t1,d1\r\n",  # CRLF
])
@pytest.mark.parametrize("command", ["aggregate", "agreement"])
def test_a_crowd_csv_row_with_fewer_fields_than_the_header(cli, tmp_path, rows, command):
    judgments = tmp_path / "j.csv"
    judgments.write_text("worker_id,turn_id,item_id,relevance\n" + rows, newline="")
    extra = ["--out-dir", tmp_path / "o"] if command == "aggregate" else []
    message = _one_line_error(cli(command, judgments, "--criteria", "relevance", *extra))
    assert message.startswith(f"castregin: error: {judgments}:3: ") and "where the header has 4" in message


def test_a_gold_csv_row_with_fewer_fields_than_the_header(cli, tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("turn_id,item_id,criterion,min_label,max_label\n101_1-1,Q0001,relevance,0\n")
    message = _one_line_error(cli("aggregate", REPO / "data/crowd/judgments.csv", "--criteria", "relevance",
                                  "--gold", gold, "--out-dir", tmp_path / "o"))
    assert message.startswith(f"castregin: error: {gold}:2: 4 fields where the header has 5")


# --- NUL bytes: no trec_eval id holds one ---------------------------------------------------------------------


def _nul_inputs(d: Path) -> dict[str, tuple]:
    """A command line per reader, each with a NUL byte inside an id of one input."""
    run = "".join(f"101_1-{t}\tQ0\tQ000{i}\t{i}\t{10 - i}.0\tr\n" for t in range(1, 4) for i in range(1, 4))
    (d / "r.run").write_text(run)
    (d / "q.qrel").write_text("".join(f"101_1-{t} 0 Q000{i} {i % 3}\n" for t in range(1, 4) for i in range(1, 4)))
    (d / "nul.run").write_text(run.replace("Q0002", "Q00\x002", 1))
    (d / "nul.qrel").write_text("101_1-1 0 Q0001 1\n101_1-2 0 Q\x000001 2\n")
    (d / "nul.txt").write_text("101_1-1\n101_1-\x002\n")
    (d / "nul-turns.json").write_text('{"101": ["1-1", "1-\\u00002"]}')
    (d / "nul.csv").write_text("worker_id,turn_id,item_id,relevance\nW1,101_1-1,Q0001,2\nW\x002,101_1-1,Q0001,1\n")
    (d / "nul-bank.json").write_text('{"Q0001": "a", "Q\\u00002": "b"}')
    (d / "nul-list-bank.json").write_text('[{"question_id": "Q\\u00001", "question": "a"}]')
    (d / "nul-run.json").write_text('{"run_name": "x", "turns": [{"turn_id": "101_1-\\u00001", "questions": []}]}')
    (d / "nul-main.json").write_text('{"run_name": "m", "turns": [{"turn_id": "101_1-1", "responses": [{"text": "a", '
                                     '"rank": 1, "provenance": [{"id": "P\\u00001"}]}]}]}')
    (d / "nul-gold.csv").write_text("turn_id,item_id,criterion,min_label,max_label\n101_1-1,Q\x001,relevance,0,1\n")
    bank = REPO / "data/question_bank.json"
    return {
        "run (trec_eval)": ("trec_eval", d / "q.qrel", d / "nul.run"),
        "run (evaluate, streamed)": ("evaluate", d / "nul.run", "--qrels", d / "q.qrel"),
        "run (pool)": ("pool", d / "nul.run"),
        "pool (pool stats --pool)": ("pool", "stats", d / "r.run", "--pool", d / "nul.run"),
        "qrels (evaluate, streamed)": ("evaluate", d / "r.run", "--qrels", d / "nul.qrel"),
        "qrels (qrels stats)": ("qrels", "stats", d / "nul.qrel"),
        "turn list": ("evaluate", d / "r.run", "--qrels", d / "q.qrel", "--turns", d / "nul.txt"),
        "turn list (JSON)": ("evaluate", d / "r.run", "--qrels", d / "q.qrel", "--turns", d / "nul-turns.json"),
        "crowd CSV": ("aggregate", d / "nul.csv", "--criteria", "relevance", "--out-dir", d / "o"),
        "gold CSV": ("aggregate", REPO / "data/crowd/judgments.csv", "--criteria", "relevance", "--gold",
                     d / "nul-gold.csv", "--out-dir", d / "o"),
        "bank": ("convert", "questions", REPO / "data/runs/alpha.json", "--bank", d / "nul-bank.json", "-o", "-"),
        "bank (list)": ("convert", "questions", REPO / "data/runs/alpha.json", "--bank", d / "nul-list-bank.json",
                        "-o", "-"),
        "JSON run": ("convert", "questions", d / "nul-run.json", "--bank", bank, "-o", "-"),
        "main-task run": ("convert", "passages", d / "nul-main.json", "-o", "-"),
    }


NUL_CASES = ["run (trec_eval)", "run (evaluate, streamed)", "run (pool)", "pool (pool stats --pool)",
             "qrels (evaluate, streamed)", "qrels (qrels stats)", "turn list", "turn list (JSON)", "crowd CSV",
             "gold CSV", "bank", "bank (list)", "JSON run", "main-task run"]


@pytest.mark.parametrize("case", NUL_CASES)
def test_a_nul_byte_in_an_id_is_refused_by_every_reader(cli, tmp_path, case):
    call = _nul_inputs(tmp_path)[case]
    message = _one_line_error(cli(*call))
    assert "NUL" in message or "\\u0000" in message, message


def test_the_fast_readers_leave_a_nul_to_the_line_reader(tmp_path):
    from castregin.errors import InputError
    from castregin.formats import columnar

    _nul_inputs(tmp_path)
    for read in (lambda: columnar.read_run(tmp_path / "nul.run"), lambda: columnar.read_qrels(tmp_path / "nul.qrel"),
                 lambda: list(columnar.stream_run(tmp_path / "nul.run"))):
        with pytest.raises((InputError, columnar.NotStreamable)) as caught:
            read()
        if isinstance(caught.value, InputError):
            assert ":1: holds a NUL byte" in str(caught.value) or ":2: holds a NUL byte" in str(caught.value)
