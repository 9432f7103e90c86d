"""The benchmark data generator: every (turn, item) of its runs and qrels is distinct, as trec_eval requires."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("bench_generate", REPO / "benchmarks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_items_are_distinct_within_every_turn():
    generate = _generator()
    # 20,000 turns draw about six strides divisible by 5**5 under an "any odd stride" rule, each of which
    # repeats an id after 320 steps; a stride coprime to 10**6 never repeats within 10**6 steps.
    items = generate._items(np.random.default_rng(7), 20_000, 400)
    ordered = np.sort(items, axis=1)
    assert not (ordered[:, 1:] == ordered[:, :-1]).any()
    assert items.min() >= 0 and items.max() < generate.ITEM_SPACE


def test_a_stride_that_shares_a_factor_with_the_id_space_would_repeat():
    # Why the stride must be coprime: 3 * 5**5 is odd, yet comes back to its start after 320 steps.
    generate = _generator()
    stride = 3 * 5 ** 5
    steps = (stride * np.arange(321)) % generate.ITEM_SPACE
    assert steps[320] == steps[0]


def test_written_files_have_no_duplicate_pairs(tmp_path):
    generate = _generator()
    paths = generate.make_qrels_and_runs(tmp_path, turns=300, depth=200, judged=40, runs=2, multi_depth=50)
    for name, path in paths.items():
        pairs = Counter(tuple(line.split()[i] for i in ((0, 2))) for line in path.read_text().splitlines())
        assert max(pairs.values()) == 1, name
    assert len(paths["run"].read_text().splitlines()) == 300 * 200
