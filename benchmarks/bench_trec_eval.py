"""``castregin trec_eval -m all_trec`` beside the trec_eval 9.0.8 binary (C), on the same files.

    .venv/bin/python benchmarks/bench_trec_eval.py --qrels bench-out/qrels.qrel --run bench-out/run.run --repeat 3

The binary is the one the tests take: ``CASTREGIN_TREC_EVAL=path`` (the benchmark says so, and
measures castregin alone, when it is absent). Both commands run as whole processes, one after the
other in each round (alternating, so that both meet the same moments of a loaded machine); medians
of wall time and peak resident memory (GNU time); their outputs are compared byte for byte once.
``make bench`` (benchmarks/run.py) adds these rows at 5,000 turns x 1,000 items.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_evaluate import Timing, markdown, measure
from bench_startup import trec_eval_binary

CASTREGIN = REPO / ".venv" / "bin" / "castregin"
#: The command's arguments: every measure of trec_eval on qrels, as scripts call it.
ALL_TREC = ["-m", "all_trec"]
C_TOOL = "trec_eval 9.0.8 (C)"
OURS = "castregin trec_eval"


def commands(qrels: Path, run: Path, binary: Path | None) -> dict[str, list[str]]:
    out = {OURS: [str(CASTREGIN), "trec_eval", *ALL_TREC, str(qrels), str(run)]}
    if binary is not None:
        out[C_TOOL] = [str(binary), *ALL_TREC, str(qrels), str(run)]
    return out


def same_output(qrels: Path, run: Path, binary: Path) -> bool:
    """Whether castregin prints the binary's bytes on these files."""
    ours, theirs = (subprocess.run(command, capture_output=True, check=True).stdout
                    for command in commands(qrels, run, binary).values())
    return ours == theirs


def bench_trec_eval(qrels: Path, run: Path, repeat: int, label: str) -> tuple[list[Timing], list[str]]:
    """The rows (castregin, and the binary where it is at hand) and lines saying what they show."""
    binary = trec_eval_binary()
    runs: dict[str, list[tuple[float, float]]] = {tool: [] for tool in commands(qrels, run, binary)}
    for _ in range(repeat):
        for tool, command in commands(qrels, run, binary).items():
            runs[tool].append(measure(command, 1))
    timings = [Timing(label, tool, statistics.median(s for s, _ in values), statistics.median(p for _, p in values),
                      repeat) for tool, values in runs.items()]
    if binary is None:
        absent = ("- trec_eval -m all_trec: the trec_eval binary is absent (set CASTREGIN_TREC_EVAL to its path, as "
                  "for the tests): castregin alone is measured")
        return timings, [absent]
    ours, theirs = timings
    identical = same_output(qrels, run, binary)
    time_ratio, memory_ratio = ours.seconds / theirs.seconds, ours.peak_mb / theirs.peak_mb
    verdict = "met" if time_ratio <= 1 and memory_ratio <= 1 and identical else "NOT met"
    said = (f"- {label}: `castregin trec_eval -m all_trec` takes {time_ratio:.2f}x trec_eval 9.0.8's time and "
            f"{memory_ratio:.2f}x its peak memory; output {'byte-identical' if identical else 'DIFFERS'} "
            f"(target: at most 1x both, identical: {verdict})")
    return timings, [said]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--label", default=None)
    args = parser.parse_args()
    label = args.label or f"{args.run.name} ({args.run.stat().st_size / 1e6:.0f} MB)"
    timings, lines = bench_trec_eval(args.qrels, args.run, args.repeat, label)
    print(markdown(timings))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
