"""Generated answers: nugget scores, and nuggets created, assigned and citations judged by a model
(``castregin nuggets``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from .. import formats
from ..errors import InputError
from .inputs import as_qrels, cache_path

if TYPE_CHECKING:
    import pandas as pd


# --- nuggets -------------------------------------------------------------------------------------------------


def nugget_scores(assignments, source: str = "nuggets", measures: Sequence[str] | None = None,
                  per_turn: bool = False, no_vital: str = "zero", failed: str = "refuse") -> pd.DataFrame:
    """``castregin nuggets score``: nuggetizer's four scores and iKAT 2024's nugget recall of every run.

    ``assignments``: nuggetizer assignment files (a path, a directory standing for its files, or a list of them),
    or :class:`castregin.formats.nuggets.Assignment` objects. ``source`` names the assignment source in the
    ``qrels`` column; ``measures``, ``no_vital`` and ``failed`` as the command's ``-m``, ``--no-vital`` and
    ``--failed`` (:mod:`castregin.nuggets.scores`). Returns evaluate's columns ``run, qrels, measure, turn,
    value``; turns without a (vital) nugget are said as :class:`~castregin.errors.InputWarning` warnings.

    >>> nugget_scores("assignments/", source="human", per_turn=True)  # doctest: +SKIP
    """
    import pandas as pd

    from ..evaluation.evaluate import RESULT_COLUMNS
    from ..formats.nuggets import Assignment, read_assignment_files
    from ..nuggets.scores import score_assignments

    given = [assignments] if isinstance(assignments, (str, os.PathLike, Assignment)) else list(assignments)
    objects = [a for a in given if isinstance(a, Assignment)]
    paths = [a for a in given if isinstance(a, (str, os.PathLike))]
    if not given or (objects and paths) or len(objects) + len(paths) != len(given):
        raise InputError("expected assignment files (paths) or Assignment objects", argument="assignments")
    read = objects or read_assignment_files(formats.expand_run_paths(paths), failed)
    rows = score_assignments(read, source, measures, per_turn, no_vital)
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)

# --- nuggets by a model: create, assign, cite (issue 31) ------------------------------------------------------




def _nugget_endpoint(model: str, base_url: str, cache, endpoint: Mapping[str, Any]):
    """The endpoint settings of a nugget function and its cache path, checked as the commands check them."""
    from ..llm import EndpointSettings

    unknown = sorted(set(endpoint) - set(EndpointSettings.field_names()))
    if unknown:
        raise InputError(f"unknown endpoint setting(s) {', '.join(unknown)}; see castregin.llm.EndpointSettings",
                         argument=unknown[0])
    return EndpointSettings(model=model, base_url=base_url, **endpoint), cache_path(cache)


def _file_paths(value) -> list:
    """The file paths among a value that may be a path, a list of paths, or objects."""
    given = [value] if isinstance(value, (str, os.PathLike)) else (value if isinstance(value, (list, tuple)) else [])
    return [os.fspath(v) for v in given if isinstance(v, (str, os.PathLike))]


def _answers_of(answers) -> list:
    from ..formats.nuggets import Answer, read_answer_files

    given = [answers] if isinstance(answers, (str, os.PathLike, Answer)) else list(answers)
    objects = [a for a in given if isinstance(a, Answer)]
    paths = [a for a in given if isinstance(a, (str, os.PathLike))]
    if not given or (objects and paths) or len(objects) + len(paths) != len(given):
        raise InputError("expected answer files (TREC RAG 2024 JSONL, iKAT 2024 runs) or Answer objects",
                         argument="answers")
    return objects or read_answer_files(formats.expand_run_paths(paths))


def _topics_of(topics):
    from ..formats.topics import TopicsTree, read_topics

    if topics is None or isinstance(topics, TopicsTree):
        return topics
    if isinstance(topics, (str, os.PathLike)):
        return read_topics(topics)
    raise InputError(f"expected a topics file's path or a TopicsTree, got {type(topics).__name__}", argument="topics")


def _passages_of(passages, wanted: set[str]):
    """The passage texts of a passages file (only the ``wanted`` ids kept) or a dict ``{docid: text}``."""
    from ..formats.passages import Passage, read_passages

    if isinstance(passages, Mapping):
        return {str(d): Passage(str(t)) for d, t in passages.items()}
    return read_passages(passages, wanted)


def nuggets_assign(nuggets, answers, *, model: str, base_url: str, cache, prompt: str = "nuggetizer", window: int = 10,
                   topics=None, **endpoint):
    """Assign nuggets to answers with a model, as ``castregin nuggets assign`` does (one implementation:
    :func:`castregin.nuggets.assign.assign_stage`, the same prompts, cache, retries and budget); nothing is
    written but the cache. Needs the ``openai`` extra when a call is to be made.

    ``nuggets``: a nuggetizer nuggets file or :class:`castregin.formats.nuggets.TurnNuggets` objects;
    ``answers``: answer files (TREC RAG 2024 JSONL, iKAT 2024 runs; a path or a list) or
    :class:`~castregin.formats.nuggets.Answer` objects; ``prompt``: ``nuggetizer``, ``nuggetizer-2grade`` or a
    Jinja template file; ``topics``: a topics file or :class:`~castregin.formats.topics.TopicsTree` (the
    conversation goes into the prompt's query); ``endpoint``: the other settings of
    :class:`castregin.llm.EndpointSettings` (``api_key_env``, ``temperature``, ``max_requests``...).

    Returns a :class:`castregin.nuggets.assign.NuggetAssignment`: ``assignments`` (complete answers,
    :class:`~castregin.formats.nuggets.Assignment`, which :func:`nugget_scores` takes) and ``log``.

    >>> assigned = nuggets_assign("nuggets.jsonl", "answers.jsonl", model="llama3.1:8b",  # doctest: +SKIP
    ...                           base_url="http://localhost:11434/v1", cache="llm/cache.sqlite")
    >>> nugget_scores(assigned.assignments, source="llama3.1")  # doctest: +SKIP
    """
    from ..formats.nuggets import TurnNuggets, read_nuggets
    from ..nuggets.assign import assign_stage
    from ..render.nugget_prompts import load_nugget_prompt

    settings, cache_file = _nugget_endpoint(model, base_url, cache, endpoint)

    def turns():
        read = read_nuggets(nuggets) if isinstance(nuggets, (str, os.PathLike)) else list(nuggets)
        if not all(isinstance(t, TurnNuggets) for t in read):
            raise InputError("expected a nuggets file or TurnNuggets objects", argument="nuggets")
        return read

    return assign_stage(settings, cache_file, partial(load_nugget_prompt, "assign", os.fspath(prompt)), turns,
                        partial(_answers_of, answers), partial(_topics_of, topics), window=window,
                        inputs=[*_file_paths(nuggets), *_file_paths(answers), *_file_paths(topics)])


def nuggets_create(qrels, passages, *, model: str, base_url: str, cache, queries=None, topics=None,
                   min_grade: int = 2, window: int = 10, max_nuggets: int = 30, prompt: str = "nuggetizer",
                   score_prompt: str = "nuggetizer", **endpoint):
    """Draft nuggets from each turn's relevant passages with a model and label them vital or okay, as
    ``castregin nuggets create`` does (:func:`castregin.nuggets.create.create_stage`); nothing is written but
    the cache.

    ``qrels``: any qrels input (the passages of grade ``min_grade`` or more are a turn's relevant ones);
    ``passages``: a passages file (JSONL ``{"docid", "text"}``, TREC RAG segments, iKAT passages, or TSV) or a
    dict ``{docid: text}``; ``queries``: a queries file or a dict ``{qid: text}``; ``topics``: a topics file or
    TopicsTree (one of the two is needed); ``endpoint`` as :func:`nuggets_assign` takes it.

    Returns a :class:`castregin.nuggets.create.NuggetCreation`: ``turns``
    (:class:`~castregin.formats.nuggets.TurnNuggets`, which :func:`nuggets_assign` takes) and ``log``.
    """
    from ..formats.passages import read_queries
    from ..nuggets.create import create_stage
    from ..render.nugget_prompts import load_nugget_prompt

    settings, cache_file = _nugget_endpoint(model, base_url, cache, endpoint)
    if queries is None and topics is None:
        raise InputError("give queries or topics: the query of each turn", argument="queries")

    def prompts():
        return load_nugget_prompt("create", os.fspath(prompt)), load_nugget_prompt("score", os.fspath(score_prompt))

    return create_stage(settings, cache_file, prompts, partial(as_qrels, qrels), partial(_passages_of, passages),
                        lambda: read_queries(queries) if isinstance(queries, (str, os.PathLike)) else queries,
                        partial(_topics_of, topics), min_grade=min_grade, window=window, max_nuggets=max_nuggets,
                        inputs=[*_file_paths(qrels), *_file_paths(passages), *_file_paths(queries),
                                *_file_paths(topics)])


@dataclass
class CitationResult:
    """What :func:`nuggets_cite` gives: ``labels`` ``{(run, qid, sentence, passage_id): support}``, ``scores``
    (evaluate's columns: citation_precision and citation_recall per run, and per turn) and ``log``."""

    labels: dict
    scores: pd.DataFrame
    log: dict


def nuggets_cite(answers, passages, *, model: str, base_url: str, cache, max_citations: int = 3,
                 prompt: str = "support", source: str = "citations", **endpoint) -> CitationResult:
    """Judge whether cited passages support the answers' sentences with a model, and score citation precision and
    recall, as ``castregin nuggets cite`` does (:func:`castregin.nuggets.citations.cite_stage`); nothing is
    written but the cache.

    ``answers`` as :func:`nuggets_assign` takes them; ``passages`` as :func:`nuggets_create` takes them;
    ``source`` names the label source in the scores' ``qrels`` column; ``endpoint`` as :func:`nuggets_assign`.
    """
    import pandas as pd

    from ..evaluation.evaluate import RESULT_COLUMNS
    from ..nuggets.citations import cite_stage
    from ..render.nugget_prompts import load_nugget_prompt

    settings, cache_file = _nugget_endpoint(model, base_url, cache, endpoint)
    judged = cite_stage(settings, cache_file, partial(load_nugget_prompt, "cite", os.fspath(prompt)),
                        partial(_answers_of, answers), partial(_passages_of, passages), max_citations=max_citations,
                        source=source, inputs=[*_file_paths(answers), *_file_paths(passages)])
    return CitationResult(judged.labels, pd.DataFrame(judged.scores, columns=RESULT_COLUMNS), judged.log)


def citation_scores(answers, labels, source: str = "citations", per_turn: bool = False,
                    max_citations: int = 3) -> pd.DataFrame:
    """Citation precision and recall of every run (TREC RAG 2024's weighted precision and recall) from support
    labels given by anyone: a citation support CSV (``run_id,qid,sentence,passage_id,support``, which
    ``nuggets cite`` writes and people's aggregated labels can be written as) or a dict ``{(run, qid, sentence,
    passage_id): support}``. ``answers`` as :func:`nuggets_assign` takes them. Returns evaluate's columns.

    >>> from castregin.formats.nuggets import Answer, AnswerSentence
    >>> answer = Answer("run", "q1", None, (AnswerSentence("Bees make honey.", ("p1", "p2")),
    ...                                     AnswerSentence("Honey keeps.", ())))
    >>> scores = citation_scores([answer], {("run", "q1", 0, "p1"): "full_support",
    ...                                     ("run", "q1", 0, "p2"): "partial_support"})
    >>> scores.set_index("measure")["value"].round(4).to_dict()
    {'num_q': 1.0, 'citation_precision': 0.75, 'citation_recall': 0.5}
    """
    import pandas as pd

    from ..evaluation.evaluate import RESULT_COLUMNS
    from ..formats.citations import read_citation_labels
    from ..nuggets.citations import citation_scores as _scores

    read = read_citation_labels(labels) if isinstance(labels, (str, os.PathLike)) else dict(labels)
    return pd.DataFrame(_scores(_answers_of(answers), read, source, per_turn, max_citations), columns=RESULT_COLUMNS)
