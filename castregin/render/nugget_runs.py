"""The files of ``castregin nuggets create``, ``assign`` and ``cite``, and what they say on standard error.

- ``nuggets create``: ``nuggets.jsonl`` (nuggetizer's nuggets JSONL) and ``run_log.json``;
- ``nuggets assign``: ``assignments.jsonl`` (nuggetizer's assignment JSONL, which ``nuggets score`` reads) and
  ``run_log.json``;
- ``nuggets cite``: ``citation_support.csv`` (one label per (sentence, cited passage) pair,
  :mod:`castregin.formats.citations`), ``citation_scores.tsv`` (each run's and turn's citation precision
  and recall in evaluate's layout, which ``compare --scores`` and the other ``--scores`` readers take) and
  ``run_log.json``.
"""

from __future__ import annotations

from collections.abc import Mapping

from .llm import missing_calls_lines, run_log_json

NUGGETS_JSONL, ASSIGNMENTS_JSONL, RUN_LOG_JSON = "nuggets.jsonl", "assignments.jsonl", "run_log.json"
CITATION_SUPPORT_CSV, CITATION_SCORES_TSV = "citation_support.csv", "citation_scores.tsv"


def creation_files(created) -> dict[str, str]:
    """The files of a creation run (:class:`castregin.nuggets.create.NuggetCreation`), by name."""
    from ..formats.nuggets import format_nuggets

    return {NUGGETS_JSONL: format_nuggets(created.turns), RUN_LOG_JSON: run_log_json(created.log)}


def assignment_files(assigned) -> dict[str, str]:
    """The files of an assignment run (:class:`castregin.nuggets.assign.NuggetAssignment`), by name."""
    from ..formats.nuggets import format_assignments

    return {ASSIGNMENTS_JSONL: format_assignments(assigned.assignments), RUN_LOG_JSON: run_log_json(assigned.log)}


def citation_files(judged) -> dict[str, str]:
    """The files of a citation run (:class:`castregin.nuggets.citations.CitationJudgment`, its scores with it)."""
    from ..formats.citations import format_citation_labels
    from .tables import render_rows

    return {CITATION_SUPPORT_CSV: format_citation_labels(judged.labels),
            CITATION_SCORES_TSV: render_rows(judged.scores, "tsv"), RUN_LOG_JSON: run_log_json(judged.log)}


def model_run_summary(log: Mapping, unparseable: int, what: str, written: str) -> list[str]:
    """What a nugget command says on standard error: calls missing and why, unparseable answers (a few
    shown), and the totals. ``what`` names the unit of an unparseable answer's consequence, ``written`` what
    the outputs hold."""
    this = log["this_run"]
    lines = missing_calls_lines(log, ": run again to retry them")
    if unparseable:
        lines.append(f"castregin: warning: {unparseable} answer(s) could not be read ({log.get('refusals', 0)} "
                     f"refusals): {what}; see run_log.json")
        for example in log["unparseable_examples"][:3]:
            where = ", ".join(f"{key} {example[key]}" for key in ("run_id", "qid", "step", "sentence", "passage_id")
                              if key in example)
            lines.append(f"castregin:   {where}: {'refused: ' if example['refusal'] else ''}"
                         f"{example['last_line'][:100]!r}")
    lines.append(f"castregin: {written}; {log['answered']} of {log['calls']} calls answered ({this['from_cache']} from "
                 f"the cache, {this['requests']} requests now); tokens {log['tokens']['prompt']} in, "
                 f"{log['tokens']['completion']} out; cost ${log['cost']['usd']:.4f}")
    return lines
