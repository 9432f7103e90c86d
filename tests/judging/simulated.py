"""Seeded simulated crowds with known truth: honest, noisy and spamming workers on a 0-3 scale."""

from __future__ import annotations

import numpy as np
import pandas as pd

SCALE = 4
TRUTH_SHARES = np.array([0.4, 0.25, 0.2, 0.15])  # most clarifying questions are not relevant


def _answer(rng, kind: str, truth: int) -> int:
    if kind == "honest":  # right 80% of the time, else one grade off
        return truth if rng.random() < 0.8 else int(np.clip(truth + rng.choice([-1, 1]), 0, SCALE - 1))
    if kind == "noisy":  # right half of the time, else anywhere within two grades
        return truth if rng.random() < 0.5 else int(np.clip(truth + rng.choice([-2, -1, 1, 2]), 0, SCALE - 1))
    if kind == "lenient":  # a systematic bias: one grade up
        return min(truth + 1, SCALE - 1) if rng.random() < 0.85 else truth
    return int(rng.integers(SCALE))  # spammer: uniform at random


def simulated_crowd(seed: int, items: int = 300, per_item: int = 5,
                    kinds=(("honest", 6), ("noisy", 4), ("lenient", 2), ("spammer", 4))):
    """(judgments frame with worker_id, turn_id, item_id, relevance; truth Series by (turn_id, item_id)).

    Each item is judged by ``per_item`` distinct workers drawn at random; a turn holds five items.
    """
    rng = np.random.default_rng(seed)
    workers = [(f"W{k:02d}{kind[0]}", kind) for k, kind in enumerate(k for k, n in kinds for _ in range(n))]
    truth = rng.choice(SCALE, size=items, p=TRUTH_SHARES)
    rows = []
    for item in range(items):
        turn = f"{1 + item // 50}_{1 + (item // 5) % 10}"
        for w in rng.choice(len(workers), size=per_item, replace=False):
            name, kind = workers[w]
            rows.append((name, turn, f"Q{item:04d}", _answer(rng, kind, int(truth[item]))))
    frame = pd.DataFrame(rows, columns=["worker_id", "turn_id", "item_id", "relevance"])
    keys = pd.MultiIndex.from_arrays([[f"{1 + i // 50}_{1 + (i // 5) % 10}" for i in range(items)],
                                      [f"Q{i:04d}" for i in range(items)]], names=["turn_id", "item_id"])
    return frame, pd.Series(truth, index=keys, name="truth")
