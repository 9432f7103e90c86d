"""The trec_eval binary, shared by every module that compares with it (found once a session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .trec_eval_oracle import find_trec_eval


@pytest.fixture(scope="session")
def trec_eval_binary(tmp_path_factory) -> Path:
    """A trec_eval 9.0.8 binary (see trec_eval_oracle.py for where it comes from); skips without one."""
    binary, why = find_trec_eval(tmp_path_factory.mktemp("trec_eval"))
    if binary is None:
        pytest.skip(why)
    return binary
