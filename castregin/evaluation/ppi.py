"""Prediction-powered estimates of a run's mean score: people judge a random sample of turns, a model all.

PPI++ (Angelopoulos, Duchi and Zrnic, "PPI++: Efficient Prediction-Powered Inference", 2023; the
prediction-powered inference of Angelopoulos et al., Science 2023) for the mean of per-turn scores: with
``Y`` a run's scores on the n turns people judged (their qrels), ``Yhat`` its scores on the same turns by
the model's qrels and ``Yhat_u`` by the model's qrels on the N turns nobody judged,

    theta = lambda * mean(Yhat_u) + mean(Y - lambda * Yhat)

is unbiased for any lambda; the power-tuned lambda (clipped to [0, 1]) minimises its variance, and the
interval is theta +- z * sqrt(var(lambda * Yhat_u) / N + var(Y - lambda * Yhat) / n). lambda = 0 is the
classical estimate (the mean of Y, people's labels alone). The numbers are those of the ppi-python
package (``ppi_py.ppi_mean_pointestimate`` and ``ppi_mean_ci``, ``classical_mean_ci``; tested against it),
computed here with numpy and scipy.

The effective sample size is the number of human-judged turns the classical estimate would need for the
variance of the PPI++ one: ``n * var(classical) / var(PPI++)``. The plan (:func:`turns_needed`) inverts
it: from the observed agreement (ppi_py's "PPI correlation" rho of Y and Yhat) and spread of Y, the
human-judged turns out of all the collection's that give an interval of a given width, for the
variance of PPI++ with the optimal lambda, ``var(Y) * (n + (1 - rho^2) N) / (n (n + N))``. That lambda
is ``cov(Y, Yhat) N / (var(Yhat) (n + N))`` before the estimator clips it to [0, 1]: where the agreement
is none or negative (rho <= 0) the estimator is the classical one, and so is the plan; where it would
exceed 1 (the model's scores spread less than people's) the clipped estimator is wider than planned, and
the plan says it is optimistic.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data import Qrels, Run
from ..errors import InputError, InputWarning


def _column(values) -> np.ndarray:
    return np.asarray(values, dtype=float).reshape(-1, 1)


def power_tuned_lambda(y, yhat, yhat_unlabeled) -> float:
    """The lambda of PPI++ that minimises the variance of the mean's estimate, clipped to [0, 1].

    As ppi_py computes it (``_calc_lam_glm`` for the mean): the gradients at the lambda = 1 estimate,
    their covariance over n, the predictions' variance (ddof 1) over labelled and unlabelled together.
    """
    y, yhat, unlabeled = _column(y), _column(yhat), _column(yhat_unlabeled)
    n, big_n = y.shape[0], unlabeled.shape[0]
    start = unlabeled.mean(0) + (y - yhat).mean(0)
    grads, grads_hat, grads_hat_unlabeled = y - start, yhat - start, unlabeled - start
    grads_cent = grads - grads.mean(axis=0)
    grads_hat_cent = grads_hat - grads_hat.mean(axis=0)
    covariance = (1 / n) * (grads_cent.T @ grads_hat_cent + grads_hat_cent.T @ grads_cent)
    variance = np.cov(np.concatenate([grads_hat, grads_hat_unlabeled], axis=0).T).reshape(1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):  # predictions that never vary: no lambda, said below
        lam = float(np.trace(covariance) / (2 * (1 + (n / big_n)) * np.trace(variance)))
    return float(np.clip(lam, 0, 1)) if math.isfinite(lam) else 0.0


@dataclass(frozen=True)
class Interval:
    """An estimate of a mean, its interval at the confidence asked, and its standard error."""

    estimate: float
    low: float
    high: float
    se: float


def _z(alpha: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(1 - alpha / 2.0))


def ppi_mean(y, yhat, yhat_unlabeled, alpha: float = 0.05, lam: float | None = None) -> tuple[Interval, float]:
    """The PPI++ estimate of the mean of ``y`` and its two-sided ``1 - alpha`` interval, and the lambda used."""
    y, yhat, unlabeled = _column(y), _column(yhat), _column(yhat_unlabeled)
    n, big_n = y.shape[0], unlabeled.shape[0]
    if lam is None:
        lam = power_tuned_lambda(y, yhat, unlabeled)
    estimate = float(((lam * unlabeled).mean(axis=0) + (y - lam * yhat).mean(axis=0)).squeeze())
    imputed = (lam * unlabeled).std(0) / np.sqrt(big_n)
    rectifier = (y - lam * yhat).std(0) / np.sqrt(n)
    se = float(np.sqrt(imputed ** 2 + rectifier ** 2).squeeze())
    z = _z(alpha)
    return Interval(estimate, estimate - z * se, estimate + z * se, se), lam


def classical_mean(y, alpha: float = 0.05) -> Interval:
    """The mean of ``y`` and its normal interval (ppi_py's ``classical_mean_ci``: standard deviation with ddof 0)."""
    y = np.asarray(y, dtype=float)
    mean, se = float(y.mean()), float(y.std() / np.sqrt(y.shape[0]))
    z = _z(alpha)
    return Interval(mean, mean - z * se, mean + z * se, se)


def ppi_correlation(y, yhat) -> float:
    """ppi_py's PPI correlation of the human and model scores on the same turns (capped at 1 - 1/n)."""
    y, yhat = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    n = y.shape[0]
    centred, centred_hat = y - y.mean(), yhat - yhat.mean()
    variance, variance_hat = float(centred @ centred / n), float(centred_hat @ centred_hat / n)
    if variance == 0 or variance_hat == 0:
        return 0.0
    return min(float(centred @ centred_hat / n) / math.sqrt(variance * variance_hat), 1 - 1 / n)


def turns_needed(y, yhat, total: int, width: float, alpha: float = 0.05) -> dict:
    """Human-judged turns (of ``total``) for a ``1 - alpha`` PPI++ interval ``width`` wide, from the sample so far.

    ``classical`` is the number for the classical interval (people alone). None where even every turn
    judged by people gives a wider interval. ``exact`` is the unrounded PPI++ number (the reported one is
    its ceiling: the interval must be at most ``width``). With ``rho <= 0`` the estimator's lambda is 0
    and the plan the classical one. ``lambda`` is the optimal lambda at the planned turns before clipping;
    ``optimistic`` says it exceeds 1 (the estimator clips it, so its interval is wider than planned).
    """
    y, yhat = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    if width <= 0:
        raise InputError("the interval width must be above 0", argument="width")
    rho = ppi_correlation(y, yhat)
    sigma = float(y.std())
    classical_exact = (2 * _z(alpha) * sigma / width) ** 2
    result = {"rho": rho, "sd": sigma, "width": width, "total": total, "classical": None, "ppi": None, "exact": None,
              "lambda": None, "optimistic": False}
    if classical_exact > total:
        return result
    gain = max(rho, 0.0) ** 2  # rho <= 0: lambda clipped to 0, the classical estimate
    exact = classical_exact * total * (1 - gain) / (total - gain * classical_exact)
    lam = 0.0
    variance_hat = float(yhat.var())
    if rho > 0 and variance_hat > 0:
        covariance = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
        lam = covariance * (total - exact) / (variance_hat * total)
    result.update(classical=max(1, math.ceil(classical_exact - 1e-9)), ppi=max(1, math.ceil(exact - 1e-9)),
                  exact=exact, optimistic=lam > 1)
    result["lambda"] = lam
    return result


def effective_sample_size(n: int, classical_se: float, ppi_se: float) -> float:
    """The human-judged turns the classical estimate would need for the PPI++ one's precision: ``n * var(classical)
    / var(PPI++)``; infinite when PPI++ is exact and the classical estimate is not, ``n`` when both are exact
    (scores that never vary: the model's labels add nothing, and take nothing away)."""
    if ppi_se > 0:
        return n * classical_se ** 2 / ppi_se ** 2
    return math.inf if classical_se > 0 else float(n)


# --- runs and qrels ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunEstimate:
    """One run's mean of a measure: PPI++ beside the classical (human-only) estimate and the model alone."""

    run: str
    measure: str
    n: int
    N: int
    ppi: Interval
    lam: float
    classical: Interval
    model_mean: float
    effective_n: float

    @property
    def gained(self) -> float:
        """Human-judged turns the model's labels are worth (effective sample size minus n)."""
        return self.effective_n - self.n


@dataclass(frozen=True)
class Difference:
    """Run a minus run b: the PPI++ estimate of the mean difference and the classical one."""

    run_a: str
    run_b: str
    measure: str
    ppi: Interval
    lam: float
    classical: Interval

    @property
    def significant(self) -> bool:
        """The PPI++ interval leaves out 0."""
        return self.ppi.low > 0 or self.ppi.high < 0


@dataclass(frozen=True)
class PpiResult:
    """:func:`ppi_estimates`: per run and measure, per pair of runs, and the plan when a width was asked."""

    runs: tuple[RunEstimate, ...]
    differences: tuple[Difference, ...]
    plans: tuple[dict, ...]
    confidence: float
    human_turns: int
    model_turns: int


def per_turn_scores(runs: Sequence[Run], qrels: Qrels, measure: str, rel_level: int = 2) -> list[dict[str, float]]:
    """Each run's value of ``measure`` on every turn of ``qrels`` (0 where the run lacks the turn), by evaluate."""
    from .evaluate import ALL_TURNS, evaluate_rows, run_names

    rows = evaluate_rows(list(runs), qrels, [measure], rel_level, complete=True, per_turn=True)
    names = run_names(list(runs))
    scores: dict[str, dict[str, float]] = {name: {} for name in names}
    for run, _, name, turn, value in rows:
        if turn != ALL_TURNS and name != "num_q":
            scores[run][turn] = value
    return [scores[name] for name in names]


def ppi_estimates(runs: Sequence[Run], human: Qrels, model: Qrels, measures: Sequence[str] = ("nDCG@3",),
                  rel_level: int = 2, confidence: float = 0.95, plan_width: float | None = None,
                  pairs: bool = True) -> PpiResult:
    """PPI++ estimates of each run's mean per-turn ``measure`` (see the module's docstring).

    ``human`` holds the turns people judged (a random sample of the collection's turns), ``model`` every
    turn (a model's labels); the turns ``model`` lacks are not part of the collection (a human turn
    among them is an error). Scores come from :func:`castregin.evaluation.evaluate.evaluate_rows`,
    every qrels turn counted (a turn a run lacks scores 0). ``plan_width``: the human-judged turns each
    run needs for an interval that wide.
    """
    from .evaluate import run_names

    if not 0 < confidence < 1:
        raise InputError(f"the confidence must be between 0 and 1, not {confidence}", argument="confidence")
    alpha = 1 - confidence
    if len(runs) < 1:
        raise InputError("expected at least one run", argument="runs")
    outside = [turn for turn in human.labels if turn not in model.labels]
    if outside:
        raise InputError(f"{len(outside)} turns people judged are not in the model's qrels ({outside[0]}, ...): the "
                         "model must label every turn of the collection", source=model.source)
    labelled = [turn for turn in model.labels if turn in human.labels]
    unlabelled = [turn for turn in model.labels if turn not in human.labels]
    if len(labelled) < 2:
        raise InputError(f"people judged {len(labelled)} of the model's turns; PPI needs at least 2",
                         source=human.source)
    if not unlabelled:
        raise InputError("people judged every turn: there is nothing for the model's labels to add (the classical "
                         "mean is exact)", source=human.source)
    from .measures import parse_one_measure

    for measure in measures:  # each reported under its name: one measure per name
        parse_one_measure(measure, rel_level)
    names = run_names(list(runs))
    estimates, differences, plans = [], [], []
    for measure in measures:
        human_scores = per_turn_scores(runs, human.subset(labelled), measure, rel_level)
        model_scores = per_turn_scores(runs, model, measure, rel_level)
        columns = []
        for name, mine, theirs in zip(names, human_scores, model_scores, strict=True):
            y = [mine[t] for t in labelled]
            yhat = [theirs[t] for t in labelled]
            unl = [theirs[t] for t in unlabelled]
            columns.append((y, yhat, unl))
            interval, lam = ppi_mean(y, yhat, unl, alpha)
            classical = classical_mean(y, alpha)
            effective = effective_sample_size(len(y), classical.se, interval.se)
            estimates.append(RunEstimate(name, measure, len(y), len(unl), interval, lam, classical,
                                         float(np.mean(yhat + unl)), effective))
            if plan_width is not None:
                plans.append({"run": name, "measure": measure,
                              **turns_needed(y, yhat, len(labelled) + len(unlabelled), plan_width, alpha)})
        if pairs:
            for i in range(len(names)):
                for j in range(i + 1, len(names)):
                    (ya, yhata, ua), (yb, yhatb, ub) = columns[i], columns[j]
                    gaps = np.subtract(ya, yb)
                    interval, lam = ppi_mean(gaps, np.subtract(yhata, yhatb), np.subtract(ua, ub), alpha)
                    differences.append(Difference(names[i], names[j], measure, interval, lam,
                                                  classical_mean(gaps, alpha)))
    optimistic = [f"{plan['run']} ({plan['measure']})" for plan in plans if plan["optimistic"]]
    if optimistic:
        shown = ", ".join(optimistic[:3]) + (", ..." if len(optimistic) > 3 else "")
        warnings.warn(InputWarning(
            f"the plan of --plan-width is optimistic for {shown}: the model's scores spread less than people's, so "
            "the best lambda would exceed 1 and the estimator clips it to 1; judge more turns than planned"),
            stacklevel=2)
    return PpiResult(tuple(estimates), tuple(differences), tuple(plans), confidence, len(labelled),
                     len(labelled) + len(unlabelled))

