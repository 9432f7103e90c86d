"""Evaluation benchmarks: castregin's CLI against trec_eval's peers, each as a whole process.

Every tool reads the files, evaluates AP, nDCG@10, P@10 and RR at relevance level 2 and prints
the means, in a fresh process; wall time and peak memory (the child's ``ru_maxrss``) are the
medians over ``repeat`` runs. Used by ``benchmarks/run.py``; runnable alone::

    python benchmarks/bench_evaluate.py --data bench-out --repeat 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEERS = HERE / "peers"
MEASURE_ARGS = ["-m", "AP", "-m", "nDCG@10", "-m", "P@10", "-m", "RR"]


@dataclass
class Timing:
    """Medians of wall time (s) and peak resident memory (MB) of one command."""

    workload: str
    tool: str
    seconds: float
    peak_mb: float
    runs: int
    note: str = ""


def measure(command: list[str], repeat: int, warmup: int = 0, env: dict | None = None) -> tuple[float, float]:
    """Median wall time and median peak RSS (MB) of ``command`` run ``repeat`` times in new processes."""
    seconds, peaks = [], []
    for attempt in range(warmup + repeat):
        # Standard error goes to a file, not a pipe: a command that warns more than a pipe holds
        # (64 KB) would block on a pipe nobody reads until it exits.
        with tempfile.TemporaryFile() as errors:
            start = time.perf_counter()
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, env=env)
            _, status, usage = os.wait4(process.pid, 0)
            elapsed = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
            errors.seek(0)
            error = errors.read().decode(errors="replace")
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, command))} failed ({process.returncode}): {error[-2000:]}")
        if attempt >= warmup:
            seconds.append(elapsed)
            peaks.append(usage.ru_maxrss / 1024)  # KB on Linux
    return statistics.median(seconds), statistics.median(peaks)


def castregin_command(runs: list[Path], qrels: Path) -> list[str]:
    """The real CLI, as a user runs it."""
    return [str(REPO / ".venv" / "bin" / "castregin"), "evaluate", *map(str, runs), "--qrels", str(qrels), *MEASURE_ARGS]


def peer_command(python: Path, script: str, qrels: Path, runs: list[Path]) -> list[str]:
    return [str(python), str(PEERS / script), str(qrels), *map(str, runs)]


def single_run(data: dict[str, Path], repeat: int, peer_python: Path | None, label: str) -> list[Timing]:
    """One big run against one qrels: castregin and every peer (and the tied-scores variant)."""
    results = []
    qrels = data["qrels"]
    for run_key, workload in (("run", label), ("run_ties", f"{label}, tied scores")):
        run = data[run_key]
        seconds, peak = measure(castregin_command([run], qrels), repeat)
        results.append(Timing(workload, "castregin", seconds, peak, repeat))
        if peer_python is None:
            continue
        peers = [("pytrec_eval (files read in Python)", "pytrec_eval_files.py", 0)]
        if run_key == "run":
            peers += [("ir_measures", "ir_measures_files.py", 0), ("ranx (numba, warm)", "ranx_files.py", 1)]
        for tool, script, warmup in peers:
            seconds, peak = measure(peer_command(peer_python, script, qrels, [run]), repeat, warmup)
            results.append(Timing(workload, tool, seconds, peak, repeat))
    return results


def many_runs(data: dict[str, Path], repeat: int, peer_python: Path | None, label: str) -> list[Timing]:
    """Many runs against one qrels: castregin in one call, pytrec_eval in a loop in one process."""
    runs = [path for key, path in sorted(data.items()) if key.startswith("multi_")]
    if not runs:
        return []
    results = []
    seconds, peak = measure(castregin_command(runs, data["qrels"]), repeat)
    results.append(Timing(label, "castregin (one call)", seconds, peak, repeat))
    if peer_python is not None:
        seconds, peak = measure(peer_command(peer_python, "pytrec_eval_files.py", data["qrels"], runs), repeat)
        results.append(Timing(label, "pytrec_eval (loop over runs)", seconds, peak, repeat))
    return results


def markdown(timings: list[Timing]) -> str:
    """A markdown table; ratios are to castregin's row of the same workload."""
    lines = ["| workload | tool | wall time (s) | peak memory (MB) | time / castregin | memory / castregin |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    base: dict[str, Timing] = {}
    for t in timings:
        if t.tool.startswith("castregin"):
            base.setdefault(t.workload, t)
    for t in timings:
        ref = base.get(t.workload)
        ratio_time = f"{t.seconds / ref.seconds:.2f}x" if ref else ""
        ratio_mem = f"{t.peak_mb / ref.peak_mb:.2f}x" if ref else ""
        note = f" ({t.note})" if t.note else ""
        lines.append(f"| {t.workload} | {t.tool}{note} | {t.seconds:.2f} | {t.peak_mb:.0f} | {ratio_time} | {ratio_mem} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    sys.path.insert(0, str(HERE))
    from generate import make_qrels_and_runs

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(REPO / "bench-out"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-python", default=str(REPO / ".venv-bench" / "bin" / "python"))
    args = parser.parse_args()
    data = make_qrels_and_runs(Path(args.data), 5000, 1000, 100, runs=20, multi_depth=100)
    peer = Path(args.peer_python) if Path(args.peer_python).exists() else None
    timings = single_run(data, args.repeat, peer, "5,000 turns x 1,000 items")
    timings += many_runs(data, args.repeat, peer, "20 runs x 5,000 turns x 100 items")
    print(markdown(timings))


if __name__ == "__main__":
    main()
