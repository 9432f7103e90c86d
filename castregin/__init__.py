"""castregin: judge and score conversational search systems the way TREC does.

The stages are plain functions on plain data, usable without the command line::

    import castregin
    castregin.calc_aggregate(["P@1", "nDCG@3"], "question_relevance_all.qrel", "bm25.run")
    scores = castregin.evaluate(["bm25.run", {"132_1-1": {"Q0001": 2.5}}], "question_relevance_all.qrel")

Runs, qrels and measures may be given as ir_measures and ranx users give them (file paths, dicts,
DataFrames, ir_measures measure objects); see :mod:`castregin.api`.
"""

from __future__ import annotations

from .errors import InputError

TYPE_CHECKING = False  # not typing's: every command imports this package, and typing takes a few milliseconds
if TYPE_CHECKING:
    from .api import Metric, calc_aggregate, evaluate, iter_calc
    from .data import Qrels, Run
    from .formats import read_qrels, read_run

#: The public names, each imported from its module on first use (PEP 562): every command imports this
#: package, and `castregin --help` should not pay for the evaluation modules (numpy) or the readers.
_LAZY = {"Metric": "api", "calc_aggregate": "api", "evaluate": "api", "iter_calc": "api", "Qrels": "data",
         "Run": "data", "read_qrels": "formats", "read_run": "formats"}

__all__ = ["InputError", "Metric", "Qrels", "Run", "calc_aggregate", "evaluate", "iter_calc", "read_qrels",
           "read_run"]
__version__ = "0.1.0"


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value  # later lookups find it without calling this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
