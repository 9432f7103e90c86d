"""The report's figures as PNG bytes, drawn with matplotlib's Agg canvas.

pyplot is never imported: figures are plain :class:`matplotlib.figure.Figure` objects on an Agg
canvas, so nothing depends on (or changes) the process's backend or a display. The PNGs carry no
``Software`` text chunk (which would hold matplotlib's URL and version), so the same data gives
the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..data import topic_of

DPI = 110
POSITIVE, NEGATIVE, BEST, UNJUDGED_COLOUR = "#2b8a3e", "#c92a2a", "#1c1c1c", "#c8c8c8"

_STYLE = {
    "font.family": "DejaVu Sans",  # bundled with matplotlib: no font lookup differs between machines
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#e6e6e6",
    "axes.axisbelow": True,
}


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG bytes (no metadata that would vary or point elsewhere)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def per_turn_plot(turns: Sequence[str], differences: Sequence[float], best: Sequence[float],
                  title: str, ylabel: str) -> bytes:
    """The classic TREC per-topic plot: one bar per turn for ``score - median`` of all runs,
    a tick at ``best score - median``; turns in the given order, topics separated by faint lines."""
    with matplotlib.rc_context(_STYLE):
        width = min(16.0, max(6.0, 0.06 * len(turns) + 2.5))
        figure = _figure(width, 3.4)
        axes = figure.add_subplot()
        positions = range(len(turns))
        colours = [POSITIVE if d >= 0 else NEGATIVE for d in differences]
        axes.bar(positions, differences, width=0.8, color=colours, label="this run − median")
        axes.scatter(positions, best, marker="_", s=40, color=BEST, linewidths=1.2, zorder=3,
                     label="best run − median")
        axes.axhline(0, color="#555555", linewidth=0.8)
        starts = [i for i, turn in enumerate(turns) if i == 0 or topic_of(turn) != topic_of(turns[i - 1])]
        for start in starts[1:]:
            axes.axvline(start - 0.5, color="#dddddd", linewidth=0.6, zorder=0)
        # One tick per topic: 200 turn ids would be unreadable.
        step = max(1, len(starts) // 40)
        axes.set_xticks([starts[i] for i in range(0, len(starts), step)],
                        [topic_of(turns[starts[i]]) for i in range(0, len(starts), step)],
                        rotation=90, fontsize=7)
        axes.set_xlim(-1, max(len(turns), 1))
        axes.set_xlabel("turn (grouped by topic)")
        axes.set_ylabel(ylabel)
        axes.set_title(title, loc="left")
        # Above the axes, beside the title: inside, it would hide the bars of the last turns.
        axes.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False, ncols=2,
                    borderaxespad=0.2)
        return png_bytes(figure)


def label_colours(labels: Sequence) -> list[str]:
    """Colours for the labels in order: a sequential ramp for grades, grey for ``unjudged``."""
    grades = [label for label in labels if label != "unjudged"]
    ramp = matplotlib.colormaps["YlGnBu"]
    shades = {label: ramp(0.25 + 0.7 * i / max(1, len(grades) - 1)) for i, label in enumerate(grades)}
    return [UNJUDGED_COLOUR if label == "unjudged" else matplotlib.colors.to_hex(shades[label])
            for label in labels]


def label_distribution_plot(shares: Mapping[str, Sequence[float]], ranks: Sequence[int], title: str) -> bytes:
    """Stacked bars per rank: the share of turns whose item at that rank has each label.

    ``shares`` maps each label (and ``"unjudged"``) to one share per rank, stacked in that order.
    """
    with matplotlib.rc_context(_STYLE):
        figure = _figure(6.0, 3.2)
        axes = figure.add_subplot()
        bottom = [0.0] * len(ranks)
        labels = list(shares)
        for label, colour in zip(labels, label_colours(labels)):
            values = list(shares[label])
            axes.bar(list(ranks), values, bottom=bottom, color=colour, width=0.75,
                     label=str(label), hatch="//" if label == "unjudged" else None, edgecolor="white",
                     linewidth=0.5)
            bottom = [b + v for b, v in zip(bottom, values)]
        axes.set_xticks(list(ranks))
        axes.set_ylim(0, 1)
        axes.set_xlabel("rank")
        axes.set_ylabel("share of turns")
        axes.set_title(title, loc="left")
        axes.legend(title="label", loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
        return png_bytes(figure)


def label_histogram_plot(counts: Mapping[int, int], title: str) -> bytes:
    """Bars of the number of judgments with each label."""
    with matplotlib.rc_context(_STYLE):
        figure = _figure(4.5, 3.0)
        axes = figure.add_subplot()
        labels = list(counts)
        bars = axes.bar([str(label) for label in labels], [counts[label] for label in labels],
                        color=label_colours(labels), width=0.7)
        axes.bar_label(bars, fontsize=8)
        axes.set_xlabel("label")
        axes.set_ylabel("judgments")
        axes.set_title(title, loc="left")
        axes.margins(y=0.12)
        return png_bytes(figure)
