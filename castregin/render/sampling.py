"""The tables of ``pool simulate`` (adaptive judging) and ``analyze ppi`` (prediction-powered estimates)."""

from __future__ import annotations

from collections.abc import Sequence

from ..formats.common import json_text
from .tables import render_records

SIMULATION_COLUMNS = ["strategy", "budget", "judgments", "relevant_found", "relevant_share", "kendall_tau"]


def simulation_report(simulation, fmt: str) -> str:
    """:func:`castregin.evaluation.pooling.simulate_pooling` in a record format.

    ``json`` holds ``{"points": [...], "summary": {...}}``; ``table`` ends with the judgments each strategy
    needs for the threshold of Kendall's tau.
    """
    records = [vars(point) for point in simulation.points]
    summary = simulation.summary()
    if fmt == "json":
        return json_text({"points": records, "summary": summary})
    text = render_records(records, SIMULATION_COLUMNS, fmt)
    if fmt == "table":
        needed = ", ".join(f"{strategy} {'never' if n is None else n}" for strategy, n in simulation.needed.items())
        text += (f"\n{summary['runs']} runs, {summary['turns']} turns, a pool of {summary['pool']} (turn, item) pairs "
                 f"({summary['relevant']} relevant); judgments from which Kendall's tau on {summary['measure']} stays "
                 f">= {summary['threshold']:g}: {needed}\n")
    return text
