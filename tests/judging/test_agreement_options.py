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


def test_the_gold_file_is_read_once_for_every_crowd_source(cli, tmp_path, monkeypatch):
    """Two crowd sources with one --gold: the gold file is read once, and filters both alike (the two
    sources being the same CSV, their aggregated labels agree exactly)."""
    import json
    from pathlib import Path

    import castregin.formats.crowd as crowd_format

    crowd = Path(__file__).resolve().parent.parent.parent / "data" / "crowd"
    calls = []
    read_gold = crowd_format.read_gold

    def counted(*args, **kwargs):
        calls.append(args[0])
        return read_gold(*args, **kwargs)

    monkeypatch.setattr(crowd_format, "read_gold", counted)
    result = cli("agreement", f"one={crowd / 'judgments.csv'}", f"two={crowd / 'judgments.csv'}", "--criteria",
                 "relevance", "--gold", crowd / "gold.csv", "--format", "json", "--samples", "0")
    assert result.exit_code == 0, result.stderr
    assert len(calls) == 1
    (pair,) = json.loads(result.stdout)["pairs"]
    assert pair["statistics"]["exact"] == 1.0 and pair["only_a"] == pair["only_b"] == 0
