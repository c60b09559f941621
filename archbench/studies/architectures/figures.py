"""The architecture-comparison figures: throughput and CPU per request as bars (mean, 95 % CI, single
trials) per family with one panel per pipeline depth, and throughput against connections or threads per
family. One colour per architecture (theme.architecture_palette), the same in every figure."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, NullFormatter, NullLocator

from archbench.analyze import analysis
from archbench.analyze.analysis import (
    REFERENCE_ARCHITECTURE,
    Comparison,
    multi_loop_architectures,
)
from archbench.analyze.bottleneck import SERVER
from archbench.analyze.outliers import measured_ok_undisturbed
from archbench.analyze.values import number
from archbench.render.latex import bottleneck_of
from archbench.render.plots import (
    CLIPPED_MARKER,
    FigureFile,
    axis_limit,
    figure_legend,
    interval_errors,
    kilo,
    label_colours,
    mean_error_bars,
    save_or_none,
    thousands,
    trials_of_configs,
)
from archbench.render.theme import MARKERS, REFERENCE_COLOUR, paper_theme

CLIENT_BOUND_HATCH = "////"
ARCHITECTURES_THROUGHPUT_FIGURE = "architectures-throughput.pdf"
ARCHITECTURES_CONNECTIONS_FIGURE = "architectures-vs-connections.pdf"
ARCHITECTURES_THREADS_FIGURE = "architectures-vs-threads.pdf"
ARCHITECTURES_CPU_FIGURE = "architectures-cpu-per-request.pdf"


def _colour(colours: dict[str, object], row: pd.Series) -> object:
    """A row's colour from its family's (`label_colours`: one colour per architecture family, the same in every
    architecture figure, its architecture's hue, a second family of one architecture a shade of it), nginx dark
    grey."""
    if row["architecture"] == REFERENCE_ARCHITECTURE:
        return REFERENCE_COLOUR
    return colours.get(row["family"], "0.5")


def _categories(comparisons: list[Comparison]) -> list[str]:
    """Family names top to bottom: ours in canonical order, nginx last."""
    ours = dict.fromkeys(family for one in comparisons for family in one.rows["family"])
    reference = dict.fromkeys(one.reference["family"] for one in comparisons if one.reference is not None)
    return list(ours) + list(reference)


def _thread_note(row: pd.Series) -> str:
    units = analysis.thread_units().get(str(row["architecture"]))
    if units is None or analysis.is_nan(row.get("threads")):
        return ""
    return f"N={int(float(row['threads']))}"


@dataclass(frozen=True)
class BarMetric:
    """What a bar figure shows: the summary's mean and CI columns, the trials' column behind them, the axis."""

    column: str
    low: str
    high: str
    trial_column: str
    xlabel: str
    mark_client_bound: bool


THROUGHPUT_BARS = BarMetric("mean", "ci95_low", "ci95_high", "requests_per_sec", "Throughput (requests/s)", True)
CPU_BARS = BarMetric(
    "server_cpu_us_per_request",
    "server_cpu_us_per_request_ci95_low",
    "server_cpu_us_per_request_ci95_high",
    "server_cpu_us_per_request",
    "Server CPU time per request (µs)",
    False,
)


def _bar_trials(trials: pd.DataFrame | None, rows: pd.DataFrame, metric: BarMetric) -> pd.DataFrame:
    """The single trials behind a panel's bars, each with its bar's family (the y category)."""
    family_of = dict(zip(rows["config_id"].astype(str), rows["family"], strict=True))
    # summary.csv's rows: its means and intervals leave disturbed trials out, so the dots do too
    chosen = trials_of_configs(None if trials is None else measured_ok_undisturbed(trials), set(family_of))
    if chosen.empty or metric.trial_column not in chosen:
        return pd.DataFrame(columns=["family", metric.trial_column])
    points = pd.DataFrame(
        {"family": chosen["config_id"].astype(str).map(family_of), metric.trial_column: chosen[metric.trial_column]}
    )
    return points.dropna().astype({metric.trial_column: float})


def _draw_bars(
    axes: Axes, rows: pd.DataFrame, metric: BarMetric, categories: list[str], palette: dict[str, object]
) -> pd.DataFrame:
    """The panel's bars (seaborn barplot of the summary's means, one per family) and their 95 % CIs from the
    summary's interval columns; returns the rows drawn (those with a value)."""
    drawn = rows[pd.to_numeric(rows[metric.column], errors="coerce").notna()].copy()
    if drawn.empty:
        return drawn
    drawn[metric.column] = drawn[metric.column].astype(float)
    sns.barplot(
        data=drawn, x=metric.column, y="family", order=categories, hue="family", hue_order=categories,
        palette=palette, orient="y", errorbar=None, width=0.7, linewidth=0, legend=False, ax=axes,
    )  # fmt: skip
    axes.errorbar(
        drawn[metric.column].to_numpy(dtype=float),
        [categories.index(f) for f in drawn["family"]],
        xerr=interval_errors(drawn, metric.column, metric.low, metric.high),
        fmt="none",
        ecolor="0.2",
        elinewidth=0.8,
        capsize=2,
        zorder=3,
    )
    return drawn


def _bar_panels(comparisons: list[Comparison], metric: BarMetric, trials: pd.DataFrame | None) -> Figure | None:
    """Horizontal bars (mean with 95 % CI) per family, one panel per pipeline depth with its own linear axis,
    the single trials as dots over each bar when `trials` is given.

    Depths differ by an order of magnitude in throughput, so each gets its own scale (split axes) instead of
    one log axis that would flatten the differences within a depth.
    """
    column = metric.column
    # Like the comparison tables: a depth with a single server compares nothing.
    comparisons = [
        c
        for c in comparisons
        if len(c.all_rows) >= 2 and (not c.all_rows[column].isna().all() or (c.all_rows["n_unsupported"] > 0).any())
    ]
    if not comparisons:
        return None
    categories = _categories(comparisons)
    colours = label_colours([one.all_rows for one in comparisons], "family")
    palette = {row["family"]: _colour(colours, row) for one in comparisons for _, row in one.all_rows.iterrows()}
    positions = {name: index for index, name in enumerate(categories)}
    any_client_bound = False
    with paper_theme():
        height = 0.9 + 0.26 * len(categories)
        figure = Figure(figsize=(6.3, height), layout="constrained")
        panels = figure.subplots(1, len(comparisons), sharey=True, squeeze=False)
        for axes, one in zip(panels[0], comparisons, strict=True):
            rows = one.all_rows
            values = [number(r.get(column)) for _, r in rows.iterrows()]
            highs = [number(r.get(metric.high)) for _, r in rows.iterrows()]
            limit = axis_limit(values, highs) * 1.12  # room for the N= notes
            drawn = _draw_bars(axes, rows, metric, categories, palette)
            points = _bar_trials(trials, drawn, metric) if not drawn.empty else pd.DataFrame()
            if not points.empty:
                sns.swarmplot(
                    data=points, x=metric.trial_column, y="family", order=categories, orient="y", color="0.1",
                    size=2.2, alpha=0.75, linewidth=0, legend=False, ax=axes, zorder=4, warn_thresh=1.0,
                )  # fmt: skip
            present = set(rows["family"])
            for name in categories:
                if name not in present:
                    axes.text(0, positions[name], " not measured", va="center", ha="left", fontsize=7, color="0.55")
            for _, row in rows.iterrows():
                y = positions[row["family"]]
                value = number(row.get(column))
                if np.isnan(value):
                    if (row.get("n_unsupported") or 0) > 0:
                        axes.text(0, y, " unsupported", va="center", ha="left", fontsize=7, color="0.35")
                    continue
                # Hatched: the server was not the sole bottleneck of most trials (archbench.analyze.bottleneck).
                client_bound = metric.mark_client_bound and bottleneck_of(row) not in ("", SERVER)
                any_client_bound |= client_bound
                if client_bound:
                    for bar in axes.patches:
                        if abs(bar.get_y() + bar.get_height() / 2 - y) < 1e-6:
                            bar.set_hatch(CLIENT_BOUND_HATCH)
                            bar.set_edgecolor("white")
                high = number(row.get(metric.high))
                end = max(value, high) if not np.isnan(high) else value
                if end > limit:  # the interval leaves the axis: cut, and say so with a marker at the edge
                    axes.plot([limit], [y], marker=CLIPPED_MARKER["x"], color="0.2", markersize=3.5, clip_on=False)
                    end = limit
                note = _thread_note(row)
                if note:
                    axes.text(min(end, limit * 0.97), y, f" {note}", va="center", ha="left", fontsize=6.5, color="0.3")
            if one.reference is not None and not np.isnan(number(one.reference.get(column))):
                axes.axvline(number(one.reference.get(column)), color=REFERENCE_COLOUR, linestyle=":", linewidth=0.9)
            if len(one.rows) and one.reference is not None:
                axes.axhline(positions[one.reference["family"]] - 0.5, color="0.6", linewidth=0.6)
            axes.set_xlim(0, limit)
            # Two lines: side by side, the panels' one-line titles overprinted each other.
            axes.set_title(f"pipeline depth {one.pipeline}\n({one.connections} connections)")
            axes.set_xlabel(metric.xlabel)
            axes.set_ylabel("")
            axes.xaxis.set_major_formatter(kilo)
            axes.xaxis.set_major_locator(MaxNLocator(4))
            axes.grid(axis="y", visible=False)
        first = panels[0][0]
        first.set_yticks(range(len(categories)), categories)
        first.set_ylim(len(categories) - 0.5, -0.5)
        if any_client_bound:
            figure_legend(
                figure,
                [Patch(facecolor="0.7", hatch=CLIENT_BOUND_HATCH, edgecolor="white")],
                ["not bound by the server alone (wrk, both, the waits or neither; see the tables)"],
            )
    return figure


def architectures_throughput_figure(summary: pd.DataFrame, trials: pd.DataFrame | None = None) -> Figure | None:
    """Mean throughput with 95 % CI per architecture, one panel per pipeline depth (single trials as dots
    when `trials` is given); None without data."""
    return _bar_panels(analysis.comparisons(summary), THROUGHPUT_BARS, trials)


def architectures_cpu_figure(summary: pd.DataFrame, trials: pd.DataFrame | None = None) -> Figure | None:
    """Server CPU µs per request with 95 % CI per architecture, one panel per pipeline depth."""
    return _bar_panels(analysis.comparisons(summary), CPU_BARS, trials)


def _shifted(x: pd.Series | float, index: int, count: int, swept: str) -> pd.Series | float:
    """Line `index` of `count`'s x values: lines share x values, and a small offset per line (a factor on the
    log axis of connections) keeps their error bars apart."""
    offset = (index - (count - 1) / 2) * (0.012 if swept == "connections" else 0.03)
    return x * 10**offset if swept == "connections" else x + offset


def _sweep_panels(summary: pd.DataFrame, swept: str, architectures: tuple[str, ...] | None) -> Figure | None:
    """Mean throughput ± 95 % CI against `swept`, one line per family, one panel per pipeline depth."""
    comparisons = analysis.comparisons(summary)
    panels_data = [
        (one, sweeps) for one in comparisons if (sweeps := analysis.family_sweeps(summary, one, swept, architectures))
    ]
    if not panels_data:
        return None
    colours = label_colours([one.all_rows for one in comparisons], "family")
    with paper_theme():
        figure = Figure(figsize=(6.3, 3.6), layout="constrained")
        panels = figure.subplots(1, len(panels_data), squeeze=False)
        handles: dict[str, object] = {}
        for axes, (one, sweeps) in zip(panels[0], panels_data, strict=True):
            for index, (label, rows) in enumerate(sweeps):
                first = rows.iloc[0]
                line = axes.errorbar(
                    _shifted(rows[swept].astype(float), index, len(sweeps), swept),
                    rows["mean"].astype(float),
                    yerr=mean_error_bars(rows),
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
            axes.yaxis.set_major_formatter(kilo)
            all_rows = pd.concat([rows for _, rows in sweeps])
            limit = axis_limit(list(all_rows["mean"].astype(float)), list(all_rows["ci95_high"].astype(float)))
            axes.set_ylim(0, limit)
            for index, (_label, rows) in enumerate(sweeps):
                for _, row in rows[rows["ci95_high"].astype(float) > limit].iterrows():  # cut at the axis edge
                    axes.plot(
                        [_shifted(float(row[swept]), index, len(sweeps), swept)],
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
                axes.xaxis.set_major_formatter(thousands)
                if swept != "connections":
                    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
            axes.grid(axis="x", visible=False)
        panels[0][0].set_ylabel("Throughput (requests/s)")
        figure_legend(figure, list(handles.values()), list(handles), 2 if len(handles) > 3 else 1)
    return figure


def architectures_connections_figure(summary: pd.DataFrame) -> Figure | None:
    """Throughput against connections (log x) per architecture at its table thread count; None without a sweep."""
    return _sweep_panels(summary, "connections", None)


def architectures_threads_figure(summary: pd.DataFrame) -> Figure | None:
    """Throughput against threads/workers for the multi-loop architectures; None when none was swept."""
    return _sweep_panels(summary, "threads", multi_loop_architectures())


def make_architecture_figures(
    summary: pd.DataFrame, trials: pd.DataFrame, figures_dir: Path
) -> dict[str, FigureFile | None]:
    """The architecture comparison's figures; a value is None when the campaign lacks the data for it."""
    figures_dir = Path(figures_dir)
    comparisons = analysis.comparisons(summary)
    bar_labels = tuple(f"depth {c.pipeline}" for c in comparisons)

    def sweep_labels(swept: str, architectures: tuple[str, ...] | None) -> tuple[str, ...]:
        return tuple(
            label for one in comparisons for label, _ in analysis.family_sweeps(summary, one, swept, architectures)
        )

    return {
        "architectures_throughput": save_or_none(
            architectures_throughput_figure(summary, trials), figures_dir / ARCHITECTURES_THROUGHPUT_FIGURE, bar_labels
        ),
        "architectures_connections": save_or_none(
            architectures_connections_figure(summary),
            figures_dir / ARCHITECTURES_CONNECTIONS_FIGURE,
            sweep_labels("connections", None),
        ),
        "architectures_threads": save_or_none(
            architectures_threads_figure(summary),
            figures_dir / ARCHITECTURES_THREADS_FIGURE,
            sweep_labels("threads", multi_loop_architectures()),
        ),
        "architectures_cpu": save_or_none(
            architectures_cpu_figure(summary, trials), figures_dir / ARCHITECTURES_CPU_FIGURE, bar_labels
        ),
    }
