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


@dataclass(frozen=True)
class Measure:
    """A measure as the user named it, and the ir_measures object that computes it."""

    name: str
    measure: object

    def __str__(self) -> str:
        return self.name


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
    return Measure(name, measure)


def parse_measures(names, rel_level: int = 2) -> list[Measure]:
    """Parse several measure names (duplicates kept once, in the order given)."""
    measures: dict[str, Measure] = {}
    for name in names:
        if name not in measures:
            measures[name] = parse_measure(name, rel_level)
    return list(measures.values())
