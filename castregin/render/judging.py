"""The judging stage's tables: the aggregation summary, the workers' audit and the agreement report."""

from __future__ import annotations

from .numbers import MISSING, fixed
from .tables import text_table


def _alpha(value) -> str:
    # Undefined agreement (one label value, no unit with two labels) is "-", as in the README.
    return fixed(value, 3, undefined="-")


def summary_table(aggregation) -> str:
    """The short per-criterion summary printed on standard error."""
    model = aggregation.method != "mode-mean"
    header = ["criterion", "labels", "items", "mode", "tie", *(["changed"] if model else []), "dropped", "turns",
              "filtered", "alpha_ordinal", "alpha_interval"]
    rows = []
    for name in aggregation.criteria:
        part = aggregation.agreement.get(name, {})
        before, after = part.get("before_gold", {}), part.get("after_gold", {})
        changed = [str(aggregation.decisions[name].get("changed", 0))] if model else []
        rows.append([
            name, str(aggregation.labels.get(name, 0)), str(sum(len(v) for v in aggregation.qrels[name].values())),
            str(aggregation.decisions[name]["mode"]), str(aggregation.decisions[name]["tie"]), *changed,
            str(sum(1 for d in aggregation.dropped_items if d["criterion"] == name)),
            str(len(aggregation.qrels[name])), str(len(aggregation.filtered[name])),
            f"{_alpha(before.get('alpha_ordinal'))} -> {_alpha(after.get('alpha_ordinal'))}",
            f"{_alpha(before.get('alpha_interval'))} -> {_alpha(after.get('alpha_interval'))}",
        ])
    pairs = len(aggregation.removed)
    workers = len({r["worker_id"] for r in aggregation.removed})
    note = (f"gold filter: {workers} worker(s) removed from {pairs} (worker, topic) pair(s); "
            "alpha_ordinal/alpha_interval: Krippendorff's alpha before -> after the gold filter\n")
    if model:
        note += (f"method {aggregation.method}: mode/tie count how mode-mean would decide; changed: labels "
                 "that differ from mode-mean's\n")
    suspects = aggregation.suspects.get("workers", [])
    if suspects:
        note += f"suspects: {len(suspects)} worker(s) flagged, not removed (audit.json: workers, suspects)\n"
    return text_table(header, rows, align_right=set(range(1, len(header)))) + note


def _reasons(entry: dict) -> str:
    return ",".join(entry["reasons"]) if entry["reasons"] else MISSING


def _extreme(values: dict, pick) -> str:
    """The lowest (``min``) or highest (``max``) defined value of a per-criterion dict, ``-`` for none."""
    defined = [v for v in values.values() if v is not None]
    return _alpha(pick(defined)) if defined else MISSING


def workers_table(aggregation, only_suspects: bool = False) -> str:
    """One row per worker of the audit: the method's accuracy per criterion, the suspect evidence.

    kappa_min: the lowest kappa with the leave-one-out consensus over the criteria; top_max: the
    highest share of one label; repeat: the best period and its share; median_s: median seconds per item.
    """
    criteria = aggregation.criteria
    header = ["worker", "labels", *[f"acc_{name}" for name in criteria], "kappa_min", "top_max", "repeat",
              "median_s", "suspect"]
    rows = []
    for entry in aggregation.workers:
        if only_suspects and not entry["suspect"]:
            continue
        repeat = entry["repeat"]
        rows.append([entry["worker_id"], str(entry["labels"]),
                     *[_alpha(entry["accuracy"][name]) for name in criteria],
                     _extreme(entry["kappa_others"], min), _extreme(entry["top_share"], max),
                     MISSING if repeat is None else f"{repeat['period']}:{_alpha(repeat['share'])}",
                     fixed(entry["median_seconds"], 1, undefined=MISSING), _reasons(entry)])
    return text_table(header, rows, align_right=set(range(1, len(header) - 1)))


def agreement_tables(agreement: dict) -> str:
    """Alpha per criterion and topic, then each worker's kappa, as text tables."""
    levels = ("alpha_nominal", "alpha_ordinal", "alpha_interval", "fleiss")
    header = ["criterion", "topic", "units", *(f"{name}_{when}" for name in levels for when in ("before", "after"))]
    rows = []
    for name, part in agreement.items():
        before, after = part["before_gold"], part["after_gold"]
        scopes = [("all", before, after)] + [
            (topic, before["topics"].get(topic, {}), after["topics"].get(topic, {}))
            for topic in sorted(set(before["topics"]) | set(after["topics"]))
        ]
        for topic, b, a in scopes:
            rows.append([name, topic, str(a.get("units", 0)),
                         *(_alpha(part.get(level)) for level in levels for part in (b, a))])
    out = text_table(header, rows, align_right=set(range(2, len(header))))
    names = list(agreement)
    workers = sorted({w["worker_id"] for part in agreement.values() for w in part["workers"]})
    lookup = {(n, w["worker_id"]): w for n in names for w in agreement[n]["workers"]}
    worker_rows = []
    for worker in workers:
        cells = [worker]
        for name in names:
            entry = lookup.get((name, worker))
            cells.append("-" if entry is None else f"{_alpha(entry['kappa_quadratic'])} ({entry['items']})")
        worker_rows.append(cells)
    out += "\nkappa_quadratic: each worker's quadratic-weighted kappa with the aggregated labels (items)\n"
    out += text_table(["worker", *names], worker_rows, align_right=set(range(1, len(names) + 1)))
    return out
