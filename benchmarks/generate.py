"""Deterministic synthetic TREC data for the benchmarks (CAsT-like turn ids, graded 0-3 qrels).

    python benchmarks/generate.py --out bench-out --turns 5000 --depth 1000 --judged 100

writes ``qrels.qrel`` (``judged`` items per turn, grades 0-3), ``run.run`` (``depth`` items per turn,
distinct scores) and ``run_ties.run`` (the same items with scores rounded to one decimal, so that
many items tie and trec_eval's tie-break by item id decides). ``--runs N`` writes ``N`` further runs
``multi/run_NN.run``. The same arguments always give byte-identical files; a file that already exists
with the same parameters (recorded in ``manifest.json``) is not written again.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

SEED = 20220712
#: Size of the item id space: ``Q0000000`` .. ``Q0999999``.
ITEM_SPACE = 1_000_000
#: Distribution of grades among judged items (0, 1, 2, 3).
GRADE_SHARES = (0.5, 0.25, 0.15, 0.10)


def turn_ids(turns: int) -> list[str]:
    """CAsT-like ids ``topic_tree-turn``: 50 turns a topic, topics from 101."""
    return [f"{101 + t // 50}_{(t % 50) // 5 + 1}-{t % 5 + 1}" for t in range(turns)]


def _items(rng: np.random.Generator, turns: int, depth: int) -> np.ndarray:
    """``depth`` distinct item numbers per turn (a row a turn)."""
    # Distinct per turn without a per-turn permutation of the whole id space: a random start and a
    # stride coprime to the id space (10**6 = 2**6 * 5**6: ending in 1, 3, 7 or 9) visit every id
    # once before repeating, so `depth` <= space steps never repeat. An odd stride alone is not
    # enough: one divisible by 5**5 repeats after 10**6 / 5**5 = 320 steps.
    if depth > ITEM_SPACE:
        raise ValueError(f"at most {ITEM_SPACE} distinct items per turn, not {depth}")
    start = rng.integers(0, ITEM_SPACE, size=(turns, 1))
    stride = rng.integers(0, ITEM_SPACE // 10, size=(turns, 1)) * 10 + rng.choice([1, 3, 7, 9], size=(turns, 1))
    return (start + stride * np.arange(depth)) % ITEM_SPACE


def _write_lines(path: Path, columns: list[np.ndarray], sep: str) -> None:
    # Chunked so that 5,000,000 lines never sit in memory as one list of Python strings.
    rows = len(columns[0])
    chunk = 200_000
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for begin in range(0, rows, chunk):
            parts = [c[begin:begin + chunk] for c in columns]
            handle.write("".join(sep.join(fields) + "\n" for fields in zip(*parts)))


def make_qrels_and_runs(out: Path, turns: int, depth: int, judged: int, runs: int = 0,
                        multi_depth: int | None = None, seed: int = SEED) -> dict[str, Path]:
    """Write the data set (see the module docstring) and return the paths by name."""
    out.mkdir(parents=True, exist_ok=True)
    params = {"turns": turns, "depth": depth, "judged": judged, "runs": runs,
              "multi_depth": multi_depth, "seed": seed, "version": 2}
    manifest = out / "manifest.json"
    paths = {"qrels": out / "qrels.qrel", "run": out / "run.run", "run_ties": out / "run_ties.run"}
    paths.update({f"multi_{i:02d}": out / "multi" / f"run_{i:02d}.run" for i in range(runs)})
    if manifest.exists() and json.loads(manifest.read_text()) == params and all(p.exists() for p in paths.values()):
        return paths
    manifest.unlink(missing_ok=True)

    rng = np.random.default_rng(seed)
    ids = np.array(turn_ids(turns), dtype=object)
    # Columns 0..depth-1 are what a run retrieves; the judged items are the first `pooled` of them
    # (the top of the pool) and `judged - pooled` items beyond depth, that no run retrieves.
    pooled = min(int(judged * 0.7), depth)
    items = _items(rng, turns, depth + judged)
    item_names = np.char.add("Q", np.char.zfill(items.astype(str), 7)).astype(object)
    judged_cols = np.concatenate([np.arange(pooled), depth + np.arange(judged - pooled)])
    judged_cols = np.broadcast_to(judged_cols, (turns, judged))
    grades = rng.choice(4, size=(turns, judged), p=GRADE_SHARES)
    q_turn = np.repeat(ids, judged)
    q_item = np.take_along_axis(item_names, judged_cols, axis=1).ravel()
    order = np.lexsort((q_item.astype(str), q_turn.astype(str)))  # qrels are sorted by turn then item
    _write_lines(paths["qrels"], [q_turn[order], np.full(len(order), "0", dtype=object), q_item[order],
                                  grades.ravel().astype(str).astype(object)[order]], " ")

    def write_run(path: Path, run_depth: int, tag: str, ties: bool, noise: int) -> None:
        local = np.random.default_rng(seed + noise)
        scores = np.sort(local.gamma(2.0, 5.0, size=(turns, run_depth)), axis=1)[:, ::-1]
        if ties:
            scores = np.round(scores, 1)
        # Runs favour relevant items a little so that the measures are not all near zero.
        perm = np.argsort(local.random((turns, run_depth)) - 0.3 * (np.arange(run_depth) < pooled), axis=1)
        row_items = np.take_along_axis(item_names[:, :run_depth], perm, axis=1)
        text = np.char.mod("%.6f", scores) if not ties else np.char.mod("%.1f", scores)
        ranks = np.tile(np.arange(1, run_depth + 1).astype(str).astype(object), turns)
        _write_lines(path, [np.repeat(ids, run_depth), np.full(turns * run_depth, "Q0", dtype=object),
                            row_items.ravel(), ranks, text.ravel().astype(object),
                            np.full(turns * run_depth, tag, dtype=object)], "\t")

    write_run(paths["run"], depth, "bench", False, 1)
    write_run(paths["run_ties"], depth, "bench_ties", True, 2)
    if runs:
        (out / "multi").mkdir(exist_ok=True)
        for i in range(runs):
            write_run(paths[f"multi_{i:02d}"], multi_depth or depth, f"multi_{i:02d}", False, 100 + i)
    manifest.write_text(json.dumps(params))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="bench-out")
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--judged", type=int, default=100)
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument("--multi-depth", type=int, default=None)
    args = parser.parse_args()
    paths = make_qrels_and_runs(Path(args.out), args.turns, args.depth, args.judged, args.runs, args.multi_depth)
    for name, path in paths.items():
        print(f"{name}\t{path}\t{path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
