"""Which way an evaluation of files goes: small inputs in plain Python, larger ones through the engine.

Small inputs are read by the line reader (:mod:`castregin.formats.trec`) and scored by trec_eval's
rules in plain Python (:mod:`castregin.evaluation.plain`, :mod:`castregin.evaluation.trec_rules`),
loading neither numpy, pyarrow nor pandas: importing those alone takes a quarter of a second and some
80 MB, where a script calling ``castregin trec_eval`` on a 10-line run expects trec_eval's hundredth of a
second. Larger inputs go to the columnar reader and the streaming engine (:mod:`castregin.evaluation.engine`).

:func:`small_inputs` is the one place that decides, by the files' sizes and before anything heavy is
imported; ``castregin evaluate`` (:func:`castregin.evaluation.evaluate.evaluate_file_rows`) asks it,
and so does any command that has both paths. Tests force the large path with
``monkeypatch.setattr(small, "SMALL_RUN_BYTES", 0)``.
"""

from __future__ import annotations

import os

from .. import formats
from ..errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: Runs of at most this many bytes in all (some 25,000 lines) are scored in plain Python. Measured on the
#: project's 2-core machine, a run of 20,000 lines and qrels of 300,000 (6 MB): 0.39 s of CPU in plain
#: Python, 0.26 s through pyarrow and the engine (0.16 s of it importing them); the pure path's time grows
#: with the run's lines (the rules run per line), the engine's hardly.
SMALL_RUN_BYTES = 1 << 20
#: Qrels of at most this many bytes in all are read by the line reader (some 150,000 lines): with a small
#: run, 3.4 MB of qrels take 0.18 s of CPU and 54 MB in plain Python, 0.27 s and 138 MB through pyarrow;
#: 6.3 MB take 0.29 s and 85 MB against 0.26 s and 144 MB.
SMALL_QRELS_BYTES = 4 << 20


def small_inputs(run_paths: Iterable[str | os.PathLike], qrels_paths: Iterable[str | os.PathLike]) -> bool:
    """Whether these runs and qrels are small enough to be evaluated in plain Python (see the module).

    The runs' sizes are added up against :data:`SMALL_RUN_BYTES`, the qrels' against
    :data:`SMALL_QRELS_BYTES`: the size of a plain file on disk, and of a compressed one what it
    decompresses to (read up to the bound, so a large one costs no more than that; one beyond the bounds on
    a compressed file held whole, :func:`castregin.formats.common.decompression_bounds`, is streamed
    instead). Standard input
    and pipes are not small: their size is unknown until read, and what is read of them is gone. A
    file that cannot be opened counts as small: reading it then reports the error, in the usual order.
    """
    return (_within(run_paths, SMALL_RUN_BYTES)
            and _within(qrels_paths, SMALL_QRELS_BYTES))


def _within(paths: Iterable[str | os.PathLike], bound: int) -> bool:
    total = 0
    for path in paths:
        if str(path) == formats.STDIO:
            return False
        if not os.path.exists(path):
            continue  # reading it reports the error, in the usual order
        if not os.path.isfile(path):
            return False  # a FIFO or a device: read once, as it comes
        try:
            total += _size(path, bound - total)
        except (InputError, OSError):
            continue
        if total > bound:
            return False
    return True


def _size(path: str | os.PathLike, room: int) -> int:
    """The bytes of ``path`` as read: its size on disk when plain, else decompressed up to ``room`` + 1."""
    with formats.open_input(path) as opened:
        if opened.compression is None:
            return os.path.getsize(path)
        size = 0
        while size <= room:
            piece = opened.read(min(1 << 20, room + 1 - size))
            if not piece:
                break
            size += len(piece)
        try:
            # The line reader holds a compressed file whole, within the bounds against decompression bombs;
            # beyond them the file is streamed, which those bounds do not concern.
            opened.holding(size)
        except InputError:
            return room + 1
        return size
