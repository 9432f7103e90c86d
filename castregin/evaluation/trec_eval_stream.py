"""``castregin trec_eval`` on large inputs: the run streamed through the engine, every measure by its vectorised form.

The same lines as :func:`castregin.evaluation.trec_eval.trec_eval_lines`, byte for byte, without
reading the run into Python's dicts: the qrels are read into columns (:func:`castregin.formats.columnar.read_qrels`),
the run is streamed in pieces of whole turns (:class:`castregin.formats.columnar.TurnStream`, a thread
parsing while this one scores), and each marked measure's values come from its definition's
vectorised computation (:mod:`castregin.evaluation.measures`) over the engine's per-turn arrays, every
judged line kept (bpref, infAP and relstring read those labelled 0 or less too). Only the per-turn
values stay; the ``all`` values add them in the topics' byte order, as trec_eval does.

:func:`stream_lines` raises :class:`Unstreamed` where this path does not give trec_eval's lines
itself (:func:`castregin.evaluation.trec_eval.stream_refusal` says beforehand which options and
measures it leaves to the rules): a run the stream cannot vouch for, or whose turns come back; the
caller then reads both files whole and evaluates by the rules, as before. What the rules refuse (no
topic shared, a topic on which trec_eval fails) it refuses in their words.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from .measures import CUT_DOUBLE, CUT_LONG, P_DOUBLE, P_PAIR, TEXT, Marked, Measure


class Unstreamed(Exception):
    """Why the streaming path leaves this evaluation to the rules (which then report any error themselves)."""


def slot_measures(marked: Sequence[Marked], level: int, num_docs: int) -> list[list[Measure]]:
    """Per marked measure, a :class:`Measure` per value trec_eval prints (one per cutoff; none for runid)."""
    out: list[list[Measure]] = []
    for m in marked:
        definition = m.definition
        if definition.kind == TEXT:
            out.append([])
        elif definition.kind in (CUT_LONG, CUT_DOUBLE):
            out.append([Measure(name, definition, param, level, num_docs=num_docs)
                        for name, param in zip(m.names, m.params, strict=True)])
        elif definition.kind in (P_DOUBLE, P_PAIR):
            out.append([Measure(m.slot_names[0] if m.slot_names else definition.name, definition, None, level,
                                given=m.params, num_docs=num_docs)])
        else:
            out.append([Measure(definition.name, definition, None, level, num_docs=num_docs)])
    return out


def stream_lines(qrels_path: str | os.PathLike, run_path: str | os.PathLike, marked: Sequence[Marked], options):
    """The lines ``trec_eval [options] QRELS RUN`` prints (see :func:`~castregin.evaluation.trec_eval.trec_eval_lines`),
    the run streamed; ``options`` a :class:`~castregin.evaluation.trec_eval.TrecEvalOptions` that
    :func:`~castregin.evaluation.trec_eval.stream_refusal` accepts. :class:`Unstreamed` where the rules must do it."""
    from ..formats import columnar
    from .engine import QrelsIndex, evaluate_run_arrays
    from .evaluate import QrelsFacts, TurnValues, _warn_judged
    from .few_judged import JUDGED_KEY, JUDGED_SHARE_MEASURE
    from .ranking import score_bits

    bits = score_bits(options.score_precision)
    qrels = columnar.read_qrels(qrels_path)
    index = QrelsIndex(qrels)
    slots = slot_measures(marked, options.rel_level, options.num_docs)
    flat = [measure for group in slots for measure in group]
    asked = [*flat, JUDGED_SHARE_MEASURE]
    turns: list[str] = []
    parts: list[list[np.ndarray]] = [[] for _ in asked]
    try:
        with columnar.stream_run(run_path, index.items_to_number_first(False)) as stream:
            for piece in stream:
                run = columnar.piece_as_run(stream, piece)
                piece_turns, values = evaluate_run_arrays(run, index, asked, 1, bits, options.max_per_query)
                turns.extend(piece_turns)
                for part, value in zip(parts, values, strict=True):
                    part.append(value)
            tag, runid, run_source = stream.tag, stream.last_tag, stream.source
    except columnar.NotStreamable as why:
        raise Unstreamed(why.reason) from None
    if not turns:
        raise InputError(f"no query has both results ({run_source}) and relevance information "
                         f"({qrels.source or 'qrels'}); check the query ids")
    index.refuse_unevaluable(turns)  # in the rules' words
    values = [np.concatenate(part) for part in parts]
    facts = QrelsFacts(qrels.name, tuple(qrels.turns.tolist()), int((qrels.labels > 0).sum()))
    _warn_judged(tag or "run", facts, {JUDGED_KEY: TurnValues(turns, values[-1])})
    order = sorted(range(len(turns)), key=turns.__getitem__)  # byte order, as trec_eval adds the topics
    topics = [turns[i] for i in order]
    by_slot = iter(values)
    per_marked = [[next(by_slot)[order] for _ in group] for group in slots]
    return _lines(marked, per_marked, topics, options, facts, runid)


#: Topics whose per-query lines are made at a time when the lines are read (see :class:`StreamedLines`).
_TOPICS_AT_A_TIME = 1 << 10


class StreamedLines:
    """The ``(measure, query, value)`` lines of a streamed evaluation, in order: the per-query lines held as
    columns (per printed measure its name, its values in the topics' order, and how each is printed: ``text``
    quoted, ``integer`` a count, ``float``), eight bytes a value rather than a tuple and a float object a line
    (some 100 bytes: 450 MB for ``-q -m all_trec`` at 50,000 topics), then the ``all`` lines (``summary``).

    Iterating makes the per-query lines from the columns a block of topics at a time; :meth:`blocks` gives
    those blocks as columns, which :func:`castregin.render.trec.trec_eval_chunks` writes whole. The values are
    those of the arrays' ``tolist``, so the text printed is the same."""

    def __init__(self, columns: list[tuple[str, Any, str]], topics: list[str], summary: list):
        self.columns, self.topics, self.summary = columns, topics, summary

    def blocks(self) -> Iterator[tuple[list[str], list[tuple[str, Any, str]]]]:
        """Each block of topics, and the columns' values for them."""
        for begin in range(0, len(self.topics), _TOPICS_AT_A_TIME):
            block = self.topics[begin:begin + _TOPICS_AT_A_TIME]
            yield block, [(name, values[begin:begin + len(block)], kind) for name, values, kind in self.columns]

    def __iter__(self) -> Iterator[tuple[str, str, Any]]:
        for topics, columns in self.blocks():
            block = [(name, _printed(values, kind)) for name, values, kind in columns]
            for t, topic in enumerate(topics):
                for name, values in block:
                    yield name, topic, values[t]
        yield from self.summary


def _printed(values, kind: str) -> list:
    """Per-turn values as the output lines hold them: quoted texts, counts as ints, floats."""
    if kind == "text":
        return [f"'{text}'" for text in values.tolist()]
    if kind == "integer":
        return values.astype(np.int64).tolist()
    return values.tolist()


def _lines(marked: Sequence[Marked], per_marked: list[list[np.ndarray]], topics: list[str], options, facts,
           runid: str | None) -> StreamedLines:
    columns: list[tuple[str, Any, str]] = []
    if options.per_query:
        for m, group in zip(marked, per_marked, strict=True):
            if not group:
                continue
            if not m.definition.numeric:
                columns.append((m.names[0], group[0], "text"))
            elif m.definition.per_turn:
                kind = "integer" if m.definition.integer else "float"
                columns.extend((name, column, kind) for name, column in zip(m.slot_names, group, strict=True))
    summary: list = []
    if options.summary:
        averaged = len(facts.turns) if options.complete else len(topics)
        for m, group in zip(marked, per_marked, strict=True):
            if m.definition.name == "runid":
                summary.append(("runid", "all", runid))
            elif m.definition.numeric:
                for name, column in zip(m.slot_names, group, strict=True):
                    total = float(np.cumsum(np.r_[0.0, column])[-1])  # added one after the other
                    value = m.definition.summary(total, averaged, len(topics), options.complete,
                                                 lambda: facts.positive_lines)
                    summary.append((name, "all", int(value) if m.definition.integer else value))
    return StreamedLines(columns, topics if options.per_query else [], summary)
