"""The Python API of nuggets by a model: ``castregin.api.nuggets_create``, ``nuggets_assign``, ``nuggets_cite`` and
``citation_scores`` give what the commands give (the same stage functions), write nothing but the cache, and
refuse what the commands refuse."""

from __future__ import annotations

import json

import pytest

from castregin import api
from castregin.errors import InputError
from castregin.formats.nuggets import parse_answers

from . import test_assign as assign_data
from . import test_cite as cite_data
from . import test_create as create_data
from .nugget_server import serve_nuggets


@pytest.fixture
def server():
    running = serve_nuggets(faults=False)
    yield running
    running.shutdown()


def test_assign_create_and_cite_give_what_the_commands_give(server, tmp_path):
    (tmp_path / "nuggets.jsonl").write_text("".join(json.dumps(t) + "\n" for t in assign_data.NUGGETS))
    answers = parse_answers("".join(json.dumps(a) + "\n" for a in assign_data.ANSWERS).encode(), "answers.jsonl")
    cache = tmp_path / "llm" / "cache.sqlite"
    assigned = api.nuggets_assign(tmp_path / "nuggets.jsonl", answers, model="rule-1", base_url=server.base_url,
                                  cache=cache, window=5, retry_wait=0.01)
    got = {(a.run_id, a.qid): list(a.labels) for a in assigned.assignments}
    assert got == assign_data.expected_assignments(ikat=False)
    assert assigned.log["complete"] and sorted(p.name for p in tmp_path.iterdir()) == ["llm", "nuggets.jsonl"]
    scores = api.nugget_scores(assigned.assignments, source="rule")
    assert set(scores["run"]) == {"alpha", "beta"}

    with pytest.warns(Warning, match="1 relevant passage"):
        created = api.nuggets_create({qid: dict(items) for qid, items in create_data.QRELS.items()},
                                     create_data.PASSAGES, queries=create_data.QUERIES, model="rule-1",
                                     base_url=server.base_url, cache=cache, window=5, max_nuggets=8)
    queries = create_data.QUERIES
    assert {t.qid: [{"text": n.text, "importance": n.importance} for n in t.nuggets] for t in created.turns} == {
        qid: create_data.expected_nuggets(queries[qid], create_data.relevant(qid)) for qid in queries}

    cite_answers = parse_answers("".join(json.dumps(a) + "\n" for a in cite_data.ANSWERS).encode(), "answers.jsonl")
    passages = {d: f"{title}: {text}" for d, (title, text) in cite_data.PASSAGES.items()}
    with pytest.warns(Warning, match="not scored"):  # pX has no text; so B's q4 is not scored
        cited = api.nuggets_cite(cite_answers, passages, model="rule-1", base_url=server.base_url, cache=cache)
    assert cited.labels == cite_data.LABELS
    values = {(r.run, r.turn, r.measure): r.value for r in cited.scores.itertuples()}
    assert values["A", "q1", "citation_precision"] == pytest.approx(2.5 / 3, abs=1e-15)
    # Every cell against the hand-worked values of test_cite (the run means: the mean of each run's turns).
    hand = {(run, qid, measure): value for (run, qid), cells in cite_data.HAND.items()
            for measure, value in cells.items()}
    hand |= {("A", "all", "citation_precision"): (2.5 / 3 + 0.5) / 2, ("A", "all", "citation_recall"): (2 / 3 + 1) / 2,
             ("B", "all", "citation_precision"): 0.5, ("B", "all", "citation_recall"): 0.25,
             ("A", "all", "num_q"): 2, ("B", "all", "num_q"): 2}
    assert values == pytest.approx(hand, abs=1e-15)
    with pytest.warns(Warning, match="not scored: B:q4"):
        again = api.citation_scores(cite_answers, cited.labels, source="people", per_turn=True)
    assert {(r.run, r.turn, r.measure): r.value for r in again.itertuples()} == pytest.approx(hand, abs=1e-15)
    assert set(again["qrels"]) == {"people"}


@pytest.mark.parametrize(("call", "message"), [
    (lambda url, cache: api.nuggets_assign("n.jsonl", "a.jsonl", model="m", base_url=url, cache=cache, temperature=9),
     "temperature: expected a finite number 0 to 2, got 9"),
    (lambda url, cache: api.nuggets_assign("n.jsonl", "a.jsonl", model="m", base_url=url, cache=cache, colour=1),
     "colour: unknown endpoint setting(s) colour"),
    (lambda url, cache: api.nuggets_assign("n.jsonl", "a.jsonl", model="m", base_url=url, cache="-"),
     "cache: expected the answer cache's file path"),
    (lambda url, cache: api.nuggets_create({}, {}, model="m", base_url=url, cache=cache),
     "queries: give queries or topics"),
    (lambda url, cache: api.nuggets_assign(assign_data.NUGGETS, "a.jsonl", model="m", base_url=url, cache=cache),
     "nuggets: expected a nuggets file or TurnNuggets objects"),
    # The bounds of the commands' options (--window 1 to 1000, ...): window=0 was a ValueError traceback,
    # window=-1 every nugget not_support without a call.
    *[(lambda url, cache, window=window: api.nuggets_assign("n.jsonl", "a.jsonl", model="m", base_url=url,
                                                            cache=cache, window=window),
       f"window: expected an integer 1 to 1000, got {window!r}") for window in (0, -1, 1001, 2.5, True)],
    (lambda url, cache: api.nuggets_create({}, {}, queries={}, model="m", base_url=url, cache=cache, window=0),
     "window: expected an integer 1 to 1000, got 0"),
    (lambda url, cache: api.nuggets_create({}, {}, queries={}, model="m", base_url=url, cache=cache, max_nuggets=0),
     "max_nuggets: expected an integer 1 to 1000, got 0"),
    (lambda url, cache: api.nuggets_create({}, {}, queries={}, model="m", base_url=url, cache=cache, min_grade=-1),
     "min_grade: expected an integer >= 0, got -1"),
    (lambda url, cache: api.nuggets_cite("a.jsonl", {}, model="m", base_url=url, cache=cache, max_citations=0),
     "max_citations: expected an integer 1 to 1000, got 0"),
    (lambda url, cache: api.citation_scores(parse_answers(
        "".join(json.dumps(a) + "\n" for a in cite_data.ANSWERS).encode(), "a.jsonl"), {}, max_citations=-1),
     "max_citations: expected an integer 1 to 1000, got -1"),
])
def test_refusals_name_the_argument(server, tmp_path, call, message):
    with pytest.raises(InputError) as info:
        call(server.base_url, tmp_path / "cache.sqlite")
    assert message in str(info.value)
    assert not (tmp_path / "cache.sqlite").exists() and server.requests == 0
