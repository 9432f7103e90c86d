"""Evaluation benchmarks: castregin's CLI against trec_eval's peers, each as a whole process.

Every tool reads the files, evaluates AP, nDCG@10, P@10 and RR at relevance level 2 and prints
the means, in a fresh process; wall time and peak memory (the child's ``ru_maxrss``) are the
medians over ``repeat`` runs. Used by ``benchmarks/run.py``; runnable alone::

    python benchmarks/bench_evaluate.py --data bench-out --repeat 3
    python benchmarks/bench_evaluate.py --scaling [--quick] [--write-table]   # the scaling rows alone

The scaling rows (:func:`scaling_section`) time one run of 1,000 to 50,000 turns x 1,000 items
against 100 judged items a turn: castregin, pytrec_eval, ir_measures, and pyarrow's CSV reader
reading the three columns evaluation needs (``peers/pyarrow_floor.py``), the floor of any tool
that parses with pyarrow. Each size is generated into a temporary directory and deleted after.
"""

from __future__ import annotations

import argparse
import contextlib
import math
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
#: The documentation page whose scaling table benchmarks/run.py rewrites.
SPEED_PAGE = REPO / "docs" / "speed.md"
#: Turns of the scaling rows (x 1,000 items, 100 judged a turn); ``--quick`` stops at 5,000.
SCALING_TURNS = (1_000, 5_000, 20_000, 50_000)
QUICK_SCALING_TURNS = (1_000, 5_000)
#: From this size on, each command of the scaling rows runs once: they take minutes.
ONCE_FROM_TURNS = 20_000
#: The Speed page's scaling table lies between these lines; benchmarks/run.py writes it there.
SCALING_MARKERS = ("<!-- scaling table: written by benchmarks/run.py -->", "<!-- end of scaling table -->")
FLOOR = "pyarrow, three columns (floor)"
#: Larger runs are also scored against the qrels of this many turns, so that the qrels do not grow.
FIXED_QRELS_TURNS = 5_000
FIXED_QRELS_TOOL = f"castregin, qrels of the first {FIXED_QRELS_TURNS:,} turns"


@dataclass
class Timing:
    """Medians of wall time (s) and peak resident memory (MB) of one command."""

    workload: str
    tool: str
    seconds: float
    peak_mb: float
    runs: int
    note: str = ""


#: GNU time, which reports its child's peak memory alone (see :func:`measure`).
GNU_TIME = Path("/usr/bin/time")


def _warm(paths) -> None:
    """Read the files once, so that every tool finds them in the page cache (some machines evict cold
    pages of large files early, and the tool measured next would pay for reading the disk)."""
    for path in paths:
        with contextlib.suppress(OSError), open(path, "rb") as handle:
            while handle.read(1 << 24):
                pass


def _environment(env: dict | None) -> dict:
    """The measured processes' environment: as the caller's, but free to cache bytecode (a sandbox that sets
    PYTHONDONTWRITEBYTECODE would make every start-up compile castregin's sources again)."""
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(command: list[str], repeat: int, warmup: int = 0, env: dict | None = None) -> tuple[float, float]:
    """Median wall time and median peak RSS (MB) of ``command`` run ``repeat`` times in new processes.

    Peak memory is read by GNU time where it is installed: a child forked from this process counts
    this process's resident pages until it executes the command (hundreds of MB once the data are
    generated here), which its own ``ru_maxrss`` would include; GNU time, a small process, forks
    the command itself. The command's input files (its arguments that are files) are read once
    before each run, so that each tool finds them in the page cache.
    """
    seconds, peaks = [], []
    env = _environment(env)
    inputs = [argument for argument in map(str, command[1:]) if os.path.isfile(argument)]
    for attempt in range(warmup + repeat):
        _warm(inputs)
        # Standard error goes to a file, not a pipe: a command that warns more than a pipe holds
        # (64 KB) would block on a pipe nobody reads until it exits.
        with tempfile.TemporaryFile() as errors, tempfile.NamedTemporaryFile("r") as report:
            timed = [str(GNU_TIME), "-f", "%M", "-o", report.name, *map(str, command)] if GNU_TIME.exists() else command
            start = time.perf_counter()
            process = subprocess.Popen(timed, stdout=subprocess.DEVNULL, stderr=errors, env=env)
            _, status, usage = os.wait4(process.pid, 0)
            elapsed = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
            errors.seek(0)
            error = errors.read().decode(errors="replace")
            peak_kb = int(report.read().split()[-1]) if timed is not command else usage.ru_maxrss  # KB on Linux
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, command))} failed ({process.returncode}): {error[-2000:]}")
        if attempt >= warmup:
            seconds.append(elapsed)
            peaks.append(peak_kb / 1024)
    return statistics.median(seconds), statistics.median(peaks)


def alternately(label: str, commands: dict[str, list[str]], repeat: int) -> list[Timing]:
    """Each command run ``repeat`` times, one run of each a round (so that a change in the machine's load
    touches all alike): a row of medians per command."""
    runs: dict[str, list[tuple[float, float]]] = {tool: [] for tool in commands}
    for _ in range(repeat):
        for tool, command in commands.items():
            runs[tool].append(measure(command, 1))
    return [Timing(label, tool, statistics.median(s for s, _ in values), statistics.median(p for _, p in values),
                   repeat) for tool, values in runs.items()]


def run_alone(description: str, bench, quick_help: str) -> None:
    """The command line of a benchmark run alone: ``--out``, ``--repeat``, ``--quick``; ``bench(out, repeat,
    quick)`` gives the rows and the lines saying what they show."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=REPO / "bench-out")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args()
    rows, notes = bench(args.out, args.repeat, args.quick)
    print(markdown(rows))
    print("\n".join(notes))


def castregin_command(runs: list[Path], qrels: Path) -> list[str]:
    """The real CLI, as a user runs it."""
    return [str(REPO / ".venv" / "bin" / "castregin"), "evaluate", *map(str, runs),
            "--qrels", str(qrels), *MEASURE_ARGS]


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
        seconds = f"{t.seconds:.3f}" if t.seconds < 0.1 else f"{t.seconds:.2f}"  # a start-up's milliseconds
        lines.append(f"| {t.workload} | {t.tool}{note} | {seconds} | {t.peak_mb:.0f} | {ratio_time} "
                     f"| {ratio_mem} |")
    return "\n".join(lines) + "\n"


# --- scaling: memory that stays flat, time near the parse's -------------------------------------------------


def _available_mb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return math.inf


def _first_turns(qrels: Path, turns: int, out: Path) -> Path:
    """The lines of ``qrels`` whose turn is one of the generator's first ``turns``, written to ``out``."""
    from generate import turn_ids

    keep = {turn.encode() for turn in turn_ids(turns)}
    with open(qrels, "rb") as source, open(out, "wb") as sink:
        sink.writelines(line for line in source if line.split(b" ", 1)[0] in keep)
    return out


def scaling_rows(turns_list, repeat: int, peer_python: Path | None) -> list[Timing]:
    """Each tool on one run of each size in ``turns_list`` (x 1,000 items), generated in a temporary directory.

    A peer whose memory, foreseen from its previous row (it grows in proportion to the run), would not
    fit in the memory available is skipped, with a note: the machine would swap or kill it.
    """
    sys.path.insert(0, str(HERE))
    from generate import make_qrels_and_runs

    rows: list[Timing] = []
    last_peak: dict[str, tuple[int, float]] = {}
    for turns in turns_list:
        with tempfile.TemporaryDirectory(prefix="castregin-scaling-") as directory:
            print(f"scaling: {turns:,} turns ...", file=sys.stderr)
            data = make_qrels_and_runs(Path(directory), turns, 1000, 100, ties=False)
            run, qrels = data["run"], data["qrels"]
            label = f"{turns:,} turns x 1,000 items ({run.stat().st_size / 1e6:,.0f} MB run)"
            commands = [("castregin", castregin_command([run], qrels)),
                        (FLOOR, [sys.executable, str(PEERS / "pyarrow_floor.py"), str(run)])]
            if turns > FIXED_QRELS_TURNS:
                # The qrels grow with the run here; with those of 5,000 turns, what the run alone costs shows.
                fixed = _first_turns(qrels, FIXED_QRELS_TURNS, Path(directory) / "qrels_fixed.qrel")
                commands.insert(1, (FIXED_QRELS_TOOL, castregin_command([run], fixed)))
            if peer_python is not None:
                commands += [("pytrec_eval (files read in Python)",
                              peer_command(peer_python, "pytrec_eval_files.py", qrels, [run])),
                             ("ir_measures", peer_command(peer_python, "ir_measures_files.py", qrels, [run]))]
            times = repeat if turns < ONCE_FROM_TURNS else 1
            for tool, command in commands:
                before = last_peak.get(tool)
                foreseen = before[1] * turns / before[0] if before else 0.0
                if foreseen > 0.8 * _available_mb():
                    rows.append(Timing(label, tool, math.nan, math.nan, 0,
                                       f"skipped: would need about {foreseen / 1024:.0f} GB"))
                    continue
                try:
                    seconds, peak = measure(command, times)
                except RuntimeError as err:
                    rows.append(Timing(label, tool, math.nan, math.nan, 0, f"failed: {str(err)[-200:]}"))
                    continue
                rows.append(Timing(label, tool, seconds, peak, times))
                last_peak[tool] = (turns, peak)
    return rows


def scaling_markdown(rows: list[Timing]) -> str:
    """The scaling table; time ratios are to the floor of the same run, memory ratios to castregin's."""
    lines = ["| run | tool | wall time (s) | peak memory (MB) | time / floor | memory / castregin |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    floor = {t.workload: t for t in rows if t.tool == FLOOR}
    ours = {t.workload: t for t in rows if t.tool == "castregin"}
    for t in rows:
        if math.isnan(t.seconds):
            lines.append(f"| {t.workload} | {t.tool} ({t.note}) | | | | |")
            continue
        time_ratio = f"{t.seconds / floor[t.workload].seconds:.2f}x" if t.workload in floor else ""
        memory_ratio = f"{t.peak_mb / ours[t.workload].peak_mb:.2f}x" if t.workload in ours else ""
        lines.append(f"| {t.workload} | {t.tool} | {t.seconds:.2f} | {t.peak_mb:,.0f} | {time_ratio} "
                     f"| {memory_ratio} |")
    return "\n".join(lines) + "\n"


def scaling_targets(rows: list[Timing]) -> list[str]:
    """The targets, checked: castregin's peak memory flat in the run's size (50k within 1.3x of 5k, under
    500 MB), its time within 2x of the floor's and at most 0.3x pytrec_eval's (at 5k)."""
    def find(turns: int, tool: str) -> Timing | None:
        return next((t for t in rows if t.workload.startswith(f"{turns:,} turns")
                     and tool in (t.tool, t.tool.split(" (")[0])
                     and not math.isnan(t.seconds)), None)

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    lines = []
    small, large, fixed = find(5_000, "castregin"), find(50_000, "castregin"), find(50_000, FIXED_QRELS_TOOL)
    if small and large:
        ratio = large.peak_mb / small.peak_mb
        lines.append(f"- castregin's peak memory at 50,000 turns is {ratio:.2f}x that at 5,000 (target: 1.3x or "
                     f"less, {verdict(ratio <= 1.3)}) and {large.peak_mb:,.0f} MB (target: under 500, "
                     f"{verdict(large.peak_mb < 500)})")
    if small and fixed:
        ratio = fixed.peak_mb / small.peak_mb
        lines.append(f"- with the qrels of 5,000 turns, castregin's peak memory at 50,000 turns is {ratio:.2f}x "
                     f"that at 5,000 (target: 1.3x or less, {verdict(ratio <= 1.3)})")
    for turns in SCALING_TURNS:
        ours, floor = find(turns, "castregin"), find(turns, FLOOR)
        if ours and floor:
            ratio = ours.seconds / floor.seconds
            lines.append(f"- {turns:,} turns: castregin takes {ratio:.2f}x the floor's time (target: 2x or less, "
                         f"{verdict(ratio <= 2)})")
    ours, peer = find(5_000, "castregin"), find(5_000, "pytrec_eval")
    if ours and peer:
        ratio = ours.seconds / peer.seconds
        lines.append(f"- 5,000 turns: castregin takes {ratio:.2f}x pytrec_eval's time (target: 0.3x or less, "
                     f"{verdict(ratio <= 0.3)})")
    return lines


def write_scaling_table(text: str, page: Path = SPEED_PAGE) -> bool:
    """Put ``text`` between the scaling markers of ``page``; False when the markers are missing."""
    content = page.read_text(encoding="utf-8")
    start, end = SCALING_MARKERS
    if start not in content or end not in content.split(start, 1)[1]:
        return False
    before, rest = content.split(start, 1)
    page.write_text(before + start + "\n" + text + end + rest.split(end, 1)[1], encoding="utf-8")
    return True


def scaling_section(peer_python: Path | None, repeat: int, quick: bool, machine: str, write_table: bool = True) -> str:
    """The scaling rows (up to 5,000 turns with ``quick``) as a table and targets, for the terminal; the table
    also goes into docs/speed.md unless ``quick`` or not ``write_table``."""
    rows = scaling_rows(QUICK_SCALING_TURNS if quick else SCALING_TURNS, repeat, peer_python)
    once = f"; from {ONCE_FROM_TURNS:,} turns on, one run of each" if not quick else ""
    text = (f"{machine}; medians of {repeat} runs{once}; peak memory is the process's maximum resident set "
            f"size.\n\n{scaling_markdown(rows)}")
    written = not quick and write_table and write_scaling_table(text)
    note = "(written into docs/speed.md)" if written else "(not written into docs/speed.md)"
    return "\n".join([f"\nScaling {note}:\n", text, *scaling_targets(rows)])


def main() -> None:
    sys.path.insert(0, str(HERE))
    from generate import make_qrels_and_runs

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(REPO / "bench-out"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-python", default=str(REPO / ".venv-bench" / "bin" / "python"))
    parser.add_argument("--scaling", action="store_true", help="Only the scaling rows.")
    parser.add_argument("--quick", action="store_true", help="Scaling rows up to 5,000 turns.")
    parser.add_argument("--write-table", action="store_true", help="Write the scaling table into docs/speed.md.")
    args = parser.parse_args()
    peer = Path(args.peer_python) if Path(args.peer_python).exists() else None
    if args.scaling:
        from run import compile_castregin, machine

        compile_castregin()

        print(scaling_section(peer, args.repeat, args.quick, machine(), args.write_table))
        return
    data = make_qrels_and_runs(Path(args.data), 5000, 1000, 100, runs=20, multi_depth=100)
    timings = single_run(data, args.repeat, peer, "5,000 turns x 1,000 items")
    timings += many_runs(data, args.repeat, peer, "20 runs x 5,000 turns x 100 items")
    print(markdown(timings))


if __name__ == "__main__":
    main()
