"""The list ``castregin measures`` prints: every registered measure, and well-known names castregin refuses."""

from __future__ import annotations

from .definition import Definition, registered
from .names import TREC_SETS

#: Well-known ir_measures measures that castregin refuses, and why (the catalogue lists them).
_REFUSED_EXAMPLES = {
    "INST, INSQ, SDCG, BPM, NERR8..11": "cwl_eval only, not trec_eval",
    "RR@k": "trec_eval's recip_rank has no cutoff",
    "Accuracy, Compat": "not trec_eval measures",
}


def _in_order() -> list[Definition]:
    """trec_eval's measures in its table's order, then the others as registered."""
    place = {name: i for i, name in enumerate(TREC_SETS["all_trec"])}
    return sorted(registered(), key=lambda definition: place.get(definition.name, len(place)))


def _row(definition: Definition) -> dict:
    if not definition.numeric:
        return {"trec_eval": definition.name, "ir_measures": None, "backend": "refused", "aggregate": None,
                "note": definition.note}
    notes = [definition.note] if definition.note else []
    if definition.defaults and definition.cutoffs and definition.trec_name:
        notes.append("all_trec: " + ",".join(f"{p:3.2f}" if isinstance(p, float) else str(p)
                                              for p in definition.defaults))
    if definition.uses_level:
        notes.append("relevance level applies")
    elif definition.trec_name and definition.ir_measures and definition.ir_measures[0].gains:
        notes.append("graded gains")
    if not definition.per_turn:
        notes.append("no per-turn value")
    return {
        "trec_eval": definition.name + ("_k" if definition.cutoffs else "") if definition.trec_name else None,
        "ir_measures": ", ".join(alias.shown for alias in definition.ir_measures) or None,
        # Measures with options (gdeval's, ndeval's, RBP) are other originals' rules, not trec_eval's.
        "backend": "engine" if definition.vectorised else "rule" if definition.options else "trec_eval",
        "aggregate": definition.aggregate,
        "note": "; ".join(notes),
    }


def measure_catalogue() -> list[dict]:
    """Every measure name castregin knows, with how it is computed or why it is refused.

    Rows ``{"trec_eval", "ir_measures", "backend", "aggregate", "note"}``; ``backend`` is ``engine``
    (castregin's vectorised engine), ``trec_eval`` (trec_eval's rules in castregin's Python, the
    measure's rule alone), both checked against trec_eval, ``rule`` (another original's rule in
    castregin's Python: gdeval's, ndeval's, RBP's, each checked against it), or ``refused``.
    """
    rows = [_row(definition) for definition in _in_order()]
    for name, why in _REFUSED_EXAMPLES.items():
        rows.append({"trec_eval": None, "ir_measures": name, "backend": "refused", "aggregate": None, "note": why})
    return rows
