"""Rendering result tables for people (table, markdown, LaTeX) and for programs (tsv, csv, json).

Machine formats keep full precision and the long shape (one value per row); formats for people
pivot to one row per run and one column per measure, four decimals like trec_eval, and in
markdown and LaTeX the best value of each column in bold, ready to paste into a paper.
"""

from __future__ import annotations

import io
import json
import math

import pandas as pd

FORMATS = ("table", "tsv", "csv", "json", "markdown", "latex")


def _cell(value, decimals: int) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{decimals}f}"
    return str(value)


def text_table(header: list[str], rows: list[list[str]], align_right: set[int] = frozenset()) -> str:
    """A plain aligned text table with a rule under the header."""
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)] if rows else [len(h) for h in header]

    def line(cells):
        return "  ".join(
            str(c).rjust(w) if i in align_right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    return "\n".join(out) + "\n"


def markdown_table(header: list[str], rows: list[list[str]], align_right: set[int] = frozenset()) -> str:
    """A GitHub-flavoured markdown table."""
    rule = ["---:" if i in align_right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines.extend("| " + " | ".join(r) + " |" for r in rows)
    return "\n".join(lines) + "\n"


_LATEX_SPECIALS = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                   "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in str(text))


def latex_table(header: list[str], rows: list[list[str]], align_right: set[int] = frozenset()) -> str:
    """A booktabs tabular (``\\usepackage{booktabs}``); cells must already be escaped."""
    spec = "".join("r" if i in align_right else "l" for i in range(len(header)))
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule", " & ".join(header) + r" \\", "\\midrule"]
    lines.extend(" & ".join(r) + r" \\" for r in rows)
    lines.extend(["\\bottomrule", "\\end{tabular}"])
    return "\n".join(lines) + "\n"


def render_results(results: pd.DataFrame, fmt: str = "table", decimals: int = 4) -> str:
    """Render ``run, qrels, measure, turn, value`` rows in one of :data:`FORMATS`."""
    if fmt == "json":
        records = [
            {"run": r.run, "qrels": r.qrels, "measure": r.measure, "turn": r.turn, "value": float(r.value)}
            for r in results.itertuples(index=False)
        ]
        return json.dumps(records, indent=2) + "\n"
    if fmt in ("tsv", "csv"):
        buffer = io.StringIO()
        frame = results.copy()
        frame["value"] = [repr(float(v)) for v in frame["value"]]
        frame.to_csv(buffer, sep="\t" if fmt == "tsv" else ",", index=False, lineterminator="\n")
        return buffer.getvalue()
    return render_wide(results, fmt, decimals)


def render_wide(results: pd.DataFrame, fmt: str, decimals: int = 4) -> str:
    """One row per (qrels, run[, turn]), one column per measure; best of each column bold."""
    measures = list(dict.fromkeys(results["measure"]))
    per_turn = bool((results["turn"] != "all").any())
    keys = ["qrels", "run"] + (["turn"] if per_turn else [])
    order = list(dict.fromkeys(map(tuple, results[keys].itertuples(index=False))))
    values = {(*key, m): v for *key, m, v in results[keys + ["measure", "value"]].itertuples(index=False)}
    show_qrels = results["qrels"].nunique() > 1
    key_header = (["qrels"] if show_qrels else []) + ["run"] + (["turn"] if per_turn else [])

    best: dict[tuple, float] = {}
    if not per_turn:
        for (qrels, _run, measure), value in ((k[:2] + (k[-1],), v) for k, v in values.items()):
            if not math.isnan(value):
                best[(qrels, measure)] = max(value, best.get((qrels, measure), -math.inf))

    def cells(key):
        out = []
        for measure in measures:
            value = values.get((*key, measure), float("nan"))
            text = _cell(value, decimals)
            if fmt in ("markdown", "latex") and not per_turn and value == best.get((key[0], measure)):
                text = f"**{text}**" if fmt == "markdown" else f"\\textbf{{{text}}}"
            out.append(text)
        return out

    rows = [[*(list(key) if show_qrels else list(key[1:])), *cells(key)] for key in order]
    header = key_header + measures
    numeric = set(range(len(key_header), len(header)))
    if fmt == "markdown":
        return markdown_table(header, rows, numeric)
    if fmt == "latex":
        escaped = [[latex_escape(c) if i < len(key_header) else c for i, c in enumerate(r)] for r in rows]
        return latex_table([latex_escape(h) for h in header], escaped, numeric)
    return text_table(header, rows, numeric)
