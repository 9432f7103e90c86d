"""Dialogue-level evaluation: PARADISE (Walker et al. 1997) and clembench's privateshared scorekeeping.

Plain functions on plain data, usable without the CLI:

* :mod:`castregin.dialogue.paradise`: task success as kappa of an attribute-value-matrix confusion
  matrix (:func:`task_kappa`, :func:`avm_kappas`) and the performance function fitted by multiple
  regression on z-scored factors (:func:`fit_performance`, :func:`predict`).
* :mod:`castregin.dialogue.scorekeeping`: the ``scores.json`` of a privateshared episode from its
  ``interactions.json`` (:func:`score_episode`) and the leaderboard's % played and quality score
  (:func:`summarize`).
* :mod:`castregin.dialogue.privateshared_game`: the privateshared game itself, clembench's game master with
  the model behind a plain ``player(messages) -> text`` (:func:`~castregin.dialogue.privateshared_game.play_episode`);
  :mod:`castregin.dialogue.privateshared_play`: the game against a model through the one model client
  (:func:`~castregin.dialogue.privateshared_play.play_game`, what ``castregin play`` and the API call);
  :mod:`castregin.dialogue.privateshared_instances`: new games in castregin's own wording.

statsmodels and scipy are imported only inside the functions that need them.
"""

from .paradise import (
    Kappa,
    PerformanceFit,
    PerformanceFunction,
    Regression,
    TTest,
    avm_kappas,
    fit_performance,
    parse_attribute_groups,
    predict,
    task_kappa,
    zscore,
)
from .scorekeeping import EpisodeRecord, cohen_kappa, main_score, parse_episode, score_episode, summarize

__all__ = [
    "EpisodeRecord",
    "Kappa",
    "PerformanceFit",
    "PerformanceFunction",
    "Regression",
    "TTest",
    "avm_kappas",
    "cohen_kappa",
    "fit_performance",
    "main_score",
    "parse_attribute_groups",
    "parse_episode",
    "predict",
    "score_episode",
    "summarize",
    "task_kappa",
    "zscore",
]
