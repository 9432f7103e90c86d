"""``make bench``: castregin against trec_eval's peers on deterministic synthetic data.

    .venv/bin/python benchmarks/run.py            # the full workloads (about 10 minutes on 2 cores)
    .venv/bin/python benchmarks/run.py --quick    # scaled down, a smoke run of a minute or so
    .venv/bin/python benchmarks/run.py --repeat 5 --no-peers

Workloads, each tool as a whole process (read files, evaluate AP, nDCG@10, P@10 and RR at
relevance level 2, print), medians of ``--repeat`` runs of wall time and peak memory:

1. one run of 5,000 turns x 1,000 items (about 190 MB) against 5,000 x 100 judged items (grades
   0-3): castregin's CLI, pytrec_eval with the files read in Python, ir_measures, ranx; and the
   same run with tied scores (castregin and pytrec_eval);
2. 20 runs of 5,000 turns x 100 items against the same qrels: castregin in one call, pytrec_eval
   in a loop over the runs in one process;
3. converting a 467 MB JSON MI run (``castregin convert questions``), beside ``json.load`` of the same file;
4. aggregating 1,000,000 and 5,000,000 crowd judgments (``castregin aggregate``, ``benchmarks/bench_aggregate.py``;
   100,000 with ``--quick``);
5. ``castregin trec_eval -m all_trec`` on the single run beside the trec_eval 9.0.8 binary
   (``CASTREGIN_TREC_EVAL``, as the tests take it; said when absent), alternating, outputs compared
   (``benchmarks/bench_trec_eval.py``);
6. the HTML report of 30 simulated runs of 205 turns (``castregin report``, ``benchmarks/bench_report.py``;
   the same workload with ``--quick``);
7. the small case (``benchmarks/bench_startup.py``): ``castregin trec_eval`` and ``evaluate`` on a 10-line run and
   ``--help``, castregin installed as a wheel installs it and from ``.venv``, beside the C trec_eval 9.0.8 binary
   (``$CASTREGIN_TREC_EVAL``, as the tests take it) and the interpreter alone, alternately; medians of at least 10
   runs;
8. scaling: one run of 1,000, 5,000, 20,000 and 50,000 turns x 1,000 items (2 GB; up to 5,000 with
   ``--quick``), castregin, pytrec_eval, ir_measures and pyarrow reading the three columns evaluation
   needs (the floor); the table goes into the documentation's Speed page, docs/speed.md
   (``bench_evaluate.scaling_section``);
9. the model client (``benchmarks/bench_llm.py``): 2,000 chat completions (500 with ``--quick``) to an
   instant local server, castregin's :class:`castregin.llm.Client` beside a plain openai-SDK thread pool.

``--only small,convert,llm`` measures those workloads alone.

Data goes to ``bench-out/`` (``bench-out/quick`` with ``--quick``) and is reused while its
parameters are unchanged. The peers are installed, pinned, into their own virtualenv
``.venv-bench`` on first use, so castregin's environment never holds them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_aggregate import bench_aggregate
from bench_diversity import bench_diversity
from bench_evaluate import Timing, many_runs, markdown, measure, scaling_section, single_run
from bench_holes import bench_holes
from bench_llm import bench_llm
from bench_report import bench_report
from bench_startup import bench_small
from bench_trec_eval import bench_trec_eval
from generate import make_qrels_and_runs

PEER_VENV = REPO / ".venv-bench"
PEER_PINS = ["pytrec-eval-terrier==0.5.11", "ir-measures==0.4.3", "ranx==0.3.21"]
CASTREGIN = REPO / ".venv" / "bin" / "castregin"


def ensure_peers() -> Path | None:
    """The peers' Python, installing them pinned into ``.venv-bench`` when missing (None on failure)."""
    python = PEER_VENV / "bin" / "python"
    check = [str(python), "-c", "import pytrec_eval, ir_measures, ranx"]
    if python.exists() and subprocess.run(check, capture_output=True, check=False).returncode == 0:
        return python
    print(f"installing the peers into {PEER_VENV}: {' '.join(PEER_PINS)}", file=sys.stderr)
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PEER_PINS], check=True)
    except (subprocess.CalledProcessError, OSError) as err:
        print(f"could not install the peers ({err}); castregin alone is measured", file=sys.stderr)
        return None
    return python


def compile_castregin() -> None:
    """Write castregin's bytecode once, as an installed package has it: start-ups are then measured as users
    see them."""
    subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-m", "compileall", "-q", str(REPO / "castregin")],
                   check=False, env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})


def machine() -> str:
    """One line about the machine, for the Speed page next to the table."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split("\n")[0].split()[1])
        memory = f", {kb / 1024 / 1024:.0f} GB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores ({cpu}){memory}, Python {platform.python_version()}, {platform.system()}"


def write_json_run(path: Path, bank_path: Path, turns: int, per_turn: int) -> None:
    """A CAsT 2022 MI run JSON of ``turns`` x ``per_turn`` questions (bank ids and texts) and its bank."""
    import numpy as np
    from generate import turn_ids

    rng = np.random.default_rng(7)
    bank_size = 50_000
    bank = {f"Q{i:05d}": f"Would you like to know more about topic {i} and its {i % 97} aspects?"
            for i in range(1, bank_size + 1)}
    bank_path.write_text(json.dumps(bank), encoding="utf-8")
    texts = list(bank.values())
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"run_name": "bench_json", "turns": [')
        for t, turn in enumerate(turn_ids(turns)):
            ids = rng.integers(1, bank_size + 1, size=per_turn)
            scores = rng.random(per_turn) * 20
            # Most questions are bank ids; one in ten is the question's text, as some runs submit.
            questions = [{"question": texts[i - 1] if k % 10 == 0 else f"Q{i:05d}", "score": float(s)}
                         for k, (i, s) in enumerate(zip(ids.tolist(), scores.tolist(), strict=True))]
            handle.write(("," if t else "") + json.dumps({"turn_id": turn, "questions": questions}))
        handle.write("]}\n")


def bench_convert(out: Path, repeat: int, quick: bool) -> list[Timing] | str:
    """``castregin convert questions`` on a large JSON run beside json.load of it, or a note why it failed."""
    turns, per_turn = (500, 400) if quick else (5000, 1600)  # 467 MB: the run `convert` streams in flat memory
    # The shape is in the names: a run of another shape left by an older benchmark is not reused.
    run, bank = out / f"questions_run_{turns}x{per_turn}.json", out / f"question_bank_{turns}x{per_turn}.json"
    if not run.exists() or not bank.exists():
        write_json_run(run, bank, turns, per_turn)
    size = run.stat().st_size / 1e6
    command = [str(CASTREGIN), "convert", "questions", str(run), "--bank", str(bank), "-o", str(out / "converted.run")]
    # json.load of the same file, the floor of any tool that reads it with Python's json (and holds it whole).
    floor = [str(REPO / ".venv" / "bin" / "python"), "-c", "import json, sys; json.load(open(sys.argv[1], 'rb'))",
             str(run)]
    workload = f"convert a {size:.0f} MB JSON run ({turns:,} turns x {per_turn} questions)"
    tools = {"castregin convert questions": command, "json.load (Python)": floor}
    runs: dict[str, list[tuple[float, float]]] = {tool: [] for tool in tools}
    try:
        # Alternately, one run of each a round, so that a change in the machine's load touches both alike.
        for _ in range(repeat):
            for tool, argv in tools.items():
                runs[tool].append(measure(argv, 1))
    except RuntimeError as err:
        return f"failed: {err}"
    return [Timing(workload, tool, statistics.median(s for s, _ in values), statistics.median(p for _, p in values),
                   repeat) for tool, values in runs.items()]


def target_lines(timings: list[Timing], single: str, multi: str) -> list[str]:
    """The targets of the issue, checked: on the single run castregin takes at most half of
    pytrec_eval's time and no more memory; on many runs at most a third of a pytrec_eval loop's time."""
    def find(workload: str, tool: str) -> Timing | None:
        return next((t for t in timings if t.workload == workload and t.tool.startswith(tool)), None)

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    lines = []
    ours, theirs = find(single, "castregin"), find(single, "pytrec_eval")
    if ours and theirs:
        speed, memory = theirs.seconds / ours.seconds, ours.peak_mb / theirs.peak_mb
        lines.append(f"- {single}: pytrec_eval takes {speed:.1f}x castregin's time (target: 2x or more, "
                     f"{verdict(speed >= 2)}); castregin's peak memory is {memory:.2f}x pytrec_eval's "
                     f"(target: 1x or less, {verdict(memory <= 1)})")
    ours, theirs = find(multi, "castregin"), find(multi, "pytrec_eval")
    if ours and theirs:
        speed = theirs.seconds / ours.seconds
        lines.append(f"- {multi}: the pytrec_eval loop takes {speed:.1f}x castregin's time "
                     f"(target: 3x or more, {verdict(speed >= 3)})")
    return lines


def only_parts(args: argparse.Namespace) -> None:
    """``--only small,convert``: those workloads alone, one table (the others take most of the ten minutes)."""
    compile_castregin()
    out = Path(args.out) / "quick" if args.quick else Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timings, notes = [], []
    for part in args.only.split(","):
        if part == "small":
            rows, said = bench_small(out / "small", max(args.repeat, 10))
            timings += rows
            notes += said
        elif part == "convert":
            outcome = bench_convert(out, args.repeat, args.quick)
            if isinstance(outcome, str):
                notes.append(f"- convert: {outcome}")
            else:
                timings += outcome
        elif part in ("holes", "diversity"):
            rows, said = (bench_holes if part == "holes" else bench_diversity)(out, args.repeat, args.quick)
            timings += rows
            notes += said
        elif part == "llm":
            rows, said = bench_llm(args.repeat, 500 if args.quick else 2000)
            timings += rows
            notes += said
        else:
            raise SystemExit(f"--only: unknown part {part!r} (small, convert, holes, diversity, llm)")
    print(f"\nMachine: {machine()}; load average before: {load_average()}; medians of {args.repeat} runs "
          "(the small case: of at least 10); peak memory is the process's maximum resident set size.\n")
    print(markdown(timings))
    print("\n".join(notes))


def load_average() -> str:
    """The machine's 1, 5 and 15-minute load averages, said beside the numbers measured under them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(REPO / "bench-out"), help="Where the data goes.")
    parser.add_argument("--repeat", type=int, default=3, help="Runs of each command (medians).")
    parser.add_argument("--quick", action="store_true", help="Scaled-down workloads for a smoke run.")
    parser.add_argument("--no-peers", action="store_true", help="Measure castregin only.")
    parser.add_argument("--only", metavar="PARTS",
                        help="Only these workloads, comma-separated: small (the 10-line trec_eval), convert, holes "
                             "(analyze holes beside evaluate), diversity (ndeval and gdeval beside the originals), "
                             "llm.")
    args = parser.parse_args()
    if args.only:
        only_parts(args)
        return

    compile_castregin()
    out = Path(args.out) / "quick" if args.quick else Path(args.out)
    if args.quick:
        shape = {"turns": 500, "depth": 200, "judged": 50, "runs": 5, "multi_depth": 100}
    else:
        shape = {"turns": 5000, "depth": 1000, "judged": 100, "runs": 20, "multi_depth": 100}
    print(f"generating data in {out} ...", file=sys.stderr)
    data = make_qrels_and_runs(out, **shape)
    peer = None if args.no_peers else ensure_peers()

    single = f"{shape['turns']:,} turns x {shape['depth']:,} items ({data['run'].stat().st_size / 1e6:.0f} MB run)"
    multi = f"{shape['runs']} runs x {shape['turns']:,} turns x {shape['multi_depth']} items"
    print("single run ...", file=sys.stderr)
    timings = single_run(data, args.repeat, peer, single)
    print("many runs ...", file=sys.stderr)
    timings += many_runs(data, args.repeat, peer, multi)
    notes = []
    # castregin trec_eval -m all_trec beside the trec_eval binary (C) on the single run.
    print("trec_eval -m all_trec ...", file=sys.stderr)
    rows, lines = bench_trec_eval(data["qrels"], data["run"], args.repeat, f"{single}, trec_eval -m all_trec")
    timings += rows
    notes += lines
    small_rows, small_notes = bench_small(out / "small", max(args.repeat, 10))
    timings += small_rows
    notes += small_notes
    print("analyze holes, ndeval, gdeval ...", file=sys.stderr)
    for bench in (bench_holes, bench_diversity):
        rows, said = bench(out, args.repeat, args.quick)
        timings += rows
        notes += said
    print("the model client ...", file=sys.stderr)
    llm_rows, llm_notes = bench_llm(args.repeat, 500 if args.quick else 2000)
    timings += llm_rows
    notes += llm_notes
    for name, outcome in (("convert", bench_convert(out, args.repeat, args.quick)),
                          ("aggregate", bench_aggregate(out, args.repeat, args.quick)),
                          ("report", bench_report(out, args.repeat))):
        if isinstance(outcome, str):
            notes.append(f"- {name}: {outcome}")
        else:
            timings += outcome

    print(f"\nMachine: {machine()}; medians of {args.repeat} runs; peak memory is the process's maximum "
          "resident set size.\n")
    print(markdown(timings))
    for line in [*target_lines(timings, single, multi), *notes]:
        print(line)
    # One run of 1,000 to 50,000 turns (5,000 with --quick): memory and time as the run grows; into docs/speed.md.
    print(scaling_section(peer, args.repeat, args.quick, machine()))


if __name__ == "__main__":
    main()
