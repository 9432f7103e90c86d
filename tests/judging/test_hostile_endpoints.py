"""The model client against endpoints that are down, wrong, slow, endless or hostile (part 23's catalogue).

Each case runs ``castregin judge`` (or the client itself) against a real socket on 127.0.0.1
(hostile_server.py, or chat_server.py for a well-behaved one), and asserts what a user sees: one line and
a non-zero exit where nothing could be done, never a traceback, never the key in a file or a message,
never a wait without end, never gigabytes read.
"""

# ruff: noqa: F811 - the fixtures imported from test_judge are parameters of the tests here
from __future__ import annotations

import json
import math
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import tracemalloc

import pytest

from castregin.errors import InputError
from castregin.limits import MAX_ANSWER_BYTES
from castregin.llm import Client, EndpointSettings

from . import hostile_server
from .chat_server import serve as serve_chat
from .hostile_server import answer_with, completion, http_response
from .test_judge import KEY, POOL, inputs, judge_args, keyed  # noqa: F401 - fixtures

FAST = {"max_retries": 0, "retry_wait": 0.01, "timeout": 5.0}
ANSWER = http_response(json.dumps(completion()).encode())


def ask_once(server, tmp_path, **settings):
    """One call through the client to ``server``: its Answer and the client's stats."""
    chosen = {**FAST, **settings}
    with Client(EndpointSettings(model="m", base_url=server.base_url, api_key_env="CASTREGIN_TEST_KEY", **chosen),
                tmp_path / "cache.sqlite") as client:
        answer = client.ask(client.call([{"role": "user", "content": "hello"}]))
    return answer, client.stats


def one_line_error(result) -> str:
    assert result.exit_code == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("castregin: error: "), result.stderr
    return lines[0]


# --- nothing answered: a non-zero exit, and why ------------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_nothing_listening_is_an_error_naming_the_first_failure(cli, inputs, tmp_path, keyed):
    """Nothing at --base-url: every call would fail after its retries and the qrels be empty. The first call is
    retried, the others are not sent, and the run ends with exit 1, one line, nothing written."""
    args = judge_args(inputs, hostile_server.serve(answer_with(b"")), tmp_path / "out", "--criteria", "relevance",
                      "--max-retries", "2")
    args[args.index("--base-url") + 1] = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.monotonic()
    result = cli(*args)
    line = one_line_error(result)
    assert "no call was answered" in line and "the first error: connection failed" in line
    assert "1 call(s) failed after every retry; 15 not sent" in line
    assert time.monotonic() - started < 10
    assert not (tmp_path / "out").exists()


def test_every_call_failing_is_an_error_and_some_answered_says_which_exist(cli, inputs, tmp_path, keyed):
    """A server that answers 500 to every request: exit 1 naming the error. One that fails only on some items:
    the outputs hold what was answered, and the warning says how many there are and the first error."""
    failing = hostile_server.serve(answer_with(b'{"error": {"message": "the model crashed"}}',
                                               "500 Internal Server Error"))
    try:
        result = cli(*judge_args(inputs, failing, tmp_path / "out", "--criteria", "relevance", "--max-retries", "1"))
    finally:
        failing.shutdown()
    line = one_line_error(result)
    assert "no call was answered" in line and "HTTP 500" in line and "the model crashed" in line
    assert len(failing.requests) == 2  # the first call and its retry; the rest never sent

    # Q05 ("Do you like football?") is in two pools: its prompts fail every time; the others are answered.
    partly = hostile_server.serve(_fails_on_football)
    try:
        result = cli(*judge_args(inputs, partly, tmp_path / "some", "--criteria", "relevance", "--max-retries", "1"))
    finally:
        partly.shutdown()
    assert result.exit_code == 0, result.stderr
    warning = next(line for line in result.stderr.splitlines() if "failed after every retry" in line)
    assert warning.startswith("castregin: warning: 2 call(s) failed after every retry")
    assert "the first error: HTTP 500" in warning and "the outputs hold the 14 answers there are" in warning
    log = json.loads((tmp_path / "some" / "run_log.json").read_text())
    assert log["answered"] == 14 and not log["complete"]


def _fails_on_football(server, connection, request):
    if "football" in json.dumps(request.body["messages"]):
        server.send(connection, http_response(b'{"error": {"message": "the model crashed"}}',
                                              "500 Internal Server Error"))
    else:
        server.send(connection, ANSWER)


@pytest.mark.parametrize("status", ["401 Unauthorized", "404 Not Found"])
def test_a_key_or_model_refused_at_once_costs_one_request(cli, inputs, tmp_path, keyed, status):
    """A wrong key (401) or an unknown model (404) with --concurrency 4: one request, not one per thread (nor
    retries), then one line."""
    refusing = hostile_server.serve(answer_with(b'{"error": {"message": "no such model"}}', status))
    try:
        result = cli(*judge_args(inputs, refusing, tmp_path / "out", "--criteria", "relevance", "--concurrency", "4"))
    finally:
        refusing.shutdown()
    line = one_line_error(result)
    assert line.startswith(f"castregin: error: the endpoint refused a request (HTTP {status.split()[0]}")
    assert len(refusing.requests) == 1


# --- refused before any request ------------------------------------------------------------------------------------

BAD_URLS = ["file:///etc/passwd", "ftp://example.org/v1", "data:text/plain,hello", "not a url", "http://",
            "http://exa mple.org/v1", "http://[::1", "http://localhost:99999/v1", "http://localhost:8000/v1\n",
            "localhost:8000/v1", "http://localhost:0/v1"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_base_url_no_request_can_go_to_is_refused_in_one_line(cli, inputs, tmp_path, keyed, url):
    server = serve_chat(faults=False)
    args = judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance")
    args[args.index("--base-url") + 1] = url
    started = time.monotonic()
    try:
        result = cli(*args)
    finally:
        server.shutdown()
    line = one_line_error(result)
    assert line.startswith("castregin: error: --base-url: ") and "\x1b" not in line
    assert time.monotonic() - started < 5 and server.requests == 0 and not (tmp_path / "out").exists()
    with pytest.raises(InputError, match=r"^base_url: "):
        EndpointSettings(model="m", base_url=url).check()


@pytest.mark.parametrize("url", ["ftp://user:SECRET@example.org/v1", "http://user:SECRET@/v1",
                                 "http://user:SECRET@localhost:99999/v1", "http://localhost:0/v1?api-key=SECRET",
                                 "http://exa mple.org/v1?api-key=SECRET", "gopher://example.org/v1#SECRET",
                                 "user:SECRET@localhost/v1", "http://[::1?api-key=SECRET"])
def test_a_refused_base_url_shows_no_credentials(url):
    with pytest.raises(InputError, match=r"^base_url: ") as refused:
        EndpointSettings(model="m", base_url=url).check()
    assert "SECRET" not in str(refused.value) and "***" in str(refused.value)


def test_shown_url_hides_credentials_query_and_fragment():
    from castregin.llm.settings import shown_url

    assert shown_url("http://user:SECRET@host:8/v1?api-key=SECRET#x") == "http://***@host:8/v1?***"
    assert shown_url("https://host/v1/chat@x?k=SECRET") == "https://host/v1/chat@x?***"
    assert shown_url("SECRET@host") == "***@host" and shown_url("http://host/v1") == "http://host/v1"
    assert shown_url("http://h/\x1b[31m") == "http://h/\\x1b[31m"


@pytest.mark.parametrize("key", ["sk-test-SECRET ", " sk-test-SECRET", "   "])
def test_a_key_with_spaces_around_it_is_refused_in_one_line(cli, inputs, tmp_path, monkeypatch, key):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", key)
    server = serve_chat(faults=False)
    try:
        result = cli(*judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance"))
    finally:
        server.shutdown()
    line = one_line_error(result)
    assert line.startswith("castregin: error: --api-key-env: the API key in CASTREGIN_TEST_KEY ")
    assert "SECRET" not in line and server.requests == 0


# --- the key is hidden in everything received -----------------------------------------------------------------------

def _echo_everywhere(server, connection, request):
    key, bearer = request.key, request.authorization
    prompt = json.dumps(request.body["messages"])
    if "football" in prompt:  # a transient error (retried, then shown as the first failure) with the key in it
        server.send(connection, http_response(json.dumps({"error": {"message": f"overloaded for {bearer}"}}).encode(),
                                              "503 Service Unavailable", {"X-Echo": bearer}))
        return
    body = completion(f"You sent {bearer} and {key}.\nLabel: 1", refusal=f"no, {key}",
                      finish_reason=f"stop:{key}")
    server.send(connection, http_response(json.dumps(body).encode(), headers={"X-Echo": bearer}))


def test_a_key_echoed_in_every_field_is_in_no_file_and_no_message(cli, inputs, tmp_path, keyed):
    echoing = hostile_server.serve(_echo_everywhere)
    out = tmp_path / "out"
    try:
        result = cli(*judge_args(inputs, echoing, out, "--criteria", "relevance", "--max-retries", "1"))
        refused = cli(*judge_args(inputs, hostile_server.serve(answer_with(
            json.dumps({"error": {"message": f"bad key Bearer {KEY}"}}).encode(), "401 Unauthorized")),
            tmp_path / "other", "--criteria", "novelty"))
    finally:
        echoing.shutdown()
    assert {r.key for r in echoing.requests} == {KEY}  # the server did get it, and sent it back
    assert result.exit_code == 0, result.stderr
    assert "***" in result.stderr and "HTTP 503" in result.stderr  # the failure is shown, the key hidden
    assert "***" in refused.stderr and KEY not in refused.stderr
    for text in (result.stderr, result.stdout, refused.stderr):
        assert "SECRET" not in text
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"cache.sqlite", "judgments.csv", "labels.csv", "run_log.json"}
    for path in written:
        assert b"SECRET" not in path.read_bytes(), path
    stored = sqlite3.connect(out / "cache.sqlite").execute(
        "SELECT content, refusal, finish_reason FROM answers").fetchall()
    assert stored and all(row == ("You sent Bearer *** and ***.\nLabel: 1", "no, ***", "stop:***") for row in stored)


# --- bounded in time -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("part", ["headers", "body"])
def test_a_trickling_server_meets_the_deadline(tmp_path, keyed, part):
    """A byte every 0.2 s keeps each read within any per-read timeout; the deadline is per request."""
    head, _, body = ANSWER.partition(b"\r\n\r\n")
    respond = hostile_server.trickle(ANSWER) if part == "headers" else (
        lambda server, connection, request: (server.send(connection, head + b"\r\n\r\n"),
                                             hostile_server.trickle(body)(server, connection, request)))
    slow = hostile_server.serve(respond)
    started = time.monotonic()
    try:
        answer, stats = ask_once(slow, tmp_path, timeout=1.0)
    finally:
        slow.shutdown()
    assert time.monotonic() - started < 4
    assert answer.status == "failed" and stats.failures == {"timeout": 1} and "within 1 s" in answer.error


def test_sigterm_ends_a_run_stuck_on_a_trickling_server_within_seconds(inputs, tmp_path, keyed):
    """The calls in flight get the client's grace, then are abandoned: not cached, asked again by the next
    run. Before, the process waited for the trickle to end (never)."""
    slow = hostile_server.serve(hostile_server.trickle(ANSWER, every=0.5))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "castregin", *judge_args(inputs, slow, out, "--criteria", "relevance",
                                                              "--concurrency", "2", "--timeout", "600")]
    process = subprocess.Popen(command, env={**os.environ, "CASTREGIN_TEST_KEY": KEY}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while slow.in_flight < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
        took = time.monotonic() - signalled
    finally:
        process.kill()
        slow.shutdown()
    assert process.returncode == 143, stderr
    assert took < 6, took  # the grace (2 s), a poll, the exit
    assert stderr.strip().splitlines()[-1] == "castregin: stopped by SIGTERM; no output was written"
    # Nothing was answered: the cache this run made is gone, and the next run asks everything.
    assert not out.exists() or not (out / "cache.sqlite").exists()
    server = serve_chat(faults=False)
    try:
        args = judge_args(inputs, server, out, "--criteria", "relevance")
        rerun = subprocess.run([sys.executable, "-m", "castregin", *args],
                               env={**os.environ, "CASTREGIN_TEST_KEY": KEY}, capture_output=True, text=True,
                               timeout=60, check=False)
    finally:
        server.shutdown()
    assert rerun.returncode == 0, rerun.stderr
    assert server.requests == sum(len(items) for items in POOL.values())


# --- bounded in size -------------------------------------------------------------------------------------------------

def test_an_endless_chunked_body_stops_at_the_bound(tmp_path, keyed):
    endless = hostile_server.serve(hostile_server.endless_chunks)
    try:
        answer, stats = ask_once(endless, tmp_path)
        time.sleep(0.2)
    finally:
        endless.shutdown()
    assert answer.status == "failed" and stats.failures == {"malformed_response": 1}
    assert f"larger than {MAX_ANSWER_BYTES} bytes" in answer.error
    assert endless.sent < MAX_ANSWER_BYTES + (8 << 20)  # the socket's buffers beyond the bound, not gigabytes


def test_a_gzip_bomb_is_not_decompressed_whole(tmp_path, keyed):
    bomb = hostile_server.serve(hostile_server.gzip_bomb(512 << 20))
    tracemalloc.start()
    try:
        answer, stats = ask_once(bomb, tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        bomb.shutdown()
    assert answer.status == "failed" and stats.failures == {"malformed_response": 1}
    assert "decompresses to more than" in answer.error
    assert peak < 4 * MAX_ANSWER_BYTES  # 512 MiB unpacked would be 32 times that


def test_a_compressed_answer_within_the_bound_is_read(tmp_path, keyed):
    import gzip

    body = gzip.compress(json.dumps(completion("fine\nLabel: 3")).encode())
    packed = hostile_server.serve(answer_with(body, headers={"Content-Encoding": "gzip"}))
    try:
        answer, _ = ask_once(packed, tmp_path)
    finally:
        packed.shutdown()
    assert answer.status == "answered" and answer.answer.content == "fine\nLabel: 3"


# --- hostile JSON: a malformed answer, never a traceback -------------------------------------------------------------

def _json(value) -> bytes:
    return json.dumps(value).encode()


HOSTILE_BODIES = {
    "prompt_tokens a string": _json(completion(usage={"prompt_tokens": "abc", "completion_tokens": 1})),
    "prompt_tokens NaN": json.dumps(completion(usage={"prompt_tokens": math.nan, "completion_tokens": 1})).encode(),
    "prompt_tokens a list": _json(completion(usage={"prompt_tokens": [1], "completion_tokens": 1})),
    "prompt_tokens 10^30": _json(completion(usage={"prompt_tokens": 10**30, "completion_tokens": 1})),
    "completion_tokens negative": _json(completion(usage={"prompt_tokens": 3, "completion_tokens": -5})),
    "usage a string": _json(completion(usage="lots")),
    "message a string": _json(completion(message="Label: 2")),
    "content a number": _json(completion(content=2)),
    "no choices": _json({"choices": []}),
    "choices an object": _json({"choices": {"0": {}}}),
    "JSON 100,000 deep": b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "a lone surrogate in content": b'{"choices": [{"message": {"content": "Label: 2 \\ud800"}}]}',
    "a lone surrogate in finish_reason": b'{"choices": [{"finish_reason": "\\udfff", "message": {"content": "2"}}]}',
    "a body that is a list": b"[1, 2]",
    "a body that is not JSON": b"<html>502</html>",
    "a body that is not UTF-8": b'{"choices": "\xff\xfe"}',
}


@pytest.mark.parametrize("case", list(HOSTILE_BODIES))
def test_hostile_json_is_a_malformed_answer(tmp_path, keyed, case):
    hostile = hostile_server.serve(answer_with(HOSTILE_BODIES[case]))
    try:
        answer, stats = ask_once(hostile, tmp_path)
    finally:
        hostile.shutdown()
    assert answer.status == "failed" and stats.failures == {"malformed_response": 1}, answer
    assert answer.error.startswith("malformed answer: ") and "\n" not in answer.error
    assert stats.prompt_tokens == stats.completion_tokens == 0


def test_hostile_json_through_the_command_is_counted_never_a_traceback(cli, inputs, tmp_path, keyed):
    hostile = hostile_server.serve(answer_with(HOSTILE_BODIES["prompt_tokens 10^30"]))
    try:
        result = cli(*judge_args(inputs, hostile, tmp_path / "out", "--criteria", "relevance", "--max-retries", "0"))
    finally:
        hostile.shutdown()
    line = one_line_error(result)
    assert "malformed answer: usage.prompt_tokens" in line


# --- server text on one line --------------------------------------------------------------------------------------

def test_a_servers_error_text_is_one_line_without_escapes(cli, inputs, tmp_path, keyed):
    nasty = "denied\n\x1b[31mRED\x1b[0m\rcarriage\u202eevil"
    refusing = hostile_server.serve(answer_with(json.dumps({"error": {"message": nasty}}).encode(), "403 Forbidden"))
    try:
        result = cli(*judge_args(inputs, refusing, tmp_path / "out", "--criteria", "relevance"))
    finally:
        refusing.shutdown()
    line = one_line_error(result)
    assert "\x1b" not in result.stderr and "\r" not in result.stderr and "\u202e" not in result.stderr
    assert "denied \\x1b[31mRED\\x1b[0m carriage\\u202eevil" in line


@pytest.mark.parametrize("key", ["1", "x", "EMPTY", "ollama"])
def test_a_dummy_key_leaves_the_answers_alone_and_is_hidden_in_errors(cli, inputs, tmp_path, monkeypatch, key):
    # Local servers take any key; a short one is no secret, and hiding every "1" of "Label: 1" (or the "x"
    # of "explanation") would make every answer unreadable, and cached so.
    monkeypatch.setenv("CASTREGIN_TEST_KEY", key)
    text = f"Explanation: the key {key} given.\nLabel: 1"
    server = hostile_server.serve(answer_with(json.dumps(completion(text, finish_reason="stop")).encode()))
    out = tmp_path / "out"
    try:
        result = cli(*judge_args(inputs, server, out, "--criteria", "relevance"))
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    labels = [line.split()[3] for line in (out / "llm_relevance.qrel").read_text().splitlines()]
    assert labels and set(labels) == {"1"}
    stored = sqlite3.connect(out / "cache.sqlite").execute("SELECT content, finish_reason FROM answers").fetchall()
    assert stored and set(stored) == {(text, "stop")}
    refusing = hostile_server.serve(answer_with(json.dumps({"error": {"message": f"bad key {key}!"}}).encode(),
                                                "401 Unauthorized"))
    try:
        with pytest.raises(InputError, match=r"HTTP 401: bad key \*\*\*!"):
            ask_once(refusing, tmp_path)
    finally:
        refusing.shutdown()
