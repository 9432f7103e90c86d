"""The answers of the model client (``castregin judge``...): a SQLite file, one row per completed call.

A call is known by its key (:func:`call_key`): the SHA-256 of the model's name, the prompt's
messages, the parameters that change an answer (temperature, token limit) and the sample's index.
The endpoint's address and the API key are in no key and no row: the same model answers the same
wherever it runs, and a cache file can be shared without a secret in it.

**Durability.** The file is in SQLite's write-ahead-log mode with ``synchronous=NORMAL``, and
:meth:`AnswerCache.store` returns once the answer's transaction is committed: an answer the client
counts (in its totals, its progress, its outputs) survives the process's end of any kind (SIGTERM,
SIGKILL, a crash, running out of memory), and the next run with the same inputs asks for the rest
only. An operating-system crash or a power cut may lose the answers committed since the last
checkpoint (SQLite keeps the file whole): those calls are asked again. Answers that arrive while
another thread commits are committed together, in one transaction (group commit): a commit per
answer at once is what made the client twice as slow as a plain SDK loop (see docs/llm-client.md).

SQLite serialises the writers; one connection is shared by the calling threads under a lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    sample INTEGER NOT NULL,
    messages TEXT NOT NULL,
    parameters TEXT NOT NULL,
    content TEXT,
    refusal TEXT,
    finish_reason TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL
)
"""
_COLUMNS = ("key", "model", "sample", "messages", "parameters", "content", "refusal", "finish_reason",
            "prompt_tokens", "completion_tokens")
_READ = "key, content, refusal, finish_reason, prompt_tokens, completion_tokens"
_INSERT = f"INSERT OR IGNORE INTO answers ({','.join(_COLUMNS)}) VALUES ({','.join('?' * len(_COLUMNS))})"  # noqa: S608


def call_key(model: str, messages: Sequence[Mapping[str, str]], parameters: Mapping[str, object],
             sample: int) -> str:
    """The cache key of one call: SHA-256 of the model, the messages, the parameters and the sample index."""
    text = json.dumps({"model": model, "messages": list(messages), "parameters": dict(parameters),
                       "sample": sample}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    """One stored answer: its text (``None`` when the model gave none), refusal, and token counts."""

    key: str
    content: str | None
    refusal: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int


def _storage_error(err: sqlite3.Error, path: str) -> InputError:
    return InputError(f"the answer cache cannot be written ({err}); free space or choose another --cache, then "
                      "run again: the answers stored so far are kept", source=path)


class _Pending:
    """One answer waiting for its transaction: its row, then what the cache holds for its key (or why not)."""

    __slots__ = ("done", "error", "result", "row")

    def __init__(self, row: tuple):
        self.row = row
        self.done = False
        self.result: CachedAnswer | None = None
        self.error: InputError | None = None


#: The files SQLite may keep beside the database: the write-ahead log, its index, a rollback journal.
SIDE_FILES = ("-wal", "-shm", "-journal")


class AnswerCache:
    """The answers of earlier calls, by key; :meth:`store` commits one before returning."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise InputError("is not a regular file; give --cache a file name", source=self.path)
        #: Whether this cache made its file, and how many answers it stored: a run that received nothing
        #: leaves no file it made (:meth:`remove_if_unused`).
        self.created = mode is None
        self.stored = 0
        self.closed = False
        # _db_lock: the connection (a transaction, a lookup, closing); _queue_lock: the answers waiting to be
        # committed and whether a thread is committing them.
        self._db_lock = threading.Lock()
        self._queue_lock = threading.Condition()
        self._queue: list[_Pending] = []
        self._writing = False
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.OperationalError as err:  # no permission, a directory gone
            raise self._unusable(err) from None
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as err:
            # The file this run made (the schema could not be written: no room) goes, as after a run that
            # received nothing, so that the caller can remove the directories it made for it.
            self.remove_if_unused()
            raise self._unusable(err) from None

    def _unusable(self, err: sqlite3.DatabaseError) -> InputError:
        if isinstance(err, sqlite3.OperationalError):  # no room, no permission, a directory gone
            return InputError(f"the answer cache cannot be opened ({err}); give another --cache", source=self.path)
        return InputError(f"is not an answer cache castregin can use ({err}); give another --cache",
                          source=self.path)

    def close(self) -> None:
        """Close the file once the transaction under way is committed; answers stored later are dropped."""
        with self._queue_lock:
            self.closed = True
            while self._writing:
                self._queue_lock.wait()
        with self._db_lock:
            self._db.close()

    def remove_if_unused(self) -> bool:
        """Close, and remove the file when this cache made it and stored nothing in it; True if removed."""
        self.close()
        if not self.created or self.stored:
            return False
        for path in (self.path, *(self.path + suffix for suffix in SIDE_FILES)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        return True

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lookup(self, keys: Iterable[str]) -> dict[str, CachedAnswer]:
        """The stored answers among ``keys``."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, CachedAnswer] = {}
        with self._db_lock:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT {_READ} FROM answers WHERE key IN ({marks})"  # noqa: S608 - placeholders only
                try:
                    rows = self._db.execute(query, chunk).fetchall()
                except sqlite3.DatabaseError as err:  # a page damaged since it was opened
                    raise InputError(f"the answer cache cannot be read ({err}); give another --cache",
                                     source=self.path) from None
                found.update({row[0]: CachedAnswer(*row) for row in rows})
        return found

    def store(self, key: str, *, model: str, sample: int, messages: Sequence[Mapping[str, str]],
              parameters: Mapping[str, object], content: str | None, refusal: str | None,
              finish_reason: str | None, prompt_tokens: int, completion_tokens: int) -> CachedAnswer | None:
        """Commit one answer and return the answer the cache holds for ``key``: this one, or the one stored
        first (another run sharing the cache may have answered it meanwhile: the first one counts); ``None``
        when the cache was closed first (the answer is not kept).

        The answers of several threads that arrive while one transaction commits go into the next one
        together; each thread returns once its own answer is committed.
        """
        pending = _Pending((key, model, sample, json.dumps(list(messages), ensure_ascii=False),
                            json.dumps(dict(parameters), sort_keys=True), content, refusal, finish_reason,
                            int(prompt_tokens), int(completion_tokens)))
        with self._queue_lock:
            self._queue.append(pending)
            while self._writing and not pending.done:
                self._queue_lock.wait()
            if pending.done:
                batch = None
            else:
                # No transaction under way: this thread commits every answer waiting, its own among them.
                batch, self._queue, self._writing = self._queue, [], True
        if batch is not None:
            self._commit(batch)
        if pending.error is not None:
            raise pending.error
        return pending.result

    def _commit(self, batch: list[_Pending]) -> None:
        results: list[CachedAnswer | None] = [None] * len(batch)
        error = None
        inserted = 0
        try:
            if not self.closed:
                with self._db_lock:
                    try:
                        # One answer: its INSERT is its own transaction (one statement, not three).
                        if len(batch) > 1:
                            self._db.execute("BEGIN IMMEDIATE")
                        for index, pending in enumerate(batch):
                            row = pending.row
                            if self._db.execute(_INSERT, row).rowcount:
                                inserted += 1
                                results[index] = CachedAnswer(row[0], *row[5:])
                            else:
                                first = self._db.execute(f"SELECT {_READ} FROM answers WHERE key = ?",  # noqa: S608
                                                         (row[0],)).fetchone()
                                results[index] = CachedAnswer(*first)
                        if len(batch) > 1:
                            self._db.execute("COMMIT")
                    except sqlite3.Error as err:
                        with contextlib.suppress(sqlite3.Error):
                            if self._db.in_transaction:
                                self._db.execute("ROLLBACK")
                        error = _storage_error(err, self.path)
                        inserted = 0
        finally:
            with self._queue_lock:
                if error is None:
                    self.stored += inserted
                for pending, result in zip(batch, results, strict=True):
                    pending.result, pending.error, pending.done = result, error, True
                self._writing = False
                self._queue_lock.notify_all()

    def __len__(self) -> int:
        with self._db_lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
