"""Every file format castregin reads or writes, in one place.

``common``: opening inputs (gzip, bzip2, xz, zstd or plain), text, JSON, ``-`` for standard input.
``output``: atomic, safe writes (``-`` for standard output). ``trec``: runs, qrels, pools, turn lists.
Further modules hold the JSON submissions, banks, crowd CSVs, dialogue files, the aggregate stage's
outputs and the report's provenance.
"""

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


def read_diversity_qrels(path, name=None):
    """:func:`castregin.formats.diversity.read_diversity_qrels`, the module imported on the first call: a command
    that reads no diversity qrels (a ten-line ``castregin trec_eval``) does without it."""
    from .diversity import read_diversity_qrels as read

    return read(path, name)
