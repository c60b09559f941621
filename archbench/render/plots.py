"""The Figure API every figure module builds on: how a figure is saved (a deterministic PDF), the interval
seaborn draws (`t_interval`, the tables' interval), means with their single trials
(`means_with_trials`), error bars from a summary's interval columns, and the tick labels, axis limits, panel
grids and legends the figures share; a colour per series label (its architecture's, so that a server has the
colour it has in every other figure), and the figure environments (LaTeX) that include the saved figures.

Deterministic output: no creation date in the PDF metadata, fixed sizes and fonts, so a figure regenerated from
the same data is the same file byte for byte (the report build can then be checked for drift).

Figures are matplotlib `Figure` objects drawn by seaborn's axes-level functions on our own axes, inside
`theme.paper_theme()` and coloured by `theme.architecture_palette` (one architecture, one colour in every
figure), never through pyplot: importing this module selects no backend, so a notebook's inline backend is left
as it is. Where seaborn computes an interval from the trials, its `errorbar` is `t_interval`, the Student-t
interval of archbench.stats that summary.csv and the tables report; where only the summary is at hand, the
intervals are drawn from its ci95 columns (`interval_errors`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from archbench import stats
from archbench.render.latex import escape, figure_block
from archbench.render.prose import Prose
from archbench.render.theme import MARKERS, PAPER_RC, architecture_palette

# Kept for callers that apply the theme themselves (matplotlib.rc_context(STYLE)); new code: paper_theme().
STYLE: dict[str, object] = PAPER_RC
PDF_METADATA = {"CreationDate": None, "ModDate": None, "Creator": "archbench", "Producer": None}


@dataclass(frozen=True)
class FigureFile:
    path: Path
    series_labels: tuple[str, ...]


def save_figure(figure: Figure, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="pdf", metadata=PDF_METADATA, bbox_inches="tight")
    return path


def thousands(value: float, _position: int) -> str:
    return f"{value:,.0f}"


def t_interval(values: Sequence[float]) -> tuple[float, float]:
    """seaborn's `errorbar` computed as summary.csv computes its ci95 columns (stats.rate_ci: the range under
    three trials, the log-scale t interval above), so an interval seaborn draws is the one the tables print."""
    interval = stats.rate_ci(values, stats.DEFAULT_CONFIDENCE)
    # Identical trials (an open-loop client that completed exactly its schedule each time) give an interval of one
    # value, and the arithmetic mean seaborn draws may lie a rounding error outside it: matplotlib refuses a
    # negative bar, so the interval is stretched to the drawn mean.
    mean = float(np.mean(np.asarray(values, dtype=float)))
    return min(interval.low, mean), max(interval.high, mean)


def trials_of_configs(trials: pd.DataFrame | None, config_ids: set[str]) -> pd.DataFrame:
    """The rows of `trials` (those the study's summary is computed from: the caller's rule) of the configurations
    `config_ids`; an empty frame for none."""
    if trials is None or trials.empty:
        return pd.DataFrame(columns=["config_id", "requests_per_sec"])
    return trials[trials["config_id"].astype(str).isin(config_ids)]


def interval_errors(rows: pd.DataFrame, centre: str, low: str, high: str) -> np.ndarray:
    """errorbar's asymmetric xerr/yerr of the points in column `centre`, from the interval ends in columns `low`
    and `high` (read as numbers); a missing end (NaN: n < 2) draws no bar on its side."""
    values = {name: pd.to_numeric(rows[name], errors="coerce").to_numpy(dtype=float) for name in (centre, low, high)}
    below = np.clip(values[centre] - values[low], 0, None)
    above = np.clip(values[high] - values[centre], 0, None)
    return np.vstack([np.nan_to_num(below), np.nan_to_num(above)])


def mean_error_bars(rows: pd.DataFrame) -> np.ndarray:
    """Asymmetric-capable yerr from the CI columns; NaN (n < 2) draws no bar."""
    return interval_errors(rows, "mean", "ci95_low", "ci95_high")


def series_style(hue: str, order: Sequence[str]) -> dict[str, object]:
    """seaborn lineplot's look of a line per `hue` level: solid, each with its marker (theme.MARKERS)."""
    return {
        "style": hue,
        "style_order": list(order),
        "markers": dict(zip(order, MARKERS, strict=False)),
        "dashes": False,
        "markersize": 5,
        "linewidth": 1.2,
    }


def means_with_trials(
    axes: Axes,
    data: pd.DataFrame,
    x: str,
    y: str,
    hue: str,
    order: Sequence[str],
    palette: dict[str, object],
    log_y: bool = False,
) -> None:
    """Mean of `y` with its 95 % CI against numeric `x`, a line per `hue` level (seaborn lineplot over the
    trials, errorbar=t_interval), the single trials as faint points behind it (swarmplot). `data` holds one
    row per trial: exactly the trials the summary's mean and interval were computed from. x is drawn on its
    native scale, so set a log x scale before calling; a log y scale is `log_y`, set here after seaborn has
    aggregated (on a log y axis seaborn averages log10 values: a geometric mean, not the table's mean)."""
    if axes.get_yscale() != "linear":
        raise ValueError("means_with_trials: leave y linear and pass log_y=True (seaborn would average logs)")
    common = {"data": data, "x": x, "y": y, "hue": hue, "hue_order": list(order), "palette": palette, "ax": axes}
    # A swarm, not a strip: seaborn's strip jitter draws from numpy's global random state (a PDF would
    # differ run to run); a swarm is placed deterministically.
    sns.swarmplot(
        **common, native_scale=True, size=2.4, alpha=0.45, linewidth=0, legend=False, zorder=1, warn_thresh=1.0
    )
    # lineplot, not pointplot: pointplot aligns every hue on the union of x values, which breaks the line of a
    # series that skips one of them.
    sns.lineplot(
        **common,
        **series_style(hue, order),
        estimator="mean",
        errorbar=t_interval,
        err_style="bars",
        err_kws={"capsize": 3, "elinewidth": 0.9, "capthick": 0.9},
    )
    if log_y:
        axes.set_yscale("log")
    _fit_log_axes(axes, data, x, y, hue)


def _fit_log_axes(axes: Axes, data: pd.DataFrame, x: str, y: str, hue: str) -> None:
    """Limits of a log axis from the values drawn: on a log axis seaborn 0.13's lineplot error bars enter the
    data limits in log10 units (2 for 100), which would stretch the axis down to about 1."""
    if data.empty:
        return
    intervals = [t_interval(group[y].to_numpy(dtype=float)) for _, group in data.groupby([hue, x])]
    ends = {
        x: data[x].to_numpy(dtype=float),
        y: np.concatenate([data[y].to_numpy(dtype=float), np.array(intervals, dtype=float).ravel()]),
    }
    for name, axis_scale, set_limits in ((x, axes.get_xscale(), axes.set_xlim), (y, axes.get_yscale(), axes.set_ylim)):
        values = ends[name][np.isfinite(ends[name]) & (ends[name] > 0)]
        if axis_scale != "log" or values.size == 0:
            continue
        margin = max((values.max() / values.min()) ** 0.05, 1.1)
        set_limits(values.min() / margin, values.max() * margin)


def compact(value: float, _position: int) -> str:
    """A log axis's tick label: thousands separators from 1 up, plain decimals below (0.1, not 0)."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def kilo(value: float, _position: int) -> str:
    """Axis ticks in thousands (a rate axis): 500, 600k, 1.2M for millions."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


# An interval reaching beyond this many times the largest mean is cut at the axis edge (small n gives
# Student-t intervals many times wider than the means they belong to, which would flatten the means).
CLIP_FACTOR = 2.0
CLIPPED_MARKER = {"x": ">", "y": "^"}


def axis_limit(means: list[float], highs: list[float]) -> float:
    """The upper axis limit: the largest interval end, unless that is beyond CLIP_FACTOR x the largest mean."""
    means = [m for m in means if not np.isnan(m)]
    ends = [h for h in highs if not np.isnan(h)] + means
    if not means:
        return 1.0
    largest_mean, largest_end = max(means), max(ends)
    if largest_mean > 0 and largest_end > CLIP_FACTOR * largest_mean:
        return 1.5 * largest_mean
    return largest_end * 1.05 if largest_end > 0 else 1.0


def save_or_none(figure: Figure | None, path: Path, labels: tuple[str, ...] = ()) -> FigureFile | None:
    """The figure saved as a PDF with its series labels, or None when there is no figure (and the PDF of an
    earlier run at `path` is deleted, so that it cannot pass for this run's)."""
    if figure is None:
        Path(path).unlink(missing_ok=True)
        return None
    return FigureFile(save_figure(figure, path), labels)


def panel_grid(count: int, most_columns: int = 2) -> tuple[int, int]:
    """(rows, columns) of a figure of `count` panels, at most `most_columns` side by side."""
    columns = min(most_columns, count)
    return math.ceil(count / columns), columns


def panel_axes(panels: np.ndarray, count: int) -> list[Axes]:
    """The first `count` panels of a grid in reading order; the slots after them (an odd count leaves one
    empty) are hidden."""
    flat = list(panels.flat)
    for unused in flat[count:]:
        unused.set_visible(False)
    return flat[:count]


def label_outer_panels(panels: np.ndarray, xlabel: str, ylabel: str) -> None:
    """The axis labels of a panel grid: x under the bottom row, y beside the first column."""
    for axes in panels[-1]:
        axes.set_xlabel(xlabel)
    for row in panels:
        row[0].set_ylabel(ylabel)


def seaborn_legend(axes: Axes) -> tuple[list, list[str]]:
    """The entries of the legend seaborn drew on `axes`, and the legend taken off (one legend for the figure
    goes elsewhere)."""
    handles, labels = axes.get_legend_handles_labels()
    if axes.get_legend() is not None:
        axes.get_legend().remove()
    return handles, labels


def figure_legend(figure: Figure, handles: list, labels: list[str], ncol: int = 1) -> None:
    """One legend for the figure's panels, under them."""
    figure.legend(handles, labels, loc="outside lower center", frameon=False, ncol=ncol)


def legend_below(axes: Axes, handles: list, labels: list[str], offset: float, ncol: int) -> None:
    """A legend under the axes (`offset`: its top, in axes fractions), where it hides no data."""
    axes.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, offset), frameon=False, ncol=ncol)


def ring(axes: Axes, x: object, y: object, colour: str, size: float, **label: str) -> None:
    """Open circles around the points (x, y) that a caption singles out (flagged or client-bound trials)."""
    axes.scatter(x, y, s=size, facecolors="none", edgecolors=colour, linewidths=0.8, zorder=5, **label)


def label_colours(frames: Sequence[pd.DataFrame], label_column: str) -> dict[str, Any]:
    """{label: colour} of the labels in `label_column` of `frames`, each its architecture's colour (the
    frames' `architecture` column) as in every figure of the report; matplotlib's tab10/tab20 in order of
    appearance when a frame has no architecture column."""
    frames = [f for f in frames if not f.empty and label_column in f]
    if not all("architecture" in f for f in frames):
        labels = list(dict.fromkeys(label for f in frames for label in f[label_column]))
        palette = matplotlib.colormaps["tab10" if len(labels) <= 10 else "tab20"]
        return {label: palette(index % palette.N) for index, label in enumerate(labels)}
    labels = [str(label) for f in frames for label in f[label_column]]
    return architecture_palette(labels, [str(arch) for f in frames for arch in f["architecture"]])


def include_path(figure: FigureFile | None, paper_dir: Path) -> str | None:
    """The figure's path as \\includegraphics takes it (relative to the paper directory); None without a figure."""
    return None if figure is None else Path(os.path.relpath(figure.path, paper_dir)).as_posix()


@dataclass(frozen=True)
class TablesAndFigures:
    """What a study of the main campaign lets later studies cite: its tables' labels and the figures it made."""

    table_labels: tuple[str, ...]
    figures: dict[str, FigureFile | None]

    @property
    def figures_present(self) -> dict[str, bool]:
        return {key: made is not None for key, made in self.figures.items()}


def figure_blocks(
    made: Mapping[str, FigureFile | None],
    blocks: Mapping[str, tuple[str, str]],
    template: str,
    prose: Prose,
    paper_dir: Path,
) -> dict[str, str]:
    """{generated file: figure environment} for `blocks` ({file: (label, figure key)}); the template holds each
    key's `<key>_caption` and `<key>_missing` (the sentence standing in for a figure the campaign cannot make). A
    caption gets the figure's series (`series`, LaTeX-escaped), so that it names only what the figure shows."""
    return {
        name: figure_environment(
            made[key],
            label,
            paper_dir,
            prose,
            template,
            (f"{key}_caption", f"{key}_missing"),
            {"series": [escape(s) for s in made[key].series_labels] if made[key] is not None else []},
        )
        for name, (label, key) in blocks.items()
    }


def figure_environment(
    made: FigureFile | None,
    label: str,
    paper_dir: Path,
    prose: Prose,
    template: str,
    keys: tuple[str, str],
    facts: Mapping[str, Any],
) -> str:
    """The figure's environment (included relative to paper_dir), its caption the template's `keys[0]` rendered
    with `facts`, or without the figure the sentence `keys[1]`."""
    caption, missing = keys
    return figure_block(
        include_path(made, paper_dir),
        label,
        prose.sentence(template, caption, facts),
        prose.sentence(template, missing),
    )
