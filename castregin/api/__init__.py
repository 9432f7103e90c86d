"""The public Python API: what ir_measures and ranx users pass, scored with castregin's numbers.

Runs and qrels may be given as

- a file path (``str`` or :class:`os.PathLike`), read by :func:`castregin.formats.read_run` /
  :func:`~castregin.formats.read_qrels`;
- a :class:`~castregin.data.Run` / :class:`~castregin.data.Qrels`;
- a dict ``{turn: {item: score}}`` / ``{turn: {item: label}}`` (ir_measures' and pytrec_eval's shape);
- a pandas DataFrame with ir_measures' columns (``query_id, doc_id, score`` / ``query_id, doc_id,
  relevance``) or ranx's (``q_id, doc_id, score`` for both); other columns are ignored;
- an iterable of ir_measures' ``ScoredDoc`` / ``Qrel`` records (anything with those fields);
- a ranx ``Run`` / ``Qrels`` (anything with a ``to_dict()`` giving the dict shape; its ``name`` is kept).

Turn and item ids are strings (integers are taken as their decimal text); scores are finite
numbers; labels are integers (a whole float such as ``2.0`` is taken as ``2``). Anything else is a
one-line :class:`~castregin.errors.InputError` naming the argument, the turn and the item.

Measures are names (``"P@1"``, ``"ndcg_cut_3"``, ``"all_trec"``, see
:mod:`castregin.evaluation.measures`) or ir_measures measure objects (``ir_measures.P@5``), one or a
list mixing them. An object is read through its name (``str(measure)``) with one exception: a
``rel`` it was given explicitly is kept even where ir_measures' name omits it as its default
(``P(rel=1)@5`` prints as ``P@5``), since castregin's names without ``rel`` take ``rel_level``.

The numbers are those of :func:`castregin.evaluation.evaluate.evaluate`: trec_eval's, averaged over
the turns the run and qrels share unless ``complete`` (trec_eval ``-c``: every qrels turn, a missing
one scoring 0). Note that ir_measures' own ``calc_aggregate`` always averages like ``complete=True``
and takes ``rel=1`` where a measure does not say; castregin takes ``rel_level`` (default 2). And
ir_measures (through pytrec_eval) ranks items on scores rounded to 32-bit floats, as trec_eval up to
v9.0.8 (2020) does, where castregin ranks on doubles, as trec_eval-9.0.8 (2023) does: where two
scores of a turn are equal as floats but not as doubles the numbers differ, and
``score_precision="float"`` gives ir_measures' (:mod:`castregin.evaluation.ranking`).
"""

from __future__ import annotations

from .dialogue import play_privateshared
from .evaluation import Metric, calc_aggregate, evaluate, holes, iter_calc, ranking_agreement
from .inputs import as_qrels, as_run, measure_names
from .judging import JudgeResult, agreement, judge, label_agreement
from .nuggets import (
           CitationResult,
           citation_scores,
           nugget_scores,
           nuggets_assign,
           nuggets_cite,
           nuggets_create,
)
from .sampling import adaptive_pool, ppi, sample_eval, sample_pool, simulate_pooling

__all__ = ["CitationResult", "JudgeResult", "Metric", "adaptive_pool", "agreement", "as_qrels", "as_run",
           "calc_aggregate", "citation_scores", "evaluate", "holes", "iter_calc", "judge", "label_agreement",
           "measure_names", "nugget_scores", "nuggets_assign", "nuggets_cite", "nuggets_create", "play_privateshared",
           "ppi", "ranking_agreement", "sample_eval", "sample_pool", "simulate_pooling"]
