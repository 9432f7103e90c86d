"""Off-policy estimates as a table (people) or JSON (programs), and what a simulation wrote."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..formats.common import json_text
from .numbers import fixed
from .tables import text_table

if TYPE_CHECKING:
    from ..ope.estimator import OPEResult


def estimates_report(results: Sequence[tuple[str, OPEResult]], fmt: str) -> str:
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


def simulation_summary(simulation, world: str, dialogues: int, seed: int, target_p: float, written_to: str,
                       fmt: str) -> str:
    """``ope simulate``'s line: the target policy's exact value, as text or (``json``) one JSON object."""
    if fmt == "json":
        return json.dumps({"world": world, "dialogues": dialogues, "seed": seed, "target_p": target_p,
                           "exact_value": round(simulation.exact_value, 9),
                           "behavior_value": round(simulation.behavior_value, 9)})
    return (f"exact target value {simulation.exact_value:.6f} "
            f"(logged policies {simulation.behavior_value:.6f}); "
            f"{dialogues} dialogues of world {world} written to {written_to}")
