"""A chat-completions endpoint on 127.0.0.1 whose models are the scripted players of ``privateshared_players.py``.

It is ``tests/judging/chat_server.py``'s server (the protocol as the ``openai`` SDK speaks it, the counts of
requests and answers, the faults) answering by another rule: the request's ``model`` names the player
(``truthful``, ``always-yes``, ``unparseable-first``, ``never-parseable``, ``eager``, ``untagged``), which
answers the request's messages as the game's rules say it should, knowing nothing of castregin.

Faults hit the first request of a call only (the retry is answered), chosen by the call's digest among
``faults`` (default none): ``rate_limit`` (429 with ``Retry-After``), ``server_error`` (500), ``drop`` (the
connection closed with no answer), about one call in ten for each; ``broken`` is a set of texts whose calls
get a 500 every time (an episode whose call fails after every retry).

As a process, to try ``castregin play`` by hand (from ``tests/``; stop it with Ctrl-C)::

    python -m dialogue.game_server data/privateshared/clembench 8000    # http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable
from pathlib import Path

from judging.chat_server import ChatServer, prompt_key

from .privateshared_players import make_players


class GameServer(ChatServer):
    def __init__(self, game_dir: Path, faults: Iterable[str] = (), broken: Iterable[str] = (), **options):
        super().__init__(faults=False, **options)
        self.players = make_players(Path(game_dir))
        self.game_faults = tuple(faults)
        self.broken = tuple(broken)
        self._messages: dict[str, list] = {}  # a request's digest -> its messages (of every request so far)
        self._indexed = 0

    def reply(self, body: dict) -> tuple[str | None, str | None]:
        return self.players[body["model"]](body["messages"]), None

    def _messages_of(self, key: str) -> list:
        with self.lock:  # the bodies of the requests so far, the one being answered among them
            for body in self.bodies[self._indexed:]:
                self._messages.setdefault(prompt_key(body), body["messages"])
            self._indexed = len(self.bodies)
            return self._messages.get(key, [])

    def fault_for(self, key: str, attempt: int) -> str | None:
        if self.broken and any(text in m["content"] for m in self._messages_of(key) for text in self.broken):
            return "server_error"
        if attempt > 0 or not self.game_faults:
            return None
        pick = int(key[:8], 16) % 10
        return self.game_faults[pick] if pick < len(self.game_faults) else None


def serve_game(game_dir: Path, **options) -> GameServer:
    """A running game server in a daemon thread (``server.shutdown()`` stops it)."""
    server = GameServer(game_dir, **options)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    running = GameServer(Path(sys.argv[1]), port=int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print(f"castregin's scripted players of {sys.argv[1]} answer at {running.base_url}", flush=True)
    running.serve_forever()
