"""Numbers are written with the ASCII digits 0-9, in every reader and every numeric option.

Python's int() and float() read every script's digits: a qrels label `٢` (Arabic-Indic two) or a
full-width two was read as 2, where trec_eval's atol reads 0 and the crowd reader refused it. One rule
everywhere (castregin.formats.common.plain_number_text): anything but ASCII digits is refused, in one line
naming the file and line, or the option.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from castregin import formats
from castregin.errors import InputError
from castregin.formats import citations, crowd, dialogue, diversity, preferences, zscores
from castregin.formats.common import plain_number_text

DIGITS = ["\u0662", "\uff12", "\u096a", "1_0"]  # Arabic-Indic 2, full-width 2, Devanagari 4, Python's separator


def test_the_rule():
    assert all(int(text) for text in DIGITS)  # what Python alone would take
    assert not any(plain_number_text(text) for text in DIGITS)
    assert all(plain_number_text(text) for text in ("2", "-3", "+1", "1.5e3", " 7 "))


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("digit", DIGITS)
def test_every_reader_refuses_them(tmp_path, digit):
    # (reader, file text, what the one line says); each used to read the digit as a number, or is checked here
    # so that no reader can start to.
    cases = [
        (formats.read_qrels, f"t1 0 Q1 {digit}\n", "label"),
        (formats.read_run, f"t1 Q0 Q1 1 {digit} a\n", "score"),
        (formats.read_run, f"t1 Q0 Q1 {digit} 1.5 a\n", "rank"),
        (diversity.read_diversity_qrels, f"t1 1 Q1 {digit}\n", "label"),
        (zscores.read_zscores, f"t1 P_5 {digit} 0.1\n", "mean"),
        (preferences.read_prefs, f"t1 g 1 Q1 {digit}\n", "level"),
        (preferences.read_qrels_jg, f"t1 g Q1 {digit}\n", "label"),
        (lambda path: crowd.read_judgments([path], ["relevance"]),
         f"worker_id,turn_id,item_id,relevance\nw1,t1,Q1,{digit}\n", "label"),
        (crowd.read_gold, f"turn_id,item_id,criterion,min_label,max_label\nt1,Q1,relevance,{digit},3\n", "min_label"),
        (dialogue.read_avm_matrix, f",a,b\na,{digit},1\nb,1,3\n", "count"),
        (lambda path: dialogue.read_dialogues(path, ["US"]), f"US\n{digit}\n1\n", "US"),
        (citations.read_citation_labels, f"run_id,qid,sentence,passage_id,support\nr,q1,{digit},p1,full_support\n",
         "sentence"),
    ]
    for number, (read, text, what) in enumerate(cases):
        path = _write(tmp_path / f"case{number}.txt", text)
        with pytest.raises(InputError, match=what) as refused:
            read(path)
        assert str(path) in str(refused.value), (read, str(refused.value))


def test_the_streaming_qrels_reader_refuses_them_too(tmp_path):
    # Above 4 MiB a qrels is read by the columnar reader, which cast labels with int() too.
    from castregin.evaluation.evaluate import evaluate_file_rows
    from castregin.evaluation.measures import parse_measures

    turns = 320_000
    with open(tmp_path / "big.qrel", "w", encoding="utf-8") as out:
        out.writelines(f"t{t} 0 Q1 {1 if t != 250_000 else chr(0x662)}\n" for t in range(turns))
    assert (tmp_path / "big.qrel").stat().st_size > 4 << 20
    _write(tmp_path / "a.run", "t1 Q0 Q1 1 1.0 a\n")
    with pytest.raises(InputError, match=r"big.qrel:250001: label '\u0662' is not an integer \(castregin reads the "
                                         r"ASCII digits 0-9 only"):
        evaluate_file_rows([tmp_path / "a.run"], [(None, tmp_path / "big.qrel")], measures=parse_measures(["P@1"], 1))


def test_trec_eval_s_numbers_are_never_read_from_other_digits(cli, tmp_path):
    # What trec_eval 9.0.8 itself prints for this qrels: P_1 0.0000, its atol reading '٢' as 0. castregin refuses.
    qrels = _write(tmp_path / "q.qrel", "t1 0 Q1 \u0662\nt1 0 Q2 0\n")
    run = _write(tmp_path / "a.run", "t1 Q0 Q1 1 2 a\nt1 Q0 Q2 2 1 a\n")
    for call in (("trec_eval", qrels, run), ("evaluate", run, "--qrels", qrels)):
        result = cli(*call)
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr == (f"castregin: error: {qrels}:1: label '\u0662' is not an integer (castregin reads "
                                 "the ASCII digits 0-9 only, as trec_eval does)\n")


@pytest.mark.parametrize("call", [
    ("evaluate", "a.run", "--qrels", "q.qrel", "--rel-level", "{}"),
    ("pool", "a.run", "--depth", "{}"),
    ("compare", "a.run", "b.run", "--qrels", "q.qrel", "--alpha", "0.0{}"),
    ("analyze", "bootstrap", "a.run", "--qrels", "q.qrel", "--samples", "{}"),
    ("pool", "a.run", "--sample", "1-1{}:1"),
    ("pool", "a.run", "--sample", "1-10:0.{}"),
    ("pool", "simulate", "a.run", "b.run", "--qrels", "q.qrel", "--budgets", "1,{}"),
])
@pytest.mark.parametrize("digit", DIGITS)
def test_numeric_options_take_ascii_digits_only(cli, tmp_path, monkeypatch, call, digit):
    monkeypatch.chdir(tmp_path)
    result = cli(*(part.format(digit) for part in call))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    # click's number options say it so; the options read by castregin (--sample, --budgets) name the value.
    assert ("is not a number written with the ASCII digits 0-9" in result.stderr or
            f"{call[-1].format(digit)!r}" in result.stderr), result.stderr


def test_crowd_options_and_the_drop_ins(cli, tmp_path):
    for call in (("aggregate", "j.csv", "--criteria", "relevance", "--scale", "0-\u0663", "--out-dir", "x"),
                 ("aggregate", "j.csv", "--criteria", "relevance", "--label-map", "yes=\u0662", "--out-dir", "x"),
                 ("trec_eval", "-l", "\u0662", "q.qrel", "a.run"),
                 ("gdeval", "-k", "\uff12", "q.qrel", "a.run"),
                 ("ndeval", "-M", "\uff12", "q.qrel", "a.run")):
        result = cli(*call)
        assert result.exit_code in (1, 2) and result.stderr.count("\n") == 1, (call, result.stderr)
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", ["P_\u0662", "P.\u0662", "ndcg_cut.\u0663", "P_\uff12", "nDCG@\uff13",
                                  "iprec_at_recall_0.\u06650", "P.1,\u0662"])
@pytest.mark.parametrize("command", ["evaluate", "analyze ppi", "pool simulate"])
def test_a_measure_is_named_with_ascii_digits(cli, tmp_path, monkeypatch, name, command):
    # `-m P_٢` was P@2 (its cutoff read by str.isdigit and \d, which take every script's digits).
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "q.qrel", "t1 0 Q1 2\nt1 0 Q2 0\nt2 0 Q1 1\nt3 0 Q1 0\n")
    _write(tmp_path / "h.qrel", "t1 0 Q1 2\nt1 0 Q2 0\nt2 0 Q1 1\n")
    _write(tmp_path / "a.run", "t1 Q0 Q1 1 2 a\nt1 Q0 Q2 2 1 a\n")
    _write(tmp_path / "b.run", "t1 Q0 Q2 1 2 b\nt1 Q0 Q1 2 1 b\n")
    call = {"evaluate": ["evaluate", "a.run", "--qrels", "q.qrel"],
            "analyze ppi": ["analyze", "ppi", "a.run", "b.run", "--qrels", "h.qrel", "--model-qrels", "q.qrel"],
            "pool simulate": ["pool", "simulate", "a.run", "b.run", "--qrels", "q.qrel"]}[command]
    result = cli(*call, "-m", name)
    assert result.exit_code in (1, 2) and result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert f"measure {name!r}: cutoffs and parameters are written with the ASCII digits 0-9" in result.stderr


def test_the_drop_in_refuses_them_as_trec_eval_does(cli, tmp_path):
    _write(tmp_path / "q.qrel", "t1 0 Q1 2\n")
    _write(tmp_path / "a.run", "t1 Q0 Q1 1 2 a\n")
    result = cli("trec_eval", "-m", "P.\u0662", tmp_path / "q.qrel", tmp_path / "a.run")
    assert result.exit_code == 1 and "(trec_eval: negative cutoff)" in result.stderr


def test_a_bank_id_numbers_its_new_ids_by_ascii_digits_only():
    from castregin.track.convert import Bank

    # Q009 in Arabic-Indic digits is not Q009: the next id follows the ASCII ids alone (it was Q010, after 9).
    bank = Bank({"Q\u0660\u0660\u0669": "Is it a cat?", "Q0003": "Is it a dog?"})
    assert bank.add("Is it a bird?") == "Q0004"


@pytest.mark.parametrize("epoch", ["\u0662", "\uff12"])
def test_source_date_epoch_is_ascii_digits_or_unset(monkeypatch, epoch):
    from castregin.dialogue.privateshared_game import now
    from castregin.formats.provenance import utc_date

    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    assert utc_date() != "1970-01-01T00:00:02Z" and not now().startswith("1970-01-01T00:00:02")


def test_a_descriptor_path_is_ascii_digits():
    from castregin.formats.output import descriptor_of

    assert descriptor_of("/dev/fd/3") == 3 and descriptor_of("/dev/fd/\u0663") is None
