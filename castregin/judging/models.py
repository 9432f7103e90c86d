"""Aggregation models that learn how far to trust each worker: Dawid-Skene and GLAD.

Both run EM over one criterion's labels, tasks being the (turn, item) units left after the gold
filter. They are written here in numpy/scipy; crowd-kit (Apache-2.0) is only the tests' oracle, and
these facts of its 1.4 implementation are mirrored so that the labels agree:

- Classes are the labels in use (sorted), plus any label a gold item is known to have, not the whole
  scale: GLAD's ``(1 - a) / (K - 1)`` then is what crowd-kit computes, and in Dawid-Skene a class no
  worker gave starts with no mass and keeps none.
- Dawid-Skene (Dawid and Skene 1979) starts from majority-vote posteriors, alternates M-step
  (confusion counts clipped to 1e-10 where the worker used the label, each true-class column
  normalised) and E-step (in base 2, prior clipped to 1e-10), and stops after ``n_iter`` rounds or
  when the evidence lower bound per label gains less than ``tol``.
- GLAD (Whitehill et al. 2009) starts with ability 1 for every worker, log inverse difficulty 1
  for every task, a uniform prior that stays fixed and standard normal priors around 1 on both; each
  round is an E-step, then at most ``m_step_max_iter`` conjugate-gradient steps (``m_step_tol``);
  it stops when Q per (label, class) gains less than ``tol`` (the first comparison is with the
  initial, unnormalised Q, as in crowd-kit).
- The label is the posterior's argmax; a tie goes to the lowest label (crowd-kit's ``idxmax``
  over sorted columns).

Gold (castregin's extension: crowd-kit's Dawid-Skene knows only exact labels, its GLAD none): after the
initial posteriors and after every E-step, a gold item's posterior is set to zero outside its
``[min_label, max_label]`` and renormalised. With ``min == max`` that is crowd-kit's known label.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

METHODS = ("dawid-skene", "glad")
EPS = 1e-10  # crowd-kit's floor for probabilities and confusion counts
_SOFTPLUS_LIMIT = 30.0
_SQRT_2PI = np.sqrt(2 * np.pi)


@dataclass
class ModelFit:
    """What a model learned about one criterion.

    ``probas[t, k]``: posterior that task ``t`` has label ``classes[k]``. ``worker_accuracy[w]``: the
    model's probability that worker ``w`` labels correctly (NaN for a worker without labels).
    ``parameters`` holds the model's own estimates (``priors``, ``errors`` or ``alphas``, ``betas``).
    """

    method: str
    classes: np.ndarray
    probas: np.ndarray
    iterations: int
    worker_accuracy: np.ndarray
    parameters: dict = field(default_factory=dict)

    @property
    def labels(self) -> np.ndarray:
        """Each task's label: the posterior's argmax, the lowest label on a tie."""
        return self.classes[self.probas.argmax(axis=1)] if len(self.probas) else self.classes[:0]


@dataclass
class _Crowd:
    """One criterion's labels as codes: ``y`` is the class index of each label."""

    task: np.ndarray
    worker: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    n_tasks: int
    n_workers: int
    gold_tasks: np.ndarray
    gold_allowed: np.ndarray  # len(gold_tasks) x classes

    @property
    def n_classes(self) -> int:
        """K, the number of classes."""
        return len(self.classes)

    def sum_by_task(self, values: np.ndarray) -> np.ndarray:
        """Per-task sums of a labels x classes array."""
        return np.stack([np.bincount(self.task, weights=values[:, k], minlength=self.n_tasks)
                         for k in range(values.shape[1])], axis=1)

    def restrict(self, probas: np.ndarray) -> np.ndarray:
        """Gold items' posteriors set to zero outside their range, renormalised."""
        if not len(self.gold_tasks):
            return probas
        probas = probas.copy()
        rows = np.where(self.gold_allowed, probas[self.gold_tasks], 0.0)
        total = rows.sum(axis=1, keepdims=True)
        # A posterior with no mass left in the range (an underflow) becomes uniform over the range.
        uniform = self.gold_allowed / self.gold_allowed.sum(axis=1, keepdims=True)
        probas[self.gold_tasks] = np.where(total > 0, rows / np.where(total > 0, total, 1.0), uniform)
        return probas


def _crowd(task, worker, label, n_tasks, n_workers, gold) -> _Crowd:
    task = np.asarray(task, dtype=np.int64)
    worker = np.asarray(worker, dtype=np.int64)
    label = np.asarray(label, dtype=np.int64)
    if not (len(task) == len(worker) == len(label)):
        raise InputError("task, worker and label must have one length", argument="label")
    n_tasks = int(task.max()) + 1 if n_tasks is None and len(task) else int(n_tasks or 0)
    n_workers = int(worker.max()) + 1 if n_workers is None and len(worker) else int(n_workers or 0)
    if len(task) and (np.bincount(task, minlength=n_tasks) == 0).any():
        raise InputError("every task 0..n_tasks-1 needs at least one label", argument="task")
    g_task, g_low, g_high = (np.zeros(0, dtype=np.int64),) * 3 if gold is None else (
        np.asarray(part, dtype=np.int64) for part in gold)
    classes = np.unique(np.concatenate([label, g_low[g_low == g_high]]))
    allowed = (classes[None, :] >= g_low[:, None]) & (classes[None, :] <= g_high[:, None])
    if len(g_task) and not allowed.any(axis=1).all():
        first = int(np.flatnonzero(~allowed.any(axis=1))[0])
        raise InputError(f"gold range {g_low[first]}-{g_high[first]} of task {g_task[first]} "
                         "holds no label in use", argument="gold")
    return _Crowd(task, worker, np.searchsorted(classes, label), classes, n_tasks, n_workers, g_task, allowed)


def _trivial(method: str, crowd: _Crowd) -> ModelFit:
    """One class (or no label at all): nothing to learn, every worker is right."""
    accuracy = np.where(np.bincount(crowd.worker, minlength=crowd.n_workers) > 0, 1.0, np.nan)
    return ModelFit(method, crowd.classes, np.ones((crowd.n_tasks, crowd.n_classes)), 0, accuracy)


# --- Dawid-Skene -------------------------------------------------------------------------------

def _ds_m_step(crowd: _Crowd, probas: np.ndarray) -> np.ndarray:
    """errors[w, k, c]: probability that worker ``w`` answers class ``k`` when the truth is ``c``."""
    k = crowd.n_classes
    cell = crowd.worker * k + crowd.y
    counts = np.stack([np.bincount(cell, weights=probas[crowd.task, c], minlength=crowd.n_workers * k)
                       for c in range(k)], axis=1)
    used = np.bincount(cell, minlength=crowd.n_workers * k) > 0
    # Only the labels a worker used get the floor, so the others stay out of the normalisation.
    errors = np.where(used[:, None], np.maximum(counts, EPS), 0.0).reshape(crowd.n_workers, k, k)
    total = errors.sum(axis=1, keepdims=True)
    return errors / np.where(total > 0, total, 1.0)


def _ds_e_step(crowd: _Crowd, priors: np.ndarray, errors: np.ndarray) -> np.ndarray:
    log_errors = np.log2(errors[crowd.worker, crowd.y])
    log_likelihood = np.log2(np.maximum(priors, EPS)) + crowd.sum_by_task(log_errors)
    scaled = np.exp2(log_likelihood - log_likelihood.max(axis=1, keepdims=True))
    return scaled / scaled.sum(axis=1, keepdims=True)


def _ds_bound(crowd: _Crowd, probas: np.ndarray, priors: np.ndarray, errors: np.ndarray) -> float:
    """crowd-kit's evidence lower bound: the prior term counts once per label, not once per task."""
    log_terms = np.log(errors[crowd.worker, crowd.y]) + np.log(np.maximum(priors, EPS))
    joint = (probas[crowd.task] * log_terms).sum()
    clipped = np.maximum(probas, EPS)
    return float(joint - (np.log(clipped) * clipped).sum())


def dawid_skene(task, worker, label, *, n_tasks: int | None = None, n_workers: int | None = None,
                gold=None, n_iter: int = 100, tol: float = 1e-5) -> ModelFit:
    """Dawid-Skene over labels given as parallel arrays (task code, worker code, integer label).

    ``gold`` is ``(tasks, min_labels, max_labels)``: the posterior of those tasks is kept within the
    range. ``worker_accuracy`` is the confusion matrix's diagonal weighted by the class priors.
    """
    crowd = _crowd(task, worker, label, n_tasks, n_workers, gold)
    if crowd.n_classes <= 1 or not len(crowd.task):
        return _trivial("dawid-skene", crowd)
    votes = crowd.sum_by_task(np.eye(crowd.n_classes)[crowd.y])
    probas = crowd.restrict(votes / votes.sum(axis=1, keepdims=True))
    priors = probas.mean(axis=0)
    errors = _ds_m_step(crowd, probas)
    bound, iterations = -np.inf, 0
    for iterations in range(1, n_iter + 1):  # noqa: B007 - the count is reported after the loop
        probas = crowd.restrict(_ds_e_step(crowd, priors, errors))
        priors = probas.mean(axis=0)
        errors = _ds_m_step(crowd, probas)
        new_bound = _ds_bound(crowd, probas, priors, errors) / len(crowd.task)
        if new_bound - bound < tol:
            break
        bound = new_bound
    accuracy = np.einsum("wkk,k->w", errors, priors)
    accuracy[np.bincount(crowd.worker, minlength=crowd.n_workers) == 0] = np.nan
    return ModelFit("dawid-skene", crowd.classes, probas, iterations, accuracy,
                    {"priors": priors, "errors": errors})


# --- GLAD --------------------------------------------------------------------------------------

def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)), linear beyond |x| > 30 as in crowd-kit (error below 1e-13)."""
    outside = np.abs(x) > _SOFTPLUS_LIMIT
    return np.where(outside, np.maximum(x, 0.0), np.log1p(np.exp(np.where(outside, 0.0, x))))


def _log_normal_prior(x: np.ndarray) -> float:
    # The log of the density, not logpdf: the same overflow to -inf far from the mean as the oracle.
    with np.errstate(divide="ignore"):
        return float(np.log(np.exp(-(x - 1.0) ** 2 / 2.0) / _SQRT_2PI).sum())


class _Glad:
    """GLAD's likelihood terms for one crowd, in O(labels): a label is either its class or one of K - 1."""

    def __init__(self, crowd: _Crowd):
        self.crowd = crowd
        self.log_other_classes = np.log(crowd.n_classes - 1)
        self.split = crowd.n_workers

    def _log_terms(self, alphas: np.ndarray, betas: np.ndarray, ab: np.ndarray | None = None):
        """(log P(label is right), log P(label is this wrong answer)) per label."""
        if ab is None:
            ab = alphas[self.crowd.worker] * np.exp(betas[self.crowd.task])
        return -_softplus(-ab), -_softplus(ab) - self.log_other_classes

    def e_step(self, alphas: np.ndarray, betas: np.ndarray) -> np.ndarray:
        """The posterior of every task's class under the uniform prior, gold ranges applied."""
        from scipy.special import logsumexp

        crowd = self.crowd
        right, wrong = self._log_terms(alphas, betas)
        # Every class gets the wrong-answer term of every label, and the label's own class the difference.
        log_p = np.bincount(crowd.task, weights=wrong, minlength=crowd.n_tasks)[:, None] + np.bincount(
            crowd.task * crowd.n_classes + crowd.y, weights=right - wrong,
            minlength=crowd.n_tasks * crowd.n_classes).reshape(crowd.n_tasks, crowd.n_classes)
        log_p += np.log(1.0 / crowd.n_classes)
        return crowd.restrict(np.exp(log_p - logsumexp(log_p, axis=1, keepdims=True)))

    def posterior_weights(self, probas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(posterior of each label's own class, of the other classes) per label."""
        rows = probas[self.crowd.task]
        own = rows[np.arange(len(rows)), self.crowd.y]
        return own, rows.sum(axis=1) - own

    def q(self, weights, alphas: np.ndarray, betas: np.ndarray, ab: np.ndarray | None = None) -> float:
        """The expected complete log-likelihood with the normal priors; -inf when it is NaN."""
        right, wrong = self._log_terms(alphas, betas, ab)
        value = (weights[0] * right + weights[1] * wrong).sum()
        value += _log_normal_prior(alphas) + _log_normal_prior(betas)
        return -np.inf if np.isnan(value) else float(value)

    def objective(self, x: np.ndarray, weights) -> tuple[float, np.ndarray]:
        """(-Q, -gradient of Q) at ``x`` = abilities then log inverse difficulties."""
        from scipy.special import expit

        crowd, alphas, betas = self.crowd, x[: self.split], x[self.split:]
        e_beta = np.exp(betas[crowd.task])
        ab = alphas[crowd.worker] * e_beta
        value = self.q(weights, alphas, betas, ab)
        # d/dx of own * log(sigma) + other * log(1 - sigma) is (own - sigma * (own + other)) * d(ab)/dx.
        slope = weights[0] - expit(ab) * (weights[0] + weights[1])
        d_alpha = np.bincount(crowd.worker, weights=slope * e_beta, minlength=self.split) - (alphas - 1.0)
        d_beta = np.bincount(crowd.task, weights=slope * ab, minlength=crowd.n_tasks) - (betas - 1.0)
        return -value, -np.concatenate([d_alpha, d_beta])

    def m_step(self, probas: np.ndarray, alphas: np.ndarray, betas: np.ndarray, max_iter: int, tol: float):
        """New (abilities, log inverse difficulties): conjugate gradient on -Q, posteriors held fixed."""
        from scipy.optimize import minimize

        weights = self.posterior_weights(probas)
        result = minimize(self.objective, np.concatenate([alphas, betas]), args=(weights,), method="CG", jac=True,
                          tol=tol, options={"disp": False, "maxiter": max_iter})
        return result.x[: self.split], result.x[self.split:]


def glad(task, worker, label, *, n_tasks: int | None = None, n_workers: int | None = None, gold=None,
         n_iter: int = 100, tol: float = 1e-5, m_step_max_iter: int = 25, m_step_tol: float = 1e-2) -> ModelFit:
    """GLAD over labels given as parallel arrays (task code, worker code, integer label).

    ``gold`` as in :func:`dawid_skene`. ``worker_accuracy`` is the mean over the worker's labels of
    ``sigmoid(alpha_w * exp(beta_t))``, the model's probability of a correct label.
    """
    crowd = _crowd(task, worker, label, n_tasks, n_workers, gold)
    if crowd.n_classes <= 1 or not len(crowd.task):
        return _trivial("glad", crowd)
    model = _Glad(crowd)
    alphas, betas = np.ones(crowd.n_workers), np.ones(crowd.n_tasks)
    probas = model.e_step(alphas, betas)
    q, iterations = model.q(model.posterior_weights(probas), alphas, betas), 0
    for iterations in range(1, n_iter + 1):  # noqa: B007 - the count is reported after the loop
        last_q = q
        probas = model.e_step(alphas, betas)
        alphas, betas = model.m_step(probas, alphas, betas, m_step_max_iter, m_step_tol)
        q = model.q(model.posterior_weights(probas), alphas, betas) / (len(crowd.task) * crowd.n_classes)
        if q - last_q < tol:
            break
    from scipy.special import expit

    right = expit(alphas[crowd.worker] * np.exp(betas[crowd.task]))
    with np.errstate(invalid="ignore"):
        accuracy = (np.bincount(crowd.worker, weights=right, minlength=crowd.n_workers)
                    / np.bincount(crowd.worker, minlength=crowd.n_workers))
    return ModelFit("glad", crowd.classes, probas, iterations, accuracy, {"alphas": alphas, "betas": betas})


FITTERS = {"dawid-skene": dawid_skene, "glad": glad}


def fit(method: str, task, worker, label, **options) -> ModelFit:
    """:func:`dawid_skene` or :func:`glad` by name (``METHODS``)."""
    if method not in FITTERS:
        raise InputError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}",
                         argument="method")
    return FITTERS[method](task, worker, label, **options)
