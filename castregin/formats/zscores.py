"""trec_eval's Z-score file (``trec_eval -Z FILE``): ``topic measure mean deviation`` a line.

Each line gives the mean and standard deviation of one measure on one topic over a reference set of
runs, as trec_eval's ``get_zscores.c`` reads it: four fields separated by whitespace, the numbers
read as C's ``atof`` does (``nan`` and ``inf`` included). castregin is stricter where trec_eval
would guess: a line with other than four fields, a number that is not one, and a (topic, measure)
given twice are errors. Blank lines are skipped, as in castregin's other readers.
"""

from __future__ import annotations

import os
import re

from ..errors import InputError
from .common import decode, display_name, read_bytes

WHAT = "Z-score file (topic measure mean deviation)"
_NUMBER = re.compile(r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf(inity)?|nan)", re.IGNORECASE)


def read_zscores(path: str | os.PathLike) -> list[tuple[str, str, float, float]]:
    """The lines of a Z-score file as ``(topic, measure, mean, deviation)``, in file order."""
    return parse_zscores(read_bytes(path), display_name(path))


def parse_zscores(data: bytes, source: str) -> list[tuple[str, str, float, float]]:
    """:func:`read_zscores` on the bytes of a file that ``source`` names in messages."""
    lines: list[tuple[str, str, float, float]] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(decode(data, source).splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(f"expected 4 columns (topic measure mean deviation), found {len(fields)}",
                             source=source, line=number)
        topic, measure, mean, deviation = fields
        for text, what in ((mean, "mean"), (deviation, "deviation")):
            if not _NUMBER.fullmatch(text):
                raise InputError(f"the {what} {text!r} is not a number", source=source, line=number)
        if (topic, measure) in seen:
            raise InputError(f"topic {topic} has two lines for {measure} (the other is line {seen[topic, measure]})",
                             source=source, line=number)
        seen[topic, measure] = number
        lines.append((topic, measure, float(mean), float(deviation)))
    if not lines:
        raise InputError(f"the file is empty, expected a {WHAT}", source=source)
    return lines

