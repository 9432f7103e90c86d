"""The report of 30 simulated runs, built once a session (once a worker under xdist) for the tests of
test_report.py and test_report_browser.py, which read it and never write into it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def simulated(tmp_path_factory):
    """``report_simulated``'s report (every option on) and its inputs: ``(directory, [*runs, qrels])``."""
    from .test_report import report_simulated

    return report_simulated(tmp_path_factory.mktemp("simulated"))
