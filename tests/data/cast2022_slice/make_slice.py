"""Make the CAsT 2022 slice in this directory from the full reference data (../shared/cast2022).

    python tests/data/cast2022_slice/make_slice.py                 # the slice, from $CASTREGIN_REFERENCE_DATA
                                                                   # or ../shared/cast2022
    CASTREGIN_TREC_EVAL=/path/to/trec_eval \\
        python tests/data/cast2022_slice/make_slice.py --trec-eval # and the binary's outputs on it

A few turns of CAsT 2022's mixed-initiative task, laid out as ../shared/cast2022 is, so that the parity
tests run in every clone (tests/conftest.py: the ``cast_data`` fixture), not only beside ../shared:

- ``regin/qrels/question_*.qrel``: the lines of :data:`TURNS` of the ReGIn question qrels (relevance: all,
  filtered, mi_subset; novelty; diversity), in the files' order;
- ``topics/2022_evaluation_topics_turn_ids.json``: those turns, per topic;
- ``runs/*.run``: the four baseline MI runs (``runs/mi/*.json``) converted to TREC runs by the rules of
  tests/reference_runs.py, on those turns but :data:`QRELS_ONLY`, each turn cut to its first
  :data:`DEPTH` items and the items the qrels judge that it ranks below them, with every item whose
  score ties with one of those (scores as given);
- ``trec_eval/*.txt.gz``: what trec_eval 9.0.8 prints on them (the tag ``trec_eval-9.0.8`` of
  usnistgov/trec_eval, built with ``make``; 64-bit scores), ``-m all_trec`` with each option set of
  tests/cli/trec_eval_oracle.py's :data:`CAST_OPTIONS`, on ``question_relevance_all.qrel``.

The turns are chosen to hold what the full data holds: turns that need mixed initiative (the mi_subset),
turns without a label of 2 or more (outside the filtered qrels), turns where miniLM ties many scores,
five topics, a turn the runs lack. No file here is a copy of a shared file: each is a part of one, or made from one.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parents[1]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "cli"))

#: The turns of the slice: (topic, turn) as the turn-ids file has them.
TURNS = [("133", "1-1"), ("133", "1-3"), ("133", "3-4"), ("133", "3-6"),
         ("134", "1-1"), ("134", "1-3"), ("134", "1-5"), ("134", "2-3"),
         ("136", "1-3"), ("136", "1-9"),
         ("146", "1-5"), ("146", "1-9"),
         ("149", "3-1")]
#: The turns the slice's runs leave out (so that ``-c``, ``--complete``, counts a turn without results).
QRELS_ONLY = [("149", "3-1")]
#: The items of each turn a run keeps beside those the qrels judge.
DEPTH = 15
QRELS = ["relevance_all", "relevance_filtered", "relevance_mi_subset", "novelty", "diversity"]


def turn_ids(turns=TURNS) -> list[str]:
    return [f"{topic}_{turn}" for topic, turn in turns]


def _reference() -> Path:
    configured = os.environ.get("CASTREGIN_REFERENCE_DATA")
    return Path(configured) if configured else TESTS.parents[0].parent / "shared" / "cast2022"


def _lines_of_turns(path: Path, turns: set[str]) -> str:
    return "".join(line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                   if line.split() and line.split()[0] in turns)


def _cut(run_text: str, judged: dict[str, set[str]]) -> str:
    """The run's lines of the slice's turns: each turn's first DEPTH lines, its judged items below them, and the
    items whose score ties with one of those (a tie is broken by item id: the slice keeps it whole)."""
    lines = [line for line in run_text.splitlines(keepends=True) if line.split()[0] in judged]
    chosen, seen = set(), {}
    for line in lines:
        turn, _, item, _, score = line.split()[:5]
        seen[turn] = seen.get(turn, 0) + 1
        if seen[turn] <= DEPTH or item in judged[turn]:
            chosen.add((turn, score))
    return "".join(line for line in lines if (line.split()[0], line.split()[4]) in chosen)


def slice_files(cast2022: Path) -> dict[str, bytes]:
    """Every file of the slice but the binary's outputs: ``{path relative to this directory: bytes}``."""
    from reference_runs import read_qrels_plain, write_reference_runs

    turns = set(turn_ids())
    files = {}
    for name in QRELS:
        files[f"regin/qrels/question_{name}.qrel"] = _lines_of_turns(
            cast2022 / f"regin/qrels/question_{name}.qrel", turns).encode()
    official = json.loads((cast2022 / "topics/2022_evaluation_topics_turn_ids.json").read_text(encoding="utf-8"))
    chosen = {topic: [turn for turn in official[topic] if (topic, turn) in TURNS] for topic in official}
    files["topics/2022_evaluation_topics_turn_ids.json"] = (
        json.dumps({topic: listed for topic, listed in chosen.items() if listed}, indent=1) + "\n").encode()
    judged = {turn: set(items) for turn, items in read_qrels_plain(cast2022 / "regin/qrels/"
                                                                   "question_relevance_all.qrel").items()
              if turn in turns and turn not in turn_ids(QRELS_ONLY)}
    with tempfile.TemporaryDirectory() as directory:
        for path in write_reference_runs(cast2022, Path(directory)):
            files[f"runs/{path.name}"] = _cut(path.read_text(encoding="utf-8"), judged).encode()
    return files


def trec_eval_outputs(binary: Path, root: Path = HERE) -> dict[str, bytes]:
    """The binary's outputs on the slice (``trec_eval/NAME``: gzip of its standard output)."""
    from trec_eval_oracle import slice_cases

    return {str(kept.relative_to(root)): gzip.compress(subprocess.run(
                [str(binary), *options.split(), str(qrels), str(run)], capture_output=True, check=True).stdout, mtime=0)
            for kept, options, qrels, run in slice_cases(root)}


def main(argv: list[str]) -> int:
    cast2022 = _reference()
    if not (cast2022 / "regin").is_dir():
        print(f"no CAsT 2022 data at {cast2022} (set CASTREGIN_REFERENCE_DATA)", file=sys.stderr)
        return 1
    files = slice_files(cast2022)
    for name, data in files.items():
        (HERE / name).parent.mkdir(parents=True, exist_ok=True)
        (HERE / name).write_bytes(data)
    if "--trec-eval" in argv:
        binary = os.environ.get("CASTREGIN_TREC_EVAL")
        if not binary:
            print("set CASTREGIN_TREC_EVAL to a trec_eval 9.0.8 binary", file=sys.stderr)
            return 1
        for name, data in trec_eval_outputs(Path(binary)).items():
            (HERE / name).parent.mkdir(parents=True, exist_ok=True)
            (HERE / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
