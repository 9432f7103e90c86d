"""Measure names: ir_measures' syntax (``P@1``, ``nDCG@3``, ``AP``) and trec_eval's (``P_1``, ``map``).

A measure is parsed into an ir_measures measure object; binary measures get the evaluation's
relevance level (``trec_eval -l``) unless the name sets ``rel`` itself. nDCG keeps graded gains:
trec_eval's nDCG ignores ``-l``, so it has no ``rel`` parameter.
"""

from __future__ import annotations

from dataclasses import dataclass

import ir_measures

from .errors import InputError

#: The CAsT measures, in the order of the track's tables.
DEFAULT_MEASURES = ("P@1", "P@3", "nDCG@3", "nDCG@5", "AP", "RR", "R@10")


#: Measures that castregin's vectorised engine computes (the rest go to pytrec_eval).
ENGINE_MEASURES = ("P", "R", "AP", "RR", "nDCG", "Rprec", "Success", "Judged")


@dataclass(frozen=True)
class EngineSpec:
    """A measure in the terms of :mod:`castregin.engine`: its kind, cutoff and relevance level."""

    kind: str
    cutoff: int | None = None
    rel: int | None = None


@dataclass(frozen=True)
class Measure:
    """A measure as the user named it, and the ir_measures object that computes it."""

    name: str
    measure: object

    def __str__(self) -> str:
        return self.name

    @property
    def engine(self) -> EngineSpec | None:
        """The engine's spec of this measure, or None when pytrec_eval must compute it."""
        return engine_spec(self.measure)


def engine_spec(measure) -> EngineSpec | None:
    """:class:`EngineSpec` of an ir_measures measure, None for measures or options the engine lacks.

    Cutoffs are needed for P, R and Success (trec_eval has no uncut versions of these) and
    refused for AP and RR (map_cut and RR@k differ from trec_eval's map and recip_rank); custom
    nDCG gains and ``judged_only`` stay with pytrec_eval.
    """
    kind = getattr(measure, "NAME", None)
    if kind not in ENGINE_MEASURES:
        return None
    params = measure.params
    if params.get("judged_only") or params.get("gains") is not None or params.get("dcg", "log2") != "log2":
        return None
    cutoff = params.get("cutoff")
    rel = params.get("rel")
    if cutoff is not None and (not isinstance(cutoff, int) or cutoff < 1):
        return None
    if (kind in ("P", "R", "Success") and cutoff is None) or (kind in ("AP", "RR", "Rprec") and cutoff is not None):
        return None
    if kind in ("nDCG", "Judged"):
        rel = None
    elif not isinstance(rel, int):
        return None
    return EngineSpec(kind, cutoff, rel)


def _parse_one(name: str):
    try:
        return ir_measures.parse_measure(name)
    except (ValueError, NameError, SyntaxError, TypeError, AttributeError):
        pass
    try:
        parsed = ir_measures.parse_trec_measure(name)
    except (ValueError, NameError, SyntaxError, TypeError, AttributeError, KeyError, IndexError):
        parsed = []
    if len(parsed) == 1:
        return parsed[0]
    raise InputError(
        f"unknown measure {name!r}; use ir_measures names (P@5, nDCG@3, AP, RR, R@10) "
        "or trec_eval names (P_5, ndcg_cut_3, map, recip_rank, recall_10)"
    )


def parse_measure(name: str, rel_level: int = 2) -> Measure:
    """Parse a measure name, giving binary measures the relevance level ``rel_level``.

    >>> parse_measure("P@1").measure
    P(rel=2)@1
    >>> parse_measure("ndcg_cut_3").measure
    nDCG@3
    """
    measure = _parse_one(name.strip())
    if "rel" in measure.SUPPORTED_PARAMS and "rel" not in measure.params:
        measure = measure(rel=rel_level)
    rel = measure.params.get("rel")
    if isinstance(rel, int) and rel < 1:
        # trec_eval (pytrec_eval) takes only positive levels; a level <= 0 would also count
        # judged non-relevant items as relevant.
        raise InputError(f"{name}: the relevance level must be 1 or more, not {rel}")
    return Measure(name, measure)


def parse_measures(names, rel_level: int = 2) -> list[Measure]:
    """Parse several measure names (duplicates kept once, in the order given)."""
    measures: dict[str, Measure] = {}
    for name in names:
        if name not in measures:
            measures[name] = parse_measure(name, rel_level)
    return list(measures.values())
