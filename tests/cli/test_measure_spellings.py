"""Every option that names a measure takes it in every spelling: ir_measures' (nDCG@3), trec_eval's name
(ndcg_cut_3) and trec_eval's family with a parameter (ndcg_cut.3), with the same numbers.

`agreement --runs ... -m ndcg_cut.3` ended in a KeyError traceback: the ranking agreement looked the means up
under the name given, where evaluate's rows call it ndcg_cut_3. A test walks every command, so that a new option
that names a measure cannot go without.

The exception is the drop-in `trec_eval`, whose -m is trec_eval's own: ndcg_cut.3, never nDCG@3 or ndcg_cut_3,
which trec_eval 9.0.8 refuses ("illegal measure"), as castregin does there.
"""

from __future__ import annotations

import re

import pytest

from .command_tree import every_command

SPELLINGS = ["nDCG@3", "ndcg_cut_3", "ndcg_cut.3"]
#: Every option that names a measure: (command, option) -> the arguments to run it with, {m} the measure.
CALLS = {
    (("evaluate",), "measures"): ["evaluate", "a.run", "b.run", "--qrels", "q.qrel", "-m", "{m}", "--format", "tsv"],
    (("compare",), "measures"): ["compare", "a.run", "b.run", "--qrels", "q.qrel", "-m", "{m}", "--format", "tsv"],
    (("compare",), "sort"): ["compare", "a.run", "b.run", "--qrels", "q.qrel", "-m", "{m}", "--sort", "{m}"],
    (("analyze", "bootstrap"), "measures"): ["analyze", "bootstrap", "a.run", "b.run", "--qrels", "q.qrel", "-m",
                                             "{m}", "--samples", "50"],
    (("analyze", "correlation"), "measures"): ["analyze", "correlation", "a.run", "b.run", "c.run", "--qrels",
                                               "x=q.qrel", "--qrels", "y=p.qrel", "-m", "{m}"],
    (("analyze", "holes"), "measures"): ["analyze", "holes", "a.run", "b.run", "--qrels", "q.qrel", "-m", "{m}"],
    (("analyze", "loro"), "measure"): ["analyze", "loro", "a.run", "b.run", "c.run", "--qrels", "q.qrel",
                                       "--depth", "1", "-m", "{m}"],
    (("agreement",), "measure"): ["agreement", "x=q.qrel", "y=p.qrel", "--runs", "a.run", "--runs", "b.run",
                                  "--runs", "c.run", "-m", "{m}", "--samples", "0"],
    (("report",), "measures"): ["report", "a.run", "b.run", "--qrels", "q.qrel", "-m", "{m}", "--ci-samples", "20",
                                "--out", "report"],
    (("report",), "plot_measure"): ["report", "a.run", "b.run", "--qrels", "q.qrel", "-m", "P@1", "--plot-measure",
                                    "{m}", "--ci-samples", "20", "--out", "report"],
    (("analyze", "ppi"), "measures"): ["analyze", "ppi", "a.run", "b.run", "c.run", "--qrels", "h.qrel",
                                       "--model-qrels", "q.qrel", "-m", "{m}", "--plan-width", "0.5"],
    (("pool", "simulate"), "measure"): ["pool", "simulate", "a.run", "b.run", "c.run", "--qrels", "q.qrel", "-m",
                                        "{m}"],
}
DROP_IN = (("trec_eval",), "measures")
#: Options that name measures of their own, not trec_eval's: each takes its names, and "did you mean" for a near one.
OWN_NAMES = {(("nuggets", "score"), "measures")}


def _measure_options() -> set[tuple[tuple[str, ...], str]]:
    """(command path, parameter name) of every option that names a measure."""
    return {(path, param.name) for path, command in every_command().items() for param in command.params
            if "-m" in getattr(param, "opts", []) or "measure" in (param.name or "") or param.name == "sort"}


def test_every_option_naming_a_measure_is_walked():
    assert _measure_options() == {*CALLS, DROP_IN, *OWN_NAMES}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.qrel").write_text("t1 0 Q1 2\nt1 0 Q2 1\nt1 0 Q3 0\nt2 0 Q4 3\nt2 0 Q5 0\nt3 0 Q6 1\nt3 0 Q7 2\n")
    (tmp_path / "h.qrel").write_text("t1 0 Q1 2\nt1 0 Q2 1\nt1 0 Q3 0\nt2 0 Q4 3\nt2 0 Q5 0\n")  # people's sample
    (tmp_path / "p.qrel").write_text("t1 0 Q1 1\nt1 0 Q2 2\nt1 0 Q3 1\nt2 0 Q4 0\nt2 0 Q5 2\nt3 0 Q6 2\nt3 0 Q7 0\n")
    for tag, order in (("a", "1234567"), ("b", "3215476"), ("c", "2137654")):
        (tmp_path / f"{tag}.run").write_text("".join(
            f"t{1 if int(i) <= 3 else 2 if int(i) <= 5 else 3} Q0 Q{i} {rank} {10 - rank} {tag}\n"
            for rank, i in enumerate(order, start=1)))
    return tmp_path


def _normalised(text: str, spelling: str) -> str:
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "PNG", text)  # axis labels name the measure
    text = text.replace(spelling, "MEASURE").replace("ndcg_cut_3", "MEASURE").replace("nDCG_3", "MEASURE")
    return re.sub(r" +", " ", re.sub(r"-{2,}", "--", text))  # column widths follow the name's length


def _output(cli, files, call, spelling) -> str:
    result = cli(*(part.format(m=spelling) for part in call))
    assert result.exit_code == 0, (call, spelling, result.stderr)
    assert "Traceback" not in result.stderr
    if "report" in call:
        return _normalised((files / "report" / "index.html").read_text(encoding="utf-8"), spelling)
    return _normalised(result.stdout, spelling)


@pytest.mark.parametrize("key", sorted(CALLS), ids=lambda key: " ".join((*key[0], key[1])))
def test_each_spelling_gives_the_same_output(cli, files, key):
    outputs = {spelling: _output(cli, files, CALLS[key], spelling) for spelling in SPELLINGS}
    # The output names the measure as given (trec_eval's family spelling, in some, by trec_eval's name ndcg_cut_3,
    # as evaluate has always named it): the same once the names are set aside.
    reference = outputs["nDCG@3"]
    assert "MEASURE" in reference or key[1] == "plot_measure"
    for spelling in SPELLINGS[1:]:
        assert outputs[spelling] == reference, spelling


def test_the_drop_in_takes_trec_eval_s_own_spelling(cli, files):
    assert cli("trec_eval", "-m", "ndcg_cut.3", "q.qrel", "a.run").exit_code == 0
    for spelling in ("nDCG@3", "ndcg_cut_3"):
        result = cli("trec_eval", "-m", spelling, "q.qrel", "a.run")
        assert result.exit_code == 1 and "(trec_eval: illegal measure)" in result.stderr


@pytest.mark.parametrize("key", [(("agreement",), "measure"), (("analyze", "loro"), "measure")],
                         ids=["agreement", "analyze loro"])
def test_a_command_ranking_by_one_measure_refuses_a_second(cli, files, key):
    # `agreement --runs ... -m AP -m P@5` ranked by P@5 in silence (click keeps the last of a single option).
    call = [part.format(m="AP") for part in CALLS[key]]
    result = cli(*call, "-m", "P@5")
    assert result.exit_code == 2 and result.stdout == ""
    assert "the runs are ranked by one measure, 2 given (AP, P@5): give one" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("given, meant", [("Vital-Score", "vital_score"), ("STRICT_ALL", "strict_all"),
                                          ("vital_scor", "vital_score"), ("nugget-recall", "nugget_recall"),
                                          ("nuget_recall", "nugget_recall")])
def test_nuggets_score_names_its_own_measures_and_a_near_one(cli, tmp_path, given, meant):
    """nuggets score's -m names nugget scores (nuggetizer's, and iKAT's nugget_recall), not trec_eval measures:
    its own names only, and "did you mean" for one that differs by case, separators or a typo."""
    (tmp_path / "a.jsonl").write_text('{"qid": "t1", "query": "q", "run_id": "r", "answer_text": "a", "nuggets": '
                                      '[{"text": "n", "importance": "vital", "assignment": "support"}]}\n')
    result = cli("nuggets", "score", tmp_path / "a.jsonl", "-m", given)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"unknown nugget measure {given!r}; did you mean {meant}? use one of strict_vital_score" in result.stderr
    assert cli("nuggets", "score", tmp_path / "a.jsonl", "-m", meant).exit_code == 0
    far = cli("nuggets", "score", tmp_path / "a.jsonl", "-m", "nDCG@3")
    assert far.exit_code == 2 and "did you mean" not in far.stderr
    assert "trec_eval's measures are evaluate's" in far.stderr
