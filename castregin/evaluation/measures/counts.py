"""trec_eval's counts: num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret (summed, not averaged),
and its two lines of text, runid and relstring."""

from __future__ import annotations

from ..trec_rules import NONPOOL, UNJUDGED, Ranking
from .definition import COUNT_TURNS, NUM_REL, P_DOUBLE, SUM, TEXT, Definition, IrName, bounded, register

# Each rule takes a turn's ranking, the settings and the parameters, and returns the turn's values.


def _num_q(rr, s, p):
    return [1.0]


def _num_ret(rr, s, p):
    return [float(rr.num_ret)]


def _num_rel(rr, s, p):
    return [float(rr.num_rel)]


def _num_rel_ret(rr, s, p):
    return [float(rr.num_rel_ret)]


def _num_nonrel_judged_ret(rr, s, p):
    return [float(rr.num_ret) - rr.num_nonpool - rr.num_unjudged_in_pool - rr.num_rel_ret]


def relstring(rr: Ranking, length: float) -> str:
    """trec_eval's relstring: a character per item of the first ``length``: its label, ``>`` above 9,
    ``-`` outside the qrels, ``.`` labelled below 0."""
    chars = []
    for rel in rr.rels[:max(0, min(int(length), rr.num_ret))]:
        if rel > 9:
            chars.append(">")
        elif rel >= 0:
            chars.append(chr(ord("0") + rel))
        else:
            chars.append("-" if rel == NONPOOL else "." if rel == UNJUDGED else "<")
    return "".join(chars)


register(Definition("runid", None, TEXT, numeric=False, per_turn=False, uses_level=False,
                    note="text, not a number"))
register(Definition("num_q", _num_q, aggregate=COUNT_TURNS, integer=True, per_turn=False, uses_level=False,
                    ir_measures=(IrName("NumQ", "NumQ"),)))
register(Definition("num_ret", _num_ret, aggregate=SUM, integer=True, uses_level=False,
                    ir_measures=(IrName("NumRet", "NumRet", when=lambda params: "rel" not in params),)))
register(Definition("num_rel", _num_rel, aggregate=NUM_REL, integer=True,
                    ir_measures=(IrName("NumRel", "NumRel"),)))
register(Definition("num_rel_ret", _num_rel_ret, aggregate=SUM, integer=True,
                    # ir_measures: NumRet counts what was retrieved; NumRet(rel=...) (NumRelRet) the relevant part.
                    ir_measures=(IrName("NumRet", "NumRelRet", when=lambda params: "rel" in params),)))
register(Definition("relstring", lambda rr, s, params: relstring(rr, params[0]), P_DOUBLE, (10.0,), numeric=False,
                    check_marked=bounded, note="text, not a number"))
register(Definition("num_nonrel_judged_ret", _num_nonrel_judged_ret, aggregate=SUM, integer=True))
