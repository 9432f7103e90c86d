"""The tables of the analyses of the evaluation (``analyze``) and of ``pool stats``."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..formats.common import json_text
from .tables import render_records, text_table

RUN_COLUMNS = ["run", "contributed", "unique", "pool_share"]
LORO_COLUMNS = ["run", "unique", "score", "score_without", "change", "rank", "rank_without", "judged_without"]
CORRELATION_COLUMNS = ["qrels_a", "measure_a", "qrels_b", "measure_b", "kendall_tau", "tau_ap", "tau_ap_reverse",
                       "spearman_rho", "top_k", "top_k_overlap", "top_k_cut_in_tie", "swapped_pairs", "runs"]
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
    """:func:`castregin.evaluation.analysis.bootstrap_intervals`' rows in one of the record formats: the count of
    the units resampled, turns or (``--by topic``) topics, beside each interval (JSON: both counts)."""
    by_topic = any(row.get("by") == "topic" for row in intervals)
    return render_records(intervals, [*BOOTSTRAP_COLUMNS[:-1], "topics" if by_topic else "turns"], fmt)


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


# --- ranking agreement between two label sources --------------------------------------------------------

AGREEMENT_STATISTICS_COLUMNS = ["qrels_a", "qrels_b", "measure", "kendall_tau", "tau_ap", "tau_ap_reverse",
                                "spearman_rho", "top_k", "top_k_overlap", "top_k_cut_in_tie", "swapped_pairs", "runs"]
AGREEMENT_RUN_COLUMNS = ["run", "score_a", "score_b", "rank_a", "rank_b", "change"]
MOVER_COLUMNS = ["run", "rank_a", "rank_b", "change"]
#: How many of the runs that move most the scatter plot names.
MOVERS_LABELLED = 5


def _agreement_list(agreements) -> list:
    return [agreements] if hasattr(agreements, "statistics") else list(agreements)


def ranking_agreement_report(agreements, fmt: str) -> str:
    """:func:`castregin.evaluation.analysis.ranking_agreement` (one, or a list of them) in a record format.

    ``json`` holds a list of :meth:`~castregin.evaluation.analysis.RankingAgreement.to_dict`;
    ``csv`` one row per pair of sources and run, the pair's statistics repeated on each; the formats
    for people, per pair of sources: the statistics, every run by its rank under A (ties by name),
    and the runs that move most.
    """
    agreements = _agreement_list(agreements)
    if fmt == "json":
        return json_text([a.to_dict() for a in agreements])
    if fmt == "csv":
        records = [{"qrels_a": a.qrels_a, "qrels_b": a.qrels_b, "measure": a.measure, **run,
                    **{c: a.statistics[c] for c in AGREEMENT_STATISTICS_COLUMNS[3:]}}
                   for a in agreements for run in a.to_dict()["runs"]]
        return render_records(records, ["qrels_a", "qrels_b", "measure", *AGREEMENT_RUN_COLUMNS,
                                        *AGREEMENT_STATISTICS_COLUMNS[3:]], "csv")
    heading = {"markdown": "**{}**\n\n", "latex": "% {}\n"}.get(fmt, "{}\n")
    parts = []
    for agreement in agreements:
        data = agreement.to_dict()
        statistics = {"qrels_a": agreement.qrels_a, "qrels_b": agreement.qrels_b, "measure": agreement.measure,
                      **agreement.statistics}
        by_rank = sorted(data["runs"], key=lambda r: (r["rank_a"], r["run"]))
        title = (f"{agreement.measure} of {len(agreement.runs)} runs: A = {agreement.qrels_a}, "
                 f"B = {agreement.qrels_b}")
        parts.append(heading.format(f"Ranking agreement, {title}")
                     + render_records([statistics], AGREEMENT_STATISTICS_COLUMNS, fmt))
        parts.append(heading.format("Every run's score and rank under A and B (1 = best, ties share the best rank)")
                     + render_records(by_rank, AGREEMENT_RUN_COLUMNS, fmt))
        movers = heading.format("The runs that move most (change = rank under B - rank under A)")
        parts.append(movers + (render_records(data["movers"], MOVER_COLUMNS, fmt) if data["movers"]
                               else "No run changes rank.\n"))
    return "\n".join(parts)


def ranking_agreement_plot(agreement, labelled: int = MOVERS_LABELLED) -> bytes:
    """The scatter plot of every run's score under A against B, the line y = x, the ``labelled`` runs
    that move most named; PNG bytes."""
    from . import plots  # matplotlib is slow to import; only the plot needs it

    names = [r.run for r in agreement.runs]
    statistics = agreement.statistics
    title = (f"{agreement.measure} of {len(names)} runs\nKendall's τ {statistics['kendall_tau']:.3f}, "
             f"τ_AP {statistics['tau_ap']:.3f}, top-{statistics['top_k']} overlap "
             f"{statistics['top_k_overlap']:.2f}")
    return plots.agreement_scatter_plot(names, [r.score_a for r in agreement.runs],
                                        [r.score_b for r in agreement.runs],
                                        [r.run for r in agreement.movers[:labelled]], title,
                                        f"{agreement.measure} under A: {agreement.qrels_a}",
                                        f"{agreement.measure} under B: {agreement.qrels_b}")


def qrels_stats_report(all_stats: Sequence[dict], fmt: str, rel_level: int) -> str:
    """``qrels stats``: :func:`castregin.track.qrels.stats` of each qrels as JSON, or a table with a column per
    label."""
    if fmt == "json":
        return json.dumps(list(all_stats), indent=2) + "\n"
    labels = sorted({int(label) for s in all_stats for label in s["labels"]})
    header = ["qrels", "turns", "topics", "items", "items/turn", f"turns with label>={rel_level}",
              *[f"label {label}" for label in labels]]
    rows = [
        [s["qrels"], str(s["turns"]), str(s["topics"]), str(s["items"]),
         f"{s['items_per_turn']['min']}-{s['items_per_turn']['max']} (mean {s['items_per_turn']['mean']:.1f})",
         str(s["turns_with_relevant"]), *[str(s["labels"].get(str(label), 0)) for label in labels]]
        for s in all_stats
    ]
    return text_table(header, rows, set(range(1, len(header))))


def measures_report(catalogue: Sequence[dict], fmt: str) -> str:
    """``measures``: the measure catalogue (:func:`castregin.evaluation.measures.measure_catalogue`) as JSON or a
    table."""
    if fmt == "json":
        return json.dumps(list(catalogue), indent=2) + "\n"
    header = ["trec_eval", "ir_measures", "backend", "all row", "note"]
    rows = [[r["trec_eval"] or "-", r["ir_measures"] or "-", r["backend"], r["aggregate"] or "-", r["note"]]
            for r in catalogue]
    return text_table(header, rows)
