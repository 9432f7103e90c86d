"""Citation support: whether the passages an answer cites support its sentences, judged pair by pair by a
model (``castregin nuggets cite``) or by people, and scored as TREC RAG 2024's support evaluation scores it.

**The pairs.** Each sentence of an answer with the passages it cites, the first ``max_citations`` distinct
ones (3, as the organisers' support evaluation script judged them): one (sentence, passage) pair each. A
model reads the sentence and the passage (``title: text`` when the passage has a title, as that script shows
a segment) and ends its answer with ``Full Support``, ``Partial Support`` or ``No Support``
(:func:`parse_support`; the last line only, where the phrase that comes first is the label).

**The scores** (Thakur et al., "Support Evaluation for the TREC 2024 RAG Track: Comparing Human versus LLM
Judges", SIGIR 2025, arXiv:2504.15205: weighted precision and weighted recall), per answer, a full support
weighing 1, a partial support 0.5, no support 0:

- ``citation_precision``: the weights of the answer's judged pairs, summed, over the number of pairs: how
  far its citations support what cites them. An answer that cites nothing has none (left out of the mean);
- ``citation_recall``: for each sentence, the weight of its best-supporting citation (0 when it cites
  nothing), summed, over the number of sentences: how far the answer is supported by its citations.

A run's ``all`` value of each is the mean over its answers that have one. An answer some of whose pairs have
no label (a call without answer yet, an unparseable answer, a cited passage without text) is left out of both,
and said.
"""

from __future__ import annotations

import os
import re
import statistics
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data import natural_key
from ..errors import InputError, InputWarning
from ..formats.citations import FULL_SUPPORT, NO_SUPPORT, PARTIAL_SUPPORT, SUPPORT_WEIGHTS, PairKey
from ..formats.nuggets import Answer
from ..formats.passages import Passage
from ..limits import MAX_CITATIONS_BOUNDS
from ..llm import Client, EndpointSettings, Reply
from ..llm.session import model_run
from ..llm.settings import check_number
from .llm import EXAMPLES_SHOWN, answer_tokens, call_log, last_line, nothing_complete
from .scores import ALL_TURNS, NUM_Q

CITATION_PRECISION, CITATION_RECALL = "citation_precision", "citation_recall"
MEASURES = (CITATION_PRECISION, CITATION_RECALL)
#: TREC RAG 2024's support evaluation judged the first 3 citations of each sentence.
DEFAULT_MAX_CITATIONS = 3
_PHRASES = ((FULL_SUPPORT, re.compile(r"full[\s_-]*support", re.IGNORECASE)),
            (PARTIAL_SUPPORT, re.compile(r"partial[\s_-]*support", re.IGNORECASE)),
            (NO_SUPPORT, re.compile(r"no[\s_-]*support", re.IGNORECASE)))
_NAMED = 10


def parse_support(content: str | None) -> str | None:
    """The support label on an answer's final non-empty line (``Full Support``, ``partial_support``, ...: of those
    phrases, the one that comes first on the line, so that "Partial Support (not full support)" is partial), else
    None."""
    lines = [line.strip() for line in (content or "").splitlines() if line.strip()]
    if not lines:
        return None
    found = [(match.start(), label) for label, pattern in _PHRASES if (match := pattern.search(lines[-1]))]
    return min(found)[1] if found else None


def cited_pairs(answer: Answer, max_citations: int = DEFAULT_MAX_CITATIONS) -> list[tuple[int, str]]:
    """The (sentence index, passage id) pairs of an answer that are judged: each sentence's first
    ``max_citations`` distinct citations, in order."""
    return [(index, passage_id) for index, sentence in enumerate(answer.sentences)
            for passage_id in list(dict.fromkeys(sentence.citations))[:max_citations]]


@dataclass
class CitationJudgment:
    """What a citation support run gives: the label of each judged pair (in the answers' order) and the log;
    from :func:`cite_stage`, the ``scores`` too (:func:`citation_scores`' rows, per turn)."""

    labels: dict[PairKey, str]
    log: dict
    scores: list[tuple] = field(default_factory=list)


def judge_citations(client: Client, answers: Sequence[Answer], passages: Mapping[str, Passage], prompt, *,
                    max_citations: int = DEFAULT_MAX_CITATIONS,
                    progress: Callable[[int], Callable[[Reply | None], None]] | None = None) -> CitationJudgment:
    """Judge every (sentence, cited passage) pair of ``answers`` with ``client``'s model.

    ``prompt`` has ``cite(run_id, qid, query, sentence, statement, passage_id, passage)`` and ``describe()``
    (:class:`castregin.render.nugget_prompts.NuggetPrompt`). Pairs whose passage has no text in ``passages``
    are not judged (said, as an :class:`InputWarning`). When calls were to be made and not one has an answer,
    an :class:`InputError` says why.
    """
    started = time.monotonic()
    calls = {}
    without_text: dict[str, int] = {}
    for answer in answers:
        for index, passage_id in cited_pairs(answer, max_citations):
            passage = passages.get(passage_id)
            if passage is None:
                without_text[passage_id] = without_text.get(passage_id, 0) + 1
                continue
            key = (answer.run_id, answer.qid, index, passage_id)
            calls[key] = client.call(prompt.cite(answer.run_id, answer.qid, answer.query or "", index,
                                                 answer.sentences[index].text, passage_id, passage.with_title))
    if without_text:
        named = sorted(without_text, key=natural_key)
        warnings.warn(InputWarning(
            f"{len(named)} cited passage(s) have no text among the passages, so {sum(without_text.values())} pair(s) "
            f"are not judged and their answers not scored: {', '.join(named[:_NAMED])}"
            + (f" and {len(named) - _NAMED} more" if len(named) > _NAMED else "")), stacklevel=2)
    if not calls:
        raise InputError("no answer cites a passage with a text: there is no pair to judge", argument="answers")
    got = client.run(list(calls.values()), progress)
    if not got:
        raise InputError(nothing_complete(client, 0, "pair"))
    labels: dict[PairKey, str] = {}
    examples: list[dict] = []
    unparseable, refusals = 0, 0
    for key, call in calls.items():
        reply = got.get(call.key)
        if reply is None:
            continue
        label = parse_support(reply.content)
        if label is None:
            unparseable += 1
            refusals += reply.refusal is not None
            if len(examples) < EXAMPLES_SHOWN:
                run_id, qid, sentence, passage_id = key
                examples.append({"run_id": run_id, "qid": qid, "sentence": sentence, "passage_id": passage_id,
                                 "refusal": reply.refusal is not None, "last_line": last_line(reply)})
            continue
        labels[key] = label
    answered = sum(call.key in got for call in calls.values())
    head, tail = call_log(client, {"cite": prompt}, len(calls), answered,
                          answer_tokens(got[call.key] for call in calls.values() if call.key in got), started)
    log = {**head, "max_citations": max_citations,
           "answers": len(answers),
           "pairs": len(calls),
           "pairs_without_passage_text": sum(without_text.values()),
           "labels": {label: sum(value == label for value in labels.values()) for label in SUPPORT_WEIGHTS},
           "unparseable": unparseable,
           "refusals": refusals,
           "unparseable_examples": examples,
           **tail}
    return CitationJudgment(labels, log)


def answer_citation_scores(answer: Answer, labels: Mapping[PairKey, str],
                           max_citations: int = DEFAULT_MAX_CITATIONS) -> dict[str, float] | None:
    """The weighted precision and recall of one answer (a measure it has no value of is absent), or None when a
    judged pair of it has no label."""
    pairs = cited_pairs(answer, max_citations)
    weights: dict[tuple[int, str], float] = {}
    for index, passage_id in pairs:
        label = labels.get((answer.run_id, answer.qid, index, passage_id))
        if label is None:
            return None
        weights[index, passage_id] = SUPPORT_WEIGHTS[label]
    scores = {}
    if pairs:
        scores[CITATION_PRECISION] = sum(weights.values()) / len(pairs)
    if answer.sentences:
        best = [max((w for (index, _), w in weights.items() if index == k), default=0.0)
                for k in range(len(answer.sentences))]
        scores[CITATION_RECALL] = sum(best) / len(answer.sentences)
    return scores


def citation_scores(answers: Sequence[Answer], labels: Mapping[PairKey, str], source: str = "citations",
                    per_turn: bool = False, max_citations: int = DEFAULT_MAX_CITATIONS) -> list[tuple]:
    """The citation precision and recall of every run, as evaluate's rows ``(run, source, measure, turn, value)``:
    per run a ``num_q`` row (its answers scored), each measure's ``all`` value (the mean over its answers that
    have one) and, with ``per_turn``, each answer's value (turns in natural order). Runs in order of first
    appearance; answers with an unlabelled pair are left out and said (:class:`InputWarning`)."""
    max_citations = int(check_number(max_citations, "max_citations", *MAX_CITATIONS_BOUNDS, True))
    if not answers:
        raise InputError("no answer to score", argument="answers")
    by_run: dict[str, list[Answer]] = {}
    for answer in answers:
        by_run.setdefault(answer.run_id, []).append(answer)
    rows: list[tuple] = []
    unscored: list[str] = []
    for run, unordered in by_run.items():
        values: dict[str, dict[str, float]] = {measure: {} for measure in MEASURES}
        scored = 0
        for answer in sorted(unordered, key=lambda a: natural_key(a.qid)):
            scores = answer_citation_scores(answer, labels, max_citations)
            if scores is None:
                unscored.append(f"{run}:{answer.qid}")
                continue
            scored += 1
            for measure, value in scores.items():
                values[measure][answer.qid] = value
        rows.append((run, source, NUM_Q, ALL_TURNS, float(scored)))
        for measure in MEASURES:
            turns = values[measure]
            rows.append((run, source, measure, ALL_TURNS, statistics.mean(turns.values()) if turns else float("nan")))
            if per_turn:
                rows.extend((run, source, measure, qid, value) for qid, value in turns.items())
    if unscored:
        warnings.warn(InputWarning(
            f"{len(unscored)} answer(s) have a cited pair without a support label and are not scored: "
            f"{', '.join(unscored[:_NAMED])}" + (f" and {len(unscored) - _NAMED} more" if len(unscored) > _NAMED
                                                  else "")), stacklevel=2)
    return rows


def cite_stage(settings: EndpointSettings, cache_file: str | os.PathLike, load_prompt: Callable[[], Any],
               answers: Callable[[], Sequence[Answer]], passages: Callable[[set[str]], Mapping[str, Passage]], *,
               max_citations: int = DEFAULT_MAX_CITATIONS, source: str = "citations",
               inputs: Iterable[str | os.PathLike] = (), outputs: Sequence[str | os.PathLike] = (),
               out_dir: str | None = None, progress: Callable[[int], Callable[[Reply | None], None]] | None = None,
               kept: Callable[[str, int], None] | None = None) -> CitationJudgment:
    """``castregin nuggets cite`` and :func:`castregin.api.nuggets_cite`, but writing: the prompt, the answers, the
    texts of the passages they cite (``passages(wanted ids)``), then :func:`judge_citations` through
    :func:`castregin.llm.session.model_run` (``inputs``, ``outputs``, ``out_dir`` and ``kept`` as it takes
    them), and the scores of the labels (per turn, ``source`` in their qrels column)."""
    # The same bounds as the command's option, so that the API refuses what the command does.
    max_citations = int(check_number(max_citations, "max_citations", *MAX_CITATIONS_BOUNDS, True))

    def read():
        given = answers()
        wanted = {passage_id for answer in given for _, passage_id in cited_pairs(answer, max_citations)}
        return given, passages(wanted)

    def work(client, prompts, data):
        (prompt,), (given, texts) = prompts, data
        return given, judge_citations(client, given, texts, prompt, max_citations=max_citations, progress=progress)

    given, judged = model_run(settings, cache_file, work, prompts=lambda: [load_prompt()], read=read, inputs=inputs,
                              outputs=outputs, out_dir=out_dir, purpose="nuggets-cite", kept=kept)
    judged.scores = citation_scores(given, judged.labels, source, True, max_citations)
    return judged
