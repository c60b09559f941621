"""PDF figures from the processed tables.

Deterministic output: no creation date in the PDF metadata, fixed sizes and
fonts, so a figure regenerated from the same data is the same file byte for
byte (the report build can then be checked for drift).

Figures are built with matplotlib's object API (a Figure saved by its own
canvas), never through pyplot's global state: importing this module selects no
backend, so a notebook's inline backend is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter, NullLocator

from archbench.analyze import analysis
from archbench.analyze.analysis import (
    CLIENT_BOUND_THRESHOLD,
    MULTI_LOOP_ARCHITECTURES,
    ORIGINAL_ARCHITECTURES,
    REFERENCE_ARCHITECTURE,
    Comparison,
    Series,
    series_of,
)

POOL_SIZE_FIGURE = "throughput-vs-pool-size.pdf"
CONNECTIONS_FIGURE = "throughput-vs-connections.pdf"
ARCHITECTURES_THROUGHPUT_FIGURE = "architectures-throughput.pdf"
ARCHITECTURES_CONNECTIONS_FIGURE = "architectures-vs-connections.pdf"
ARCHITECTURES_THREADS_FIGURE = "architectures-vs-threads.pdf"
ARCHITECTURES_CPU_FIGURE = "architectures-cpu-per-request.pdf"
REFERENCE_COLOUR = "0.15"
CLIENT_BOUND_HATCH = "////"

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


def _plot_means_and_trials(axes: Axes, one: Series, trials: pd.DataFrame, swept: str, marker: str) -> str:
    """Mean throughput ± 95% CI of `one` against `swept` as a line, its measured trials as faint
    points in the same colour behind it; returns that colour."""
    line = axes.errorbar(
        one.rows[swept],
        one.rows["mean"],
        yerr=_error_bars(one.rows),
        marker=marker,
        markersize=4,
        capsize=3,
        linewidth=1.2,
        label=one.label,
    )
    colour = line[0].get_color()
    points = _trial_points(trials, one, swept)
    axes.scatter(points[swept], points["requests_per_sec"], s=8, color=colour, alpha=0.35, linewidths=0)
    return colour


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
    return FigureFile(save_figure(figure, path), tuple(s.label for s in starvation_series(summary)))


def pool_size_figure(summary: pd.DataFrame, trials: pd.DataFrame) -> Figure | None:
    """Mean throughput ± 95% CI against worker threads N, one line per dispatch mode.

    Source 000 plotted the same axes as a scatter of means; the CIs are what it lacked.
    None when the campaign has no thread-pool series with two or more pool sizes.
    """
    series = pool_size_series(summary)
    if not series:
        return None
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(5.6, 3.4))
        axes = figure.subplots()
        for index, one in enumerate(series):
            _plot_means_and_trials(axes, one, trials, "threads", MARKERS[index % len(MARKERS)])
        axes.set_xlabel("Worker threads N (the accepting/polling thread is one more)")
        axes.set_ylabel("Throughput (requests/s)")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.yaxis.set_major_formatter(FuncFormatter(_thousands))
        axes.set_ylim(bottom=0)
        # Below the axes: inside, the legend would hide the error bars of some series.
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False, ncol=1)
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
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(5.6, 5.0))
        top, bottom = figure.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
        for index, one in enumerate(series):
            marker = MARKERS[index % len(MARKERS)]
            colour = _plot_means_and_trials(top, one, trials, "connections", marker)
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


# --------------------------------------------------------------------------- architecture comparison


def _kilo(value: float, _position: int) -> str:
    """Axis ticks in thousands: 600k, 1.2M for millions."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def family_colours(comparisons: list[Comparison]) -> dict[str, object]:
    """One colour per architecture family, the same in every architecture figure; nginx dark grey."""
    families: list[str] = []
    for one in comparisons:
        for _, row in one.rows.iterrows():
            if row["family"] not in families:
                families.append(row["family"])
    palette = matplotlib.colormaps["tab10" if len(families) <= 10 else "tab20"]
    colours: dict[str, object] = {name: palette(index % palette.N) for index, name in enumerate(families)}
    colours["nginx"] = REFERENCE_COLOUR
    return colours


def _colour(colours: dict[str, object], row: pd.Series) -> object:
    if row["architecture"] == REFERENCE_ARCHITECTURE:
        return REFERENCE_COLOUR
    return colours.get(row["family"], "0.5")


def _categories(comparisons: list[Comparison]) -> list[str]:
    """Family names top to bottom: ours in canonical order, nginx last."""
    ours: list[str] = []
    reference: list[str] = []
    for one in comparisons:
        for _, row in one.rows.iterrows():
            if row["family"] not in ours:
                ours.append(row["family"])
        if one.reference is not None and one.reference["family"] not in reference:
            reference.append(one.reference["family"])
    return ours + reference


def _thread_note(row: pd.Series) -> str:
    units = analysis.THREAD_UNITS.get(str(row["architecture"]))
    if units is None or analysis.is_nan(row.get("threads")):
        return ""
    return f"N={int(float(row['threads']))}"


def _value(row: pd.Series, column: str) -> float:
    value = pd.to_numeric(pd.Series([row.get(column)]), errors="coerce").iloc[0]
    return float(value)


# An interval reaching beyond this many times the largest mean is cut at the axis edge (small n gives
# Student-t intervals many times wider than the means they belong to, which would flatten the means).
CLIP_FACTOR = 2.0
CLIPPED_MARKER = {"x": ">", "y": "^"}


def _axis_limit(means: list[float], highs: list[float]) -> float:
    """The upper axis limit: the largest interval end, unless that is beyond CLIP_FACTOR x the largest mean."""
    means = [m for m in means if not np.isnan(m)]
    ends = [h for h in highs if not np.isnan(h)] + means
    if not means:
        return 1.0
    largest_mean, largest_end = max(means), max(ends)
    if largest_mean > 0 and largest_end > CLIP_FACTOR * largest_mean:
        return 1.5 * largest_mean
    return largest_end * 1.05 if largest_end > 0 else 1.0


def _bar_panels(
    comparisons: list[Comparison], column: str, low: str, high: str, xlabel: str, mark_client_bound: bool
) -> Figure | None:
    """Horizontal bars (mean with 95 % CI) per family, one panel per pipeline depth with its own linear axis.

    Depths differ by an order of magnitude in throughput, so each gets its own scale (split axes) instead of
    one log axis that would flatten the differences within a depth.
    """
    # Like the comparison tables: a depth with a single server compares nothing.
    comparisons = [
        c
        for c in comparisons
        if len(c.all_rows) >= 2 and (not c.all_rows[column].isna().all() or (c.all_rows["n_unsupported"] > 0).any())
    ]
    if not comparisons:
        return None
    categories = _categories(comparisons)
    colours = family_colours(comparisons)
    positions = {name: index for index, name in enumerate(categories)}
    any_client_bound = False
    with matplotlib.rc_context(STYLE):
        height = 0.9 + 0.26 * len(categories)
        figure = Figure(figsize=(6.3, height), layout="constrained")
        panels = figure.subplots(1, len(comparisons), sharey=True, squeeze=False)
        for axes, one in zip(panels[0], comparisons, strict=True):
            rows = one.all_rows
            limit = (
                _axis_limit(
                    [_value(r, column) for _, r in rows.iterrows()], [_value(r, high) for _, r in rows.iterrows()]
                )
                * 1.12
            )  # room for the N= notes
            present = set(one.all_rows["family"])
            for name in categories:
                if name not in present:
                    axes.text(0, positions[name], " not measured", va="center", ha="left", fontsize=7, color="0.55")
            for _, row in one.all_rows.iterrows():
                y = positions[row["family"]]
                value = _value(row, column)
                if np.isnan(value):
                    if (row.get("n_unsupported") or 0) > 0:
                        axes.text(0, y, " unsupported", va="center", ha="left", fontsize=7, color="0.35")
                    continue
                lo, hi = _value(row, low), _value(row, high)
                error = [
                    [max(0.0, value - lo) if not np.isnan(lo) else 0.0],
                    [max(0.0, hi - value) if not np.isnan(hi) else 0.0],
                ]
                client_bound = mark_client_bound and (row.get("n_client_bound") or 0) > 0
                any_client_bound |= client_bound
                axes.barh(
                    y,
                    value,
                    xerr=error,
                    color=_colour(colours, row),
                    height=0.7,
                    capsize=2,
                    error_kw={"elinewidth": 0.8, "ecolor": "0.2"},
                    hatch=CLIENT_BOUND_HATCH if client_bound else None,
                    edgecolor="white" if client_bound else None,
                    linewidth=0,
                )
                end = value + error[1][0]
                if end > limit:  # the interval leaves the axis: cut, and say so with a marker at the edge
                    axes.plot([limit], [y], marker=CLIPPED_MARKER["x"], color="0.2", markersize=3.5, clip_on=False)
                    end = limit
                note = _thread_note(row)
                if note:
                    axes.text(min(end, limit * 0.97), y, f" {note}", va="center", ha="left", fontsize=6.5, color="0.3")
            if one.reference is not None and not np.isnan(_value(one.reference, column)):
                axes.axvline(_value(one.reference, column), color=REFERENCE_COLOUR, linestyle=":", linewidth=0.9)
            if len(one.rows) and one.reference is not None:
                axes.axhline(positions[one.reference["family"]] - 0.5, color="0.6", linewidth=0.6)
            axes.set_xlim(0, limit)
            axes.set_title(f"pipeline depth {one.pipeline} ({one.connections} connections)")
            axes.set_xlabel(xlabel)
            axes.xaxis.set_major_formatter(FuncFormatter(_kilo))
            axes.xaxis.set_major_locator(MaxNLocator(4))
            axes.grid(axis="y", visible=False)
        first = panels[0][0]
        first.set_yticks(range(len(categories)), categories)
        first.set_ylim(len(categories) - 0.5, -0.5)
        if any_client_bound:
            figure.legend(
                handles=[
                    Patch(
                        facecolor="0.7",
                        hatch=CLIENT_BOUND_HATCH,
                        edgecolor="white",
                        label=f"client-bound (wrk CPU ≥ {CLIENT_BOUND_THRESHOLD * 100:.0f} %)",
                    )
                ],
                loc="outside lower center",
                frameon=False,
            )
    return figure


def architectures_throughput_figure(summary: pd.DataFrame) -> Figure | None:
    """Mean throughput with 95 % CI per architecture, one panel per pipeline depth; None without data."""
    return _bar_panels(
        analysis.comparisons(summary),
        "mean",
        "ci95_low",
        "ci95_high",
        "Throughput (requests/s)",
        mark_client_bound=True,
    )


def architectures_cpu_figure(summary: pd.DataFrame) -> Figure | None:
    """Server CPU µs per request with 95 % CI per architecture, one panel per pipeline depth."""
    return _bar_panels(
        analysis.comparisons(summary),
        "server_cpu_us_per_request",
        "server_cpu_us_per_request_ci95_low",
        "server_cpu_us_per_request_ci95_high",
        "Server CPU time per request (µs)",
        mark_client_bound=False,
    )


def _sweep_panels(summary: pd.DataFrame, swept: str, architectures: tuple[str, ...] | None) -> Figure | None:
    """Mean throughput ± 95 % CI against `swept`, one line per family, one panel per pipeline depth."""
    comparisons = analysis.comparisons(summary)
    panels_data = []
    for one in comparisons:
        sweeps = analysis.family_sweeps(summary, one, swept, architectures)
        if sweeps:
            panels_data.append((one, sweeps))
    if not panels_data:
        return None
    colours = family_colours(comparisons)
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(6.3, 3.6), layout="constrained")
        panels = figure.subplots(1, len(panels_data), squeeze=False)
        handles: dict[str, object] = {}
        for axes, (one, sweeps) in zip(panels[0], panels_data, strict=True):
            for index, (label, rows) in enumerate(sweeps):
                first = rows.iloc[0]
                # Lines share x values; a small offset per line keeps their error bars apart.
                offset = (index - (len(sweeps) - 1) / 2) * (0.012 if swept == "connections" else 0.03)
                x = rows[swept].astype(float)
                x = x * 10**offset if swept == "connections" else x + offset
                line = axes.errorbar(
                    x,
                    rows["mean"].astype(float),
                    yerr=_error_bars(rows),
                    marker=MARKERS[index % len(MARKERS)],
                    markersize=3.5,
                    capsize=2.5,
                    linewidth=1.1,
                    color=_colour(colours, first),
                    label=label,
                    linestyle="--" if first["architecture"] == REFERENCE_ARCHITECTURE else "-",
                )
                handles.setdefault(label, line)
            axes.set_title(
                f"pipeline depth {one.pipeline}" + (f" ({one.connections} connections)" if swept == "threads" else "")
            )
            axes.yaxis.set_major_formatter(FuncFormatter(_kilo))
            all_rows = pd.concat([rows for _, rows in sweeps])
            limit = _axis_limit(list(all_rows["mean"].astype(float)), list(all_rows["ci95_high"].astype(float)))
            axes.set_ylim(0, limit)
            for index, (_label, rows) in enumerate(sweeps):
                offset = (index - (len(sweeps) - 1) / 2) * (0.012 if swept == "connections" else 0.03)
                for _, row in rows.iterrows():
                    if analysis.is_nan(row["ci95_high"]) or float(row["ci95_high"]) <= limit:
                        continue
                    x = float(row[swept]) * 10**offset if swept == "connections" else float(row[swept]) + offset
                    axes.plot(
                        [x],
                        [limit],
                        marker=CLIPPED_MARKER["y"],
                        color=_colour(colours, row),
                        markersize=4,
                        clip_on=False,
                    )
            measured = sorted({float(v) for _, rows in sweeps for v in rows[swept]})
            if swept == "connections":
                axes.set_xscale("log")
                axes.xaxis.set_minor_formatter(NullFormatter())
                axes.set_xlabel("Concurrent wrk connections (log scale)")
            else:
                axes.set_xlabel("Threads or worker processes N")
            if len(measured) <= 8:
                axes.set_xticks(measured, [f"{v:,.0f}" for v in measured])
                axes.xaxis.set_minor_locator(NullLocator())
            else:
                axes.xaxis.set_major_formatter(FuncFormatter(_thousands))
                if swept != "connections":
                    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
            axes.grid(axis="x", visible=False)
        panels[0][0].set_ylabel("Throughput (requests/s)")
        figure.legend(
            list(handles.values()),
            list(handles.keys()),
            loc="outside lower center",
            frameon=False,
            ncol=2 if len(handles) > 3 else 1,
        )
    return figure


def architectures_connections_figure(summary: pd.DataFrame) -> Figure | None:
    """Throughput against connections (log x) per architecture at its table thread count; None without a sweep."""
    return _sweep_panels(summary, "connections", None)


def architectures_threads_figure(summary: pd.DataFrame) -> Figure | None:
    """Throughput against threads/workers for the multi-loop architectures; None when none was swept."""
    return _sweep_panels(summary, "threads", MULTI_LOOP_ARCHITECTURES)


def _save_or_none(figure: Figure | None, path: Path, labels: tuple[str, ...] = ()) -> FigureFile | None:
    return None if figure is None else FigureFile(save_figure(figure, path), labels)


def make_figures(summary: pd.DataFrame, trials: pd.DataFrame, figures_dir: Path) -> dict[str, FigureFile | None]:
    """All report figures; a value is None when the campaign lacks the data for it."""
    figures_dir = Path(figures_dir)
    comparisons = analysis.comparisons(summary)
    bar_labels = tuple(f"depth {c.pipeline}" for c in comparisons)

    def sweep_labels(swept: str, architectures: tuple[str, ...] | None) -> tuple[str, ...]:
        return tuple(
            label for one in comparisons for label, _ in analysis.family_sweeps(summary, one, swept, architectures)
        )

    return {
        "pool_size": plot_throughput_vs_pool_size(summary, trials, figures_dir / POOL_SIZE_FIGURE),
        "connections": plot_throughput_vs_connections(summary, trials, figures_dir / CONNECTIONS_FIGURE),
        "architectures_throughput": _save_or_none(
            architectures_throughput_figure(summary), figures_dir / ARCHITECTURES_THROUGHPUT_FIGURE, bar_labels
        ),
        "architectures_connections": _save_or_none(
            architectures_connections_figure(summary),
            figures_dir / ARCHITECTURES_CONNECTIONS_FIGURE,
            sweep_labels("connections", None),
        ),
        "architectures_threads": _save_or_none(
            architectures_threads_figure(summary),
            figures_dir / ARCHITECTURES_THREADS_FIGURE,
            sweep_labels("threads", MULTI_LOOP_ARCHITECTURES),
        ),
        "architectures_cpu": _save_or_none(
            architectures_cpu_figure(summary), figures_dir / ARCHITECTURES_CPU_FIGURE, bar_labels
        ),
    }
