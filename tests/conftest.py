"""Shared fixtures: where the public reference data lives, and a CLI runner.

The real CAsT 2022 data is never copied into the repository. Tests read it from
``$CASTREGIN_REFERENCE_DATA`` (the ``cast2022`` directory) or from ``../shared/cast2022`` beside the
clone, and skip when it is absent. ``crowd_example`` and ``clembench`` are its siblings. A slice of it,
tests/data/cast2022_slice (made by its make_slice.py), is in the repository: tests that hold for any
CAsT data take ``cast_data``, which is the slice everywhere and the full data too where it is present.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent


def _cast2022_dir() -> Path:
    configured = os.environ.get("CASTREGIN_REFERENCE_DATA")
    return Path(configured) if configured else REPO.parent / "shared" / "cast2022"


def _shared_dir(name: str) -> Path:
    path = _cast2022_dir().parent / name
    if not path.is_dir():
        pytest.skip(f"reference data {path} is absent (set CASTREGIN_REFERENCE_DATA to the cast2022 directory)")
    return path


#: The slice of CAsT 2022 kept in the repository (tests/data/cast2022_slice/README.md).
CAST_SLICE = REPO / "tests" / "data" / "cast2022_slice"


@dataclass(frozen=True)
class CastData:
    """CAsT 2022 data laid out as ../shared/cast2022 is (``root / "regin/qrels/question_relevance_all.qrel"``...),
    with the four baseline MI runs as TREC runs (``run_paths``, in tests/reference_runs.py's order)."""

    name: str
    root: Path
    run_paths: list[Path]

    def qrels(self, name: str) -> Path:
        """A ReGIn question qrels: ``relevance_all``, ``relevance_filtered``, ``relevance_mi_subset``, ``novelty``,
        ``diversity``."""
        return self.root / "regin" / "qrels" / f"question_{name}.qrel"

    @property
    def turn_ids(self) -> Path:
        return self.root / "topics" / "2022_evaluation_topics_turn_ids.json"


#: The slice, and the full data where it is present: the full data's cases are not collected without it.
CAST_SOURCES = ["slice", *(["cast2022"] if (_cast2022_dir() / "regin").is_dir() else [])]


@pytest.fixture(scope="session")
def cast_slice() -> CastData:
    """The slice of CAsT 2022 in the repository alone: for tests that need CAsT-shaped inputs, not the full data's
    numbers."""
    from reference_runs import MI_RUNS

    return CastData("slice", CAST_SLICE, [CAST_SLICE / "runs" / f"{name}.run" for name in MI_RUNS])


@pytest.fixture(scope="session", params=CAST_SOURCES)
def cast_data(request, tmp_path_factory) -> CastData:
    """CAsT 2022 qrels and baseline runs: the slice in the repository, then the full reference data (if present)."""
    if request.param == "slice":
        return request.getfixturevalue("cast_slice")
    # Not through the cast2022 and run_paths fixtures: a test module may name its own fixtures so.
    from reference_runs import write_reference_runs

    root = _cast2022_dir()
    return CastData("cast2022", root, write_reference_runs(root, tmp_path_factory.mktemp("cast2022_runs")))


@pytest.fixture(autouse=True)
def fixed_report_date(monkeypatch):
    """Reports state when they were built; tests that compare two builds need the same date."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")


@pytest.fixture(scope="session")
def cast2022() -> Path:
    """The CAsT 2022 reference data directory (skips the test when it is absent)."""
    path = _cast2022_dir()
    if not (path / "regin").is_dir():
        pytest.skip(f"CAsT 2022 reference data {path} is absent (set CASTREGIN_REFERENCE_DATA)")
    return path


@pytest.fixture(scope="session")
def crowd_example() -> Path:
    """The simulated crowd of ../shared/crowd_example (skips when absent)."""
    return _shared_dir("crowd_example")


@pytest.fixture(scope="session")
def clembench() -> Path:
    """The clembench episodes of ../shared/clembench (skips when absent)."""
    return _shared_dir("clembench")


@pytest.fixture(scope="session")
def run_paths(cast2022, tmp_path_factory) -> list[Path]:
    """The four CAsT 2022 baseline MI runs as TREC runs (see tests/reference_runs.py)."""
    from reference_runs import write_reference_runs

    return write_reference_runs(cast2022, tmp_path_factory.mktemp("runs"))


@pytest.fixture
def cli():
    """Invoke the castregin CLI in-process: ``cli("evaluate", "run", "--qrels", "q")``.

    Standard error is kept apart from standard output (``result.stderr``).
    """
    from castregin.cli import main

    runner = CliRunner()

    def invoke(*args, input=None):  # noqa: A002 - CliRunner.invoke's own keyword
        return runner.invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)

    return invoke
