"""Every file format castregin reads or writes, in one place.

``common``: opening inputs (gzip, bzip2, xz, zstd or plain), text, JSON, atomic writes, ``-`` for
standard streams. ``trec``: runs, qrels, pools, turn lists. Further modules hold the JSON submissions,
banks, crowd CSVs and dialogue files.
"""

from .common import (
    STDIO,
    atomic_output,
    decode,
    display_name,
    ensure_not_input,
    expand_run_paths,
    open_input,
    read_bytes,
    read_json,
    read_text,
    stem,
    write_json,
    write_text,
)
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
