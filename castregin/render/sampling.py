"""The tables of ``pool simulate`` (adaptive judging) and ``analyze ppi`` (prediction-powered estimates)."""

from __future__ import annotations

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
        within = (f" within the budgets tried (up to {simulation.largest_budget} a turn; the largest turn's pool is "
                  f"{simulation.largest_pool})" if simulation.within_budgets_tried else "")
        text += (f"\n{summary['runs']} runs, {summary['turns']} turns, a pool of {summary['pool']} (turn, item) pairs "
                 f"({summary['relevant']} relevant); judgments from which Kendall's tau on {summary['measure']} stays "
                 f">= {summary['threshold']:g}{within}: {needed}\n")
    return text


PPI_RUN_COLUMNS = ["run", "measure", "n", "N", "estimate", "low", "high", "lambda", "classical", "classical_low",
                   "classical_high", "model_only", "effective_n", "gained"]
PPI_DIFFERENCE_COLUMNS = ["run_a", "run_b", "measure", "difference", "low", "high", "lambda", "classical",
                          "classical_low", "classical_high", "significant"]
PPI_PLAN_COLUMNS = ["run", "measure", "width", "turns_ppi", "turns_classical", "total", "rho", "sd"]


def _run_record(row) -> dict:
    return {"run": row.run, "measure": row.measure, "n": row.n, "N": row.N, "estimate": row.ppi.estimate,
            "low": row.ppi.low, "high": row.ppi.high, "lambda": row.lam, "classical": row.classical.estimate,
            "classical_low": row.classical.low, "classical_high": row.classical.high, "model_only": row.model_mean,
            "effective_n": row.effective_n, "gained": row.gained}


def _difference_record(row) -> dict:
    return {"run_a": row.run_a, "run_b": row.run_b, "measure": row.measure, "difference": row.ppi.estimate,
            "low": row.ppi.low, "high": row.ppi.high, "lambda": row.lam, "classical": row.classical.estimate,
            "classical_low": row.classical.low, "classical_high": row.classical.high,
            "significant": "yes" if row.significant else "no"}


def _plan_record(plan: dict) -> dict:
    return {"run": plan["run"], "measure": plan["measure"], "width": plan["width"], "turns_ppi": plan["ppi"],
            "turns_classical": plan["classical"], "total": plan["total"], "rho": plan["rho"], "sd": plan["sd"]}


def percent(share: float) -> str:
    """``share`` as a percentage with every digit it was given: 0.95 is ``95%``, 0.999 ``99.9%`` (not 100%)."""
    from decimal import Decimal

    return f"{format((Decimal(repr(float(share))) * 100).normalize(), 'f')}%"


def ppi_report(result, fmt: str) -> str:
    """:func:`castregin.evaluation.ppi.ppi_estimates` in a record format.

    ``json`` holds ``{"settings", "runs", "differences", "plan"}``; ``csv`` the runs only (one table: neither the
    differences nor the plan, which ``analyze ppi`` refuses with it); the formats for people the runs, the
    differences and the plan, each under a heading.
    """
    runs = [_run_record(row) for row in result.runs]
    differences = [_difference_record(row) for row in result.differences]
    plans = [_plan_record(plan) for plan in result.plans]
    settings = {"confidence": result.confidence, "human_turns": result.human_turns, "model_turns": result.model_turns}
    if fmt == "json":
        return json_text({"settings": settings, "runs": runs, "differences": differences, "plan": plans})
    if fmt == "csv":
        return render_records(runs, PPI_RUN_COLUMNS, fmt)
    heading = {"markdown": "**{}**\n\n", "latex": "% {}\n"}.get(fmt, "{}\n")
    level = percent(result.confidence)
    parts = [heading.format(f"PPI++ means ({level} intervals) from {result.human_turns} turns people judged and "
                            f"{result.model_turns} the model labelled; classical: people's labels alone")
             + render_records(runs, PPI_RUN_COLUMNS, fmt)]
    if differences:
        parts.append(heading.format(f"Differences of means (run_a - run_b), {level} intervals")
                     + render_records(differences, PPI_DIFFERENCE_COLUMNS, fmt))
    if plans:
        parts.append(heading.format(f"Turns people must judge for a {level} interval of the width asked "
                                    "(- : not even all of them)") + render_records(plans, PPI_PLAN_COLUMNS, fmt))
    return "\n".join(parts)
