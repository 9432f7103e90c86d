"""What a measure is: one :class:`Definition`, declared once (and registered by name: :mod:`.registry`).

A definition says everything castregin needs of a measure: its names (trec_eval's, and ir_measures'
through :class:`IrName`), how trec_eval takes its parameters and names its values, how its ``all``
value is formed, whether it is a count, whether it has a value per turn, whether the relevance
level applies, and how a turn's value is computed: by :attr:`Definition.rule`, trec_eval's rule
in plain Python on one turn's ranking (every path can call it), and, where it exists, by
:attr:`Definition.vectorised`, the same numbers over the per-turn arrays of the streaming engine
(:mod:`castregin.evaluation.engine`). A :class:`Measure` is one definition with its parameter and
relevance level, as a name asks for it (``P@5`` at level 2). The evaluation paths dispatch through
these objects; none of them names a measure. Which definitions exist is :mod:`.registry`'s business.
"""

from __future__ import annotations

import math

from ...limits import MAX_CUTOFF
from ..trec_rules import MIN_GEO_MEAN, c_exp

# Plain classes with slots, not NamedTuple or dataclasses: every command that names a measure imports this module,
# and typing and dataclasses (with the inspect, ast and dis it loads) took 8 ms of a ten-line trec_eval's 50.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

#: How the ``all`` value is formed from the per-turn values (trec_eval's ``calc_avg``): the mean over
#: the turns averaged, their sum, the geometric mean (per-turn values are ``log(max(value, 1e-5))``),
#: the number of turns averaged (num_q), or num_rel's rule (a sum; with ``complete`` the qrels' lines
#: labelled above 0, whatever the level: trec_eval's own rule, kept).
MEAN, SUM, GEOMETRIC, COUNT_TURNS, NUM_REL = "mean", "sum", "geometric", "count-turns", "num-rel"

#: How trec_eval takes a measure's parameters (``te_init_meas_*``): none; cutoffs, whole numbers or
#: decimals (sorted, one value each, named ``P_5`` or ``iprec_at_recall_0.10``); decimal parameters
#: (one value, named with them verbatim); ``label=gain`` pairs; text (runid).
NONE, CUT_LONG, CUT_DOUBLE, P_DOUBLE, P_PAIR, TEXT = "none", "cut_long", "cut_double", "p_double", "p_pair", "text"

#: The ranking a vectorised computation reads: trec_eval's (score descending at the evaluation's
#: precision, ties by item id descending) or ir_measures' judged provider's (64-bit scores, ties ascending).
TREC_EVAL_ORDER, IR_MEASURES_ORDER = "trec_eval", "ir_measures"

#: Which judged lines a vectorised computation reads: those labelled above 0 (all that relevance and
#: gains need), every judged line, or those above 0 plus the number of the others among each turn's
#: top ``cutoff`` items.
POSITIVE_LINES, ALL_LINES, POSITIVE_LINES_AND_TOP = "positive", "all", "positive-and-top"


class IrName:
    """How ir_measures names a definition: its measure ``name`` and the parameters that select it.

    ``AP`` is trec_eval's ``map`` without a cutoff and ``map_cut`` with one: two definitions, each
    with an ``IrName("AP", ...)`` that says which.
    """

    __slots__ = ("cutoff", "gains", "name", "param", "shown", "when")
    #: ir_measures' measure name (``AP``, ``nDCG``, ``SetP``).
    name: str
    #: As ``castregin measures`` lists it (``AP@k``, ``SetP(relative=True)``).
    shown: str
    #: True: only at a cutoff (``@k``, the definition's parameter); False: never; None: either.
    cutoff: bool | None
    #: The ir_measures parameter that gives the definition's parameter, other than the cutoff
    #: (IPrec's ``recall``, SetF's ``beta``).
    param: str | None
    #: What else the name's parameters must say for this definition (nDCG: ``dcg='log2'``).
    when: Callable[[Mapping], bool] | None
    #: Takes ir_measures' ``gains`` (labels mapped to gains before the rule sees them).
    gains: bool

    def __init__(self, name: str, shown: str, cutoff: bool | None = False, param: str | None = None,
                 when: Callable[[Mapping], bool] | None = None, gains: bool = False):
        self.name, self.shown, self.cutoff, self.param, self.when, self.gains = name, shown, cutoff, param, when, gains


class Option:
    """A parameter of a measure besides its cutoff (alpha_nDCG's ``alpha``, ERR's ``max_grade``), as ir_measures
    names it: ``alpha_nDCG(alpha=0.3)@20``. A name's value must be of the default's type (a text, a whole number,
    a number) and, for a text, one of ``choices``; :attr:`Definition.check_options` bounds the numbers."""

    __slots__ = ("choices", "default", "description", "name")
    name: str
    default: str | int | float
    #: What it is, for ``castregin measures`` and docs/measures.md.
    description: str
    #: The values a text option takes (empty: any value of the default's type).
    choices: tuple[str, ...]

    def __init__(self, name: str, default: str | int | float, description: str, choices: tuple[str, ...] = ()):
        self.name, self.default, self.description, self.choices = name, default, description, choices

    def refusal(self, value) -> str | None:
        """Why ``value`` cannot be this option's, or None."""
        if isinstance(self.default, str):
            if not isinstance(value, str):
                return f"{self.name} must be a text, not {value!r}"
            if self.choices and value not in self.choices:
                return f"{self.name} must be {' or '.join(map(repr, self.choices))} ({self.description}), not {value!r}"
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"{self.name} must be a number, not {value!r}"
        if isinstance(self.default, int) and not isinstance(value, int):
            return f"{self.name} must be a whole number, not {value!r}"
        return None


def _number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


class Param:
    """A measure's main parameter, declared: how trec_eval takes it after the name (``-m P.5,10``, ``-m
    utility.2,-1,0,0``), the values it has when none is given, what it is, and the values a name may give it (``P@5``,
    ``P_5``, ``IPrec@0.3``, ``SetF(beta=0.5)``). Name parsing checks a value with :meth:`refusal`; ``castregin
    measures`` and docs/measures.md describe it with :meth:`described`. A measure's other parameters are its options
    (:class:`Option`)."""

    __slots__ = ("above_low", "choices", "defaults", "description", "high", "kind", "low", "symbol")
    #: How trec_eval takes it (``te_init_meas_*``): :data:`NONE`, :data:`CUT_LONG`, :data:`CUT_DOUBLE`,
    #: :data:`P_DOUBLE`, :data:`P_PAIR` or :data:`TEXT`.
    kind: str
    #: Its values when a name gives none: the cutoffs of ``-m all_trec`` and of the bare family (``P``: 5, 10, ...),
    #: or a measure's fixed parameters (utility's four coefficients, set_F's beta).
    defaults: tuple
    #: How names and the catalogue write it: ``k``, ``r``, ``beta``, ``a,b,c,d``.
    symbol: str
    #: What it is, for ``castregin measures`` and docs/measures.md (``a recall level``).
    description: str
    #: The smallest and largest value a name may give (None: unbounded); ``above_low``: the smallest is excluded.
    low: float | None
    high: float | None
    above_low: bool
    #: The only values a name may give (infIPrec's 11 recall levels); empty: any in the range.
    choices: tuple[float, ...]

    def __init__(self, kind: str = NONE, defaults: tuple = (), symbol: str = "", description: str = "",
                 low: float | None = None, high: float | None = None, above_low: bool = False,
                 choices: tuple[float, ...] = ()):
        self.kind, self.defaults, self.symbol, self.description = kind, defaults, symbol, description
        self.low, self.high, self.above_low, self.choices = low, high, above_low, choices

    def _key(self) -> tuple:
        return (self.kind, self.defaults, self.symbol, self.description, self.low, self.high, self.above_low,
                self.choices)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Param) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def cutoffs(self) -> bool:
        """A cutoff, a whole number (``P_5``) or a decimal (``iprec_at_recall_0.10``), one value per cutoff."""
        return self.kind in (CUT_LONG, CUT_DOUBLE)

    def refusal(self, value: float) -> str | None:
        """Why a name cannot give it ``value`` (outside its range, not one of its choices), or None."""
        if self.choices:
            return None if value in self.choices else \
                f"{self.description} is one of {', '.join(map(_number, self.choices))}"
        low_ok = self.low is None or (value > self.low if self.above_low else value >= self.low)
        if low_ok and (self.high is None or value <= self.high):
            return None
        return f"{self.description} must be {self.bounds()}"

    def bounds(self) -> str:
        """Its range in words (``from 1 to 10,000``, ``above 0``), or ``""``."""
        if self.low is not None and self.high is not None:
            if self.above_low:
                return f"above {_number(self.low)} and at most {_number(self.high)}"
            return f"from {_number(self.low)} to {_number(self.high)}"
        if self.low is not None:
            return f"{'above' if self.above_low else 'at least'} {_number(self.low)}"
        return f"at most {_number(self.high)}" if self.high is not None else ""

    def described(self) -> str:
        """What it is and which values it takes, in words (``a recall level from 0 to 1``)."""
        if self.choices:
            return f"{self.description}, one of {', '.join(map(_number, self.choices))}"
        return " ".join(part for part in (self.description, self.bounds()) if part)


#: A measure without a parameter.
NO_PARAM = Param()


def cutoff(defaults: tuple = (), high: int = MAX_CUTOFF) -> Param:
    """A cutoff parameter (``P@5``, ``P.5,10``): a whole number from 1 to ``high``, trec_eval's ``defaults``."""
    return Param(CUT_LONG, defaults, "k", "a cutoff, a whole number", low=1, high=high)


#: trec_eval's gain pairs (``-m ndcg.1=3,2=9``): what gain's measures take instead of the labels.
GAIN_PAIRS = Param(P_PAIR, (), "L=G,...", "the gain G of each label L, instead of the label (trec_eval -m "
                   "ndcg.1=3,2=9; ir_measures nDCG(gains={1: 3, 2: 9}))")


class Definition:
    """One measure, declared once: names, parameters, averaging, printing and computation.

    ``rule(ranking, settings, params)`` gives a turn's values, one per parameter for the cutoff
    measures (a text for relstring), from a :class:`~castregin.evaluation.trec_rules.Ranking`
    and :class:`~castregin.evaluation.trec_rules.Settings` (trec_eval's ``-l``, ``-J``, ``-M``,
    ``-N``). ``vectorised(ranked, measure)``, where given, gives one measure's value for every turn
    of a :class:`~castregin.evaluation.engine.RankedTurns` as a numpy array, equal to the rule's
    to the last bit; it must then also hold for any label in signed 64 bits and for a turn
    labelled only below 0 (0 where nothing is relevant), where the rule must too. Each is declared
    once: definitions are compared (and hashed, in a :class:`Measure`) as the objects they are.
    """

    __slots__ = ("aggregate", "any_label", "check_marked", "check_options", "diversity", "formula", "integer",
                 "ir_measures", "judged_lines", "name", "note", "numeric", "options", "oracle", "order", "parameter",
                 "per_turn", "rule", "stratified", "trec_name", "uses_level", "vectorised")
    #: The measure's name: trec_eval's (``P``, ``ndcg_cut``) or its own.
    name: str
    rule: Callable | None
    #: Its main parameter (a cutoff, a recall level, utility's coefficients...), declared: :class:`Param`.
    parameter: Param
    aggregate: str
    #: A count, printed as an integer.
    integer: bool
    #: Has a value per turn (num_q, gm_map and gm_bpref do not: trec_eval prints none).
    per_turn: bool
    #: The relevance level (``-l``, ``--rel-level``) applies; nDCG reads the graded labels instead.
    uses_level: bool
    #: A number (runid and relstring are text, printed only by ``castregin trec_eval``).
    numeric: bool
    #: ``name`` is a trec_eval-style name in ``evaluate`` (``P_5``, ``P.5,10``, ``P``).
    trec_name: bool
    #: Its names in ir_measures' syntax.
    ir_measures: tuple[IrName, ...]
    #: Why ``trec_eval -m`` refuses its parameters (utility's four coefficients), or None; trec_eval
    #: itself takes more than evaluate does (``-m iprec_at_recall.1.5``).
    check_marked: Callable[[tuple], str | None] | None
    vectorised: Callable | None
    #: Its value is trec_eval's on any label and on a turn labelled only below 0 (nothing relevant):
    #: computed there, where the other measures refuse what trec_eval cannot evaluate (such a turn,
    #: labels above :data:`~castregin.limits.MAX_TREC_LABEL`), whichever path computes them.
    any_label: bool
    #: The ranking ``vectorised`` reads, and which judged lines (see the constants above).
    order: str
    judged_lines: str
    #: For ``castregin measures``.
    note: str
    #: Parameters besides the cutoff, in the order the rule takes them after the cutoff, named as
    #: ir_measures names them (``alpha_nDCG(alpha=0.3)@20``).
    options: tuple[Option, ...]
    #: Why a name's option values (in :attr:`options`' order, each of its option's type) are refused, or None.
    check_options: Callable[[tuple], str | None] | None
    #: Reads each item's label per subtopic (a diversity qrels, ``topic subtopic item label``).
    diversity: bool
    #: Reads each item's stratum (a stratified qrels, ``turn 0 item stratum label``: the inferred measures); refused
    #: on qrels without strata.
    stratified: bool
    #: How a turn's value is computed, in a line of Markdown (docs/measures.md, the catalogue).
    formula: str
    #: The tool whose numbers it gives, which the tests check it against; trec_eval's by default (:attr:`matches`).
    oracle: str

    def __init__(self, name: str, rule: Callable | None, parameter: Param = NO_PARAM, aggregate: str = MEAN,
                 integer: bool = False, per_turn: bool = True, uses_level: bool = True, numeric: bool = True,
                 trec_name: bool = True, ir_measures: tuple[IrName, ...] = (),
                 check_marked: Callable[[tuple], str | None] | None = None, vectorised: Callable | None = None,
                 any_label: bool = False, order: str = TREC_EVAL_ORDER, judged_lines: str = POSITIVE_LINES,
                 note: str = "", options: tuple[Option, ...] = (),
                 check_options: Callable[[tuple], str | None] | None = None, diversity: bool = False,
                 stratified: bool = False, formula: str = "", oracle: str = ""):
        self.name, self.rule, self.parameter, self.aggregate = name, rule, parameter, aggregate
        self.integer, self.per_turn, self.uses_level, self.numeric = integer, per_turn, uses_level, numeric
        self.trec_name, self.ir_measures, self.check_marked = trec_name, ir_measures, check_marked
        self.vectorised, self.any_label, self.order, self.judged_lines = vectorised, any_label, order, judged_lines
        self.note, self.options, self.check_options = note, options, check_options
        self.diversity, self.stratified, self.formula, self.oracle = diversity, stratified, formula, oracle

    @property
    def matches(self) -> str:
        """The tool whose numbers it gives: :attr:`oracle`, else trec_eval 9.0.8 for one of its measures."""
        return self.oracle or ("trec_eval 9.0.8" if self.trec_name else "")

    @property
    def kind(self) -> str:
        """How trec_eval takes its parameter (:attr:`Param.kind`)."""
        return self.parameter.kind

    @property
    def defaults(self) -> tuple:
        """Its parameter's values when a name gives none (:attr:`Param.defaults`)."""
        return self.parameter.defaults

    @property
    def cutoffs(self) -> bool:
        """Its parameter is a cutoff, a whole number (``P_5``) or a decimal (``iprec_at_recall_0.10``)."""
        return self.parameter.cutoffs

    def value_name(self, param) -> str:
        """The name trec_eval gives the value at ``param`` (``P_5``, ``iprec_at_recall_0.10``, ``map``)."""
        return value_names(self.name, self.kind, (param,))[0] if param is not None else self.name

    def summary(self, total: float, averaged: int, evaluated: int, complete: bool,
                positive_lines: Callable[[], int]) -> float:
        """The ``all`` value, as trec_eval's ``calc_avg`` forms it.

        ``total`` is the sum of the per-turn values of the ``evaluated`` turns, added in the turns'
        byte order; ``averaged`` is the number of turns averaged (``evaluated``, or every qrels turn
        when ``complete``); ``positive_lines()`` the qrels' lines labelled above 0.
        """
        if self.aggregate == COUNT_TURNS:
            return float(averaged)
        if self.aggregate == NUM_REL and complete:
            return float(positive_lines())
        if self.aggregate in (SUM, NUM_REL):
            return total
        if self.aggregate == GEOMETRIC:
            if averaged <= 0:
                return total
            # A turn without results counts as the floor (0 would be perfection in logs).
            total += (averaged - evaluated) * math.log(MIN_GEO_MEAN)
            return c_exp(total / averaged)
        return total / averaged if averaged else total


def bounded(params: tuple) -> str | None:
    """``check_marked`` of the measures whose parameters become ranks (relstring, 11pt_avg)."""
    return None if all(abs(param) <= MAX_CUTOFF for param in params) else \
        f"a parameter is too large (at most {MAX_CUTOFF})"


def value_names(name: str, params_kind: str, params: tuple) -> tuple[str, ...]:
    """The names trec_eval prints for a measure's values at ``params`` (``P_5``, ``Rprec_mult_0.20``)."""
    if params_kind == CUT_DOUBLE:
        return tuple(f"{name}_{param:3.2f}" for param in params)
    return tuple(f"{name}_{param}" for param in params)


class Measure:
    """A definition as a name asks for it: one value per turn, at one parameter and relevance level.

    ``param`` is the cutoff (``P@5``: 5) or other parameter (set_F's beta), None for the defaults;
    ``judged_only`` is trec_eval's ``-J``; ``gains`` maps labels to gains before the rule sees them
    (ir_measures' nDCG gains, as ``((label, gain), ...)``). Compared and hashed by its fields (the API takes
    measures as keys); not changed once made (:meth:`renamed`, :meth:`with_options` make new ones).
    """

    __slots__ = ("definition", "gains", "given", "judged_only", "name", "num_docs", "options", "param", "rel")
    name: str
    definition: Definition
    param: int | float | None
    rel: int
    judged_only: bool
    gains: tuple | None
    #: The values of the definition's :attr:`~Definition.options`, in their order.
    options: tuple
    #: The parameters as ``trec_eval -m`` gives a family that takes several (``utility.2,-1,0,0``), and
    #: trec_eval's ``-N`` (utility's collection size): what the trec_eval command's streaming path passes.
    given: tuple | None
    num_docs: int

    def __init__(self, name: str, definition: Definition, param: int | float | None = None, rel: int = 1,
                 judged_only: bool = False, gains: tuple | None = None, options: tuple = (),
                 given: tuple | None = None, num_docs: int = 0):
        self.name, self.definition, self.param, self.rel, self.judged_only = name, definition, param, rel, judged_only
        self.gains, self.options, self.given, self.num_docs = gains, options, given, num_docs

    def _key(self) -> tuple:
        return (self.name, self.definition, self.param, self.rel, self.judged_only, self.gains, self.options,
                self.given, self.num_docs)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Measure) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def renamed(self, name: str) -> Measure:
        """The same measure under another name (``P_5`` as a user spelled it)."""
        return Measure(name, self.definition, self.param, self.rel, self.judged_only, self.gains, self.options,
                       self.given, self.num_docs)

    def with_options(self, options: tuple) -> Measure:
        """The same measure with its definition's options set to ``options``."""
        return Measure(self.name, self.definition, self.param, self.rel, self.judged_only, self.gains, options,
                       self.given, self.num_docs)

    def __str__(self) -> str:
        return self.name

    def option(self, name: str, default=None):
        """The value of the definition's option ``name`` (``alpha``, ``order``), or ``default`` if it has none."""
        names = [option.name for option in self.definition.options]
        return self.params[1 + names.index(name)] if name in names else default

    @property
    def params(self) -> tuple:
        """The parameters its rule takes."""
        if self.given is not None:
            return self.given
        if self.definition.options:
            return (self.param, *(self.options or (option.default for option in self.definition.options)))
        if self.param is not None:
            return (self.param,)
        return self.definition.defaults if self.definition.kind == P_DOUBLE else ()

    @property
    def in_engine(self) -> bool:
        """The streaming engine computes it (else only its rule does, with trec_eval's refusals)."""
        return self.definition.vectorised is not None and not self.judged_only and self.gains is None

    @property
    def any_label(self) -> bool:
        """Computed on any label (see :attr:`Definition.any_label`), where the others refuse what trec_eval cannot
        evaluate."""
        return self.in_engine and self.definition.any_label

    @property
    def aggregate(self) -> str:
        return self.definition.aggregate

    @property
    def integer(self) -> bool:
        """A count (num_q, num_ret, ...): printed as an integer."""
        return self.definition.integer

    @property
    def per_turn(self) -> bool:
        """Whether the measure has a value per turn (num_q, gm_map and gm_bpref have none)."""
        return self.definition.per_turn

    def marked(self) -> Marked:
        """As :func:`castregin.evaluation.plain.evaluate` takes it: one value, named as the measure."""
        return Marked(self.definition, self.params, (self.name,))


class Marked:
    """A definition as ``trec_eval -m`` asks for it: its parameters and the names of its values."""

    __slots__ = ("definition", "names", "params")
    definition: Definition
    params: tuple
    #: The names trec_eval gives its values (``P_5``, ``iprec_at_recall_0.10``, ``ndcg_1=3,2=9``).
    names: tuple[str, ...]

    def __init__(self, definition: Definition, params: tuple = (), names: tuple[str, ...] = ()):
        self.definition, self.params, self.names = definition, params, names

    @property
    def slot_names(self) -> tuple[str, ...]:
        """The names of its numeric values (none for runid, one for relstring's text)."""
        if self.definition.kind == TEXT:
            return ()
        return self.names or (self.definition.name,)
