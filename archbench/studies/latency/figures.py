"""The latency study's figures: achieved against offered rate, and the latency percentiles against the
offered rate with the latency threshold, each design's knee level (the multiple of its floor) and its knee. Axis labels and legend entries are short fixed labels; the captions
are the templates' (paper/templates/latency/figures.tex.j2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from archbench.analyze.open_loop_trials import SETUP_SWEEP
from archbench.render.common import measured_ok_including_disturbed
from archbench.render.latex import is_missing
from archbench.render.plots import (
    FigureFile,
    compact,
    figure_legend,
    kilo,
    label_colours,
    label_outer_panels,
    legend_below,
    means_with_trials,
    panel_axes,
    panel_grid,
    ring,
    save_or_none,
    seaborn_legend,
)
from archbench.render.theme import paper_theme
from archbench.studies.latency.data import LatencyResults, ms_text
from archbench.studies.latency.knee import KNEE, NOT_MEASURED

ACHIEVED_FIGURE = "latency-achieved.pdf"
PERCENTILES_FIGURE = "latency-percentiles.pdf"
# (summary column, legend label, line style, marker) of each latency line of a panel.
# Medians over the trials, as the knee compares them: one trial's stall would move a mean by orders of magnitude.
PERCENTILE_LINES = (
    ("latency_p50_s_median", "p50", "-", "o"),
    ("latency_p90_s_median", "p90", "-", "s"),
    ("latency_p99_s_median", "p99", "-", "^"),
    ("latency_p99_9_s_median", "p99.9", "-", "D"),
    ("latency_max_s_max", "max", ":", "v"),
)
PERCENTILE_PALETTE = "flare"  # sequential: the higher the percentile, the darker its line
THRESHOLD_STYLE = "--"
LEVEL_STYLE = "-."
KNEE_COLOUR = "0.1"


def sweep_trials(study: LatencyResults, sweep: pd.DataFrame) -> pd.DataFrame:
    """The trials behind the sweep's achieved-rate means and intervals: measured, status ok, of its
    configurations (campaign and config id), one row per trial with its server label."""
    keys = set(zip(sweep["campaign"].astype(str), sweep["config_id"].astype(str), strict=True))
    trials = study.trials
    ours = [(str(c), str(i)) in keys for c, i in zip(trials["campaign"], trials["config_id"], strict=True)]
    chosen = measured_ok_including_disturbed(trials[pd.Series(ours, index=trials.index, dtype=bool)])
    return (
        chosen[["server", "offered_rate", "achieved_rate"]]
        .dropna()
        .astype({"offered_rate": float, "achieved_rate": float})
    )


def achieved_figure(study: LatencyResults) -> Figure | None:
    """Achieved against offered rate (log-log), one line per server of the sweep; y = x dashed."""
    sweep = study.setup(SETUP_SWEEP)
    sweep = sweep[sweep["achieved_mean"].notna()] if not sweep.empty else sweep
    if sweep.empty or sweep["offered_rate"].nunique() < 2:
        return None
    servers = list(dict.fromkeys(sweep["server"]))
    colours = label_colours([sweep], "server")
    with paper_theme():
        figure = Figure(figsize=(5.6, 3.8))
        axes = figure.subplots()
        low = float(sweep["offered_rate"].min()) * 0.8
        high = float(sweep["offered_rate"].max()) * 1.25
        axes.plot([low, high], [low, high], color="0.6", linestyle="--", linewidth=0.9, label="achieved = offered")
        axes.set_xscale("log")
        means_with_trials(
            axes, sweep_trials(study, sweep), "offered_rate", "achieved_rate", "server", servers, colours, log_y=True
        )
        bound = sweep[sweep["n_client_bound"] > 0]
        if not bound.empty:
            ring(
                axes,
                bound["offered_rate"].astype(float),
                bound["achieved_mean"].astype(float),
                "black",
                70,
                label="with client-bound trials",
            )
        axes.set_xlim(low, high)
        for axis in (axes.xaxis, axes.yaxis):
            axis.set_major_formatter(kilo)
            axis.set_minor_formatter(NullFormatter())
        axes.set_xlabel("Offered rate (requests/s, log scale)")
        axes.set_ylabel("Achieved rate (requests/s, log scale)\nmean, 95 % CI")
        legend_below(axes, *axes.get_legend_handles_labels(), -0.17, 2)
    return figure


def _percentile_lines(axes: Axes, rows: pd.DataFrame) -> None:
    """One server's latency percentiles (ms) against the offered rate: a seaborn lineplot of the summary's
    means in long form, one line per percentile from light (p50) to dark (p99.9), max dotted."""
    labels = [label for _, label, _, _ in PERCENTILE_LINES]
    long = rows.melt(
        id_vars=["offered_rate"],
        value_vars=[column for column, _, _, _ in PERCENTILE_LINES],
        var_name="column",
        value_name="latency_s",
    )
    long["percentile"] = long["column"].map({column: label for column, label, _, _ in PERCENTILE_LINES})
    long = long.assign(
        offered_rate=long["offered_rate"].astype(float), latency_ms=long["latency_s"].astype(float) * 1e3
    )
    sns.lineplot(
        data=long.dropna(subset=["latency_ms"]),
        x="offered_rate",
        y="latency_ms",
        hue="percentile",
        hue_order=labels,
        palette=dict(zip(labels, sns.color_palette(PERCENTILE_PALETTE, len(labels)), strict=True)),
        style="percentile",
        style_order=labels,
        markers={label: marker for _, label, _, marker in PERCENTILE_LINES},
        dashes={label: "" if style == "-" else (1, 1.5) for _, label, style, _ in PERCENTILE_LINES},
        markersize=3.5,
        linewidth=1.0,
        errorbar=None,
        ax=axes,
    )
    seaborn_legend(axes)  # one legend for the figure, below the panels
    axes.set_xlabel("")
    axes.set_ylabel("")


def percentiles_figure(study: LatencyResults) -> Figure | None:
    """p50/p90/p99/p99.9/max (log ms) against offered rate, one panel per server of the sweep, with the
    latency threshold, the server's knee level (the multiple of its floor) and its knee."""
    sweep = study.setup(SETUP_SWEEP)
    if sweep.empty:
        return None
    servers = [
        s
        for s in dict.fromkeys(sweep["server"])
        if sweep[(sweep["server"] == s)]["latency_p99_s_median"].notna().sum() >= 1
    ]
    if not servers or sweep["offered_rate"].nunique() < 2:
        return None
    rows_n, columns = panel_grid(len(servers))
    criteria = study.criteria
    with paper_theme():
        figure = Figure(figsize=(5.9, 0.9 + 2.1 * rows_n), layout="constrained")
        panels = figure.subplots(rows_n, columns, sharey=True, squeeze=False)
        for axes, server in zip(panel_axes(panels, len(servers)), servers, strict=True):
            rows = sweep[sweep["server"] == server].sort_values("offered_rate")
            _percentile_lines(axes, rows)
            bound = rows[rows["n_client_bound"] > 0]
            if not bound.empty:
                ring(
                    axes,
                    bound["offered_rate"],
                    bound["latency_p99_s_median"] * 1e3,
                    "black",
                    60,
                    label="client-bound trials",
                )
            axes.axhline(criteria.p99_s * 1e3, color="0.35", linestyle=THRESHOLD_STYLE, linewidth=0.8)
            knee_row = study.knees[study.knees["server"] == server]
            if not knee_row.empty:
                design = knee_row.iloc[0]
                if design["knee_state"] != NOT_MEASURED and not is_missing(design["floor_p99_s"]):
                    level = criteria.rise_multiple * float(design["floor_p99_s"]) * 1e3
                    axes.axhline(level, color="0.55", linestyle=LEVEL_STYLE, linewidth=0.8)
                if design["knee_state"] == KNEE:
                    axes.axvline(float(design["knee_rate"]), color=KNEE_COLOUR, linestyle=":", linewidth=1.0)
            axes.set_yscale("log")
            axes.set_title(server, fontsize=8)
            axes.xaxis.set_major_formatter(kilo)
            axes.yaxis.set_major_formatter(compact)
        label_outer_panels(panels, "Offered rate (requests/s)", "Latency (ms, log)")
        entries: dict[str, object] = {}  # label: handle, each label once over the panels
        for axes in panels.flat:
            for handle, label in zip(*axes.get_legend_handles_labels(), strict=True):
                entries.setdefault(label, handle)
        entries[f"{ms_text(criteria.p99_s)} ms"] = Line2D(
            [], [], color="0.35", linestyle=THRESHOLD_STYLE, linewidth=0.8
        )
        entries[f"{criteria.rise_multiple:g} x floor"] = Line2D(
            [], [], color="0.55", linestyle=LEVEL_STYLE, linewidth=0.8
        )
        entries["knee"] = Line2D([], [], color=KNEE_COLOUR, linestyle=":")
        figure_legend(figure, list(entries.values()), list(entries), 5)
    return figure


def make_latency_figures(study: LatencyResults, figures_dir: Path) -> dict[str, FigureFile | None]:
    """Write the figures the study can produce (and delete those of an earlier run): {key: file or None}."""
    servers = tuple(dict.fromkeys(study.setup(SETUP_SWEEP).get("server", [])))  # none in an empty campaign
    return {
        "achieved": save_or_none(achieved_figure(study), Path(figures_dir) / ACHIEVED_FIGURE, servers),
        "percentiles": save_or_none(percentiles_figure(study), Path(figures_dir) / PERCENTILES_FIGURE, servers),
    }
