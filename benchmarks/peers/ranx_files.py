"""Peer: ranx (numba) reading TREC files, one process.

    python ranx_files.py QRELS RUN

ranx counts any positive label as relevant (it has no relevance level), so its AP, P and RR can
differ from trec_eval -l2; the benchmark measures its time and memory on the same work.
"""

import sys

from ranx import Qrels, Run, evaluate


def main():
    qrels = Qrels.from_file(sys.argv[1], kind="trec")
    for path in sys.argv[2:]:
        run = Run.from_file(path, kind="trec")
        result = evaluate(qrels, run, ["map", "ndcg@10", "precision@10", "mrr"])
        print(path, " ".join(f"{m}={v:.4f}" for m, v in result.items()))


if __name__ == "__main__":
    main()
