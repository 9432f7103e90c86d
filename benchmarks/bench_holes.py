"""``castregin analyze holes`` beside ``castregin evaluate`` on the same run: what the exact intervals cost.

    .venv/bin/python benchmarks/bench_holes.py --repeat 3

A run of N turns x 100 items whose top 10 nobody judged (10 holes a turn in the top 10), the qrels
judging 50 of its other items and 20 it lacks (grades 0-3), at 1,000 and 5,000 turns (200 and 1,000 with
``--quick``): ``analyze holes --depth 10`` and ``evaluate`` with AP, nDCG@10, P@10 and RR, alternately,
whole processes, medians of wall time and peak memory; then nDCG@20 at 20 holes a turn (1,771 label
multisets a turn at grades 0-3) at the smaller size. The holes' ``score`` column must be evaluate's
means to the last digit (checked once, in JSON). Targets: holes at most 5x evaluate's time at 10 holes
a turn, and linear in turns (the time per turn at the larger size no more than at the smaller).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_evaluate import MEASURE_ARGS, Timing, alternately, measure, run_alone
from generate import GRADE_SHARES, _lines, _text, turn_ids

CASTREGIN = REPO / ".venv" / "bin" / "castregin"
ITEMS = 100
VERSION = 1


def write_holes_data(out: Path, turns: int, holes: int) -> tuple[Path, Path]:
    """The run and its qrels (see the module docstring), ``holes`` unjudged items on top of each turn."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out.mkdir(parents=True, exist_ok=True)
    run, qrels = out / f"holes_{holes}_{turns}.run", out / f"holes_{holes}_{turns}.qrel"
    manifest = out / f"holes_{holes}_{turns}.json"
    params = {"turns": turns, "holes": holes, "items": ITEMS, "version": VERSION}
    if manifest.exists() and json.loads(manifest.read_text()) == params and run.exists() and qrels.exists():
        return run, qrels
    rng = np.random.default_rng([2025, turns, holes])
    ids = np.array(turn_ids(turns), dtype=object)
    # Distinct item numbers per turn: a random start and a stride through 10^7 numbers (odd, not a multiple of 5).
    start = rng.integers(0, 10**7, size=(turns, 1))
    stride = rng.integers(0, 10**5, size=(turns, 1)) * 10 + rng.choice([1, 3, 7, 9], size=(turns, 1))
    numbers = (start + stride * np.arange(ITEMS + 20)) % 10**7

    def names(block):
        return pc.binary_join_element_wise(pa.scalar("D"), _text(block, 7), "")

    turn_text = pa.array(ids.tolist()).take(pa.array(np.repeat(np.arange(turns), ITEMS)))
    scores = np.tile(np.arange(ITEMS, 0, -1), turns)
    run.write_bytes(_lines([turn_text, "Q0", names(numbers[:, :ITEMS]), _text(np.tile(np.arange(1, ITEMS + 1), turns)),
                            _text(scores), "holes"], " ").to_pybytes())
    # Judged: every other item below the holes, and 20 the run lacks; in byte order of the ids within a turn.
    judged = np.sort(np.concatenate([numbers[:, holes:ITEMS:2], numbers[:, ITEMS:]], axis=1), axis=1)
    grades = rng.choice(4, size=judged.shape, p=GRADE_SHARES)
    by_turn = sorted(range(turns), key=ids.__getitem__)
    judged, grades = judged[by_turn], grades[by_turn]
    qrels_turns = pa.array(ids[by_turn].tolist()).take(pa.array(np.repeat(np.arange(turns), judged.shape[1])))
    qrels.write_bytes(_lines([qrels_turns, "0", names(judged), _text(grades)], " ").to_pybytes())
    manifest.write_text(json.dumps(params))
    return run, qrels


def _holes_command(run: Path, qrels: Path, depth: int, measures: list[str]) -> list[str]:
    return [str(CASTREGIN), "analyze", "holes", str(run), "--qrels", str(qrels), "--depth", str(depth), *measures]


def _same_scores(run: Path, qrels: Path) -> bool:
    """Whether the holes' scores (holes non-relevant) are evaluate's means, to the last digit."""
    holes = json.loads(subprocess.run([*_holes_command(run, qrels, 10, MEASURE_ARGS), "--format", "json"],
                                      capture_output=True, check=True).stdout)
    means = json.loads(subprocess.run([str(CASTREGIN), "evaluate", str(run), "--qrels", str(qrels), *MEASURE_ARGS,
                                       "--format", "json"], capture_output=True, check=True).stdout)
    evaluated = {row["measure"]: row["value"] for row in means if row["turn"] == "all"}
    return all(row["score"] == evaluated[row["measure"]] for row in holes["runs"])


def bench_holes(out: Path, repeat: int, quick: bool) -> tuple[list[Timing], list[str]]:
    """The rows (holes and evaluate at two sizes, nDCG@20 at 20 holes) and lines saying what they show."""
    sizes = (200, 1000) if quick else (1000, 5000)
    rows, notes, ratios, per_turn = [], [], [], []
    for turns in sizes:
        run, qrels = write_holes_data(out, turns, 10)
        label = f"{turns:,} turns x {ITEMS} items, 10 holes a turn in the top 10"
        commands = {"castregin analyze holes --depth 10": _holes_command(run, qrels, 10, MEASURE_ARGS),
                    "castregin evaluate": [str(CASTREGIN), "evaluate", str(run), "--qrels", str(qrels), *MEASURE_ARGS]}
        timed = alternately(label, commands, repeat)
        rows += timed
        ratios.append(timed[0].seconds / timed[1].seconds)
        per_turn.append(timed[0].seconds / turns)
        if turns == sizes[0]:
            same = _same_scores(run, qrels)
            notes.append(f"- analyze holes: its scores are evaluate's means to the last digit: "
                         f"{'yes' if same else 'NO'}")
    twenty_run, twenty_qrels = write_holes_data(out, sizes[0], 20)
    seconds, peak = measure(_holes_command(twenty_run, twenty_qrels, 20, ["-m", "nDCG@20"]), repeat)
    rows.append(Timing(f"{sizes[0]:,} turns x {ITEMS} items, 20 holes a turn in the top 20", "castregin analyze holes "
                       "-m nDCG@20 --depth 20 (1,771 label multisets a turn)", seconds, peak, repeat))
    linear = per_turn[1] <= per_turn[0] * 1.1
    notes.append(f"- analyze holes at 10 holes a turn: {', '.join(f'{r:.2f}x' for r in ratios)} evaluate's time at "
                 f"{' and '.join(f'{t:,}' for t in sizes)} turns (target: at most 5x, "
                 f"{'met' if max(ratios) <= 5 else 'NOT met'}); {per_turn[0] * 1000:.2f} and {per_turn[1] * 1000:.2f} "
                 f"ms a turn (target: linear in turns, {'met' if linear else 'NOT met'})")
    return rows, notes


def main() -> None:
    run_alone(__doc__.split("\n")[0], bench_holes, "200 and 1,000 turns instead of 1,000 and 5,000.")


if __name__ == "__main__":
    main()
