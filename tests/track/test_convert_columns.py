"""A turn converted in passes over its columns gives what the loop over its questions gives.

``castregin convert questions`` converts a turn listed once by whole-column passes in C
(``_turn_by_columns``) and leaves to the per-question loop (``_turn_by_items``) what needs its order
of warnings: the same rankings, warnings, messages and new bank ids either way, on turns with repeated
questions, 0.0 beside -0.0, ties, unknown ids, empty questions and new texts.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from castregin.track import convert
from castregin.track.convert import Bank, Warnings, iter_questions

BANK = {"Q0001": "Do you want recipes?", "Q0002": "Are you vegan?", "Q0003": "Caf\u00e9 or tea?",
        "Q0010": "Are you Vegan?"}
QUESTIONS = ["Q0001", "Q0002", "Q0003", "Q0010", "Q0009", "Do you want recipes?", "  Are you vegan? ",
             "Cafe\u0301 or tea?", "A new one?", "Another new one", "", " "]
SCORES = [0.0, -0.0, 1.0, 1.0, 2.5, -3.25, 7, 1e-300]

turns = st.lists(st.lists(st.tuples(st.sampled_from(QUESTIONS), st.sampled_from(SCORES)), max_size=12),
                 min_size=1, max_size=4)


def _converted(path: Path, by_columns: bool):
    bank, warnings = Bank(BANK), Warnings()
    original = convert._turn_by_columns
    if not by_columns:
        convert._turn_by_columns = lambda *args: False
    try:
        ranked = [(turn, [(item, repr(score)) for item, score in items])
                  for turn, items in iter_questions(path, bank, warnings=warnings, depth=None)]
    finally:
        convert._turn_by_columns = original
    return ranked, warnings.events(), bank.new_ids, bank.entries


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns, st.booleans())
@example([[("Q0001", 0.0), ("Q0002", 1.0), ("Q0001", -0.0), ("Q0002", 2.5), ("Q0002", 2.5)]], False)
def test_columns_and_loop_agree(questions, repeat_a_turn):
    ids = [f"1_1-{n}" for n in range(len(questions))]
    if repeat_a_turn and len(ids) > 2:
        ids[2] = ids[0]  # a turn listed twice: the loop's, its questions taken together
    data = {"run_name": "r", "turns": [{"turn_id": turn, "questions": [{"question": q, "score": s} for q, s in qs]}
                                       for turn, qs in zip(ids, questions, strict=True)]}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "run.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        assert _converted(path, by_columns=True) == _converted(path, by_columns=False)
