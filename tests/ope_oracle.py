"""An independent route to what ope's one-hot estimate must equal: the target's value in the maximum-
likelihood model of the logs, by dynamic programming over dicts (certainty equivalence).

A test oracle, kept out of castregin: it shares nothing with the estimator but the state texts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from castregin.formats.experience import Dialogue
from castregin.ope.estimator import _state_text


def empirical_model_value(dialogues: Sequence[Dialogue], *, state: str = "context") -> float:
    """The target's value in the maximum-likelihood model of the logs, by dynamic programming.

    An independent route to what the one-hot DICE estimate must equal (certainty equivalence):
    transitions, endings and mean ratings counted per logged (turn, state, reply), the target
    pooled per state and renormalised over the logged replies. Used by the tests.
    """
    counts: dict = defaultdict(float)
    nexts: dict = defaultdict(lambda: defaultdict(float))
    ends: dict = defaultdict(float)
    reward_sum: dict = defaultdict(float)
    target: dict = defaultdict(lambda: defaultdict(float))
    visits: dict = defaultdict(float)
    initial: dict = defaultdict(float)
    horizon = 0
    for d in dialogues:
        horizon = max(horizon, len(d.turns))
        keys = [(t, _state_text(d, t, state)) for t in range(len(d.turns))]
        initial[keys[0]] += 1
        for t, key in enumerate(keys):
            turn = d.turns[t]
            visits[key] += 1
            for reply, prob in turn.target:
                target[key][reply] += prob
            pair = (key, turn.response)
            counts[pair] += 1
            if t == len(keys) - 1:
                ends[pair] += 1
                reward_sum[pair] += d.reward
            else:
                nexts[pair][keys[t + 1]] += 1
    logged: dict = defaultdict(set)
    for key, reply in counts:
        logged[key].add(reply)

    memo: dict = {}

    def value(key) -> float:
        if key in memo:
            return memo[key]
        dist = {a: p for a, p in target[key].items() if a in logged[key]}
        mass = sum(dist.values())
        if mass <= 1e-12:
            dist = {a: counts[(key, a)] for a in logged[key]}
            mass = sum(dist.values())
        total = 0.0
        for a, p in dist.items():
            pair = (key, a)
            n = counts[pair]
            v = reward_sum[pair] / n
            for nxt, k in nexts[pair].items():
                v += k / n * value(nxt)
            total += p / mass * v
        memo[key] = total
        return total

    n = sum(initial.values())
    return sum(k / n * value(key) for key, k in sorted(initial.items()))
