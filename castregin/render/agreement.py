"""The agreement between judgment sources as tables: the statistics of each pair, per label, per topic,
the confusion matrices and the alpha of all sources together.

Formats for people (table, markdown, latex) show the chosen sections one after the other, each under a
title; ``csv`` holds one section (long shape, full precision); ``json`` the whole result.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..judging.label_agreement import COUNTS as _COUNTS
from ..judging.label_agreement import STATISTICS as _STATISTICS
from .tables import markdown_escape, number_cell, one_line, render_records, render_table

#: The sections of the result, in the order they are shown (``ranking``, with runs, is rendered by
#: :func:`castregin.render.analysis.ranking_agreement_report`).
SECTIONS = ("pairs", "overall", "labels", "topics", "confusion", "ranking")
#: What people see without --show: the topics are long (one row per topic and pair).
DEFAULT_SECTIONS = ("pairs", "overall", "labels", "confusion")
_ALPHAS = ("alpha_nominal", "alpha_ordinal", "alpha_interval")


def section_records(result: dict, section: str) -> tuple[list[dict], list[str]]:
    """(records, columns) of one section in the long shape a program reads."""
    pairs = result["pairs"]
    if section == "pairs":
        records: list[dict] = []
        for p in pairs:
            records.extend({"a": p["a"], "b": p["b"], "statistic": name, "value": p[name], "ci_low": None,
                            "ci_high": None} for name in _COUNTS)
            records.extend({"a": p["a"], "b": p["b"], "statistic": name, "value": p["statistics"][name],
                            "ci_low": p["intervals"][name][0], "ci_high": p["intervals"][name][1]}
                           for name in _STATISTICS)
        return records, ["a", "b", "statistic", "value", "ci_low", "ci_high"]
    if section == "overall":
        overall = result.get("overall")
        return ([dict(overall)] if overall else []), ["sources", "units", "labels", *_ALPHAS]
    if section == "labels":
        return ([{"a": p["a"], "b": p["b"], **row} for p in pairs for row in p["per_label"]],
                ["a", "b", "label", "count_a", "count_b", "agreed", "specific_agreement"])
    if section == "topics":
        return ([{"a": p["a"], "b": p["b"], **row} for p in pairs for row in p["topics"]],
                ["a", "b", "topic", *_COUNTS, *_STATISTICS])
    if section == "confusion":
        return ([{"a": p["a"], "b": p["b"], "label_a": x, "label_b": y, "count": p["confusion"][i][j]}
                 for p in pairs for i, x in enumerate(p["labels"]) for j, y in enumerate(p["labels"])],
                ["a", "b", "label_a", "label_b", "count"])
    raise ValueError(f"unknown section {section!r}")


def agreement_csv(result: dict, section: str) -> str:
    """One section as CSV, full precision (an undefined value or interval is an empty cell)."""
    records, columns = section_records(result, section)
    return render_records(records, columns, "csv")


def _interval(value, bounds) -> str:
    text = number_cell(value)
    if bounds is not None and None not in bounds and bounds[0] == bounds[0] and bounds[1] == bounds[1]:
        text += f" [{number_cell(bounds[0])}, {number_cell(bounds[1])}]"
    return text


def _title(text: str, fmt: str) -> str:
    """A section's title above its table, on one line (it names sources: a newline in a name would end a LaTeX
    comment early)."""
    if fmt == "markdown":
        return f"**{markdown_escape(text)}**\n\n"
    if fmt == "latex":
        return f"% {one_line(text)}\n"
    return f"{one_line(text)}\n"


#: Up to this many pairs, a column per pair (statistics down the side); more (workers as sources), a row per pair.
_PAIR_COLUMNS = 3


def _pairs_table(result: dict, fmt: str) -> str:
    pairs = result["pairs"]
    if len(pairs) <= _PAIR_COLUMNS:
        header = ["statistic", *(f"{p['a']} vs {p['b']}" for p in pairs)]
        rows = [[name, *(str(p[name]) for p in pairs)] for name in _COUNTS]
        rows += [[name, *(_interval(p["statistics"][name], p["intervals"][name]) for p in pairs)]
                 for name in _STATISTICS]
        numeric = set(range(1, len(header)))
    else:
        header = ["a", "b", *_COUNTS, *_STATISTICS]
        rows = [[p["a"], p["b"], *(str(p[name]) for name in _COUNTS),
                 *(_interval(p["statistics"][name], p["intervals"][name]) for name in _STATISTICS)] for p in pairs]
        numeric = set(range(2, len(header)))
    settings = result["settings"]
    interval = (f"[low, high]: {100 * settings['confidence']:g}% percentile bootstrap interval, "
                f"{settings['samples']} resamples, seed {settings['seed']}"
                if settings["samples"] else "no bootstrap (--samples 0)")
    title = (f"agreement on the (turn, item) pairs both judged; binary: label >= {settings['rel_level']}; "
             f"{interval}")
    note = _negative_note(result)
    return _title(title, fmt) + (_title(note, fmt) if note else "") + render_table(header, rows, fmt, numeric)


#: Sources named in the note on labels below 0; more are counted.
_NOTE_SOURCES = 4


def _negative_note(result: dict) -> str:
    """What was done with labels below 0, when a source holds some ("" otherwise)."""
    below = [(s["name"], s["below_zero"]) for s in result["sources"] if s.get("below_zero")]
    if not below:
        return ""
    counts = ", ".join(f"{name} {n}" for name, n in below[:_NOTE_SOURCES])
    if len(below) > _NOTE_SOURCES:
        counts += f" and {len(below) - _NOTE_SOURCES} more sources"
    if result["settings"].get("negative_labels", "unjudged") == "unjudged":
        return (f"labels below 0 (in the pool but unjudged) are no judgment, left out: {counts} "
                "(--negative-labels category: a label of their own)")
    return f"labels below 0 are a label of their own (--negative-labels category): {counts}"


def _overall_table(result: dict, fmt: str) -> str:
    if not result.get("overall"):
        return ""
    return _records_table(result, "overall",
                          "all sources together: Krippendorff's alpha on the units judged by two sources or more", fmt)


def _records_table(result: dict, section: str, title: str, fmt: str) -> str:
    records, columns = section_records(result, section)
    return _title(title, fmt) + render_records(records, columns, fmt)


def _confusion_tables(result: dict, fmt: str) -> str:
    parts = []
    for p in result["pairs"]:
        labels = [str(label) for label in p["labels"]]
        rows = [[label, *(str(count) for count in counts)]
                for label, counts in zip(labels, p["confusion"], strict=True)]
        parts.append(_title(f"confusion: {p['a']} (rows) x {p['b']} (columns)", fmt)
                     + render_table([f"{p['a']} \\ {p['b']}", *labels], rows, fmt, set(range(1, len(labels) + 1))))
    return "\n".join(parts)


def agreement_text(result: dict, fmt: str = "table", sections: Sequence[str] = DEFAULT_SECTIONS) -> str:
    """The chosen sections of the result for people (``table``, ``markdown`` or ``latex``)."""
    parts = []
    for section in sections:
        if section == "pairs":
            parts.append(_pairs_table(result, fmt))
        elif section == "overall":
            parts.append(_overall_table(result, fmt))
        elif section == "labels":
            parts.append(_records_table(result, "labels", "per label (on the pairs both judged): specific "
                                                          "agreement = 2 agreed / (count_a + count_b)", fmt))
        elif section == "topics":
            parts.append(_records_table(result, "topics", "per topic", fmt))
        elif section == "confusion":
            parts.append(_confusion_tables(result, fmt))
    return "\n".join(part for part in parts if part)


def agreement_output(result: dict, fmt: str, sections: Sequence[str] | None = None, ranking=()) -> str:
    """The text ``castregin agreement`` writes of a comparison between sources: ``json`` the whole result; ``csv``
    one section (``ranking`` being that of the runs); the formats for people the chosen sections (default: all
    but topics, and the ranking of runs where there is one)."""
    from ..formats.common import json_text
    from .analysis import ranking_agreement_report

    if fmt == "json":
        return json_text(result)
    if fmt == "csv":
        if tuple(sections or ()) == ("ranking",):
            return ranking_agreement_report(ranking, "csv")
        return agreement_csv(result, sections[0] if sections else "pairs")
    chosen = sections or (*DEFAULT_SECTIONS, "ranking")
    text = agreement_text(result, fmt, [s for s in chosen if s != "ranking"])
    if ranking and "ranking" in chosen:
        text = "\n".join(part for part in (text, ranking_agreement_report(ranking, fmt)) if part)
    return text


def scatter_files(scatter: str, ranking: Sequence) -> dict[str, bytes]:
    """``--scatter FILE.png``: {path: PNG} of each pair's scores (one pair: FILE.png itself; several:
    FILE-A-B.png each)."""
    import os

    from .analysis import ranking_agreement_plot
    from .report import slug

    if len(ranking) == 1:
        return {scatter: ranking_agreement_plot(ranking[0])}
    stem, suffix = os.path.splitext(os.fspath(scatter))
    return {f"{stem}-{slug(a.qrels_a)}-{slug(a.qrels_b)}{suffix or '.png'}": ranking_agreement_plot(a)
            for a in ranking}
