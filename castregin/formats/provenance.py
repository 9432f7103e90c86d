"""What made an output: castregin's version, the command line, the date and each input's SHA-256.

The report's reproducibility block. The date is injectable, and honours ``SOURCE_DATE_EPOCH`` as
reproducible builds do, so that the same inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .common import STDIO

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
        epoch = int(configured) if configured.isdigit() else time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def castregin_version() -> str:
    """The installed castregin's version (as ``castregin --version`` says it)."""
    from importlib import metadata

    try:
        return metadata.version("castregin")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def provenance(inputs: Sequence[str | Path], command: str | None = None, date: str | None = None) -> Provenance:
    """The provenance of ``inputs`` (paths as given, each once; ``-`` is standard input, not hashed).

    ``command`` defaults to this process's command line, shell-quoted; ``date`` to :func:`utc_date`.
    """
    hashed = []
    for path in dict.fromkeys(str(p) for p in inputs):
        if path == STDIO:
            hashed.append((path, "standard input (not hashed)"))
            continue
        try:
            hashed.append((path, sha256_file(path)))
        except OSError as err:
            raise InputError(f"cannot read it to hash it ({err.strerror})", source=path) from None
    return Provenance(castregin_version(), command if command is not None else shlex.join(sys.argv),
                      date if date is not None else utc_date(), hashed)
