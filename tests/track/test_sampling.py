"""Sampled pools (``pool --sample``) and adaptive judging orders (``pool --strategy``).

Oracles: the strata and sample sizes are recomputed here from the definitions, independently of
castregin.track.sampling; the sample's uniformity is tested with scipy's chi-square test over seeds; the
stratified qrels of a CAsT 2022 sample are read by NIST's sample_eval.pl (its outputs kept in
tests/cli/data/sample_eval/cast2022.json.xz, made with the script named in tests/cli/sample_eval_oracle.py
on this very sample: ``pool --sample 1-1:1,2-10:0.5,11-100:10% --seed 3 --qrels question_relevance_all.qrel``);
the judging orders are worked by hand from the strategies' definitions (Losada et al. 2016-17).
"""

from __future__ import annotations

import json
import lzma
import math
import sys
from collections import Counter
from pathlib import Path

import pytest
from scipy import stats

from castregin.data import Run
from castregin.errors import InputError
from castregin.track.sampling import adaptive_pool, judging_order, parse_strata, sample_pool

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
from sample_eval_oracle import blocks

KEPT_CAST = Path(__file__).resolve().parent.parent / "cli" / "data" / "sample_eval" / "cast2022.json.xz"


def _run(tag: str, turns: dict[str, list[str]]) -> Run:
    return Run(tag, {t: {item: 1.0 / (r + 1) for r, item in enumerate(items)} for t, items in turns.items()},
               {t: {item: r + 1 for r, item in enumerate(items)} for t, items in turns.items()})


def test_strata_parse_rates_percentages_and_counts():
    strata = parse_strata("1-10:1, 11-50:0.5,51-1000:10%,1001-2000:#20")
    assert [(s.name, s.first, s.last) for s in strata] == [("1", 1, 10), ("2", 11, 50), ("3", 51, 1000),
                                                           ("4", 1001, 2000)]
    # Rates are exact: ceil(0.1 * 30) is 3, not 4 as 0.1 * 30 in floats (3.0000000000000004) would give.
    assert strata[2].sample_size(30) == 3 and strata[1].sample_size(7) == 4 and strata[3].sample_size(5) == 5
    assert strata[0].sample_size(9) == 9


@pytest.mark.parametrize("text, message", [
    ("", "expected strata"),
    ("2-10:1", "should start at 1"),
    ("1-10:1,12-20:0.5", "should start at 11"),
    ("1-10:0", "above 0 and at most 1"),
    ("1-10:1.5", "above 0 and at most 1"),
    ("1-10:150%", "above 0 and at most 1"),
    ("1-10:#0", "at least one item"),
    ("1-10", "is not FIRST-LAST:RATE"),
    ("10-1:1", "should start at 1"),
])
def test_bad_strata_are_one_line(text, message):
    with pytest.raises(InputError, match=message):
        parse_strata(text)


def test_each_item_in_the_stratum_of_its_best_rank_and_samples_of_the_stated_size():
    a = _run("a", {"t1": [f"d{i}" for i in range(30)], "t2": ["x", "y"]})
    b = _run("b", {"t1": [f"d{29 - i}" for i in range(30)] + ["extra"]})
    sample = sample_pool([a, b], "1-2:1,3-10:0.5,11-40:#3", seed=5)
    # Best rank of d_i over the two runs: min(i + 1, 30 - i).
    for i in range(30):
        best = min(i + 1, 30 - i)
        assert sample.strata["t1"][f"d{i}"] == ("1" if best <= 2 else "2" if best <= 10 else "3")
    assert sample.strata["t1"]["extra"] == "3"  # rank 31 of b
    counts = Counter(sample.strata["t1"][item] for item in sample.sampled["t1"])
    sizes = Counter(sample.strata["t1"].values())
    assert sizes == {"1": 4, "2": 16, "3": 11}
    assert counts == {"1": 4, "2": 8, "3": 3}
    assert sample.sampled["t2"] == {"x", "y"}
    assert sample_pool([a, b], "1-2:1,3-10:0.5,11-40:#3", seed=5) == sample
    assert sample_pool([a, b], "1-2:1,3-10:0.5,11-40:#3", seed=6).sampled != sample.sampled


def test_every_item_of_a_stratum_is_equally_likely_to_be_sampled():
    run = _run("a", {"t": [f"d{i}" for i in range(12)]})
    hits = Counter()
    seeds = 3000
    for seed in range(seeds):
        hits.update(sample_pool([run], "1-12:0.25", seed).sampled["t"])
    observed = [hits[f"d{i}"] for i in range(12)]
    assert sum(observed) == seeds * 3
    assert stats.chisquare(observed).pvalue > 0.001


@pytest.fixture(scope="module")
def cast_sample(cast2022, run_paths, tmp_path_factory):
    from click.testing import CliRunner

    from castregin.cli import main

    directory = tmp_path_factory.mktemp("sample")
    qrels = cast2022 / "regin/qrels/question_relevance_all.qrel"
    args = ["pool", *map(str, run_paths), "--sample", "1-1:1,2-10:0.5,11-100:10%", "--seed", "3",
            "-o", str(directory / "s.pool"), "--strata-out", str(directory / "s.qrel"), "--qrels", str(qrels)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return directory, result.stderr


def test_cast2022_sample_read_by_sample_eval_pl(cast_sample, run_paths, cli):
    directory, messages = cast_sample
    assert "4603 sampled items have no judgment" in messages
    assert "stratum 2 (ranks 2-10, rate 0.5): 1671 of 3257 pooled items sampled" in messages
    kept = json.loads(lzma.decompress(KEPT_CAST.read_bytes()))
    for path in run_paths:
        result = cli("sample_eval", "-q", directory / "s.qrel", path)
        assert result.exit_code == 0, result.stderr
        assert blocks(result.stdout) == blocks(kept[path.stem])


def test_tasks_are_made_from_a_sampled_pool(cast_sample, cast2022, cli, tmp_path):
    directory, _ = cast_sample
    result = cli("tasks", directory / "s.pool", "--bank", cast2022 / "regin/question_bank.json",
                 "--bank", cast2022 / "topics/2022_mixed_initiative_question_pool.json",
                 "--topics", cast2022 / "topics/2022_evaluation_topics_tree_v1.0.json",
                 "--criteria", "relevance", "--format", "long", "--out-dir", tmp_path / "tasks")
    assert result.exit_code == 0, result.stderr
    pooled = {tuple(line.split()[0:3:2]) for line in (directory / "s.pool").read_text().splitlines()}
    import csv

    rows = []
    for path in (tmp_path / "tasks").glob("*.csv"):
        if path.name != "gold.csv":
            with path.open(newline="", encoding="utf-8") as handle:
                rows.extend(csv.DictReader(handle))
    assert {(row["turn_id"], row["item_id"]) for row in rows} == pooled


# --- adaptive judging orders ------------------------------------------------------------------------------

RANKINGS = [["a", "b", "c", "d"], ["e", "a", "f", "g"], ["h", "i", "e"]]
RELEVANT = {"a", "c", "e", "f", "g"}


def test_depth_judges_a_depth_before_the_next():
    assert judging_order(RANKINGS, "depth", RELEVANT.__contains__) == ["a", "e", "h", "b", "i", "c", "f", "d", "g"]


def test_move_to_front_by_hand():
    # Priorities start at 0. Run 0: a (relevant, stay), b (non-relevant: run 0 -> -1, go to run 1, the best other);
    # run 1: e relevant, a judged already (passed), f relevant, g relevant, then run 1 is exhausted: the best
    # live run is run 2 (0 > -1): h non-relevant (-> -1), the other best is run 0 (-1, before run 2): c relevant,
    # d non-relevant (run 0 -> -2, go to run 2): i non-relevant, e judged; nothing left.
    assert judging_order(RANKINGS, "mtf", RELEVANT.__contains__) == ["a", "b", "e", "f", "g", "h", "c", "d", "i"]


def test_maximum_mean_bandit_by_hand():
    # Posterior means (1 + rel) / (2 + rel + nonrel), ties to the first run. All 1/2: run 0 gives a (rel, 2/3).
    # Run 0 again: b non-relevant (2/4). Now run 0 1/2, run 1 1/2, run 2 1/2: run 0, c relevant (3/5). Run 0: d
    # non-relevant (3/6 = 1/2, exhausted). Run 1 (1/2, before run 2): e relevant (2/3); a passed, relevant (3/4);
    # f relevant (4/5); g relevant (5/6), exhausted. Run 2: h non-relevant, i non-relevant, e passed.
    assert judging_order(RANKINGS, "bandit", RELEVANT.__contains__) == ["a", "b", "c", "d", "e", "f", "g", "h", "i"]


def test_every_order_judges_each_pooled_item_once():
    for strategy in ("depth", "mtf", "bandit"):
        order = judging_order(RANKINGS, strategy, RELEVANT.__contains__)
        assert sorted(order) == sorted({i for r in RANKINGS for i in r})


def test_adaptive_pool_counts_the_judged_items_against_the_budget():
    runs = [_run(f"r{k}", {"t": ranking}) for k, ranking in enumerate(RANKINGS)]
    assert adaptive_pool(runs, "depth", 3) == {"t": ["a", "e", "h"]}
    # Nothing seen: every unseen item counts as non-relevant, so mtf moves on after each item.
    assert adaptive_pool(runs, "mtf", 3) == {"t": ["a", "e", "h"]}
    # a judged relevant: mtf stays on run 0 (b), which is non-relevant by default, then run 1 (e).
    assert adaptive_pool(runs, "mtf", 3, {"t": {"a": 2}}) == {"t": ["b", "e"]}
    assert adaptive_pool(runs, "mtf", 1, {"t": {"a": 2}}) == {}
    assert adaptive_pool(runs, "depth", 3, {"t": {"a": 2, "zzz": 0}}, depth=1) == {"t": ["e", "h"]}
    with pytest.raises(InputError, match="budget"):
        adaptive_pool(runs, "depth", 0)
    assert math.isclose(len(judging_order([[], ["x"]], "mtf", bool)), 1)


def test_pool_command_usage_errors_and_an_empty_next_batch(cli, tmp_path):
    from castregin.formats import format_run

    run = tmp_path / "a.run"
    run.write_text(format_run(_run("a", {"t": ["x", "y"]})))
    (tmp_path / "q.qrel").write_text("t 0 x 2\nt 0 y 0\n")
    out = tmp_path / "p.pool"
    for args in (["--sample", "1-1:1", "--depth", "3"], ["--sample", "1-1:1", "--strategy", "mtf", "--budget", "2"],
                 ["--strategy", "mtf"], ["--strata-out", tmp_path / "s"], ["--qrels", tmp_path / "q.qrel"],
                 ["--sample", "1-1:1", "--qrels", tmp_path / "q.qrel"], ["--sample", "1-0:1"]):
        result = cli("pool", run, *args, "-o", out)
        assert result.exit_code == 2, (args, result.stderr)
    result = cli("pool", run, "--strategy", "bandit", "--budget", "2", "--qrels", tmp_path / "q.qrel", "-o", out)
    assert result.exit_code == 0 and "nothing left to judge" in result.stderr and out.read_text() == ""
    result = cli("pool", run, "--strategy", "depth", "--budget", "1", "-o", out)
    assert result.exit_code == 0 and out.read_text() == "t\tQ0\tx\t1\t1.0\tdummytag\n"  # rank 1, the only one


def test_the_pool_file_keeps_the_judging_order(cli, tmp_path):
    """``pool --strategy`` wrote its items sorted by id, every one at rank 1: the judging order was lost."""
    from castregin import api
    from castregin.formats import format_run

    paths = []
    for k, ranking in enumerate(RANKINGS):
        paths.append(tmp_path / f"r{k}.run")
        paths[-1].write_text(format_run(_run(f"r{k}", {"t": ranking})))
    (tmp_path / "q.qrel").write_text("t 0 a 2\n")
    out = tmp_path / "next.pool"
    result = cli("pool", *paths, "--strategy", "mtf", "--budget", "5", "--qrels", tmp_path / "q.qrel", "-o", out)
    assert result.exit_code == 0, result.stderr
    lines = [line.split("\t") for line in out.read_text().splitlines()]
    # By hand (mtf): a judged relevant keeps run 0 on; b unseen counts non-relevant, run 1 next (e), then run 2 (h),
    # then run 0 again (c): four more judgments for a budget of 5.
    assert [fields[2] for fields in lines] == ["b", "e", "h", "c"]
    assert [fields[3] for fields in lines] == ["1", "2", "3", "4"]
    assert [float(fields[4]) for fields in lines] == sorted((float(fields[4]) for fields in lines), reverse=True)
    assert [fields[2] for fields in lines] == api.adaptive_pool(paths, "mtf", 5, judged=tmp_path / "q.qrel")["t"]


def test_the_statistics_count_the_turns_kept_only(cli, tmp_path):
    """``pool --sample --turns`` counted the pooled and sampled items of the turns it left out too."""
    from castregin.formats import format_run

    kept = {"t1": ["a", "b", "c", "d"], "t2": ["e", "f"]}
    run = tmp_path / "a.run"
    run.write_text(format_run(_run("a", {**kept, "dropped": [f"x{k}" for k in range(10)]})))
    (tmp_path / "turns.txt").write_text("t1\nt2\n")
    out = tmp_path / "sample.pool"
    result = cli("pool", run, "--sample", "1-1:1,2-100:#1", "--turns", tmp_path / "turns.txt", "-o", out)
    assert result.exit_code == 0, result.stderr
    # Counted by hand on the kept turns: stratum 1 is each turn's top item, stratum 2 the rest, one sampled a turn.
    pooled_2 = sum(len(items) - 1 for items in kept.values())
    assert "stratum 1 (ranks 1-1, all): 2 of 2 pooled items sampled" in result.stderr
    assert f"stratum 2 (ranks 2-100, 1 a turn): 2 of {pooled_2} pooled items sampled" in result.stderr
    assert len(out.read_text().splitlines()) == 4
