"""trec_eval's counts: num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret (summed, not averaged),
and its two lines of text, runid and relstring."""

from __future__ import annotations

from ..trec_rules import NONPOOL, UNJUDGED, Ranking
from .definition import (
    ALL_LINES,
    COUNT_TURNS,
    NUM_REL,
    P_DOUBLE,
    SUM,
    TEXT,
    Definition,
    IrName,
    Param,
    bounded,
)

#: The measures this module declares: :mod:`.registry` gathers them when a name first asks for one of them.
MEASURES: list[Definition] = []
declare = MEASURES.append

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


# The same counts over the streaming engine's per-turn arrays (numpy is imported when they run).


def _num_q_arrays(ranked, measure):
    import numpy as np

    return np.ones(ranked.turn_count)


def _num_ret_arrays(ranked, measure):
    return ranked.lengths.astype(float)


def _num_rel_arrays(ranked, measure):
    return ranked.num_rel(measure.rel).astype(float)


def _num_rel_ret_arrays(ranked, measure):
    return ranked.count(ranked.relevant(measure.rel)).astype(float)


def _num_nonrel_judged_ret_arrays(ranked, measure):
    return ranked.count((ranked.labels >= 0) & (ranked.labels < measure.rel)).astype(float)


def _relstring_arrays(ranked, measure):
    """Each turn's relstring (an object array of str): a character per shown line, '-' where no line is judged."""
    import numpy as np

    length = max(0, min(int(measure.params[0]), int(ranked.lengths.max(initial=0))))
    shown = np.minimum(ranked.lengths, length)
    # One flat buffer of exactly the characters shown, not turns x longest: one long ranking among many short
    # ones must not allocate turns x its length.
    offsets = np.zeros(ranked.turn_count + 1, dtype=np.int64)
    np.cumsum(shown, out=offsets[1:])
    flat = np.full(int(offsets[-1]), ord("-"), dtype=np.uint8)
    top = np.flatnonzero(ranked.position < shown[ranked.segment])
    labels = ranked.labels[top]
    chars = np.where(labels > 9, ord(">"), np.where(labels < 0, ord("."), ord("0") + np.clip(labels, 0, 9)))
    flat[offsets[ranked.segment[top]] + ranked.position[top]] = chars
    text = flat.tobytes().decode("ascii")
    out = np.empty(ranked.turn_count, dtype=object)
    bounds = offsets.tolist()
    for turn in range(ranked.turn_count):
        out[turn] = text[bounds[turn]:bounds[turn + 1]]
    return out


declare(Definition("runid", None, Param(TEXT), numeric=False, per_turn=False, uses_level=False,
                   note="text, not a number",
                   formula="the run's tag, text (trec_eval prints it; evaluate does not)"))
declare(Definition("num_q", _num_q, aggregate=COUNT_TURNS, integer=True, per_turn=False, uses_level=False,
                   ir_measures=(IrName("NumQ", "NumQ"),), vectorised=_num_q_arrays,
                   formula=("the number of turns averaged (with --complete, trec_eval's -c, every qrels turn); no "
                            "value per turn")))
declare(Definition("num_ret", _num_ret, aggregate=SUM, integer=True, uses_level=False,
                   ir_measures=(IrName("NumRet", "NumRet", when=lambda params: "rel" not in params),),
                   vectorised=_num_ret_arrays,
                   formula="n: the items retrieved; summed over the turns"))
declare(Definition("num_rel", _num_rel, aggregate=NUM_REL, integer=True,
                   ir_measures=(IrName("NumRel", "NumRel"),), vectorised=_num_rel_arrays,
                   formula=("R: the items the qrels label at or above the level; summed over the turns (with "
                            "--complete, the qrels' lines labelled above 0: trec_eval's rule)")))
declare(Definition("num_rel_ret", _num_rel_ret, aggregate=SUM, integer=True,
                   # ir_measures: NumRet counts what was retrieved; NumRet(rel=...) (NumRelRet) the relevant part.
                   ir_measures=(IrName("NumRet", "NumRelRet", when=lambda params: "rel" in params),),
                   vectorised=_num_rel_ret_arrays,
                   formula="`rel(n)`: the relevant items retrieved; summed over the turns"))
declare(Definition("relstring", lambda rr, s, params: relstring(rr, params[0]),
                   Param(P_DOUBLE, (10.0,), "N", "the items shown"), numeric=False,
                   check_marked=bounded, note="text, not a number", vectorised=_relstring_arrays,
                   judged_lines=ALL_LINES,
                   formula=("the labels of the first N items as text: the digit, `>` above 9, `-` outside the qrels, "
                            "`.` labelled below 0")))
declare(Definition("num_nonrel_judged_ret", _num_nonrel_judged_ret, aggregate=SUM, integer=True,
                   vectorised=_num_nonrel_judged_ret_arrays, judged_lines=ALL_LINES,
                   formula=("the items retrieved that the qrels label from 0 to below the level; summed over the "
                            "turns")))
