"""A model's side of the CONE-RAG slice (``tests/nuggets/data/cone_rag_human``): ``castregin nuggets assign`` against
the rule server of ``nugget_server.py``, assigning the very nuggets the people of iKAT 2024's matching study
labelled, run by run, turn by turn. ``data/cone_rag_model/<run>.jsonl`` is what it writes; ``make_cone_rag_model.py``
writes it again, and a test checks that the committed files are what the command writes.

CONE-RAG's study keeps no answer texts, so the answers here are **stand-ins**: a run's answer to a turn is what the
people found in it, the nuggets they labelled ``support``, each cut to its first :data:`WORDS` words; an answer in
which they found nothing says :data:`NOTHING_FOUND`; the answer the slice gives as empty stays empty. The rule
server then labels a nugget ``support`` when the answer has every word of four letters or more of it,
``partial_support`` when some, ``not_support`` when none: a lenient reader, where the people were strict. The
numbers the two sources give are those of these stand-ins, not of iKAT's runs.
"""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
HUMAN = DATA / "cone_rag_human"
MODEL = DATA / "cone_rag_model"
WORDS = 12
NOTHING_FOUND = "I could not find an answer to that."


def human_records() -> dict[str, list[dict]]:
    """The slice's records, by run (file order)."""
    return {path.stem: [json.loads(line) for line in path.read_text().splitlines()]
            for path in sorted(HUMAN.glob("*.jsonl"))}


def stand_in_answer(record: dict) -> str:
    if record.get("answer_text") == "":
        return ""
    found = [" ".join(n["text"].split()[:WORDS]) for n in record["nuggets"] if n["assignment"] == "support"]
    return " ".join(found) or NOTHING_FOUND


def write_inputs(run: str, records: list[dict], directory: Path) -> tuple[Path, Path]:
    """The run's nuggets file (its nuggets at each turn, as the people labelled them) and its answers (TREC RAG
    2024 JSONL, one sentence each)."""
    directory.mkdir(parents=True, exist_ok=True)
    nuggets, answers = directory / f"{run}.nuggets.jsonl", directory / f"{run}.answers.jsonl"
    nuggets.write_text("".join(json.dumps({"qid": r["qid"], "query": r["query"],
                                           "nuggets": [{"text": n["text"], "importance": n["importance"]}
                                                       for n in r["nuggets"]]}) + "\n" for r in records))
    answers.write_text("".join(json.dumps({"run_id": run, "topic_id": r["qid"], "topic": r["query"], "references": [],
                                           "answer": [{"text": stand_in_answer(r), "citations": []}]}) + "\n"
                               for r in records))
    return nuggets, answers


def assign_every_run(invoke, base_url: str, work: Path) -> dict[str, str]:
    """``castregin nuggets assign`` once per run of the slice (each run was labelled on nuggets of its own);
    ``invoke(*args)`` runs the command line. Returns each run's assignments.jsonl."""
    written = {}
    for run, records in human_records().items():
        nuggets, answers = write_inputs(run, records, work / "inputs")
        out = work / run
        result = invoke("nuggets", "assign", nuggets, answers, "--model", "rule-1", "--base-url", base_url,
                        "--out-dir", out, "--api-key-env", "CASTREGIN_TEST_KEY", "--window", "10")
        assert result.exit_code == 0, result.stderr
        written[run] = (out / "assignments.jsonl").read_text()
    return written
