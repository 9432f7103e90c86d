"""trectools 0.0.50 (``TrecEval.get_rbp``, pypi.org/project/trectools) as RBP's oracle: its values kept in
``data/rbp_trectools.json.xz`` for the cases below, so that the tests need neither trectools nor its
dependencies. ``python tests/evaluation/rbp_oracle.py`` with trectools importable writes them again.

trectools ranks ties by item id ascending (trec_eval: descending) and counts a label below 0 as judged
(trec_eval: unjudged), and its residual adds ``p^depth`` for the depth asked: the cases have distinct
scores, labels 0-3, and at least ``k`` items in every topic, evaluated at depth ``k``; values are per
topic (None where trectools gives NaN: a topic with no relevant or no unjudged item in its top k).
"""

from __future__ import annotations

import json
import lzma
import random
import sys
from pathlib import Path

KEPT = Path(__file__).resolve().parent / "data" / "rbp_trectools.json.xz"
CASES = 40


def rbp_case(seed: int) -> tuple[str, str, int, float]:
    """(qrels text, run text, k, p)."""
    rng = random.Random(20_000 + seed)
    qrels, run = [], []
    sizes = []
    for topic in rng.sample(range(1, 100), rng.randint(1, 8)):
        items = rng.sample(range(80), rng.randint(5, 30))
        sizes.append(len(items))
        scores = rng.sample(range(1, 1000), len(items))
        qrels.extend(f"{topic} 0 d{item} {rng.choice([0, 0, 1, 2, 3])}" for item in items[:rng.randint(0, len(items))])
        qrels.append(f"{topic} 0 x{seed} 1")  # never retrieved
        for rank, (item, score) in enumerate(zip(items, scores, strict=True), start=1):
            run.append(f"{topic} Q0 d{item} {rank} {score / 1000} rbp{seed}")
    k = rng.randint(1, min(sizes))
    p = rng.choice([0.5, 0.8, 0.95])
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", k, p


def trectools_values(qrels: Path, run: Path, k: int, p: float) -> dict[str, list]:
    """``{topic: [rbp, residual]}`` by trectools (binary relevance: label above 0, no tie averaging)."""
    import math

    from trectools import TrecEval, TrecQrel, TrecRun

    evaluation = TrecEval(TrecRun(str(run)), TrecQrel(str(qrels)))
    rbp, residual = evaluation.get_rbp(p=p, depth=k, per_query=True, average_ties=False)
    name = rbp.columns[0]
    out = {}
    for topic in sorted({line.split()[0] for line in run.read_text().splitlines()}):
        by_id = {str(query): value for query, value in rbp[name].items()}
        left_by_id = {str(query): value for query, value in residual[name].items()}
        value = by_id.get(topic, 0.0)  # trectools leaves out a topic with nothing relevant
        left = left_by_id.get(topic, math.nan)
        out[topic] = [float(value), None if math.isnan(left) else float(left)]
    return out


if __name__ == "__main__":
    import tempfile

    outputs = {}
    with tempfile.TemporaryDirectory() as work:
        for seed in range(CASES):
            qrels_text, run_text, k, p = rbp_case(seed)
            qrels, run = Path(work) / "q", Path(work) / "r"
            qrels.write_text(qrels_text)
            run.write_text(run_text)
            outputs[str(seed)] = trectools_values(qrels, run, k, p)
    KEPT.write_bytes(lzma.compress(json.dumps(outputs, sort_keys=True).encode(), preset=9))
    sys.stdout.write(f"{KEPT} ({KEPT.stat().st_size} bytes)\n")
