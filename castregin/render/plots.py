"""The report's figures as PNG bytes, drawn with matplotlib's Agg canvas.

pyplot is never imported: figures are plain :class:`matplotlib.figure.Figure` objects on an Agg
canvas, so nothing depends on (or changes) the process's backend or a display. The PNGs carry no
``Software`` text chunk (which would hold matplotlib's URL and version), so the same data gives
the same bytes.

A report draws two figures per run, so the per-run figures are kept cheap: bars are one
:class:`~matplotlib.collections.PolyCollection` (one artist, not a patch per bar) and margins are
fixed in inches instead of measured by a layout engine. The few figures of the whole set of runs
(the leaderboard, the label histograms) use the constrained layout, whose cost is then negligible.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..data import topic_of

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType
    from numpy.typing import ArrayLike

DPI = 100
POSITIVE, NEGATIVE, BEST, WORST, UNJUDGED_COLOUR = "#2b8a3e", "#c92a2a", "#1c1c1c", "#868e96", "#c8c8c8"
INTERVAL_COLOUR = "#1864ab"

_STYLE: dict[RcKeyType, Any] = {
    "font.family": "DejaVu Sans",  # bundled with matplotlib: no font lookup differs between machines
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#e6e6e6",
    "axes.axisbelow": True,
}


def _figure(width: float, height: float,
            layout: Literal["constrained", "compressed", "tight"] | None = None) -> Figure:
    figure = Figure(figsize=(width, height), dpi=DPI, layout=layout)
    FigureCanvasAgg(figure)
    return figure


def _margins(figure: Figure, left: float, right: float, top: float, bottom: float) -> None:
    """Margins in inches (a layout engine would measure every text of the figure to find them)."""
    width, height = figure.get_size_inches()
    figure.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height,
                           bottom=bottom / height)


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG bytes (no metadata that would vary or point elsewhere)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _encode(canvas: FigureCanvasAgg) -> bytes:
    """The canvas's pixels as PNG bytes, as drawn so far (no metadata)."""
    from PIL import Image  # matplotlib's own PNG writer

    width, height = canvas.get_width_height()
    image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    buffer = io.BytesIO()
    # The figures are opaque: RGB is a quarter less to compress than RGBA, and as many bytes fewer.
    image.convert("RGB").save(buffer, format="png")
    return buffer.getvalue()


class _Blitter:
    """Draws a figure's static artists once and, for each image, only its ``animated`` ones over them.

    Axes, ticks, tick labels and legends are most of the cost of a figure; a report draws the same
    ones for every run, so they are drawn once and copied (matplotlib's blitting, on the Agg canvas).
    """

    def __init__(self, figure: Figure):
        self.figure = figure
        self.background: object | None = None  # the Agg buffer of the static artists, once drawn
        if not isinstance(figure.canvas, FigureCanvasAgg):
            raise TypeError("blitting needs the Agg canvas that _figure attaches")
        self.canvas = figure.canvas

    def png(self, artists) -> bytes:
        """The figure as PNG bytes with ``artists`` (animated ones) drawn over the static rest."""
        canvas = self.canvas
        with mpl.rc_context(_STYLE):
            if self.background is None:
                canvas.draw()  # skips the animated artists
                self.background = canvas.copy_from_bbox(self.figure.bbox)
            else:
                canvas.restore_region(self.background)
            for artist in artists:
                self.figure.draw_artist(artist)
        return _encode(canvas)


def rectangles(x: ArrayLike, heights: ArrayLike, bottoms: ArrayLike | None = None,
               width: float = 0.8) -> np.ndarray:
    """The corners of vertical bars, ``(bars, 4, 2)``, for a :class:`PolyCollection`.

    One collection draws hundreds of bars at the cost of one artist (``axes.bar`` makes one per bar).
    """
    centres = np.asarray(x, dtype=float)
    low = np.zeros(len(centres)) if bottoms is None else np.asarray(bottoms, dtype=float)
    high = low + np.asarray(heights, dtype=float)
    left, right = centres - width / 2, centres + width / 2
    return np.stack([np.column_stack(corner) for corner in ((left, low), (left, high), (right, high), (right, low))],
                    axis=1).reshape(len(centres), 4, 2)


def _set_bars(bars: PolyCollection, corners: np.ndarray) -> None:
    # matplotlib's stubs ask for a sequence of polygons; set_verts takes the (bars, 4, 2) array as well
    # (its documented array-like, and the path it takes without a Python loop).
    bars.set_verts(cast("Sequence[ArrayLike]", corners))


def _limits(*series) -> tuple[float, float]:
    values = np.concatenate([np.asarray(s, dtype=float).ravel() for s in series if s is not None] + [[0.0]])
    low, high = float(np.nanmin(values)), float(np.nanmax(values))
    pad = 0.05 * (high - low) or 0.05
    return low - pad, high + pad


class PerTurnFigure:
    """The classic TREC per-topic plot, for many runs over the same turns.

    One bar per turn for ``run score - median`` of all runs, ticks at ``best - median`` and
    ``worst - median``; turns in the given order, topics separated by faint lines. The axes (one
    scale for every run, from the best and worst) are drawn once; :meth:`png` adds a run's bars and
    title.
    """

    def __init__(self, turns: Sequence[str], best: ArrayLike, worst: ArrayLike | None = None,
                 ylabel: str = ""):
        self.index = {turn: i for i, turn in enumerate(turns)}
        with mpl.rc_context(_STYLE):
            # At most the page's width (1,200 pixels): wider, the browser would only scale it down.
            width = min(12.0, max(6.0, 0.06 * len(turns) + 2.5))
            figure = _figure(width, 3.4)
            _margins(figure, left=0.75, right=0.2, top=0.62, bottom=0.75)
            axes = figure.add_subplot()
            self.bars = PolyCollection([], animated=True)
            axes.add_collection(self.bars)
            zero = axes.axhline(0, color="#555555", linewidth=0.8, animated=True)
            ticks = [axes.scatter(np.arange(len(turns)), values, marker="_", s=40, color=colour, linewidths=1.2,
                                  animated=True) for values, colour in ((best, BEST), (worst, WORST))
                     if values is not None]
            self.title = figure.text(0.1 / width, 1 - 0.08 / 3.4, "", va="top", ha="left", fontsize=10,
                                     animated=True)
            axes.set_ylim(_limits(best, worst))
            _topic_ticks(axes, turns)
            axes.set_ylabel(ylabel)
            # Above the axes, under the title: inside, it would hide the bars of the last turns.
            handles = [Patch(color=POSITIVE, label="this run − median"),
                       Line2D([], [], color=BEST, marker="_", linestyle="", label="best run − median")]
            if worst is not None:
                handles.append(Line2D([], [], color=WORST, marker="_", linestyle="", label="worst run − median"))
            axes.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=8, frameon=False,
                        ncols=3, borderaxespad=0.2)
        self._dynamic = [self.bars, zero, *ticks, self.title]
        self._blitter = _Blitter(figure)

    def png(self, turns: Sequence[str], differences: Sequence[float], title: str) -> bytes:
        """The plot of one run: ``differences`` (score - median) on its ``turns``, and its title."""
        _set_bars(self.bars, rectangles([self.index[turn] for turn in turns], differences))
        self.bars.set_facecolor([POSITIVE if d >= 0 else NEGATIVE for d in differences])
        self.title.set_text(title)
        return self._blitter.png(self._dynamic)


def _topic_ticks(axes, turns: Sequence[str]) -> None:
    starts = [i for i, turn in enumerate(turns) if i == 0 or topic_of(turn) != topic_of(turns[i - 1])]
    if len(starts) > 1:
        axes.vlines([start - 0.5 for start in starts[1:]], 0, 1, transform=axes.get_xaxis_transform(),
                    colors="#dddddd", linewidth=0.6, zorder=0)
    # One tick per topic: 200 turn ids would be unreadable.
    step = max(1, len(starts) // 40)
    axes.set_xticks([starts[i] for i in range(0, len(starts), step)],
                    [topic_of(turns[starts[i]]) for i in range(0, len(starts), step)], rotation=90, fontsize=7)
    axes.set_xlim(-1, max(len(turns), 1))
    axes.set_xlabel("turn (grouped by topic)")


def label_colours(labels: Sequence) -> list[str]:
    """Colours for the labels in order: a sequential ramp for grades, grey for ``unjudged``."""
    grades = [label for label in labels if label != "unjudged"]
    ramp = mpl.colormaps["YlGnBu"]
    shades = {label: ramp(0.25 + 0.7 * i / max(1, len(grades) - 1)) for i, label in enumerate(grades)}
    return [UNJUDGED_COLOUR if label == "unjudged" else mpl.colors.to_hex(shades[label])
            for label in labels]


class LabelsFigure:
    """Stacked bars per rank: the share of turns whose item at that rank has each label.

    For many runs with the same labels and ranks: the axes and the legend are drawn once,
    :meth:`png` adds a run's bars and title.
    """

    def __init__(self, labels: Sequence, ranks: Sequence[int]):
        self.ranks = list(ranks)
        with mpl.rc_context(_STYLE):
            figure = _figure(6.0, 3.2)
            _margins(figure, left=0.65, right=1.1, top=0.5, bottom=0.5)
            axes = figure.add_subplot()
            handles: list[Patch] = []
            self.stacks: list[PolyCollection] = []
            for label, colour in zip(labels, label_colours(list(labels)), strict=True):
                hatch = "//" if label == "unjudged" else None
                stack = PolyCollection([], animated=True, facecolor=colour, edgecolor="white", linewidth=0.5,
                                       hatch=hatch)
                axes.add_collection(stack)
                self.stacks.append(stack)
                handles.append(Patch(label=str(label), facecolor=colour, edgecolor="white", linewidth=0.5,
                                     hatch=hatch))
            axes.set_xticks(self.ranks)
            axes.set_xlim(min(self.ranks, default=1) - 0.6, max(self.ranks, default=1) + 0.6)
            axes.set_ylim(0, 1)
            axes.set_xlabel("rank")
            axes.set_ylabel("share of turns")
            axes.legend(handles=handles, title="label", loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
                        frameon=False)
            self.title = figure.text(0.65 / 6.0, 1 - 0.06 / 3.2, "", va="top", ha="left", animated=True)
        self._blitter = _Blitter(figure)

    def png(self, shares: Sequence[Sequence[float]], title: str) -> bytes:
        """One run's plot: ``shares[i]`` holds the share of the i-th label at each rank."""
        bottom = np.zeros(len(self.ranks))
        for stack, values in zip(self.stacks, shares, strict=True):
            _set_bars(stack, rectangles(self.ranks, values, bottom, width=0.75))
            bottom = bottom + np.asarray(values, dtype=float)
        self.title.set_text(title)
        return self._blitter.png([*self.stacks, self.title])


def label_histogram_plot(counts: Mapping[int, int], title: str) -> bytes:
    """Bars of the number of judgments with each label."""
    with mpl.rc_context(_STYLE):
        figure = _figure(4.5, 3.0, layout="constrained")
        axes = figure.add_subplot()
        labels = list(counts)
        drawn = axes.bar([str(label) for label in labels], [counts[label] for label in labels],
                         color=label_colours(labels), width=0.7)
        axes.bar_label(drawn, fontsize=8)
        axes.set_xlabel("label")
        axes.set_ylabel("judgments")
        axes.set_title(title, loc="left")
        axes.margins(y=0.12)
        return png_bytes(figure)


def leaderboard_plot(names: Sequence[str], means: Sequence[float], lows: Sequence[float],
                     highs: Sequence[float], title: str, xlabel: str) -> bytes:
    """Each run's mean as a dot with its confidence interval as an error bar, the first run on top.

    Runs are rows (long names read horizontally); an interval that is NaN draws no bar.
    """
    with mpl.rc_context({**_STYLE, "axes.grid.axis": "x"}):
        figure = _figure(7.5, 0.8 + 0.22 * max(len(names), 1), layout="constrained")
        axes = figure.add_subplot()
        rows = np.arange(len(names))
        middle = np.asarray(means, dtype=float)
        below = np.nan_to_num(middle - np.asarray(lows, dtype=float), nan=0.0)
        above = np.nan_to_num(np.asarray(highs, dtype=float) - middle, nan=0.0)
        axes.errorbar(middle, rows, xerr=[below, above], fmt="o", color=INTERVAL_COLOUR, ecolor=INTERVAL_COLOUR,
                      markersize=4, elinewidth=1.2, capsize=2.5)
        axes.set_yticks(rows, list(names), fontsize=8)
        axes.set_ylim(len(names) - 0.5, -0.5)
        axes.set_xlabel(xlabel)
        axes.set_title(title, loc="left")
        return png_bytes(figure)


def agreement_scatter_plot(names: Sequence[str], scores_a: Sequence[float], scores_b: Sequence[float],
                           labelled: Sequence[str], title: str, xlabel: str, ylabel: str) -> bytes:
    """Each run's score under one label source (x) against another (y), the line y = x, and the
    ``labelled`` runs named beside their dots (in red; the others grey)."""
    with mpl.rc_context({**_STYLE, "axes.grid.axis": "both"}):
        figure = _figure(5.2, 5.0, layout="constrained")
        axes = figure.add_subplot()
        x, y = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
        # Both axes on one scale around the scores (not from 0: close scores would crowd in a corner).
        both = np.concatenate([x, y])
        low, high = (float(np.nanmin(both)), float(np.nanmax(both))) if both.size else (0.0, 1.0)
        pad = 0.08 * (high - low) or 0.05
        low, high = low - pad, high + pad
        axes.plot([low, high], [low, high], color="#868e96", linewidth=0.8, linestyle="--", label="y = x")
        marked = np.array([name in set(labelled) for name in names], dtype=bool)
        axes.scatter(x[~marked], y[~marked], s=18, color=INTERVAL_COLOUR, label="run")
        if marked.any():
            axes.scatter(x[marked], y[marked], s=22, color=NEGATIVE, label="moves most")
        # Names inside the axes (to the left of dots in the right half), neighbours alternately above and
        # below, each joined to its dot by a line: close dots would otherwise leave it unclear whose it is.
        middle = (low + high) / 2
        shown = sorted((i for i in range(len(names)) if marked[i]), key=lambda i: (y[i], x[i]))
        for order, i in enumerate(shown):
            right_half = x[i] > middle
            axes.annotate(names[i], (x[i], y[i]), xytext=(-14 if right_half else 14, 12 if order % 2 == 0 else -16),
                          textcoords="offset points", ha="right" if right_half else "left", va="center", fontsize=7,
                          color=NEGATIVE, arrowprops={"arrowstyle": "-", "color": NEGATIVE, "linewidth": 0.6,
                                                      "shrinkA": 1, "shrinkB": 3})
        axes.set_xlim(low, high)
        axes.set_ylim(low, high)
        axes.set_aspect("equal")
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        axes.set_title(title, loc="left", fontsize=9)
        axes.legend(loc="lower right", fontsize=8, frameon=False)
        return png_bytes(figure)


def confusion_plot(pairs: Sequence[Mapping[str, Any]]) -> bytes:
    """A heatmap of each pair's confusion matrix (``castregin agreement``), three to a row.

    Rows are the first source's labels, columns the second's; each cell shows its count, and its shade
    the share of its row (so a source that gives one label far more often does not darken a column).
    """
    columns = min(3, max(len(pairs), 1))
    rows = -(-max(len(pairs), 1) // columns)
    with mpl.rc_context({**_STYLE, "axes.grid": False, "axes.spines.top": True, "axes.spines.right": True}):
        figure = _figure(3.6 * columns, 3.4 * rows, layout="constrained")
        ramp = mpl.colormaps["Blues"]
        for k, pair in enumerate(pairs):
            axes = figure.add_subplot(rows, columns, k + 1)
            counts = np.asarray(pair["confusion"], dtype=float).reshape(len(pair["labels"]), len(pair["labels"]))
            totals = counts.sum(axis=1, keepdims=True)
            shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
            axes.imshow(shares, cmap=ramp, vmin=0.0, vmax=1.0)
            labels = [str(label) for label in pair["labels"]]
            axes.set_xticks(range(len(labels)), labels)
            axes.set_yticks(range(len(labels)), labels)
            for (i, j), count in np.ndenumerate(counts):
                axes.text(j, i, str(int(count)), ha="center", va="center", fontsize=8,
                          color="white" if shares[i, j] > 0.6 else "#1c1c1c")
            axes.set_xlabel(str(pair["b"]))
            axes.set_ylabel(str(pair["a"]))
            kappa = pair["statistics"]["kappa"]
            axes.set_title(f"{pair['a']} vs {pair['b']}\nn={pair['both']}, kappa={kappa:.3f}", loc="left", fontsize=9)
        return png_bytes(figure)


#: One colour per judging strategy of ``pool simulate`` (castregin.track.sampling.STRATEGIES).
STRATEGY_COLOURS = {"depth": "#868e96", "mtf": "#1864ab", "bandit": "#2b8a3e"}


def pooling_simulation_plot(points: Sequence[Any], threshold: float, title: str) -> bytes:
    """``pool simulate``: relevant items found (left) and Kendall's tau (right) against judgments spent, a line
    per strategy, the tau threshold dashed."""
    with mpl.rc_context({**_STYLE, "axes.grid.axis": "both"}):
        figure = _figure(9.0, 3.6, layout="constrained")
        found, tau = figure.subplots(1, 2)
        for strategy in dict.fromkeys(point.strategy for point in points):
            line = [point for point in points if point.strategy == strategy]
            x = [point.judgments for point in line]
            colour = STRATEGY_COLOURS.get(strategy, BEST)
            found.plot(x, [point.relevant_found for point in line], color=colour, linewidth=1.4, label=strategy)
            tau.plot(x, [point.kendall_tau for point in line], color=colour, linewidth=1.4, label=strategy)
        tau.axhline(threshold, color=NEGATIVE, linewidth=0.8, linestyle="--", label=f"tau = {threshold:g}")
        found.set_xlabel("judgments")
        found.set_ylabel("relevant items found")
        tau.set_xlabel("judgments")
        tau.set_ylabel("Kendall's tau with the full ranking")
        tau.set_ylim(-1.05, 1.05)
        found.legend(loc="lower right", fontsize=8, frameon=False)
        tau.legend(loc="lower right", fontsize=8, frameon=False)
        figure.suptitle(title, x=0.01, ha="left", fontsize=9)
        return png_bytes(figure)
