"""Runs whose scores tie as 32-bit floats but not as doubles, and what the two trec_eval 9.0.8 print on them.

"trec_eval 9.0.8" is two programs (castregin/evaluation/ranking.py): the tag ``trec_eval-9.0.8`` of
usnistgov/trec_eval (2023) reads scores as doubles, the tag ``v9.0.8`` (2020) as floats, and
nothing else differs between them but the Windows build (``git log v9.0.8..trec_eval-9.0.8``).
Their outputs on the cases below are kept in ``tests/cli/data/trec_eval_precision/double`` and
``.../float``, gzip without time or name, listed in ``cases.tsv``; the cases' inputs are made again
from their seeds, byte for byte. Run this file to write the outputs again, with

- ``$CASTREGIN_TREC_EVAL``: the tag trec_eval-9.0.8's binary (as in trec_eval_oracle.py);
- ``$CASTREGIN_TREC_EVAL_FLOAT``: the tag v9.0.8's binary (``git archive v9.0.8 | tar -x; make``).

Where a variable is set, test_score_precision.py also checks the kept outputs against that
binary and compares castregin with it live on further seeds.

What a case holds: per topic, clusters of scores that are one 32-bit float and several doubles
(a float and offsets of up to 3/16 of its unit in the last place: under half of it either way,
so each rounds back to the float), dense-retrieval-like decimals (``0.81234567`` beside
``0.81234568``), -0.0 beside 0.0 written five ways, scores at and beyond the largest float
(``3.4028235e38`` and ``3.402823567e38`` round to it, ``3.4028236e38`` and ``1e39`` to infinity),
exact ties, labels 0 to 3 and -1, unjudged items, topics on one side only; lines in ranking order
in some topics and shuffled in others. The preference cases keep the judgments of
trec_eval_prefs_oracle.random_case and put such scores in the run; ``near_levels`` has preference
levels that are one float and distinct doubles (v9.0.8 reads levels as floats too).
"""

from __future__ import annotations

import gzip
import math
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trec_eval_prefs_oracle import random_case

DATA = Path(__file__).resolve().parent / "data" / "trec_eval_precision"
#: The binaries' environment variables and the kept outputs' folders, by score precision.
BINARIES = {"double": "CASTREGIN_TREC_EVAL", "float": "CASTREGIN_TREC_EVAL_FLOAT"}
QRELS_SEEDS = range(8)
QRELS_OPTIONS = ["-q -m all_trec", "-q -c -l2 -m all_trec", "-q -M 5 -J -m all_trec"]
#: Preference formats: (kind, seeds, options).
PREFERENCE_CASES = [("prefs", range(2), "-q -m all_prefs"), ("qrels_prefs", range(2), "-q -m all_prefs"),
                    ("qrels_jg", range(2), "-q -m qrels_jg")]
ZEROS = ["0", "-0", "0.0", "-0.0", "-0.000"]
#: Around the largest float: the first two round to it, the last two to infinity (as floats).
HUGE = ["3.4028235e38", "3.402823567e38", "3.4028236e38", "1e39", "-1e39", "-3.4028236e38"]


def float32(value: float) -> float:
    """``value`` as C's ``(float)`` cast gives it (round to nearest; beyond the largest float, an infinity)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _float_unit(value: float) -> float:
    """The distance from the float ``value`` to the next float away from zero."""
    bits = struct.unpack("I", struct.pack("f", value))[0]
    return abs(struct.unpack("f", struct.pack("I", bits + 1))[0] - value)


def _cluster(rng: random.Random) -> list[str]:
    """Scores (as text) that are one float and distinct doubles."""
    base = float32(rng.choice([rng.uniform(0, 1), rng.uniform(10, 60), rng.uniform(-3, 0), rng.uniform(0, 1e-6)]))
    unit = _float_unit(base)
    values = [base + j * unit / 16 for j in rng.sample(range(4), rng.randint(2, 4))]
    assert all(float32(v) == base for v in values) and len(set(values)) == len(values), values
    return [repr(v) for v in values]


def _dense(rng: random.Random) -> list[str]:
    """Decimals with 8 digits sharing their first 7, as dense retrievers print them."""
    head = f"0.{rng.randint(1000000, 9999999)}"
    return [head + str(digit) for digit in rng.sample(range(10), rng.randint(2, 4))]


def _scores(rng: random.Random, count: int) -> list[str]:
    """``count`` scores as text: clusters, decimals, zeros, huge ones, exact ties and plain values."""
    scores: list[str] = []
    while len(scores) < count:
        kind = rng.random()
        if kind < 0.35:
            scores += _cluster(rng)
        elif kind < 0.55:
            scores += _dense(rng)
        elif kind < 0.65:
            scores += rng.sample(ZEROS, rng.randint(2, 3))
        elif kind < 0.72:
            scores += rng.sample(HUGE, rng.randint(2, 3))
        elif kind < 0.85 and scores:
            scores.append(rng.choice(scores))  # the same text: a tie in both precisions
        else:
            scores.append(f"{rng.uniform(-1, 5):.4f}")
    return scores[:count]


def _run_lines(rng: random.Random, topic: str, docs: list[str], tag: str) -> list[str]:
    scored = list(zip(docs, _scores(rng, len(docs)), strict=True))
    if rng.random() < 0.5:
        scored.sort(key=lambda pair: (float(pair[1]), pair[0]), reverse=True)  # written in ranking order
    else:
        rng.shuffle(scored)
    return [f"{topic} Q0 {doc} {rank} {score} {tag}\n" for rank, (doc, score) in enumerate(scored, start=1)]


def qrels_case(seed: int, directory: Path) -> tuple[Path, Path]:
    """A random qrels and a run whose scores tie as floats but not as doubles (see the module's docstring)."""
    rng = random.Random(f"precision-{seed}")
    qrels_lines, run_lines = [], []
    for q in range(rng.randint(4, 9)):
        topic = f"{rng.randint(1, 40)}_{q}-{rng.randint(1, 9)}"
        docs = [f"D{n:03d}" for n in rng.sample(range(90), rng.randint(3, 40))]
        if rng.random() < 0.9 or q == 0:
            judged = {doc: rng.choice([0, 0, 1, 1, 2, 3, -1]) for doc in rng.sample(docs, rng.randint(1, len(docs)))}
            judged.update({f"X{n}": rng.choice([0, 1, 2]) for n in range(rng.randint(0, 3))})  # never retrieved
            if all(label < 0 for label in judged.values()):
                judged[next(iter(judged))] = 1
            qrels_lines += [f"{topic} 0 {doc} {label}\n" for doc, label in sorted(judged.items())]
        if rng.random() < 0.9 or q == 0:
            run_lines += _run_lines(rng, topic, docs, f"prec{seed}")
    qrels, run = directory / f"precision{seed}.qrel", directory / f"precision{seed}.run"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    return qrels, run


def preference_case(kind: str, seed: int, directory: Path) -> tuple[Path, Path]:
    """trec_eval_prefs_oracle's judgments of ``kind`` and ``seed``, with a run of such scores over their documents."""
    judgments, run = random_case(kind, seed, directory, f"precision_{kind}{seed}")
    rng = random.Random(f"precision-{kind}-{seed}")
    docs: dict[str, set[str]] = {}
    for line in judgments.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        docs.setdefault(fields[0], set()).add(fields[-2])
    lines = []
    for topic, judged in docs.items():
        pool = sorted(judged | {f"N{n}" for n in range(rng.randint(0, 4))})
        lines += _run_lines(rng, topic, rng.sample(pool, rng.randint(1, len(pool))), f"prec{seed}")
    run.write_text("".join(lines), encoding="utf-8")
    return judgments, run


#: Preference levels tied as floats only (1 + 1e-8 is 1 as a float), beside a level 1 and 0.
NEAR_LEVELS = """\
t1 g s a 1.00000002
t1 g s b 1.00000001
t1 g s c 1
t1 g s d 0
t1 g s e 2.5
t1 g s f 2.50000001
t2 g s a 0.30000001
t2 g s b 0.3
t2 g s c 0
"""
NEAR_LEVELS_OPTIONS = "-q -m all_prefs"


def near_levels_case(directory: Path) -> tuple[Path, Path]:
    """Preference levels that tie as floats only, and a run of such scores over their documents."""
    judgments, run = directory / "near_levels.judgments", directory / "near_levels.run"
    judgments.write_text(NEAR_LEVELS)
    rng = random.Random("precision-near-levels")
    lines = []
    for topic, docs in (("t1", "abcdefxy"), ("t2", "abcz")):
        lines += _run_lines(rng, topic, list(docs), "near")
    run.write_text("".join(lines))
    return judgments, run


def output_name(case: str, options: str) -> str:
    flags = "".join(options.split()).replace("-", "_").replace(".", "p")
    return f"{case}{flags}.txt.gz"


def cases(directory: Path) -> list[tuple[str, str, str, Path, Path]]:
    """``(kept output name, -R format, trec_eval options, judgments, run)`` of every kept case."""
    found = []
    for seed in QRELS_SEEDS:
        qrels, run = qrels_case(seed, directory)
        found += [(output_name(f"precision{seed}", options), "qrels", options, qrels, run) for options in QRELS_OPTIONS]
    for kind, seeds, options in PREFERENCE_CASES:
        for seed in seeds:
            judgments, run = preference_case(kind, seed, directory)
            found.append((output_name(f"{kind}{seed}", options), kind, options, judgments, run))
    judgments, run = near_levels_case(directory)
    found.append((output_name("near_levels", NEAR_LEVELS_OPTIONS), "prefs", NEAR_LEVELS_OPTIONS, judgments, run))
    return found


def run_binary(binary: Path, rel_format: str, options: str, judgments: Path, run: Path) -> bytes:
    """The binary's standard output (it must succeed)."""
    done = subprocess.run([str(binary), "-R", rel_format, *options.split(), str(judgments), str(run)],
                          capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{binary} failed ({done.returncode}) on {run}: {done.stderr.decode()}")
    return done.stdout


def kept_output(precision: str, name: str) -> bytes:
    return gzip.decompress((DATA / precision / name).read_bytes())


def write_golden() -> None:
    """Write each binary's outputs (of those whose variable is set) and cases.tsv."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = cases(Path(tmp))
        for precision, variable in BINARIES.items():
            if not os.environ.get(variable):
                print(f"${variable} is not set: the {precision} outputs are left as they are", file=sys.stderr)
                continue
            folder = DATA / precision
            folder.mkdir(parents=True, exist_ok=True)
            for name, rel_format, options, judgments, run in found:
                output = run_binary(Path(os.environ[variable]), rel_format, options, judgments, run)
                (folder / name).write_bytes(gzip.compress(output, mtime=0))
        (DATA / "cases.tsv").write_text("".join(f"{name}\t{rel_format}\t{options}\n"
                                                for name, rel_format, options, _, _ in found))


if __name__ == "__main__":
    write_golden()
