"""The tables of ``pool stats``: what each run brought into a pool, their overlaps, the pool per turn."""

from __future__ import annotations

from ..formats.common import json_text
from .tables import render_records

RUN_COLUMNS = ["run", "contributed", "unique", "pool_share"]


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
