"""The CAsT 2022 slice of tests/data (the parity tests' data in every clone) is what its script makes, and small.

tests/data/cast2022_slice/make_slice.py makes it from ../shared/cast2022: beside the full data, the files
are compared with what the script makes of it now, so that a hand edit or a change of the conversion
shows. The trec_eval binary's outputs on it are checked where a binary is at hand (tests/cli/test_trec_eval.py:
the kept outputs are the binary's).
"""

from __future__ import annotations

import importlib.util
import json

from conftest import CAST_SLICE


def _data_files() -> list:
    """The slice's files, but the script that makes them (and what Python caches of it)."""
    return [path for path in CAST_SLICE.rglob("*") if path.is_file() and path.suffix not in (".py", ".pyc")
            and "__pycache__" not in path.parts]


def _make_slice():
    spec = importlib.util.spec_from_file_location("make_slice", CAST_SLICE / "make_slice.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_slice_is_what_its_script_makes_of_the_full_data(cast2022):
    made = _make_slice().slice_files(cast2022)
    kept = {str(path.relative_to(CAST_SLICE)): path.read_bytes() for path in _data_files()
            if path.name != "README.md" and "trec_eval" not in path.parts}
    assert set(made) == set(kept)
    for name, data in made.items():
        assert kept[name] == data, name


def _turns(path) -> set[str]:
    return {line.split()[0] for line in path.read_text(encoding="utf-8").splitlines()}


def test_the_slice_is_small_and_cast_shaped():
    assert max(path.stat().st_size for path in _data_files()) < 16_000  # well under 20 kB a file
    make_slice = _make_slice()
    turns = set(make_slice.turn_ids())
    listed = json.loads((CAST_SLICE / "topics/2022_evaluation_topics_turn_ids.json").read_text(encoding="utf-8"))
    assert {f"{topic}_{turn}" for topic, listed_turns in listed.items() for turn in listed_turns} == turns
    qrels = {path.stem.removeprefix("question_"): _turns(path) for path in (CAST_SLICE / "regin/qrels").glob("*.qrel")}
    assert qrels["relevance_all"] == qrels["novelty"] == qrels["diversity"] == turns
    # Turns that need mixed initiative, and turns without a label of 2 or more (outside the filtered qrels).
    assert qrels["relevance_mi_subset"] < turns and qrels["relevance_filtered"] < turns
    runs = list((CAST_SLICE / "runs").glob("*.run"))
    assert len(runs) == 4
    for run in runs:  # a turn the runs lack
        assert _turns(run) == turns - set(make_slice.turn_ids(make_slice.QRELS_ONLY)), run.name
