"""The model client's single-call API (``Client.ask``, ``Client.parallel``), as conversations use it: episodes
side by side, each call's messages holding the previous answers, against the chat server of chat_server.py.

The reference is an undisturbed run's transcripts; the server counts what it answered, so "asked nothing
twice" is counted there, not taken from the client.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from castregin.errors import InputError
from castregin.llm import Client, EndpointSettings

from . import hostile_server
from .chat_server import serve
from .hostile_server import answer_with

EPISODES = {f"e{n}": [f"Tell me about topic {n} and its {word}." for word in ("history", "people", "future")]
            for n in range(6)}


def settings(server, **chosen) -> EndpointSettings:
    return EndpointSettings(model="rule-1", base_url=server.base_url, api_key_env="CASTREGIN_TEST_KEY",
                            **{"retry_wait": 0.01, "timeout": 5.0, **chosen})


def play(client: Client, name: str) -> tuple[list[str], str]:
    """One episode: each question asked with the whole conversation so far; stops at the first call unanswered."""
    messages: list[dict] = [{"role": "system", "content": f"Episode {name}."}]
    said = []
    for question in EPISODES[name]:
        messages.append({"role": "user", "content": f"BEGIN CONVERSATION\n{question}\nEND CONVERSATION"})
        answer = client.ask(client.call(messages))
        if not answer.ok:
            return said, answer.status
        said.append(answer.answer.content)
        messages.append({"role": "assistant", "content": answer.answer.content})
    return said, "done"


def test_episodes_resume_from_the_cache_and_ask_nothing_twice(tmp_path):
    reference_server = serve(faults=False)
    try:
        with Client(settings(reference_server), tmp_path / "reference.sqlite") as client:
            reference = dict(zip(EPISODES, client.parallel(lambda name: play(client, name), EPISODES), strict=True))
    finally:
        reference_server.shutdown()
    assert all(status == "done" and len(said) == 3 for said, status in reference.values())

    server = serve(faults=True)  # 429s, 500s, timeouts, malformed answers: retried
    cache = tmp_path / "cache.sqlite"
    try:
        with Client(settings(server, max_requests=9, concurrency=3, timeout=1.0), cache) as client:
            first = dict(zip(EPISODES, client.parallel(lambda name: play(client, name), EPISODES), strict=True))
        assert client.stats.budget_spent and client.stats.requests == 9
        assert any(status == "budget" for _, status in first.values())
        with Client(settings(server, concurrency=3, timeout=1.0), cache) as client:
            second = dict(zip(EPISODES, client.parallel(lambda name: play(client, name), EPISODES), strict=True))
        # The answers the first run stored are replayed from the cache (its prefix of each episode).
        assert client.stats.from_cache == sum(len(said) for said, _ in first.values())
    finally:
        server.shutdown()
    assert second == reference
    assert max(server.answered.values()) == 1 and sum(server.answered.values()) == 18


def test_at_most_concurrency_requests_in_flight_whatever_the_threads(tmp_path):
    """Six episode threads, --concurrency 2: the server never holds more than two requests (counted from a
    request's arrival to the moment before its answer is sent, so that one answered cannot overlap the next)."""
    counts = {"now": 0, "most": 0}
    lock = threading.Lock()

    def slow(server, connection, request):
        with lock:
            counts["now"] += 1
            counts["most"] = max(counts["most"], counts["now"])
        time.sleep(0.05)
        with lock:
            counts["now"] -= 1
        server.send(connection, hostile_server.http_response(json.dumps(hostile_server.completion()).encode()))

    counting = hostile_server.serve(slow)
    try:
        with Client(settings(counting, concurrency=2), tmp_path / "cache.sqlite") as client:
            client.parallel(lambda name: play(client, name), EPISODES, threads=6)
    finally:
        counting.shutdown()
    assert counts["most"] == 2 and len(counting.requests) == 18


def test_a_refused_key_stops_every_episode_with_one_error(tmp_path):
    refusing = hostile_server.serve(answer_with(b'{"error": {"message": "bad key"}}', "401 Unauthorized"))
    try:
        with pytest.raises(InputError, match=r"^the endpoint refused a request \(HTTP 401"), \
                Client(settings(refusing, concurrency=3), tmp_path / "cache.sqlite") as client:
            client.parallel(lambda name: play(client, name), EPISODES)
        assert client.stopped
    finally:
        refusing.shutdown()
    assert len(refusing.requests) <= 3  # the requests in flight when the first refusal came, no more
    assert not (tmp_path / "cache.sqlite").exists()  # nothing stored: the cache this client made is gone


def test_an_error_in_one_episode_stops_the_others_and_is_raised(tmp_path):
    server = serve(faults=False, delay=0.05)
    statuses = []
    lock = threading.Lock()

    def episode(name: str):
        if name == "e0":
            time.sleep(0.12)  # while e1 is between its calls
            raise ValueError("the game master failed")
        said, status = play(client, name)
        with lock:
            statuses.append(status)
        return said

    try:
        with pytest.raises(ValueError, match="the game master failed"), \
                Client(settings(server, concurrency=2), tmp_path / "cache.sqlite") as client:
            client.parallel(episode, EPISODES)
    finally:
        server.shutdown()
    assert statuses and set(statuses) <= {"stopped", "done"} and "stopped" in statuses
    assert client.stats.unsent_calls >= 1


def test_stop_is_no_new_request(tmp_path):
    server = serve(faults=False)
    try:
        with Client(settings(server), tmp_path / "cache.sqlite") as client:
            client.stop()
            answer = client.ask(client.call([{"role": "user", "content": "hello"}]))
    finally:
        server.shutdown()
    assert answer.status == "stopped" and answer.answer is None and server.requests == 0


def test_a_call_key_is_the_model_the_messages_the_parameters_and_the_sample(tmp_path):
    """Two clients agree on a key when and only when the request would be the same."""
    server = serve(faults=False)
    messages = [{"role": "user", "content": "hello"}]
    try:
        keys = {}
        for name, chosen, seeds in (("plain", {}, False), ("again", {}, False), ("warm", {"temperature": 0.5}, False),
                                    ("short", {"max_tokens": 5}, False), ("seeded", {}, True)):
            with Client(settings(server, **chosen), tmp_path / f"{name}.sqlite", seeds=seeds) as client:
                keys[name] = client.call(messages).key
                keys[name + "1"] = client.call(messages, sample=1).key
    finally:
        server.shutdown()
    assert keys["plain"] == keys["again"]
    assert len({keys[k] for k in ("plain", "warm", "short", "seeded", "plain1")}) == 5


def test_no_item_is_begun_once_the_client_is_stopped(tmp_path):
    # A resumed run stopped (SIGTERM in `play`) did go on replaying every cached item to the end.
    server = serve(faults=False)
    questions = [f"BEGIN CONVERSATION\nTell me about topic {n}.\nEND CONVERSATION" for n in range(20)]
    cache = tmp_path / "cache.sqlite"
    try:
        with Client(settings(server), cache) as client:
            assert all(client.ask(client.call([{"role": "user", "content": q}])).ok for q in questions)
        handled = []
        lock = threading.Lock()
        first_done = threading.Event()
        begun = threading.Barrier(3)

        def work(question: str) -> str:
            if question in questions[1:3]:  # with three threads: each has begun one item, then the stop comes
                begun.wait(5)
                first_done.wait(5)
            elif question == questions[0] and threads == 3:
                begun.wait(5)
            answer = client.ask(client.call([{"role": "user", "content": question}]))
            assert answer.status == "cached"
            with lock:
                handled.append(question)
            if question == questions[0]:
                client.stop()
                first_done.set()
            return question

        threads = 1
        with Client(settings(server), cache) as client:
            one_thread = client.parallel(work, questions, threads=1)
        assert handled == questions[:1] and one_thread == [questions[0]] + [None] * 19
        handled.clear()
        first_done.clear()
        threads = 3
        with Client(settings(server), cache) as client:
            three_threads = client.parallel(work, questions, threads=3)
    finally:
        server.shutdown()
    assert set(handled) == set(questions[:3]) and len(handled) == 3  # the items the other threads had begun
    assert [q for q in three_threads if q is not None] == [q for q in questions if q in handled]
    assert server.requests == 20
