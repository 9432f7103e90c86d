"""The judging stage's tables: the aggregation summary and the agreement report."""

from __future__ import annotations

from .numbers import fixed
from .tables import text_table


def _alpha(value) -> str:
    # Undefined agreement (one label value, no unit with two labels) is "-", as in the README.
    return fixed(value, 3, undefined="-")


def summary_table(aggregation) -> str:
    """The short per-criterion summary printed on standard error."""
    header = ["criterion", "labels", "items", "mode", "tie", "dropped", "turns", "filtered",
              "alpha_ord", "alpha_int"]
    rows = []
    for name in aggregation.criteria:
        part = aggregation.agreement.get(name, {})
        before, after = part.get("before_gold", {}), part.get("after_gold", {})
        rows.append([
            name, str(aggregation.labels.get(name, 0)), str(sum(len(v) for v in aggregation.qrels[name].values())),
            str(aggregation.decisions[name]["mode"]), str(aggregation.decisions[name]["tie"]),
            str(sum(1 for d in aggregation.dropped_items if d["criterion"] == name)),
            str(len(aggregation.qrels[name])), str(len(aggregation.filtered[name])),
            f"{_alpha(before.get('ordinal'))} -> {_alpha(after.get('ordinal'))}",
            f"{_alpha(before.get('interval'))} -> {_alpha(after.get('interval'))}",
        ])
    pairs = len(aggregation.removed)
    workers = len({r["worker_id"] for r in aggregation.removed})
    note = (f"gold filter: {workers} worker(s) removed from {pairs} (worker, topic) pair(s); "
            "alpha_ord/alpha_int: Krippendorff's alpha (ordinal/interval) before -> after the gold filter\n")
    return text_table(header, rows, align_right=set(range(1, 10))) + note


def agreement_tables(agreement: dict) -> str:
    """Alpha per criterion and topic, then each worker's kappa, as text tables."""
    header = ["criterion", "topic", "units", "ordinal_before", "ordinal_after", "interval_before",
              "interval_after"]
    rows = []
    for name, part in agreement.items():
        before, after = part["before_gold"], part["after_gold"]
        scopes = [("all", before, after)] + [
            (topic, before["topics"].get(topic, {}), after["topics"].get(topic, {}))
            for topic in sorted(set(before["topics"]) | set(after["topics"]))
        ]
        for topic, b, a in scopes:
            rows.append([name, topic, str(a.get("units", 0)), _alpha(b.get("ordinal")), _alpha(a.get("ordinal")),
                         _alpha(b.get("interval")), _alpha(a.get("interval"))])
    out = text_table(header, rows, align_right={2, 3, 4, 5, 6})
    names = list(agreement)
    workers = sorted({w["worker_id"] for part in agreement.values() for w in part["workers"]})
    lookup = {(n, w["worker_id"]): w for n in names for w in agreement[n]["workers"]}
    worker_rows = []
    for worker in workers:
        cells = [worker]
        for name in names:
            entry = lookup.get((name, worker))
            cells.append("-" if entry is None else f"{_alpha(entry['kappa'])} ({entry['items']})")
        worker_rows.append(cells)
    out += "\nquadratic-weighted kappa with the aggregated labels (items)\n"
    out += text_table(["worker", *names], worker_rows, align_right=set(range(1, len(names) + 1)))
    return out
