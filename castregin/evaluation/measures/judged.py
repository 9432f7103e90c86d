"""How much of a ranking the qrels judge: ir_measures' Judged@k, and the judged share evaluate warns about.

Judged@k follows ir_measures' judged provider: items ranked on 64-bit scores, ties by item id
ascending, the judged ones among the top k over ``min(k, items retrieved)``; but an item labelled
below 0 counts as unjudged, as trec_eval has it ("in the pool but unjudged"; ir_measures counts
every qrels line).

The judged share is no measure (it is not registered, so no name asks for it): the share of a turn's
top k items in trec_eval's order that the qrels judge with any label, over ``min(k, items
retrieved)``; :mod:`castregin.evaluation.evaluate` warns when it is about 0. The engine counts it
from the lines it ranks anyway.
"""

from __future__ import annotations

from ..trec_rules import NONPOOL
from .definition import (
    ALL_LINES,
    IR_MEASURES_ORDER,
    MEAN,
    POSITIVE_LINES_AND_TOP,
    Definition,
    IrName,
    cutoff,
)

#: The measures this module declares: :mod:`.registry` gathers them when a name first asks for one of them.
MEASURES: list[Definition] = []
declare = MEASURES.append


def _judged(rr, s, params):
    scores, labels = rr.scores, rr.labels
    order = sorted(scores, key=lambda item: (-scores[item], item))[:params[0] if params else None]
    return [sum(1 for item in order if labels.get(item, -1) >= 0) / len(order)]


def _judged_arrays(ranked, measure):
    import numpy as np

    if measure.param is None:
        return ranked.count(ranked.labels >= 0) / ranked.lengths
    top = ranked.position < measure.param
    return ranked.count(top & (ranked.labels >= 0)) / np.minimum(measure.param, ranked.lengths)


def _judged_share(rr, s, params):
    top = rr.rels[:params[0]]
    return [sum(1 for rel in top if rel != NONPOOL) / len(top)]


def _judged_share_arrays(ranked, measure):
    import numpy as np

    found = ranked.count(ranked.position < measure.param)
    if ranked.unseen_on_top is not None:
        found = found + ranked.unseen_on_top
    return found / np.minimum(measure.param, ranked.lengths).astype(np.float64)


declare(Definition("Judged", _judged, cutoff(), aggregate=MEAN, uses_level=False, trec_name=False,
                   ir_measures=(IrName("Judged", "Judged@k", cutoff=None),),
                   vectorised=_judged_arrays, order=IR_MEASURES_ORDER, judged_lines=ALL_LINES, any_label=True,
                   note="ir_measures' definition (share of the top k that is judged), checked against ir_measures",
                   oracle="ir_measures 0.4 (its judged provider; below 0 is unjudged, as in trec_eval)",
                   formula=("`judged(k) / min(k, n)`: items the qrels label (0 or more) among the first k, ranked as "
                            "ir_measures ranks them (64-bit scores, ties by item id ascending)")))

#: The judged share (any label) among a turn's top ``param`` items in trec_eval's order.
JUDGED_SHARE = Definition("judged share", _judged_share, cutoff(), uses_level=False, trec_name=False,
                          vectorised=_judged_share_arrays, judged_lines=POSITIVE_LINES_AND_TOP, any_label=True)
