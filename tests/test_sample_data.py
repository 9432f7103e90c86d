"""The sample data of `make demo` is what data/make_sample.py writes, and the demo pipeline hangs together."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data"
SAMPLE_FILES = ["question_bank.json", "turn_ids.json", "runs/alpha.json", "runs/beta.json",
                "crowd/judgments.csv", "crowd/gold.csv"]


@pytest.fixture(scope="module")
def make_sample():
    spec = importlib.util.spec_from_file_location("make_sample", DATA / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_sample_equals_the_generator_output(make_sample, tmp_path, monkeypatch):
    monkeypatch.setattr(make_sample, "HERE", tmp_path)
    make_sample.main()
    for name in SAMPLE_FILES:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def test_demo_pipeline_judges_every_pooled_question_and_filters_the_unhelpful_turn(cli, tmp_path):
    converted = cli("convert", "questions", DATA / "runs/alpha.json", DATA / "runs/beta.json",
                    "--bank", DATA / "question_bank.json", "--turns", DATA / "turn_ids.json",
                    "--out-dir", tmp_path / "runs")
    assert converted.exit_code == 0, converted.stderr
    pooled = cli("pool", tmp_path / "runs/alpha.run", tmp_path / "runs/beta.run", "--depth", "2")
    assert pooled.exit_code == 0, pooled.stderr
    pool = {(line.split()[0], line.split()[2]) for line in pooled.stdout.splitlines()}
    with (DATA / "crowd/judgments.csv").open(newline="", encoding="utf-8") as handle:
        judged = {(row["turn_id"], row["item_id"]) for row in csv.DictReader(handle)}
    # The generative run's new texts get the ids the crowd CSV uses (Q0012...), so nothing pooled is unjudged.
    assert pool <= judged
    assert {item for _, item in pool} >= {"Q0012", "Q0017"}

    aggregated = cli("aggregate", DATA / "crowd/judgments.csv", "--criteria", "relevance,novelty,diversity",
                     "--gold", DATA / "crowd/gold.csv", "--out-dir", tmp_path / "qrels")
    assert aggregated.exit_code == 0, aggregated.stderr
    turns = {line.split()[0] for line in (tmp_path / "qrels/question_relevance.qrel").read_text().splitlines()}
    kept = {line.split()[0] for line in
            (tmp_path / "qrels/question_relevance_filtered.qrel").read_text().splitlines()}
    assert turns - kept == {"102_2-1"}
