"""PDF figures from the processed tables.

Deterministic output: the Agg backend, no creation date in the PDF metadata,
fixed sizes and fonts, so a figure regenerated from the same data is the same
file byte for byte (the report build can then be checked for drift).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display on build machines or CI

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter  # noqa: E402

from archbench.analysis import Series, series_of  # noqa: E402

POOL_SIZE_FIGURE = "throughput-vs-pool-size.pdf"
CONNECTIONS_FIGURE = "throughput-vs-connections.pdf"

# Readable at \linewidth in an 11pt article; one style for every figure.
STYLE: dict[str, object] = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "pdf.fonttype": 42,  # TrueType: text stays selectable and searchable in the PDF
    "svg.hashsalt": "archbench",
}
PDF_METADATA = {"CreationDate": None, "ModDate": None, "Creator": "archbench", "Producer": None}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")


@dataclass(frozen=True)
class FigureFile:
    path: Path
    series_labels: tuple[str, ...]


def save_figure(figure: Figure, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="pdf", metadata=PDF_METADATA, bbox_inches="tight")
    plt.close(figure)
    return path


def _thousands(value: float, _position: int) -> str:
    return f"{value:,.0f}"


def _trial_points(trials: pd.DataFrame, series: Series, swept: str) -> pd.DataFrame:
    """Individual measured ok trials of a series, to show the spread behind each mean."""
    if trials is None or trials.empty:
        return pd.DataFrame(columns=[swept, "requests_per_sec"])
    ids = set(series.rows["config_id"])
    chosen = trials[trials["config_id"].isin(ids) & ~trials["warmup"].astype(bool) & (trials["status"] == "ok")]
    return chosen[[swept, "requests_per_sec"]].dropna()


def _error_bars(rows: pd.DataFrame) -> np.ndarray:
    """Asymmetric-capable yerr from the CI columns; NaN (n < 2) draws no bar."""
    mean = rows["mean"].to_numpy(dtype=float)
    low = np.clip(mean - rows["ci95_low"].to_numpy(dtype=float), 0, None)
    high = np.clip(rows["ci95_high"].to_numpy(dtype=float) - mean, 0, None)
    return np.vstack([np.nan_to_num(low), np.nan_to_num(high)])


def pool_size_series(summary: pd.DataFrame) -> list[Series]:
    return [s for s in series_of(summary, "threads") if s.first["architecture"] == "thread_pool"]


def plot_throughput_vs_pool_size(summary: pd.DataFrame, trials: pd.DataFrame, path: Path) -> FigureFile | None:
    """The pool-size figure as a PDF; None when the campaign cannot produce it."""
    figure = pool_size_figure(summary, trials)
    if figure is None:
        return None
    return FigureFile(save_figure(figure, path), tuple(s.label for s in pool_size_series(summary)))


def plot_throughput_vs_connections(summary: pd.DataFrame, trials: pd.DataFrame, path: Path) -> FigureFile | None:
    """The connection-count figure as a PDF; None when the campaign cannot produce it."""
    figure = connections_figure(summary, trials)
    if figure is None:
        return None
    return FigureFile(save_figure(figure, path), tuple(s.label for s in series_of(summary, "connections")))


def pool_size_figure(summary: pd.DataFrame, trials: pd.DataFrame) -> Figure | None:
    """Mean throughput ± 95% CI against worker threads N, one line per dispatch mode.

    Source 000 plotted the same axes as a scatter of means; the CIs are what it lacked.
    None when the campaign has no thread-pool series with two or more pool sizes.
    """
    series = pool_size_series(summary)
    if not series:
        return None
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(figsize=(5.6, 3.4))
        for index, one in enumerate(series):
            marker = MARKERS[index % len(MARKERS)]
            points = _trial_points(trials, one, "threads")
            line = axes.errorbar(
                one.rows["threads"],
                one.rows["mean"],
                yerr=_error_bars(one.rows),
                marker=marker,
                markersize=4,
                capsize=3,
                linewidth=1.2,
                label=one.label,
            )
            colour = line[0].get_color()
            axes.scatter(points["threads"], points["requests_per_sec"], s=8, color=colour, alpha=0.35, linewidths=0)
        axes.set_xlabel("Worker threads N (the accepting/polling thread is one more)")
        axes.set_ylabel("Throughput (requests/s)")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.yaxis.set_major_formatter(FuncFormatter(_thousands))
        axes.set_ylim(bottom=0)
        # Below the axes: inside, the legend would hide the error bars of some series.
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False, ncol=1)
    return figure


def connections_figure(summary: pd.DataFrame, trials: pd.DataFrame) -> Figure | None:
    """Throughput (top) and starved connections (bottom) against connections, log x.

    The lower panel is there because a starving server can post a fine
    throughput from the few connections it serves; wrk does not report the rest.
    """
    series = series_of(summary, "connections")
    if not series:
        return None
    with plt.rc_context(STYLE):
        figure, (top, bottom) = plt.subplots(
            2, 1, figsize=(5.6, 5.0), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
        )
        for index, one in enumerate(series):
            marker = MARKERS[index % len(MARKERS)]
            line = top.errorbar(
                one.rows["connections"],
                one.rows["mean"],
                yerr=_error_bars(one.rows),
                marker=marker,
                markersize=4,
                capsize=3,
                linewidth=1.2,
                label=one.label,
            )
            colour = line[0].get_color()
            points = _trial_points(trials, one, "connections")
            top.scatter(points["connections"], points["requests_per_sec"], s=8, color=colour, alpha=0.35, linewidths=0)
            bottom.plot(
                one.rows["connections"],
                one.rows["starved_connections_mean"],
                marker=marker,
                markersize=4,
                linewidth=1.2,
                color=colour,
            )
        top.set_xscale("log")
        top.set_ylabel("Throughput (requests/s)")
        top.yaxis.set_major_formatter(FuncFormatter(_thousands))
        top.set_ylim(bottom=0)
        bottom.legend(
            *top.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False, ncol=1
        )
        bottom.set_xscale("log")
        # Plain "1, 10, 100, 1,000" instead of 10^k mathtext: connection counts are read as counts.
        bottom.xaxis.set_major_formatter(FuncFormatter(_thousands))
        bottom.xaxis.set_minor_formatter(NullFormatter())
        bottom.set_xlabel("Concurrent wrk connections (log scale)")
        bottom.set_ylabel("Starved connections\n(mean per trial)")
        bottom.set_ylim(bottom=0)
        bottom.yaxis.set_major_formatter(FuncFormatter(_thousands))
    return figure


def make_figures(summary: pd.DataFrame, trials: pd.DataFrame, figures_dir: Path) -> dict[str, FigureFile | None]:
    """All report figures; a value is None when the campaign lacks the data for it."""
    figures_dir = Path(figures_dir)
    return {
        "pool_size": plot_throughput_vs_pool_size(summary, trials, figures_dir / POOL_SIZE_FIGURE),
        "connections": plot_throughput_vs_connections(summary, trials, figures_dir / CONNECTIONS_FIGURE),
    }
