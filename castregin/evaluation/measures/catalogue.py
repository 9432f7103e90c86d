"""The list ``castregin measures`` prints, and docs/measures.md's: every registered measure, and well-known names
castregin refuses."""

from __future__ import annotations

from .definition import (
    COUNT_TURNS,
    CUT_DOUBLE,
    CUT_LONG,
    GEOMETRIC,
    MEAN,
    NONE,
    NUM_REL,
    P_DOUBLE,
    P_PAIR,
    SUM,
    TEXT,
    Definition,
)
from .names import TREC_SETS
from .registry import registered

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
    parameter = definition.parameter
    if parameter.kind not in (NONE, TEXT):
        notes.append(f"{_symbol(definition)}: {parameter.described()}")
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
        # Measures with options (gdeval's, ndeval's, RBP) or reading strata (sample_eval's) are other originals' rules.
        "backend": "engine" if definition.vectorised else "rule" if definition.options or definition.stratified
        else "trec_eval",
        "aggregate": definition.aggregate,
        "note": "; ".join(notes),
    }


def measure_catalogue() -> list[dict]:
    """Every measure name castregin knows, with how it is computed or why it is refused.

    Rows ``{"trec_eval", "ir_measures", "backend", "aggregate", "note"}``; ``backend`` is ``engine``
    (castregin's vectorised engine), ``trec_eval`` (trec_eval's rules in castregin's Python, the
    measure's rule alone), both checked against trec_eval, ``rule`` (another original's rule in
    castregin's Python: gdeval's, ndeval's, RBP's, sample_eval's, each checked against it), or ``refused``.
    """
    rows = [_row(definition) for definition in _in_order()]
    for name, why in _REFUSED_EXAMPLES.items():
        rows.append({"trec_eval": None, "ir_measures": name, "backend": "refused", "aggregate": None, "note": why})
    return rows


#: How the ``all`` value is formed from the turns' values, in words.
_AGGREGATES = {
    MEAN: "the mean over the turns",
    SUM: "the sum over the turns",
    GEOMETRIC: "the geometric mean over the turns (of values floored at 0.00001)",
    COUNT_TURNS: "the number of turns",
    NUM_REL: "the sum over the turns (with --complete: the qrels' lines labelled above 0)",
}


def _symbol(definition: Definition) -> str:
    """The name of a definition's parameter (``k`` for a cutoff, ``r`` for iprec_at_recall's recall level)."""
    return definition.parameter.symbol or "k"


def _trec_eval_names(definition: Definition) -> tuple[str, str] | None:
    """How trec_eval names it: as ``-m`` takes it and as it prints it (``ndcg_cut.k``, ``ndcg_cut_k``)."""
    name, kind = definition.name, definition.kind
    if not definition.trec_name:
        return None
    if kind in (CUT_LONG, CUT_DOUBLE):
        return f"{name}.{_symbol(definition)}", f"{name}_{_symbol(definition)}"
    if kind in (P_PAIR, P_DOUBLE):
        return f"{name}.{_symbol(definition)}", name
    return name, name


def _parameters(definition: Definition) -> list[dict]:
    """The parameters a name may give: ``{"name", "default", "choices", "description"}`` each."""
    out: list[dict] = []
    parameter = definition.parameter
    if parameter.kind not in (NONE, TEXT):
        out.append({"name": parameter.symbol or None, "default": list(parameter.defaults) or None, "choices": None,
                    "description": parameter.described()})
    out += [{"name": option.name, "default": option.default, "choices": list(option.choices) or None,
             "description": option.description} for option in definition.options]
    return out


def measure_reference() -> list[dict]:
    """Every registered measure as docs/measures.md describes it, in :func:`measure_catalogue`'s order.

    Rows ``{"name", "ir_measures", "trec_eval", "trec_eval_m", "formula", "parameters", "aggregate", "matches",
    "backend", "level", "per_turn", "numeric", "note"}``: ``ir_measures`` the names castregin's evaluate and the API
    take in ir_measures' spelling (``nDCG@k``), ``trec_eval``/``trec_eval_m`` trec_eval's as it prints them and as
    ``-m`` takes them (``ndcg_cut_k``, ``ndcg_cut.k``; None for a measure trec_eval lacks), ``matches`` the tool
    whose numbers it gives, ``backend`` as in :func:`measure_catalogue`.
    """
    rows = []
    for definition in _in_order():
        trec_eval = _trec_eval_names(definition)
        row = _row(definition)
        rows.append({
            "name": definition.name,
            "ir_measures": [alias.shown for alias in definition.ir_measures],
            "trec_eval": trec_eval[1] if trec_eval else None,
            "trec_eval_m": trec_eval[0] if trec_eval else None,
            "formula": definition.formula,
            "parameters": _parameters(definition),
            "aggregate": _AGGREGATES[definition.aggregate] if definition.numeric else None,
            "matches": definition.matches,
            "backend": row["backend"],
            "level": definition.uses_level,
            "per_turn": definition.per_turn,
            "numeric": definition.numeric,
            "note": definition.note,
        })
    return rows
