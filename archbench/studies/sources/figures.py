"""The published-beside-measured figures: throughput relative to each study's own first point, one line per
series (a source's published curve, this machine's), each point with its 95 % interval of the ratio.

seaborn draws the lines and markers from the precomputed ratios (there are no trials behind a published point, so
seaborn computes no interval: `errorbar=None`); the intervals, computed by the delta method in
archbench.analyze.published_compare, are drawn as error bars on the same axes. Deterministic like every figure of
the report (archbench.render.plots.save_figure, archbench.render.theme.paper_theme).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from archbench.render.plots import FigureFile, interval_errors, save_or_none
from archbench.render.theme import paper_theme


def plot_relative_curves(frame: pd.DataFrame, path: Path, x_label: str) -> FigureFile | None:
    """Columns series, x, ratio, low, high -> a PDF at `path`; None when there is nothing to draw (and an earlier
    run's PDF there is removed)."""
    frame = frame.dropna(subset=["ratio"]) if "ratio" in frame else frame
    if frame.empty:
        return save_or_none(None, path)
    series = list(dict.fromkeys(frame["series"]))
    palette = dict(zip(series, sns.color_palette("colorblind", len(series)), strict=True))
    with paper_theme():
        figure = Figure(figsize=(5.6, 3.2))
        axes = figure.subplots()
        sns.lineplot(
            data=frame,
            x="x",
            y="ratio",
            hue="series",
            style="series",
            markers=True,
            dashes=False,
            palette=palette,
            errorbar=None,
            ax=axes,
        )
        for name, rows in frame.groupby("series", sort=False):
            bounded = rows.dropna(subset=["low", "high"])
            if bounded.empty:
                continue
            errors = interval_errors(bounded, "ratio", "low", "high")
            axes.errorbar(bounded["x"], bounded["ratio"], yerr=errors, fmt="none", ecolor=palette[name], capsize=3)
        axes.axhline(1.0, color=".5", linewidth=0.8, linestyle=":")
        axes.set_xlabel(x_label)
        axes.set_ylabel("throughput relative to 1 worker")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.legend(title=None)
        figure.tight_layout()
        return save_or_none(figure, path)
