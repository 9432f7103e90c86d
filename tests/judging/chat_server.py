"""A chat-completions endpoint on 127.0.0.1 for the tests of ``castregin judge``: no model, a rule.

It speaks the protocol as the ``openai`` SDK expects it (``POST /v1/chat/completions``, the request's
``model``/``messages``/``temperature``/``seed``, the response's ``choices[0].message`` and ``usage``)
and answers from a rule of its own, independent of castregin's code: the label is the number of
distinct words of four letters or more that the item (between the prompt's ``BEGIN ITEM`` and
``END ITEM`` lines) shares with the conversation (between ``BEGIN CONVERSATION`` and ``END
CONVERSATION``), at most 3, plus the request's ``seed`` (the sample) modulo 2, at most 3.

Faults are chosen per prompt by its digest, so two runs meet the same ones, and hit only the first
request of a prompt (the retry succeeds): 429 with ``Retry-After``, 500, a slow answer (past the
client's timeout), malformed JSON, truncated JSON, a connection closed without an answer; a test
may set ``unavailable`` (a 503 with ``Retry-After``) or ``echo_key`` (a 401 whose message holds the
request's Authorization header). Answers that are faults of the model rather than of the transport
are permanent: a refusal (an item holding "REFUSE"), an answer without a label (an item holding
"RAMBLE").

A subclass answers by a rule of its own (:meth:`ChatServer.reply`; ``tests/dialogue/game_server.py``).
The server counts what it answered: ``answered[prompt digest]`` (complete answers only), the
``prompt_tokens`` and ``completion_tokens`` those answers reported (words of the prompt and of the answer)
and ``requests`` (every request). Run it in a thread of the test (:func:`serve`), or as a process
(``python chat_server.py URL_FILE [delay]``, for trying ``castregin judge`` by hand) that writes its
base URL to URL_FILE.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD = re.compile(r"[a-z]{4,}")
FAULTS = ("rate_limit", "server_error", "slow", "malformed", "truncated", "drop")


def prompt_key(body: dict) -> str:
    """The digest of a request's messages and sample: what the server counts answers by."""
    text = json.dumps([body.get("messages"), body.get("seed")], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _between(text: str, begin: str, end: str) -> str:
    match = re.search(rf"^{begin}[^\n]*\n(.*?)\n{end}", text, re.DOTALL | re.MULTILINE)
    return match.group(1) if match else ""


def rule_label(prompt: str, seed: int) -> int:
    """The label the rule gives: word overlap of item and conversation, plus the sample's parity."""
    item = set(WORD.findall(_between(prompt, "BEGIN ITEM", "END ITEM").lower()))
    conversation = set(WORD.findall(_between(prompt, "BEGIN CONVERSATION", "END CONVERSATION").lower()))
    return min(3, len(item & conversation) + seed % 2)


class ChatServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, faults: bool = True, delay: float = 0.0, retry_after: str = "0.05", slow: float = 2.0,
                 port: int = 0):
        super().__init__(("127.0.0.1", port), _Handler)
        self.faults = faults
        self.delay = delay
        self.retry_after = retry_after
        self.slow = slow
        self.lock = threading.Lock()
        self.answered: Counter = Counter()
        # The tokens the complete answers reported (usage), summed: what a run's log should say it used.
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.seen: Counter = Counter()
        self.requests = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.bodies: list[dict] = []
        self.authorizations: list[str | None] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def reply(self, body: dict) -> tuple[str | None, str | None]:
        """The answer's content and refusal: the rule's label (a subclass answers by a rule of its own)."""
        prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
        item = _between(prompt, "BEGIN ITEM", "END ITEM")
        if "REFUSE" in item:
            return None, "I can't help with that."
        if "RAMBLE" in item:
            return "This item seems somewhat related to the conversation.\nI would call it fair.", None
        label = rule_label(prompt, int(body.get("seed") or 0))
        return f"The item shares words with the conversation.\nLabel: {label}", None

    def fault_for(self, key: str, attempt: int) -> str | None:
        if not self.faults or attempt > 0:
            return None
        pick = int(key[:8], 16) % 10
        return FAULTS[pick] if pick < len(FAULTS) else None


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, *args):  # quiet
        pass

    def _leave(self):
        """The request is no longer in flight: said before its answer is written, so that the client's next
        request (sent once it has read the answer) is never counted as overlapping this one."""
        if getattr(self, "_counted", False):
            with self.server.lock:
                self.server.in_flight -= 1
            self._counted = False

    def _send(self, status: int, payload: bytes, headers: dict | None = None):
        self._leave()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        # The client may have given up (a timeout) or been killed.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(payload)

    def do_POST(self):
        with self.server.lock:
            self.server.in_flight += 1
            self.server.most_in_flight = max(self.server.most_in_flight, self.server.in_flight)
        self._counted = True
        try:
            self._answer()
        finally:
            self._leave()

    def _answer(self):
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        key = prompt_key(body)
        server = self.server
        with server.lock:
            server.requests += 1
            attempt = server.seen[key]
            server.seen[key] += 1
            server.bodies.append(body)
            server.authorizations.append(self.headers.get("Authorization"))
        fault = server.fault_for(key, attempt)
        if server.delay:
            time.sleep(server.delay)
        if fault == "rate_limit":
            self._send(429, b'{"error": {"message": "slow down", "type": "rate_limit"}}',
                       {"Retry-After": server.retry_after})
            return
        if fault == "drop":
            # The connection closed with no answer at all (a proxy restarting, a crashed worker).
            self.close_connection = True
            return
        if fault == "echo_key":
            # A careless server that puts the request's credentials into its error message.
            message = json.dumps({"error": {"message": f"bad key {self.headers.get('Authorization')}"}})
            self._send(401, message.encode())
            return
        if fault == "unavailable":
            self._send(503, b'{"error": {"message": "warming up"}}', {"Retry-After": server.retry_after})
            return
        if fault == "server_error":
            self._send(500, b'{"error": {"message": "overloaded"}}')
            return
        if fault == "slow":
            time.sleep(server.slow)
        prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
        content, refusal = server.reply(body)
        answer = {
            "id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": 1700000000,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, "refusal": refusal}}],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len((content or "").split()),
                      "total_tokens": len(prompt.split()) + len((content or "").split())},
        }
        payload = json.dumps(answer).encode()
        if fault == "malformed":
            payload = b"<html>502 Bad Gateway</html>"
        elif fault == "truncated":
            payload = payload[: len(payload) // 2]
        if fault is None:
            with server.lock:
                server.answered[key] += 1
                server.prompt_tokens += answer["usage"]["prompt_tokens"]
                server.completion_tokens += answer["usage"]["completion_tokens"]
        self._send(200, payload)


def serve(server_class: type[ChatServer] = ChatServer, **options) -> ChatServer:
    """A running server in a daemon thread (``server.shutdown()`` stops it)."""
    server = server_class(**options)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    running = serve(delay=float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
    with open(sys.argv[1], "w") as handle:
        handle.write(running.base_url)
    threading.Event().wait()
