"""What made an output: castregin's version, the command line, the date and each input's SHA-256.

A regular file is hashed from disk; standard input, a pipe or a FIFO, which can be read once only, as castregin
read it (:class:`castregin.formats.common.StreamDigest`): the digest is of the bytes parsed.

The report's reproducibility block. The date is injectable, and honours ``SOURCE_DATE_EPOCH`` as
reproducible builds do, so that the same inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .common import STDIO, stream_digest

_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Provenance:
    """What made an output: castregin's version, the command line, the date, each input and its SHA-256."""

    version: str
    command: str
    date: str
    inputs: list[tuple[str, str]]


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes as stored (a compressed input: of its compressed bytes), read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def utc_date(epoch: float | None = None) -> str:
    """An ISO 8601 UTC date to the second: ``epoch``, else ``$SOURCE_DATE_EPOCH``, else now."""
    if epoch is None:
        configured = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        epoch = int(configured) if configured.isascii() and configured.isdigit() else time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def castregin_version() -> str:
    """The installed castregin's version (as ``castregin --version`` says it)."""
    from importlib import metadata

    try:
        return metadata.version("castregin")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def input_sha256(path: str) -> str:
    """The SHA-256 of an input: a regular file's from disk; standard input's, a pipe's (``<(cat a.qrel)``) or a
    FIFO's as castregin read and parsed it, since a second read would find nothing, or wait forever for a writer."""
    if path != STDIO:
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except OSError as err:
            raise InputError(f"cannot read it to hash it ({err.strerror})", source=path) from None
        if regular:
            try:
                return sha256_file(path)
            except OSError as err:
                raise InputError(f"cannot read it to hash it ({err.strerror})", source=path) from None
    digest = stream_digest(path)
    if digest is None or not digest.complete:
        # Every reader reads its input to the end before anything is written; say so rather than hash a part.
        raise InputError("was not read to its end, so its SHA-256 is unknown; give it as a file", source=path)
    return digest.hexdigest()


def provenance(inputs: Sequence[str | Path], command: str | None = None, date: str | None = None) -> Provenance:
    """The provenance of ``inputs`` (paths as given, each once, each with its SHA-256: :func:`input_sha256`; ``-`` is
    standard input).

    ``command`` defaults to this process's command line, shell-quoted; ``date`` to :func:`utc_date`.
    """
    hashed = [(path, input_sha256(path)) for path in dict.fromkeys(str(p) for p in inputs)]
    return Provenance(castregin_version(), command if command is not None else shlex.join(sys.argv),
                      date if date is not None else utc_date(), hashed)
