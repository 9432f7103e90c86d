"""The trec_eval binary as an oracle, and random runs to feed it.

Where the binary comes from, first found wins:

1. ``$CASTREGIN_TREC_EVAL``: a trec_eval 9.0.8 binary;
2. ``$CASTREGIN_TREC_EVAL_SRC``: a trec_eval 9.0.8 source tree, built here with ``make``;
3. the source distribution of pytrec-eval-terrier that pip downloads, where it carries trec_eval's C
   source (0.5.1 to 0.5.11 do not: their setup.py downloads it at build time, which needs a network).

Without any, the tests that run the binary skip, and the byte-for-byte tests compare with
``tests/cli/data/trec_eval/``: outputs of the real binary, written by :func:`write_golden` (run this
file with ``$CASTREGIN_TREC_EVAL`` set to write them again).
"""

from __future__ import annotations

import gzip
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "data" / "trec_eval"
#: The option sets of the byte-for-byte tests on the CAsT 2022 baselines (all with -m all_trec).
CAST_OPTIONS = ["", "-q", "-c", "-q -c", "-l2", "-q -l2", "-c -l2", "-q -c -l2"]
#: Seeds and options of the random runs whose binary output is kept.
RANDOM_SEEDS = range(6)
RANDOM_OPTIONS = ["-q", "-q -c -l2", "-q -M 5 -J -l2"]


def golden_name(run: str, options: str) -> str:
    flags = "".join(options.split()).replace("-", "_") or "_plain"
    return f"{run}{flags}.txt.gz"


def _build(source: Path, work: Path) -> Path | None:
    if shutil.which("make") is None or not any(shutil.which(cc) for cc in ("cc", "gcc", "clang")):
        return None
    tree = work / "trec_eval_src"
    shutil.copytree(source, tree)
    done = subprocess.run(["make", "-s", "-C", str(tree)], capture_output=True, check=False, timeout=300)
    binary = tree / "trec_eval"
    return binary if done.returncode == 0 and binary.exists() else None


def _source_from_sdist(work: Path) -> Path | None:
    """trec_eval's source from pytrec-eval-terrier's sdist, where it carries one."""
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        "--no-build-isolation", "-q", "-d", str(work), "pytrec-eval-terrier"],
                       capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for archive in work.glob("pytrec_eval*.tar.gz"):
        with tarfile.open(archive) as tar:
            tar.extractall(work / "sdist", filter="data")
        for found in (work / "sdist").rglob("trec_eval.c"):
            return found.parent
    return None


def find_trec_eval(work: Path) -> tuple[Path | None, str]:
    """A trec_eval binary and where it came from, or ``(None, why not)``."""
    if os.environ.get("CASTREGIN_TREC_EVAL"):
        return Path(os.environ["CASTREGIN_TREC_EVAL"]), "$CASTREGIN_TREC_EVAL"
    source = os.environ.get("CASTREGIN_TREC_EVAL_SRC")
    source = Path(source) if source else _source_from_sdist(work)
    if source is None:
        return None, ("no trec_eval binary: no pytrec-eval-terrier sdist with trec_eval's C source "
                      "(0.5.1-0.5.11 carry none: "
                      "their setup.py downloads it); set CASTREGIN_TREC_EVAL to a trec_eval 9.0.8 binary or "
                      "CASTREGIN_TREC_EVAL_SRC to its source tree")
    binary = _build(source, work)
    return (binary, f"built from {source}") if binary else (None, "no C compiler or make to build trec_eval")


def run_binary(binary: Path, options: str, qrels: Path, run: Path) -> bytes:
    return subprocess.run([str(binary), *options.split(), str(qrels), str(run)], capture_output=True,
                          check=True).stdout


def random_pair(seed: int, directory: Path) -> tuple[Path, Path]:
    """A random qrels and run (ties, unjudged items, turns only on one side, labels up to 12)."""
    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for q in range(rng.randint(3, 12)):
        turn = f"{rng.randint(1, 40)}_{q}-{rng.randint(1, 9)}"
        docs = [f"D{rng.randint(0, 60):03d}" for _ in range(rng.randint(1, 40))]
        in_qrels, in_run = rng.random() < 0.9, rng.random() < 0.9
        if in_qrels:
            for doc in sorted(set(docs[: rng.randint(1, len(docs))])):
                label = rng.choice([0, 0, 0, 1, 2, 3, 4, 12])
                qrels_lines.append(f"{turn} 0 {doc} {label}\n")
        if in_run:
            ranked = list(dict.fromkeys(docs))
            for rank, doc in enumerate(ranked, start=1):
                score = round(rng.choice([rng.random(), 0.5, 1.0]), 2)
                run_lines.append(f"{turn} Q0 {doc} {rank} {score} tag{seed}{'x' if rank == len(ranked) else ''}\n")
    if not any(line.split()[0] in {r.split()[0] for r in qrels_lines} for line in run_lines):
        qrels_lines.append(run_lines[0].split()[0] + " 0 D999 1\n")
    qrels, run = directory / f"random{seed}.qrel", directory / f"random{seed}.run"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    return qrels, run


def golden_cases(cast2022: Path | None, directory: Path) -> list[tuple[str, str, Path, Path]]:
    """``(golden file name, trec_eval options, qrels, run)`` of every kept output: the CAsT 2022 baselines
    on the ReGIn qrels (when ``cast2022`` is given) and the random pairs, all with ``-m all_trec``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from reference_runs import write_reference_runs

    cases = []
    if cast2022 is not None:
        qrels = cast2022 / "regin/qrels/question_relevance_all.qrel"
        for path in write_reference_runs(cast2022, directory):
            cases += [(golden_name(path.stem, options), f"{options} -m all_trec", qrels, path)
                      for options in CAST_OPTIONS]
    for seed in RANDOM_SEEDS:
        qrels, run = random_pair(seed, directory)
        cases += [(golden_name(run.stem, options), f"{options} -m all_trec", qrels, run) for options in RANDOM_OPTIONS]
    return cases


#: A slice of CAsT 2022 kept in the repository, with the binary's outputs on it (its README.md says how made).
CAST_SLICE = Path(__file__).resolve().parents[1] / "data" / "cast2022_slice"


def slice_cases(root: Path = CAST_SLICE) -> list[tuple[Path, str, Path, Path]]:
    """``(kept output, trec_eval options, qrels, run)`` of the slice: each baseline run on its
    ``question_relevance_all.qrel`` with ``-m all_trec`` and each of :data:`CAST_OPTIONS`."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from reference_runs import MI_RUNS

    qrels = root / "regin" / "qrels" / "question_relevance_all.qrel"
    return [(root / "trec_eval" / golden_name(name, options), f"{options} -m all_trec", qrels,
             root / "runs" / f"{name}.run") for name in MI_RUNS for options in CAST_OPTIONS]


#: Random qrels with labels below 0 beside others (trec_eval: "in the pool but unjudged"): the options
#: whose binary outputs are kept, by short name.
NEGATIVE_SEEDS = range(4)
NEGATIVE_OPTIONS = {
    "all": "-q -m all_trec",
    "J_l2": "-q -J -l2 -m all_trec",
    "c_l0": "-q -c -l0 -m all_trec",
    "l2": "-q -l2 -m official -m ndcg_cut.5,10 -m success.1,5 -m ndcg",
    "M5": "-q -M 5 -m num_ret -m num_rel_ret -m num_nonrel_judged_ret",
    "lm1": "-q -l -1 -m relstring.30 -m P.5 -m bpref -m infAP",
}
#: Random qrels with labels up to 5,000 (above castregin.limits.MAX_TREC_LABEL): the engine's measures.
LARGE_SEEDS = range(2)
LARGE_OPTIONS = {"engine": "-q -m P.5,10 -m recall.10 -m map -m recip_rank -m Rprec -m ndcg -m ndcg_cut.5,10 "
                           "-m success.1"}


def label_pair(seed: int, directory: Path, labels: tuple[int, ...]) -> tuple[Path, Path]:
    """A random qrels with the given labels (each topic with one of 0 or more) and a run without tied scores."""
    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for q in range(rng.randint(4, 10)):
        turn = f"{rng.randint(1, 40)}_{q}-{rng.randint(1, 9)}"
        docs = [f"D{n:03d}" for n in rng.sample(range(80), rng.randint(2, 40))]
        judged = {doc: rng.choice(labels) for doc in rng.sample(docs, rng.randint(1, len(docs)))}
        judged.update({f"X{n}": rng.choice(labels) for n in range(rng.randint(0, 5))})  # judged, never retrieved
        if all(label < 0 for label in judged.values()):
            judged[next(iter(judged))] = rng.choice([0, 1, 2])
        qrels_lines += [f"{turn} 0 {doc} {label}\n" for doc, label in sorted(judged.items())]
        scores = rng.sample(range(1, 100_000), len(docs))
        run_lines += [f"{turn} Q0 {doc} {rank} {score / 100_000} run{seed}\n"
                      for rank, (doc, score) in enumerate(zip(docs, sorted(scores, reverse=True), strict=True),
                                                          start=1)]
    qrels, run = directory / f"labels{seed}.qrel", directory / f"labels{seed}.run"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    return qrels, run


def negative_pair(seed: int, directory: Path) -> tuple[Path, Path]:
    return label_pair(seed, directory, (0, 0, 0, 1, 2, 3, 12, -1, -1, -2, -5))


def large_pair(seed: int, directory: Path) -> tuple[Path, Path]:
    return label_pair(1000 + seed, directory, (0, 0, 1, 3, 50, 999, 1001, 2500, 5000))


def label_cases(directory: Path) -> list[tuple[str, str, Path, Path]]:
    """``(kept output, trec_eval options, qrels, run)`` of the label pairs (negative and large labels)."""
    cases = []
    for kind, seeds, make, options in (("negative", NEGATIVE_SEEDS, negative_pair, NEGATIVE_OPTIONS),
                                       ("large", LARGE_SEEDS, large_pair, LARGE_OPTIONS)):
        for seed in seeds:
            qrels, run = make(seed, directory)
            cases += [(f"{kind}{seed}_{key}.txt.gz", text, qrels, run) for key, text in options.items()]
    return cases


#: A qrels or run starting with UTF-8's byte-order mark: trec_eval keeps it in the first line's query id (castregin
#: skips it, and says so). The binary's outputs are kept for the plain pair and each file with the mark.
BYTE_ORDER_MARK_OPTIONS = "-q -m official"


def byte_order_mark_cases(directory: Path) -> list[tuple[str, str, Path, Path]]:
    """``(kept output, trec_eval options, qrels, run)``: a label pair as it is (``bom_none``), with the mark before
    the qrels (``bom_qrels``), before the run (``bom_run``)."""
    qrels, run = label_pair(77, directory, (0, 0, 1, 2, 3))
    marked_qrels, marked_run = directory / "marked.qrel", directory / "marked.run"
    marked_qrels.write_bytes(b"\xef\xbb\xbf" + qrels.read_bytes())
    marked_run.write_bytes(b"\xef\xbb\xbf" + run.read_bytes())
    return [(f"bom_{name}.txt.gz", BYTE_ORDER_MARK_OPTIONS, q, r)
            for name, q, r in (("none", qrels, run), ("qrels", marked_qrels, run), ("run", qrels, marked_run))]


def kept_output(name: str) -> bytes:
    return gzip.decompress((GOLDEN / name).read_bytes())


def write_golden(cast2022: Path | None) -> None:
    """Write the binary's outputs into ``tests/cli/data/trec_eval`` (gzip without time or name: stable bytes)."""
    binary = Path(os.environ["CASTREGIN_TREC_EVAL"])
    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cases = golden_cases(cast2022, Path(tmp)) + label_cases(Path(tmp)) + byte_order_mark_cases(Path(tmp))
        for name, options, qrels, run in cases:
            output = run_binary(binary, options, qrels, run)
            (GOLDEN / name).write_bytes(gzip.compress(output, mtime=0))


if __name__ == "__main__":
    write_golden(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "shared/cast2022")
