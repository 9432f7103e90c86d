"""Qrels tools: rebuilding the CAsT-ReGIn variants, combining criteria, statistics."""

from __future__ import annotations

import json

import pytest

from castregin import Qrels, formats
from castregin.labels import mean_rounded
from castregin.track.qrels import combine, filter_turns, stats


def _sorted_lines(path):
    return sorted(line.split() for line in path.read_text().splitlines() if line.strip())


def test_filter_rebuilds_question_relevance_filtered(cli, cast2022, tmp_path):
    out = tmp_path / "filtered.qrel"
    result = cli("qrels", "filter", cast2022 / "regin/qrels/question_relevance_all.qrel", "--min-label", "2",
                 "-o", out)
    assert result.exit_code == 0, result.output
    assert _sorted_lines(out) == _sorted_lines(cast2022 / "regin/qrels/question_relevance_filtered.qrel")
    assert len({line[0] for line in _sorted_lines(out)}) == 194


def test_subset_rebuilds_question_relevance_mi_subset(cli, cast2022, tmp_path):
    # The 24 mixed-initiative turns, as a list of ids (one a line).
    mi = cast2022 / "regin/qrels/question_relevance_mi_subset.qrel"
    turns = tmp_path / "mi_turns.txt"
    turns.write_text("".join(f"{t}\n" for t in dict.fromkeys(line[0] for line in _sorted_lines(mi))))
    out = tmp_path / "mi.qrel"
    result = cli("qrels", "subset", cast2022 / "regin/qrels/question_relevance_all.qrel", "--turns", turns,
                 "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_text() == formats.format_qrels(formats.read_qrels(mi))  # sorted by turn, item
    assert _sorted_lines(out) == _sorted_lines(mi)
    assert len(turns.read_text().split()) == 24


def test_written_qrels_are_sorted_and_space_separated(cli, cast2022):
    result = cli("qrels", "filter", cast2022 / "regin/qrels/question_relevance_all.qrel")
    lines = result.stdout.splitlines()
    assert lines == sorted(lines, key=lambda line: line.split()[:3])
    assert lines[0] == "132_1-1 0 Q0821 0"


def test_filter_keeps_turns_with_a_label_at_or_above_the_level():
    qrels = Qrels({"a": {"x": 1, "y": 2}, "b": {"x": 1}, "c": {"x": 3, "y": 0}})
    assert filter_turns(qrels, 2).labels == {"a": {"x": 1, "y": 2}, "c": {"x": 3, "y": 0}}
    assert filter_turns(qrels, 3).turns == ["c"]


def test_mean_rounds_half_up_in_integers():
    assert [mean_rounded(v) for v in ([1, 2], [2, 3], [0, 1, 1, 1], [3, 3, 0], [0, 0, 1])] == [2, 3, 1, 2, 0]
    assert mean_rounded([-1, -2]) == -1


@pytest.mark.parametrize("how,expected", [("min", {"x": 1, "y": 0}), ("max", {"x": 3, "y": 2}),
                                          ("mean", {"x": 2, "y": 1})])
def test_combine(how, expected):
    relevance = Qrels({"t": {"x": 3, "y": 0, "only_here": 2}}, name="rel")
    novelty = Qrels({"t": {"x": 1, "y": 2}}, name="nov")
    combined, left_out = combine([relevance, novelty], how)
    assert combined.labels == {"t": expected}
    assert left_out == 1


def test_combine_real_relevance_and_novelty(cli, cast2022):
    rel = cast2022 / "regin/qrels/question_relevance_all.qrel"
    nov = cast2022 / "regin/qrels/question_novelty.qrel"
    result = cli("qrels", "combine", rel, nov, "--how", "min")
    assert result.exit_code == 0, result.output
    combined = {tuple(line.split()[::2][:2]): int(line.split()[3]) for line in result.stdout.splitlines()}
    r, n = formats.read_qrels(rel), formats.read_qrels(nov)
    assert len(combined) == 2024
    for (turn, item), label in combined.items():
        assert label == min(r.labels[turn][item], n.labels[turn][item])


def test_stats_of_real_qrels(cli, cast2022):
    result = cli("qrels", "stats", cast2022 / "regin/qrels/question_relevance_all.qrel", "--format", "json")
    (s,) = json.loads(result.stdout)
    assert s["turns"] == 205 and s["items"] == 2024 and s["topics"] == 18
    assert sum(s["labels"].values()) == 2024
    assert s["turns_with_relevant"] == 194
    table = cli("qrels", "stats", cast2022 / "regin/qrels/question_relevance_all.qrel").stdout
    assert "question_relevance_all" in table and "205" in table


def test_stats_histogram():
    s = stats(Qrels({"1_a": {"x": 0, "y": 2}, "1_b": {"x": 2}, "2_a": {"z": -1}}, name="q"))
    assert s["labels"] == {"-1": 1, "0": 1, "2": 2}
    assert s["topics"] == 2 and s["turns_with_relevant"] == 2
    assert s["items_per_turn"] == {"min": 1, "mean": 4 / 3, "max": 2}


def test_merging_a_qrels_with_itself_gives_it_back_with_one_provenance_source(cli, tmp_path):
    import hashlib

    qrels = tmp_path / "m1.qrel"
    qrels.write_text("1_1-1 0 Q01 2\n1_1-1 0 Q02 -1\n1_1-2 0 Q03 0\n")
    result = cli("qrels", "merge", qrels, qrels, "-o", tmp_path / "out.qrel", "--provenance", tmp_path / "p.json")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "out.qrel").read_text() == qrels.read_text()
    record = json.loads((tmp_path / "p.json").read_text())
    assert record["sources"] == [{"path": str(qrels), "sha256": hashlib.sha256(qrels.read_bytes()).hexdigest(),
                                  "labels": 3}]
    assert {r["source"] for r in record["labels"]} == {str(qrels)}
    assert result.stderr == f"castregin: 3 labels: 3 from {qrels}\n"
