"""Every file format castregin reads or writes, in one place.

``common``: opening inputs (gzip, bzip2, xz, zstd or plain), text, JSON, ``-`` for standard input.
``output``: atomic, safe writes (``-`` for standard output). ``trec``: runs, qrels, pools, turn lists.
Further modules hold the JSON submissions, banks, crowd CSVs, dialogue files, the aggregate stage's
outputs and the report's provenance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .common import (
        STDIO,
        decode,
        display_name,
        expand_run_paths,
        open_input,
        read_bytes,
        read_json,
        read_text,
        stem,
    )
    from .diversity import read_diversity_qrels
    from .output import ensure_not_input, write_text
    from .trec import (
        format_pool,
        format_qrels,
        format_run,
        format_score,
        read_qrels,
        read_run,
        read_turn_list,
        turn_ids_from_json,
    )

#: Each name's module, imported on first use (PEP 562): a command loads the formats it reads and writes, not all
#: of them (the diversity readers, the output's temporary files ... cost a short command a tenth of its time).
_LAZY = {
    **dict.fromkeys(["STDIO", "decode", "display_name", "expand_run_paths", "open_input", "read_bytes", "read_json",
                     "read_text", "stem"], "common"),
    "read_diversity_qrels": "diversity",
    **dict.fromkeys(["ensure_not_input", "write_text"], "output"),
    **dict.fromkeys(["format_pool", "format_qrels", "format_run", "format_score", "read_qrels", "read_run",
                     "read_turn_list", "turn_ids_from_json"], "trec"),
}

def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value  # later lookups find it without calling this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
