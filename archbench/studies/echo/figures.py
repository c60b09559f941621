"""The echo study's figures: received bytes and RTT against clients (scaling), and one representative
trial's bytes per second (time series). Axis labels and legend entries are short fixed labels; the
captions are the templates' (paper/templates/echo/figures.tex.j2)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from archbench.analyze.analysis import number
from archbench.render.common import sorted_rows
from archbench.render.plots import (
    FigureFile,
    compact,
    figure_legend,
    label_colours,
    label_outer_panels,
    legend_below,
    means_with_trials,
    panel_axes,
    panel_grid,
    ring,
    save_or_none,
    seaborn_legend,
    thousands,
    trials_of_configs,
)
from archbench.render.theme import MARKERS, paper_theme
from archbench.studies.echo.data import MB, EchoResults, representative_trials

SCALING_FIGURE = "echo-scaling.pdf"
TIME_SERIES_FIGURE = "echo-time-series.pdf"
FLAGGED_RING = "red"
RECEIVED_MB = "received_mb_per_sec"
# Legend label -> (series column, dashes, colour) of the time-series lines.
DIRECTIONS: dict[str, tuple[str, str | tuple[float, float], str]] = {
    "sent": ("bytes_sent_per_sec", "", "C0"),
    "received": ("bytes_received_per_sec", (4, 2), "C3"),
}


def clean_trials(study: EchoResults, lines: list[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """The trials behind the summary's received-bytes mean and interval of each line's configurations:
    measured, ok, not flagged; received bytes in MB/s (RECEIVED_MB)."""
    chosen = trials_of_configs(
        study.measured_ok_including_disturbed, {str(c) for _, rows in lines for c in rows["config_id"]}
    )
    chosen = chosen[~chosen["flagged"].astype(bool)]
    data = chosen[["variant", "connections"]].astype({"connections": float})
    return data.assign(**{RECEIVED_MB: chosen["bytes_received_per_sec"].astype(float) / MB}).dropna()


def scaling_figure(study: EchoResults) -> Figure | None:
    """Received MB/s (mean, 95 % CI) and RTT p50/p99 against clients, log x; None without two client counts."""
    summary = study.summary
    if summary.empty:
        return None
    lines = [(variant, rows.sort_values("connections")) for variant, rows in summary.groupby("variant", sort=False)]
    lines = [(v, r[r["bytes_received_per_sec_mean"].notna()]) for v, r in lines]
    lines = [(v, r) for v, r in lines if r["connections"].nunique() >= 2]
    if not lines:
        return None
    colours = label_colours([study.summary, study.max_conns], "variant")
    with paper_theme():
        figure = Figure(figsize=(5.6, 4.6))
        top, bottom = figure.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [1, 1]})
        top.set_xscale("log")
        order = [variant for variant, _ in lines]
        means_with_trials(
            top,
            clean_trials(study, lines),
            "connections",
            RECEIVED_MB,
            "variant",
            order,
            {v: colours[v] for v in order},
        )
        for index, (_variant, rows) in enumerate(lines):
            marker = MARKERS[index % len(MARKERS)]
            colour = colours.get(_variant)
            flagged = rows[rows["n_flagged"] > 0]
            if not flagged.empty:
                ring(top, flagged["connections"], flagged["bytes_received_per_sec_mean"] / MB, FLAGGED_RING, 60)
            p99 = rows["rtt_p99_s_mean"].to_numpy(dtype=float) * 1e3
            p50 = rows["rtt_p50_s_mean"].to_numpy(dtype=float) * 1e3
            bottom.plot(rows["connections"], p99, marker=marker, markersize=4, linewidth=1.2, color=colour)
            bottom.plot(
                rows["connections"],
                p50,
                marker=marker,
                markersize=3,
                linewidth=0.9,
                linestyle="--",
                color=colour,
                alpha=0.8,
            )
        top.set_xlabel("")
        top.set_ylabel("Received (MB/s)\nmean, 95 % CI")
        top.set_ylim(bottom=0)
        bottom.set_yscale("log")
        bottom.set_ylabel("RTT (ms, log)\np99 solid, p50 dashed")
        bottom.set_xlabel("Concurrent echo clients (log scale)")
        bottom.xaxis.set_major_formatter(thousands)
        bottom.xaxis.set_minor_formatter(NullFormatter())
        bottom.yaxis.set_major_formatter(compact)
        handles, labels = seaborn_legend(top)
        if (summary["n_flagged"] > 0).any():
            handles.append(
                Line2D(
                    [],
                    [],
                    marker="o",
                    linestyle="none",
                    markerfacecolor="none",
                    markeredgecolor=FLAGGED_RING,
                    markersize=7,
                )
            )
            labels.append("flagged trials (excluded from the mean)")
        legend_below(bottom, handles, labels, -0.28, 2)
    return figure


def _steps(samples: pd.DataFrame) -> pd.DataFrame:
    """One trial's per-second samples in long form for a step line per direction: each sample covers
    (previous second, second], so each line starts at 0 (the start of connecting) at its first sample's rate."""
    seconds = np.concatenate([[0.0], samples["second"].to_numpy(dtype=float)])
    frames = []
    for label, (column, _, _) in DIRECTIONS.items():
        values = samples[column].to_numpy(dtype=float) / MB
        frames.append(
            pd.DataFrame({"second": seconds, "mb_per_sec": np.concatenate([values[:1], values]), "direction": label})
        )
    return pd.concat(frames, ignore_index=True)


def time_series_figure(study: EchoResults) -> tuple[Figure | None, pd.DataFrame]:
    """Bytes sent and received per second against seconds since echo_client started connecting, one panel
    per architecture, for the representative trial at the largest client count."""
    picks = representative_trials(study.trials, study.summary)
    if picks.empty or study.series.empty:
        return None, picks
    picks = picks[picks["trial_id"].isin(set(study.series["trial_id"]))]
    if picks.empty:
        return None, picks
    picks = sorted_rows(picks).reset_index(drop=True)
    count = len(picks)
    rows_n, columns = panel_grid(count)
    with paper_theme():
        figure = Figure(figsize=(5.8, 0.6 + 1.85 * rows_n), layout="constrained")
        panels = figure.subplots(rows_n, columns, sharex=True, sharey=True, squeeze=False)
        for axes, (_, pick) in zip(panel_axes(panels, count), picks.iterrows(), strict=True):
            samples = study.series[study.series["trial_id"] == pick["trial_id"]].sort_values("second")
            sns.lineplot(
                data=_steps(samples),
                x="second",
                y="mb_per_sec",
                hue="direction",
                hue_order=list(DIRECTIONS),
                palette={label: colour for label, (_, _, colour) in DIRECTIONS.items()},
                style="direction",
                style_order=list(DIRECTIONS),
                dashes={label: dashes for label, (_, dashes, _) in DIRECTIONS.items()},
                drawstyle="steps-pre",
                linewidth=1.2,
                errorbar=None,
                ax=axes,
            )
            seaborn_legend(axes)  # one legend for the figure, below the panels
            axes.set_xlabel("")
            axes.set_ylabel("")
            connected = number(pick.get("all_connected_s"))
            if not math.isnan(connected):
                axes.axvline(connected, color="0.5", linestyle=":", linewidth=0.9)
            flagged = " (flagged)" if bool(pick.get("flagged")) else ""
            axes.set_title(f"{pick['variant']}{flagged}", fontsize=8)
        # Shared axes: limits once, after every panel is drawn (an earlier set_ylim would freeze the first's).
        shown = study.series[study.series["trial_id"].isin(set(picks["trial_id"]))]
        top = float(np.nanmax(shown[["bytes_sent_per_sec", "bytes_received_per_sec"]].to_numpy(dtype=float))) / MB
        panels[0][0].set_ylim(0, top * 1.12 if top > 0 else 1.0)  # headroom: a flat series is not the frame
        panels[0][0].set_xlim(left=0)
        label_outer_panels(panels, "Seconds since the first connect", "MB/s")
        if count % columns:  # the panel above the empty slot carries the axis too
            panels[-2][-1].set_xlabel("Seconds since the first connect")
            panels[-2][-1].xaxis.set_tick_params(labelbottom=True)
        handles, labels = panels[0][0].get_legend_handles_labels()
        handles.append(Line2D([], [], color="0.5", linestyle=":"))
        labels.append("all clients connected")
        figure_legend(figure, handles, labels, 3)
    return figure, picks


def make_echo_figures(study: EchoResults, figures_dir: Path) -> dict[str, FigureFile | None]:
    """Write the figures the study can produce (and delete those of an earlier run): {key: file or None}."""
    figures_dir = Path(figures_dir)
    figure = scaling_figure(study)
    variants = tuple(study.summary["variant"].unique()) if figure is not None else ()
    made = {"scaling": save_or_none(figure, figures_dir / SCALING_FIGURE, variants)}
    figure, picks = time_series_figure(study)
    trial_ids = tuple(picks["trial_id"]) if figure is not None else ()
    made["time_series"] = save_or_none(figure, figures_dir / TIME_SERIES_FIGURE, trial_ids)
    return made
