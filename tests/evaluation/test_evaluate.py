"""Evaluation semantics on hand-made runs, checked against pytrec_eval or worked out by hand."""

from __future__ import annotations

import json

import pytest
import pytrec_eval

from castregin import InputError, Qrels, Run
from castregin.evaluation.evaluate import evaluate

#: Hand-made runs of a turn or two against a qrels of three: the coverage warnings they raise are the subject of
#: tests/evaluation/test_coverage.py, not of these semantics.
pytestmark = pytest.mark.filterwarnings("ignore::castregin.errors.CoverageWarning")


def _mean(results, measure="P@1"):
    """The ``all`` value of one measure in evaluate's rows."""
    return results[(results["measure"] == measure) & (results["turn"] == "all")]["value"].item()


def _run(scores, tag="r"):
    return Run(tag, scores, {t: {i: k for k, i in enumerate(items, 1)} for t, items in scores.items()})


QRELS = Qrels({"t1": {"Q1": 2, "Q2": 0, "Q3": 1}, "t2": {"Q1": 0, "Q5": 3}, "t3": {"Q9": 1}}, name="q")


def test_ties_are_broken_by_item_id_descending_like_trec_eval():
    # Q2 (label 0) sorts before Q1 (label 2) on a tie: P@1 is 0, as trec_eval gives.
    run = _run({"t1": {"Q1": 1.0, "Q2": 1.0}})
    assert evaluate(run, QRELS, ["P@1", "RR"], per_turn=True).query("turn == 't1'")["value"].tolist() == [0.0, 0.5]
    # (num_q has no per-turn value: the rows of t1 are P@1's and RR's)
    expected = pytrec_eval.RelevanceEvaluator(QRELS.labels, {"P_1"}, relevance_level=2).evaluate(run.scores)
    assert expected["t1"]["P_1"] == 0.0


def test_rank_column_is_ignored():
    run = Run("r", {"t1": {"Q2": 0.1, "Q1": 0.9}}, {"t1": {"Q2": 1, "Q1": 2}})
    assert _mean(evaluate(run, QRELS, ["P@1"])) == 1.0


def test_intersection_by_default_and_complete():
    run = _run({"t1": {"Q1": 2.0}, "t4": {"Q1": 1.0}})  # t4 is not judged, t2 and t3 missing
    assert _mean(evaluate(run, QRELS, ["P@1"])) == 1.0
    assert _mean(evaluate(run, QRELS, ["P@1"], complete=True)) == pytest.approx(1 / 3)
    per_turn = evaluate(run, QRELS, ["P@1"], complete=True, per_turn=True).query("measure == 'P@1'")
    assert dict(zip(per_turn["turn"], per_turn["value"], strict=True)) == {"all": pytest.approx(1 / 3), "t1": 1.0,
                                                              "t2": 0.0, "t3": 0.0}
    counts = evaluate(run, QRELS, ["P@1"], complete=True)
    assert _mean(counts, "num_q") == 3 and _mean(evaluate(run, QRELS, ["P@1"]), "num_q") == 1


def test_turns_without_relevant_items_still_count():
    run = _run({"t1": {"Q1": 2.0}, "t3": {"Q9": 1.0}})  # t3 has only a label 1: nothing relevant at level 2
    assert _mean(evaluate(run, QRELS, ["P@1"])) == 0.5
    # nDCG uses grade 1 as a gain; it does not depend on the relevance level
    ndcg = evaluate(run, QRELS, ["nDCG@3"], per_turn=True).query("measure == 'nDCG@3'")
    assert dict(zip(ndcg["turn"], ndcg["value"], strict=True))["t3"] == 1.0


def test_rel_level_applies_to_binary_measures_only():
    run = _run({"t1": {"Q3": 3.0, "Q1": 2.0}})
    at2 = evaluate(run, QRELS, ["P@1", "nDCG@3"], rel_level=2)
    at1 = evaluate(run, QRELS, ["P@1", "nDCG@3"], rel_level=1)
    assert _mean(at2) == 0.0 and _mean(at1) == 1.0
    assert _mean(at2, "nDCG@3") == _mean(at1, "nDCG@3")


def test_trec_eval_names_equal_ir_measures_names():
    run = _run({"t1": {"Q3": 3.0, "Q1": 2.0, "Q2": 1.0}, "t2": {"Q5": 1.0}})
    pairs = [("P@1", "P_1"), ("nDCG@3", "ndcg_cut_3"), ("AP", "map"), ("RR", "recip_rank"), ("R@10", "recall_10")]
    a = evaluate(run, QRELS, [p[0] for p in pairs])["value"].tolist()
    b = evaluate(run, QRELS, [p[1] for p in pairs])["value"].tolist()
    assert len(a) == len(pairs) + 1  # and num_q
    assert a == b


def test_turns_restrict_every_qrels():
    run = _run({"t1": {"Q1": 2.0}, "t2": {"Q1": 1.0}})
    assert _mean(evaluate(run, QRELS, ["P@1"], turns=["t2"])) == 0.0


def test_unknown_measure_is_an_input_error():
    with pytest.raises(InputError, match="unknown measure 'P@@1'"):
        evaluate(_run({"t1": {"Q1": 1.0}}), QRELS, ["P@@1"])



@pytest.mark.parametrize(("name", "meant"), [
    ("ndcg@5", "nDCG@5"), ("NDCG_cut-3", "ndcg_cut_3"), ("p_5", "P_5"), ("p@5", "P@5"), ("nDCG5", "nDCG@5"),
    ("err@20", "ERR@20"), ("alpha-nDCG@20", "alpha_nDCG@20"), ("recip-rank", "recip_rank"), ("All-Trec", "all_trec"),
    ("map@10", "AP@10"),  # trec_eval's map has no cutoff: ir_measures' AP@10 is its map_cut_10
])
def test_a_name_misspelt_in_case_or_separators_gets_the_known_one(name, meant):
    with pytest.raises(InputError) as refused:
        evaluate(_run({"t1": {"Q1": 1.0}}), QRELS, [name])
    assert str(refused.value).startswith(f"unknown measure {name!r}; did you mean {meant}? ")
    # What it suggests is a name castregin reads.
    assert not evaluate(_run({"t1": {"Q1": 1.0}}), QRELS, [meant]).empty


@pytest.mark.parametrize("name", ["nope", "P@@1", "mrr"])
def test_a_name_close_to_none_gets_no_suggestion(name):
    with pytest.raises(InputError, match=f"unknown measure '{name}'; use ir_measures names"):
        evaluate(_run({"t1": {"Q1": 1.0}}), QRELS, [name])


def test_every_registered_name_misspelt_is_found_again():
    # Each name of each measure, upper-cased with its underscores as hyphens, leads back to the same measure.
    from castregin.evaluation.measures import parse_measure, registered
    from castregin.evaluation.measures.names import suggestion

    for definition in (d for d in registered() if d.numeric):
        at = (definition.defaults or (5,))[-1] if definition.cutoffs else None
        names = [definition.value_name(at)] if definition.trec_name else []
        names += [alias.name + ("@5" if alias.cutoff else "") for alias in definition.ir_measures
                  if alias.when is None and alias.param is None]
        for name in names:
            mangled = name.upper().replace("_", "-")
            if mangled == name:
                continue
            meant = suggestion(mangled)
            assert meant is not None, name
            assert {m.definition.name for m in parse_measure(meant)} == {definition.name}, (name, meant)


def test_the_suggestion_on_the_command_line_and_in_the_api(cli, tmp_path):
    import castregin

    run, qrels = tmp_path / "a.run", tmp_path / "q.qrel"
    run.write_text("t1 Q0 Q1 1 2.0 alpha\n")
    qrels.write_text("t1 0 Q1 2\n")
    for args in (("evaluate", run, "--qrels", qrels, "-m", "ndcg@5"), ("trec_eval", "-m", "NDCG_cut.5", qrels, run)):
        result = cli(*args)
        assert result.exit_code == 1
        assert len(result.stderr.splitlines()) == 1
    assert cli("evaluate", run, "--qrels", qrels, "-m", "ndcg@5").stderr.startswith(
        "castregin: error: unknown measure 'ndcg@5'; did you mean nDCG@5? ")
    assert "illegal measure); did you mean ndcg_cut.5? " in cli("trec_eval", "-m", "NDCG_cut.5", qrels, run).stderr
    with pytest.raises(InputError, match=r"unknown measure 'ndcg@5'; did you mean nDCG@5\? "):
        castregin.calc_aggregate(["ndcg@5"], {"t1": {"Q1": 2}}, {"t1": {"Q1": 2.0}})


@pytest.fixture
def files(tmp_path):
    run = tmp_path / "a.run"
    run.write_text("t1 Q0 Q1 1 2.0 alpha\nt1 Q0 Q2 2 1.0 alpha\nt2 Q0 Q5 1 1.0 alpha\n")
    other = tmp_path / "b.run"
    other.write_text("t1 Q0 Q2 1 2.0 beta\nt2 Q0 Q1 1 1.0 beta\n")
    qrels = tmp_path / "q.qrel"
    qrels.write_text("t1 0 Q1 2\nt1 0 Q2 0\nt2 0 Q5 3\nt2 0 Q1 0\n")
    sub = tmp_path / "sub.qrel"
    sub.write_text("t2 0 Q5 3\nt2 0 Q1 0\n")
    return run, other, qrels, sub


def test_cli_json_shape_and_named_qrels(cli, files):
    run, other, qrels, sub = files
    result = cli("evaluate", run, other, "--qrels", qrels, "--qrels", f"mi={sub}", "-m", "P@1", "-m", "map",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows[0] == {"run": "alpha", "qrels": "q", "measure": "num_q", "turn": "all", "value": 2.0}
    assert rows[1] == {"run": "alpha", "qrels": "q", "measure": "P@1", "turn": "all", "value": 1.0}
    assert {(r["run"], r["qrels"], r["measure"]) for r in rows} == {
        (r, q, m) for r in ("alpha", "beta") for q in ("q", "mi") for m in ("num_q", "P@1", "map")}
    assert [r["value"] for r in rows if r["run"] == "beta" and r["measure"] == "P@1"] == [0.0, 0.0]


def test_cli_per_turn_json(cli, files):
    run, _, qrels, _ = files
    rows = json.loads(cli("evaluate", run, "--qrels", qrels, "-m", "P@1", "--per-turn", "--format", "json").stdout)
    assert [(r["measure"], r["turn"], r["value"]) for r in rows] == [
        ("num_q", "all", 2.0), ("P@1", "all", 1.0), ("P@1", "t1", 1.0), ("P@1", "t2", 1.0)]


def test_cli_table_markdown_latex_tsv(cli, files, tmp_path):
    run, other, qrels, _ = files
    table = cli("evaluate", run, other, "--qrels", qrels, "-m", "P@1").stdout
    assert table.splitlines()[0].split() == ["run", "num_q", "P@1"]
    assert table.splitlines()[2].split() == ["alpha", "2", "1.0000"]
    markdown = cli("evaluate", run, other, "--qrels", qrels, "-m", "P@1", "--format", "markdown").stdout
    assert "| alpha | 2 | **1.0000** |" in markdown and "| beta | 2 | 0.0000 |" in markdown
    latex = cli("evaluate", run, other, "--qrels", qrels, "-m", "P@1", "--format", "latex").stdout
    assert "alpha & 2 & \\textbf{1.0000} \\\\" in latex and "\\toprule" in latex
    out = tmp_path / "scores.tsv"
    assert cli("evaluate", run, "--qrels", qrels, "-m", "nDCG@3", "--format", "tsv", "-o", out).exit_code == 0
    assert out.read_text().splitlines() == ["run\tqrels\tmeasure\tturn\tvalue", "alpha\tq\tnum_q\tall\t2.0",
                                            "alpha\tq\tnDCG@3\tall\t1.0"]


def test_cli_turns_option(cli, files, tmp_path):
    run, _, qrels, _ = files
    turns = tmp_path / "turns.txt"
    turns.write_text("t2\n")
    rows = json.loads(cli("evaluate", run, "--qrels", qrels, "--turns", turns, "-m", "P@1", "--per-turn",
                          "--format", "json").stdout)
    assert [(r["measure"], r["turn"]) for r in rows] == [("num_q", "all"), ("P@1", "all"), ("P@1", "t2")]


def test_cli_unknown_measure_is_one_line(cli, files):
    run, _, qrels, _ = files
    result = cli("evaluate", run, "--qrels", qrels, "-m", "nope")
    assert result.exit_code == 1
    assert result.stderr.startswith("castregin: error: unknown measure 'nope'")
    assert len(result.stderr.splitlines()) == 1


def test_all_trec_says_that_relstring_is_left_out(cli, tmp_path):
    # --format trec is trec_eval's layout, and all_trec holds relstring: it was dropped without a word.
    (tmp_path / "q.qrel").write_text("t1 0 Q1 2\nt1 0 Q2 0\n")
    (tmp_path / "a.run").write_text("t1 Q0 Q1 1 2 a\nt1 Q0 Q2 2 1 a\n")
    for fmt, where in (("trec", " of trec_eval's layout"), ("table", "")):
        result = cli("evaluate", tmp_path / "a.run", "--qrels", tmp_path / "q.qrel", "-m", "all_trec", "-q",
                     "--format", fmt)
        assert result.exit_code == 0 and "relstring" not in result.stdout
        assert result.stderr == (f"castregin: warning: all_trec's relstring is text, not a number: evaluate leaves it "
                                 f"out{where}; `castregin trec_eval -q -m all_trec` prints it\n")
    quiet = cli("evaluate", tmp_path / "a.run", "--qrels", tmp_path / "q.qrel", "-m", "official", "--format", "trec")
    assert quiet.stderr == "" and quiet.stdout.startswith("runid ")
