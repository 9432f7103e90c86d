"""How far two (or more) sources of relevance labels agree: qrels of NIST, a crowd, an LLM.

Each pair of sources is compared on the (turn, item) pairs both judged; those judged by one only are
counted (``only_a``, ``only_b``), never dropped in silence. Every statistic of a pair is a function of
its confusion matrix ``C`` (rows: the first source's label, columns: the second's, categories the
sorted labels either gave on the shared pairs):

* ``exact``: the share of pairs with the same label, ``trace(C) / n``;
* ``kappa``, ``kappa_linear``, ``kappa_quadratic``: Cohen's kappa unweighted and with linear or
  quadratic disagreement weights (:func:`castregin.statistics.cohen_kappa_from_confusion`; the weights
  see categories as equally spaced, as scikit-learn's ``cohen_kappa_score`` does);
* ``alpha_nominal``, ``alpha_ordinal``, ``alpha_interval``: Krippendorff's alpha. With two coders and
  every unit judged by both, the coincidence matrix is ``C + C.T``
  (:func:`castregin.judging.agreement.alpha_from_coincidences`); interval distances are between
  label values, ordinal ones between ranks weighted by the label counts;
* ``binary_agreement``, ``binary_kappa``: the same after binarising at ``rel_level`` (label >= level).

Bootstrap intervals: resampling the n shared pairs with replacement gives a confusion matrix that is
multinomial with n trials and the observed cell shares, so each resample is one multinomial draw of the
matrix and all statistics of all resamples are computed at once on the stack of drawn matrices. The
interval is the percentile one (as ``scipy.stats.bootstrap(..., paired=True, method="percentile")``);
it is undefined (NaN) when the statistic is undefined in some resample. Each pair draws from its own
generator seeded with ``seed``, so a pair's interval does not depend on the other sources.

With three sources or more, ``overall`` holds Krippendorff's alpha over every source together, on the
units judged by at least two of them.

A label below 0 is "in the pool but unjudged", as everywhere in castregin (trec_eval's qrels, ``qrels
merge``, ``judge --only-unjudged``): by default it is left out of its source before anything is counted,
so that a (turn, item) one source left unjudged counts as judged by the other only (``only_a``,
``only_b``). ``negative_labels="category"`` keeps such labels as a category of their own.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from ..data import is_judged, judged_labels, natural_key, topic_of
from ..errors import InputError, InputWarning
from ..limits import MAX_SCALE_LABELS
from ..statistics import cohen_kappa_from_confusion
from .agreement import LEVELS, alpha_from_coincidences, coincidence_matrix

#: The statistics of a pair, in the order they are shown.
STATISTICS = ("exact", "kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal", "alpha_ordinal",
              "alpha_interval", "binary_agreement", "binary_kappa")
#: The counts of a pair: (turn, item) pairs judged by both sources, by the first only, by the second only.
COUNTS = ("both", "only_a", "only_b")
#: How labels below 0 are taken: ``unjudged`` (left out: in the pool but not judged) or ``category`` (a label).
NEGATIVE_LABELS = ("unjudged", "category")
#: Cells of drawn confusion matrices held at once while bootstrapping (160 MB of float64).
_BOOTSTRAP_CELLS = 20_000_000

Labels = Mapping[str, Mapping[str, int]]


def confusion_statistics(confusion: np.ndarray, categories: Sequence[int], rel_level: int) -> dict[str, np.ndarray]:
    """Every statistic of :data:`STATISTICS` of a ``... x K x K`` stack of confusion matrices (NaN: undefined).

    ``categories`` are the K label values in order. A statistic of one matrix is a 0-d array.
    """
    confusion = np.asarray(confusion, dtype=np.float64)
    n = confusion.sum(axis=(-2, -1))
    out: dict[str, np.ndarray] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        out["exact"] = np.where(n > 0, np.trace(confusion, axis1=-2, axis2=-1) / n, np.nan)
    for name, weights in (("kappa", "none"), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
        out[name] = np.asarray(cohen_kappa_from_confusion(confusion, weights))
    coincidences = confusion + np.swapaxes(confusion, -2, -1)
    for level in LEVELS:
        out[f"alpha_{level}"] = np.asarray(alpha_from_coincidences(coincidences, categories, level))
    relevant = (np.asarray(categories) >= rel_level).astype(np.float64)
    indicator = np.stack([1.0 - relevant, relevant], axis=1)  # K x 2
    binary = indicator.T @ confusion @ indicator
    with np.errstate(invalid="ignore", divide="ignore"):
        out["binary_agreement"] = np.where(n > 0, np.trace(binary, axis1=-2, axis2=-1) / n, np.nan)
    out["binary_kappa"] = np.asarray(cohen_kappa_from_confusion(binary, "none"))
    return out


def bootstrap_intervals(confusion: np.ndarray, categories: Sequence[int], rel_level: int, *, samples: int,
                        seed: int, confidence: float) -> dict[str, tuple[float | None, float | None]]:
    """Percentile bootstrap interval of each statistic, from ``samples`` multinomial draws of ``confusion``.

    Resampling the pairs with replacement is drawing the confusion matrix from a multinomial with the
    observed cell shares (see the module's docstring). (NaN, NaN) where a resample leaves the statistic
    undefined; (None, None) without samples.
    """
    confusion = np.asarray(confusion, dtype=np.int64)
    n = int(confusion.sum())
    if samples <= 0:
        return dict.fromkeys(STATISTICS, (None, None))
    if n == 0:
        return {name: (float("nan"), float("nan")) for name in STATISTICS}
    size = confusion.shape[-1]
    rng = np.random.default_rng(seed)
    shares = confusion.ravel() / n
    chunk = max(1, _BOOTSTRAP_CELLS // (size * size))
    values: dict[str, list[np.ndarray]] = {name: [] for name in STATISTICS}
    for start in range(0, samples, chunk):
        draws = rng.multinomial(n, shares, size=min(chunk, samples - start)).reshape(-1, size, size)
        for name, value in confusion_statistics(draws, categories, rel_level).items():
            values[name].append(value)
    tail = (1.0 - confidence) / 2.0
    intervals: dict[str, tuple[float | None, float | None]] = {}
    for name in STATISTICS:
        drawn = np.concatenate(values[name])
        if np.isnan(drawn).any():
            intervals[name] = (float("nan"), float("nan"))
        else:
            low, high = np.percentile(drawn, [100.0 * tail, 100.0 * (1.0 - tail)])
            intervals[name] = (float(low), float(high))
    return intervals


def _floats(statistics: Mapping[str, np.ndarray], index=()) -> dict[str, float]:
    return {name: float(statistics[name][index]) for name in STATISTICS}


def _shared(a: Labels, b: Labels) -> tuple[list[tuple[str, str]], list[int], list[int], dict[str, list[int]]]:
    """The (turn, item) pairs both judged (sorted), their labels under each, and per topic the counts
    (both, only under ``a``, only under ``b``)."""
    keys: list[tuple[str, str]] = []
    per_topic: dict[str, list[int]] = {}
    for turn in set(a) | set(b):
        items_a, items_b = a.get(turn, {}), b.get(turn, {})
        common = items_a.keys() & items_b.keys()
        counts = per_topic.setdefault(topic_of(turn), [0, 0, 0])
        counts[0] += len(common)
        counts[1] += len(items_a) - len(common)
        counts[2] += len(items_b) - len(common)
        keys.extend((turn, item) for item in common)
    keys.sort()
    first = [int(a[t][i]) for t, i in keys]
    second = [int(b[t][i]) for t, i in keys]
    return keys, first, second, per_topic


def pair_agreement(a: Labels, b: Labels, *, names: tuple[str, str] = ("a", "b"), rel_level: int = 2,
                   samples: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """The agreement of two label sources ``{turn: {item: label}}`` on the (turn, item) pairs both judged.

    Returns ``a``, ``b`` (the names), the counts ``both``, ``only_a``, ``only_b``; ``labels`` (the
    categories, sorted) and ``confusion`` (rows: ``a``'s label); ``statistics`` (each of
    :data:`STATISTICS`, NaN where undefined) and ``intervals`` (``[low, high]`` of each, percentile
    bootstrap over ``samples`` resamples at ``confidence``); ``per_label`` (per category: ``count_a``,
    ``count_b`` on the shared pairs, ``agreed``, ``specific_agreement`` = 2 agreed / (count_a + count_b));
    ``topics`` (per topic, :func:`castregin.data.topic_of`: the counts and the statistics).
    """
    keys, first, second, per_topic = _shared(a, b)
    categories = sorted(set(first) | set(second))
    index = {label: k for k, label in enumerate(categories)}
    size = len(categories)
    topic_names = sorted(per_topic, key=natural_key)
    topic_index = {t: k for k, t in enumerate(topic_names)}
    codes = np.array([index[x] * size + index[y] for x, y in zip(first, second, strict=True)], dtype=np.int64)
    topics = np.array([topic_index[topic_of(turn)] for turn, _ in keys], dtype=np.int64)
    by_topic = np.bincount(topics * size * size + codes, minlength=len(topic_names) * size * size)
    by_topic = by_topic.reshape(len(topic_names), size, size)
    confusion = by_topic.sum(axis=0)
    statistics = confusion_statistics(confusion, categories, rel_level)
    intervals = bootstrap_intervals(confusion, categories, rel_level, samples=samples, seed=seed,
                                    confidence=confidence)
    topic_statistics = confusion_statistics(by_topic, categories, rel_level)
    counts_a, counts_b, agreed = confusion.sum(axis=1), confusion.sum(axis=0), np.diag(confusion)
    per_label = [{"label": label, "count_a": int(counts_a[k]), "count_b": int(counts_b[k]), "agreed": int(agreed[k]),
                  "specific_agreement": 2.0 * float(agreed[k]) / float(counts_a[k] + counts_b[k])}
                 for k, label in enumerate(categories)]
    return {
        "a": names[0], "b": names[1],
        **dict(zip(COUNTS, [sum(c[k] for c in per_topic.values()) for k in range(3)], strict=True)),
        "labels": categories,
        "confusion": confusion.tolist(),
        "statistics": _floats(statistics),
        "intervals": {name: list(bounds) for name, bounds in intervals.items()},
        "per_label": per_label,
        "topics": [{"topic": topic, **dict(zip(COUNTS, per_topic[topic], strict=True)),
                    **_floats(topic_statistics, (k,))} for k, topic in enumerate(topic_names)],
    }


def alpha_of_all(sources: Sequence[Labels]) -> dict:
    """Krippendorff's alpha (each level) over every source together: ``units`` judged by two or more
    (the others are not pairable), the number of ``labels`` on them, ``alpha_<level>``."""
    values: dict[tuple[str, str], list[int]] = {}
    for labels in sources:
        for turn, items in labels.items():
            for item, label in items.items():
                values.setdefault((turn, item), []).append(int(label))
    pairable = [v for v in values.values() if len(v) >= 2]
    categories = sorted({x for v in pairable for x in v})
    index = {label: k for k, label in enumerate(categories)}
    counts = np.zeros((len(pairable), len(categories)))
    for u, labels_of_unit in enumerate(pairable):
        for label in labels_of_unit:
            counts[u, index[label]] += 1
    out: dict = {"sources": len(sources), "units": len(pairable), "labels": int(counts.sum())}
    coincidences = coincidence_matrix(counts) if pairable else np.zeros((0, 0))
    for level in LEVELS:
        out[f"alpha_{level}"] = float(alpha_from_coincidences(coincidences, categories, level)) if pairable \
            else float("nan")
    return out


def check_settings(rel_level: int, samples: int, confidence: float, negative_labels: str = "unjudged") -> None:
    """Refuse settings no interval or binarisation can have, in one line."""
    if negative_labels not in NEGATIVE_LABELS:
        raise InputError(f"negative_labels {negative_labels!r} is neither of {', '.join(NEGATIVE_LABELS)}",
                         argument="negative_labels")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence {confidence} is not between 0 and 1 (0.95 for a 95% interval)",
                         argument="confidence")
    if samples < 0:
        raise InputError(f"samples {samples} is negative (0: no bootstrap)", argument="samples")
    if isinstance(rel_level, bool) or not isinstance(rel_level, (int, np.integer)):
        raise InputError(f"rel_level {rel_level!r} is not an integer label", argument="rel_level")


def label_agreement(sources: Sequence[tuple[str, Labels]], *, groups: Sequence[str | None] | None = None,
                    rel_level: int = 2, samples: int = 1000, seed: int = 0, confidence: float = 0.95,
                    negative_labels: str = "unjudged") -> dict:
    """The agreement of each pair of ``(name, {turn: {item: label}})`` sources, and of all together.

    ``groups`` (one per source, or None) names the crowd a source's labels come from: two sources of
    one group (two workers of one crowd) are not compared, that being the within-crowd agreement.
    A label below 0 is "in the pool but unjudged" and left out (``negative_labels="unjudged"``), or a
    category like any other (``"category"``). More than :data:`castregin.limits.MAX_SCALE_LABELS` distinct
    labels over the sources are an :class:`InputError` (see :func:`check_scale`).
    Returns ``settings``, ``sources`` (``name``, ``judged``: how many (turn, item) pairs the agreement takes
    as judged, ``below_zero``: how many labels below 0 the source holds), ``pairs``
    (:func:`pair_agreement` of each pair, in the order given) and ``overall`` (:func:`alpha_of_all`, with
    three sources or more; else None). A pair of sources that share no judged (turn, item) is
    warned about (its statistics are NaN); none sharing any is an :class:`InputError`.
    """
    check_settings(rel_level, samples, confidence, negative_labels)
    below_zero = [sum(not is_judged(label) for items in labels.values() for label in items.values())
                  for _, labels in sources]
    if negative_labels == "unjudged":
        sources = [(name, judged_labels(labels) if below else labels)
                   for (name, labels), below in zip(sources, below_zero, strict=True)]
    names = [name for name, _ in sources]
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise InputError(f"two sources are named {duplicate!r}; name them NAME=PATH", argument="sources")
    if len(sources) < 2:
        raise InputError("agreement needs two sources of labels or more", argument="sources")
    check_scale(sources)
    groups = list(groups) if groups is not None else [None] * len(sources)
    pairs = []
    for i, j in combinations(range(len(sources)), 2):
        if groups[i] is not None and groups[i] == groups[j]:
            continue
        pair = pair_agreement(sources[i][1], sources[j][1], names=(names[i], names[j]), rel_level=rel_level,
                              samples=samples, seed=seed, confidence=confidence)
        pairs.append(pair)
    if not pairs:
        raise InputError("no pair of sources to compare: every source is a worker of one crowd "
                         "(use --within for the agreement inside a crowd)", argument="sources")
    if all(pair["both"] == 0 for pair in pairs):
        raise InputError("no (turn, item) pair is judged by two sources: there is no agreement to measure; "
                         "check that the sources judge the same turns and items (same ids)", argument="sources")
    for pair in pairs:
        if pair["both"] == 0:
            warnings.warn(InputWarning(f"{pair['a']} and {pair['b']} judged no (turn, item) pair in common "
                                       f"({pair['only_a']} and {pair['only_b']} pairs): their agreement is "
                                       "undefined"), stacklevel=2)
    return {
        "settings": {"rel_level": rel_level, "samples": samples, "seed": seed, "confidence": confidence,
                     "negative_labels": negative_labels},
        "sources": [{"name": name, "judged": sum(len(items) for items in labels.values()), "below_zero": below}
                    for (name, labels), below in zip(sources, below_zero, strict=True)],
        "pairs": pairs,
        "overall": alpha_of_all([labels for _, labels in sources]) if len(sources) >= 3 else None,
    }


def check_scale(sources: Sequence[tuple[str, Labels]]) -> None:
    """Refuse, in one line, sources holding more than :data:`~castregin.limits.MAX_SCALE_LABELS` distinct labels.

    Each pair's statistics hold a K x K confusion matrix per topic (K: the distinct labels), so memory
    grows with K squared: 2,000 labels took 1 GB, 3,000 would take 9 GB. A judging scale is far smaller;
    qrels labels may be any int64.
    """
    distinct = {int(label) for _, labels in sources for items in labels.values() for label in items.values()}
    if len(distinct) > MAX_SCALE_LABELS:
        raise InputError(f"the sources hold {len(distinct)} distinct labels; agreement takes at most "
                         f"{MAX_SCALE_LABELS} (a judging scale): check that the files are qrels of "
                         "relevance labels, not scores", argument="sources")
