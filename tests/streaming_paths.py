"""Small inputs forced through the streaming paths (the engine and ``castregin trec_eval``'s), read in
pieces of a few lines, so that small test files exercise what large ones take."""

from __future__ import annotations

import contextlib

import pytest

from castregin.evaluation import small, trec_eval_stream
from castregin.formats import turn_batches, turn_stream


@contextlib.contextmanager
def streaming(lines: int = 7, block: int | None = None):
    """Every input through the streaming paths, in pieces of ``lines`` lines (reader blocks of ``block``
    bytes, default ``512 * lines``); yields the calls of ``castregin trec_eval``'s streaming path (a list)."""
    calls = []
    stream_lines = trec_eval_stream.stream_lines

    def spy(*args, **kwargs):
        calls.append(args)
        return stream_lines(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(small, "SMALL_RUN_BYTES", 0)
        patch.setattr(turn_stream, "STREAM_BLOCK", 512 * lines if block is None else block)
        patch.setattr(turn_stream, "CHECK_BATCHES", 2)
        patch.setattr(turn_stream, "PIECE_LINES", lines)
        patch.setattr(turn_batches, "BATCH_LINES", lines)
        patch.setattr(trec_eval_stream, "stream_lines", spy)
        yield calls
