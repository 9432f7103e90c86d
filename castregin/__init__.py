"""castregin: judge and score conversational search systems the way TREC does.

The stages are plain functions on plain data, usable without the command line::

    import castregin
    castregin.calc_aggregate(["P@1", "nDCG@3"], "question_relevance_all.qrel", "bm25.run")
    scores = castregin.evaluate(["bm25.run", {"132_1-1": {"Q0001": 2.5}}], "question_relevance_all.qrel")

Runs, qrels and measures may be given as ir_measures and ranx users give them (file paths, dicts,
DataFrames, ir_measures measure objects); see :mod:`castregin.api`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .data import Qrels, Run
from .errors import InputError
from .formats import read_qrels, read_run

if TYPE_CHECKING:
    from .api import Metric, calc_aggregate, evaluate, iter_calc

#: Names of castregin.api, imported on first use: the evaluation modules load numpy, which
#: `castregin --help` and the commands that do not evaluate should not pay for.
_API = ("Metric", "calc_aggregate", "evaluate", "iter_calc")

__all__ = ["InputError", "Metric", "Qrels", "Run", "calc_aggregate", "evaluate", "iter_calc", "read_qrels",
           "read_run"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
