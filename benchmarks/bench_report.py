"""The HTML report of 30 simulated runs: wall time and peak memory of ``castregin report`` as a whole process.

The runs are ``benchmarks/generate.py``'s: 205 CAsT-like turns (as many as CAsT 2022's mixed-initiative
turns), 100 items a turn, against qrels of 30 judged items a turn; the report uses the default
measures (seven), so it holds 7 significance matrices of 30 x 30 runs and 60 per-run figures. Used
by ``benchmarks/run.py``; runnable alone, also against another checkout of castregin::

    python benchmarks/bench_report.py --repeat 3
    python benchmarks/bench_report.py --pythonpath /tmp/castregin-old   # that checkout's castregin
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_evaluate import Timing, measure
from generate import make_qrels_and_runs

RUNS, TURNS, DEPTH, JUDGED = 30, 205, 100, 30
WORKLOAD = f"report, {RUNS} simulated runs ({TURNS} turns x {DEPTH} items, 7 measures)"


def report_command(data: dict[str, Path], out: Path) -> list[str]:
    """``castregin report`` over the simulated runs' directory, as a user runs it."""
    runs = data["multi_00"].parent
    # The module, not the console script, so that --pythonpath picks the castregin run; `python -c` puts the
    # working directory (maybe this checkout) first on the path, which is dropped for the same reason.
    code = "import sys; del sys.path[0]; from castregin.cli import run; run()"
    return [str(REPO / ".venv" / "bin" / "python"), "-c", code, "report", str(runs), "--qrels", str(data["qrels"]),
            "--out", str(out)]


def bench_report(out: Path, repeat: int, pythonpath: str | None = None) -> list[Timing] | str:
    """Time the report of :data:`RUNS` simulated runs (median of ``repeat``), or say why it failed."""
    data = make_qrels_and_runs(out / "report-data", turns=TURNS, depth=DEPTH, judged=JUDGED, runs=RUNS,
                               multi_depth=DEPTH)
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    try:
        seconds, peak = measure(report_command(data, out / "report-html"), repeat, env=env)
    except RuntimeError as err:
        return f"failed: {err}"
    tool = "castregin report" + (f" ({pythonpath})" if pythonpath else "")
    return [Timing(WORKLOAD, tool, seconds, peak, repeat)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(REPO / "bench-out"), help="Where the data and the report go.")
    parser.add_argument("--repeat", type=int, default=3, help="Runs of the command (medians).")
    parser.add_argument("--pythonpath", help="Run the castregin found here (an older checkout, to compare).")
    args = parser.parse_args()
    outcome = bench_report(Path(args.out), args.repeat, args.pythonpath)
    if isinstance(outcome, str):
        sys.exit(outcome)
    for timing in outcome:
        print(f"{timing.workload}\t{timing.tool}\t{timing.seconds:.2f} s\t{timing.peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
