"""A run whose top items the qrels hardly judge: the share of judged items it is measured by, and the warning.

Such a run (response ids against question qrels, say) scores about 0 on every measure, which looks like a
result. Apart from :mod:`castregin.evaluation.evaluate`, which warns with it too, so that the trec_eval drop-in
warns as evaluate does without loading evaluate's modules (a ten-line ``castregin trec_eval`` loads this module,
the rules and the line reader, little else).
"""

from __future__ import annotations

import math

from ..errors import CoverageWarning
from . import plain
from .measures import JUDGED_SHARE, Measure
from .ranking import DEFAULT_SCORE_PRECISION, score_bits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..data import Qrels, Run

#: The share of judged items (any label) among each turn's top JUDGED_DEPTH (trec_eval's order; over the items
#: retrieved when fewer), averaged over the turns the run and qrels share, below FEW_JUDGED is a CoverageWarning.
#: The engine counts it from the lines it ranks anyway (see measures.JUDGED_SHARE).
JUDGED_DEPTH = 10
FEW_JUDGED = 0.01
#: Where the per-turn judged shares are kept among a run's per-measure values (no measure has this name).
JUDGED_KEY = "\0judged share"
#: The measure that gives them.
JUDGED_SHARE_MEASURE = Measure(JUDGED_KEY, JUDGED_SHARE, JUDGED_DEPTH)


def warn_if_few_judged(run_name: str, qrels_name: str, share: float, turns: int, stacklevel: int = 1) -> None:
    """Warn (:class:`CoverageWarning`) when ``share``, the mean of the judged shares over the ``turns`` turns the run
    and qrels share, is under :data:`FEW_JUDGED`. ``stacklevel`` as :func:`warnings.warn` would count it in the
    caller."""
    if share < FEW_JUDGED:
        import warnings  # here: most evaluations have nothing to warn about

        warnings.warn(CoverageWarning(
            f"run {run_name!r}: {share:.1%} of its top {JUDGED_DEPTH} items are judged in qrels {qrels_name!r} "
            f"(mean over its {turns} turns there, under {FEW_JUDGED:.0%}): its values are about 0 whatever "
            "it ranks; check that the run ranks the items the qrels judge (not response ids against question "
            "qrels, say)"), stacklevel=stacklevel + 1)


def warn_few_judged(run: Run, qrels: Qrels, run_name: str | None = None,
                    score_precision: str = DEFAULT_SCORE_PRECISION) -> None:
    """Warn (:class:`CoverageWarning`) when the run's top items are hardly judged in the qrels (the shares computed
    by the rules, in plain Python): for evaluations that compute their numbers elsewhere (``castregin trec_eval``).
    ``run_name``: the run's tag by default."""
    shares = plain.evaluate_run(run.scores, qrels.labels, [JUDGED_SHARE_MEASURE], score_bits(score_precision))[0]
    if shares:  # else no shared turn
        warn_if_few_judged(run_name or run.tag, qrels.name, math.fsum(shares.values()) / len(shares), len(shares),
                           stacklevel=2)
