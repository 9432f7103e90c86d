"""Synthetic dialogue worlds whose target values are known exactly, for tests and benchmarks.

A world is a finite Markov decision process dressed as dialogue: hidden user states that the
context text names (so that ``(turn, context)`` is a Markov state), a fixed set of replies,
transitions and an end-of-dialogue chance that depend on (state, reply, turn), and a human rating
drawn at the end from a distribution that depends on the last (state, reply). Logged dialogues
come from a mix of behaviour systems (one drawn per dialogue); the target policy is given by
``target_p``. Its exact value is computed by dynamic programming over (turn, state).

Worlds:

``toy``
    ENIGMA's sanity check. Half the dialogues open in context X, where every policy goes on for
    two turns and is rated 1; half open in context Y, where reply ``a`` leads to a four-turn
    dialogue rated 1 and reply ``e`` to a two-turn dialogue rated 0; the logs take both equally.
    The target answers ``a`` in Y with probability ``target_p`` and is like the logs elsewhere:
    its value is ``0.5 + 0.5 target_p``.
``chat``
    Four topics times three moods, five replies, up to six turns; ratings in {0, .25, .5, .75, 1}.
    Three behaviour systems with random soft preferences. The target takes, with probability
    ``target_p``, a fixed "preferred" reply of each state (one that tends to please), else a
    uniformly random reply. ``world_seed`` draws another world of the same shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..formats.experience import Dialogue, Turn
from ..limits import MAX_SIMULATED

WORLDS = ("toy", "chat")


@dataclass
class World:
    """A finite dialogue MDP (arrays indexed by hidden state ``h``, reply ``a``, turn ``t``)."""

    name: str
    contexts: list[str]            # (H,) the context text of each hidden state
    replies: list[str]             # (A,)
    initial: np.ndarray            # (H,)
    transition: np.ndarray         # (H, A, H) next hidden state if the dialogue goes on
    end: np.ndarray                # (L, H, A) chance that the dialogue ends after this turn
    rating_values: np.ndarray      # (K,)
    rating_probs: np.ndarray       # (H, A, K)
    behaviours: np.ndarray         # (B, H, A) the logged systems, one drawn per dialogue
    preferred: np.ndarray          # (H, A) the target when target_p = 1
    baseline: np.ndarray           # (H, A) the target when target_p = 0

    @property
    def max_turns(self) -> int:
        """The longest possible dialogue."""
        return self.end.shape[0]

    def target(self, target_p: float) -> np.ndarray:
        """The target policy (H, A) for ``target_p``: a mix of the preferred and baseline policies."""
        return target_p * self.preferred + (1.0 - target_p) * self.baseline

    def value(self, policy: np.ndarray) -> float:
        """The exact expected final rating of a Markov policy (H, A), by backward induction."""
        mean_rating = self.rating_probs @ self.rating_values            # (H, A)
        following = np.zeros(len(self.contexts))
        for t in reversed(range(self.max_turns)):
            end = self.end[t]
            q = end * mean_rating + (1.0 - end) * (self.transition @ following)
            following = (policy * q).sum(axis=1)
        return float(self.initial @ following)

    def behaviour_value(self) -> float:
        """The exact mean rating of the logs (each dialogue's system drawn uniformly)."""
        return float(np.mean([self.value(b) for b in self.behaviours]))


def _toy_world() -> World:
    contexts = ["x: hello, can you help me plan a trip?", "x: thanks, that sounds fine",
                "y: i want to change my booking", "y-a: which date would suit you?",
                "y-a: the new date is confirmed", "y-a: anything else i can do?",
                "y-e: okay, never mind then"]
    replies = ["b", "a", "e", "c"]
    X0, X1, Y0, YA1, YA2, YA3, YE1 = range(7)
    B, A_, E, C = range(4)
    H, A, L = len(contexts), len(replies), 4
    transition = np.zeros((H, A, H))
    end = np.zeros((L, H, A))
    rating = np.zeros((H, A, 2))
    rating[..., 0] = 1.0                      # rated 0 unless said otherwise below
    behaviour = np.zeros((H, A))
    for h, reply, nxt in [(X0, B, X1), (Y0, A_, YA1), (Y0, E, YE1), (YA1, C, YA2), (YA2, C, YA3)]:
        transition[h, reply, nxt] = 1.0
    for h, reply, score in [(X1, B, 1), (YA3, C, 1), (YE1, C, 0)]:
        end[:, h, reply] = 1.0
        rating[h, reply] = [1 - score, score]
    end[L - 1] = 1.0
    behaviour[[X0, X1], B] = 1.0
    behaviour[Y0, [A_, E]] = 0.5
    behaviour[[YA1, YA2, YA3, YE1], C] = 1.0
    preferred, baseline = behaviour.copy(), behaviour.copy()
    preferred[Y0] = [0, 1, 0, 0]
    baseline[Y0] = [0, 0, 1, 0]
    initial = np.zeros(H)
    initial[[X0, Y0]] = 0.5
    return World("toy", contexts, replies, initial, transition, end, np.array([0.0, 1.0]), rating,
                 behaviour[None], preferred, baseline)


_TOPICS = {
    "weather": "what will the weather be like tomorrow",
    "music": "can you recommend some music for tonight",
    "travel": "how do i get to the airport from the centre",
    "cooking": "what can i cook with rice and beans",
}
_MOODS = ["annoyed", "neutral", "pleased"]
_REPLIES = [
    "here is a direct answer to your question",
    "could you tell me a bit more about what you need",
    "sorry i do not know that",
    "let me suggest something different instead",
    "great question here are a few options to consider",
]


def _chat_world(world_seed: int = 0) -> World:
    rng = np.random.default_rng([7, world_seed])
    topics = list(_TOPICS)
    H, A, L, K = len(topics) * len(_MOODS), len(_REPLIES), 6, 5
    contexts = [f"user ({mood}) about {topic}: {_TOPICS[topic]}" for topic in topics for mood in _MOODS]

    def index(topic: int, mood: int) -> int:
        return topic * len(_MOODS) + mood

    # How each reply moves the mood, per topic: chances of worse / same / better.
    mood_shift = rng.dirichlet([1.0, 1.5, 1.0], size=(len(topics), A))
    fit = rng.normal(0.0, 0.18, size=(len(topics), A))        # how well a reply suits a topic
    transition = np.zeros((H, A, H))
    mean_rating = np.zeros((H, A))
    base_end = rng.uniform(0.1, 0.45, size=(H, A))
    for ti in range(len(topics)):
        for mi in range(len(_MOODS)):
            h = index(ti, mi)
            for a in range(A):
                for shift, chance in zip((-1, 0, 1), mood_shift[ti, a], strict=True):
                    mood = min(max(mi + shift, 0), len(_MOODS) - 1)
                    # Users mostly stay on topic; sometimes they move to any topic.
                    transition[h, a, index(ti, mood)] += 0.8 * chance
                    for tj in range(len(topics)):
                        transition[h, a, index(tj, mood)] += 0.2 * chance / len(topics)
                mean_rating[h, a] = np.clip(0.2 + 0.3 * mi + fit[ti, a] + 0.25 * (mood_shift[ti, a, 2]
                                                                                 - mood_shift[ti, a, 0]),
                                            0.02, 0.98)
    end = np.empty((L, H, A))
    for t in range(L):
        end[t] = np.clip(base_end + 0.06 * t, 0.0, 1.0)
    end[L - 1] = 1.0
    values = np.linspace(0.0, 1.0, K)
    # Ratings: four independent "stars", each earned with the mean rating's chance, over four.
    rating_probs = np.empty((H, A, K))
    for k in range(K):
        rating_probs[..., k] = math.comb(K - 1, k) * mean_rating ** k * (1 - mean_rating) ** (K - 1 - k)
    logits = rng.normal(0.0, 1.2, size=(3, H, A))
    behaviours = np.exp(logits) / np.exp(logits).sum(axis=2, keepdims=True)
    behaviours = 0.9 * behaviours + 0.1 / A           # every reply is logged now and then
    # The preferred reply pleases: the best mix of rating and mood improvement.
    goodness = mean_rating + 0.5 * np.repeat(mood_shift[:, :, 2] - mood_shift[:, :, 0], len(_MOODS), axis=0)
    preferred = np.zeros((H, A))
    preferred[np.arange(H), goodness.argmax(axis=1)] = 1.0
    baseline = np.full((H, A), 1.0 / A)
    initial = np.array([0.3, 0.5, 0.2] * len(topics)) / len(topics)
    return World("chat", contexts, list(_REPLIES), initial, transition, end, values, rating_probs,
                 behaviours, preferred, baseline)


def make_world(name: str, world_seed: int = 0) -> World:
    """The world called ``name`` (``toy`` or ``chat``; ``world_seed`` varies ``chat``)."""
    if name == "toy":
        return _toy_world()
    if name == "chat":
        return _chat_world(world_seed)
    raise InputError(f"unknown world {name!r}; choose one of {', '.join(WORLDS)}", argument="world")


def exact_value(name: str, target_p: float, world_seed: int = 0) -> float:
    """The exact expected rating of the target policy ``target_p`` in world ``name``."""
    _check_p(target_p)
    world = make_world(name, world_seed)
    return world.value(world.target(target_p))


def _check_p(target_p: float) -> None:
    if not (0.0 <= target_p <= 1.0):
        raise InputError(f"must be in [0, 1], not {target_p}", argument="target_p")


@dataclass
class Simulation:
    """Logged dialogues of a world with the exact values of the target and of the logs."""

    world: str
    dialogues: list[Dialogue]
    exact_value: float
    behavior_value: float


def _draw(rng: np.random.Generator, probs: np.ndarray) -> int:
    # Inverse-CDF on one uniform: stable across numpy versions, unlike Generator.choice's internals.
    index = int(np.searchsorted(np.cumsum(probs), rng.random() * probs.sum(), side="right"))
    return min(index, len(probs) - 1)


def simulate(world: str, n_dialogues: int, seed: int, target_p: float, *, target_sample: bool = False,
             world_seed: int = 0) -> Simulation:
    """Log ``n_dialogues`` dialogues of ``world`` with the target's replies; deterministic in ``seed``.

    Each turn carries the target's distribution over replies (``target_responses``), or with
    ``target_sample`` one reply drawn from it (``target_response``). In the toy world the two
    branches of Y are logged equally often, as ENIGMA's check asks.
    """
    _check_p(target_p)
    if not 1 <= n_dialogues <= MAX_SIMULATED:
        raise InputError(f"must be between 1 and {MAX_SIMULATED} dialogues, not {n_dialogues}", argument="n_dialogues")
    w = make_world(world, world_seed)
    target = w.target(target_p)
    rng = np.random.default_rng([seed, 1])
    dialogues = []
    for i in range(n_dialogues):
        system = _draw(rng, np.ones(len(w.behaviours)))
        policy = w.behaviours[system]
        if w.name == "toy":
            # Exactly balanced: X, Y-a, X, Y-e, ... so that the logs hold both branches equally.
            h = 0 if i % 2 == 0 else 2
            forced = None if h == 0 else (1 if i % 4 == 1 else 2)
        else:
            h = _draw(rng, w.initial)
            forced = None
        turns = []
        for t in range(w.max_turns):
            a = forced if (forced is not None and t == 0) else _draw(rng, policy[h])
            probs = target[h]
            options: tuple[tuple[str, float], ...]
            if target_sample:
                options = ((w.replies[_draw(rng, probs)], 1.0),)
            else:
                options = tuple((w.replies[k], float(p)) for k, p in enumerate(probs) if p > 0)
            turns.append(Turn(w.contexts[h], w.replies[a], options))
            if rng.random() < w.end[t, h, a]:
                reward = float(w.rating_values[_draw(rng, w.rating_probs[h, a])])
                break
            h = _draw(rng, w.transition[h, a])
        else:
            raise ValueError(f"world {w.name}: a dialogue outlived its last turn, which ends every one")
        dialogues.append(Dialogue(f"{world}-{seed}-{i:06d}", tuple(turns), reward))
    return Simulation(world, dialogues, w.value(target), w.behaviour_value())
