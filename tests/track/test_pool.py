"""`castregin pool`: the union of each run's top items per turn, by the rank column."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from castregin.cli import main
from castregin.data import Run
from castregin.formats import read_run
from castregin.track.pool import pool_runs

BASELINES = ["bm25_baseline_mi_run", "miniLM_bert_sample_mi_run", "T5_raw_run", "T5_rewrite_run"]


def pairs(text: str) -> set[tuple[str, str]]:
    return {(f[0], f[2]) for f in (line.split() for line in text.splitlines())}


@pytest.fixture(scope="module")
def baselines(cast2022, tmp_path_factory) -> dict[str, object]:
    """The four organiser baselines converted with both banks (Q2173 kept)."""
    out = tmp_path_factory.mktemp("baselines")
    result = CliRunner().invoke(main, [
        "convert", "questions", *[str(cast2022 / f"runs/mi/{name}.json") for name in BASELINES],
        "--bank", str(cast2022 / "regin/question_bank.json"),
        "--bank", str(cast2022 / "topics/2022_mixed_initiative_question_pool.json"), "--out-dir", str(out)])
    assert result.exit_code == 0, result.output
    return {name: out / f"{name}.run" for name in BASELINES}


def test_baseline_pool_is_in_the_regin_pool_but_for_a_case_twin(cast2022, baselines, cli):
    result = cli("pool", *baselines.values())  # default: depth 1, standard output
    assert result.exit_code == 0
    ours = pairs(result.stdout)
    regin = pairs((cast2022 / "regin/question_pool_depth_1.pool").read_text())
    assert len({turn for turn, _ in ours}) == 205
    assert ("142_5-7", "Q2173") in ours & regin  # judged, and only in the official pool's bank

    # Everything the four baselines put at rank 1 was judged by CAsT-ReGIn except one pair.
    assert ours - regin == {("144_2-9", "Q5472")}
    # Why: at 144_2-9, T5_raw generated "Would you like to know how to build a hydrogen engine", which is
    # word for word Q5472. The bank holds a case twin, Q6223 "would you like ..." (lower-case w); one of
    # the bank's four groups of questions that differ only in letter case. CAsT-ReGIn judged Q6223 for
    # that turn and never Q5472, anywhere: their matching folded case (or took the other twin). SPEC
    # matching is case-sensitive, so the exact match Q5472 is the right id here, and the judgment of
    # Q6223 does not carry over.
    bank = json.loads((cast2022 / "regin/question_bank.json").read_text())
    t5_raw = json.loads((cast2022 / "runs/mi/T5_raw_run.json").read_text())
    text = next(t["questions"][0]["question"] for t in t5_raw["turns"] if t["turn_id"] == "144_2-9")
    assert text == bank["Q5472"] == "Would you like to know how to build a hydrogen engine"
    assert bank["Q6223"] == "would you like to know how to build a hydrogen engine"
    assert bank["Q6223"] != bank["Q5472"] and bank["Q6223"].lower() == bank["Q5472"].lower()
    assert ("144_2-9", "Q6223") in regin and not [p for p in regin if p[1] == "Q5472"]
    # Both twins are CAsT-ReGIn additions (above the official pool's highest id), i.e. texts that
    # participants generated, spelled once with each case.
    official = json.loads((cast2022 / "topics/2022_mixed_initiative_question_pool.json").read_text())
    assert max(q["question_id"] for q in official) == "Q4553"
    assert "Q5472" not in {q["question_id"] for q in official} and "Q6223" not in {q["question_id"] for q in official}
    # The other case twins that the T5 runs generate (Q6341 at 137_1-9, Q6475 at 149_2-5) are the very
    # ids ReGIn judged: exact matching agrees with ReGIn whenever the texts are identical.
    assert {("137_1-9", "Q6341"), ("149_2-5", "Q6475")} <= ours & regin
    case_groups = {}
    for question in bank.values():
        case_groups.setdefault(question.lower(), set()).add(question)
    assert sum(len(group) > 1 for group in case_groups.values()) == 4


def test_depth_uses_the_rank_column(tmp_path, cli):
    a = tmp_path / "a.run"
    # The rank column, not the score, decides: X has the best score but rank 3. Ties on rank: file order.
    a.write_text("t1 Q0 X 3 9.0 a\nt1 Q0 Y 1 1.0 a\nt1 Q0 Z 2 2.0 a\nt2 Q0 P 1 1 a\nt2 Q0 O 1 1 a\n")
    b = tmp_path / "b.run"
    b.write_text("t1\tQ0\tZ\t1\t0.5\tb\nt3\tQ0\tK\t1\t0.5\tb\n")
    assert cli("pool", a, b).stdout == ("t1\tQ0\tY\t1\t0.0\tdummytag\nt1\tQ0\tZ\t1\t0.0\tdummytag\n"
                                        "t2\tQ0\tP\t1\t0.0\tdummytag\nt3\tQ0\tK\t1\t0.0\tdummytag\n")
    two = cli("pool", a, b, "--depth", "2", "-o", tmp_path / "pool.txt")
    assert two.exit_code == 0 and two.stdout == ""
    assert pairs((tmp_path / "pool.txt").read_text()) == {("t1", "Y"), ("t1", "Z"), ("t2", "P"), ("t2", "O"),
                                                          ("t3", "K")}
    again = cli("pool", a, b, "--depth", "2", "-o", tmp_path / "again.txt")
    assert again.exit_code == 0
    assert (tmp_path / "again.txt").read_bytes() == (tmp_path / "pool.txt").read_bytes()


def test_pool_turns_keeps_the_listed_turns(tmp_path, cli):
    run = tmp_path / "a.run"
    # 1_1-99 is a turn no official list holds (a run converted without --turns keeps it).
    run.write_text("1_1-1 Q0 X 1 9.0 a\n1_1-99 Q0 Y 1 1.0 a\n2_1-1 Q0 Z 1 2.0 a\n1_1-98 Q0 W 1 2.0 a\n")
    turns = tmp_path / "turn_ids.json"
    turns.write_text('{"1": ["1-1", "1-2"], "2": ["1-1"]}')
    result = cli("pool", run, "--turns", turns)
    assert result.exit_code == 0
    assert result.stdout == "1_1-1\tQ0\tX\t1\t0.0\tdummytag\n2_1-1\tQ0\tZ\t1\t0.0\tdummytag\n"
    assert result.stderr == f"castregin: warning: 2 pooled turns not in --turns {turns} left out: 1_1-98, 1_1-99\n"
    # A turn list of one id a line (or a run, or a qrels) works as well.
    listed = tmp_path / "turns.txt"
    listed.write_text("2_1-1\n")
    assert cli("pool", run, "--turns", listed).stdout == "2_1-1\tQ0\tZ\t1\t0.0\tdummytag\n"
    # The turn list is an input: never the output.
    before = turns.read_bytes()
    refused = cli("pool", run, "--turns", turns, "-o", turns)
    assert refused.exit_code == 1 and "refusing to overwrite the input file" in refused.stderr
    assert turns.read_bytes() == before
    # No pooled turn listed: an error, nothing written.
    listed.write_text("9_9-9\n")
    empty = cli("pool", run, "--turns", listed, "-o", tmp_path / "pool.txt")
    assert empty.exit_code == 1 and not (tmp_path / "pool.txt").exists()
    assert empty.stderr == (f"castregin: error: none of the 4 pooled turns is in --turns {listed} (the pool's look "
                            "like '1_1-1'); nothing written\n")


def test_pool_api_and_errors(tmp_path, cli):
    run = Run("r", scores={"t": {"a": 1.0, "b": 2.0}}, ranks={"t": {"a": 2, "b": 1}})
    assert pool_runs([run], depth=1) == {"t": {"b"}}
    bad = tmp_path / "bad.run"
    bad.write_text("t Q0 a one 1.0 r\n")
    result = cli("pool", bad)
    assert result.exit_code == 1
    assert result.stderr == f"castregin: error: {bad}:1: rank 'one' is not a number\n"
    good = tmp_path / "good.run"
    good.write_text("t Q0 a 1 1.0 r\n")
    before = good.read_bytes()
    refused = cli("pool", good, "-o", good)
    assert refused.exit_code == 1 and "refusing to overwrite the input file" in refused.stderr
    assert good.read_bytes() == before
    assert cli("pool", good, "--depth", "0").exit_code == 2


def test_pool_statistics_by_hand():
    from castregin.track.pool import pool_statistics

    a = Run("a", {"1_1": {"x": 2.0, "y": 1.0}, "1_2": {"z": 1.0}}, {"1_1": {"x": 1, "y": 2}, "1_2": {"z": 1}})
    b = Run("b", {"1_1": {"x": 2.0, "w": 1.0}}, {"1_1": {"x": 1, "w": 2}})
    stats = pool_statistics([a, b], ["a", "b"], depth=2)
    assert stats["turns"] == [{"turn": "1_1", "pool": 3}, {"turn": "1_2", "pool": 1}]
    assert stats["runs"] == [{"run": "a", "contributed": 3, "unique": 2, "pool_share": 0.75},
                             {"run": "b", "contributed": 2, "unique": 1, "pool_share": 0.5}]
    assert stats["overlap"] == {"a": {"a": 3, "b": 1}, "b": {"a": 1, "b": 2}}
    # Against a given pool, only pooled items count as contributions.
    given = pool_statistics([a, b], ["a", "b"], depth=2, pool={"1_1": {"x"}})
    assert [r["contributed"] for r in given["runs"]] == [1, 1] and given["pool"] == 1


def test_pool_statistics_of_the_cast_baselines_against_the_regin_pool(cast2022, run_paths):
    from castregin.track.pool import pool_statistics

    runs = [read_run(p) for p in run_paths]
    pool = {turn: set(items) for turn, items in read_run(cast2022 / "regin/question_pool_depth_1.pool").scores.items()}
    stats = pool_statistics(runs, [r.tag for r in runs], depth=1, pool=pool)
    assert stats["pool"] == 2024
    # T5_raw's top question of 144_2-9 is not in the ReGIn pool (its case twin is: see test above).
    assert [(r["run"], r["contributed"], r["unique"]) for r in stats["runs"]] == [
        ("bm25_baseline_mi_run", 205, 191), ("miniLM_bert_sample_mi_run", 205, 191), ("T5_raw", 204, 134),
        ("T5_rewrite", 205, 135)]


def test_pool_stats_command_and_pool_still_builds(cast2022, run_paths, cli, tmp_path):
    stats = json.loads(cli("pool", "stats", *run_paths, "--pool", cast2022 / "regin/question_pool_depth_1.pool",
                           "--format", "json").stdout)
    assert stats["pool"] == 2024 and len(stats["turns"]) == 205
    assert stats["overlap"]["T5_raw"]["T5_rewrite"] == 70
    csv_lines = cli("pool", "stats", *run_paths, "--format", "csv").stdout.splitlines()
    assert csv_lines[0].startswith("run,contributed,unique,pool_share,overlap:bm25_baseline_mi_run")
    built = cli("pool", *run_paths, "--depth", "1").stdout
    assert built == cli("pool", "build", *run_paths, "--depth", "1").stdout
    assert len(built.splitlines()) == stats["pool"] - 2024 + 736  # the runs' own pool at depth 1


def test_without_judged_keeps_the_holes_of_every_qrels():
    """A pair any qrels labels (>= 0) is judged; a label below 0 (in the pool but unjudged) is a hole still to
    judge; a turn left with nothing goes; the rank column stays the pool's."""
    from castregin.data import Qrels
    from castregin.track.pool import without_judged

    pool = Run("pool", {"1_1": {"a": 0.0, "b": 0.0, "c": 0.0}, "1_2": {"d": 0.0}, "2_1": {"e": 0.0, "f": 0.0}},
               {"1_1": {"a": 1, "b": 2, "c": 3}, "1_2": {"d": 1}, "2_1": {"e": 1, "f": 2}})
    crowd = Qrels({"1_1": {"a": 0, "b": -1}, "1_2": {"d": 2}, "9_9": {"z": 1}}, "crowd")
    nist = Qrels({"1_1": {"b": -2, "c": 3}, "2_1": {"f": 1}}, "nist")
    kept, left_out = without_judged(pool, [crowd, nist])
    judged = {("1_1", "a"), ("1_2", "d"), ("1_1", "c"), ("2_1", "f")}
    want = {(t, i) for t, items in pool.scores.items() for i in items} - judged
    assert {(t, i) for t, items in kept.scores.items() for i in items} == want == {("1_1", "b"), ("2_1", "e")}
    assert left_out == len(judged)
    assert kept.ranks == {"1_1": {"b": 2}, "2_1": {"e": 1}} and kept.tag == "pool"
    assert without_judged(pool, []) == (pool, 0)
