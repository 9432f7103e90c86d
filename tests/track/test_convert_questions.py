"""`castregin convert questions`: the CAsT 2022 baselines, bank matching, warnings, outputs."""

from __future__ import annotations

import gc
import json
import unicodedata

import pytest

from castregin.formats.trec import format_score
from castregin.track.convert import Bank, Warnings, convert_questions, fold, iter_questions


def write(path, data):
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def mi_run(turns, name="my run"):
    """An MI run from {turn_id: [(question, score), ...]} (a list of pairs keeps duplicate turns)."""
    pairs = turns.items() if isinstance(turns, dict) else turns
    return {"run_name": name, "turns": [{"turn_id": t, "questions": [{"question": q, "score": s} for q, s in qs]}
                                        for t, qs in pairs]}


BANK = {"Q0000": "", "Q0001": "Do you want recipes?", "Q0002": "Are you vegan?",
        "Q0003": "Caf\u00e9 or tea?", "Q0010": "Are you Vegan?"}


@pytest.fixture
def bank(tmp_path):
    return write(tmp_path / "bank.json", BANK)


def lines(text):
    return [line.split("\t") for line in text.splitlines()]


# ------------------------------------------------------------------------------------ the real baselines

def expected_lines(run_json, tag, depth=None):
    """What SPEC says the TREC lines are, computed straight from the JSON (ids only, no duplicates)."""
    out = []
    for turn in run_json["turns"]:
        ranked = sorted(turn["questions"], key=lambda q: -q["score"])  # stable: ties in input order
        for rank, q in enumerate(ranked[:depth], start=1):
            out.append(f"{turn['turn_id']}\tQ0\t{q['question']}\t{rank}\t{format_score(q['score'])}\t{tag}")
    return out


def test_bm25_first_lines(cast2022, cli, tmp_path):
    source = cast2022 / "runs/mi/bm25_baseline_mi_run.json"
    result = cli("convert", "questions", source, "--bank", cast2022 / "regin/question_bank.json",
                 "--bank", cast2022 / "topics/2022_mixed_initiative_question_pool.json", "-o", "-")
    assert result.exit_code == 0, result.stderr
    got = result.stdout.splitlines()
    assert got[0] == "132_1-1\tQ0\tQ1856\t1\t7.498799800872803\tbm25_baseline_mi_run"
    data = json.loads(source.read_text())
    first = data["turns"][0]["questions"]
    assert got[1] == f"132_1-1\tQ0\t{first[1]['question']}\t2\t{first[1]['score']!r}\tbm25_baseline_mi_run"
    assert got[1] == "132_1-1\tQ0\tQ4324\t2\t6.7779998779296875\tbm25_baseline_mi_run"
    # The whole run: every bank id kept (Q2173 too, from the official pool), nothing dropped.
    assert got == expected_lines(data, "bm25_baseline_mi_run")
    assert len(got) == sum(len(t["questions"]) for t in data["turns"]) == 20221
    assert result.stderr == ""


def test_minilm_ties_keep_input_order(cast2022, cli):
    source = cast2022 / "runs/mi/miniLM_bert_sample_mi_run.json"
    result = cli("convert", "questions", source, "--bank", cast2022 / "regin/question_bank.json",
                 "--bank", cast2022 / "topics/2022_mixed_initiative_question_pool.json", "-o", "-")
    assert result.exit_code == 0
    data = json.loads(source.read_text())
    scores = [q["score"] for t in data["turns"] for q in t["questions"]]
    assert len(scores) - len(set(scores)) > 100  # hundreds of ties: the order among them matters
    assert result.stdout.splitlines() == expected_lines(data, "miniLM_bert_sample_mi_run")


def test_q2173_needs_the_official_pool(cast2022, cli):
    source = cast2022 / "runs/mi/bm25_baseline_mi_run.json"
    both = cli("convert", "questions", source, "--bank", cast2022 / "regin/question_bank.json",
               "--bank", cast2022 / "topics/2022_mixed_initiative_question_pool.json", "-o", "-")
    kept = [f for f in lines(both.stdout) if f[2] == "Q2173"]
    data = json.loads(source.read_text())
    where = [(t, q, turn["turn_id"]) for t, turn in enumerate(data["turns"])
             for q, question in enumerate(turn["questions"]) if question["question"] == "Q2173"]
    assert [(f[0], f[3]) for f in kept] == [(turn_id, str(q + 1)) for _, q, turn_id in where]  # no ties there
    judged = [line.split()[0] for line in (cast2022 / "regin/qrels/question_relevance_all.qrel").open()
              if line.split()[2] == "Q2173"]
    assert judged and set(judged) <= {f[0] for f in kept}
    assert both.stderr == ""

    regin_only = cli("convert", "questions", source, "--bank", cast2022 / "regin/question_bank.json", "-o", "-",
                     "--verbose")
    assert regin_only.exit_code == 0
    assert not [f for f in lines(regin_only.stdout) if f[2] == "Q2173"]
    warnings = [w for w in regin_only.stderr.splitlines() if "warning:" in w]
    t, q, turn_id = where[0]
    assert warnings[0] == (f"castregin: warning: {source}: turns[{t}].questions[{q}]: Q2173 is not in the question "
                           f"bank (turn {turn_id}); dropped")
    assert len(warnings) == len(kept) == 14
    # Without --verbose: the first three, and how many more.
    short = cli("convert", "questions", source, "--bank", cast2022 / "regin/question_bank.json", "-o", "-")
    assert short.stdout == regin_only.stdout
    assert short.stderr.splitlines()[:4] == [*warnings[:3], ("castregin: warning: 11 more unknown id warnings like "
                                                             "these; --verbose shows every one")]
    assert short.stderr.splitlines()[4:] == regin_only.stderr.splitlines()[14:]  # the summary line
    assert regin_only.stderr.splitlines()[-1] == "castregin: 14 warnings: 14 unknown id"
    # The items below Q2173 move up one rank.
    below = [f for f in lines(regin_only.stdout) if f[0] == turn_id]
    assert below[q][3] == str(q + 1) and below[q][2] == [f for f in lines(both.stdout) if f[0] == turn_id][q + 1][2]


def test_t5_texts_all_map_to_existing_ids(cast2022, cli, tmp_path):
    banks = ["--bank", cast2022 / "regin/question_bank.json",
             "--bank", cast2022 / "topics/2022_mixed_initiative_question_pool.json"]
    result = cli("convert", "questions", cast2022 / "runs/mi/T5_raw_run.json",
                 cast2022 / "runs/mi/T5_rewrite_run.json", *banks, "--out-dir", tmp_path / "out",
                 "--bank-out", tmp_path / "bank.json")
    assert result.exit_code == 0 and result.stderr == ""
    regin = json.loads((cast2022 / "regin/question_bank.json").read_text())
    merged = json.loads((tmp_path / "bank.json").read_text())
    assert len(merged) == len(regin) + 1 and set(merged) - set(regin) == {"Q2173"}  # no new ids
    text_to_id = {text: qid for qid, text in regin.items()}
    for name in ("T5_raw", "T5_rewrite"):
        data = json.loads((cast2022 / f"runs/mi/{name}_run.json").read_text())
        got = lines((tmp_path / "out" / f"{name}_run.run").read_text())
        assert len(got) == len(data["turns"]) == 205
        for fields, turn in zip(got, data["turns"], strict=True):
            text = turn["questions"][0]["question"]
            assert fields[:5] == [turn["turn_id"], "Q0", text_to_id[text], "1", "1.0"]
            assert fields[5] == name


# ------------------------------------------------------------------------------------------- matching

def test_matching_exact_folded_case_sensitive_and_new_ids(tmp_path, bank, cli):
    run = write(tmp_path / "run.json", mi_run({
        "1_1-1": [("Q0002", 3.0), ("  Do you  want\u00a0recipes? ", 2.0), ("Are you Vegan?", 1.0),
                  ("Cafe\u0301 or tea?", 0.5), ("ARE YOU VEGAN?", 0.25), ("Brand new?", 0.1)],
        "1_1-3": [("Brand  new?", 2), ("Another one", 1)],
    }))
    result = cli("convert", "questions", run, "--bank", bank, "-o", "-", "--bank-out", tmp_path / "out.json")
    assert result.exit_code == 0, result.stderr
    assert [f[2] for f in lines(result.stdout)] == [
        "Q0002", "Q0001",  # id kept; text found after whitespace folding (NBSP too)
        "Q0010",  # exact match wins over the case twin Q0002: matching is case-sensitive
        "Q0003",  # NFD e + combining acute == NFC é
        "Q0011",  # all caps: no match -> one above the highest id, same padding
        "Q0012", "Q0012", "Q0013"]  # a folded repeat of a new text gets the same id
    assert [f[4] for f in lines(result.stdout)][:2] == ["3.0", "2.0"]
    out = json.loads((tmp_path / "out.json").read_text())
    assert list(out) == [*BANK, "Q0011", "Q0012", "Q0013"]
    assert out["Q0012"] == "Brand new?" and out["Q0011"] == "ARE YOU VEGAN?"


def test_lowest_id_among_several_folded_matches():
    bank = Bank({"Q0007": "a  b", "Q0003": "a b ", "Q0005": "a\tb"})
    assert bank.match("a b") == "Q0003"
    assert bank.match("a\tb") == "Q0005"  # exact first
    assert bank.id_for("c") == "Q0008" and bank.new_ids == ["Q0008"]
    assert fold("  x \n y\u00a0") == "x y" and fold(unicodedata.normalize("NFD", "é")) == "é"


def test_banks_merge_first_wins_and_list_shape(tmp_path, cli):
    first = write(tmp_path / "first.json", {"Q0001": "first text", "Q0002": "two"})
    second = write(tmp_path / "pool.json", [{"question_id": "Q0001", "question": "other text"},
                                             {"question_id": "Q0099", "question": "ninety-nine"}])
    run = write(tmp_path / "run.json", mi_run({"1_1-1": [("Q0001", 1), ("Q0099", 0.5), ("other text", 0.2),
                                                         ("new", 0.1)]}))
    result = cli("convert", "questions", run, "--bank", first, "--bank", second, "-o", "-",
                 "--bank-out", tmp_path / "merged.json")
    assert result.exit_code == 0, result.stderr
    # "other text" lost its id to the first bank's Q0001, so it is new: Q0100 (after the highest, Q0099).
    assert [f[2] for f in lines(result.stdout)] == ["Q0001", "Q0099", "Q0100", "Q0101"]
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged == {"Q0001": "first text", "Q0002": "two", "Q0099": "ninety-nine", "Q0100": "other text",
                      "Q0101": "new"}
    # Written in the shape of the first bank given: the list shape when it comes first.
    cli("convert", "questions", run, "--bank", second, "-o", tmp_path / "r.run", "--bank-out", tmp_path / "l.json")
    assert json.loads((tmp_path / "l.json").read_text())[0] == {"question_id": "Q0001", "question": "other text"}


def test_several_runs_share_one_growing_bank(tmp_path, bank, cli):
    a = write(tmp_path / "a.json", mi_run({"1_1-1": [("new one", 1), ("new two", 0.5)]}, name="A"))
    b = write(tmp_path / "b.json", mi_run({"1_1-1": [("new two", 1), ("new three", 0.5)]}, name="B"))
    result = cli("convert", "questions", a, b, "--bank", bank, "--out-dir", tmp_path / "out",
                 "--bank-out", tmp_path / "grown.json")
    assert result.exit_code == 0
    assert [f[2] for f in lines((tmp_path / "out/a.run").read_text())] == ["Q0011", "Q0012"]
    assert [f[2] for f in lines((tmp_path / "out/b.run").read_text())] == ["Q0012", "Q0013"]
    assert list(json.loads((tmp_path / "grown.json").read_text()))[-3:] == ["Q0011", "Q0012", "Q0013"]


def test_ranking_depth_tag_and_python_api(tmp_path, bank, cli):
    run = write(tmp_path / "run.json", mi_run({"1_1-1": [("Q0001", 1), ("Q0002", 5), ("Q0003", 1), ("Q0000", 5)]},
                                              name="  team  x\trun "))
    result = cli("convert", "questions", run, "--bank", bank, "-o", "-", "--depth", "3")
    assert result.stdout == ("1_1-1\tQ0\tQ0002\t1\t5.0\tteam_x_run\n1_1-1\tQ0\tQ0000\t2\t5.0\tteam_x_run\n"
                             "1_1-1\tQ0\tQ0001\t3\t1.0\tteam_x_run\n")
    converted, warnings = convert_questions(run, Bank(BANK))
    assert converted.tag == "team_x_run" and not warnings
    assert converted.ranks["1_1-1"] == {"Q0002": 1, "Q0000": 2, "Q0001": 3, "Q0003": 4}
    nameless = write(tmp_path / "nameless.json", {"turns": mi_run({"1_1-1": [("Q0001", 1)]})["turns"]})
    assert cli("convert", "questions", nameless, "--bank", bank, "-o", "-").stdout.endswith("\tnameless\n")


# ------------------------------------------------------------------------------------------- warnings

WARNING_CASES = {
    "duplicate question": (
        {"1_1-1": [("Q0001", 1.0), ("Q0002", 2.0), ("Do you want recipes?", 3.0)]},
        "run.json: turns[0].questions[2]: Q0001 is repeated in turn 1_1-1; its highest score is kept",
        "1 warning: 1 duplicate question",
        "1_1-1\tQ0\tQ0001\t1\t3.0\tt\n1_1-1\tQ0\tQ0002\t2\t2.0\tt\n"),
    "duplicate turn": (
        [("1_1-1", [("Q0001", 1.0)]), ("1_1-3", [("Q0001", 1.0)]), ("1_1-1", [("Q0002", 2.0)])],
        ("run.json: turn 1_1-1 is listed 2 times (turns[0], turns[2]); its questions are taken together, in "
         "file order"),
        "1 warning: 1 duplicate turn",
        "1_1-1\tQ0\tQ0002\t1\t2.0\tt\n1_1-1\tQ0\tQ0001\t2\t1.0\tt\n1_1-3\tQ0\tQ0001\t1\t1.0\tt\n"),
    "empty question": (
        {"1_1-1": [(" \n", 1.0), ("Q0001", 0.5)]},
        "run.json: turns[0].questions[0]: the question is empty (turn 1_1-1); dropped",
        "1 warning: 1 empty question",
        "1_1-1\tQ0\tQ0001\t1\t0.5\tt\n"),
    "unknown id": (
        {"1_1-1": [("Q9999", 1.0), ("Q0001", 0.5)]},
        "run.json: turns[0].questions[0]: Q9999 is not in the question bank (turn 1_1-1); dropped",
        "1 warning: 1 unknown id",
        "1_1-1\tQ0\tQ0001\t1\t0.5\tt\n"),
    "turn not in --turns": (
        {"1_1-1": [("Q0001", 1.0)], "9_9-9": [("Q0002", 1.0)]},
        "run.json: turn 9_9-9 is not in the official turn list; kept",
        "1 warning: 1 turn not in --turns",
        "1_1-1\tQ0\tQ0001\t1\t1.0\tt\n9_9-9\tQ0\tQ0002\t1\t1.0\tt\n"),
    "turn without questions": (
        {"1_1-1": [], "1_1-3": [("Q0001", 1.0)], "1_1-5": [("Q7777", 1.0)]},
        "run.json: turn 1_1-1 has no questions; omitted",
        "3 warnings: 2 turn without questions, 1 unknown id",  # 1_1-5 loses its only question
        "1_1-3\tQ0\tQ0001\t1\t1.0\tt\n"),
}


@pytest.mark.parametrize("kind", list(WARNING_CASES))
def test_each_warning_kind(kind, tmp_path, bank, cli, monkeypatch):
    turns, message, summary, output = WARNING_CASES[kind]
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "run.json", mi_run(turns, name="t"))
    write(tmp_path / "turns.json", {"1": ["1-1", "1-3", "1-5"]})
    result = cli("convert", "questions", "run.json", "--bank", bank, "--turns", "turns.json", "-o", "out.run")
    assert result.exit_code == 0
    stderr = result.stderr.splitlines()
    assert stderr[0] == f"castregin: warning: {message}"
    assert stderr[-1] == f"castregin: {summary}"
    assert (tmp_path / "out.run").read_text() == output

    strict = cli("convert", "questions", "run.json", "--bank", bank, "--turns", "turns.json", "-o", "strict.run",
                 "--strict")
    assert strict.exit_code == 1
    assert strict.stderr.splitlines()[0] == f"castregin: warning: {message}"
    count = summary.split()[0]
    assert strict.stderr.splitlines()[-1] == (f"castregin: error: {count} warning{'s' if count != '1' else ''} "
                                              "and --strict: nothing written")
    assert not (tmp_path / "strict.run").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_warning_summary_counts_per_kind(tmp_path, bank, cli):
    run = write(tmp_path / "run.json", mi_run({"1_1-1": [("Q9999", 1), ("Q8888", 1), ("", 1), ("Q0001", 1)],
                                               "1_1-3": []}))
    result = cli("convert", "questions", run, "--bank", bank, "-o", "-")
    assert result.stderr.splitlines()[-1] == ("castregin: 4 warnings: 2 unknown id, 1 empty question, "
                                              "1 turn without questions")
    warnings = Warnings()
    list(iter_questions(run, Bank(BANK), warnings=warnings))
    assert warnings.counts() == {"unknown id": 2, "empty question": 1, "turn without questions": 1}


def test_warnings_of_one_kind_are_counted_beyond_three(tmp_path, bank, cli):
    # Six repeats of Q0001 and two unknown ids: three of the first kind shown, the other three counted.
    questions = [("Q0001", 7 - k) for k in range(7)] + [("Q9999", 1), ("Q0002", 1), ("Q8888", 1)]
    run = write(tmp_path / "run.json", mi_run({"1_1-1": questions}))
    every = cli("convert", "questions", run, "--bank", bank, "-o", "-", "--verbose")
    short = cli("convert", "questions", run, "--bank", bank, "-o", "-")
    assert every.exit_code == short.exit_code == 0
    assert every.stdout == short.stdout
    all_lines = every.stderr.splitlines()
    repeats = [f"castregin: warning: {run}: turns[0].questions[{k}]: Q0001 is repeated in turn 1_1-1; its highest "
               "score is kept" for k in range(1, 7)]
    unknown = [f"castregin: warning: {run}: turns[0].questions[{k}]: {q} is not in the question bank (turn 1_1-1); "
               "dropped" for k, q in ((7, "Q9999"), (9, "Q8888"))]
    summary = "castregin: 8 warnings: 6 duplicate question, 2 unknown id"
    assert all_lines == [*repeats, *unknown, summary]
    assert short.stderr.splitlines() == [
        *repeats[:3], *unknown,
        "castregin: warning: 3 more duplicate question warnings like these; --verbose shows every one", summary]


def test_strict_with_several_runs_writes_nothing(tmp_path, bank, cli):
    good = write(tmp_path / "good.json", mi_run({"1_1-1": [("Q0001", 1)]}))
    bad = write(tmp_path / "bad.json", mi_run({"1_1-1": [("Q9999", 1)], "1_1-3": [("new text", 1)]}))
    result = cli("convert", "questions", good, bad, "--bank", bank, "--out-dir", tmp_path / "out", "--strict",
                 "--bank-out", tmp_path / "grown.json")
    assert result.exit_code == 1
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    assert not (tmp_path / "grown.json").exists()
    stdout = cli("convert", "questions", bad, "--bank", bank, "-o", "-", "--strict")
    assert stdout.exit_code == 1 and stdout.stdout == ""


# ------------------------------------------------------------------------------------------- outputs

def test_bank_out_never_overwrites_an_input(tmp_path, bank, cli):
    run = write(tmp_path / "run.json", mi_run({"1_1-1": [("brand new", 1)]}))
    before = bank.read_bytes()
    result = cli("convert", "questions", run, "--bank", bank, "--bank-out", bank, "-o", tmp_path / "out.run")
    assert result.exit_code == 1
    assert result.stderr == (f"castregin: error: {bank}: refusing to overwrite the input file {bank}; "
                             "choose another output\n")
    assert bank.read_bytes() == before and not (tmp_path / "out.run").exists()
    result = cli("convert", "questions", run, "--bank", bank, "-o", run)
    assert result.exit_code == 1 and "refusing to overwrite the input file" in result.stderr


def test_output_usage_errors(tmp_path, bank, cli):
    run = write(tmp_path / "run.json", mi_run({"1_1-1": [("Q0001", 1)]}))
    other = write(tmp_path / "other.json", mi_run({"1_1-1": [("Q0001", 1)]}))
    assert cli("convert", "questions", run, "--bank", bank).exit_code == 2
    assert cli("convert", "questions", run, "--bank", bank, "-o", "-", "--out-dir", tmp_path).exit_code == 2
    both = cli("convert", "questions", run, other, "--bank", bank, "-o", "-")
    assert both.exit_code == 2 and "-o takes exactly one input run" in both.stderr
    (tmp_path / "sub").mkdir()
    twin = write(tmp_path / "sub" / "run.json", mi_run({"1_1-1": [("Q0001", 1)]}))
    clash = cli("convert", "questions", run, twin, "--bank", bank, "--out-dir", tmp_path / "out")
    assert clash.exit_code == 1 and "would both be written to" in clash.stderr


def test_missing_input_is_one_line_error(tmp_path, bank, cli):
    result = cli("convert", "questions", tmp_path / "nope.json", "--bank", bank, "-o", "-")
    assert result.exit_code == 1
    assert result.stderr == f"castregin: error: {tmp_path / 'nope.json'}: no such file; check the path\n"


def test_stdin_and_stdout_and_repeatable_bytes(tmp_path, bank, cli):
    data = mi_run({"1_1-1": [("x", 0.1), ("y", 0.30000000000000004), ("Q0002", 1e-7)]}, name="s")
    first = cli("convert", "questions", "-", "--bank", bank, "-o", "-", input=json.dumps(data))
    assert first.exit_code == 0
    assert first.stdout == ("1_1-1\tQ0\tQ0012\t1\t0.30000000000000004\ts\n1_1-1\tQ0\tQ0011\t2\t0.1\ts\n"
                            "1_1-1\tQ0\tQ0002\t3\t1e-07\ts\n")
    run = write(tmp_path / "run.json", data)
    outputs = []
    for attempt in range(2):
        cli("convert", "questions", run, "--bank", bank, "-o", tmp_path / f"{attempt}.run",
            "--bank-out", tmp_path / f"{attempt}.json")
        outputs.append(((tmp_path / f"{attempt}.run").read_bytes(), (tmp_path / f"{attempt}.json").read_bytes()))
    assert outputs[0] == outputs[1] and outputs[0][0] == first.stdout.encode()


def test_real_run_repeatable_bytes(cast2022, cli, tmp_path):
    source = cast2022 / "runs/mi/miniLM_bert_sample_mi_run.json"
    bank = cast2022 / "regin/question_bank.json"
    for name in ("a", "b"):
        cli("convert", "questions", source, "--bank", bank, "-o", tmp_path / f"{name}.run")
    assert (tmp_path / "a.run").read_bytes() == (tmp_path / "b.run").read_bytes()


@pytest.mark.parametrize("score", [1.5, "high"])
def test_the_cycle_collector_is_on_again_after_a_conversion(score, tmp_path, bank, cli):
    # convert pauses it while a run is converted (docs/speed.md): a valid run or an error, it comes back on.
    run = write(tmp_path / "run.json", mi_run({"1_1-1": [("Q0001", score)]}))
    assert gc.isenabled()
    result = cli("convert", "questions", run, "--bank", bank, "-o", tmp_path / "out.run")
    assert result.exit_code == (0 if score == 1.5 else 1)
    assert gc.isenabled()


def test_the_cycle_collector_is_paused_while_the_api_and_the_command_convert(tmp_path, bank, cli, monkeypatch):
    # The pause is what takes 15% off (docs/speed.md): seen from inside the conversion, both ways in.
    from castregin.track import convert

    seen = []

    def spy(real):
        def spying(*args, **kwargs):
            seen.append(gc.isenabled())
            return real(*args, **kwargs)
        return spying

    monkeypatch.setattr(convert, "iter_questions", spy(convert.iter_questions))
    monkeypatch.setattr(convert, "write_ranked", spy(convert.write_ranked))
    run = write(tmp_path / "run.json", mi_run({"1_1-1": [("Q0001", 1.5)]}))
    convert.convert_questions(run, Bank(BANK))
    assert gc.isenabled() and seen == [False]
    assert cli("convert", "questions", run, "--bank", bank, "-o", tmp_path / "out.run").exit_code == 0
    assert gc.isenabled() and seen == [False, False, False]  # iter_questions, then write_ranked
