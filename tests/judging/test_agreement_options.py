"""`castregin agreement`'s refusals that depend on the options alone come before any source is read."""

from __future__ import annotations

import pytest

MISSING = "no-such-dir/missing.qrel"


@pytest.mark.parametrize(("args", "message"), [
    (("--format", "csv", "--show", "pairs,labels"), "--show: csv holds one table: name one section with --show"),
    (("--show", "ranking"), "--show: the section 'ranking' needs runs to rank: give them with --runs"),
    (("--within", "--per-worker"), "--per-worker: --per-worker compares each worker with the other sources"),
])
def test_option_refusals_come_before_reading_the_sources(cli, tmp_path, args, message):
    """A source that does not exist would be refused when read: the option's own refusal comes first."""
    result = cli("agreement", tmp_path / MISSING, tmp_path / "other.qrel", *args)
    assert result.exit_code == 1
    error = result.stderr.strip()
    assert message in error and len(error.splitlines()) == 1, error
    assert MISSING not in error
