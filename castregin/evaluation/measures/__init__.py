"""Which measures castregin computes, how, and how their per-turn values become one number.

Every measure is one :class:`Definition`, declared once (in this package, one module per kind of
measure) and registered by name with :func:`register`: its names (trec_eval's, ir_measures'), its
parameters and how trec_eval reads and names them, how its ``all`` value is formed, whether it is a
count, has a value per turn, and reads the relevance level; and its computation: the rule (trec_eval's
rule in plain Python on one turn's ranking, which every path can call) and, where it exists, the
vectorised computation the streaming engine runs over per-turn arrays. Names are parsed once, at the
command line or the API, into :class:`Measure` objects (a definition at a parameter and relevance
level); everything below takes those objects and dispatches through them.

A measure is named as in ir_measures (``P@1``, ``nDCG@3``, ``AP``, ``P(rel=1)@5``) or as in trec_eval
(``P_1``, ``ndcg_cut_3``, ``map``, ``num_rel_ret``), and trec_eval's sets and families expand:
``all_trec``, ``official`` and ``set`` are trec_eval's measure sets, ``P`` or ``P.1,3,5`` a family with
its default or given cutoffs (as ``trec_eval -m P.1,3,5``).

castregin gives a number only where it can check it against an independent oracle: every registered
measure is one of trec_eval's (computed by castregin's engine where it can, else by its rule alone;
both checked against trec_eval's binary and pytrec_eval), ``Judged@k`` (ir_measures' definition,
checked against ir_measures, except that an item labelled below 0 counts as unjudged, as trec_eval has
it), gdeval's and ndeval's measures (``ERR@k``, ``nDCG(dcg='exp-log2')@k``, ``alpha_nDCG@k``...,
checked against gdeval.pl and ndeval.c: :mod:`.novelty`), RBP (checked against trectools) or the
inferred measures of a stratified sample (``xinfAP``, ``infNDCG``, ``iP@k``..., checked against
sample_eval.pl: :mod:`.inferred`); a test walks the registry and fails for a measure without an
oracle. Everything else ir_measures can parse
is refused with a line saying why: measures that only its other providers compute (``INST`` by
cwl_eval ...), options trec_eval lacks (``RR@10``), parameters that are not numbers trec_eval takes.

The relevance level (``trec_eval -l``) applies to every binary measure unless an ir_measures name
sets ``rel`` itself; nDCG uses the graded labels and ignores it, as trec_eval does. How the ``all``
value is formed follows trec_eval 9.0.8 (``calc_avg`` of each measure): most measures are the mean
over the turns averaged; ``num_q`` is the number of those turns; ``num_ret``, ``num_rel_ret`` and
``num_nonrel_judged_ret`` are sums; ``num_rel`` is a sum too, except that with ``--complete`` trec_eval
counts the lines labelled above 0 of every qrels turn (whatever the level: its own rule, kept);
``gm_map`` and ``gm_bpref`` are geometric means (``exp`` of the mean of ``log(max(value, 1e-5))``).
``num_q``, ``gm_map`` and ``gm_bpref`` have no per-turn value (trec_eval prints none).
"""

from __future__ import annotations

# Each module of measures is imported when a name first needs one of its measures (registry.BUILT_IN says which
# module declares which), every one for registered() and the catalogue.
from .definition import (
    ALL_LINES,
    COUNT_TURNS,
    CUT_DOUBLE,
    CUT_LONG,
    GAIN_PAIRS,
    GEOMETRIC,
    IR_MEASURES_ORDER,
    MEAN,
    NO_PARAM,
    NONE,
    NUM_REL,
    P_DOUBLE,
    P_PAIR,
    POSITIVE_LINES,
    POSITIVE_LINES_AND_TOP,
    SUM,
    TEXT,
    TREC_EVAL_ORDER,
    Definition,
    IrName,
    Marked,
    Measure,
    Option,
    Param,
    cutoff,
    value_names,
)
from .judged import JUDGED_SHARE
from .names import (
    DEFAULT_MEASURES,
    TREC_SETS,
    MeasureRefused,
    mark_measures,
    parse_cutoffs,
    parse_measure,
    parse_measures,
    parse_one_measure,
    split_measure_argument,
)
from .registry import lookup, register, registered, unregister

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalogue import measure_catalogue

__all__ = [
    "ALL_LINES", "COUNT_TURNS", "CUT_DOUBLE", "CUT_LONG", "DEFAULT_MEASURES", "GAIN_PAIRS", "GEOMETRIC",
    "IR_MEASURES_ORDER", "JUDGED_SHARE", "MEAN", "NONE", "NO_PARAM", "NUM_REL", "POSITIVE_LINES",
    "POSITIVE_LINES_AND_TOP", "P_DOUBLE", "P_PAIR", "SUM", "TEXT", "TREC_EVAL_ORDER", "TREC_SETS", "Definition",
    "IrName", "Marked", "Measure", "MeasureRefused", "Option", "Param", "cutoff", "lookup", "mark_measures",
    "measure_catalogue", "parse_cutoffs", "parse_measure", "parse_measures", "parse_one_measure", "register",
    "registered", "split_measure_argument", "unregister", "value_names",
]


def __getattr__(name: str):
    # The catalogue's module on first use (PEP 562): only `castregin measures` and the docs list every measure.
    if name == "measure_catalogue":
        from .catalogue import measure_catalogue as catalogue

        globals()[name] = catalogue
        return catalogue
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
