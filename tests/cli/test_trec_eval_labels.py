"""Labels below 0 and large labels: trec_eval's numbers where it gives numbers, one line where it fails.

trec_eval 9.0.8 reads a label below 0 as "in the pool but unjudged" (form_res_rels.c): never
relevant, no gain, '.' in relstring, dropped by -J, counted apart by bpref and infAP. A topic whose
labels are all below 0 it cannot evaluate, and large labels cost it time and memory (and crash it
from 2^30): castregin refuses those in one line. pytrec_eval, which castregin used to call for the
measures its engine lacks, crashed (exit 139) or hung on them, before any message.

The oracle is the trec_eval binary: its outputs on random qrels with such labels are kept in
tests/cli/data/trec_eval (written by trec_eval_oracle.py), and compared live where it is at hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trec_eval_oracle import (
    LARGE_SEEDS,
    NEGATIVE_SEEDS,
    kept_output,
    label_cases,
    large_pair,
    negative_pair,
    run_binary,
)

from castregin import formats
from castregin.errors import InputError
from castregin.evaluation import plain
from castregin.evaluation import small as small_module
from castregin.evaluation.evaluate import evaluate_file_rows, evaluate_rows
from castregin.evaluation.measures import parse_measures
from castregin.render.trec import trec_eval_value

REPO = Path(__file__).resolve().parents[2]
#: The engine's measures, named as trec_eval prints them (the kept outputs' names).
ENGINE_MEASURES = ["P_5", "P_10", "recall_10", "map", "recip_rank", "Rprec", "ndcg", "ndcg_cut_5", "ndcg_cut_10",
                   "success_1"]


def parse_kept(text: bytes) -> dict[tuple[str, str], str]:
    """``{(measure, query): value as printed}`` of a trec_eval output."""
    out = {}
    for line in text.decode().splitlines():
        name, query, value = line.split("\t")
        out[name.strip(), query] = value
    return out


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("labels")
    return {("negative", seed): negative_pair(seed, directory) for seed in NEGATIVE_SEEDS} | {
        ("large", seed): large_pair(seed, directory) for seed in LARGE_SEEDS}


# --- castregin trec_eval ---------------------------------------------------------------------------------------


def test_negative_labels_print_what_trec_eval_prints(tmp_path, cli):
    checked = 0
    for name, options, qrels, run in label_cases(tmp_path):
        if name.startswith("negative"):
            result = cli("trec_eval", *options.split(), qrels, run)
            assert result.exit_code == 0, result.stderr
            assert result.stdout_bytes == kept_output(name), (name, options)
            checked += 1
    assert checked == len(NEGATIVE_SEEDS) * 6


def test_kept_label_outputs_are_the_binarys(tmp_path, trec_eval_binary):
    for name, options, qrels, run in label_cases(tmp_path):
        assert run_binary(trec_eval_binary, options, qrels, run) == kept_output(name), name


def test_relstring_shows_a_label_below_zero_as_a_dot_and_J_drops_it(tmp_path, cli):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("t 0 a 2\nt 0 b -1\nt 0 c 0\n")
    run.write_text("t Q0 a 1 0.9 r\nt Q0 b 2 0.8 r\nt Q0 x 3 0.7 r\nt Q0 c 4 0.6 r\n")
    # trec_eval 9.0.8 prints '2.-0' and, with -J, '20' (checked with its binary).
    assert cli("trec_eval", "-q", "-m", "relstring", qrels, run).stdout == "relstring             \tt\t'2.-0'\n"
    assert cli("trec_eval", "-q", "-J", "-m", "relstring", qrels, run).stdout == "relstring             \tt\t'20'\n"


def test_large_labels_are_refused_by_trec_evals_rules(pairs, cli):
    qrels, run = pairs["large", 0]
    result = cli("trec_eval", "-m", "map", qrels, run)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "is above 1000" in result.stderr and str(qrels) in result.stderr


def test_a_huge_level_is_read_as_trec_eval_reads_it(tmp_path, cli):
    """-l 99999999999999999999 was a TypeError traceback. trec_eval's atol makes it C's largest long:
    nothing is relevant (P_5 0.0000, as the binary prints), and bpref crashes it: refused."""
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("t 0 a 1\nt 0 b 0\n")
    run.write_text("t Q0 a 1 0.9 r\nt Q0 b 2 0.8 r\n")
    result = cli("trec_eval", "-l", "99999999999999999999", "-m", "P.5", qrels, run)
    assert result.exit_code == 0 and result.stdout == "P_5                   \tall\t0.0000\n"
    result = cli("trec_eval", "-l", "99999999999999999999", qrels, run)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and "bpref" in result.stderr


# --- evaluate: the engine (streamed and plain) and trec_eval's rules --------------------------------------------


def _values(rows) -> dict[tuple[str, str], str]:
    return {(measure, turn): trec_eval_value(value) for _, _, measure, turn, value in rows if turn != "all"}


def _expected(kept: dict, measures, turns) -> dict[tuple[str, str], str]:
    return {(m, t): kept[m, t] for m in measures for t in turns}


@pytest.mark.parametrize("kind, seeds, name, level", [("negative", NEGATIVE_SEEDS, "all", 1),
                                                      ("negative", NEGATIVE_SEEDS, "l2", 2),
                                                      ("large", LARGE_SEEDS, "engine", 1)])
def test_engine_paths_equal_the_binary(pairs, monkeypatch, kind, seeds, name, level):
    """Each path of the engine (in memory, plain Python for small files, streamed) on labels below 0
    and above MAX_TREC_LABEL gives the numbers trec_eval prints."""
    measures = [m for m in ENGINE_MEASURES if level == 1 or not m.startswith(("recall", "P_10"))]
    for seed in seeds:
        qrels_path, run_path = pairs[kind, seed]
        qrels, run = formats.read_qrels(qrels_path), formats.read_run(run_path)
        kept = parse_kept(kept_output(f"{kind}{seed}_{name}.txt.gz"))
        turns = sorted(t for t in run.scores if t in qrels.labels)
        expected = _expected(kept, measures, turns)
        assert _values(evaluate_rows(run, qrels, measures, level, per_turn=True)) == expected, seed
        specs = parse_measures(measures, level)
        by_plain = plain.evaluate_run(run.scores, qrels.labels, specs)
        assert {(m, t): trec_eval_value(v[t]) for m, v in zip(measures, by_plain, strict=True)
                for t in v} == expected, seed
        monkeypatch.setattr(small_module, "SMALL_RUN_BYTES", 0)  # the streaming reader and engine
        rows = evaluate_file_rows([run_path], [(None, qrels_path)], measures=measures, rel_level=level, per_turn=True)
        assert _values(rows) == expected, seed
        monkeypatch.undo()


def test_judged_counts_a_label_below_zero_as_unjudged(pairs, monkeypatch):
    """Judged@5 = judged items among the first 5 (trec_eval -M 5: num_rel_ret + num_nonrel_judged_ret) / num_ret."""
    for seed in NEGATIVE_SEEDS:
        qrels_path, run_path = pairs["negative", seed]
        qrels, run = formats.read_qrels(qrels_path), formats.read_run(run_path)
        kept = {key: int(value) for key, value in parse_kept(kept_output(f"negative{seed}_M5.txt.gz")).items()}
        turns = sorted(t for t in run.scores if t in qrels.labels)
        expected = {t: (kept["num_rel_ret", t] + kept["num_nonrel_judged_ret", t]) / kept["num_ret", t] for t in turns}
        engine = {turn: value for _, _, _, turn, value in evaluate_rows(run, qrels, ["Judged@5"], per_turn=True)
                  if turn != "all"}
        assert engine == pytest.approx(expected, abs=1e-15)
        assert plain.evaluate_run(run.scores, qrels.labels, parse_measures(["Judged@5"]))[0] == \
            pytest.approx(expected, abs=1e-15)
        monkeypatch.setattr(small_module, "SMALL_RUN_BYTES", 0)  # the streaming reader and engine
        streamed = evaluate_file_rows([run_path], [(None, qrels_path)], measures=["Judged@5"], per_turn=True)
        assert {turn: value for _, _, _, turn, value in streamed if turn != "all"} == pytest.approx(expected, abs=1e-15)
        monkeypatch.undo()
        assert any(0 < value < 1 for value in expected.values())


def test_trec_rules_in_evaluate_equal_the_binary(pairs):
    """The measures the engine lacks (all of all_trec but runid and relstring) on labels below 0."""
    for seed in NEGATIVE_SEEDS:
        qrels_path, run_path = pairs["negative", seed]
        qrels, run = formats.read_qrels(qrels_path), formats.read_run(run_path)
        kept = parse_kept(kept_output(f"negative{seed}_all.txt.gz"))
        names = sorted({name for name, query in kept if query != "all" and name not in ("relstring", "num_q")})
        rows = evaluate_rows(run, qrels, names, 1, per_turn=True)
        got = {(m, t): (str(int(v)) if m.startswith("num_") else trec_eval_value(v)) for _, _, m, t, v in rows
               if t != "all"}
        assert got == {key: value for key, value in kept.items() if key[0] in names and key[1] != "all"}, seed


def test_evaluate_refuses_trec_rules_on_large_labels_and_takes_them_in_the_engine(pairs):
    qrels, run = (formats.read_qrels(p) if i == 0 else formats.read_run(p) for i, p in enumerate(pairs["large", 1]))
    with pytest.raises(InputError, match="is above 1000"):
        evaluate_rows(run, qrels, ["bpref"], 1)
    assert evaluate_rows(run, qrels, ["nDCG@5"], 1)


# --- what crashed or hung pytrec_eval, each refused in one line ---------------------------------------------------

NEGATIVE_ONLY = "1 0 d1 -1\n1 0 d2 -2\n"
RUN = "1 Q0 d1 1 0.9 r\n1 Q0 d3 2 0.5 r\n"


def _castregin(*args, timeout=120) -> subprocess.CompletedProcess:
    # A subprocess: before the fix these crashed the interpreter (exit 139) or never ended.
    return subprocess.run([sys.executable, "-m", "castregin", *map(str, args)], capture_output=True, text=True,
                          check=False, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=timeout)


@pytest.fixture
def negative_only(tmp_path):
    qrels, run = tmp_path / "neg.qrel", tmp_path / "r.run"
    qrels.write_text(NEGATIVE_ONLY)
    run.write_text(RUN)
    return qrels, run


@pytest.mark.parametrize("command", ["evaluate", "trec_eval"])
def test_a_topic_labelled_only_below_zero_is_refused(negative_only, command):
    qrels, run = negative_only
    args = ["evaluate", run, "--qrels", qrels, "-m", "all_trec"] if command == "evaluate" else ["trec_eval", qrels, run]
    done = _castregin(*args)
    assert done.returncode == 1, done
    assert done.stderr.count("\n") == 1 and "topic 1: every label is negative" in done.stderr
    assert str(qrels) in done.stderr and done.stdout == ""


def test_each_measure_that_hung_or_crashed_is_refused(negative_only, tmp_path):
    """bpref, infAP, gm_map, utility, iprec_at_recall, Rprec_mult, ndcg_rel hung; G, Rndcg crashed; a label
    of 2^31 crashed all_trec; bpref crashed at --rel-level 100000000. One process tries them all."""
    qrels, run = negative_only
    large = tmp_path / "large.qrel"
    large.write_text("1 0 d1 2147483648\n1 0 d2 0\n")
    fine = tmp_path / "fine.qrel"
    fine.write_text("1 0 d1 1\n1 0 d2 0\n")
    script = textwrap.dedent(f"""
        from castregin import formats
        from castregin.errors import InputError
        from castregin.evaluation.evaluate import evaluate_rows
        run = formats.read_run({str(run)!r})
        cases = [(m, {str(qrels)!r}, 1) for m in
                 ["bpref", "infAP", "gm_map", "utility", "iprec_at_recall", "Rprec_mult", "ndcg_rel", "G", "Rndcg"]]
        cases += [("all_trec", {str(large)!r}, 1), ("bpref", {str(fine)!r}, 100000000)]
        for measure, path, level in cases:
            try:
                evaluate_rows(run, formats.read_qrels(path), [measure], level)
            except InputError as error:
                print(measure, "refused:", error)
            else:
                print(measure, "NOT REFUSED")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 0, done
    lines = done.stdout.splitlines()
    assert len(lines) == 11 and all(" refused: " in line for line in lines), done.stdout
    assert all("every label is negative" in line for line in lines[:9])
    assert "label 2147483648 is above 1000" in lines[9] and "relevance level 100000000" in lines[10]


def test_mixed_labels_give_the_binarys_numbers(tmp_path, cli):
    """Labels below 0 beside others: numbers, as trec_eval gives them (the binary's output, by hand)."""
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 d1 -1\n1 0 d2 -2\n1 0 d3 1\n1 0 d4 0\n")
    run.write_text("1 Q0 d1 1 0.9 r\n1 Q0 d2 2 0.8 r\n1 Q0 d4 3 0.7 r\n1 Q0 d3 4 0.6 r\n")
    result = cli("trec_eval", "-m", "bpref", "-m", "infAP", "-m", "map", "-m", "num_nonrel_judged_ret", qrels, run)
    # trec_eval 9.0.8: map 0.2500, bpref 0.0000, infAP 0.2500, num_nonrel_judged_ret 1.
    assert result.stdout == ("map                   \tall\t0.2500\nbpref                 \tall\t0.0000\n"
                             "infAP                 \tall\t0.2500\nnum_nonrel_judged_ret \tall\t1\n")


def test_two_evaluations_in_one_process_do_not_share_a_topic_named_no_query():
    """pytrec_eval's C code caches the last topic in static variables and leaves the name "no_query" there
    between evaluations: a topic of that name in a later evaluation got the earlier one's counts (map 1.5,
    num_rel 2). trec_eval 9.0.8 gives map 0.8333, num_rel 2, bpref 0.5000, then map 0.5000, num_rel 1,
    bpref 1.0000."""
    from castregin import Qrels, Run

    first = evaluate_rows(Run("r", {"no_query": {"a": 0.9, "b": 0.8, "c": 0.1}}),
                          Qrels({"no_query": {"a": 1, "b": 0, "c": 1}}, "q1"), ["map", "num_rel", "bpref"], 1,
                          per_turn=True)
    second = evaluate_rows(Run("r", {"no_query": {"y": 0.9, "x": 0.1}}), Qrels({"no_query": {"x": 1}}, "q2"),
                           ["map", "num_rel", "bpref"], 1, per_turn=True)
    assert _values(first) == {("map", "no_query"): "0.8333", ("num_rel", "no_query"): "2.0000",
                              ("bpref", "no_query"): "0.5000"}
    assert _values(second) == {("map", "no_query"): "0.5000", ("num_rel", "no_query"): "1.0000",
                               ("bpref", "no_query"): "1.0000"}
