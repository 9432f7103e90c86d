"""The aggregate stage's outputs: qrels per criterion (all turns and filtered turns) and ``audit.json``.

Written into one directory, all of them or none (:class:`~castregin.formats.output.OutputSet`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from ..errors import InputError
from .common import json_text, without_cyclic_gc
from .output import OutputSet, check_outputs
from .trec import format_qrels


class AggregatedLabels(Protocol):
    """What the outputs are made of (:class:`castregin.judging.aggregate.Aggregation` has it)."""

    criteria: list[str]

    @property
    def qrels(self) -> Mapping[str, Mapping[str, Mapping[str, int]]]:
        """criterion -> turn -> item -> label."""

    @property
    def filtered(self) -> Mapping[str, Mapping[str, Mapping[str, int]]]:
        """The turns with a label >= min_label."""

    def audit(self) -> dict:
        """The ``audit.json`` content."""


def check_file_name_part(value: str, what: str = "prefix") -> str:
    """A part of an output file name (the prefix, a criterion) is a name, not a path."""
    if value and (any(c in value for c in "/\\") or value.startswith(".")
                  or any(ord(c) < 32 or ord(c) == 127 for c in value)):
        raise InputError(f"the {what} {value!r} is not a plain name (no /, \\, leading dot or control "
                         "characters): outputs stay inside the output directory")
    return value


@without_cyclic_gc
def aggregation_files(aggregation: AggregatedLabels, prefix: str = "question") -> dict[str, str]:
    """File name -> content of every output (``<prefix>_<criterion>.qrel``, ``..._filtered.qrel``,
    ``audit.json``); an empty ``prefix`` gives ``<criterion>.qrel``."""
    files = {}
    for criterion in aggregation.criteria:
        stem = f"{prefix}_{criterion}" if prefix else criterion
        # The filtered qrels are some of the turns of the full ones: each turn is formatted once.
        turns = {turn: format_qrels({turn: items}) for turn, items in aggregation.qrels[criterion].items()}
        files[f"{stem}.qrel"] = "".join(turns[turn] for turn in sorted(turns))
        files[f"{stem}_filtered.qrel"] = "".join(turns[turn] for turn in sorted(aggregation.filtered[criterion]))
    files["audit.json"] = json_text(aggregation.audit(), sort_keys=True)
    return files


def write_aggregation(aggregation: AggregatedLabels, out_dir: str | os.PathLike, prefix: str = "question",
                      inputs: Sequence[str | os.PathLike] = ()) -> list[Path]:
    """Write every output of ``aggregation`` (:func:`aggregation_files`) into ``out_dir``, all of them or none.

    One :class:`~castregin.formats.output.OutputSet`: on an error the old files stay as they were
    and a directory this call created is removed. ``inputs`` are never overwritten.
    """
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise InputError("exists and is not a directory; choose another output directory", source=str(target),
                         argument="out_dir")
    check_file_name_part(prefix)
    for criterion in aggregation.criteria:
        check_file_name_part(criterion, "criterion")
    files = aggregation_files(aggregation, prefix)
    check_outputs([target / name for name in files], inputs)
    with OutputSet(inputs) as outputs:
        for name, text in files.items():
            outputs.write_text(target / name, text)
    return [target / name for name in files]
