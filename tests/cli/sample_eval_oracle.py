"""NIST's sample_eval.pl as the oracle of ``castregin sample_eval``, and the random cases fed to it.

The original: github.com/amillert/TREC-elastic, commit b13eaae3d0741d792c8b2b184cf9cedf37190276,
``sample_eval.pl`` (NIST's script of 10 Oct 2011, the implementation of xinfAP and infNDCG of Yilmaz,
Kanoulas and Aslam, SIGIR 2008; sha256 5e17806520fa131ecb666be43df84b5bb98695967689e052d503a1ab8f2519b0),
run with perl 5.36 (``perl sample_eval.pl [-q] QRELS RUN``).

Its standard output on the cases below is kept in ``data/sample_eval/outputs.json.xz`` (``{case: text}``),
so that the tests need neither perl nor the script. ``$CASTREGIN_SAMPLE_EVAL`` (the path of sample_eval.pl)
makes the tests run the live original too; ``python tests/cli/sample_eval_oracle.py`` with it set writes the
kept outputs again. ``data/sample_eval/level2.json.xz`` keeps its ``-q`` output on each case's qrels with the
labels 1 (those above 0 and below 2) made 0, for the inferred measures at relevance level 2
(tests/evaluation/test_registry.py): the script's relevant is "above 0", and with those labels 0 the
relevant items are those labelled 2 or more while every sampled item stays sampled, which is what
``--rel-level 2`` means for xinfAP, iP@k, the interpolated precision and the counts. ``data/sample_eval/runs.json.xz``
keeps its ``-q`` output, at both levels, for each of four runs on one sample (:func:`runs_case`), which
evaluate, compare and report are tested on.

The cases: stratified qrels (``topic 0 item stratum label``, label -1 for an item of the pool left out of
the sample) of 1-4 strata a topic named by numbers that sort otherwise as text (``2`` after ``10``),
labels -1 to 3 (some cases up to 12, whose ideal DCG sample_eval sorts as text), strata nobody sampled,
topics in one file only, run topics with leading zeros (sample_eval strips them from the run, not from
the qrels), tied scores (broken by item id, descending), items the qrels lack, and a few topics deeper
than sample_eval's 1000 ranks and with more than 1000 estimated relevant items. Topics are numbers:
sample_eval prints topics in numeric order, and non-numeric topics that compare equal as numbers
(``132_1-1`` and ``132_1-2`` are both 132 to Perl) in the order of its hash, which changes from run to
run; the cases with CAsT turn ids (``cast*``) are compared block by block.
"""

from __future__ import annotations

import functools
import json
import lzma
import os
import random
import subprocess
from pathlib import Path

KEPT = Path(__file__).resolve().parent / "data" / "sample_eval" / "outputs.json.xz"
KEPT_LEVEL2 = KEPT.with_name("level2.json.xz")
KEPT_RUNS = KEPT.with_name("runs.json.xz")
CASES = 150
DEEP_CASES = 6
CAST_CASES = 12


def _topic(rng: random.Random, number: int, cast: bool) -> str:
    if cast:
        return f"{number}_{rng.randint(1, 3)}-{rng.randint(1, 12)}"
    return str(number)


def case(seed: int, deep: bool = False, cast: bool = False) -> tuple[str, str, list[str]]:
    """(qrels text, run text, options) of one random case."""
    rng = random.Random(seed if not deep else 50_000 + seed)
    qrels, run = [], []
    big_grades = rng.random() < 0.15
    grades = [0, 0, 1, 1, 2, 3] + ([10, 12] if big_grades else [])
    numbers = rng.sample(range(1, 300), rng.randint(1, 8))
    for number in numbers:
        topic = _topic(rng, number, cast)
        strata = rng.sample(["1", "2", "3", "10", "11", "4"], rng.randint(1, 4))
        size = rng.randint(1, 1500 if deep else 40)
        items = [f"d{n}" for n in rng.sample(range(3 * size + 5), size)]
        rates = {stratum: rng.choice([1.0, 0.5, 0.2, 0.0, 0.7]) for stratum in strata}
        if rng.random() < 0.9:
            no_relevant = rng.random() < 0.1
            for item in items:
                stratum = rng.choice(strata)
                sampled = rng.random() < rates[stratum]
                label = (0 if no_relevant else rng.choice(grades)) if sampled else -1
                qrels.append(f"{topic} 0 {item} {stratum} {label}")
        if rng.random() < 0.9:
            ranked = rng.sample(items, rng.randint(1, len(items))) + [f"x{n}" for n in range(rng.randint(0, 5))]
            if deep and rng.random() < 0.5:
                ranked += [f"y{n}" for n in range(rng.randint(900, 1300))]
            shown = topic if cast or rng.random() < 0.7 else "0" * rng.randint(1, 2) + topic
            for rank, item in enumerate(ranked, start=1):
                score = rng.choice([round(rng.random(), 3), 0.5, 1, 2.25, -1.5, 1e-3, round(rng.random() * 10, 1)])
                run.append(f"{shown} Q0 {item} {rank} {score} run{seed}")
    if not run or not qrels:
        # sample_eval divides by the number of topics of both: one topic is always shared.
        qrels.append("1 0 d1 1 1")
        run.append(f"1 Q0 d1 1 1.0 run{seed}")
    rng.shuffle(qrels)
    rng.shuffle(run)
    options = rng.choice([[], ["-q"]])
    if cast:
        options = ["-q"]
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", options


@functools.cache
def cases() -> dict[str, tuple[str, str, list[str]]]:
    """Every case: ``{name: (qrels text, run text, options)}``."""
    out = {f"sample{seed}": case(seed) for seed in range(CASES)}
    out.update({f"deep{seed}": case(seed, deep=True) for seed in range(DEEP_CASES)})
    out.update({f"cast{seed}": case(90_000 + seed, cast=True) for seed in range(CAST_CASES)})
    return out


def live_command() -> list[str] | None:
    """The original's command from ``$CASTREGIN_SAMPLE_EVAL``, or None."""
    path = os.environ.get("CASTREGIN_SAMPLE_EVAL")
    return ["perl", path] if path else None


def run_original(qrels: Path, run: Path, options: list[str]) -> str:
    """The original's standard output on the files (it must be configured)."""
    command = live_command()
    assert command is not None
    return subprocess.run([*command, *options, str(qrels), str(run)], check=True, capture_output=True,
                          text=True).stdout


def blocks(text: str) -> tuple[list[str], list[str]]:
    """The per-topic blocks of ``-q`` output, sorted, and the lines of the ``all`` part (in order)."""
    lines = text.splitlines(keepends=True)
    per_topic = [line for line in lines if [field for field in line.split("\t") if field][1] != "all"]
    rest = [line for line in lines if [field for field in line.split("\t") if field][1] == "all"]
    return sorted("".join(per_topic[i:i + 8]) for i in range(0, len(per_topic), 8)), rest


RUN_NAMES = ("strong", "middle", "weak", "shuffled")


@functools.cache
def runs_case() -> tuple[str, dict[str, str]]:
    """One stratified sample of CAsT-like turns and four runs on it, of decreasing quality: what evaluate, compare
    and report are tested with (tests/evaluation/test_inferred_measures.py)."""
    rng = random.Random(2008)
    qrels, runs = [], {name: [] for name in RUN_NAMES}
    for number in range(14):
        turn = f"{130 + number // 4}_{1 + number % 2}-{1 + number % 4}"
        items = [f"d{n}" for n in rng.sample(range(400), 60)]
        grades = {item: rng.choice([0, 0, 0, 1, 1, 2, 3]) for item in items}
        strata = {item: "1" if position < 10 else "2" if position < 30 else "3" for position, item in enumerate(items)}
        rates = {"1": 1.0, "2": 0.5, "3": rng.choice([0.2, 0.1, 0.0])}
        for item in items:
            label = grades[item] if rng.random() < rates[strata[item]] else -1
            qrels.append(f"{turn} 0 {item} {strata[item]} {label}")
        for noise, name in zip((0.5, 1.5, 3.0, 100.0), RUN_NAMES, strict=True):
            chosen = rng.sample(items, rng.randint(30, 60)) + [f"x{n}" for n in range(rng.randint(0, 5))]
            scored = {item: grades.get(item, 0) + rng.gauss(0, noise) for item in chosen}
            runs[name] += [f"{turn} Q0 {item} {rank} {round(score, 3)} {name}" for rank, (item, score) in
                           enumerate(sorted(scored.items(), key=lambda pair: -pair[1]), start=1)]
    return "\n".join(qrels) + "\n", {name: "\n".join(lines) + "\n" for name, lines in runs.items()}


def at_level(qrels_text: str, level: int) -> str:
    """Stratified qrels whose labels above 0 and below ``level`` are 0: the script's "above 0" is then ``level``
    or more."""
    lines = []
    for line in qrels_text.splitlines():
        *fields, label = line.split()
        lines.append(" ".join([*fields, "0" if 0 < int(label) < level else label]))
    return "\n".join(lines) + "\n"


@functools.cache
def kept_outputs(level: int = 1) -> dict[str, str]:
    """The kept outputs of the original, by case: as the cases are, or (``-q``) at relevance ``level`` 2."""
    return json.loads(lzma.decompress((KEPT if level == 1 else KEPT_LEVEL2).read_bytes()).decode())


@functools.cache
def kept_runs_outputs() -> dict[str, dict[str, str]]:
    """The original's ``-q`` output on :func:`runs_case`, ``{level: {run: text}}`` (levels ``"1"`` and ``"2"``)."""
    return json.loads(lzma.decompress(KEPT_RUNS.read_bytes()).decode())


def write_kept_runs(directory: Path) -> None:
    """Run the original on :func:`runs_case` at levels 1 and 2 and keep its outputs."""
    qrels_text, runs = runs_case()
    outputs: dict[str, dict[str, str]] = {}
    for level in (1, 2):
        qrels = directory / f"runs{level}.qrels"
        qrels.write_text(at_level(qrels_text, level))
        for name, run_text in runs.items():
            run = directory / f"{name}.run"
            run.write_text(run_text)
            outputs.setdefault(str(level), {})[name] = run_original(qrels, run, ["-q"])
    KEPT_RUNS.write_bytes(lzma.compress(json.dumps(outputs, sort_keys=True).encode(), preset=9 | lzma.PRESET_EXTREME))


def write_kept(directory: Path, level: int = 1) -> None:
    """Run the original on every case and keep its outputs (at ``level`` 2: :func:`at_level`, always ``-q``)."""
    outputs = {}
    for name, (qrels_text, run_text, options) in cases().items():
        qrels, run = directory / f"{name}.qrels", directory / f"{name}.run"
        qrels.write_text(qrels_text if level == 1 else at_level(qrels_text, level))
        run.write_text(run_text)
        outputs[name] = run_original(qrels, run, options if level == 1 else ["-q"])
    kept = KEPT if level == 1 else KEPT_LEVEL2
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_bytes(lzma.compress(json.dumps(outputs, sort_keys=True).encode(), preset=9 | lzma.PRESET_EXTREME))


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        write_kept(Path(scratch))
        write_kept(Path(scratch), level=2)
        write_kept_runs(Path(scratch))
