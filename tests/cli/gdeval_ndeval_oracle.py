"""gdeval.pl and ndeval.c as oracles, and the random cases fed to them.

The originals are those of the TREC Web track 2014 repository: github.com/trec-web/trec-web-2014,
commit eb769d1ae81f29e34672f4a6914a8f399aafe083, ``src/eval/gdeval.pl`` (version 1.3) and
``src/eval/ndeval.c`` (version 4.5, built as its ``src/eval/Makefile`` says: ``gcc -o ndeval
ndeval.c -lm``; gcc 12.2, glibc, x86-64), run with perl 5.36.

Their outputs on the cases below are kept in ``data/gdeval_ndeval/outputs.json.xz`` (``{case: text}``),
so that the tests need neither perl, a compiler nor the network. ``$CASTREGIN_GDEVAL`` (the path of
gdeval.pl) and ``$CASTREGIN_NDEVAL`` (an ndeval binary) make the tests run the live originals too;
``python tests/cli/gdeval_ndeval_oracle.py`` with both set writes the kept outputs again.

ndeval prints its cutoff measures at 5, 10 and 20 only. For @1 the oracle is ndeval.c patched by
``data/gdeval_ndeval/ndeval_at1.patch`` (built and run as above): its "@5" columns print index 0 of its
arrays, as "@1", and its "ideal ideal" normalisation of alpha-DCG and ERR-IA starts at index 0 as at
every other (the original's loop starts at 1, leaving index 0, which it never prints, unnormalised).
Its outputs on the ndeval cases are kept in ``data/gdeval_ndeval/ndeval_at1.json.xz``;
``python tests/cli/gdeval_ndeval_oracle.py --at1 PATCHED_NDEVAL`` writes them again.
"""

from __future__ import annotations

import functools
import json
import lzma
import os
import random
import subprocess
import sys
from pathlib import Path

KEPT = Path(__file__).resolve().parent / "data" / "gdeval_ndeval" / "outputs.json.xz"
KEPT_AT1 = KEPT.with_name("ndeval_at1.json.xz")
GDEVAL_CASES = 160
NDEVAL_CASES = 140


def gdeval_case(seed: int) -> tuple[str, str, list[str]]:
    """(qrels text, run text, gdeval options): graded -1..4, ties, unjudged items, topics without a positive label,
    topics on one side only."""
    rng = random.Random(seed)
    qrels, run = [], []
    for topic in rng.sample(range(1, 400), rng.randint(1, 9)):
        items = [f"d{n}" for n in rng.sample(range(60), rng.randint(1, 30))]
        judged = items[:rng.randint(0, len(items))] + [f"x{n}" for n in range(rng.randint(0, 4))]
        no_relevant = rng.random() < 0.15
        if rng.random() < 0.9:
            for item in judged:
                label = rng.choice([0, 0, -1]) if no_relevant else rng.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4])
                qrels.append(f"{topic} 0 {item} {label}")
        if rng.random() < 0.9:
            for rank, item in enumerate(items, start=1):
                score = rng.choice([round(rng.random(), 3), 0.5, 1, 2.25, -1.5, 1e-3])
                run.append(f"{topic} Q0 {item} {rank} {score} run{seed}")
    if not run:
        run.append(f"1 Q0 d1 1 1.0 run{seed}")
    if not qrels:
        qrels.append("1 0 d1 1")
    rng.shuffle(qrels)
    rng.shuffle(run)
    options = rng.choice([[], [], ["-c"], ["-k", "5"], ["-k", "1"], ["-c", "-k", "10"]])
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", options


def ndeval_case(seed: int) -> tuple[str, str, list[str]]:
    """(qrels text, run text, ndeval options): 1-8 subtopics a topic (numbers with gaps), labels 0-2, ties of
    scores, unjudged items, topics with no relevant item, topics on one side only."""
    rng = random.Random(10_000 + seed)
    qrels, run = [], []
    for topic in rng.sample(range(1, 300), rng.randint(1, 6)):
        subtopics = rng.sample(range(12), rng.randint(1, 8))
        items = [f"d{n}" for n in rng.sample(range(50), rng.randint(1, 28))]
        no_relevant = rng.random() < 0.12
        if rng.random() < 0.9:
            for item in items[:rng.randint(0, len(items))] + [f"x{n}" for n in range(rng.randint(0, 3))]:
                for subtopic in subtopics:
                    if rng.random() < 0.6:
                        label = 0 if no_relevant else rng.choice([0, 0, 1, 2])
                        qrels.append(f"{topic} {subtopic} {item} {label}")
        if rng.random() < 0.9:
            ranks = rng.sample(range(1, 3 * len(items) + 1), len(items))
            for rank, item in zip(ranks, items, strict=True):
                score = rng.choice([round(rng.random(), 3), 0.5, 1, 2.25])
                run.append(f"{topic} Q0 {item} {rank} {score} nrun{seed}")
    if not run:
        run.append(f"1 Q0 d1 1 1.0 nrun{seed}")
    if not qrels:
        qrels.append("1 1 d1 1")
    rng.shuffle(qrels)
    rng.shuffle(run)
    options = rng.choice([[], [], ["-traditional"], ["-c"], ["-alpha", "0.3"], ["-beta", "0.8", "-traditional"],
                          ["-M", "7"], ["-alpha", "1", "-c"], ["-alpha", "0"]])
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", options


RISK_CASES = 40


def risk_case(seed: int) -> tuple[str, str, str, list[str]]:
    """(qrels text, run text, baseline run text, gdeval options with ``BASELINE`` for the baseline's path)."""
    qrels, run, _ = gdeval_case(1000 + seed)
    rng = random.Random(3000 + seed)
    # The baseline ranks the run's items of most of its topics otherwise (and may rank a topic the run lacks).
    dropped = {line.split()[0] for line in run.splitlines() if rng.random() < 0.2}
    baseline = "".join(f"{topic} Q0 {item} {rank} {rng.choice([round(rng.random(), 3), 0.5])} base{seed}\n"
                       for topic, _, item, rank, *_ in (line.split() for line in run.splitlines())
                       if topic not in dropped) + f"{rng.randint(400, 500)} Q0 d1 1 1 base{seed}\n"
    options = ["-baseline", "BASELINE", *rng.choice([[], ["-riskAlpha", "1"], ["-riskAlpha", "0.5"], ["-c"],
                                                     ["-c", "-riskAlpha", "2"], ["-k", "5", "-riskAlpha", "1.0"]])]
    return qrels, run, baseline, options


def ndeval_risk_case(seed: int) -> tuple[str, str, str, list[str]]:
    """ndeval's: (qrels text, run text, baseline run text, options with ``BASELINE``)."""
    qrels, run, _ = ndeval_case(1000 + seed)
    rng = random.Random(4000 + seed)
    lines = [line.split() for line in run.splitlines()]
    dropped = {line[0] for line in lines if rng.random() < 0.2}
    kept = [line for line in lines if line[0] not in dropped]
    ranks = rng.sample(range(1, 4 * len(kept) + 2), len(kept) + 1)
    baseline = "".join(f"{line[0]} Q0 {line[2]} {rank} {rng.choice([round(rng.random(), 3), 0.5])} nbase{seed}\n"
                       for line, rank in zip(kept, ranks, strict=False)) + f"{rng.randint(300, 400)} Q0 d1 1 1 b\n"
    options = ["-baseline", "BASELINE", *rng.choice([[], ["-riskAlpha", "1"], ["-riskAlpha", "0.5", "-traditional"],
                                                     ["-c"], ["-c", "-riskAlpha", "2"],
                                                     ["-M", "5", "-riskAlpha", "1.0"]])]
    return qrels, run, baseline, options


@functools.cache
def risk_cases() -> dict[str, tuple[str, str, str, list[str]]]:
    """The risk-sensitive cases (``-baseline``): ``{name: (qrels, run, baseline, options)}``."""
    out = {f"gdevalrisk{seed}": risk_case(seed) for seed in range(RISK_CASES)}
    out.update({f"ndevalrisk{seed}": ndeval_risk_case(seed) for seed in range(RISK_CASES)})
    return out


@functools.cache
def cases() -> dict[str, tuple[str, str, str, list[str]]]:
    """Every case: ``{name: (tool, qrels text, run text, options)}``."""
    out = {f"gdeval{seed}": ("gdeval", *gdeval_case(seed)) for seed in range(GDEVAL_CASES)}
    out.update({f"ndeval{seed}": ("ndeval", *ndeval_case(seed)) for seed in range(NDEVAL_CASES)})
    return out


def live_command(tool: str) -> list[str] | None:
    """The original's command from ``$CASTREGIN_GDEVAL`` / ``$CASTREGIN_NDEVAL``, or None."""
    path = os.environ.get("CASTREGIN_GDEVAL" if tool == "gdeval" else "CASTREGIN_NDEVAL")
    if not path:
        return None
    return ["perl", path] if tool == "gdeval" else [path]


def run_original(tool: str, qrels: Path, run: Path, options: list[str]) -> str:
    """The original's standard output on the files (it must be configured)."""
    command = live_command(tool)
    assert command is not None
    return subprocess.run([*command, *options, str(qrels), str(run)], check=True, capture_output=True,
                          text=True).stdout


@functools.cache
def kept_outputs(at1: bool = False) -> dict[str, str]:
    """The kept outputs of the originals, by case (``at1``: the patched ndeval's, with @1 for @5)."""
    return json.loads(lzma.decompress((KEPT_AT1 if at1 else KEPT).read_bytes()).decode())


def write_kept(directory: Path) -> None:
    """Run both originals on every case and keep their outputs."""
    outputs = {}
    for name, (tool, qrels_text, run_text, options) in cases().items():
        qrels, run = directory / f"{name}.qrels", directory / f"{name}.run"
        qrels.write_text(qrels_text)
        run.write_text(run_text)
        outputs[name] = run_original(tool, qrels, run, options)
    for name, (qrels_text, run_text, baseline_text, options) in risk_cases().items():
        qrels, run, baseline = directory / f"{name}.qrels", directory / f"{name}.run", directory / f"{name}.base"
        qrels.write_text(qrels_text)
        run.write_text(run_text)
        baseline.write_text(baseline_text)
        outputs[name] = run_original(name[:6], qrels, run, [str(baseline) if o == "BASELINE" else o for o in options])
    KEPT.parent.mkdir(parents=True, exist_ok=True)
    KEPT.write_bytes(lzma.compress(json.dumps(outputs, sort_keys=True).encode(), preset=9 | lzma.PRESET_EXTREME))


def write_kept_at1(directory: Path, patched: str) -> None:
    """Run the patched ndeval (``patched``, its path) on the ndeval cases and keep its outputs."""
    outputs = {}
    for name, (tool, qrels_text, run_text, options) in cases().items():
        if tool == "ndeval":
            qrels, run = directory / f"{name}.qrels", directory / f"{name}.run"
            qrels.write_text(qrels_text)
            run.write_text(run_text)
            outputs[name] = subprocess.run([patched, *options, str(qrels), str(run)], check=True, capture_output=True,
                                           text=True).stdout
    KEPT_AT1.write_bytes(lzma.compress(json.dumps(outputs, sort_keys=True).encode(), preset=9 | lzma.PRESET_EXTREME))


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        if sys.argv[1:2] == ["--at1"]:
            write_kept_at1(Path(work), sys.argv[2])
            sys.stdout.write(f"{KEPT_AT1} ({KEPT_AT1.stat().st_size} bytes)\n")
        else:
            write_kept(Path(work))
            sys.stdout.write(f"{KEPT} ({KEPT.stat().st_size} bytes)\n")


# --- castregin's measures against the kept outputs -------------------------------------------------------------

#: The original's column of each registered measure (by definition name) at cutoff k.
COLUMN = {"gdeval_nDCG": "ndcg@{k}", "ERR": "err@{k}", "alpha_nDCG": "alpha-nDCG@{k}", "alpha_DCG": "alpha-DCG@{k}",
          "ERR_IA": "ERR-IA@{k}", "nERR_IA": "nERR-IA@{k}", "P_IA": "P-IA@{k}", "StRecall": "strec@{k}",
          "NRBP": "NRBP", "nNRBP": "nNRBP", "AP_IA": "MAP-IA"}


def _table(text: str) -> tuple[list[str], dict[str, list[str]]]:
    lines = [line.split(",") for line in text.splitlines()]
    return lines[0][2:], {line[1]: line[2:] for line in lines[1:]}


def _option(options: list[str], flag: str, default: str) -> str:
    return options[options.index(flag) + 1] if flag in options else default


def measure_cases(definition_name: str, by_rank: bool = False, limit: int | None = None, at1: bool = False):
    """For a registered measure: ``(measure name, qrels text, run text as castregin must rank it, {topic: value},
    mean or None)`` for each kept case of its original. ndeval orders by rank unless -traditional: the run's scores
    become minus the ranks then, or with ``by_rank`` the measure is asked for ``order='rank'``; -M keeps the top of
    that order. ``at1``: ndeval's cutoff measures at 1, from the patched ndeval's kept outputs."""
    gdeval = definition_name in ("gdeval_nDCG", "ERR")
    chosen = [name for name, case in cases().items() if case[0] == ("gdeval" if gdeval else "ndeval")][:limit]
    for name in chosen:
        _, qrels_text, run_text, options = cases()[name]
        columns, rows = _table(kept_outputs(at1)[name])
        if gdeval:
            k = int(_option(options, "-k", "20"))
            measure = f"nDCG(dcg='exp-log2')@{k}" if definition_name == "gdeval_nDCG" else f"ERR@{k}"
            ks = [k]
        else:
            alpha, beta = _option(options, "-alpha", "0.5"), _option(options, "-beta", "0.5")
            ks = ([1] if at1 else [5, 10, 20]) if "{k}" in COLUMN[definition_name] else [None]
            lines = [line.split() for line in run_text.splitlines()]
            rank_order = by_rank and "-traditional" not in options
            if "-traditional" not in options:
                lines = [[*line[:4], str(-int(line[3])), *line[5:]] for line in lines]
            if "-M" in options:
                depth = int(_option(options, "-M", "0"))
                by_topic: dict[str, list] = {}
                for line in lines:
                    by_topic.setdefault(line[0], []).append(line)
                lines = [line for group in by_topic.values()
                         for line in sorted(group, key=lambda line: (-float(line[4]), line[2]))[:depth]]
            if rank_order:  # the original run's lines (its scores), ranked by their rank column
                original = {(line.split()[0], line.split()[2]): line for line in run_text.splitlines()}
                ranked_text = "".join(original[line[0], line[2]] + "\n" for line in lines)
            else:
                ranked_text = "".join(" ".join(line) + "\n" for line in lines)
        for k in ks:
            column = columns.index(COLUMN[definition_name].format(k=k))
            values = {topic: float(row[column]) for topic, row in rows.items() if topic != "amean"}
            mean = float(rows["amean"][column]) if "-c" not in options else None
            if not gdeval:
                cut = f"@{k}" if k else ""
                order = ",order='rank'" if rank_order else ""
                measure = (f"NRBP(alpha={alpha},beta={beta}{order})" if definition_name in ("NRBP", "nNRBP") else
                           f"AP_IA({order[1:]})" if definition_name == "AP_IA" else
                           f"{definition_name}(alpha={alpha}{order}){cut}")
                measure = measure.replace("NRBP(", f"{definition_name}(", 1) if "NRBP" in definition_name else measure
            yield measure, qrels_text, run_text if gdeval else ranked_text, values, mean
