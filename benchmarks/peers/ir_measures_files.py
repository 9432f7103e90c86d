"""Peer: ir_measures reading the files itself (its default provider order), one process.

    python ir_measures_files.py QRELS RUN

Note that ir_measures' aggregate averages over every qrels turn (like ``trec_eval -c``).
"""

import sys

import ir_measures
from ir_measures import AP, RR, P, nDCG


def main():
    measures = [AP(rel=2), nDCG @ 10, P(rel=2) @ 10, RR(rel=2)]
    qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
    for path in sys.argv[2:]:
        result = ir_measures.calc_aggregate(measures, qrels, ir_measures.read_trec_run(path))
        print(path, " ".join(f"{m}={v:.4f}" for m, v in result.items()))


if __name__ == "__main__":
    main()
