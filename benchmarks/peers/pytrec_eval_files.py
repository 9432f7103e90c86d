"""Peer: pytrec_eval (trec_eval's C code) on files read into dicts in Python, one process.

    python pytrec_eval_files.py QRELS RUN [RUN...]

Evaluates AP, nDCG@10, P@10 and RR at relevance level 2 and prints the means over the turns in
both qrels and run, as ``trec_eval -l2`` does. Several runs are evaluated in a loop against one
evaluator, the way a pytrec_eval user scores many runs.
"""

import sys

import pytrec_eval

MEASURES = {"map": "AP", "ndcg_cut_10": "nDCG@10", "P_10": "P@10", "recip_rank": "RR"}


def read(path, value):
    table = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if fields:
                table.setdefault(fields[0], {})[fields[2]] = value(fields)
    return table


def main():
    qrels = read(sys.argv[1], lambda f: int(f[3]))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=2)
    for path in sys.argv[2:]:
        scores = evaluator.evaluate(read(path, lambda f: float(f[4])))
        turns = sorted(scores)
        means = {name: sum(scores[t][m] for t in turns) / len(turns) for m, name in MEASURES.items()}
        print(path, " ".join(f"{name}={value:.4f}" for name, value in means.items()))


if __name__ == "__main__":
    main()
