"""Off-policy estimates as a table (people) or JSON (programs)."""

from __future__ import annotations

from collections.abc import Sequence

from ..formats.common import json_text
from .numbers import fixed
from .tables import text_table


def estimates_report(results: Sequence[tuple[str, object]], fmt: str) -> str:
    """``ope estimate``: ``(file name, OPEResult)`` pairs; one JSON object for one file, else a list."""
    if fmt == "json":
        objects = [{"file": name, **result.to_json()} for name, result in results]
        return json_text(objects[0] if len(objects) == 1 else objects)
    header = ["file", "estimate", "ci95", "behavior_mean", "dialogues", "ess", "coverage"]
    rows = []
    for name, r in results:
        ci = "-" if r.ci95 is None else f"[{fixed(r.ci95[0])}, {fixed(r.ci95[1])}]"
        rows.append([name, fixed(r.estimate), ci, fixed(r.behavior_mean), str(r.n_dialogues),
                     fixed(r.effective_sample_size, 1), fixed(r.target_coverage, 3)])
    return text_table(header, rows, align_right={1, 3, 4, 5, 6})
