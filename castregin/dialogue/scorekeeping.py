"""Scorekeeping: clembench's scores for its "privateshared" game, and its leaderboard summary.

In privateshared (Chalamalasetti et al., 2023, *clembench*) a model plays a person (a job applicant,
a customer...) who holds private information. A programmatic questioner requests one slot of that
information per round; before the first request and after each answer the game master *probes* the
model, asking for every slot whether the other party already knows it (yes = 1, no = 0). A probe is
right when the model's answer equals the ground truth ``gt``: a slot is shared once it was requested.

:func:`score_episode` turns an episode's ``interactions.json`` into the ``scores.json`` that
clembench writes beside it. What it computes was established from the published episodes in
``shared/clembench`` (clembench 0.9 and 1.0; :func:`score_episode` reproduces each published
``scores.json`` exactly, byte for byte when serialised with :func:`json.dumps`):

* Only **fully played probing rounds** count: the first ``"Played Probe Rounds"`` rounds of
  ``"probes"``. An aborted episode can hold one more, half-played round (its answers may be the
  invalid value 2 after several tries); it is left out of every score, the turn scores included.
* **Turn scores**, one per played round ``t`` (keys ``"0"``, ``"1"``, ...): ``Request Count``,
  ``Parsed Request Count`` and ``Violated Request Count`` (the round's entries of the lists of the
  same names), ``Accuracy`` (share of the round's probes answered right) and, from the second round
  on, ``Slot Filled?`` = ``int("Filled Slots"[t - 1])`` (round 0 precedes any request).
* **Episode scores**, in this order: ``Middle-Accuracy`` (the accuracy of round
  ``int((s + 1) / 2) - 1``, ``s`` the game's number of slots: clembench's rule, "n_probes = n_slots + 1",
  read from its scorer; ``s`` is the number of keys of ``"realised_slots"``, or, where an episode lacks
  that key, the length of ``"Request Count"`` minus one, since the game probes once before the first
  request and once after each. An 11-round letter-number game has 10 slots and reports round 4, not
  round 5. Like clembench, the key is left out when that round was never played, an aborted episode's
  early end), ``Accuracy`` (right probes / probes over all
  played rounds, pooled), ``Kappa`` (Cohen's kappa of all played probes, ``gt`` against the answer,
  computed as scikit-learn's ``cohen_kappa_score``: ``1 - sum(W*C) / sum(W*E)`` with ``C`` the
  confusion matrix over the sorted union of labels, ``E`` the outer product of its marginals over
  the total, ``W`` one off the diagonal, zero on it), ``Truncated Kappa`` = ``max(0, kappa)`` (so
  the *integer* ``0`` when kappa <= 0, as published: ``"Truncated Kappa": 0``; also 0 for a NaN
  kappa, when every probe and answer has one label),
  ``Slot-Filling-Accuracy`` (share of true values in ``"Filled Slots"``), ``Main Score`` =
  ``100 * (2 * sf * tk / (sf + tk))``, the harmonic mean of the two in percent (``0`` when
  ``sf + tk == 0``), ``Aborted``, ``Lose``, ``Success`` (0 or 1), and ``Request Count``, ``Parsed
  Request Count``, ``Violated Request Count`` (sums over *all* entries of the lists, the aborted
  round's included: 40 = 5+6+6+6+17+0 in the published aborted episode) and ``Request Success
  Ratio`` = parsed / requests.
* An **aborted** episode gets ``NaN`` for the six game scores (Middle-Accuracy to Main Score),
  ``Aborted`` 1, ``Lose`` 0, ``Success`` 0; its turn and request scores are kept.

Two rules cannot be checked on the published data and are castregin's choice, documented here:
``Success`` is 1 when a non-aborted episode has every probe right and every slot filled (a Main
Score of 100), and ``Lose`` is ``1 - Success`` (both published non-aborted episodes have Success 0,
Lose 1, with Main Scores 57.14 and 0); a ``Request Success Ratio`` with no request is ``NaN``.

:func:`summarize` is the leaderboard's aggregation (clembench's ``bencheval``): per model, game and
experiment, ``% Played`` = 100 * (1 - mean of ``Aborted``) and the quality score = mean and sample
standard deviation (n - 1) of ``Main Score`` over the episodes where it is not NaN, i.e. the
non-aborted ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import statistics
from ..errors import InputError
from ..formats import schema

TURN_REQUESTS = ("Request Count", "Parsed Request Count", "Violated Request Count")
GAME_SCORES = ("Middle-Accuracy", "Accuracy", "Kappa", "Truncated Kappa", "Slot-Filling-Accuracy", "Main Score")
MAIN_SCORE = "Main Score"
ABORTED = "Aborted"


def cohen_kappa(y1: Sequence, y2: Sequence) -> float:
    """Cohen's kappa of two label sequences as scikit-learn's ``cohen_kappa_score`` (clembench's) computes
    it: over the sorted union of the labels, NaN when a single label is everywhere."""
    if len(y1) != len(y2) or len(y1) == 0:
        raise InputError("cohen_kappa needs two non-empty label sequences of the same length", argument="y2")
    return statistics.cohen_kappa(y1, y2)


def main_score(slot_filling_accuracy: float, truncated_kappa: float) -> float:
    """clembench's Main Score: the harmonic mean of slot-filling accuracy and truncated kappa, times 100.

    ``100 * (2 * sf * tk / (sf + tk))``, and ``0`` when ``sf + tk == 0``.
    """
    if slot_filling_accuracy + truncated_kappa == 0:
        return 0
    return 100 * (2 * slot_filling_accuracy * truncated_kappa / (slot_filling_accuracy + truncated_kappa))


# --- validating interactions.json -----------------------------------------------------------------------



@dataclass(frozen=True)
class Episode:
    """The parts of a privateshared ``interactions.json`` that the scores use, validated."""

    probes: list[list[tuple[int, int]]]  # per round: (gt, value) per probe
    played_rounds: int
    aborted: bool
    filled_slots: list[bool]
    requests: dict[str, list[int]]  # TURN_REQUESTS -> one count per round
    slots: int  # the game's number of slots (requests), whether played or not

    @property
    def middle_round(self) -> int:
        """The probing round whose accuracy is Middle-Accuracy (clembench: ``int((slots + 1) / 2) - 1``)."""
        return int((self.slots + 1) / 2) - 1


def parse_episode(interactions, source: str | None = None) -> Episode:
    """Check an episode's ``interactions.json`` (already parsed) and keep what the scores need.

    The shape is ``schemas/interactions.json`` (a missing key or a wrong type is an :class:`InputError`
    naming its JSON path); then the counts must agree with the rounds played.
    """
    schema.validate(interactions, "interactions", source)

    def fail(path: str, problem: str):
        raise InputError(f"{path}: {problem}", source=source)

    played, aborted = interactions["Played Probe Rounds"], interactions[ABORTED]
    # clembench 2.0 stops a probing round at its first failed probe: the probes after it were never asked
    # and have no "value"; they lie in a round that was not played, which no score reads.
    probes = [[(probe["gt"], probe.get("value")) for probe in probe_round] for probe_round in interactions["probes"]]
    filled = list(interactions["Filled Slots"])
    requests = {name: list(interactions[name]) for name in TURN_REQUESTS}
    slots = (len(interactions["realised_slots"]) if "realised_slots" in interactions
             else len(requests["Request Count"]) - 1)
    if played > len(probes):
        fail("Played Probe Rounds", f"{played} is not between 0 and the {len(probes)} rounds in 'probes'")
    for r in range(played):
        if not probes[r]:
            fail(f"probes[{r}]", "a played probing round has no probes")
        for i, (_, value) in enumerate(probes[r]):
            if value is None:
                fail(f"probes[{r}][{i}]", 'missing the key "value" (the answer to a probe of a played round)')
    for name, counts in requests.items():
        if len(counts) < played:
            fail(name, f"has {len(counts)} entries, fewer than the {played} played probing rounds")
    if played > 1 and len(filled) < played - 1:
        fail("Filled Slots", f"has {len(filled)} entries; the {played} played probing rounds need "
                             f"{played - 1} (one per request)")
    if not aborted:
        if played == 0:
            fail("Played Probe Rounds", "a game that was not aborted must have played a probing round")
        if not filled:
            fail("Filled Slots", "a game that was not aborted must have requested a slot")
    return Episode(probes, played, aborted, filled, requests, slots)


def _accuracy(pairs: Sequence[tuple[int, int]]) -> float:
    return float(np.average([gt == value for gt, value in pairs]))


def score_episode(interactions, source: str | None = None) -> dict:
    """The clembench ``scores.json`` of one privateshared episode: ``{"turn scores", "episode scores"}``.

    ``interactions`` is the parsed ``interactions.json``; ``source`` names it in error messages.
    See the module documentation for every score.
    """
    episode = parse_episode(interactions, source)
    played = episode.played_rounds
    turn_scores: dict[str, dict] = {}
    for t in range(played):
        scores: dict[str, float] = {name: episode.requests[name][t] for name in TURN_REQUESTS}
        scores["Accuracy"] = _accuracy(episode.probes[t])
        if t > 0:
            scores["Slot Filled?"] = int(episode.filled_slots[t - 1])
        turn_scores[str(t)] = scores

    episode_scores: dict = {}
    if 0 <= episode.middle_round < played:
        # clembench logs it inside its loop over played rounds: absent when the loop never got there.
        episode_scores["Middle-Accuracy"] = (math.nan if episode.aborted
                                             else turn_scores[str(episode.middle_round)]["Accuracy"])
    if episode.aborted:
        episode_scores.update({name: math.nan for name in GAME_SCORES if name != "Middle-Accuracy"})
        episode_scores.update({ABORTED: 1, "Lose": 0, "Success": 0})
    else:
        pooled = [pair for probe_round in episode.probes[:played] for pair in probe_round]
        accuracy = _accuracy(pooled)
        kappa = cohen_kappa([gt for gt, _ in pooled], [value for _, value in pooled])
        truncated = max(0, kappa)
        slot_filling = sum(episode.filled_slots) / len(episode.filled_slots)
        success = int(accuracy == 1 and slot_filling == 1)
        episode_scores.update({
            "Accuracy": accuracy,
            "Kappa": kappa,
            "Truncated Kappa": truncated,
            "Slot-Filling-Accuracy": slot_filling,
            MAIN_SCORE: main_score(slot_filling, truncated),
            ABORTED: 0, "Lose": 1 - success, "Success": success,
        })
    totals = {name: sum(episode.requests[name]) for name in TURN_REQUESTS}
    episode_scores.update(totals)
    requests, parsed = totals["Request Count"], totals["Parsed Request Count"]
    episode_scores["Request Success Ratio"] = parsed / requests if requests else math.nan
    return {"turn scores": turn_scores, "episode scores": episode_scores}


# --- the leaderboard ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EpisodeRecord:
    """One scored episode and where it belongs: ``RUNS_DIR/MODEL/GAME/EXPERIMENT/EPISODE``."""

    model: str
    game: str
    experiment: str
    episode: str
    episode_scores: Mapping


def episode_records(locations, rescore: bool = False) -> list[EpisodeRecord]:
    """The scores of every episode found by :func:`castregin.formats.dialogue.find_episodes`.

    Each episode's ``scores.json`` is read; an episode without one, or every episode with
    ``rescore``, is scored from its ``interactions.json``.
    """
    from ..formats.dialogue import INTERACTIONS, SCORES, read_interactions, read_scores

    records = []
    for location in locations:
        scores_file = location.directory / SCORES
        if rescore or not scores_file.exists():
            if not (location.directory / INTERACTIONS).exists():
                raise InputError(f"no {INTERACTIONS} to score", source=str(location.directory))
            interactions, source = read_interactions(location.directory)
            scores = score_episode(interactions, source=source)
        else:
            scores = read_scores(scores_file)
        records.append(EpisodeRecord(location.model, location.game, location.experiment, location.episode,
                                     scores["episode scores"]))
    return records


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def summarize(records: Iterable[EpisodeRecord], *, overall: bool = True) -> list[dict]:
    """The clembench leaderboard's numbers, per (model, game, experiment).

    For each group: ``episodes``, ``played`` = 100 * (1 - mean of ``Aborted``) (clembench's
    "% Played"), ``quality`` = mean of ``Main Score`` over the episodes where it is not NaN (the
    non-aborted ones; clembench's "Quality Score", pandas' ``mean``), ``quality_std`` its sample
    standard deviation (n - 1; pandas' ``std``; NaN with fewer than two such episodes), and
    ``clemscore`` = played / 100 * quality. With ``overall``, each (model, game) also gets a row
    with experiment ``"all"`` over all its episodes: the per-game figure of the leaderboard.

    Rows are sorted by model, game and experiment (the ``all`` row after its experiments).
    """
    groups: dict[tuple[str, str, str], list[Mapping]] = {}
    for record in records:
        groups.setdefault((record.model, record.game, record.experiment), []).append(record.episode_scores)
        if overall:
            groups.setdefault((record.model, record.game, "\uffffall"), []).append(record.episode_scores)
    rows = []
    for (model, game, experiment), scores in sorted(groups.items()):
        aborted = np.array([_number(s.get(ABORTED)) for s in scores])
        main = np.array([_number(s.get(MAIN_SCORE)) for s in scores])
        main = main[~np.isnan(main)]
        played = 100 * (1 - float(np.mean(aborted))) if aborted.size else math.nan
        quality = float(np.mean(main)) if main.size else math.nan
        quality_std = float(np.std(main, ddof=1)) if main.size > 1 else math.nan
        rows.append({
            "model": model, "game": game, "experiment": experiment.replace("\uffff", ""),
            "episodes": len(scores), "played": played, "quality": quality, "quality_std": quality_std,
            "clemscore": played / 100 * quality,
        })
    return rows
