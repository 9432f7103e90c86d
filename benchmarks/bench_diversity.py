"""``castregin ndeval`` and ``castregin gdeval`` beside ndeval.c and gdeval.pl, on the same files.

    .venv/bin/python benchmarks/bench_diversity.py --topics 5000 --repeat 3

The originals are the ones the tests take (tests/cli/gdeval_ndeval_oracle.py): ``CASTREGIN_NDEVAL``, an
ndeval binary built from the TREC Web track 2014 repository's ``src/eval/ndeval.c`` as its Makefile
builds it (``gcc -o ndeval ndeval.c -lm``), and ``CASTREGIN_GDEVAL``, that repository's
``src/eval/gdeval.pl``, run with ``perl``. Without them castregin alone is measured, and the benchmark
says so. Each pair runs alternately, whole processes, medians of wall time and peak resident memory;
their outputs are compared byte for byte once.

The data (deterministic): a run of ``topics`` x 1,000 items (numeric topic ids, as the originals need,
Web-track-like document ids: 231 MB at 5,000 topics), a diversity qrels judging 100 items a topic (70 of
the run's top 700 and 30 it lacks) for 3 to 6 subtopics each (labels 0-2), and an ordinary qrels (``topic
0 item label``, labels 0-4) of the same items for gdeval.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_evaluate import Timing, alternately, run_alone
from generate import _decimals, _lines, _text

CASTREGIN = REPO / ".venv" / "bin" / "castregin"
DEPTH = 1000
JUDGED_RETRIEVED, JUDGED_MISSED = 70, 30
#: Topics written at a time.
BLOCK = 500
VERSION = 1


def _doc_ids(numbers: np.ndarray):
    """Numbers as ClueWeb12-like ids ``clueweb12-0001wb-37-12345``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    numbers = numbers.ravel()
    return pc.binary_join_element_wise(
        pa.scalar("clueweb12-"), _text(numbers // 10**7 % 10**4, 4), pa.scalar("wb-"), _text(numbers // 10**5 % 100, 2),
        pa.scalar("-"), _text(numbers % 10**5, 5), "")


def write_diversity_data(out: Path, topics: int) -> dict[str, Path]:
    """The run, the diversity qrels and gdeval's qrels (see the module docstring); kept while unchanged."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"run": out / f"web_{topics}.run", "qrels": out / f"web_{topics}.div.qrel",
             "gdeval_qrels": out / f"web_{topics}.qrel"}
    manifest = out / f"web_{topics}.json"
    params = {"topics": topics, "depth": DEPTH, "version": VERSION}
    if manifest.exists() and json.loads(manifest.read_text()) == params and all(p.exists() for p in paths.values()):
        return paths
    with open(paths["run"], "wb") as run, open(paths["qrels"], "wb") as qrels, open(paths["gdeval_qrels"], "wb") as gd:
        for begin in range(0, topics, BLOCK):
            count = min(BLOCK, topics - begin)
            rng = np.random.default_rng([20141, begin])
            ids = np.arange(begin + 1, begin + count + 1)
            # Distinct documents per topic: a random start and an odd stride through 10^11 numbers.
            start = rng.integers(0, 10**11, size=(count, 1))
            stride = rng.integers(0, 10**6, size=(count, 1)) * 10 + 1
            docs = (start + stride * np.arange(DEPTH + JUDGED_MISSED)) % 10**11
            scores = np.sort(rng.gamma(2.0, 5.0, size=(count, DEPTH)), axis=1)[:, ::-1]
            topic_text = _text(np.repeat(ids, DEPTH))
            ranks = _text(np.tile(np.arange(1, DEPTH + 1), count))
            run.write(_lines([topic_text, "Q0", _doc_ids(docs[:, :DEPTH]), ranks, _decimals(scores, 6), "web"], " "))
            judged = np.concatenate([docs[:, :700:10], docs[:, DEPTH:]], axis=1)
            subtopics = rng.integers(3, 7, size=count)
            for k in range(count):
                width = judged.shape[1]
                labels = rng.choice(3, size=(subtopics[k], width), p=[0.7, 0.2, 0.1])
                qrels.write(_lines([_text(np.full(width * subtopics[k], ids[k])),
                                    _text(np.repeat(np.arange(1, subtopics[k] + 1), width)),
                                    _doc_ids(np.tile(judged[k], subtopics[k])), _text(labels.ravel())], " "))
            grades = rng.choice(5, size=judged.shape, p=[0.5, 0.2, 0.15, 0.1, 0.05])
            gd.write(_lines([_text(np.repeat(ids, judged.shape[1])), "0", _doc_ids(judged), _text(grades.ravel())],
                            " "))
    manifest.write_text(json.dumps(params))
    return paths


def original(tool: str) -> list[str] | None:
    """The original's command, from the variable the tests read, or None."""
    sys.path.insert(0, str(REPO / "tests" / "cli"))
    from gdeval_ndeval_oracle import live_command

    return live_command(tool)


def _pair(label: str, ours: list[str], theirs: list[str] | None, their_name: str, repeat: int,
          time_target: float, memory_target: float) -> tuple[list[Timing], list[str]]:
    timings = alternately(label, {f"castregin {ours[1]}": ours, **({their_name: theirs} if theirs else {})}, repeat)
    if theirs is None:
        absent = f"- {label}: {their_name} is not configured (set its variable, as for the tests): castregin alone"
        return timings, [absent]
    same = subprocess.run(ours, capture_output=True, check=True).stdout == subprocess.run(
        theirs, capture_output=True, check=True).stdout
    time_ratio, memory_ratio = timings[0].seconds / timings[1].seconds, timings[0].peak_mb / timings[1].peak_mb
    met = time_ratio <= time_target and memory_ratio <= memory_target and same
    said = (f"- {label}: `castregin {ours[1]}` takes {time_ratio:.2f}x {their_name}'s time and {memory_ratio:.2f}x "
            f"its peak memory; output {'byte-identical' if same else 'DIFFERS'} (target: at most {time_target:g}x and "
            f"{memory_target:g}x, identical: {'met' if met else 'NOT met'})")
    return timings, [said]


def bench_diversity(out: Path, repeat: int, quick: bool) -> tuple[list[Timing], list[str]]:
    """ndeval beside ndeval.c and gdeval beside gdeval.pl, and lines saying what they show."""
    topics = 500 if quick else 5000
    paths = write_diversity_data(out, topics)
    size = paths["run"].stat().st_size / 1e6
    nd = original("ndeval")
    gd = original("gdeval")
    rows, notes = _pair(f"ndeval, {topics:,} topics x {DEPTH:,} items ({size:.0f} MB run)",
                        [str(CASTREGIN), "ndeval", str(paths["qrels"]), str(paths["run"])],
                        [*nd, str(paths["qrels"]), str(paths["run"])] if nd else None, "ndeval.c", repeat, 1.5, 2)
    more, said = _pair(f"gdeval, {topics:,} topics x {DEPTH:,} items ({size:.0f} MB run)",
                       [str(CASTREGIN), "gdeval", str(paths["gdeval_qrels"]), str(paths["run"])],
                       [*gd, str(paths["gdeval_qrels"]), str(paths["run"])] if gd else None, "gdeval.pl", repeat,
                       1.0, 1.5)
    if quick:  # numpy and pyarrow, loaded, weigh on the small inputs: the targets are the full size's
        notes = [note.replace("(target:", "(target at 5,000 topics:") for note in notes]
        said = [note.replace("(target:", "(target at 5,000 topics:") for note in said]
    return rows + more, notes + said


def main() -> None:
    run_alone(__doc__.split("\n")[0], bench_diversity, "500 topics instead of 5,000.")


if __name__ == "__main__":
    main()
