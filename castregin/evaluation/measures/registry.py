"""Which measures there are: castregin's own, declared by the modules of this package, and any registered.

Each module of this package declares its measures in a list, ``MEASURES``; nothing is registered by importing
it. The table :data:`BUILT_IN` says which module declares which measure, and :data:`BUILT_IN_IR_NAMES` which
ir_measures names they answer to: parsing a name imports only the module that declares its measure (``P@5``
imports :mod:`.precision`, not the diversity measures and their gdeval and ndeval readers; importing every module
took a third of a 10-line ``castregin trec_eval``'s time). :func:`registered`, the catalogue and
docs/measures.md import them all. tests/evaluation/test_registry.py checks the table against the modules, and a
module whose declarations differ from the table fails when it is loaded.

:func:`register` adds a measure of one's own (a test's, a user's), checked against every other.
"""

from __future__ import annotations

from .definition import Definition, IrName, Param

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

#: castregin's own measures, by the module of this package that declares them, in the order :func:`registered`
#: lists them (trec_eval's table order where it has them).
BUILT_IN: dict[str, tuple[str, ...]] = {
    "precision": ("Rprec", "recip_rank", "P", "recall", "Rprec_mult", "relative_P", "success"),
    "average_precision": ("map", "gm_map", "bpref", "iprec_at_recall", "infAP", "gm_bpref", "11pt_avg", "map_cut"),
    "counts": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "relstring", "num_nonrel_judged_ret"),
    "gain": ("binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut"),
    "inferred": ("xinfAP", "infNDCG", "iP", "infIPrec", "inum_rel_ret", "inum_rel"),
    "judged": ("Judged",),
    "novelty": ("gdeval_nDCG", "ERR", "alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "P_IA", "StRecall", "NRBP",
                "nNRBP", "AP_IA", "RBP", "RBP_residual"),
    "sets": ("utility", "set_P", "set_relative_P", "set_recall", "set_map", "set_F"),
}
#: The ir_measures names (:attr:`IrName.name`) each module's measures answer to.
BUILT_IN_IR_NAMES: dict[str, tuple[str, ...]] = {
    "precision": ("Rprec", "RR", "P", "R", "Success"),
    "average_precision": ("AP", "Bpref", "IPrec", "infAP"),
    "counts": ("NumQ", "NumRet", "NumRel"),
    "gain": ("nDCG",),
    "inferred": ("xinfAP", "infNDCG", "iP", "infIPrec", "inum_rel_ret", "inum_rel"),
    "judged": ("Judged",),
    "novelty": ("nDCG", "ERR", "alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "P_IA", "StRecall", "NRBP", "nNRBP",
                "AP_IA", "RBP", "RBP_residual"),
    "sets": ("SetP", "SetR", "SetAP", "SetF"),
}
_MODULE_OF = {name: module for module, names in BUILT_IN.items() for name in names}
#: castregin's own definitions of the modules loaded so far, by name.
_OWN: dict[str, Definition] = {}
_LOADED: set[str] = set()
#: The definitions :func:`register` added, by name, in the order registered.
_OTHERS: dict[str, Definition] = {}


def _load(module: str) -> None:
    """Take the measures that a module of this package declares (importing it)."""
    if module in _LOADED:
        return
    # __import__, not importlib.import_module: importlib (and the warnings module it loads) is for larger commands.
    declared = __import__(f"{__package__}.{module}", fromlist=["MEASURES"]).MEASURES
    if tuple(definition.name for definition in declared) != BUILT_IN[module]:
        raise RuntimeError(f"{__package__}.{module} declares {[d.name for d in declared]}, not BUILT_IN's "
                           f"{list(BUILT_IN[module])}: update the table")
    _OWN.update((definition.name, definition) for definition in declared)
    _LOADED.add(module)


def _load_all() -> None:
    for module in BUILT_IN:
        _load(module)


def register(definition: Definition) -> Definition:
    """Make ``definition`` known by its name (and ir_measures names) everywhere: evaluate, the API, the report,
    ``castregin measures``. A name already taken is a :class:`ValueError`."""
    if not isinstance(definition.parameter, Param):  # as declared before Param: (name, rule, CUT_LONG)
        raise TypeError(f"{definition.name}: declare its parameter as a Param (cutoff((1, 3)) for cutoffs), not "
                        f"{definition.parameter!r}")
    if definition.name in _MODULE_OF or definition.name in _OTHERS:
        raise ValueError(f"a measure named {definition.name!r} is registered already")
    taken = {(alias.name, alias.cutoff) for other in registered() for alias in other.ir_measures
             if alias.when is None}
    for alias in definition.ir_measures:
        if alias.when is None and (alias.name, alias.cutoff) in taken:
            raise ValueError(f"the ir_measures name {alias.shown} names a registered measure already")
    _OTHERS[definition.name] = definition
    return definition


def unregister(name: str) -> None:
    """Forget the definition registered as ``name`` (a test's own measure, say); castregin's own stay."""
    if name in _MODULE_OF:
        raise ValueError(f"{name} is one of castregin's own measures")
    del _OTHERS[name]


def registered() -> list[Definition]:
    """Every definition: castregin's own in :data:`BUILT_IN`'s order, then the others as registered."""
    _load_all()
    return [_OWN[name] for names in BUILT_IN.values() for name in names] + list(_OTHERS.values())


def lookup(name: str) -> Definition | None:
    """The definition named ``name``, or None."""
    module = _MODULE_OF.get(name)
    if module is None:
        return _OTHERS.get(name)
    _load(module)
    return _OWN[name]


def registered_as(name: str) -> Definition:
    """The definition named ``name``, which must be one (a KeyError otherwise)."""
    definition = lookup(name)
    if definition is None:
        raise KeyError(name)
    return definition


def named_in_ir_measures(kind: str) -> Iterator[tuple[Definition, IrName]]:
    """The definitions that ir_measures' measure ``kind`` (``nDCG``) names, each with that name, in
    :func:`registered`'s order; a module of castregin's own is imported only when the walk reaches it (``nDCG@3`` is
    found before the diversity measures' module)."""
    for module, kinds in BUILT_IN_IR_NAMES.items():
        if kind in kinds:
            _load(module)
            for name in BUILT_IN[module]:
                yield from ((_OWN[name], alias) for alias in _OWN[name].ir_measures if alias.name == kind)
    for definition in _OTHERS.values():
        yield from ((definition, alias) for alias in definition.ir_measures if alias.name == kind)
