"""The model's side of the CONE-RAG slice (data/cone_rag_model) is what ``castregin nuggets assign`` writes against
the rule server on the slice's stand-in answers (cone_rag_model.py), and its labels are the server's rule."""

from __future__ import annotations

import json

from .cone_rag_model import MODEL, assign_every_run, human_records, stand_in_answer
from .nugget_server import serve_nuggets, support_rule


def test_the_committed_model_source_is_what_assign_writes(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", "sk-test-not-a-secret")
    server = serve_nuggets(faults=False)
    try:
        written = assign_every_run(cli, server.base_url, tmp_path)
    finally:
        server.shutdown()
    assert written == {path.stem: path.read_text() for path in sorted(MODEL.glob("*.jsonl"))}
    for run, records in human_records().items():
        model = {r["qid"]: r for r in map(json.loads, written[run].splitlines())}
        for record in records:
            answer = stand_in_answer(record)
            expected = [support_rule(n["text"], answer) if answer else "not_support" for n in record["nuggets"]]
            assert [n["assignment"] for n in model[record["qid"]]["nuggets"]] == expected, (run, record["qid"])
            assert [n["text"] for n in model[record["qid"]]["nuggets"]] == [n["text"] for n in record["nuggets"]]
