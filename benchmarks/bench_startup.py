"""The small case: ``castregin trec_eval`` on a 10-line run, beside the C trec_eval 9.0.8 binary.

Scripts call trec_eval once per run, thousands of times: what counts there is the time a process
takes from start to exit on a small input, and its memory. Each command runs ``repeat`` times (a
few hundredths of a second each), medians of wall time and peak memory (see
:func:`bench_evaluate.measure`); the interpreter alone (``python -c pass``) is the floor of any
Python tool. The C binary's path is taken from ``$CASTREGIN_TREC_EVAL``, as the tests take it; without
it its row is left out, and the benchmark says so. Both programs' outputs are compared byte for byte.
Used by ``benchmarks/run.py``; runnable alone::

    python benchmarks/bench_startup.py --repeat 30
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_evaluate import Timing, _environment, markdown, measure

CASTREGIN = REPO / ".venv" / "bin" / "castregin"
PYTHON = REPO / ".venv" / "bin" / "python"
#: The variable the tests read the trec_eval 9.0.8 binary's path from (tests/cli/trec_eval_oracle.py).
TREC_EVAL_VARIABLE = "CASTREGIN_TREC_EVAL"
WORKLOAD = "a 10-line run (2 turns x 5 items), 8 qrels lines"
#: Short commands vary by a few milliseconds from run to run: many runs make the medians steady.
DEFAULT_REPEAT = 30


def write_small_inputs(out: Path) -> tuple[Path, Path]:
    """A 10-line run and its qrels (two turns, graded 0-2, one item unjudged), as a script's call gets them."""
    out.mkdir(parents=True, exist_ok=True)
    run, qrels = out / "ten_lines.run", out / "ten_lines.qrel"
    run.write_text("".join(f"{101 + t}_1-1 Q0 doc{i:03d} {i + 1} {10 - i}.{7 - t} small\n"
                           for t in range(2) for i in range(5)))
    qrels.write_text("".join(f"{101 + t}_1-1 0 doc{i:03d} {(i + t) % 3}\n" for t in range(2) for i in range(4)))
    return run, qrels


def trec_eval_binary() -> Path | None:
    """The C trec_eval 9.0.8 binary named by ``$CASTREGIN_TREC_EVAL`` (as the tests take it), or None."""
    path = os.environ.get(TREC_EVAL_VARIABLE)
    return Path(path) if path and os.access(path, os.X_OK) else None


def bench_small(out: Path, repeat: int = DEFAULT_REPEAT) -> tuple[list[Timing], list[str]]:
    """The rows of the small case, and notes (the binary's absence, the outputs' comparison)."""
    run, qrels = write_small_inputs(out)
    ours = [str(CASTREGIN), "trec_eval", str(qrels), str(run)]
    rows, notes = [], []
    seconds, peak = measure(ours, repeat, warmup=1)
    rows.append(Timing(WORKLOAD, "castregin trec_eval", seconds, peak, repeat))
    seconds, peak = measure([str(CASTREGIN), "evaluate", str(run), "--qrels", str(qrels)], repeat, warmup=1)
    rows.append(Timing(WORKLOAD, "castregin evaluate", seconds, peak, repeat))
    binary = trec_eval_binary()
    if binary is None:
        notes.append(f"- the C trec_eval is not measured: set {TREC_EVAL_VARIABLE} to a trec_eval 9.0.8 binary")
    else:
        seconds, peak = measure([str(binary), str(qrels), str(run)], repeat, warmup=1)
        rows.append(Timing(WORKLOAD, "trec_eval 9.0.8 (C)", seconds, peak, repeat))
        theirs = subprocess.run([str(binary), str(qrels), str(run)], capture_output=True, check=True).stdout
        mine = subprocess.run(ours, capture_output=True, check=True, env=_environment(None)).stdout
        same = "byte-identical" if mine == theirs else "DIFFERENT"
        notes.append(f"- castregin trec_eval's output and the C trec_eval's ({binary}): {same}")
    seconds, peak = measure([str(PYTHON), "-c", "pass"], repeat, warmup=1)
    rows.append(Timing(WORKLOAD, "python -c pass (the interpreter alone)", seconds, peak, repeat))
    ours_row = rows[0]
    ratio = ours_row.seconds / seconds
    notes.append(f"- castregin trec_eval on 10 lines: {ratio:.2f}x `python -c pass` (target: at most 3x, "
                 f"{'met' if ratio <= 3 else 'NOT met'})")
    verdict = "met" if ours_row.seconds < 0.1 and ours_row.peak_mb < 40 else "NOT met"
    notes.append(f"- castregin trec_eval on 10 lines: {ours_row.seconds * 1000:.0f} ms and {ours_row.peak_mb:.0f} MB "
                 f"(target: under 100 ms and 40 MB on an idle machine, {verdict})")
    return rows, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(REPO / "bench-out"), help="Where the inputs go.")
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args()
    from run import compile_castregin

    compile_castregin()
    rows, notes = bench_small(Path(args.out) / "small", args.repeat)
    print(markdown(rows))
    print("\n".join(notes))


if __name__ == "__main__":
    main()
