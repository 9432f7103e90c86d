"""Judgments: the agreement of label sources (``castregin agreement``) and a model as an assessor
(``castregin judge``)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import formats
from ..data import Qrels, Run
from ..errors import InputError
from ..evaluation.ranking import DEFAULT_SCORE_PRECISION
from .inputs import QRELS, RUN, as_qrels, as_run, cache_path, check_id, collect_table, each_input, shown

if TYPE_CHECKING:
    import pandas as pd


# --- agreement between judgment sources (castregin agreement) ----------------------------------------------

def label_agreement(a, b, *more, names=None, rel_level: int = 2, samples: int = 1000, seed: int = 0,
                    confidence: float = 0.95, negative_labels: str = "unjudged") -> dict:
    """How far two or more sources of relevance labels agree, as ``castregin agreement`` prints it.

    ``a``, ``b`` and ``more`` are qrels, each any accepted input (a file path, a Qrels, a dict
    ``{turn: {item: label}}``, a DataFrame, ir_measures ``Qrel`` records, a ranx Qrels). ``names``
    names them (default: a file's stem or a Qrels' name; ``a``, ``b``, ``c``... otherwise, and where
    two would be the same). Crowd judgments are aggregated first (``castregin aggregate``) or compared
    on the command line. A label below 0 ("in the pool but unjudged") is no judgment: the pair counts
    as judged by the other source only; ``negative_labels="category"`` makes it a label of its own.

    Returns the plain data of :func:`castregin.judging.label_agreement.label_agreement`: ``settings``;
    ``sources`` (``name``, ``judged``, ``below_zero``); ``pairs``, one dict per pair of sources with the counts
    ``both``, ``only_a``, ``only_b``, ``labels``, ``confusion`` (rows: the first source),
    ``statistics`` (``exact``, ``kappa``, ``kappa_linear``, ``kappa_quadratic``, ``alpha_nominal``,
    ``alpha_ordinal``, ``alpha_interval``, ``binary_agreement``, ``binary_kappa``; NaN where
    undefined), ``intervals`` (``[low, high]`` percentile bootstrap of each, ``samples`` resamples
    seeded with ``seed``; None without samples), ``per_label`` and ``topics``; and ``overall``, the
    alpha of all sources together (three or more; else None).
    """
    from ..judging.label_agreement import label_agreement as _label_agreement

    given = [a, b, *more]
    letters = "abcdefghijklmnopqrstuvwxyz"
    default = [letters[i] if i < len(letters) else f"source{i + 1}" for i in range(len(given))]
    argument = ["a", "b", *(f"more[{i}]" for i in range(len(more)))]
    qrels = [as_qrels(value, argument[i], default[i]) for i, value in enumerate(given)]
    if names is None:
        chosen = [q.name for q in qrels]
        if len(set(chosen)) != len(chosen):
            chosen = default
    else:
        chosen = [str(name) for name in names]
        if len(chosen) != len(qrels):
            raise InputError(f"names holds {len(chosen)} names for {len(qrels)} sources", argument="names")
    return _label_agreement(list(zip(chosen, (q.labels for q in qrels), strict=True)), rel_level=rel_level,
                            samples=samples, seed=seed, confidence=confidence, negative_labels=negative_labels)



# --- a model as an assessor (castregin judge) ----------------------------------------------------------------




@dataclass(frozen=True)
class JudgeResult:
    """What :func:`judge` gives, as plain data: the files ``castregin judge`` writes, in memory.

    ``judgments``: the crowd long format ``castregin aggregate`` reads (``worker_id, turn_id, item_id``
    and one column per criterion, pandas' nullable ``Int64``: ``<NA>`` where the answer had no label),
    as ``judgments.csv``; ``labels``: each (turn, item, criterion)'s label, spread, samples, parsed and
    answers, as ``labels.csv``; ``qrels``: ``{criterion: Qrels}`` (pairs without a parsed label left
    out), as ``<prefix>_<criterion>.qrel``; ``log``: the run log, as ``run_log.json`` (requests,
    failures by kind, tokens, cost, flagged items; ``this_run`` is what this call did).
    """

    judgments: pd.DataFrame
    labels: pd.DataFrame
    qrels: dict[str, Qrels]
    log: dict


def _paths(value) -> list:
    """One path or a list of them (as a list), else ``[]`` for plain data."""
    if isinstance(value, (str, os.PathLike)):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, os.PathLike)) for v in value):
        return list(value)
    return []


def _judge_bank(bank) -> dict[str, str]:
    from ..formats.submissions import parse_bank
    from ..track.convert import Bank

    if isinstance(bank, Bank):
        return bank.entries
    paths = _paths(bank)
    if paths:
        return Bank.read(paths).entries
    if isinstance(bank, Mapping):
        # The checks of a bank file (ids without spaces, texts strings), with the same messages.
        return parse_bank(dict(bank), "bank").entries
    raise InputError(f"expected a bank file path, a list of them, or a dict {{item id: text}}; got "
                     f"{type(bank).__name__}", argument="bank")


def _judge_topics(topics):
    from ..formats.topics import TopicsTree, parse_topics, read_topics

    if isinstance(topics, TopicsTree):
        return topics
    if isinstance(topics, (str, os.PathLike)):
        return read_topics(topics)
    if isinstance(topics, list):
        return parse_topics(topics, "topics")
    raise InputError(f"expected a topics file path, a TopicsTree or the topics' JSON list; got "
                     f"{type(topics).__name__}", argument="topics")


def _judge_pool(pool) -> Run:
    if isinstance(pool, Mapping) and not any(isinstance(items, Mapping) for items in pool.values()):
        # turn -> items, as pools are kept: a run whose scores nothing reads (the tasks are sorted by id).
        for turn, items in pool.items():
            if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
                raise InputError(f"turn {shown(turn)}: expected a list of item ids, got {type(items).__name__}",
                                 argument="pool")
        table = collect_table(((turn, item, 0.0) for turn, items in pool.items() for item in items), RUN, "pool")
        return Run("pool", table, source="pool")
    return as_run(pool, "pool", "pool")


def judge(pool, bank, topics, criteria, *, model: str, base_url: str, cache, prompt: str = "rubric",
          api_key_env: str = "OPENAI_API_KEY", samples: int = 1, temperature: float = 0.0,
          max_tokens: int | None = None, concurrency: int = 4, timeout: float = 120.0, max_retries: int = 5,
          retry_wait: float = 1.0, max_requests: int | None = None, price_in: float = 0.0, price_out: float = 0.0,
          only_unjudged=None, turns=None) -> JudgeResult:
    """Judge a pool with a model behind an OpenAI-compatible endpoint, as ``castregin judge`` does.

    One implementation with the command (:func:`castregin.judging.judge.judge_pool`): the same prompts,
    cache, retries, budget and labels, the same defaults and refusals; nothing is written but the cache.
    Needs the ``openai`` extra (``pip install 'castregin[llm]'``) when a call is to be made.

    Parameters
    ----------
    pool:
        A pool file path, a Run, a dict ``{turn: {item: score}}`` or ``{turn: [item, ...]}``, or any
        accepted run input (see :mod:`castregin.api`).
    bank:
        A bank file path or a list of them (the first wins on an id), or a dict ``{item id: text}``.
    topics:
        A topics file path, the topics' JSON list (CAsT 2022's tree or a linear list) or a TopicsTree.
    criteria:
        A name or a list of names: relevance, novelty, diversity (questions); relevance, naturalness,
        conciseness (responses).
    model, base_url:
        The model's name as the endpoint knows it, and the endpoint (``http://localhost:11434/v1``...).
    cache:
        The SQLite answer cache's path (the command's default is ``DIR/cache.sqlite``); a second call
        with the same inputs asks nothing again.
    prompt:
        ``"rubric"``, ``"umbrela"`` (relevance only) or a Jinja template file's path.
    api_key_env:
        The environment variable holding the API key; the key is taken from there only, never as an
        argument, and is written nowhere. Unset: no key (local servers need none).
    samples, temperature, max_tokens, concurrency, timeout, max_retries, retry_wait, max_requests, price_in, price_out:
        As the command's options of those names (``samples > 1`` needs ``temperature > 0``).
    only_unjudged:
        Qrels (any accepted input, or a list of them) whose pairs are not judged again.
    turns:
        Judge these pooled turns only: a list of turn ids or a turn-list file's path.

    Returns
    -------
    A :class:`JudgeResult`: ``judgments`` and ``labels`` (DataFrames), ``qrels`` per criterion and
    ``log``. Errors a user can cause are :class:`InputError` naming the argument; a budget spent or
    calls failed after every retry are no error: ``log["complete"]`` is False and a later call goes on. When
    calls were to be made and not one has an answer, that is an :class:`InputError` naming the first failure.

    >>> result = judge("pool.txt", ["question_bank.json", "mixed_initiative_question_pool.json"],  # doctest: +SKIP
    ...                "topics.json", "relevance",
    ...                model="llama3.1:8b", base_url="http://localhost:11434/v1", cache="llm/cache.sqlite")
    >>> result.qrels["relevance"].labels["132_1-1"]  # doctest: +SKIP
    {'Q0001': 2, 'Q0003': 0}
    """
    from functools import partial

    import pandas as pd

    from ..judging.judge import JudgeInputs, judge_pool
    from ..judging.llm import JudgeSettings
    from ..render.llm import LABEL_COLUMNS, load_prompt

    criteria = [criteria] if isinstance(criteria, str) else criteria
    if not isinstance(criteria, (list, tuple)) or not criteria or not all(isinstance(c, str) for c in criteria):
        raise InputError("expected a criterion name or a list of them", argument="criteria")
    settings = JudgeSettings(model=model, base_url=base_url, api_key_env=api_key_env, samples=samples,
                             temperature=temperature, max_tokens=max_tokens, concurrency=concurrency, timeout=timeout,
                             max_retries=max_retries, retry_wait=retry_wait, max_requests=max_requests,
                             price_in=price_in, price_out=price_out)
    if not isinstance(prompt, (str, os.PathLike)):
        raise InputError(f"expected rubric, umbrela or a template file's path; got {type(prompt).__name__}",
                         argument="prompt")
    cache_file = cache_path(cache)

    def turns_given() -> tuple[list[str], str]:
        if isinstance(turns, (str, os.PathLike)):
            return formats.read_turn_list(turns), f"turns {os.fspath(turns)}"
        return [check_id(t, "turn", "", "turns") for t in turns], "turns"

    inputs = JudgeInputs(
        pool=partial(_judge_pool, pool), bank=partial(_judge_bank, bank), topics=partial(_judge_topics, topics),
        only_unjudged=lambda: [] if only_unjudged is None else each_input(only_unjudged, QRELS, as_qrels,
                                                                           "only_unjudged"),
        turns=turns_given if turns is not None else None,
        paths=[*_paths(pool), *_paths(bank), *_paths(topics), *_paths(only_unjudged),
               *([turns] if isinstance(turns, (str, os.PathLike)) else [])])
    judged = judge_pool(inputs, criteria, partial(load_prompt, os.fspath(prompt)), settings, cache_file)
    columns = ["worker_id", "turn_id", "item_id", *criteria]
    judgments = pd.DataFrame([(worker, turn, item, *(labels[c] for c in criteria))
                              for worker, turn, item, labels in judged.rows], columns=columns)
    judgments = judgments.astype({**dict.fromkeys(columns[:3], "string"), **dict.fromkeys(criteria, "Int64")})
    labels = pd.DataFrame(judged.label_rows, columns=list(LABEL_COLUMNS))
    labels = labels.astype({"turn_id": "string", "item_id": "string", "criterion": "string",
                                              "label": "Int64", "spread": "Int64", "samples": "int64",
                                              "parsed": "int64", "answers": "string"})
    qrels = {c: Qrels(labels=judged.qrels[c], name=f"llm_{c}", source=None) for c in criteria}
    return JudgeResult(judgments, labels, qrels, judged.log)


# --- agreement between sources of labels, crowd judgments and nugget assignments included (castregin agreement) --

def agreement(*sources, criteria: Sequence[str] | str | None = None, gold=None, input_format: str = "auto",
              columns: Mapping[str, str] | Sequence[str] = (), label_map: Mapping[str, int] | str | None = None,
              scale: tuple[int, int] | str = (0, 3), majority: str = "plurality", tie: str = "mean",
              rounding: str = "half-up", method: str = "mode-mean", within: bool = False, per_worker: bool = False,
              rel_level: int = 2, negative_labels: str = "unjudged", samples: int = 1000, seed: int = 0,
              confidence: float = 0.95, runs=(), rank_runs: bool = False, measure: str | None = None,
              top_k: int | None = None, score_precision: str = DEFAULT_SCORE_PRECISION) -> dict:
    """``castregin agreement``, the same stage (:func:`castregin.judging.sources.agreement_stage`): how far sources
    of labels agree, each a file named ``[NAME=][KIND:]PATH`` as on the command line: qrels, crowd judgments
    (aggregated with the crowd rules: ``criteria`` (one, to compare), ``gold``, ``majority``, ``tie``,
    ``rounding``, ``method``; read with ``input_format``, ``columns`` (``ROLE=NAME`` strings or a mapping),
    ``label_map``, ``scale``), or nugget assignments (nuggetizer's JSONL, a file or a directory: one label per
    (qid, run, nugget), item ``run_id#index``, support 2, partial_support 1, not_support 0).

    Returns the data ``--format json`` writes (NaN where JSON has null): inside one crowd (``within``, or one crowd
    source alone), per criterion the agreement before and after the gold filter and per worker; between sources,
    :func:`label_agreement`'s dict (``settings``, ``sources``, ``pairs``, ``overall``) with ``ranking`` (each
    pair's ranking agreement) when ``runs`` (run files scored by ``measure``, default nDCG@3) or ``rank_runs`` (the
    runs nugget sources hold, ranked by a nugget score, default all_score) are given. ``per_worker`` makes each
    worker of a crowd a source.
    Qrels already in memory go to :func:`label_agreement`.

    >>> agreement("human=tests/nuggets/data/cone_rag_human", "model=tests/nuggets/data/cone_rag_model",
    ...           rank_runs=True, samples=0)["ranking"][0]["statistics"]["kendall_tau"]  # doctest: +SKIP
    """
    from ..evaluation.ranking import DEFAULT_TOP_K
    from ..formats.crowd import parse_columns, parse_label_map, parse_scale
    from ..judging.sources import CrowdRules, agreement_stage

    if not sources:
        raise InputError("agreement needs sources of labels: paths [NAME=][KIND:]PATH", argument="sources")
    names = [criteria] if isinstance(criteria, str) else list(criteria) if criteria is not None else None
    if names is not None and len(names) == 1 and "," in names[0]:
        names = [part.strip() for part in names[0].split(",") if part.strip()]
    roles = dict(columns) if isinstance(columns, Mapping) else parse_columns(list(columns), names or [])
    labels = (parse_label_map(label_map) if isinstance(label_map, str) else dict(label_map or {}))
    bounds = parse_scale(scale) if isinstance(scale, str) else (int(scale[0]), int(scale[1]))
    rules = CrowdRules(criteria=names, gold=gold, input_format=input_format, columns=roles, label_map=labels,
                       scale=bounds, majority=majority, tie=tie, rounding=rounding, method=method)
    run_paths = formats.expand_run_paths([runs] if isinstance(runs, (str, os.PathLike)) else list(runs))
    outcome = agreement_stage([os.fspath(s) for s in sources], rules, within=within, per_worker=per_worker,
                              rel_level=rel_level, negative_labels=negative_labels, samples=samples, seed=seed,
                              confidence=confidence, run_paths=run_paths, rank_runs=rank_runs, measure=measure,
                              top_k=DEFAULT_TOP_K if top_k is None else top_k, score_precision=score_precision)
    return outcome.within if outcome.within is not None else (outcome.between or {})
