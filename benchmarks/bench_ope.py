"""How close ``castregin ope estimate`` gets to the exact value as the logs grow (not a test).

    .venv/bin/python benchmarks/bench_ope.py [--sizes 500 5000 50000] [--seeds 5] [--target-p 0.8]
                                             [--bootstrap 0] [--format markdown|text]

For each number of logged dialogues and each seed, the ``chat`` world of
:mod:`castregin.ope.simulate` is logged (three behaviour systems) and the target policy's mean
rating is estimated with one-hot and hashed features; the table gives the mean absolute error and
the root mean squared error against the exact value, next to the error of the naive mean of the
logged ratings, and the seconds per estimate. With ``--bootstrap B`` it also reports how often the
95% interval holds the exact value. Deterministic: the same arguments print the same table (bar
the timings).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from castregin.ope import estimate, simulate
from castregin.render.tables import markdown_table, text_table


def run(sizes, seeds, target_p, bootstrap, world_seed=0):
    """One row per size: errors of onehot, hashed and the naive mean over ``seeds`` seeds."""
    rows = []
    for n in sizes:
        errors = {"onehot": [], "hashed": [], "naive": []}
        seconds = {"onehot": 0.0, "hashed": 0.0}
        covered = []
        exact = None
        for seed in range(seeds):
            sim = simulate("chat", n, 1000 + seed, target_p, world_seed=world_seed)
            exact = sim.exact_value
            for features in ("onehot", "hashed"):
                start = time.perf_counter()
                result = estimate(sim.dialogues, features=features)
                seconds[features] += time.perf_counter() - start
                errors[features].append(result.estimate - exact)
            errors["naive"].append(result.behavior_mean - exact)
            if bootstrap:
                lo, hi = estimate(sim.dialogues, bootstrap=bootstrap, seed=seed).ci95
                covered.append(lo <= exact <= hi)
        row = {"dialogues": n, "exact": exact}
        for name, listed in errors.items():
            values = np.asarray(listed)
            row[f"{name}_mae"] = float(np.mean(np.abs(values)))
            row[f"{name}_rmse"] = float(np.sqrt(np.mean(values ** 2)))
        for name, total in seconds.items():
            row[f"{name}_seconds"] = total / seeds
        row["ci_coverage"] = float(np.mean(covered)) if covered else None
        rows.append(row)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5000, 50000])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--target-p", type=float, default=0.8)
    parser.add_argument("--world-seed", type=int, default=0)
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--format", choices=["markdown", "text"], default="markdown")
    args = parser.parse_args(argv)
    rows = run(args.sizes, args.seeds, args.target_p, args.bootstrap, args.world_seed)
    header = ["dialogues", "onehot MAE", "onehot RMSE", "hashed MAE", "hashed RMSE", "naive mean MAE",
              "s/estimate (onehot, hashed)"]
    if args.bootstrap:
        header.append("95% CI coverage")
    body = []
    for r in rows:
        cells = [f"{r['dialogues']:,}", f"{r['onehot_mae']:.4f}", f"{r['onehot_rmse']:.4f}", f"{r['hashed_mae']:.4f}",
                 f"{r['hashed_rmse']:.4f}", f"{r['naive_mae']:.4f}",
                 f"{r['onehot_seconds']:.2f}, {r['hashed_seconds']:.2f}"]
        if args.bootstrap:
            cells.append(f"{r['ci_coverage']:.2f}")
        body.append(cells)
    render = markdown_table if args.format == "markdown" else text_table
    print(f"chat world (world seed {args.world_seed}), target p = {args.target_p}, exact value "
          f"{rows[0]['exact']:.4f}, {args.seeds} seeds per size")
    print(render(header, body, align_right=set(range(len(header)))), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
