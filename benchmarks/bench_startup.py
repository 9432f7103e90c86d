"""The small case: ``castregin trec_eval`` on a 10-line run, beside the interpreter alone and the C trec_eval.

Scripts call trec_eval once per run, thousands of times: what counts there is the time a process
takes from start to exit on a small input, and its memory. The interpreter alone (``python -c pass``)
is the floor of any Python tool; the target is a 10-line ``castregin trec_eval`` within 3x of it.

Measured as a user has castregin: installed as pip installs a wheel (:func:`installed_environment`: the
package in a virtualenv's site-packages, compiled, pip's console script), not as ``make install``'s
editable install, whose import hook (a finder on ``sys.meta_path``, loaded by every interpreter of
``.venv``, ``python -c pass`` too) adds some 10 ms to each start. Both are shown: the installed one is
what the target is about. The commands run alternately, one run of each a round, so that a change in
the machine's load touches all alike (:func:`bench_evaluate.alternately`); medians of wall time and peak
memory. The C binary's path is taken from ``$CASTREGIN_TREC_EVAL``, as the tests take it; without it
its row is left out, and the benchmark says so. Both programs' outputs are compared byte for byte.
Used by ``benchmarks/run.py``; runnable alone::

    python benchmarks/bench_startup.py --repeat 30
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_evaluate import Timing, _environment, alternately, markdown

CASTREGIN = REPO / ".venv" / "bin" / "castregin"
PYTHON = REPO / ".venv" / "bin" / "python"
#: The variable the tests read the trec_eval 9.0.8 binary's path from (tests/cli/trec_eval_oracle.py).
TREC_EVAL_VARIABLE = "CASTREGIN_TREC_EVAL"
WORKLOAD = "a 10-line run (2 turns x 5 items), 8 qrels lines"
#: Short commands vary by a few milliseconds from run to run: many runs make the medians steady.
DEFAULT_REPEAT = 30
#: The target: a 10-line trec_eval within this many times the interpreter's start (issue 36).
TARGET = 3.0
#: pip's console script (``pip/_vendor/distlib``'s template, as ``.venv/bin/castregin`` has it).
CONSOLE_SCRIPT = """#!{python}
import sys
from castregin.cli import run
if __name__ == '__main__':
    sys.argv[0] = sys.argv[0].removesuffix('.exe')
    sys.exit(run())
"""

#: The console script's run() with no command on the plain path (castregin.cli.PLAIN_COMMANDS emptied): trec_eval
#: read and run by click, as before the plain path, to show what click costs.
THROUGH_CLICK = ("import sys\nimport castregin.cli as cli\ncli.PLAIN_COMMANDS.clear()\nsys.argv[0] = 'castregin'\n"
                 "cli.run()\n")


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


def installed_environment(out: Path) -> Path:
    """A virtualenv in ``out`` holding this checkout's castregin as ``pip install castregin`` lays out its wheel,
    without building one (that needs the build backend from the network): the package copied into site-packages and
    compiled (pip compiles what it installs), pip's console script; the dependencies are ``.venv``'s, reached by a
    path file that adds its site-packages after the virtualenv's own (its path files, the editable install's hook
    among them, are not run). Made anew on each call; returns the virtualenv's ``bin``."""
    base = Path(subprocess.run([str(PYTHON), "-c", "import sys; print(sys._base_executable)"], capture_output=True,
                               text=True, check=True).stdout.strip())
    environment = out / "installed-venv"
    shutil.rmtree(environment, ignore_errors=True)
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(environment)], check=True)
    python = environment / "bin" / "python"
    packages = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    shutil.copytree(REPO / "castregin", packages / "castregin", ignore=shutil.ignore_patterns("__pycache__"))
    dependencies = subprocess.run([str(PYTHON), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True).stdout.strip()
    (packages / "castregin-dependencies.pth").write_text(dependencies + "\n")
    subprocess.run([str(python), "-m", "compileall", "-q", str(packages / "castregin")], check=True,
                   stdout=subprocess.DEVNULL, env=_environment(None))
    script = environment / "bin" / "castregin"
    script.write_text(CONSOLE_SCRIPT.format(python=python))
    script.chmod(0o755)
    return environment / "bin"


def bench_small(out: Path, repeat: int = DEFAULT_REPEAT) -> tuple[list[Timing], list[str]]:
    """The rows of the small case, and notes (the target's ratios, the binary's absence, the outputs' comparison)."""
    run, qrels = write_small_inputs(out)
    installed = installed_environment(out)
    trec_eval_args = ["trec_eval", str(qrels), str(run)]
    commands = {
        "castregin trec_eval (installed)": [str(installed / "castregin"), *trec_eval_args],
        "castregin evaluate (installed)": [str(installed / "castregin"), "evaluate", str(run), "--qrels", str(qrels)],
        "castregin --help (installed)": [str(installed / "castregin"), "--help"],
        "castregin trec_eval --help (installed)": [str(installed / "castregin"), "trec_eval", "--help"],
        "castregin trec_eval through click (installed)": [str(installed / "python"), "-c", THROUGH_CLICK,
                                                          *trec_eval_args],
        "python -c pass (installed: the interpreter alone)": [str(installed / "python"), "-c", "pass"],
        "castregin trec_eval (.venv, editable install)": [str(CASTREGIN), *trec_eval_args],
        "python -c pass (.venv, with the editable install's hook)": [str(PYTHON), "-c", "pass"],
    }
    notes = []
    binary = trec_eval_binary()
    if binary is None:
        notes.append(f"- the C trec_eval is not measured: set {TREC_EVAL_VARIABLE} to a trec_eval 9.0.8 binary")
    else:
        commands["trec_eval 9.0.8 (C)"] = [str(binary), str(qrels), str(run)]
        theirs = subprocess.run([str(binary), str(qrels), str(run)], capture_output=True, check=True).stdout
        mine = subprocess.run(commands["castregin trec_eval (installed)"], capture_output=True, check=True,
                              env=_environment(None)).stdout
        same = "byte-identical" if mine == theirs else "DIFFERENT"
        notes.append(f"- castregin trec_eval's output and the C trec_eval's ({binary}): {same}")
    for command in commands.values():  # a warm-up round: the files and the bytecode in the page cache
        subprocess.run(command, stdout=subprocess.DEVNULL, check=True, env=_environment(None))
    rows = alternately(WORKLOAD, commands, repeat)
    seconds = {row.tool: row.seconds for row in rows}
    floor = seconds["python -c pass (installed: the interpreter alone)"]
    for tool in ("castregin trec_eval (installed)", "castregin trec_eval through click (installed)",
                 "castregin evaluate (installed)", "castregin --help (installed)",
                 "castregin trec_eval --help (installed)"):
        ratio = seconds[tool] / floor
        verdict = f" (target: at most {TARGET:g}x, {'met' if ratio <= TARGET else 'NOT met'})" \
            if tool == "castregin trec_eval (installed)" else ""
        notes.append(f"- {tool}: {ratio:.2f}x `python -c pass`{verdict}")
    editable = (seconds["castregin trec_eval (.venv, editable install)"]
                / seconds["python -c pass (.venv, with the editable install's hook)"])
    notes.append(f"- castregin trec_eval from .venv: {editable:.2f}x .venv's `python -c pass` (both pay the editable "
                 "install's hook)")
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
