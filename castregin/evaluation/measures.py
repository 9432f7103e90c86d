"""Which measures castregin computes, how, and how their per-turn values become one number.

A measure is named as in ir_measures (``P@1``, ``nDCG@3``, ``AP``, ``P(rel=1)@5``) or as in trec_eval
(``P_1``, ``ndcg_cut_3``, ``map``, ``num_rel_ret``), and trec_eval's sets and families expand:
``all_trec``, ``official`` and ``set`` are trec_eval's measure sets, ``P`` or ``P.1,3,5`` a family with
its default or given cutoffs (as ``trec_eval -m P.1,3,5``).

castregin gives a number only where it can check it against trec_eval's own C code: every accepted
measure is one of trec_eval's (computed by castregin's engine where it can, else by trec_eval's rules
in castregin's Python, :mod:`castregin.evaluation.trec_rules`; both checked against trec_eval's binary
and pytrec_eval), or ``Judged@k`` (ir_measures' definition, checked against ir_measures, except
that an item labelled below 0 counts as unjudged, as trec_eval has it). Everything else ir_measures
can parse is refused with a line saying why: measures
that only its other providers compute (``ERR@10`` by gdeval, which renames CAsT turn ids and gives 0
for every turn; ``RBP`` by trectools; ``alpha_nDCG`` by ndeval ...), options trec_eval lacks (``RR@10``,
``nDCG(dcg='exp-log2')``), parameters that are not numbers trec_eval takes.

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

import contextlib
import math
import re
from dataclasses import dataclass, replace
from types import SimpleNamespace

from ..errors import InputError
from ..limits import MAX_CUTOFF

#: The CAsT measures, in the order of the track's tables.
DEFAULT_MEASURES = ("P@1", "P@3", "nDCG@3", "nDCG@5", "AP", "RR", "R@10")

#: trec_eval's floor for geometric means (``MIN_GEO_MEAN``).
MIN_GEO_MEAN = 0.00001

#: How a measure's ``all`` value is formed from its per-turn values (see the module docstring).
MEAN, SUM, GEOMETRIC, COUNT_TURNS, NUM_REL = "mean", "sum", "geometric", "count-turns", "num-rel"


@dataclass(frozen=True)
class EngineSpec:
    """A measure in the terms of :mod:`castregin.evaluation.engine`: its kind, cutoff and relevance level."""

    kind: str
    cutoff: int | None = None
    rel: int | None = None


@dataclass(frozen=True)
class TrecFamily:
    """One of trec_eval's measures (``m_<name>.c``): its parameters and how it is averaged."""

    name: str
    #: Default parameters (printed by ``-m all_trec``); empty for a measure without parameters.
    defaults: tuple = ()
    #: ``int`` cutoffs, ``float`` parameters (named with two decimals), or None.
    param: type | None = None
    aggregate: str = MEAN
    #: A count, printed as an integer.
    integer: bool = False
    #: trec_eval prints a value per query with ``-q``.
    per_turn: bool = True
    #: castregin's engine computes it (its kind there).
    engine: str | None = None
    #: A number (runid and relstring are text).
    numeric: bool = True
    #: Depends on the relevance level (``-l``).
    binary: bool = True


_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

#: trec_eval 9.0.8's measures of ``all_trec``, in the order it prints them.
TREC_FAMILIES: dict[str, TrecFamily] = {f.name: f for f in (
    TrecFamily("runid", numeric=False, per_turn=False, binary=False),
    TrecFamily("num_q", aggregate=COUNT_TURNS, integer=True, per_turn=False, binary=False),
    TrecFamily("num_ret", aggregate=SUM, integer=True, binary=False),
    TrecFamily("num_rel", aggregate=NUM_REL, integer=True),
    TrecFamily("num_rel_ret", aggregate=SUM, integer=True),
    TrecFamily("map", engine="AP"),
    TrecFamily("gm_map", aggregate=GEOMETRIC, per_turn=False),
    TrecFamily("Rprec", engine="Rprec"),
    TrecFamily("bpref"),
    TrecFamily("recip_rank", engine="RR"),
    TrecFamily("iprec_at_recall", tuple(i / 10 for i in range(11)), float),
    TrecFamily("P", _CUTOFFS, int, engine="P"),
    TrecFamily("relstring", numeric=False),
    TrecFamily("recall", _CUTOFFS, int, engine="R"),
    TrecFamily("infAP"),
    TrecFamily("gm_bpref", aggregate=GEOMETRIC, per_turn=False),
    TrecFamily("Rprec_mult", tuple(i / 10 for i in range(2, 21, 2)), float),
    TrecFamily("utility"),
    TrecFamily("11pt_avg"),
    TrecFamily("binG"),
    TrecFamily("G"),
    TrecFamily("ndcg", engine="nDCG", binary=False),
    TrecFamily("ndcg_rel"),
    TrecFamily("Rndcg"),
    TrecFamily("ndcg_cut", _CUTOFFS, int, engine="nDCG", binary=False),
    TrecFamily("map_cut", _CUTOFFS, int),
    TrecFamily("relative_P", _CUTOFFS, int),
    TrecFamily("success", (1, 5, 10), int, engine="Success"),
    TrecFamily("set_P"),
    TrecFamily("set_relative_P"),
    TrecFamily("set_recall"),
    TrecFamily("set_map"),
    TrecFamily("set_F"),
    TrecFamily("num_nonrel_judged_ret", aggregate=SUM, integer=True),
)}

#: trec_eval's measure sets (``te_trec_measure_nicknames``).
TREC_SETS = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": tuple(TREC_FAMILIES),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}


@dataclass(frozen=True)
class TrecEvalSpec:
    """A measure as trec_eval computes it: one value of one family, at one relevance level."""

    family: str
    param: int | float | None = None
    rel: int = 1
    judged_only: bool = False
    #: ir_measures' nDCG gains: labels mapped before trec_eval sees them, as ``((label, gain), ...)``.
    gains: tuple | None = None
    #: set_F's beta (trec_eval takes one per call).
    beta: float | None = None

    @property
    def key(self) -> str:
        """The name trec_eval prints (``P_5``, ``iprec_at_recall_0.10``, ``map``)."""
        if self.param is None:
            return self.family
        if isinstance(self.param, float):
            return f"{self.family}_{self.param:3.2f}"
        return f"{self.family}_{self.param}"



@dataclass(frozen=True)
class Measure:
    """An accepted measure: its name as given, and how castregin computes and aggregates it.

    ``trec`` is how trec_eval computes it (None only for Judged@k); ``engine`` is set where
    castregin's engine gives the same numbers faster.
    """

    name: str
    trec: TrecEvalSpec | None
    engine: EngineSpec | None
    family: TrecFamily | None = None

    def __str__(self) -> str:
        return self.name

    @property
    def aggregate(self) -> str:
        return self.family.aggregate if self.family is not None else MEAN

    @property
    def integer(self) -> bool:
        """A count (num_q, num_ret, ...): printed as an integer."""
        return self.family is not None and self.family.integer

    @property
    def per_turn(self) -> bool:
        """Whether the measure has a value per turn (num_q, gm_map and gm_bpref have none)."""
        return self.family is None or self.family.per_turn


class MeasureRefused(InputError):
    """A measure castregin cannot give with a number checked against trec_eval."""


def _refuse(name: str, why: str) -> MeasureRefused:
    return MeasureRefused(f"measure {name!r}: {why}")


# --- trec_eval names ---------------------------------------------------------------------------------------

_TREC_NAME = re.compile(r"^(?P<family>[A-Za-z0-9_]+?)(?:[_.](?P<params>\d[\d.,]*))?$")


def _trec_param(family: TrecFamily, text: str, name: str):
    if family.param is int:
        if not text.isdigit() or int(text) < 1:
            raise _refuse(name, f"{family.name}'s cutoff must be a positive whole number, not {text!r}")
        if int(text) > MAX_CUTOFF:
            raise _refuse(name, f"the cutoff {text} is too large (at most {MAX_CUTOFF})")
        return int(text)
    if not re.fullmatch(r"\d+(\.\d{1,2})?", text):
        raise _refuse(name, f"{family.name}'s parameter must be a number with at most two decimals "
                            f"(trec_eval names it with two), not {text!r}")
    value = float(text)
    if family.name == "iprec_at_recall" and not 0 <= value <= 1:
        raise _refuse(name, f"a recall level is between 0 and 1, not {text}")
    if value <= 0 and family.name == "Rprec_mult":
        raise _refuse(name, f"Rprec_mult's multiplier must be positive, not {text}")
    return value


def _parse_trec(name: str, rel_level: int) -> list[Measure] | None:
    """The measures a trec_eval name stands for (``P_5``, ``P.5,10``, ``P``, ``map``), or None."""
    if name in TREC_SETS:
        return [m for family in TREC_SETS[name] if TREC_FAMILIES[family].numeric
                for m in _family_measures(TREC_FAMILIES[family], None, rel_level)]
    if name in TREC_FAMILIES:
        family = TREC_FAMILIES[name]
        if not family.numeric:
            raise _refuse(name, "trec_eval prints it as text, not a number (castregin trec_eval prints it)")
        return _family_measures(family, None, rel_level)
    match = _TREC_NAME.match(name)
    if not match or match["params"] is None:
        return None
    # "P_5" and "P.5,10": the family is what stands before the parameters.
    family = TREC_FAMILIES.get(match["family"])
    if family is None:
        return None
    if family.param is None:
        raise _refuse(name, f"trec_eval's {family.name} takes no parameter")
    separator = name[len(match["family"])]
    texts = match["params"].split(",") if separator == "." else [match["params"]]
    params = [_trec_param(family, text, name) for text in texts if text != ""]
    # One name for one value keeps the user's spelling; a list expands to trec_eval's names.
    measures = _family_measures(family, params, rel_level)
    return [replace(measures[0], name=name)] if len(measures) == 1 and separator == "_" else measures


def _family_measures(family: TrecFamily, params, rel_level: int) -> list[Measure]:
    rel = rel_level if family.binary else 1
    values = params if params is not None else (family.defaults or [None])
    out = []
    for param in values:
        spec = TrecEvalSpec(family.name, param, rel)
        out.append(Measure(spec.key, spec, _engine_for(spec), family))
    return out


def _engine_for(spec: TrecEvalSpec) -> EngineSpec | None:
    family = TREC_FAMILIES[spec.family]
    if family.engine is None or spec.judged_only or spec.gains is not None:
        return None
    if family.engine == "nDCG":
        return EngineSpec("nDCG", spec.param, None)
    return EngineSpec(family.engine, spec.param, spec.rel)


# --- ir_measures names ---------------------------------------------------------------------------------------

#: Why ir_measures' other providers are not used, for the refusal line.
_PROVIDER_NOTES = {
    "gdeval": "ir_measures computes it with gdeval, which rewrites turn ids such as 132_1-1 and gives 0 "
              "for every CAsT turn",
}


def _providers_of(measure) -> list[str]:
    import ir_measures

    names = []
    for provider in ir_measures.providers.registry.values():
        with contextlib.suppress(Exception):  # a provider that cannot even judge a measure does not support it
            if provider.supports(measure):
                names.append(provider.NAME)
    return names


def _install_hint(providers: list[str]) -> str:
    import ir_measures

    hints = []
    for name in providers:
        provider = ir_measures.providers.registry[name]
        if not provider.is_available():
            hints.append(f"{name}: {provider.install_instructions()}")
    return f" ({'; '.join(hints)})" if hints else ""


def _not_trec_eval(name: str, measure) -> MeasureRefused:
    providers = [p for p in _providers_of(measure) if p not in ("pytrec_eval",)]
    if not providers:
        return _refuse(name, "no trec_eval measure has these options; see `castregin measures`")
    notes = [note for p, note in _PROVIDER_NOTES.items() if p in providers]
    verb = "provider computes" if len(providers) == 1 else "providers compute"
    why = notes[0] if notes else f"only ir_measures' {' and '.join(providers)} {verb} it"
    return _refuse(name, f"not a trec_eval measure: {why}{_install_hint(providers)}; castregin reports only "
                         "measures it checks against trec_eval's C code (`castregin measures` lists them); use "
                         "ir_measures for this one")


#: ir_measures measures that are one trec_eval family whatever their parameters.
_SAME_FAMILY = {"Rprec": "Rprec", "Bpref": "bpref", "infAP": "infAP", "NumQ": "num_q", "NumRel": "num_rel",
                "SetAP": "set_map", "SetR": "set_recall"}


def _trec_family(name: str, measure) -> tuple[str, int | float | None, float | None]:
    """``(trec_eval family, parameter, set_F beta)`` of an ir_measures measure, or a refusal."""
    kind, params = measure.NAME, measure.params
    cutoff = params.get("cutoff")
    if kind in _SAME_FAMILY:
        return _SAME_FAMILY[kind], None, None
    if kind in ("P", "R", "Success"):
        if cutoff is None:
            raise _refuse(name, f"trec_eval has {kind} only at a cutoff; write {kind}@10")
        return {"P": "P", "R": "recall", "Success": "success"}[kind], cutoff, None
    if kind == "AP":
        return ("map" if cutoff is None else "map_cut"), cutoff, None
    if kind == "RR":
        if cutoff is not None:
            raise _refuse(name, "trec_eval's recip_rank has no cutoff; use RR")
        return "recip_rank", None, None
    if kind == "nDCG" and params.get("dcg", "log2") == "log2":
        return ("ndcg" if cutoff is None else "ndcg_cut"), cutoff, None
    if kind == "NumRet":
        # ir_measures: NumRet counts what was retrieved; NumRet(rel=...) (NumRelRet) the relevant part of it.
        return ("num_rel_ret" if "rel" in params else "num_ret"), None, None
    if kind == "SetP":
        return ("set_relative_P" if params.get("relative") else "set_P"), None, None
    if kind == "SetF":
        beta = float(params.get("beta", 1.0))
        if not math.isfinite(beta) or beta <= 0:
            raise _refuse(name, f"set_F's beta must be a positive number, not {beta}")
        return "set_F", None, (None if beta == 1.0 else beta)
    if kind == "IPrec":
        recall = params.get("recall")
        if not isinstance(recall, (int, float)) or not 0 <= recall <= 1 or round(recall, 2) != recall:
            raise _refuse(name, "IPrec's recall level must be between 0 and 1 with at most two decimals")
        return "iprec_at_recall", float(recall), None
    raise _not_trec_eval(name, measure)


def _ir_measure_spec(name: str, measure, rel_level: int) -> Measure:
    """An ir_measures measure object as a trec_eval spec (or Judged@k), or a refusal."""
    params = measure.params
    if measure.NAME == "Judged":
        cutoff = params.get("cutoff")
        if cutoff is not None and (not isinstance(cutoff, int) or not 1 <= cutoff <= MAX_CUTOFF):
            raise _refuse(name, f"Judged's cutoff must be a whole number from 1 to {MAX_CUTOFF}")
        return Measure(name, None, EngineSpec("Judged", cutoff, None), None)
    family_name, param, beta = _trec_family(name, measure)
    family = TREC_FAMILIES[family_name]
    if param is not None and family.param is int and (not isinstance(param, int) or not 1 <= param <= MAX_CUTOFF):
        raise _refuse(name, f"the cutoff must be a whole number from 1 to {MAX_CUTOFF}")
    rel = params.get("rel", rel_level)
    if not isinstance(rel, int) or isinstance(rel, bool):
        raise _refuse(name, f"the relevance level must be a whole number, not {rel!r}")
    gains = params.get("gains")
    if gains is not None:
        if measure.NAME != "nDCG" or not all(isinstance(k, int) and isinstance(v, int) and not isinstance(v, bool)
                                             for k, v in gains.items()):
            # The labels are mapped before trec_eval's nDCG sees them, and it reads whole-number labels.
            raise _refuse(name, "gains must map whole-number labels to whole-number gains")
        gains = tuple(sorted(gains.items()))
    spec = TrecEvalSpec(family.name, param, rel if family.binary else 1, bool(params.get("judged_only", False)),
                        gains, beta)
    return Measure(name, spec, _engine_for(spec), family)


#: The ir_measures names most evaluations ask for (the default measures among them), read here without
#: importing ir_measures (a sixth of a small evaluation's start-up); a test checks them against its parse.
_PLAIN_IR_NAME = re.compile(r"(?P<kind>P|R|Success|nDCG|AP|RR|Judged)(?:@(?P<cutoff>[1-9][0-9]{0,5}))?")


def _plain_ir_measure(name: str, rel_level: int) -> Measure | None:
    """``P@5``, ``nDCG@3``, ``AP``... as :func:`_parse_ir_measures` reads them, or None for other names."""
    match = _PLAIN_IR_NAME.fullmatch(name)
    if match is None or (match["kind"] in ("P", "R", "Success") and match["cutoff"] is None):
        return None  # ir_measures requires these cutoffs and says so its own way
    kind, cutoff = match["kind"], match["cutoff"]
    params = {} if cutoff is None else {"cutoff": int(cutoff)}
    if kind not in ("nDCG", "Judged"):  # the measures whose ir_measures parameters include rel
        params["rel"] = rel_level
    return _ir_measure_spec(name, SimpleNamespace(NAME=kind, params=params), rel_level)


def _parse_ir_measures(name: str, rel_level: int) -> Measure:
    plain = _plain_ir_measure(name, rel_level)
    if plain is not None:
        return plain
    import ir_measures

    try:
        measure = ir_measures.parse_measure(name)
    except (ValueError, NameError, SyntaxError, TypeError, AttributeError, AssertionError, KeyError) as err:
        raise MeasureRefused(f"unknown measure {name!r}; use ir_measures names (P@5, nDCG@3, AP, RR, R@10) or "
                             "trec_eval names (P_5, ndcg_cut_3, map, recip_rank, recall_10, all_trec); `castregin "
                             "measures` lists them") from err
    try:
        measure.validate_params()
    except (AssertionError, ValueError, TypeError) as err:
        raise _refuse(name, f"invalid parameters ({err})") from None
    # The evaluation's level applies unless the name sets rel itself; NumRet without rel counts every
    # retrieved item, so it keeps none.
    user_set_rel = "rel=" in name.replace(" ", "")
    if "rel" in measure.SUPPORTED_PARAMS and not user_set_rel and (measure.NAME != "NumRet" or "rel" in measure.params):
        measure = measure(rel=rel_level)
    return _ir_measure_spec(name, measure, rel_level)


def parse_measure(name: str, rel_level: int = 2) -> list[Measure]:
    """The measures a name stands for: one, or several for a trec_eval set or family.

    >>> [m.name for m in parse_measure("P.1,3")]
    ['P_1', 'P_3']
    >>> parse_measure("nDCG@3")[0].engine
    EngineSpec(kind='nDCG', cutoff=3, rel=None)

    A name castregin cannot give a checked number for raises :class:`MeasureRefused` (an
    :class:`~castregin.errors.InputError`) saying why.
    """
    name = name.strip()
    if not isinstance(rel_level, int) or rel_level < 1:
        raise InputError(f"the relevance level must be 1 or more, not {rel_level}")
    measures = _parse_trec(name, rel_level)
    if measures is None:
        measures = [_parse_ir_measures(name, rel_level)]
    for measure in measures:
        if measure.trec is not None and measure.trec.rel < 1:
            # trec_eval takes only positive levels; a level <= 0 would also count judged non-relevant items.
            raise _refuse(name, f"the relevance level must be 1 or more, not {measure.trec.rel}")
    return measures


def parse_measures(names, rel_level: int = 2) -> list[Measure]:
    """Parse several names (sets and families expanded; each measure kept once, in the order given)."""
    measures: dict[str, Measure] = {}
    for name in names:
        if isinstance(name, Measure):  # already parsed (castregin trec_eval builds its own)
            measures.setdefault(name.name, name)
            continue
        for measure in parse_measure(name, rel_level):
            measures.setdefault(measure.name, measure)
    return list(measures.values())


# --- trec_eval's -m (castregin.evaluation.trec_rules reads it) ------------------------------------------------

#: trec_eval's measures (and sets) of its other relevance formats: with ``-R qrels`` trec_eval cannot compute them
#: ("Can't calculate measure"); ``castregin trec_eval -R prefs`` (qrels_prefs, qrels_jg) does. yaap, which
#: takes qrels and is in no set, castregin does not compute.
TREC_PREFERENCE_NAMES = frozenset({
    "all_prefs", "prefs", "qrels_jg", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap",
})


# --- the list `castregin measures` prints -------------------------------------------------------------------

#: ir_measures' name of each trec_eval family, where it has one.
IR_MEASURES_NAMES = {
    "num_q": "NumQ", "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet", "map": "AP",
    "Rprec": "Rprec", "bpref": "Bpref", "recip_rank": "RR", "iprec_at_recall": "IPrec@k", "P": "P@k",
    "recall": "R@k", "infAP": "infAP", "ndcg": "nDCG", "ndcg_cut": "nDCG@k", "map_cut": "AP@k",
    "success": "Success@k", "set_P": "SetP", "set_relative_P": "SetP(relative=True)", "set_recall": "SetR",
    "set_map": "SetAP", "set_F": "SetF",
}


def measure_catalogue() -> list[dict]:
    """Every measure name castregin knows, with how it is computed or why it is refused.

    Rows ``{"trec_eval", "ir_measures", "backend", "aggregate", "note"}``; ``backend`` is ``engine``
    (castregin's vectorised engine), ``trec_eval`` (trec_eval's rules in castregin's Python,
    :mod:`castregin.evaluation.trec_rules`), both checked against trec_eval, or ``refused``.
    """
    rows = []
    for family in TREC_FAMILIES.values():
        if not family.numeric:
            rows.append({"trec_eval": family.name, "ir_measures": None, "backend": "refused",
                         "aggregate": None, "note": "text, not a number"})
            continue
        notes = []
        if family.defaults:
            notes.append("all_trec: " + ",".join(f"{p:3.2f}" if isinstance(p, float) else str(p)
                                                  for p in family.defaults))
        if family.binary:
            notes.append("relevance level applies")
        elif family.name.startswith("ndcg"):
            notes.append("graded gains")
        if not family.per_turn:
            notes.append("no per-turn value")
        rows.append({
            "trec_eval": family.name + ("_k" if family.param else ""),
            "ir_measures": IR_MEASURES_NAMES.get(family.name),
            "backend": "engine" if family.engine else "trec_eval",
            "aggregate": family.aggregate,
            "note": "; ".join(notes),
        })
    rows.append({"trec_eval": None, "ir_measures": "Judged@k", "backend": "engine", "aggregate": MEAN,
                 "note": "ir_measures' definition (share of the top k that is judged), checked against ir_measures"})
    for name, why in _REFUSED_EXAMPLES.items():
        rows.append({"trec_eval": None, "ir_measures": name, "backend": "refused", "aggregate": None, "note": why})
    return rows


#: Well-known ir_measures measures that castregin refuses, and why (the catalogue lists them).
_REFUSED_EXAMPLES = {
    "ERR@k, nDCG(dcg='exp-log2')@k": "gdeval rewrites CAsT turn ids (every turn scores 0)",
    "RBP, NRBP, nNRBP": "trectools/ndeval only, not trec_eval",
    "alpha_nDCG, ERR_IA, nERR_IA, P_IA, AP_IA, StRecall": "diversity measures of ndeval (pyndeval), not trec_eval",
    "INST, INSQ, SDCG, BPM, NERR8..11": "cwl_eval only, not trec_eval",
    "RR@k": "trec_eval's recip_rank has no cutoff",
    "Accuracy, Compat": "not trec_eval measures",
}
