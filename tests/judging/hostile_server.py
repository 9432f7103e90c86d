"""A server on 127.0.0.1 that answers chat completions the way a hostile or broken one would, byte by byte.

Each connection is read as one HTTP request (headers, then ``Content-Length`` bytes of JSON) and handed to a
``respond(connection, request)`` function that writes whatever it likes on the raw socket: a well-formed
answer with hostile JSON in it, headers or a body trickled a byte at a time, an endless chunked body, a gzip
bomb. Written on sockets, not on http.server, so that nothing is tidied on the way (no Content-Length added,
no status line fixed). The server counts requests, keeps their Authorization headers and bodies, and counts
the bytes it managed to send (a client that gives up closes the socket, and the writes fail).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: dict

    @property
    def authorization(self) -> str:
        return self.headers.get("authorization", "")

    @property
    def key(self) -> str:
        """The API key the client sent (after ``Bearer ``)."""
        return self.authorization.removeprefix("Bearer ")


@dataclass
class HostileServer:
    respond: Callable[[socket.socket, Request], None]
    requests: list[Request] = field(default_factory=list)
    sent: int = 0
    in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self):
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    def shutdown(self) -> None:
        self._closed.set()
        self._socket.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, rest = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
            length = int(headers.get("content-length", 0))
            while len(rest) < length:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                rest += chunk
            request = Request(method, path, headers, json.loads(rest or b"{}"))
            with self.lock:
                self.requests.append(request)
                self.in_flight += 1
            try:
                self.respond(connection, request)
            except OSError:
                pass  # the client gave up
            finally:
                with self.lock:
                    self.in_flight -= 1

    def send(self, connection: socket.socket, data: bytes) -> None:
        connection.sendall(data)
        with self.lock:
            self.sent += len(data)


def serve(respond: Callable[[HostileServer, socket.socket, Request], None]) -> HostileServer:
    """A running server whose every request is answered by ``respond(server, connection, request)``."""
    holder: dict = {}
    server = HostileServer(lambda connection, request: respond(holder["server"], connection, request))
    holder["server"] = server
    return server


# --- answers -------------------------------------------------------------------------------------------------------

def completion(content: object = "Label: 2", *, refusal: object = None, finish_reason: object = "stop",
               usage: object = None, message: object = None) -> dict:
    """A chat completion's JSON with the given fields (``message`` replaces the whole message)."""
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "m",
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": message if message is not None else
                         {"role": "assistant", "content": content, "refusal": refusal}}],
            "usage": usage if usage is not None else {"prompt_tokens": 10, "completion_tokens": 2}}


def http_response(body: bytes, status: str = "200 OK", headers: dict | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", f"Content-Length: {len(body)}",
             "Connection: close", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def answer_with(body: bytes, status: str = "200 OK", headers: dict | None = None):
    """A respond function that sends ``body`` (bytes as they are) with ``status``."""
    def respond(server: HostileServer, connection: socket.socket, request: Request) -> None:
        server.send(connection, http_response(body, status, headers))
    return respond


def trickle(data: bytes, every: float = 0.2):
    """Send ``data`` a byte at a time, then keep the connection open (a server that never finishes)."""
    def respond(server: HostileServer, connection: socket.socket, request: Request) -> None:
        for byte in data:
            server.send(connection, bytes([byte]))
            time.sleep(every)
        while True:
            time.sleep(every)
            server.send(connection, b" ")
    return respond


def endless_chunks(server: HostileServer, connection: socket.socket, request: Request) -> None:
    """A chunked body that never ends: 64 KiB chunks of a JSON string's inside."""
    server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    server.send(connection, b'%x\r\n{"choices": "\r\n' % len(b'{"choices": "'))
    piece = b"a" * 65536
    chunk = b"%x\r\n" % len(piece) + piece + b"\r\n"
    with contextlib.suppress(OSError):
        while True:
            server.send(connection, chunk)


_BOMB: dict[int, bytes] = {}


def gzip_bomb(decompressed: int):
    """A gzip body of ``decompressed`` zero bytes (a thousandth of that on the wire) as a JSON answer's
    Content-Encoding: gzip."""
    if decompressed not in _BOMB:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        zeros = b"0" * (1 << 20)
        parts = [packer.compress(b'{"choices": "')]
        parts += [packer.compress(zeros) for _ in range(decompressed >> 20)]
        parts.append(packer.compress(b'"}') + packer.flush())
        _BOMB[decompressed] = b"".join(parts)
    body = _BOMB[decompressed]

    def respond(server: HostileServer, connection: socket.socket, request: Request) -> None:
        server.send(connection, http_response(body, headers={"Content-Encoding": "gzip"}))
    return respond
