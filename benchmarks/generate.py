"""Deterministic synthetic TREC data for the benchmarks (CAsT-like turn ids, graded 0-3 qrels).

    python benchmarks/generate.py --out bench-out --turns 5000 --depth 1000 --judged 100

writes ``qrels.qrel`` (``judged`` items per turn, grades 0-3, sorted by turn then item),
``run.run`` (``depth`` items per turn, distinct scores, turn by turn) and ``run_ties.run`` (the
same items with scores rounded to one decimal, so that many items tie and trec_eval's tie-break
by item id decides; ``--no-ties`` leaves it out). ``--runs N`` writes ``N`` further runs
``multi/run_NN.run``. The same arguments always give byte-identical files; a file that already
exists with the same parameters (recorded in ``manifest.json``) is not written again.

Files are written a block of turns at a time, the text formatted by pyarrow's kernels: 50,000
turns x 1,000 items (50 million lines, 2 GB) take about a minute and little memory. Each block
draws from a generator seeded by the block's number, so a run of N turns begins with the lines
of any shorter one.
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
#: Turns formatted and written at a time.
BLOCK_TURNS = 1000
#: The format of the files, recorded in the manifest: data of another version are written again.
VERSION = 3


def turn_ids(turns: int) -> list[str]:
    """CAsT-like ids ``topic_tree-turn``: 50 turns a topic, topics from 101."""
    return [f"{101 + t // 50}_{(t % 50) // 5 + 1}-{t % 5 + 1}" for t in range(turns)]


def _strides(rng: np.random.Generator, turns: int) -> tuple[np.ndarray, np.ndarray]:
    """A random start and stride per turn (columns of shape (turns, 1)), from which its items follow."""
    # Distinct per turn without a per-turn permutation of the whole id space: a random start and a
    # stride coprime to the id space (10**6 = 2**6 * 5**6: ending in 1, 3, 7 or 9) visit every id
    # once before repeating, so `depth` <= space steps never repeat. An odd stride alone is not
    # enough: one divisible by 5**5 repeats after 10**6 / 5**5 = 320 steps.
    start = rng.integers(0, ITEM_SPACE, size=(turns, 1))
    stride = rng.integers(0, ITEM_SPACE // 10, size=(turns, 1)) * 10 + rng.choice([1, 3, 7, 9], size=(turns, 1))
    return start, stride


def _items_of(start: np.ndarray, stride: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """The item numbers in ``columns`` of each turn's sequence (a row a turn)."""
    return (start + stride * columns) % ITEM_SPACE


def _items(rng: np.random.Generator, turns: int, depth: int) -> np.ndarray:
    """``depth`` distinct item numbers per turn (a row a turn)."""
    if depth > ITEM_SPACE:
        raise ValueError(f"at most {ITEM_SPACE} distinct items per turn, not {depth}")
    return _items_of(*_strides(rng, turns), np.arange(depth))


def _text(values, width: int = 0):
    """Integers as a pyarrow string array, left-padded with zeros to ``width``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.cast(pa.array(np.ascontiguousarray(values).ravel()), pa.string())
    return pc.utf8_lpad(text, width=width, padding="0") if width else text


def _lines(columns: list, separator: str):
    """Lines joining ``columns`` (pyarrow arrays or strings) with ``separator``, each ended by a newline:
    one buffer, as a file takes it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = [pa.scalar(c) if isinstance(c, str) else c for c in columns]
    columns[-1] = pc.binary_join_element_wise(columns[-1], pa.scalar("\n"), "")
    joined = pc.binary_join_element_wise(*columns, separator)
    # A string array's characters are its lines back to back.
    offsets = np.frombuffer(joined.buffers()[1], np.int32, len(joined) + 1, joined.offset * 4)
    return joined.buffers()[2].slice(int(offsets[0]), int(offsets[-1] - offsets[0]))


def _decimals(scores: np.ndarray, digits: int):
    """Non-negative scores as text with ``digits`` decimals (``%.{digits}f``, rounded in integers)."""
    import pyarrow.compute as pc

    scaled = np.round(scores.ravel() * 10 ** digits).astype(np.int64)
    return pc.binary_join_element_wise(_text(scaled // 10 ** digits), _text(scaled % 10 ** digits, digits), ".")


class _Data:
    """What every file of one data set shares: turn ids, each turn's item sequence, the judged columns."""

    def __init__(self, turns: int, depth: int, judged: int, seed: int):
        if depth + judged > ITEM_SPACE:
            raise ValueError(f"at most {ITEM_SPACE} distinct items per turn, not {depth + judged}")
        rng = np.random.default_rng(seed)
        self.ids = np.array(turn_ids(turns), dtype=object)
        self.start, self.stride = _strides(rng, turns)
        self.depth, self.seed = depth, seed
        # The judged items are the first `pooled` a run retrieves (the top of the pool) and
        # `judged - pooled` beyond depth, that no run retrieves.
        self.pooled = min(int(judged * 0.7), depth)
        self.judged_columns = np.concatenate([np.arange(self.pooled), depth + np.arange(judged - self.pooled)])
        self.grades = rng.choice(4, size=(turns, judged), p=GRADE_SHARES).astype(np.int8)

    def write_qrels(self, path: Path) -> None:
        """Sorted by turn then item, in byte order (item ids are zero-padded: numeric order is byte order)."""
        import pyarrow as pa

        by_id = sorted(range(len(self.ids)), key=self.ids.__getitem__)
        with open(path, "wb") as handle:
            for begin in range(0, len(by_id), BLOCK_TURNS):
                block = np.array(by_id[begin:begin + BLOCK_TURNS])
                items = _items_of(self.start[block], self.stride[block], self.judged_columns)
                order = np.argsort(items, axis=1)
                items = np.take_along_axis(items, order, axis=1)
                grades = np.take_along_axis(self.grades[block], order, axis=1)
                turns = pa.array(self.ids[block].tolist()).take(pa.array(np.repeat(np.arange(len(block)),
                                                                                   items.shape[1])))
                item_text = _lines_item_ids(items)
                handle.write(_lines([turns, "0", item_text, _text(grades.astype(np.int64))], " "))

    def write_run(self, path: Path, depth: int, tag: str, ties: bool, noise: int) -> None:
        """``depth`` items per turn, turn by turn, in rank order; scores from a gamma, ties rounded to 0.1."""
        import pyarrow as pa

        with open(path, "wb") as handle:
            for begin in range(0, len(self.ids), BLOCK_TURNS):
                block = np.arange(begin, min(begin + BLOCK_TURNS, len(self.ids)))
                local = np.random.default_rng([self.seed, noise, begin // BLOCK_TURNS])
                scores = np.sort(local.gamma(2.0, 5.0, size=(len(block), depth)), axis=1)[:, ::-1]
                # Runs favour relevant items a little so that the measures are not all near zero.
                perm = np.argsort(local.random((len(block), depth)) - 0.3 * (np.arange(depth) < self.pooled), axis=1)
                items = _items_of(self.start[block], self.stride[block], perm)
                turns = pa.array(self.ids[block].tolist()).take(pa.array(np.repeat(np.arange(len(block)), depth)))
                ranks = _text(np.tile(np.arange(1, depth + 1), len(block)))
                text = _decimals(scores, 1 if ties else 6)
                handle.write(_lines([turns, "Q0", _lines_item_ids(items), ranks, text, tag], "\t"))


def _lines_item_ids(items: np.ndarray):
    """Item numbers as ids ``Q0000000``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pa.scalar("Q"), _text(items, 7), "")


def make_qrels_and_runs(out: Path, turns: int, depth: int, judged: int, runs: int = 0,
                        multi_depth: int | None = None, seed: int = SEED, ties: bool = True) -> dict[str, Path]:
    """Write the data set (see the module docstring) and return the paths by name."""
    out.mkdir(parents=True, exist_ok=True)
    params = {"turns": turns, "depth": depth, "judged": judged, "runs": runs, "multi_depth": multi_depth,
              "seed": seed, "ties": ties, "version": VERSION}
    manifest = out / "manifest.json"
    paths = {"qrels": out / "qrels.qrel", "run": out / "run.run"}
    if ties:
        paths["run_ties"] = out / "run_ties.run"
    paths.update({f"multi_{i:02d}": out / "multi" / f"run_{i:02d}.run" for i in range(runs)})
    if manifest.exists() and json.loads(manifest.read_text()) == params and all(p.exists() for p in paths.values()):
        return paths
    manifest.unlink(missing_ok=True)
    data = _Data(turns, max(depth, multi_depth or 0), judged, seed)
    data.write_qrels(paths["qrels"])
    data.write_run(paths["run"], depth, "bench", False, 1)
    if ties:
        data.write_run(paths["run_ties"], depth, "bench_ties", True, 2)
    if runs:
        (out / "multi").mkdir(exist_ok=True)
        for i in range(runs):
            data.write_run(paths[f"multi_{i:02d}"], multi_depth or depth, f"multi_{i:02d}", False, 100 + i)
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
    parser.add_argument("--no-ties", dest="ties", action="store_false", help="Leave out run_ties.run.")
    args = parser.parse_args()
    paths = make_qrels_and_runs(Path(args.out), args.turns, args.depth, args.judged, args.runs, args.multi_depth,
                                ties=args.ties)
    for name, path in paths.items():
        print(f"{name}\t{path}\t{path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
