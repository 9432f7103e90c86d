"""castregin: judge and score conversational search systems the way TREC does.

The stages are plain functions on plain data, usable without the command line::

    import castregin
    qrels = castregin.read_qrels("question_relevance_all.qrel")
    scores = castregin.evaluate([castregin.read_run("bm25.run")], qrels, ["P@1", "nDCG@3"])
"""

from .data import Qrels, Run
from .errors import InputError
from .evaluation.evaluate import evaluate
from .formats import read_qrels, read_run

__all__ = ["InputError", "Qrels", "Run", "evaluate", "read_qrels", "read_run"]
__version__ = "0.1.0"
