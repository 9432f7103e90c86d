"""Rendering result tables for people (table, markdown, LaTeX) and for programs (tsv, csv, json).

Machine formats keep full precision and the long shape (one value per row); formats for people
pivot to one row per run and one column per measure, four decimals like trec_eval, and in
markdown and LaTeX the best value of each column in bold, ready to paste into a paper.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from .numbers import fixed

#: The columns of result rows, as in ``--format json`` (castregin.evaluation.evaluate.RESULT_COLUMNS).
_RESULT_COLUMNS = ("run", "qrels", "measure", "turn", "value")

FORMATS = ("table", "tsv", "csv", "json", "markdown", "latex", "trec")


#: Measures whose values are counts, printed as integers (trec_eval prints them so).
COUNT_MEASURES = frozenset({"num_q", "num_topics", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})
#: Measures that are no score: never bold as "best".
NOT_SCORES = frozenset({"num_q", "num_topics", "num_ret", "num_rel", "num_nonrel_judged_ret"})


#: Suffixes of the confidence-interval rows of ``evaluate --ci`` (castregin.evaluation.analysis.CI_LOW/CI_HIGH).
_CI_SUFFIXES = (":ci_low", ":ci_high")

_MARKDOWN_SPECIALS = {"\\": "\\\\", "|": "\\|", "*": "\\*", "`": "\\`", "<": "&lt;"}
#: Characters that would end a line of a table or a title (``\n``, ``\r``, U+2028 ...) or drive a terminal (ESC).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text) -> str:
    """``text`` on one line, each control character shown escaped (``\\n``, ``\\x1b``): a name holding a newline
    (a source named ``NAME=``, a file's stem) cannot break a table's rows, nor an escape code drive the terminal."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), str(text))


def markdown_escape(text) -> str:
    """Plain text for a markdown table cell: ``|`` would end the cell, ``*`` or a backtick start markup,
    a newline end the row."""
    return "".join(_MARKDOWN_SPECIALS.get(ch, ch) for ch in one_line(text))


#: What a spreadsheet runs as a formula when a cell begins with it (OWASP, "CSV injection"): ``=``, ``+``,
#: ``-``, ``@``, and a tab or carriage return before one of those.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: A number as spreadsheets read one (``-0.5``, ``+3``, ``1e-05``): left as it is.
_SPREADSHEET_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def spreadsheet_cell(value):
    """``value`` safe to open in a spreadsheet: text that begins as a formula gets a ``'`` in front (OWASP's
    advice against CSV injection: ``=HYPERLINK(...)`` from a bank shows as text, never runs). Numbers, and
    text that begins otherwise, are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _SPREADSHEET_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_text(header: Sequence[str], rows: Sequence[Sequence], delimiter: str = ",", *,
             spreadsheet: bool = True) -> str:
    """Rows as CSV (or TSV): the csv module's minimal quoting, ``\n`` line ends.

    Every CSV castregin writes is taken to be opened in a spreadsheet (results, crowd task files), so its
    cells go through :func:`spreadsheet_cell`, unless ``spreadsheet`` is False: a file that castregin
    itself reads back, whose ids must stay as they are (the gold.csv of ``tasks``).
    """
    sink = _LinesEndingInNewline()
    # "\r\n" for the writer, which then quotes a cell holding a lone "\r" (with "\n" it does not, and the
    # cell would split its row); each row then ends in "\n" (the sink).
    writer = csv.writer(sink, delimiter=delimiter, lineterminator="\r\n")
    body: Iterable[Sequence[Any]] = rows
    if spreadsheet:
        header = [spreadsheet_cell(cell) for cell in header]
        body = ([spreadsheet_cell(cell) for cell in row] for row in rows)
    writer.writerow(header)
    writer.writerows(body)
    return "".join(sink.lines)


class _LinesEndingInNewline:
    """Where the csv writer writes its rows (one call a row), each row's "\r\n" made "\n"."""

    def __init__(self):
        self.lines: list[str] = []

    def write(self, line: str) -> None:
        self.lines.append(line[:-2] + "\n")


def text_table(header: list[str], rows: list[list[str]], align_right: Collection[int] = frozenset()) -> str:
    """A plain aligned text table with a rule under the header; every cell on one line (:func:`one_line`)."""
    header = [one_line(cell) for cell in header]
    rows = [[one_line(cell) for cell in row] for row in rows]
    widths = ([max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)] if rows
              else [len(h) for h in header])

    def line(cells):
        return "  ".join(
            str(c).rjust(w) if i in align_right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    return "\n".join(out) + "\n"


def markdown_table(header: list[str], rows: list[list[str]], align_right: Collection[int] = frozenset()) -> str:
    """A GitHub-flavoured markdown table."""
    rule = ["---:" if i in align_right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines.extend("| " + " | ".join(r) + " |" for r in rows)
    return "\n".join(lines) + "\n"


_LATEX_SPECIALS = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                   "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text, on one line (:func:`one_line`)."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in one_line(text))


def latex_table(header: list[str], rows: list[list[str]], align_right: Collection[int] = frozenset()) -> str:
    """A booktabs tabular (``\\usepackage{booktabs}``); cells must already be escaped."""
    spec = "".join("r" if i in align_right else "l" for i in range(len(header)))
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule", " & ".join(header) + r" \\", "\\midrule"]
    lines.extend(" & ".join(r) + r" \\" for r in rows)
    lines.extend(["\\bottomrule", "\\end{tabular}"])
    return "\n".join(lines) + "\n"


def render_rows(rows: Sequence[tuple], fmt: str = "table", decimals: int = 4, counts=COUNT_MEASURES) -> str:
    """Render ``(run, qrels, measure, turn, value)`` tuples in one of :data:`FORMATS`.

    ``counts`` names the measures printed as integers in the formats for people (and ``trec``,
    trec_eval's own layout).
    """
    if fmt == "trec":
        from .trec import render_trec_rows

        return render_trec_rows(rows, counts)
    if fmt == "json":
        records = [dict(zip(_RESULT_COLUMNS, (*row[:4], float(row[4])), strict=True)) for row in rows]
        return json.dumps(records, indent=2) + "\n"
    if fmt in ("tsv", "csv"):
        return csv_text(_RESULT_COLUMNS, [(*row[:4], repr(float(row[4]))) for row in rows],
                        "\t" if fmt == "tsv" else ",")
    return render_wide(rows, fmt, decimals, counts)


def column_best(values: dict[tuple, float]) -> dict[tuple[str, str], float]:
    """``{(qrels, measure): the best value}`` of ``{(qrels, run, measure): value}``: what is bold in a column (the
    largest; counts and NaN never)."""
    best: dict[tuple[str, str], float] = {}
    for (qrels, _run, measure), value in values.items():
        if not math.isnan(value) and measure not in NOT_SCORES:
            best[(qrels, measure)] = max(value, best.get((qrels, measure), -math.inf))
    return best


def render_wide(rows: Sequence[tuple], fmt: str, decimals: int = 4, counts=COUNT_MEASURES) -> str:
    """One row per (qrels, run[, turn]), one column per measure; best of each column bold.

    ``rows`` are ``(run, qrels, measure, turn, value)`` tuples. A measure without a value on a row
    (``num_q`` on per-turn rows) shows ``-``; counts are never bold.
    """
    # evaluate --ci's interval rows (MEASURE:ci_low, MEASURE:ci_high) go into their mean's cell.
    measures = list(dict.fromkeys(measure for _, _, measure, _, _ in rows if not measure.endswith(_CI_SUFFIXES)))
    per_turn = any(turn != "all" for _, _, _, turn, _ in rows)
    values: dict[tuple, float]
    if per_turn:
        values = {(qrels, run, turn, measure): value for run, qrels, measure, turn, value in rows}
    else:
        values = {(qrels, run, measure): value for run, qrels, measure, _, value in rows}
    order = list(dict.fromkeys(key[:-1] for key in values))
    show_qrels = len({qrels for _, qrels, _, _, _ in rows}) > 1
    key_header = (["qrels"] if show_qrels else []) + ["run"] + (["turn"] if per_turn else [])

    best = {} if per_turn else column_best(values)

    def cells(key):
        out = []
        for measure in measures:
            value = values.get((*key, measure))
            text = fixed(value, decimals, integer=measure in counts)
            if fmt in ("markdown", "latex") and not per_turn and value is not None \
                    and value == best.get((key[0], measure)):
                text = f"**{text}**" if fmt == "markdown" else f"\\textbf{{{text}}}"
            low, high = values.get((*key, measure + _CI_SUFFIXES[0])), values.get((*key, measure + _CI_SUFFIXES[1]))
            if low is not None and high is not None:
                text += f" [{fixed(low, decimals)}, {fixed(high, decimals)}]"
            out.append(text)
        return out

    table = [[*(list(key) if show_qrels else list(key[1:])), *cells(key)] for key in order]
    header = key_header + measures
    numeric = set(range(len(key_header), len(header)))
    if fmt == "markdown":
        escaped = [[markdown_escape(c) if i < len(key_header) else c for i, c in enumerate(r)] for r in table]
        return markdown_table([markdown_escape(h) for h in header], escaped, numeric)
    if fmt == "latex":
        escaped = [[latex_escape(c) if i < len(key_header) else c for i, c in enumerate(r)] for r in table]
        return latex_table([latex_escape(h) for h in header], escaped, numeric)
    return text_table(header, table, numeric)


#: Formats of record tables (analyses, pool statistics): for people and for programs.
RECORD_FORMATS = ("table", "csv", "json", "markdown", "latex")


def render_records(records: Sequence[dict], columns: Sequence[str], fmt: str = "table", decimals: int = 4) -> str:
    """Rows of named values in one of :data:`RECORD_FORMATS`: ``json`` keeps full precision (NaN as null)
    and every key, ``csv`` full precision in ``columns``; the others four decimals, ints as ints."""
    if fmt == "json":
        from ..formats.common import json_text

        return json_text(list(records))
    if fmt == "csv":
        return csv_text(columns, [[_csv_cell(r.get(c)) for c in columns] for r in records])
    cells = [[number_cell(r.get(c), decimals) for c in columns] for r in records]
    numeric = {i for i, c in enumerate(columns) if any(isinstance(r.get(c), (int, float)) and
                                                      not isinstance(r.get(c), bool) for r in records)}
    return render_table(columns, cells, fmt, numeric)


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], fmt: str = "table",
                 align_right: Collection[int] = frozenset()) -> str:
    """Cells already written as text in a format for people (``table``, ``markdown``, ``latex``), escaped
    for markdown and LaTeX here."""
    if fmt == "markdown":
        return markdown_table([markdown_escape(c) for c in header],
                              [[markdown_escape(x) for x in row] for row in rows], align_right)
    if fmt == "latex":
        return latex_table([latex_escape(c) for c in header], [[latex_escape(x) for x in row] for row in rows],
                           align_right)
    return text_table([str(c) for c in header], [[str(x) for x in row] for row in rows], align_right)


def number_cell(value, decimals: int = 4) -> str:
    """A cell of a table for people: floats with ``decimals`` decimals and no sign on a zero, ``-`` for None."""
    if isinstance(value, float):
        text = fixed(value, decimals)
        # -1e-16 (a sum's rounding error) would read -0.0000, a sign without a number behind it.
        return text[1:] if text[:1] == "-" and set(text[1:]) <= {"0", "."} else text
    return fixed(None) if value is None else str(value)


def _csv_cell(value) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)
