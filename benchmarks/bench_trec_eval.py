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


def commands(qrels: Path, run: Path, binary: Path | None, per_query: bool = False) -> dict[str, list[str]]:
    options = ["-q", *ALL_TREC] if per_query else ALL_TREC
    out = {OURS: [str(CASTREGIN), "trec_eval", *options, str(qrels), str(run)]}
    if binary is not None:
        out[C_TOOL] = [str(binary), *options, str(qrels), str(run)]
    return out


def same_output(qrels: Path, run: Path, binary: Path, per_query: bool = False) -> bool:
    """Whether castregin prints the binary's bytes on these files."""
    ours, theirs = (subprocess.run(command, capture_output=True, check=True).stdout
                    for command in commands(qrels, run, binary, per_query).values())
    return ours == theirs


def bench_trec_eval(qrels: Path, run: Path, repeat: int, label: str) -> tuple[list[Timing], list[str]]:
    """The rows (castregin, and the binary where it is at hand, with and without ``-q``) and lines saying what they
    show."""
    binary = trec_eval_binary()
    plain, per_query = commands(qrels, run, binary), commands(qrels, run, binary, per_query=True)
    tools = {**{(tool, False): command for tool, command in plain.items()},
             **{(tool, True): command for tool, command in per_query.items()}}
    runs: dict[tuple[str, bool], list[tuple[float, float]]] = {key: [] for key in tools}
    for _ in range(repeat):
        for key, command in tools.items():
            runs[key].append(measure(command, 1))
    medians = {key: (statistics.median(s for s, _ in values), statistics.median(p for _, p in values))
               for key, values in runs.items()}
    timings = [Timing(f"{label}{', -q' if q else ''}", tool, *medians[tool, q], repeat) for q in (False, True)
               for tool in plain]
    lines = subprocess.run(per_query[OURS], capture_output=True, check=True).stdout.count(b"\n")
    extra = {tool: (medians[tool, True][0] - medians[tool, False][0]) / lines * 1e9 for tool in plain}
    if binary is None:
        absent = ("- trec_eval -m all_trec: the trec_eval binary is absent (set CASTREGIN_TREC_EVAL to its path, as "
                  f"for the tests): castregin alone is measured; -q adds {extra[OURS]:.0f} ns a line")
        return timings, [absent]
    ours, theirs = timings[0], timings[1]
    identical = same_output(qrels, run, binary) and same_output(qrels, run, binary, per_query=True)
    time_ratio, memory_ratio = ours.seconds / theirs.seconds, ours.peak_mb / theirs.peak_mb
    verdict = "met" if time_ratio <= 1 and memory_ratio <= 1 and identical else "NOT met"
    said = (f"- {label}: `castregin trec_eval -m all_trec` takes {time_ratio:.2f}x trec_eval 9.0.8's time and "
            f"{memory_ratio:.2f}x its peak memory; output {'byte-identical' if identical else 'DIFFERS'}, with and "
            f"without -q (target: at most 1x both, identical: {verdict}); -q's {lines:,} lines add "
            f"{extra[OURS]:.0f} ns a line to castregin's time, {extra[C_TOOL]:.0f} to the binary's")
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
