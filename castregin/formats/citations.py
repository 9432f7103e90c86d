"""Citation support labels: for each (answer sentence, cited passage) pair, whether the passage supports the
sentence, as TREC RAG 2024's support evaluation labels it (Thakur et al., 2025): full, partial or no support.

The file (``citation_support.csv``), one row per pair, sorted by run, query (natural order), sentence and the
citation's position in the sentence::

    run_id,qid,sentence,passage_id,support
    ragnarok,2024-145979,0,msmarco_v2.1_doc_13_1647729865#0_3617397938,full_support

``sentence`` counts the answer's sentences from 0 (the position in the TREC RAG answer's ``answer`` list);
``support`` is ``full_support``, ``partial_support`` or ``no_support``. Who labelled is not a column: a model
run's log names the model, and people's labels (a crowd CSV, one row per worker with a ``worker_id`` column
and these columns) are aggregated to one label per pair, into this same file, before they are scored. Other
columns are ignored when the file is read.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping

from ..errors import InputError
from .common import decode, display_name, read_bytes

FULL_SUPPORT, PARTIAL_SUPPORT, NO_SUPPORT = "full_support", "partial_support", "no_support"
#: The labels, best first, and what each counts in the weighted precision and recall.
SUPPORT_WEIGHTS = {FULL_SUPPORT: 1.0, PARTIAL_SUPPORT: 0.5, NO_SUPPORT: 0.0}
COLUMNS = ("run_id", "qid", "sentence", "passage_id", "support")

#: One pair: (run, query, sentence index, passage id).
PairKey = tuple[str, str, int, str]


def format_citation_labels(labels: Mapping[PairKey, str], order: Iterable[PairKey] | None = None) -> str:
    """The CSV text of ``labels`` (pair -> label), in ``order`` (default: the mapping's)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for key in order if order is not None else labels:
        if key in labels:
            run_id, qid, sentence, passage_id = key
            writer.writerow((run_id, qid, sentence, passage_id, labels[key]))
    return buffer.getvalue()


def parse_citation_labels(data: bytes, source: str) -> dict[PairKey, str]:
    """The labels of a citation support CSV's bytes; a pair given twice, a label or a sentence index that is
    none, or a missing column is an error naming the line."""
    reader = csv.DictReader(io.StringIO(decode(data, source), newline=""))
    missing = [column for column in COLUMNS if column not in (reader.fieldnames or ())]
    if missing:
        raise InputError(f"missing the column(s) {', '.join(missing)}; expected {','.join(COLUMNS)}", source=source,
                         line=1)
    labels: dict[PairKey, str] = {}
    lines: dict[PairKey, int] = {}
    for row in reader:
        line = reader.line_num
        support = (row["support"] or "").strip()
        if support not in SUPPORT_WEIGHTS:
            raise InputError(f"support: expected full_support, partial_support or no_support, got {support!r}",
                             source=source, line=line)
        sentence = (row["sentence"] or "").strip()
        if not (sentence.isascii() and sentence.isdigit()):
            raise InputError(f"sentence: expected the sentence's position from 0, got {sentence!r}", source=source,
                             line=line)
        key = ((row["run_id"] or "").strip(), (row["qid"] or "").strip(), int(sentence),
               (row["passage_id"] or "").strip())
        if not all(key[k] for k in (0, 1, 3)):
            raise InputError("run_id, qid and passage_id must not be empty", source=source, line=line)
        if key in lines:
            raise InputError(f"the pair is labelled on line {lines[key]} already; give each pair once",
                             source=source, line=line)
        lines[key] = line
        labels[key] = support
    return labels


def read_citation_labels(path: str | os.PathLike) -> dict[PairKey, str]:
    """Read a citation support CSV (``-``: standard input)."""
    return parse_citation_labels(read_bytes(path), display_name(path))
