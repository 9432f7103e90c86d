"""Names to measures: ``evaluate``'s names (ir_measures' and trec_eval's) and ``trec_eval -m``'s arguments.

Both read the registered definitions (:mod:`castregin.evaluation.measures.definition`); nothing here
knows a measure by name. ``evaluate`` takes ir_measures' names (``P@5``, ``nDCG@3``, ``AP``,
``P(rel=1)@5``) and trec_eval's (``P_5``, ``P.5,10``, ``P``, ``ndcg_cut_3``, ``map``, the sets
``all_trec``, ``official``, ``set``), and refuses in one line what castregin cannot give a number
for that it checks against trec_eval. ``trec_eval -m`` takes what trec_eval takes, parameters read
as trec_eval reads them.
"""

from __future__ import annotations

import contextlib
import math
from types import SimpleNamespace

from ...errors import InputError
from ...limits import MAX_CUTOFF, MAX_TREC_LABEL
from ..trec_rules import c_double
from .definition import (
    CUT_DOUBLE,
    CUT_LONG,
    NONE,
    P_DOUBLE,
    P_PAIR,
    TEXT,
    Definition,
    IrName,
    Marked,
    Measure,
    value_names,
)
from .registry import lookup, named_in_ir_measures, registered, registered_as

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

#: The CAsT measures, in the order of the track's tables.
DEFAULT_MEASURES = ("P@1", "P@3", "nDCG@3", "nDCG@5", "AP", "RR", "R@10")

#: trec_eval's measure sets (``te_trec_measure_nicknames``); ``all_trec`` is every measure of trec_eval
#: 9.0.8 on qrels, in the order of its table (the order it prints them in).
TREC_SETS = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
                 "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
                 "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                 "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}

#: trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``: :mod:`castregin.evaluation.preferences`), in its
#: table order (``measures.c``).
PREFERENCE_FAMILIES = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
    "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
)
#: trec_eval's judgment-group measures (``-R qrels_jg``), in its table order.
GROUP_FAMILIES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
#: What every ``-R`` format can give: the run's id and the number of topics.
COMMON_FAMILIES = ("runid", "num_q")
#: trec_eval's measure sets of these formats (``prefs_names``, ``prefs_off_name``, ``qrels_jg_names``).
PREFERENCE_SETS = {
    "all_prefs": COMMON_FAMILIES + PREFERENCE_FAMILIES,
    "prefs": COMMON_FAMILIES + PREFERENCE_FAMILIES[:6],
    "qrels_jg": COMMON_FAMILIES + GROUP_FAMILIES,
}
#: Every name of these formats, sets included: with ``-R qrels`` trec_eval cannot compute them ("Can't calculate
#: measure").
PREFERENCE_NAMES = frozenset(PREFERENCE_SETS) | frozenset(PREFERENCE_FAMILIES) | frozenset(GROUP_FAMILIES)


class MeasureRefused(InputError):
    """A measure castregin cannot give with a number checked against trec_eval."""


def _refuse(name: str, why: str) -> MeasureRefused:
    return MeasureRefused(f"measure {name!r}: {why}")


def _with_level(definition: Definition, name: str, param, rel_level: int, judged_only: bool = False,
                gains: tuple | None = None) -> Measure:
    rel = rel_level if definition.uses_level else 1
    if not isinstance(rel, int) or isinstance(rel, bool):
        raise _refuse(name, f"the relevance level must be a whole number, not {rel!r}")
    if rel < 1:
        # trec_eval takes only positive levels; a level <= 0 would also count judged non-relevant items.
        raise _refuse(name, f"the relevance level must be 1 or more, not {rel}")
    return Measure(name, definition, param, rel, judged_only, gains)


def _check_param(definition: Definition, value, name: str, shown) -> None:
    why = definition.parameter.refusal(value)
    if why is not None:
        raise _refuse(name, f"{why}, not {shown}")


# --- trec_eval names in evaluate --------------------------------------------------------------------------

# [0-9], not \d (every script's digits): P_٢ is no name of P_2 (castregin.formats.common.plain_number_text's rule).
# The names' patterns are compiled on first use (re keeps them): a command reads few kinds of names, some none; and
# re itself is imported by the functions that read names (trec_eval's -m official needs none: nor re, nor enum).
_TREC_NAME = r"^(?P<family>[A-Za-z0-9_]+?)(?:[_.](?P<params>[0-9][0-9.,]*))?$"


def _trec_param(definition: Definition, text: str, name: str):
    if definition.kind == CUT_LONG:
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            raise _refuse(name, f"{definition.name}'s cutoff must be a positive whole number, not {text!r}")
        if definition.parameter.refusal(int(text)) is not None:
            raise _refuse(name, f"the cutoff {text} is too large (at most {definition.parameter.high})")
        return int(text)
    import re

    if not re.fullmatch(r"[0-9]+(\.[0-9]{1,2})?", text):
        raise _refuse(name, f"{definition.name}'s parameter must be a number with at most two decimals "
                            f"(trec_eval names it with two), not {text!r}")
    _check_param(definition, float(text), name, text)
    return float(text)


def _trec_definition(name: str) -> Definition | None:
    definition = lookup(name)
    return definition if definition is not None and definition.trec_name else None


def _parse_trec(name: str, rel_level: int) -> list[Measure] | None:
    """The measures a trec_eval name stands for (``P_5``, ``P.5,10``, ``P``, ``map``), or None."""
    if name in TREC_SETS:
        members = [registered_as(member) for member in TREC_SETS[name]]
        return [m for definition in members if definition.numeric
                for m in _family_measures(definition, None, rel_level)]
    definition = _trec_definition(name)
    if definition is not None:
        if not definition.numeric:
            raise _refuse(name, "trec_eval prints it as text, not a number (castregin trec_eval prints it)")
        return _family_measures(definition, None, rel_level)
    import re

    match = re.match(_TREC_NAME, name)
    if not match or match["params"] is None:
        return None
    # "P_5" and "P.5,10": the family is what stands before the parameters.
    definition = _trec_definition(match["family"])
    if definition is None:
        return None
    if not definition.cutoffs:
        raise _refuse(name, f"trec_eval's {definition.name} takes no parameter")
    separator = name[len(match["family"])]
    texts = match["params"].split(",") if separator == "." else [match["params"]]
    params = [_trec_param(definition, text, name) for text in texts if text != ""]
    # One name for one value keeps the user's spelling; a list expands to trec_eval's names.
    measures = _family_measures(definition, params, rel_level)
    return [measures[0].renamed(name)] if len(measures) == 1 and separator == "_" else measures


def _family_measures(definition: Definition, params, rel_level: int) -> list[Measure]:
    values = params if params is not None else (definition.defaults if definition.cutoffs else ()) or [None]
    return [_with_level(definition, definition.value_name(param), param, rel_level) for param in values]


# --- ir_measures names ---------------------------------------------------------------------------------------

#: Why ir_measures' other providers are not used, for the refusal line.
_PROVIDER_NOTES: dict[str, str] = {}


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
    providers = [p for p in _providers_of(measure) if p != "pytrec_eval"]
    if not providers:
        return _refuse(name, "no trec_eval measure has these options; see `castregin measures`")
    notes = [note for p, note in _PROVIDER_NOTES.items() if p in providers]
    verb = "provider computes" if len(providers) == 1 else "providers compute"
    why = notes[0] if notes else f"only ir_measures' {' and '.join(providers)} {verb} it"
    return _refuse(name, f"not a trec_eval measure: {why}{_install_hint(providers)}; castregin reports only "
                         "measures it checks against an oracle (trec_eval's C code, gdeval.pl, ndeval.c...: "
                         "`castregin measures` lists them); use "
                         "ir_measures for this one")


def _aliases(kind: str) -> list[tuple[Definition, IrName]]:
    return list(named_in_ir_measures(kind))


def _match(kind: str, params: Mapping) -> tuple[Definition, IrName] | None:
    """The registered definition an ir_measures measure ``kind`` with ``params`` names, or None."""
    has_cutoff = params.get("cutoff") is not None
    # Walked lazily: the first match ends it before the modules of measures further down are imported.
    for definition, alias in named_in_ir_measures(kind):
        if alias.cutoff is not None and alias.cutoff != has_cutoff:
            continue
        if alias.when is None or alias.when(params):
            return definition, alias
    return None


def _ir_param(name: str, kind: str, definition: Definition, alias: IrName, params: Mapping):
    """The definition's parameter from the name's: the cutoff, IPrec's recall, SetF's beta; None for the defaults."""
    if alias.cutoff is not False and params.get("cutoff") is not None:
        cutoff = params["cutoff"]
        if not isinstance(cutoff, int) or isinstance(cutoff, bool) or definition.parameter.refusal(cutoff) is not None:
            raise _refuse(name, f"{kind}'s cutoff must be a whole number {definition.parameter.bounds()}")
        return cutoff
    if alias.param is None:
        return None
    value = params.get(alias.param)
    if value is None and definition.kind == P_DOUBLE:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise _refuse(name, f"{kind}'s {alias.param} must be a number, not {value!r}")
    value = float(value)
    if definition.kind == CUT_DOUBLE and round(value, 2) != value:
        raise _refuse(name, f"{kind}'s {alias.param} must have at most two decimals (trec_eval names it with two)")
    _check_param(definition, value, name, value)
    # The default is the default: SetF and SetF(beta=1) are set_F.
    return None if definition.kind == P_DOUBLE and (value,) == definition.defaults else value


def _ir_measure(name: str, measure, rel_level: int) -> Measure:
    """An ir_measures measure (its ``NAME`` and ``params``) as a registered definition, or a refusal."""
    kind, params = measure.NAME, measure.params
    found = _match(kind, params)
    if found is None:
        aliases = _aliases(kind)
        has_cutoff = params.get("cutoff") is not None
        if aliases and not has_cutoff and all(alias.cutoff for _, alias in aliases):
            raise _refuse(name, f"castregin has {kind} only at a cutoff; write {kind}@10")
        if aliases and has_cutoff and all(alias.cutoff is False for _, alias in aliases):
            raise _refuse(name, f"trec_eval's {aliases[0][0].name} has no cutoff; use {kind}")
        raise _not_trec_eval(name, measure)
    definition, alias = found
    param = _ir_param(name, kind, definition, alias, params)
    gains = params.get("gains")
    if gains is not None:
        if not alias.gains or not all(isinstance(k, int) and isinstance(v, int) and not isinstance(v, bool)
                                      for k, v in gains.items()):
            # The labels are mapped before the rule sees them, and trec_eval's nDCG reads whole-number labels.
            raise _refuse(name, "gains must map whole-number labels to whole-number gains")
        gains = tuple(sorted(gains.items()))
    measure = _with_level(definition, name, param, params.get("rel", rel_level),
                          bool(params.get("judged_only", False)), gains)
    return measure.with_options(_options(name, kind, definition, params)) if definition.options else measure


def _options(name: str, kind: str, definition: Definition, params: Mapping) -> tuple:
    """The values of a definition's options from a name's parameters (defaults where not given)."""
    if params.get("judged_only"):
        raise _refuse(name, f"{kind} takes no judged_only (unjudged items count as not relevant)")
    values = []
    for option in definition.options:
        value = params.get(option.name, option.default)
        why = option.refusal(value)
        if why is not None:
            raise _refuse(name, f"{kind}'s {why}")
        values.append(value)
    why = definition.check_options(tuple(values)) if definition.check_options is not None else None
    if why is not None:
        raise _refuse(name, why)
    return tuple(values)


#: A name with parameters of a measure that takes options (``alpha_nDCG(alpha=0.3)@20``, ``ERR(max_grade=5)@20``):
#: read here, as ir_measures does not know every such parameter (ERR's max_grade) and would set ``rel`` itself.
_OPTIONS_NAME = r"(?P<kind>[A-Za-z][A-Za-z0-9_]*)\((?P<args>[^()]*)\)(?:@(?P<cutoff>[0-9]{1,10}))?"


def _options_measure(name: str, rel_level: int) -> Measure | None:
    """A measure that takes options, named with parameters, or None for any other name."""
    import re

    match = re.fullmatch(_OPTIONS_NAME, name.replace(" ", ""))
    if match is None or not any(definition.options for definition, _ in _aliases(match["kind"])):
        return None
    import ast  # here: only names with parameters need it

    try:
        call = ast.parse(f"f({match['args']})", mode="eval").body
        if not isinstance(call, ast.Call) or call.args:
            return None
        params: dict = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
    except (ValueError, SyntaxError, TypeError):
        return None  # ir_measures says what is wrong
    if match["cutoff"] is not None:
        params["cutoff"] = int(match["cutoff"])
    found = _match(match["kind"], params)
    if found is None or not found[0].options:
        return None
    allowed = {option.name for option in found[0].options} | {"cutoff"} | ({"rel"} if found[0].uses_level else set())
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise _refuse(name, f"{match['kind']} takes {', '.join(sorted(allowed))}, not {', '.join(unknown)} (labels "
                            "are read as the original reads them)")
    return _ir_measure(name, SimpleNamespace(NAME=match["kind"], params=params), rel_level)


#: The ir_measures names most evaluations ask for (the default measures among them), ``NAME`` or
#: ``NAME@k``, read here without importing ir_measures (a sixth of a small evaluation's start-up); a
#: test checks them against its parse. A registered measure ir_measures does not know is read so too.
_PLAIN_IR_NAME = r"(?P<kind>[A-Za-z][A-Za-z0-9_]*)(?:@(?P<cutoff>[1-9][0-9]{0,5}))?"


def _plain_ir_measure(name: str, rel_level: int) -> Measure | None:
    """``P@5``, ``nDCG@3``, ``AP``... as :func:`_parse_ir_measures` reads them, or None for other names."""
    import re

    match = re.fullmatch(_PLAIN_IR_NAME, name)
    if match is None:
        return None
    params = {} if match["cutoff"] is None else {"cutoff": int(match["cutoff"])}
    found = _match(match["kind"], params)
    if found is None or (found[1].param is not None and found[0].kind != P_DOUBLE):
        return None  # ir_measures says what is wrong its own way (P without a cutoff, IPrec without recall)
    return _ir_measure(name, SimpleNamespace(NAME=match["kind"], params=params), rel_level)


#: A name whose parameter other than a cutoff follows the ``@`` (``infIPrec@0.5``, ``infIPrec``).
_AT_PARAM_NAME = r"(?P<kind>[A-Za-z][A-Za-z0-9_]*)(?:@(?P<value>[0-9]+(?:\.[0-9]+)?|\.[0-9]+))?"


def _at_param_measure(name: str, rel_level: int) -> Measure | None:
    """A measure neither trec_eval nor ir_measures has whose parameter follows the ``@`` as IPrec's recall does
    (``infIPrec@0.5``), or None for any other name."""
    import re

    match = re.fullmatch(_AT_PARAM_NAME, name)
    if match is None:
        return None
    found = [(d, alias) for d, alias in _aliases(match["kind"]) if alias.param is not None and not d.trec_name]
    if not found:
        return None
    alias = found[0][1]
    if match["value"] is None:
        raise _refuse(name, f"give {match['kind']} its {alias.param}, as in {match['kind']}@0.5")
    return _ir_measure(name, SimpleNamespace(NAME=match["kind"], params={alias.param: float(match["value"])}),
                       rel_level)


def _parse_ir_measures(name: str, rel_level: int) -> Measure:
    plain = _plain_ir_measure(name, rel_level) or _at_param_measure(name, rel_level)
    if plain is not None:
        return plain
    with_options = _options_measure(name, rel_level)
    if with_options is not None:
        return with_options
    import ir_measures

    try:
        measure = ir_measures.parse_measure(name)
    except (ValueError, NameError, SyntaxError, TypeError, AttributeError, AssertionError, KeyError) as err:
        close = suggestion(name)
        hint = f"did you mean {close}? " if close else ""
        raise MeasureRefused(f"unknown measure {name!r}; {hint}use ir_measures names (P@5, nDCG@3, AP, RR, R@10) or "
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
    return _ir_measure(name, measure, rel_level)


# --- a known name close to an unknown one ----------------------------------------------------------------------

#: A name as a cutoff measure's: what stands before the cutoff, the separator, and the cutoff (``ndcg-cut-5``).
_NAME_AND_CUTOFF = (
    r"(?P<kind>[A-Za-z][A-Za-z0-9_.\- ]*?)(?P<separator>[@_.\- ]?)(?P<cutoff>[0-9]{1,6}(\.[0-9]{1,2})?)")


def _folded(name: str) -> str:
    """A name without case and separators: ``ndcg_cut``, ``NDCG-Cut`` and ``ndcgcut`` alike."""
    import re

    return re.sub(r"[\s_.\-@]", "", name).lower()


def _spellings(kind: str, cutoff: str | None) -> tuple[list[str], list[str]]:
    """The names at ``cutoff``, in ir_measures' and in trec_eval's spelling, of the measures one of whose names is
    ``kind`` but for case and separators (both spellings of each: ``recall`` is also ``R``)."""
    folded = _folded(kind)
    ir_names, trec_names = [], []
    for definition in registered():
        aliases = [alias.name for alias in definition.ir_measures]
        if not definition.numeric or folded not in {_folded(name) for name in [*aliases, definition.name]}:
            continue
        if definition.trec_name:
            trec_names.append(definition.name if cutoff is None else f"{definition.name}_{cutoff}")
        ir_names += [alias if cutoff is None else f"{alias}@{cutoff}" for alias in aliases]
    trec_names += [name for name in TREC_SETS if _folded(name) == folded and cutoff is None]
    return ir_names, trec_names


def _parses(name: str) -> bool:
    """Whether castregin reads ``name`` as a measure (without importing ir_measures: only plain names are tried)."""
    try:
        return bool(_parse_trec(name, 1) or _plain_ir_measure(name, 1))
    except InputError:
        return False


def suggestion(name: str, trec_eval: bool = False) -> str | None:
    """The known name that ``name`` spells but for case and separators, or None: ``nDCG@5`` for ``ndcg@5``,
    ``ndcg_cut_5`` for ``NDCG-cut-5``. Where two spellings are as close, ir_measures' for a name written with
    ``@`` (or no separator), else trec_eval's; only trec_eval's names with ``trec_eval`` (``-m``, where
    parameters follow a ``.``).

    >>> suggestion("ndcg@5"), suggestion("Ndcg-Cut-5"), suggestion("p_5"), suggestion("nonsense")
    ('nDCG@5', 'ndcg_cut_5', 'P_5', None)
    """
    if trec_eval:
        family, dot, params = name.partition(".")
        _, trec_names = _spellings(family, None)
        known = [known for known in trec_names if known in TREC_SETS or known in TREC_SETS["all_trec"]]
        return f"{known[0]}{dot}{params}" if known and known[0] != family else None
    import re

    match = re.fullmatch(_NAME_AND_CUTOFF, name)
    kind, cutoff = (match["kind"], match["cutoff"]) if match else (name, None)
    ir_names, trec_names = _spellings(kind, cutoff)
    if match and not (ir_names or trec_names):  # the digits belong to the name (no such name today)
        ir_names, trec_names = _spellings(name, None)
    in_trec_style = "@" not in name and re.search(r"[_.\-]", name) is not None
    in_order = trec_names + ir_names if in_trec_style else ir_names + trec_names
    # The same name but for case and separators first, then another name of the same measure (R for recall).
    in_order.sort(key=lambda known: _folded(known) != _folded(name))
    return next((known for known in in_order if known != name and _parses(known)), None)


def parse_measure(name: str, rel_level: int = 2) -> list[Measure]:
    """The measures a name stands for: one, or several for a trec_eval set or family.

    >>> [m.name for m in parse_measure("P.1,3")]
    ['P_1', 'P_3']
    >>> m = parse_measure("nDCG@3")[0]; (m.definition.name, m.param)
    ('ndcg_cut', 3)

    A name castregin cannot give a checked number for raises :class:`MeasureRefused` (an
    :class:`~castregin.errors.InputError`) saying why.
    """
    name = name.strip()
    if not isinstance(rel_level, int) or rel_level < 1:
        raise InputError(f"the relevance level must be 1 or more, not {rel_level}")
    if not all(ch.isascii() for ch in name if ch.isdigit()):
        raise _refuse(name, "cutoffs and parameters are written with the ASCII digits 0-9")
    measures = _parse_trec(name, rel_level)
    return measures if measures is not None else [_parse_ir_measures(name, rel_level)]


def parse_one_measure(name: str, rel_level: int = 2) -> Measure:
    """The one measure ``name`` stands for; a trec_eval set or family (``P.1,3``, ``official``) is an InputError.

    For what reports one number per run under the name given (``analyze ppi``, ``analyze loro``...).
    """
    measures = parse_measure(name, rel_level)
    if len(measures) != 1:
        raise InputError(f"{name} stands for several measures: give one", argument="measure")
    return measures[0]


def parse_measures(names: Iterable[str | Measure], rel_level: int = 2) -> list[Measure]:
    """Parse several names (sets and families expanded; each measure kept once, in the order given).

    A :class:`Measure` passes as it is: what the command line or the API parsed is not parsed again.
    """
    measures: dict[str, Measure] = {}
    for name in names:
        for measure in [name] if isinstance(name, Measure) else parse_measure(name, rel_level):
            measures.setdefault(measure.name, measure)
    return list(measures.values())


# --- trec_eval's -m ------------------------------------------------------------------------------------------

#: trec_eval's measures (and sets) of its other relevance formats: with ``-R qrels`` trec_eval cannot compute them
#: ("Can't calculate measure"); ``castregin trec_eval -R prefs`` (qrels_prefs, qrels_jg) does. yaap, which
#: takes qrels and is in no set, castregin does not compute.
_JUDGMENT_GROUP_NAMES = frozenset({"qrels_jg", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"})


def split_measure_argument(arg: str) -> tuple[str, str | None]:
    """``-m NAME[.PARAMS]`` as trec_eval splits it: the name and the parameters' text (None without a '.')."""
    name, dot, text = arg.partition(".")
    if dot and not text:
        raise InputError(f"measure {arg!r}: a '.' must be followed by parameters (trec_eval: improper measure)")
    return name, (text if dot else None)


_CUTOFF = r"[+-]?[0-9]+(\.[0-9]*)?"  # compiled on first use (evaluate reads no -m)


def parse_cutoffs(name: str, text: str) -> tuple[int, ...]:
    """Whole-number cutoffs as trec_eval reads them (``P.5,10``): sorted, each positive, none twice, at most
    :data:`~castregin.limits.MAX_CUTOFF`."""
    import re

    values = []
    for part in text.split(","):
        # atol reads "23.4" as 23, which trec_eval then names ndcg_cut_23: the fraction is dropped, not rounded.
        if not re.fullmatch(_CUTOFF, part) or int(part.split(".")[0]) < 1:
            raise InputError(f"measure {name}.{text}: cutoffs are positive whole numbers, not {part!r} "
                             "(trec_eval: negative cutoff)")
        values.append(int(part.split(".")[0]))
        if values[-1] > MAX_CUTOFF:
            raise InputError(f"measure {name}.{text}: the cutoff {part} is too large (at most {MAX_CUTOFF})")
    if len(set(values)) != len(values):
        raise InputError(f"measure {name}.{text}: duplicate cutoffs (trec_eval refuses them too)")
    return tuple(sorted(values))


def _parse_doubles(name: str, text: str) -> tuple[float, ...]:
    return tuple(c_double(part, f"measure {name}.{text}") for part in text.split(","))


def _parse_pairs(name: str, text: str) -> tuple[tuple[int, float], ...]:
    import re

    pairs = []
    for part in text.split(","):
        level, equals, gain = part.partition("=")
        if not equals or not re.fullmatch(r"[+-]?[0-9]+", level):
            raise InputError(f"measure {name}.{text}: parameters are label=gain pairs such as "
                             f"{name}.1=1,2=3 (trec_eval: malformed pair parameters), not {part!r}")
        value = c_double(gain, f"measure {name}.{text}")
        if abs(value) >= 2 ** 30 or not -MAX_TREC_LABEL <= int(level) <= MAX_TREC_LABEL:
            raise InputError(f"measure {name}.{text}: {part} is too large (labels and gains up to "
                             f"{MAX_TREC_LABEL} and 2^30)")
        pairs.append((int(level), value))
    return tuple(pairs)


def mark_measures(args: Sequence[str]) -> list[Marked]:
    """What ``trec_eval -m ARG ...`` computes, in the order trec_eval prints it.

    Sets (``official``, ``all_trec``, ``set``) and measures are marked as trec_eval marks them; a
    measure is computed once, with the parameters of the first ``-m`` that gives it some, read as
    trec_eval reads them: cutoffs (``P.5,10``: whole numbers, sorted, a fraction dropped), decimal
    cutoffs (``iprec_at_recall..1,.2``: sorted, named with two decimals), decimal parameters named
    verbatim (``utility.2,-1,0,0``, ``11pt_avg..25,.5``, ``set_F.0.5``, ``relstring.20``) and
    ``label=gain`` pairs (``ndcg.1=3,2=9``). What trec_eval refuses, or would silently ignore
    (parameters of a measure that takes none), is an :class:`InputError`.
    """
    trec_eval_measures = TREC_SETS["all_trec"]
    marked: set[str] = set()
    texts: dict[str, str] = {}
    for arg in args:
        name, text = split_measure_argument(arg)
        if name in TREC_SETS:
            marked.update(TREC_SETS[name])
        elif name in trec_eval_measures:
            marked.add(name)
            if text is not None:
                texts.setdefault(name, text)
        elif name == "yaap" or name in PREFERENCE_NAMES:
            raise InputError(f"measure {arg!r}: " + (
                "castregin does not compute yaap" if name == "yaap" else
                "a judgment-group measure: it needs -R qrels_jg judgments (trec_eval stops too)"
                if name in _JUDGMENT_GROUP_NAMES else
                "a preference measure: it needs -R prefs or -R qrels_prefs judgments (trec_eval stops too)"))
        else:
            close = suggestion(arg, trec_eval=True)
            hint = f"did you mean {close}? " if close else ""
            raise InputError(f"measure {arg!r}: not a trec_eval measure or measure set (trec_eval: illegal "
                             f"measure); {hint}`castregin measures` lists them")
    return [_marked(registered_as(name), texts.get(name)) for name in trec_eval_measures if name in marked]


def _marked(definition: Definition, text: str | None) -> Marked:
    name, kind = definition.name, definition.kind
    if text is not None and kind == NONE:
        raise InputError(f"measure {name}.{text}: trec_eval's {name} takes no parameter (it would ignore it)")
    if kind == TEXT:
        return Marked(definition)
    if kind == CUT_LONG:
        cutoffs = parse_cutoffs(name, text) if text is not None else definition.defaults
        return Marked(definition, cutoffs, value_names(name, kind, cutoffs))
    if kind == CUT_DOUBLE:
        cutoffs = tuple(sorted(_parse_doubles(name, text))) if text is not None else definition.defaults
        if any(abs(cutoff) > MAX_CUTOFF for cutoff in cutoffs):
            raise InputError(f"measure {name}.{text}: a cutoff is too large (at most {MAX_CUTOFF})")
        if len(set(cutoffs)) != len(cutoffs):
            raise InputError(f"measure {name}.{text}: duplicate cutoffs (trec_eval refuses them too)")
        return Marked(definition, cutoffs, value_names(name, kind, cutoffs))
    if kind == P_PAIR:
        pairs = _parse_pairs(name, text) if text is not None else ()
        return Marked(definition, pairs, (name if text is None else f"{name}_{text}",))
    params = _parse_doubles(name, text) if text is not None else definition.defaults
    why = definition.check_marked(params) if definition.check_marked is not None else None
    if why is not None:
        raise InputError(f"measure {name}.{text}: {why}")
    return Marked(definition, params, (name if text is None else f"{name}_{text}",))

