"""PARADISE (Walker, Litman, Kamm and Abella, 1997): task success as kappa, and the performance function.

**Task success.** The information a dialogue must exchange is an attribute-value matrix (AVM): the
scenario key gives each attribute its value, the dialogue ends with the values the agent
understood. Over many dialogues they make a confusion matrix ``M``, rows the values in the dialogue
data and columns the values in the key, one block of rows and columns per attribute. With ``T`` the
total count and ``t_i`` the column sums (the key's distribution):

* ``P(A) = trace(M) / T``, the share of values the dialogues got right,
* ``P(E) = sum_i (t_i / T) ** 2``, the agreement expected by chance *from the key alone* (PARADISE's
  definition; Cohen's kappa would multiply row and column marginals instead),
* ``kappa = (P(A) - P(E)) / (1 - P(E))``; NaN when ``P(E) = 1`` (one value takes the whole key).

An attribute's kappa is the same computation on its diagonal block of ``M``; counts outside the
blocks (a value of one attribute recorded for another) enter only the overall kappa.

**Performance.** ``Performance = alpha * N(kappa) - sum_i w_i * N(c_i)``, with ``N`` the z-score
``(x - mean) / sd`` (sample standard deviation, n - 1) and ``c_i`` the costs (turns, time, repair
utterances...). The weights come from a multiple linear regression of ``N(user satisfaction)`` on
``N(kappa)`` and every ``N(c_i)`` (statsmodels OLS, with an intercept as in the standardised
regressions of the paper's era; with every variable z-scored it is 0 up to rounding and is not
reported), then a second regression on the factors significant at ``alpha_level`` in the first
(p < level). Coefficients are reported signed as fitted: a cost usually has a negative one, and the
function is ``sum_j b_j * N(x_j)`` over the final factors (``alpha = b_kappa``, ``w_i = -b_i``).
Each dialogue's performance is that sum; with a group column (agent A and agent B), the mean per
group and, with exactly two groups, Student's two-sample t-test (equal variances, scipy's
``ttest_ind(..., equal_var=True)``, as in the paper's era; the statistic is the first group seen
minus the second).

statsmodels and scipy are imported only when a function needs them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..formats import schema

OVERALL = "overall"


# --- task success ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Kappa:
    """PARADISE task success of one confusion matrix (or one attribute's block of it)."""

    total: float
    p_a: float
    p_e: float
    kappa: float

    def as_dict(self) -> dict:
        return {"total": self.total, "p_a": self.p_a, "p_e": self.p_e, "kappa": self.kappa}


def task_kappa(matrix, *, source: str | None = None) -> Kappa:
    """P(A), P(E) and kappa of a square confusion matrix (rows: dialogue data, columns: the key).

    ``P(A) = trace(M) / T``, ``P(E) = sum_i (t_i / T) ** 2`` with ``t_i`` the column sums; kappa is NaN
    when ``P(E) = 1``. A matrix that is not square, negative, or sums to 0 is an InputError.
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise InputError(f"expected a two-dimensional matrix, got an array of shape {m.shape}", source=source)
    if m.shape[0] != m.shape[1] or m.size == 0:
        rows, columns = m.shape
        raise InputError(f"the matrix has {rows} rows and {columns} columns; a confusion matrix must be "
                         "square, one row and one column per attribute value", source=source)
    if not np.all(np.isfinite(m)) or np.any(m < 0):
        raise InputError("counts must be finite and not negative", source=source)
    total = float(m.sum())
    if total == 0:
        raise InputError("every count is 0; there is nothing to measure", source=source)
    p_a = float(np.trace(m) / total)
    p_e = float(np.sum((m.sum(axis=0) / total) ** 2))
    kappa = (p_a - p_e) / (1 - p_e) if p_e != 1 else math.nan
    return Kappa(total, p_a, p_e, float(kappa))


def parse_attribute_groups(spec: str, labels: Sequence[str], *, source: str | None = None
                           ) -> list[tuple[str, list[int]]]:
    """The attribute blocks of a matrix, as ``(attribute, [indices])`` in matrix order.

    ``spec`` is either ``NAME=N,NAME=N,...`` (consecutive blocks of N values each, which must add up
    to the number of values) or ``labels``: values labelled ``ATTRIBUTE:VALUE``, grouped by the text
    before the first colon (each attribute's values must be adjacent).
    """
    n = len(labels)
    spec = spec.strip()
    if spec == "labels":
        groups: list[tuple[str, list[int]]] = []
        for i, label in enumerate(labels):
            attribute, colon, _ = label.partition(":")
            if not colon or not attribute.strip():
                raise InputError(f"value {label!r} is not labelled ATTRIBUTE:VALUE, which "
                                 "--attribute-groups labels needs", source=source)
            attribute = attribute.strip()
            if groups and groups[-1][0] == attribute:
                groups[-1][1].append(i)
            elif any(name == attribute for name, _ in groups):
                raise InputError(f"the values of attribute {attribute!r} are not adjacent; put each "
                                 "attribute's rows and columns together", source=source)
            else:
                groups.append((attribute, [i]))
        return groups
    groups = []
    start = 0
    for part in spec.split(","):
        match = re.fullmatch(r"\s*([^=\s][^=]*?)\s*=\s*([0-9]+)\s*", part)
        if not match or int(match.group(2)) == 0:
            raise InputError(f"expected NAME=N,NAME=N,... (N > 0) or 'labels', got {part!r}", argument="groups_spec")
        name, size = match.group(1), int(match.group(2))
        if any(name == other for other, _ in groups):
            raise InputError(f"attribute {name!r} is given twice", argument="groups_spec")
        groups.append((name, list(range(start, start + size))))
        start += size
    if start != n:
        raise InputError(f"the groups add up to {start} values but the matrix has {n}", source=source,
                         argument="groups_spec")
    return groups


def avm_kappas(matrix, groups: Sequence[tuple[str, Sequence[int]]] = (), *, source: str | None = None
               ) -> dict[str, Kappa]:
    """Kappa overall (key ``"overall"``) and per attribute block, in matrix order."""
    m = np.asarray(matrix, dtype=float)
    results = {OVERALL: task_kappa(m, source=source)}
    for name, indices in groups:
        if name == OVERALL:
            raise InputError(f"an attribute cannot be called {OVERALL!r}", source=source)
        block = m[np.ix_(list(indices), list(indices))]
        if block.sum() == 0:
            raise InputError(f"attribute {name!r} has no counts in its block", source=source)
        results[name] = task_kappa(block, source=source)
    return results


# --- the performance function ------------------------------------------------------------------------------

def mean_sd(values: Sequence[float] | np.ndarray, name: str = "values", *,
            source: str | None = None) -> tuple[float, float]:
    """Mean and sample standard deviation (n - 1) of a column; a constant column is an InputError.

    Computed on the values divided by their largest magnitude, so that values near the largest
    float (1e308) do not overflow when squared; a spread beyond the largest float is an InputError.
    """
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        raise InputError(f"column {name!r} needs at least two dialogues to be z-scored", source=source)
    if np.all(x == x[0]):
        raise InputError(f"column {name!r} is constant (every value is {x[0]:g}), so it cannot be z-scored; "
                         "leave it out", source=source)
    scale = float(np.max(np.abs(x)))
    scaled = x / scale
    mean, sd = scale * float(scaled.mean()), scale * float(np.std(scaled, ddof=1))
    if not (math.isfinite(mean) and math.isfinite(sd)) or sd == 0:
        raise InputError(f"column {name!r}: its values spread beyond the largest number (1.8e308); rescale it",
                         source=source)
    return mean, sd


def zscore(values: Sequence[float] | np.ndarray, name: str = "values", *, source: str | None = None) -> np.ndarray:
    """``(x - mean) / sd`` with the sample standard deviation (n - 1); see :func:`mean_sd`."""
    mean, sd = mean_sd(values, name, source=source)
    x = np.asarray(values, dtype=float)
    return x / sd - mean / sd


@dataclass(frozen=True)
class Regression:
    """One OLS fit of N(satisfaction) on z-scored factors: coefficients and p-values by factor, R^2."""

    coefficients: dict[str, float]
    p_values: dict[str, float]
    r_squared: float
    n: int

    def as_dict(self) -> dict:
        return {"coefficients": dict(self.coefficients), "p_values": dict(self.p_values),
                "r_squared": self.r_squared}


@dataclass(frozen=True)
class PerformanceFunction:
    """``Performance = sum_j coefficients[j] * (x_j - means[j]) / sds[j]`` over the final factors.

    ``means`` and ``sds`` are those of the dialogues it was fitted on (used by :func:`predict` unless
    told to z-score the new dialogues on their own).
    """

    satisfaction: str
    success: str
    costs: tuple[str, ...]
    coefficients: dict[str, float]
    means: dict[str, float]
    sds: dict[str, float]
    alpha_level: float
    r_squared: float

    def formula(self, decimals: int = 4) -> str:
        """``Performance = 0.4000 N(kappa) - 0.7800 N(turns)`` (``Performance = 0`` when empty)."""
        if not self.coefficients:
            return "Performance = 0"
        text = ""
        for i, (name, b) in enumerate(self.coefficients.items()):
            term = f"{abs(b):.{decimals}f} N({name})"
            if i == 0:
                text = f"-{term}" if b < 0 else term
            else:
                text += f" - {term}" if b < 0 else f" + {term}"
        return f"Performance = {text}"

    def as_dict(self) -> dict:
        return {
            "method": "PARADISE performance function (Walker et al. 1997)",
            "formula": self.formula(),
            "satisfaction": self.satisfaction,
            "success": self.success,
            "costs": list(self.costs),
            "coefficients": dict(self.coefficients),
            "normalization": {name: {"mean": self.means[name], "sd": self.sds[name]} for name in self.coefficients},
            "alpha_level": self.alpha_level,
            "r_squared": self.r_squared,
        }

    @classmethod
    def from_dict(cls, data, *, source: str | None = None) -> PerformanceFunction:
        """Read back :meth:`as_dict` (checked against ``schemas/performance-function.json``)."""
        schema.validate(data, "performance-function", source)
        normalization = data["normalization"]
        for name in data["coefficients"]:
            if name not in normalization:
                raise InputError(f"normalization: missing the key \"{name}\" (each factor of the function needs "
                                 "its mean and sd)", source=source)
        return cls(
            satisfaction=data["satisfaction"], success=data["success"], costs=tuple(data["costs"]),
            coefficients={name: float(b) for name, b in data["coefficients"].items()},
            means={name: float(normalization[name]["mean"]) for name in data["coefficients"]},
            sds={name: float(normalization[name]["sd"]) for name in data["coefficients"]},
            alpha_level=float(data.get("alpha_level", 0.05)),
            r_squared=math.nan if data.get("r_squared") is None else float(data["r_squared"]),
        )


@dataclass(frozen=True)
class TTest:
    """Student's two-sample t-test of performance: ``first`` minus ``second``."""

    first: str
    second: str
    statistic: float
    p_value: float
    df: float

    def as_dict(self) -> dict:
        return {"statistic": self.statistic, "p_value": self.p_value}


@dataclass(frozen=True)
class PerformanceFit:
    """Everything ``paradise fit`` reports."""

    full: Regression
    final: Regression
    function: PerformanceFunction
    performance: list[float]
    groups: list[str] | None
    performance_by_group: dict[str, float] = field(default_factory=dict)
    group_sizes: dict[str, int] = field(default_factory=dict)
    t_test: TTest | None = None


def _ols(y: np.ndarray, factors: Mapping[str, np.ndarray], *, source: str | None) -> Regression:
    import statsmodels.api as sm

    names = list(factors)
    n = len(y)
    if not names:
        return Regression({}, {}, 0.0, n)
    X = np.column_stack([np.ones(n), *[factors[name] for name in names]])
    if n <= X.shape[1]:
        raise InputError(f"{n} dialogues are too few for {len(names)} factors and an intercept; the "
                         f"regression needs more dialogues than {X.shape[1]}", source=source)
    if np.linalg.matrix_rank(X) < X.shape[1]:
        raise InputError(f"the factors {', '.join(names)} are collinear (one is a linear combination of "
                         "the others); leave one out", source=source)
    result = sm.OLS(y, X).fit()
    params = np.asarray(result.params)
    pvalues = np.asarray(result.pvalues)
    return Regression(
        coefficients={name: float(params[i + 1]) for i, name in enumerate(names)},
        p_values={name: float(pvalues[i + 1]) for i, name in enumerate(names)},
        r_squared=float(result.rsquared),
        n=n,
    )


def _check_columns(satisfaction: str, success: str, costs: Sequence[str]) -> None:
    seen: set[str] = set()
    for name in (satisfaction, success, *costs):
        if name in seen:
            raise InputError(f"column {name!r} is given twice among the satisfaction, success and cost columns")
        seen.add(name)


def _by_group(performance: Sequence[float], groups: Sequence[str]) -> dict[str, list[float]]:
    """Each group's performance values, groups in order of first appearance."""
    values: dict[str, list[float]] = {}
    for p, g in zip(performance, groups, strict=True):
        values.setdefault(g, []).append(p)
    return values


def group_means(performance: Sequence[float],
                groups: Sequence[str] | None) -> tuple[dict[str, float], dict[str, int]]:
    """Mean performance per group and group sizes, groups in order of first appearance (none without
    groups)."""
    values = _by_group(performance, groups) if groups is not None else {}
    return ({g: float(np.mean(v)) for g, v in values.items()}, {g: len(v) for g, v in values.items()})


def t_test(performance: Sequence[float], groups: Sequence[str]) -> TTest | None:
    """Student's t-test (equal variances) between exactly two groups, first seen minus second; else None."""
    values = _by_group(performance, groups)
    if len(values) != 2:
        return None
    from scipy import stats

    (first, a), (second, b) = values.items()
    with np.errstate(all="ignore"):
        result = stats.ttest_ind(a, b, equal_var=True)
    return TTest(first, second, float(result.statistic), float(result.pvalue), float(len(a) + len(b) - 2))


def fit_performance(
    table: Mapping[str, Sequence[float]],
    *,
    satisfaction: str,
    success: str,
    costs: Sequence[str],
    groups: Sequence[str] | None = None,
    alpha_level: float = 0.05,
    source: str | None = None,
) -> PerformanceFit:
    """Fit PARADISE's performance function on a table of dialogues (column name -> one value per dialogue).

    Every factor (``success`` and each cost) and the satisfaction are z-scored; the full regression
    has every factor, the final one those with p < ``alpha_level`` in the full one. ``groups`` (one
    label per dialogue) gives the mean performance per group and, with two groups, Student's t-test.
    """
    costs = tuple(costs)
    if not costs:
        raise InputError("give at least one cost column", argument="costs")
    _check_columns(satisfaction, success, costs)
    if not 0 < alpha_level < 1:
        raise InputError(f"the significance level must be between 0 and 1, got {alpha_level}")
    for name in (satisfaction, success, *costs):
        if name not in table:
            raise InputError(f"no column {name!r}", source=source)
    factors_raw = {name: np.asarray(table[name], dtype=float) for name in (success, *costs)}
    y = zscore(table[satisfaction], satisfaction, source=source)
    factors = {name: zscore(values, name, source=source) for name, values in factors_raw.items()}
    full = _ols(y, factors, source=source)
    kept = {name: factors[name] for name in factors if full.p_values[name] < alpha_level}
    final = _ols(y, kept, source=source)
    function = PerformanceFunction(
        satisfaction=satisfaction, success=success, costs=costs,
        coefficients=dict(final.coefficients),
        means={name: mean_sd(factors_raw[name], name)[0] for name in kept},
        sds={name: mean_sd(factors_raw[name], name)[1] for name in kept},
        alpha_level=alpha_level, r_squared=final.r_squared,
    )
    performance = _combine(function.coefficients, kept, len(y))
    by_group: dict[str, float] = {}
    sizes: dict[str, int] = {}
    test = None
    if groups is not None:
        groups = [str(g) for g in groups]
        if len(groups) != len(y):
            raise InputError("groups must give one label per dialogue", argument="groups")
        by_group, sizes = group_means(performance, groups)
        test = t_test(performance, groups)
    return PerformanceFit(full, final, function, performance, groups, by_group, sizes, test)


def _combine(coefficients: Mapping[str, float], normalized: Mapping[str, np.ndarray], n: int) -> list[float]:
    total = np.zeros(n)
    for name, b in coefficients.items():
        total = total + b * normalized[name]
    return [float(v) for v in total]


def predict(
    function: PerformanceFunction,
    table: Mapping[str, Sequence[float]],
    *,
    normalize: str = "fitted",
    source: str | None = None,
    dialogues: int | None = None,
) -> list[float]:
    """Each new dialogue's performance under a fitted function.

    ``normalize="fitted"`` z-scores with the mean and sd of the dialogues the function was fitted on
    (so the values are comparable with theirs, and one dialogue can be scored); ``"own"`` z-scores
    the new dialogues among themselves, as the paper does for each new set. ``dialogues`` is how many
    there are, which a function without a factor (every performance 0) cannot tell from ``table``.
    """
    if normalize not in ("fitted", "own"):
        raise InputError(f"normalize must be 'fitted' or 'own', got {normalize!r}", argument="normalize")
    n = None
    normalized = {}
    for name in function.coefficients:
        if name not in table:
            raise InputError(f"no column {name!r}, which the performance function uses", source=source)
        x = np.asarray(table[name], dtype=float)
        n = len(x)
        if normalize == "own":
            normalized[name] = zscore(x, name, source=source)
        else:
            normalized[name] = (x - function.means[name]) / function.sds[name]
    if n is None:
        n = dialogues if dialogues is not None else len(next(iter(table.values()))) if table else 0
    return _combine(function.coefficients, normalized, n)
