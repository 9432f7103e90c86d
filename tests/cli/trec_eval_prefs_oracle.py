"""Random preference judgments, judgment-group qrels and runs, and the trec_eval binary's output on them.

The binary is found as in trec_eval_oracle.py (``$CASTREGIN_TREC_EVAL`` first). Running this file with
``$CASTREGIN_TREC_EVAL`` set writes the kept cases into ``tests/cli/data/trec_eval_prefs/``: each case's
inputs (``<case>.judgments``, ``<case>.run``) and, for each option set, the binary's standard output
(``<case><options>.txt.gz``, gzip without time or name), listed in ``cases.tsv``. test_trec_eval_prefs.py
compares castregin with these files, and with the binary live on fresh cases when it is at hand.

What the generator makes (all of it input trec_eval evaluates without failing): ties of scores (which
trec_eval breaks by document id, ascending for preferences and descending for qrels), documents the
run retrieves and nobody judged, judged documents it does not retrieve, topics only in the run or only
in the judgments, several judgment groups per topic (agreeing or not), groups of one subgroup (levels
as classes) and of several (partial orders, consistent within the group), levels 0 and below 0,
level -3 on top of a group (trec_eval's "no level yet" value), decimal levels, labels below 0 in
qrels_jg, a topic with one judged document (no preference), non-ASCII document ids.
"""

from __future__ import annotations

import gzip
import os
import random
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "trec_eval_prefs"

#: Option sets of the kept outputs, per format (each with -q or -n so that the topics' lines show).
PREFS_OPTIONS = ["-q -m all_prefs", "-q -c -m prefs", "-q -M 4 -m all_prefs",
                 "-n -q -m prefs_pair -m prefs_avgjg_Rnonrel_ret -J -l 3"]
JG_OPTIONS = ["-q -m qrels_jg", "-q -c -l 2 -m qrels_jg", "-q -J -M 6 -m qrels_jg",
              "-q -m P_avgjg.1,3,7 -m Rprec_mult_avgjg.0.5,1,1.25,3 -m map_avgjg -m runid -n"]
#: Written by hand: (format, judgments, run). Levels below 0 beside 0 (the lowest class large enough for
#: the Rnonrel recount), a document at 0, then -1, then 2 in three subgroups (trec_eval checks only the
#: level before), -3 on top of a group of several classes (trec_eval then leaves the lowest class out)
#: and alone, the same scores in a different order of ids.
HAND_CASES = {
    "edge_levels": ("prefs", """\
t1 g s a 2
t1 g s b 0
t1 g s c -1
t1 g s d -1
t1 g s e -1
t1 g s f 3
t2 g s1 a 0
t2 g s2 a -1
t2 g s3 a 2
t2 g s1 b 1
t2 g s2 b 5
t2 g s3 c 1
t2 h s a 4
t2 h s c 0
t2 h s b 0
t3 g s a -3
t3 g s b -3
t3 g s c -4
t3 g s d -5
t3 k s a 1
t3 k s b 0
t4 g s a -3
t4 g s b -4
t5 g s b 1
t5 g s a 1
t5 g s c 0
""", """\
t1 Q0 c 1 5 r
t1 Q0 a 2 4 r
t1 Q0 d 3 4 r
t1 Q0 x 4 3 r
t1 Q0 e 5 1 r
t2 Q0 b 1 1 r
t2 Q0 a 2 1 r
t3 Q0 d 1 1 r
t3 Q0 b 1 0.5 r
t4 Q0 b 1 0.5 r
t5 Q0 c 1 2 r
t5 Q0 b 2 2 r
t5 Q0 a 3 2 r
t5 Q0 z 4 2 end
"""),
}
#: The kept cases: (case name, format, seed or None for a hand case).
KEPT_CASES = ([(f"prefs{seed}", "prefs", seed) for seed in range(12)]
              + [(f"qrels_prefs{seed}", "qrels_prefs", seed) for seed in range(6)]
              + [(f"qrels_jg{seed}", "qrels_jg", seed) for seed in range(8)]
              + [(name, kind, None) for name, (kind, _, _) in HAND_CASES.items()])


def options_for(kind: str) -> list[str]:
    return JG_OPTIONS if kind == "qrels_jg" else PREFS_OPTIONS


def output_name(case: str, options: str) -> str:
    flags = "".join(options.split()).replace("-", "_").replace(".", "p").replace(",", "c")
    return f"{case}{flags}.txt.gz"


def _docs(rng: random.Random, count: int) -> list[str]:
    names = [f"D{rng.randint(0, 40):02d}" for _ in range(count)]
    if rng.random() < 0.15:
        names.append(rng.choice(["dé", "DÉ9", "D\u00e910", "Ωmega"]))
    return sorted(set(names))


def _class_levels(rng: random.Random, docs: list[str]) -> dict[str, float]:
    """Levels of one subgroup: ties, 0 for non-relevant, sometimes decimals, a negative level, or -3 on top.

    In a group with relevant documents, the non-relevant ones share one level (0 or one negative): with
    levels 0 and below 0 side by side, trec_eval's Rnonrel measures read past their arrays (castregin
    refuses that, tested apart).
    """
    shape = rng.random()
    if shape < 0.06:
        return {doc: rng.choice([-3.0, -5.0, -7.0]) for doc in docs}  # -3 on top, or all below it
    nonrel = rng.choice([0.0, 0.0, 0.0, -1.0, -2.0])
    top = rng.choice([1, 2, 3, 5])
    levels = {}
    for doc in docs:
        if rng.random() < 0.35:
            levels[doc] = nonrel
        else:
            levels[doc] = float(rng.randint(1, top)) + (rng.choice([0.0, 0.5]) if rng.random() < 0.2 else 0.0)
    return levels


def _partial_order(rng: random.Random, docs: list[str]) -> dict[str, dict[str, float]]:
    """Subgroups of one group that all agree with a hidden order of its documents (so no cycle).

    Each subgroup maps the hidden value through its own increasing function, which may send documents
    below 0; the non-relevant ones (hidden 0) get level 0 or a negative level, the others never 0 (a
    document at 0 in one subgroup and above 0 in the next is an error for trec_eval).
    """
    hidden = {doc: rng.randint(0, 6) for doc in docs}
    subgroups = {}
    for s in range(rng.randint(2, 4)):
        members = rng.sample(docs, rng.randint(1, len(docs)))
        scale, shift = rng.choice([1.0, 2.0, 0.5]), rng.choice([0, 0, 0, 1, 2])
        levels = {}
        for doc in members:
            level = (hidden[doc] - shift) * scale
            levels[doc] = -0.25 * scale if level == 0 and hidden[doc] > 0 else level
        subgroups[f"s{s}"] = levels
    return subgroups


def _run_lines(rng: random.Random, topic: str, judged: list[str], seed: int, last: bool) -> list[str]:
    pool = sorted(set(rng.sample(judged, rng.randint(0, len(judged))) + _docs(rng, rng.randint(0, 8))))
    rng.shuffle(pool)
    lines = []
    for rank, doc in enumerate(pool, start=1):
        score = rng.choice([round(rng.uniform(-2, 5), 2), 1.0, 1.0, 2.5, 0.0])
        lines.append(f"{topic} Q0 {doc} {rank} {score} tag{seed}\n")
    if last and lines:
        lines[-1] = lines[-1].replace(f"tag{seed}", f"last{seed}")
    return lines


def random_case(kind: str, seed: int, directory: Path, name: str | None = None) -> tuple[Path, Path]:
    """A random judgments file of ``kind`` (prefs, qrels_prefs, qrels_jg) and a run that shares topics with it."""
    rng = random.Random(f"{kind}-{seed}")
    judgment_lines, run_lines = [], []
    topics = [f"{rng.randint(1, 60)}.t{t}" for t in range(rng.randint(2, 7))]
    for t, topic in enumerate(topics):
        docs = _docs(rng, rng.randint(1, 14))
        groups = {}
        for g in range(rng.choice([1, 1, 2, 3, 4])):
            members = rng.sample(docs, rng.randint(1, len(docs)))
            if kind == "prefs" and len(members) > 1 and rng.random() < 0.4:
                groups[f"u{g}"] = _partial_order(rng, members)
            elif kind == "qrels_jg":
                groups[f"u{g}"] = {"0": {doc: float(rng.choice([-2, -1, 0, 0, 1, 1, 2, 3])) for doc in members}}
            else:
                groups[f"u{g}"] = {"0": _class_levels(rng, members)}
        for group, subgroups in groups.items():
            for subgroup, levels in subgroups.items():
                for doc, level in levels.items():
                    shown = f"{level:g}" if kind == "qrels_jg" or rng.random() < 0.5 else f"{level}"
                    if kind == "prefs":
                        judgment_lines.append(f"{topic}\t{group}\t{subgroup}\t{doc}\t{shown}\n")
                    else:
                        judgment_lines.append(f"{topic} {group} {doc} {shown}\n")
        if rng.random() < 0.85:
            run_lines += _run_lines(rng, topic, docs, seed, t == len(topics) - 1)
    run_lines += _run_lines(rng, "999.only_run", ["X1", "X2"], seed, False)
    if not any(line.split()[0] in topics for line in run_lines):
        run_lines += _run_lines(rng, topics[0], ["D00"], seed, False) or [f"{topics[0]} Q0 D00 1 1.0 tag{seed}\n"]
    rng.shuffle(judgment_lines)
    rng.shuffle(run_lines)
    name = name or f"{kind}{seed}"
    judgments, run = directory / f"{name}.judgments", directory / f"{name}.run"
    judgments.write_text("".join(judgment_lines), encoding="utf-8")
    run.write_text("".join(run_lines), encoding="utf-8")
    return judgments, run


def run_binary(binary: Path, kind: str, options: str, judgments: Path, run: Path) -> bytes:
    """The binary's standard output for ``trec_eval -R kind options judgments run`` (it must succeed)."""
    done = subprocess.run([str(binary), "-R", kind, *options.split(), str(judgments), str(run)],
                          capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"trec_eval failed ({done.returncode}) on {judgments}: {done.stderr.decode()}")
    return done.stdout


def write_golden() -> None:
    """Write the kept cases and the binary's outputs into ``tests/cli/data/trec_eval_prefs``."""
    binary = Path(os.environ["CASTREGIN_TREC_EVAL"])
    DATA.mkdir(parents=True, exist_ok=True)
    listing = []
    for name, kind, seed in KEPT_CASES:
        if seed is None:
            judgments, run = DATA / f"{name}.judgments", DATA / f"{name}.run"
            judgments.write_text(HAND_CASES[name][1])
            run.write_text(HAND_CASES[name][2])
        else:
            judgments, run = random_case(kind, seed, DATA, name)
        for options in options_for(kind):
            output = run_binary(binary, kind, options, judgments, run)
            (DATA / output_name(name, options)).write_bytes(gzip.compress(output, mtime=0))
            listing.append(f"{name}\t{kind}\t{options}\t{output_name(name, options)}\n")
    (DATA / "cases.tsv").write_text("".join(listing))


if __name__ == "__main__":
    sys.exit(write_golden())
