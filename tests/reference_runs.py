"""The CAsT 2022 baseline MI runs as TREC runs, converted by the SPEC rules in a few lines.

Kept independent of castregin.track.convert on purpose: the evaluation tests then check evaluation
alone, and the conversion tests compare castregin.track.convert with the same rules.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

MI_RUNS = ["bm25_baseline_mi_run", "miniLM_bert_sample_mi_run", "T5_raw_run", "T5_rewrite_run"]


def _bank(cast2022: Path) -> dict[str, str]:
    bank = dict(json.loads((cast2022 / "regin/question_bank.json").read_text(encoding="utf-8")))
    pool = json.loads((cast2022 / "topics/2022_mixed_initiative_question_pool.json").read_text(encoding="utf-8"))
    for entry in pool:
        bank.setdefault(entry["question_id"], entry["question"])  # the ReGIn bank wins
    return bank


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def write_reference_runs(cast2022: Path, directory: Path) -> list[Path]:
    """Write the four baseline runs to ``directory`` and return their paths."""
    bank = _bank(cast2022)
    exact, folded = {}, {}
    for qid in sorted(bank):
        exact.setdefault(bank[qid], qid)
        folded.setdefault(_fold(bank[qid]), qid)
    paths = []
    for name in MI_RUNS:
        data = json.loads((cast2022 / f"runs/mi/{name}.json").read_text(encoding="utf-8"))
        lines = []
        for turn in data["turns"]:
            best: dict[str, float] = {}
            for question in turn["questions"]:
                text = question["question"]
                if re.fullmatch(r"Q\d+", text):
                    qid = text if text in bank else None
                else:
                    qid = exact.get(text) or folded.get(_fold(text))
                assert qid is not None, text  # every baseline question is in the two banks
                if qid not in best or question["score"] > best[qid]:
                    best[qid] = question["score"]
            ranked = sorted(best.items(), key=lambda pair: -pair[1])  # stable: ties keep input order
            for rank, (qid, score) in enumerate(ranked, start=1):
                lines.append(f"{turn['turn_id']}\tQ0\t{qid}\t{rank}\t{score!r}\t{data['run_name']}\n")
        path = directory / f"{name}.run"
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(path)
    return paths


def read_plain(path: Path, value) -> dict[str, dict[str, object]]:
    """An independent reader for the oracles: ``{turn: {item: value(fields)}}`` of whitespace-split lines."""
    table: dict[str, dict[str, object]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields:
            table.setdefault(fields[0], {})[fields[2]] = value(fields)
    return table


def read_qrels_plain(path: Path) -> dict[str, dict[str, int]]:
    """Qrels as pytrec_eval takes them, read without castregin."""
    return read_plain(path, lambda fields: int(fields[3]))


def read_run_plain(path: Path) -> dict[str, dict[str, float]]:
    """A run as pytrec_eval takes it, read without castregin."""
    return read_plain(path, lambda fields: float(fields[4]))
