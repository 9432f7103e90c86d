"""TREC runs, qrels, pools and turn lists (SPEC "File formats")."""

from __future__ import annotations

import math
import os
from itertools import chain

from ..data import Qrels, Run, StratifiedQrels
from ..errors import InputError
from .common import decode, display_name, parse_json_text, plain_number_text, read_bytes, read_text, stem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

RUN_WHAT = "TREC run (turn Q0 item rank score tag)"
QRELS_WHAT = "qrels file (turn 0 item label)"
STRATIFIED_WHAT = "stratified qrels file (turn 0 item stratum label)"


def refuse_nul(text: str, source: str) -> None:
    """A NUL byte anywhere in a TREC file is an error naming its line: trec_eval reads lines as C strings,
    which end at one, so its ids cannot hold one."""
    at = text.find("\0")
    if at >= 0:
        line = len((text[:at] + "x").splitlines())  # as the readers number lines (str.splitlines)
        raise InputError("holds a NUL byte (\\0), which no trec_eval id can hold (C strings end at one); remove it",
                         source=source, line=line)


def line_fields(text: str, source: str, what: str | None) -> Iterator[tuple[int, list[str]]]:
    """(line number, whitespace-split fields) of each non-blank line of a TREC file (a NUL byte refused); a file
    without one is an error saying it expected a ``what`` (None: the caller says it)."""
    refuse_nul(text, source)
    seen = False
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if fields:
            seen = True
            yield number, fields
    if not seen and what is not None:
        raise InputError(f"the file is empty, expected a {what}", source=source)


def _parse(text: str, kind: type, what: str, source: str, line: int):
    # Python reads "1_000" and other scripts' digits ("٢") as numbers; trec_eval (C's atof/atol) would not.
    try:
        if not plain_number_text(text):
            raise ValueError
        return kind(text)
    except ValueError:
        kind_name = "a number" if kind is float else "an integer"
        digits = "" if text.isascii() else " (castregin reads the ASCII digits 0-9 only, as trec_eval does)"
        raise InputError(f"{what} {text!r} is not {kind_name}{digits}", source=source, line=line) from None


def _parse_float(text: str, what: str, source: str, line: int) -> float:
    value = _parse(text, float, what, source, line)
    if not math.isfinite(value):
        raise InputError(f"{what} {text!r} is not a finite number", source=source, line=line)
    return value


#: Labels are C ``long`` in trec_eval: signed 64-bit integers, in every reader and tool of castregin.
LABEL_RANGE = (-(1 << 63), (1 << 63) - 1)


def _parse_int(text: str, what: str, source: str, line: int) -> int:
    value = _parse(text, int, what, source, line)
    if not LABEL_RANGE[0] <= value <= LABEL_RANGE[1]:
        shown = text if len(text) <= 30 else f"{text[:12]}...{text[-6:]} ({len(text)} digits)"
        raise InputError(f"{what} {shown} does not fit in 64 bits (trec_eval reads labels as C long); use "
                         f"labels from {LABEL_RANGE[0]} to {LABEL_RANGE[1]}", source=source, line=line)
    return value


#: The start of a JSON object or list ({"run_name": ..., [{...}, ...]): no TREC line starts so. A pattern, compiled
#: (and kept by re) on first use: by a file whose first character that is not white space is a bracket.
_JSON_START = r'\s*(\{\s*["}]|\[\s*[\[{"\]])'


def _refuse_json(text: str, source: str, expected: str) -> None:
    """A JSON file given for a TREC file (a JSON run to ``evaluate``): say so, and what to do, in one line."""
    head = text[:256]
    if head.lstrip()[:1] not in ("{", "["):
        return
    import re  # here: a TREC file needs no regular expression

    if re.match(_JSON_START, head):
        line = len(text[:len(text) - len(text.lstrip())].splitlines()) or 1
        raise InputError(f"the file looks like JSON, not {expected}", source=source, line=line)


def read_run(path: str | os.PathLike, extra_columns: bool = False) -> Run:
    """Read a TREC run (``turn Q0 item rank score tag``, any whitespace).

    The tag is the first line's; a run without lines, a line without six columns, a rank or score
    that is not a finite number, and a (turn, item) listed twice are errors. ``extra_columns``:
    columns after the tag are ignored, as trec_eval ignores them.
    """
    return parse_run(read_bytes(path), display_name(path), extra_columns)


def parse_run(data: bytes, source: str, extra_columns: bool = False) -> Run:
    """:func:`read_run` on the bytes of a file that ``source`` names in messages."""
    run = Run(tag="", source=source)
    tag = ""
    text = decode(data, source)
    _refuse_json(text, source, "a TREC run (turn Q0 item rank score tag): a CAsT JSON submission? `castregin convert "
                               "questions` (or responses, passages) turns it into one")
    for line, all_fields in line_fields(text, source, RUN_WHAT):
        fields = all_fields[:6] if len(all_fields) > 6 and extra_columns else all_fields
        if len(fields) != 6:
            raise InputError(
                f"expected 6 columns (turn Q0 item rank score tag), found {len(fields)}",
                source=source, line=line,
            )
        turn, _, item, rank_text, score_text, tag = fields
        rank = _parse_float(rank_text, "rank", source, line)
        score = _parse_float(score_text, "score", source, line)
        scores = run.scores.setdefault(turn, {})
        if item in scores:
            raise InputError(f"item {item} is listed twice for turn {turn}", source=source, line=line)
        scores[item] = score
        run.ranks.setdefault(turn, {})[item] = int(rank) if rank.is_integer() else rank
        if not run.tag:
            run.tag = tag
    if run.scores:
        run.last_tag = tag  # trec_eval prints the last line's tag as the run's id
    return run


def read_pool(path: str | os.PathLike) -> dict[str, set[str]]:
    """A pool file (a TREC run, as :func:`format_pool` writes it): the items of each turn."""
    return {turn: set(items) for turn, items in read_run(path).scores.items()}


def read_qrels(path: str | os.PathLike, name: str | None = None, stratified: bool | None = False) -> Qrels:
    """Read TREC qrels (``turn 0 item label``, integer labels, any whitespace); ``stratified`` as in
    :func:`parse_qrels`."""
    return parse_qrels(read_bytes(path), display_name(path), name or stem(path), stratified)


def parse_qrels(data: bytes, source: str, name: str, stratified: bool | None = False) -> Qrels:
    """:func:`read_qrels` on the bytes of a file that ``source`` names in messages.

    ``stratified``: False reads qrels (4 columns); True stratified qrels (``turn 0 item stratum label``,
    as sample_eval.pl reads them, :mod:`castregin.formats.strata`) into a
    :class:`~castregin.data.StratifiedQrels`; None either, as the first line says. Every line has the
    same number of columns, and a (turn, item) is listed once.
    """
    text = decode(data, source)
    _refuse_json(text, source, "qrels (turn 0 item label); give a qrels file (CAsT-ReGIn's are its .qrel files)")
    lines = line_fields(text, source, STRATIFIED_WHAT if stratified else QRELS_WHAT)
    first = next(lines)  # an empty file is an error (_fields)
    chose = stratified is None
    if stratified is None:
        stratified = len(first[1]) == 5
    width = 5 if stratified else 4
    strata = StratifiedQrels(name=name, source=source) if stratified else None
    qrels = strata if strata is not None else Qrels(name=name, source=source)
    by_turn = qrels.labels
    for line, fields in chain([first], lines):
        if len(fields) != width:
            raise InputError(_width_problem(len(fields), stratified, chose), source=source, line=line)
        turn, item = fields[0], fields[2]
        label = _parse_int(fields[-1], "label", source, line)
        labels = by_turn.get(turn) or {}
        if item in labels:
            raise InputError(f"item {item} is {'listed' if stratified else 'judged'} twice for turn {turn}",
                             source=source, line=line)
        if strata is not None:
            strata.add(turn, item, fields[3], label)
        else:
            by_turn.setdefault(turn, labels)[item] = label
    return qrels


def _width_problem(found: int, stratified: bool, chose: bool) -> str:
    """What is wrong with a qrels line of ``found`` columns."""
    if stratified:
        shown = "5 columns (turn 0 item stratum label" + (", as the first line)" if chose else ")")
        hint = ("; plain qrels (turn 0 item label) have no stratum: pool --sample --strata-out writes one"
                if found == 4 and not chose else "")
        return f"expected {shown}, found {found}{hint}"
    hint = ""
    if found == 5:
        hint = ("; the first line has 4 (a stratified qrels, turn 0 item stratum label, has 5 on every line)" if chose
                else "; a stratified qrels (turn 0 item stratum label) is read by evaluate, compare, report, analyze "
                     "and sample_eval only")
    return f"expected 4 columns (turn 0 item label), found {found}{hint}"


def read_turn_list(path: str | os.PathLike) -> list[str]:
    """Turn ids from a file: one id a line, a qrels or run whose turns to take, or turn-ids JSON.

    The official ``2022_evaluation_topics_turn_ids.json`` (``{"132": ["1-1", ...]}``) is read
    as ``132_1-1`` and so on.
    """
    source = display_name(path)
    text = read_text(path)
    if text.lstrip().startswith("{"):
        data = parse_json_text(text, source)
        return turn_ids_from_json(data, source)
    turns: dict[str, None] = {}
    for number, fields in line_fields(text, source, None):
        if len(fields) not in (1, 4, 6):
            raise InputError(
                f"expected a turn id, a qrels line or a run line, found {len(fields)} columns",
                source=source, line=number,
            )
        turns[fields[0]] = None
    if not turns:
        raise InputError("the file is empty, expected turn ids", source=source)
    return list(turns)


def turn_ids_from_json(data, source: str) -> list[str]:
    """Flatten the official turn-ids JSON ``{"132": ["1-1", ...]}`` into ``["132_1-1", ...]``."""
    from . import schema  # jsonschema's tables: only for this file kind

    schema.validate(data, "turn-ids", source)
    return [f"{topic}_{number}" for topic, numbers in data.items() for number in numbers]


def format_score(score: float) -> str:
    """Scores are written as Python's ``repr(float)``: shortest text that reads back exactly
    (:func:`score_texts` writes many at once, the same text)."""
    return repr(float(score))


def score_texts(scores: Sequence[float]) -> list[str]:
    """``repr(float(score))`` of each score (the SPEC's text of a score, as ``format_score`` writes it).

    msgspec writes a list of floats many times faster, in the same shortest digits that round-trip; its
    text differs from ``repr`` only in the exponent (``1e16`` for ``1e+16``, ``1e-7`` and ``0.00001`` for
    ``1e-07`` and ``1e-05``), in ``null`` for NaN and infinities, and for what is not a float (an int
    has no ``.``, a string quotes). A turn whose text shows any of those is written by ``repr``
    (tested against ``repr`` on random doubles of every exponent).
    """
    from msgspec.json import encode  # once a turn: the conversions alone import msgspec

    if not scores:  # "[]" would split into one empty text
        return []
    try:
        text = encode(scores).decode()
    except TypeError:  # not a number msgspec writes (say numpy's float32): repr decides
        text = "e"
    if "e" in text or "n" in text or '"' in text or "0.0000" in text or text.count(".") != len(scores):
        return [repr(float(score)) for score in scores]
    return text[1:-1].split(",")


def format_run(run: Run, tag: str | None = None) -> str:
    """A run as TREC text, tab-separated, turns and items in the run's order."""
    tag = tag or run.tag
    lines = []
    for turn, items in run.scores.items():
        ranks = run.ranks.get(turn, {})
        for item, score in items.items():
            lines.append(f"{turn}\tQ0\t{item}\t{ranks.get(item, 0)}\t{format_score(score)}\t{tag}\n")
    return "".join(lines)


def format_pool(pool: Mapping[str, Iterable[str]], ordered: bool = False) -> str:
    """A pool (items per turn) as a run with rank 1, score 0.0 and tag ``dummytag``, sorted.

    ``ordered``: each turn's items in the order given (the order to judge them), ranked 1, 2, ... and scored
    from the number of items down to 1, so that a reader ordering by rank or by score (trec_eval) keeps it.
    """
    if ordered:
        lines = []
        for turn in sorted(pool):
            items = list(pool[turn])
            lines += [f"{turn}\tQ0\t{item}\t{rank}\t{len(items) - rank + 1}.0\tdummytag\n"
                      for rank, item in enumerate(items, start=1)]
        return "".join(lines)
    return "".join(
        f"{turn}\tQ0\t{item}\t1\t0.0\tdummytag\n" for turn in sorted(pool) for item in sorted(pool[turn])
    )


def format_qrels(qrels: Qrels | Mapping[str, Mapping[str, int]]) -> str:
    """Qrels as TREC text, space-separated, sorted by turn then item id."""
    labels = qrels.labels if isinstance(qrels, Qrels) else qrels
    return "".join(
        f"{turn} 0 {item} {labels[turn][item]}\n" for turn in sorted(labels) for item in sorted(labels[turn])
    )




#: What a file of labels can hold (``castregin agreement``): TREC qrels or crowd judgments (a CSV).
LABEL_SOURCE_KINDS = ("qrels", "crowd", "nuggets")
_QRELS_LINE = r"\S+\s+\S+\s+\S+\s+[+-]?[0-9]+"  # compiled on first use: only agreement tells kinds apart


def label_source_kind(data: bytes, source: str) -> str:
    """``qrels``, ``crowd`` or ``nuggets``: what a file of labels holds, told by its first line that is not blank.

    Four fields apart by white space, the last an integer and no comma (``turn 0 item label``): qrels.
    A JSON object (``{``: a line of nuggetizer's assignment JSONL): nuggets. A comma (a CSV header such as
    ``worker_id,turn_id,item_id,relevance``): crowd judgments. Anything else is an :class:`InputError` that
    asks for the kind (``qrels:PATH``, ``crowd:PATH`` or ``nuggets:PATH``).
    """
    import re

    head = data[:1 << 16].decode("utf-8", errors="replace").lstrip("\ufeff")
    first = next((line for line in head.splitlines() if line.strip()), None)
    hint = "write qrels:PATH, crowd:PATH or nuggets:PATH to say which"
    if first is None:
        raise InputError(f"is empty: neither qrels, crowd judgments nor nugget assignments; {hint}", source=source)
    if "," not in first and re.fullmatch(_QRELS_LINE, first.strip()):
        return "qrels"
    if first.lstrip().startswith("{"):
        return "nuggets"
    if "," in first:
        return "crowd"
    shown = first.strip()[:60]
    raise InputError(f"cannot tell whether this is qrels ('turn 0 item label'), crowd judgments (a CSV with a "
                     f"header) or nugget assignments (JSONL): its first line is {shown!r}; {hint}", source=source)
