#!/usr/bin/env bash
# `make demo`: a track in miniature, from participants' JSON runs and a crowd CSV to scores and a report.
# Every step is a castregin command you can run yourself; outputs go to out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=out/demo
rm -rf "$OUT"
mkdir -p "$OUT"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

# 1. Participants' JSON runs -> TREC runs over the question bank (new texts get new ids)
step castregin convert questions data/runs/alpha.json data/runs/beta.json --bank data/question_bank.json \
    --turns data/turn_ids.json --bank-out "$OUT/question_bank.json" --out-dir "$OUT/runs"
# 2. The judging pool: each run's top 2 per turn
step castregin pool "$OUT"/runs/alpha.run "$OUT"/runs/beta.run --depth 2 -o "$OUT/pool.txt"
# 3. Crowd CSV -> qrels: gold filtering, mode, mean on ties; an audit with agreement
step castregin aggregate data/crowd/judgments.csv --criteria relevance,novelty,diversity \
    --gold data/crowd/gold.csv --prefix question --out-dir "$OUT/qrels"
step castregin qrels stats "$OUT"/qrels/question_relevance.qrel "$OUT"/qrels/question_relevance_filtered.qrel
# How far the crowd agrees with itself, and how far mode-mean's labels agree with Dawid-Skene's
step castregin agreement data/crowd/judgments.csv --criteria relevance --gold data/crowd/gold.csv
step castregin agreement mode-mean="$OUT/qrels/question_relevance.qrel" dawid-skene=crowd:data/crowd/judgments.csv \
    --criteria relevance --gold data/crowd/gold.csv --method dawid-skene --show pairs,confusion,ranking \
    --runs "$OUT"/runs --top-k 1
# 4. Scores with trec_eval's numbers, on all turns and on the filtered turns
step castregin evaluate "$OUT"/runs/alpha.run "$OUT"/runs/beta.run \
    --qrels all="$OUT/qrels/question_relevance.qrel" --qrels filtered="$OUT/qrels/question_relevance_filtered.qrel"
step castregin evaluate "$OUT"/runs --qrels "$OUT/qrels/question_relevance.qrel" --by topic --ci 95 --seed 1
# ... and as trec_eval prints it, for scripts that parse trec_eval's output
step castregin trec_eval -l2 -m official "$OUT/qrels/question_relevance.qrel" "$OUT"/runs/alpha.run
# What each run brought into the pool, and whether the pool would judge a new run fairly
step castregin pool stats "$OUT"/runs --depth 2
step castregin analyze loro "$OUT"/runs --qrels "$OUT/qrels/question_relevance.qrel" --depth 2
# Each run's score as an interval over the unjudged items of its top 5 (none here: the crowd judged them all)
step castregin analyze holes "$OUT"/runs --qrels "$OUT/qrels/question_relevance.qrel" -m nDCG@5 -m P@5
# 5. Is beta better than alpha? Paired tests, Holm-corrected
step castregin compare "$OUT"/runs/alpha.run "$OUT"/runs/beta.run --qrels "$OUT/qrels/question_relevance.qrel" \
    --baseline "$OUT"/runs/alpha.run
# 6. The HTML report
step castregin report "$OUT"/runs/alpha.run "$OUT"/runs/beta.run --qrels "$OUT/qrels/question_relevance.qrel" \
    --out "$OUT/report"
printf '\nReport: %s\n' "$(pwd)/$OUT/report/index.html"
