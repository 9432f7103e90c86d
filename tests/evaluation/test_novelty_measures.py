"""gdeval's and ndeval's measures in castregin's registry against the originals' kept outputs, and on CAsT 2022.

The oracles are gdeval.pl's and ndeval.c's outputs on the random cases of tests/cli/gdeval_ndeval_oracle.py
(printed to 5 and 6 decimals: castregin's values must round to them), and on CAsT 2022 the live
originals (``$CASTREGIN_GDEVAL``, ``$CASTREGIN_NDEVAL``) on the turns mapped to numbers, else the kept
digests' drop-in outputs (tests/cli/test_gdeval_ndeval.py proves them the originals').
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gdeval_ndeval_oracle import COLUMN, measure_cases

from castregin.evaluation.evaluate import evaluate_rows
from castregin.formats import read_run
from castregin.formats.diversity import parse_diversity_qrels, read_diversity_qrels
from castregin.formats.trec import parse_run

#: Random runs and qrels share few turns, or none, by design: the coverage warnings they raise are the subject of
#: tests/evaluation/test_coverage.py, not of these comparisons of numbers.
pytestmark = pytest.mark.filterwarnings("ignore::castregin.errors.CoverageWarning")


def check_against_originals(definition_name: str, by_rank: bool = False, limit: int | None = None,
                            at1: bool = False) -> int:
    """Every kept case of the measure's original (or the first ``limit``; ``at1``: the patched ndeval's @1): per
    topic, and the mean where the original averages the same turns. Returns the number of values compared."""
    gdeval = definition_name in ("gdeval_nDCG", "ERR")
    places = 5 if gdeval else 6
    by_case: dict[tuple[str, str], list] = {}
    for measure, qrels_text, run_text, values, mean in measure_cases(definition_name, by_rank, limit, at1):
        by_case.setdefault((qrels_text, run_text), []).append((measure, values, mean))
    compared = 0
    for (qrels_text, run_text), wanted in by_case.items():
        qrels = parse_diversity_qrels(qrels_text, "q", "q")
        rows = evaluate_rows(parse_run(run_text.encode(), "r"), qrels, [m for m, _, _ in wanted], per_turn=True)
        for measure, values, mean in wanted:
            got = {turn: value for _, _, name, turn, value in rows if name == measure and turn != "all"}
            for topic, want in values.items():
                if topic not in got:  # ndeval prints 0s for a run topic the qrels lack; castregin leaves it out
                    assert want == 0.0 and topic not in qrels.labels, (measure, topic)
                    continue
                if math.isnan(want):  # ndeval's nNRBP where nothing is relevant; castregin's is 0
                    assert got[topic] == 0.0
                    continue
                assert f"{got[topic]:.{places}f}" == f"{want:.{places}f}", (measure, topic, got[topic], want)
                compared += 1
            # gdeval prints only turns with a positive label; castregin gives the others 0.
            assert all(got[t] == 0.0 for t in set(got) - set(values)), measure
            if mean is not None and not math.isnan(mean):
                shown = [got[t] for t in values if t in got]
                assert f"{sum(shown) / len(shown) if shown else 0.0:.{places}f}" == f"{mean:.{places}f}", measure
    return compared


@pytest.mark.parametrize("definition_name", sorted(COLUMN))
def test_measure_equals_the_original(definition_name):
    assert check_against_originals(definition_name) > 100


@pytest.mark.parametrize("definition_name", sorted(set(COLUMN) - {"gdeval_nDCG", "ERR"}))
def test_ndeval_measure_in_ndevals_rank_order(definition_name):
    """order='rank' ranks by the run's rank column, as ndeval does by default (the runs' scores are random)."""
    assert check_against_originals(definition_name, by_rank=True) > 100


@pytest.mark.parametrize("definition_name", ["alpha_DCG", "ERR_IA", "alpha_nDCG", "nERR_IA", "P_IA", "StRecall"])
def test_ndeval_measure_at_1_equals_the_patched_original(definition_name):
    """@1, which ndeval does not print: ndeval.c patched to print index 0 of its arrays, normalised as every other
    index (tests/cli/gdeval_ndeval_oracle.py). alpha_DCG@1 and ERR_IA@1 were the gain at rank 1 unnormalised."""
    assert check_against_originals(definition_name, at1=True) > 100


def test_rank_order_and_options_change_the_numbers(tmp_path):
    """The cases differ where they should: alpha changes alpha-nDCG (else the comparisons above prove little)."""
    (tmp_path / "q").write_text("1 1 a 1\n1 2 a 1\n1 2 b 1\n1 3 c 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n")
    qrels, run = read_diversity_qrels(tmp_path / "q"), read_run(tmp_path / "r")
    half, third = (evaluate_rows(run, qrels, [name])[-1][-1] for name in ("alpha_nDCG@2", "alpha_nDCG(alpha=0.3)@2"))
    assert half != third


def _cast_values(text: str) -> dict[str, list[str]]:
    lines = [line.split(",") for line in text.splitlines()]
    return {line[1]: line[2:] for line in lines[1:]}


def test_evaluate_cast2022_without_mapping(cast2022, run_paths, cli, tmp_path):
    """`evaluate -m ERR@20 -m alpha_nDCG@20` on CAsT's own turn ids equals gdeval and ndeval -traditional on the
    turns mapped to numbers: the live originals' outputs, else the drop-in's proven the originals' bytes by the
    SHA-256 of the originals' outputs kept in tests/cli/data/gdeval_ndeval/cast2022.json."""
    import hashlib

    from gdeval_ndeval_oracle import live_command, run_original
    from test_gdeval_ndeval import CAST_DIGESTS, cast_files

    for run_path in run_paths:
        files = cast_files(cast2022, run_path, tmp_path)
        number = files["numbers"]
        for qrels_name in ("graded", "diversity"):
            result = cli("evaluate", files["run"], "--qrels", files[qrels_name], "-m", "ERR@20", "-m",
                         "alpha_nDCG@20", "--per-turn", "--format", "json", "-q")
            assert result.exit_code == 0, result.stderr
            rows = json.loads(result.stdout)
            mapped_qrels = files[f"mapped_{qrels_name}"]
            tools = (("gdeval", []), ("ndeval", ["-traditional"])) if qrels_name == "graded" else \
                (("ndeval", ["-traditional"]),)  # gdeval reads no subtopics
            outputs = {"gdeval": ""}
            for tool, options in tools:
                if live_command(tool) is not None:
                    outputs[tool] = run_original(tool, mapped_qrels, files["mapped_run"], options)
                else:  # the drop-in, whose output must be the original's, byte for byte
                    outputs[tool] = cli(tool, *options, mapped_qrels, files["mapped_run"]).stdout
                    kept = f"{tool} {'graded ' if tool == 'ndeval' and qrels_name == 'graded' else ''}{run_path.stem}"
                    assert hashlib.sha256(outputs[tool].encode()).hexdigest() == CAST_DIGESTS[kept], kept
            gdeval, ndeval = _cast_values(outputs["gdeval"]), _cast_values(outputs["ndeval"])
            at20 = outputs["ndeval"].splitlines()[0].split(",")[2:].index("alpha-nDCG@20")
            err = {r["turn"]: r["value"] for r in rows if r["measure"] == "ERR@20" and r["turn"] != "all"}
            alpha = {r["turn"]: r["value"] for r in rows if r["measure"] == "alpha_nDCG@20" and r["turn"] != "all"}
            assert len(err) == len(alpha) == 205 or run_path.stem.startswith("T5")  # T5 runs leave turns out
            for turn, value in alpha.items():
                assert f"{value:.6f}" == ndeval[number[turn]][at20], (turn, qrels_name)
            mean = next(r["value"] for r in rows if r["measure"] == "alpha_nDCG@20" and r["turn"] == "all")
            assert f"{mean:.6f}" == ndeval["amean"][at20]
            if qrels_name == "graded":
                printed = {turn: value for turn, value in err.items() if number[turn] in gdeval}
                for turn, value in printed.items():
                    assert f"{value:.5f}" == gdeval[number[turn]][1], turn
                # CAsT has 2 turns without a relevant item: gdeval skips them, castregin gives them 0 (and its mean
                # over every turn is then not gdeval's amean).
                assert 0 < len(err) - len(printed) <= 2
                assert all(err[t] == 0.0 for t in set(err) - set(printed))
                assert f"{sum(printed.values()) / len(printed):.5f}" == gdeval["amean"][1]


def check_rbp(definition_name: str) -> int:
    """RBP and its residual against trectools' kept values (tests/evaluation/rbp_oracle.py); returns the count."""
    import json
    import lzma

    from rbp_oracle import KEPT, rbp_case

    kept = json.loads(lzma.decompress(KEPT.read_bytes()))
    compared = 0
    for seed, values in kept.items():
        qrels_text, run_text, k, p = rbp_case(int(seed))
        measure = f"{definition_name}(p={p},rel=1)@{k}"
        rows = evaluate_rows(parse_run(run_text.encode(), "r"), parse_diversity_qrels(qrels_text, "q", "q"), [measure],
                             per_turn=True)
        got = {turn: value for *_, turn, value in rows if turn != "all"}
        for topic, (rbp, residual) in values.items():
            want = rbp if definition_name == "RBP" else residual
            if want is not None:
                assert got[topic] == pytest.approx(want, abs=1e-12), (seed, topic)
                compared += 1
    return compared


@pytest.mark.parametrize("definition_name", ["RBP", "RBP_residual"])
def test_rbp_equals_trectools(definition_name):
    assert check_rbp(definition_name) > 100


def test_rbp_counts_labels_below_0_as_unjudged_and_ranks_ties_as_trec_eval(tmp_path):
    """castregin's rules where trectools' differ (hence not in its cases): a label below 0 is unjudged (residual),
    tied scores rank by item id descending."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b -1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 0.5 r\n1 Q0 b 2 0.5 r\n")
    qrels, run = read_diversity_qrels(tmp_path / "q"), read_run(tmp_path / "r")
    rbp, residual = (evaluate_rows(run, qrels, [name])[-1][-1] for name in ("RBP(p=0.5,rel=1)", "RBP_residual(p=0.5)"))
    assert (rbp, residual) == (0.25, 0.5 + 0.25)  # b first (ties: ids descending), unjudged: 0.5; past 2: 0.25


def test_report_and_compare_read_diversity_qrels(cli, tmp_path):
    """report's leaderboard shows alpha_nDCG@20 as ndeval -traditional's amean (a kept case with several subtopics
    per item, which the ordinary qrels reader refuses)."""
    from gdeval_ndeval_oracle import cases, kept_outputs

    name = next(n for n, case in cases().items() if case[0] == "ndeval" and case[3] == ["-traditional"]
                and not math.isnan(float(kept_outputs()[n].splitlines()[-1].split(",")[13])))
    _, qrels_text, run_text, _ = cases()[name]
    (tmp_path / "q").write_text(qrels_text)
    (tmp_path / "r").write_text(run_text)
    amean = float(kept_outputs()[name].splitlines()[-1].split(",")[2 + 11])  # alpha-nDCG@20
    result = cli("report", tmp_path / "r", "--qrels", tmp_path / "q", "--out", tmp_path / "rep", "-m", "alpha_nDCG@20",
                 "--ci-samples", "10", "--permutations", "10")
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    board = page[page.index('id="leaderboard"'):page.index('id="significance"')]
    assert f">{amean:.4f}<" in board or f"<strong>{amean:.4f}</strong>" in board
    compared = cli("compare", tmp_path / "r", tmp_path / "r", "--qrels", tmp_path / "q", "-m", "alpha_nDCG@20")
    assert "judged twice" not in compared.stderr


def test_the_api_reads_a_qrels_path_as_diversity_qrels_for_ndevals_measures(tmp_path):
    """castregin.api given paths: alpha_nDCG@20 is ndeval -traditional's amean on a kept case with several
    subtopics per item (which the ordinary qrels reader refuses), in calc_aggregate, iter_calc and evaluate."""
    from gdeval_ndeval_oracle import cases, kept_outputs

    from castregin import api

    name = next(n for n, case in cases().items() if case[0] == "ndeval" and case[3] == ["-traditional"]
                and not math.isnan(float(kept_outputs()[n].splitlines()[-1].split(",")[13])))
    _, qrels_text, run_text, _ = cases()[name]
    (tmp_path / "q").write_text(qrels_text)
    (tmp_path / "r").write_text(run_text)
    amean = kept_outputs()[name].splitlines()[-1].split(",")[2 + 11]  # alpha-nDCG@20, as ndeval prints it
    value = api.calc_aggregate(["alpha_nDCG@20"], str(tmp_path / "q"), str(tmp_path / "r"))["alpha_nDCG@20"]
    assert f"{value:.6f}" == amean
    per_turn = [m.value for m in api.iter_calc(["alpha_nDCG@20"], tmp_path / "q", tmp_path / "r")]
    assert f"{math.fsum(per_turn) / len(per_turn):.6f}" == amean
    frame = api.evaluate(str(tmp_path / "r"), [str(tmp_path / "q")], ["alpha_nDCG@20"])
    mean = frame[(frame["turn"] == "all") & (frame["measure"] == "alpha_nDCG@20")]["value"]
    assert f"{mean.iloc[0]:.6f}" == amean


def test_a_topic_too_large_for_the_greedy_ideal_is_refused(monkeypatch):
    from castregin.errors import InputError
    from castregin.evaluation import ndeval

    monkeypatch.setattr(ndeval, "MAX_IDEAL_STEPS", 5)
    topic = ndeval.judgments({"a": {"1": 1}, "b": {"2": 1}, "c": {"1": 1, "2": 1}})
    with pytest.raises(InputError, match="MAX_IDEAL_STEPS"):
        ndeval.ideal_ranking(topic, 0.5)
    monkeypatch.setattr(ndeval, "MAX_IDEAL_STEPS", 9)
    assert ndeval.ideal_ranking(topic, 0.5) == [(0, 1), (1,), (0,)]  # c, then b before a (ties: larger id)


def test_turns_keep_the_subtopics(cli, tmp_path):
    """evaluate --turns keeps a diversity qrels' labels per subtopic (a subset that dropped them would read each
    item's largest label as one subtopic): alpha-nDCG@20 of the kept turn is still ndeval's."""
    from gdeval_ndeval_oracle import cases, kept_outputs

    for name, case in cases().items():
        tool, qrels_text, _, options = case
        rows = _cast_values(kept_outputs()[name])
        qrels = parse_diversity_qrels(qrels_text, "q", "q")
        several = [t for t, items in qrels.labels.items() if t in rows
                   and any(sum(label > 0 for label in per.values()) > 1 for per in items.subtopics.values())]
        if tool == "ndeval" and options == ["-traditional"] and several:
            break
    (tmp_path / "q").write_text(qrels_text)
    (tmp_path / "r").write_text(case[2])
    (tmp_path / "t").write_text(several[0] + "\n")
    result = cli("evaluate", tmp_path / "r", "--qrels", tmp_path / "q", "--turns", tmp_path / "t", "-m",
                 "alpha_nDCG@20", "--format", "json", "-q")
    assert result.exit_code == 0, result.stderr
    value = next(row["value"] for row in json.loads(result.stdout)
                 if row["turn"] == "all" and row["measure"] == "alpha_nDCG@20")
    assert f"{value:.6f}" == rows[several[0]][11]  # alpha-nDCG@20


def test_the_novelty_measures_rank_at_the_score_precision_asked():
    """score_precision='float' ranks as the 32-bit floats would: the same values as the double ranking (the
    one the kept gdeval/ndeval outputs check) of the scores rounded to 32 bits first; ties as floats only
    break by item id, as trec_eval's measures do."""
    import random
    import struct

    from castregin import api

    rng = random.Random(5)
    qrels = {f"t{t}": {f"d{i}": rng.choice([0, 1, 2, 3]) for i in range(8)} for t in range(6)}
    run = {turn: {item: 0.81234567 + rng.choice([0, 1e-8, 2e-8]) for item in items} for turn, items in qrels.items()}
    rounded = {turn: {item: struct.unpack("f", struct.pack("f", score))[0] for item, score in scores.items()}
               for turn, scores in run.items()}
    measures = ["ERR@3", "nDCG(dcg='exp-log2')@3", "alpha_nDCG@3", "P_IA@3", "RBP(p=0.8)@3", "P@1"]
    as_floats = api.calc_aggregate(measures, qrels, run, rel_level=1, score_precision="float")
    assert as_floats == api.calc_aggregate(measures, qrels, rounded, rel_level=1)
    assert as_floats != api.calc_aggregate(measures, qrels, run, rel_level=1)


def test_a_cutoff_beyond_the_bound_of_ndevals_measures_is_refused_in_one_line(cli, tmp_path):
    from castregin.limits import MAX_DIVERSITY_CUTOFF

    (tmp_path / "q").write_text("t 0 a 1\n")
    (tmp_path / "r").write_text("t Q0 a 1 1.0 x\n")
    result = cli("evaluate", tmp_path / "r", "--qrels", tmp_path / "q", "-m", f"alpha_nDCG@{MAX_DIVERSITY_CUTOFF + 1}")
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1
    assert f"give one up to {MAX_DIVERSITY_CUTOFF:,}" in result.stderr


def test_the_ideal_ranking_is_made_once_per_turn_and_alpha(monkeypatch, tmp_path):
    """Three cutoffs and two measures of one alpha: one ideal ranking per turn; ndeval -baseline: one per topic."""
    from castregin.evaluation import ndeval

    made = []
    original = ndeval.ideal_ranking
    monkeypatch.setattr(ndeval, "ideal_ranking", lambda topic, alpha: made.append(alpha) or original(topic, alpha))
    qrels = parse_diversity_qrels("1 1 a 1\n1 2 b 1\n2 1 c 1\n", "q", "q")
    run = parse_run(b"1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n2 Q0 c 1 1 r\n", "r")
    evaluate_rows(run, qrels, ["alpha_nDCG@5", "alpha_nDCG@10", "ERR_IA@20", "alpha_nDCG(alpha=0.3)@5"])
    assert sorted(made) == [0.3, 0.3, 0.5, 0.5]
    made.clear()
    (tmp_path / "q").write_text("1 1 a 1\n1 2 b 1\n2 1 c 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n2 Q0 c 1 1 r\n")
    from castregin.formats import diversity

    lines = diversity.ndeval_run(tmp_path / "r", False)
    ndeval.ndeval_report(diversity.ndeval_qrels(tmp_path / "q", False), lines, baseline=lines, risk_alpha=1.0)
    assert len(made) == 2


def test_the_qrels_reader_follows_the_measures(tmp_path):
    """One rule for evaluate, compare/report and the API: a diversity qrels when an ndeval measure is asked."""
    from castregin.evaluation.measures import parse_measures
    from castregin.formats.diversity import diversity_reader

    assert diversity_reader(parse_measures(["P@1", "alpha_nDCG@5"], 1)) is read_diversity_qrels
    assert diversity_reader(parse_measures(["P@1", "ERR@5"], 1)) is None
    assert diversity_reader([]) is None
