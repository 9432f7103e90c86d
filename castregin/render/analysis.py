"""The tables of the analyses of the evaluation (``analyze``) and of ``pool stats``."""

from __future__ import annotations

from collections.abc import Sequence

from ..formats.common import json_text
from .tables import render_records

RUN_COLUMNS = ["run", "contributed", "unique", "pool_share"]
LORO_COLUMNS = ["run", "unique", "score", "score_without", "change", "rank", "rank_without", "judged_without"]
CORRELATION_COLUMNS = ["qrels_a", "measure_a", "qrels_b", "measure_b", "kendall_tau", "tau_ap",
                       "swapped_pairs", "runs"]
BOOTSTRAP_COLUMNS = ["run", "qrels", "measure", "mean", "low", "high", "turns"]


def loro_report(rows: Sequence, summary: dict, fmt: str) -> str:
    """:func:`castregin.evaluation.analysis.leave_one_run_out`'s rows and summary in a record format.

    ``json`` holds ``{"runs": [...], "summary": {...}}``; ``table`` ends with the summary in a sentence.
    """
    records = [{**vars(row), "change": row.change} for row in rows]
    if fmt == "json":
        return json_text({"runs": records, "summary": summary})
    text = render_records(records, LORO_COLUMNS, fmt)
    if fmt == "table":
        text += (f"\n{summary['measure']} at pool depth {summary['depth']}, unjudged items non-relevant: "
                 f"Kendall's tau {summary['kendall_tau']:.4f}, "
                 f"largest rank drop {summary['max_rank_drop']}\n")
    return text


def correlation_report(rows: Sequence[dict], fmt: str) -> str:
    """:func:`castregin.evaluation.analysis.ranking_correlations`' rows in one of the record formats."""
    return render_records(rows, CORRELATION_COLUMNS, fmt)


def bootstrap_report(intervals: Sequence[dict], fmt: str) -> str:
    """:func:`castregin.evaluation.analysis.bootstrap_intervals`' rows in one of the record formats."""
    return render_records(intervals, BOOTSTRAP_COLUMNS, fmt)


def pool_stats_report(stats: dict, fmt: str) -> str:
    """:func:`castregin.track.pool.pool_statistics` in one of the record formats.

    ``json`` holds everything; ``csv`` one row per run with its overlap with every run (``overlap:RUN``
    columns); the formats for people three tables: runs, overlaps, pool size per turn.
    """
    if fmt == "json":
        return json_text(stats)
    names = [row["run"] for row in stats["runs"]]
    overlap_records = [{"run": a, **{b: stats["overlap"][a][b] for b in names}} for a in names]
    if fmt == "csv":
        records = [{**row, **{f"overlap:{b}": stats["overlap"][row["run"]][b] for b in names}}
                   for row in stats["runs"]]
        return render_records(records, RUN_COLUMNS + [f"overlap:{b}" for b in names], "csv")
    heading = {"markdown": "**{}**\n\n", "latex": "% {}\n"}.get(fmt, "{}\n")
    return "\n".join([
        heading.format(f"Contributions at depth {stats['depth']} to a pool of {stats['pool']} (turn, item) pairs")
        + render_records(stats["runs"], RUN_COLUMNS, fmt),
        heading.format("Pooled pairs shared by two runs") + render_records(overlap_records, ["run", *names], fmt),
        heading.format("Pool size per turn") + render_records(stats["turns"], ["turn", "pool"], fmt),
    ])


# --- analyze holes -------------------------------------------------------------------------------------------

HOLES_RUN_COLUMNS = ["run", "measure", "depth", "turns", "holes", "turns_with_holes", "judged", "score", "low", "high",
                     "run_turns_not_judged", "qrels_turns_not_run"]
HOLES_TURN_COLUMNS = ["run", "measure", "turn", "depth", "holes", "judged", "score", "low", "high"]
HOLES_FLIP_COLUMNS = ["measure", "run_a", "run_b", "score_a", "score_b", "low_a", "high_b", "tie"]


def holes_report(result, fmt: str, per_turn: bool = False) -> str:
    """``analyze holes`` in a record format.

    ``json`` holds the settings, the runs, the flips and (with ``per_turn``) the turns; ``csv`` one table,
    the turns with ``per_turn``, else the runs; the formats for people the runs, the possible flips, then
    the turns with ``per_turn``, each under a heading, and (``table``) a sentence on what the interval is.
    """
    records = result.records()
    if not per_turn:
        records.pop("turns")
    if fmt == "json":
        return json_text(records)
    if fmt == "csv":
        return (render_records(records["turns"], HOLES_TURN_COLUMNS, "csv") if per_turn
                else render_records(records["runs"], HOLES_RUN_COLUMNS, "csv"))
    settings = result.settings
    heading = {"markdown": "**{}**\n\n", "latex": "% {}\n"}.get(fmt, "{}\n")
    parts = [heading.format(f"Scores on {settings['qrels']} as intervals: holes (unjudged items in the top depth) "
                            f"labelled anything from 0 to {settings['hole_label']}")
             + render_records(records["runs"], HOLES_RUN_COLUMNS, fmt)]
    if records["flips"]:
        parts.append(heading.format("Runs whose order the holes could flip (b could end above a)")
                     + render_records(records["flips"], HOLES_FLIP_COLUMNS, fmt))
    else:
        parts.append(heading.format("No two runs whose order the holes could flip"))
    if per_turn:
        parts.append(heading.format("Per turn") + render_records(records["turns"], HOLES_TURN_COLUMNS, fmt))
    text = "\n".join(parts)
    if fmt == "table":
        text += ("\nscore: trec_eval's (holes non-relevant). [low, high]: the least and greatest value over every "
                 "labelling of the holes; unjudged items below the depth count as non-relevant; each run's holes "
                 "are labelled apart, so a flip listed may need one hole labelled two ways.\n")
    return text
