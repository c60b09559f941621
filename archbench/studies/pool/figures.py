"""The pool study's figures (pool size, connections and starvation), drawn with the Figure API of
archbench.render.plots (saving, `t_interval`, `means_with_trials`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, NullFormatter

from archbench.analyze.analysis import ORIGINAL_ARCHITECTURES, Series, series_of
from archbench.analyze.outliers import measured_ok_undisturbed
from archbench.render.plots import (
    FigureFile,
    legend_below,
    means_with_trials,
    save_figure,  # noqa: F401 (tests save a figure through this module, the figures' first home)
    save_or_none,
    seaborn_legend,
    series_style,
    thousands,
    trials_of_configs,
)
from archbench.render.theme import architecture_palette, paper_theme

POOL_SIZE_FIGURE = "throughput-vs-pool-size.pdf"
CONNECTIONS_FIGURE = "throughput-vs-connections.pdf"
SERIES = "series"  # the hue column of the trial frames handed to seaborn


def series_trials(trials: pd.DataFrame, series: list[Series], swept: str) -> pd.DataFrame:
    """One frame for seaborn: each series' trials behind its means (measured, ok, not disturbed: summary.csv's
    rows), `swept` as float, the series label in SERIES."""
    measured = measured_ok_undisturbed(trials)
    frames = [
        trials_of_configs(measured, {str(c) for c in one.rows["config_id"]})[[swept, "requests_per_sec"]]
        .dropna()
        .assign(**{SERIES: one.label})
        for one in series
    ]
    data = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[swept, "requests_per_sec"])
    return data.astype({swept: float, "requests_per_sec": float})


def series_palette(series: list[Series]) -> dict[str, object]:
    return architecture_palette([s.label for s in series], [str(s.first["architecture"]) for s in series])


def plot_means_and_trials(axes: Axes, series: list[Series], trials: pd.DataFrame, swept: str) -> dict[str, object]:
    """Mean throughput ± 95 % CI against `swept`, a line per series, single trials behind (means_with_trials);
    returns the palette {label: colour}."""
    palette = series_palette(series)
    data = series_trials(trials, series, swept)
    means_with_trials(axes, data, swept, "requests_per_sec", SERIES, [s.label for s in series], palette)
    return palette


def pool_size_series(summary: pd.DataFrame) -> list[Series]:
    return [s for s in series_of(summary, "threads") if s.first["architecture"] == "thread_pool"]


def pool_size_figure(summary: pd.DataFrame, trials: pd.DataFrame) -> Figure | None:
    """Mean throughput ± 95% CI against worker threads N, one line per dispatch mode, single trials behind.

    Source 000 plotted the same axes as a scatter of means; the CIs are what it lacked.
    None when the campaign has no thread-pool series with two or more pool sizes.
    """
    series = pool_size_series(summary)
    if not series:
        return None
    with paper_theme():
        figure = Figure(figsize=(5.6, 3.4))
        axes = figure.subplots()
        plot_means_and_trials(axes, series, trials, "threads")
        axes.set_xlabel("Worker threads N (the accepting/polling thread is one more)")
        axes.set_ylabel("Throughput (requests/s)")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.yaxis.set_major_formatter(thousands)
        axes.set_ylim(bottom=0)
        # Below the axes: inside, the legend would hide the error bars of some series.
        legend_below(axes, *axes.get_legend_handles_labels(), -0.16, 1)
    return figure


def starvation_series(summary: pd.DataFrame) -> list[Series]:
    """Connection sweeps of source 000's designs (blocking, thread per connection, thread pool);
    the event-driven architectures and nginx have their own connection figure."""
    if summary.empty:
        return []
    return series_of(summary[summary["architecture"].isin(ORIGINAL_ARCHITECTURES)], "connections")


def connections_figure(summary: pd.DataFrame, trials: pd.DataFrame) -> Figure | None:
    """Throughput (top) and starved connections (bottom) against connections, log x.

    The lower panel is there because a starving server can post a fine
    throughput from the few connections it serves; wrk does not report the rest.
    """
    series = starvation_series(summary)
    if not series:
        return None
    with paper_theme():
        figure = Figure(figsize=(5.6, 5.0))
        top, bottom = figure.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
        top.set_xscale("log")
        palette = plot_means_and_trials(top, series, trials, "connections")
        starved = pd.concat([s.rows.assign(**{SERIES: s.label}) for s in series], ignore_index=True)
        starved = starved.astype({"connections": float, "starved_connections_mean": float})
        sns.lineplot(
            data=starved,
            x="connections",
            y="starved_connections_mean",
            hue=SERIES,
            hue_order=list(palette),
            palette=palette,
            **series_style(SERIES, list(palette)),
            errorbar=None,
            legend=False,
            ax=bottom,
        )
        for line in bottom.lines:  # a design that starves nobody sits on the x axis: keep it above the frame
            line.set_clip_on(False)
            line.set_zorder(3)
        top.set_xlabel("")
        top.set_ylabel("Throughput (requests/s)")
        top.yaxis.set_major_formatter(thousands)
        top.set_ylim(bottom=0)
        legend_below(bottom, *seaborn_legend(top), -0.3, 1)
        bottom.set_xscale("log")
        # Plain "1, 10, 100, 1,000" instead of 10^k mathtext: connection counts are read as counts.
        bottom.xaxis.set_major_formatter(thousands)
        bottom.xaxis.set_minor_formatter(NullFormatter())
        bottom.set_xlabel("Concurrent wrk connections (log scale)")
        bottom.set_ylabel("Starved connections\n(mean per trial)")
        bottom.set_ylim(bottom=0)
        bottom.yaxis.set_major_formatter(thousands)
    return figure


def make_pool_figures(summary: pd.DataFrame, trials: pd.DataFrame, figures_dir: Path) -> dict[str, FigureFile | None]:
    """The pool-size and connection figures; a value is None when the campaign lacks the data for it."""
    figures_dir = Path(figures_dir)
    return {
        "pool_size": save_or_none(
            pool_size_figure(summary, trials),
            figures_dir / POOL_SIZE_FIGURE,
            tuple(s.label for s in pool_size_series(summary)),
        ),
        "connections": save_or_none(
            connections_figure(summary, trials),
            figures_dir / CONNECTIONS_FIGURE,
            tuple(s.label for s in starvation_series(summary)),
        ),
    }
