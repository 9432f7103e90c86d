"""Benchmark: aggregate 1,000,000 synthetic crowd judgments (not a test; run it by hand).

    .venv/bin/python benchmarks/bench_aggregate.py [--judgments 1000000] [--seed 0] [--keep DIR]

A judgment is one row of a long CSV (worker, turn, item) with three criteria, so a million
judgments are three million labels. The data are generated deterministically from ``--seed``:
7 distinct workers per (turn, item), 1,000 turns in 50 topics, 600 workers of whom a tenth are
spammers, and 2 gold items per topic. The data are generated in a child process, so the peak
memory printed (``resource.getrusage`` maxrss) is that of reading, aggregating and writing alone.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from castregin.formats.crowd import read_gold, read_judgments
from castregin.judging.aggregate import aggregate, write_aggregation

CRITERIA = ["relevance", "novelty", "diversity"]
WORKERS_PER_ITEM = 7


def generate(directory: Path, judgments: int, seed: int) -> tuple[Path, Path]:
    """Write judgments.csv and gold.csv into ``directory``; the same seed gives the same bytes."""
    rng = np.random.default_rng(seed)
    units = judgments // WORKERS_PER_ITEM
    n_workers, n_topics, turns_per_topic = 600, 50, 20
    turn_of_unit = rng.integers(0, n_topics * turns_per_topic, units)
    turn_names = np.array([f"{100 + t // turns_per_topic}_{1 + t % turns_per_topic}-1"
                           for t in range(n_topics * turns_per_topic)])
    item_names = np.array([f"Q{u:07d}" for u in range(units)])
    truth = rng.integers(0, 4, (units, len(CRITERIA)))
    base = rng.integers(0, n_workers, units)
    rows = units * WORKERS_PER_ITEM
    unit = np.repeat(np.arange(units), WORKERS_PER_ITEM)
    worker = (base[unit] + np.tile(np.arange(WORKERS_PER_ITEM), units)) % n_workers
    spammer = worker % 10 == 0
    noise = rng.integers(-1, 2, (rows, len(CRITERIA))) * (rng.random((rows, len(CRITERIA))) < 0.3)
    labels = np.clip(truth[unit] + noise, 0, 3)
    labels[spammer] = rng.integers(0, 4, (int(spammer.sum()), len(CRITERIA)))
    frame = pd.DataFrame({"worker_id": np.char.add("W", worker.astype(str)),
                          "turn_id": turn_names[turn_of_unit[unit]], "item_id": item_names[unit]})
    for index, criterion in enumerate(CRITERIA):
        column = labels[:, index].astype(str).astype(object)
        column[rng.random(rows) < 0.01] = ""   # a few cells not judged
        frame[criterion] = column
    judgments_path = directory / "judgments.csv"
    frame.to_csv(judgments_path, index=False)
    # Gold: the first two units of each topic, where a careful worker gives the true label +-1.
    topic_of_unit = turn_of_unit // turns_per_topic
    gold_rows = []
    for topic in range(n_topics):
        for u in np.flatnonzero(topic_of_unit == topic)[:2]:
            t = int(truth[u, 0])
            gold_rows.append((turn_names[turn_of_unit[u]], item_names[u], "relevance", max(t - 1, 0), min(t + 1, 3)))
    gold_path = directory / "gold.csv"
    pd.DataFrame(gold_rows, columns=["turn_id", "item_id", "criterion", "min_label", "max_label"]).to_csv(
        gold_path, index=False)
    return judgments_path, gold_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgments", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=None, help="Write the data and outputs here and keep them.")
    parser.add_argument("--generate-only", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_only:
        generate(args.generate_only, args.judgments, args.seed)
        return
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--generate-only", str(directory), "--judgments",
                        str(args.judgments), "--seed", str(args.seed)], check=True)
        judgments_path, gold_path = directory / "judgments.csv", directory / "gold.csv"
        size_mib = judgments_path.stat().st_size / 2**20
        generated = time.perf_counter()
        judgments = read_judgments([judgments_path], CRITERIA)
        gold = read_gold(gold_path)
        read = time.perf_counter()
        result = aggregate(judgments, gold)
        aggregated = time.perf_counter()
        write_aggregation(result, directory / "out", prefix="question")
        written = time.perf_counter()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"judgments (CSV rows): {args.judgments:,}  labels: {len(judgments):,}  csv: {size_mib:.1f} MiB")
    print(f"removed (worker, topic) pairs: {len(result.removed)}  "
          f"items: {sum(len(v) for v in result.qrels['relevance'].values()):,}  "
          f"ties (relevance): {result.decisions['relevance']['tie']:,}")
    print(f"generate (child process):   {generated - start:7.2f} s")
    print(f"read CSV + gold:            {read - generated:7.2f} s")
    print(f"aggregate + agreement:      {aggregated - read:7.2f} s")
    print(f"write qrels + audit:        {written - aggregated:7.2f} s")
    print(f"wall time (read..write):    {written - generated:7.2f} s")
    print(f"peak memory (maxrss):       {peak_mib:7.1f} MiB")


if __name__ == "__main__":
    main()
