"""Shared fixtures: where the public reference data lives, and a CLI runner.

The real CAsT 2022 data is never copied into the repository. Tests read it from
``$CASTREGIN_REFERENCE_DATA`` (the ``cast2022`` directory) or from ``../shared/cast2022`` beside the
clone, and skip when it is absent. ``crowd_example`` and ``clembench`` are its siblings.
"""

from __future__ import annotations

import os
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
