"""The noise figure: every measured trial's residual in execution order, coloured by round.

One panel per metric (throughput, server CPU time per request): a point per trial at its position in the
campaign, its residual (value relative to its configuration's mean) in percent, coloured by round, and each
round's mean residual as a horizontal segment over the round's trials, so drift, a round effect and runs of
alike neighbours are all visible. When the records have steal shares, a last panel shows the machine's
steal per trial on the same axis. seaborn draws the points on our own Figure's axes (no pyplot state).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from archbench.analyze.noise import METRICS
from archbench.render.theme import paper_theme

# The y-axis label of each metric's panel (figure text, not report prose).
PANEL_LABELS = {
    "requests_per_sec": "Throughput\nresidual (%)",
    "server_cpu_us_per_request": "Server CPU/req.\nresidual (%)",
}
STEAL_LABEL = "Steal (% of\nmachine ticks)"
ROUND_PALETTE = "viridis"
MIN_TRIALS = 3  # fewer residuals than this show nothing worth a figure


def residual_panels(table: pd.DataFrame) -> list[str]:
    """The metrics with enough residuals to plot, in METRICS order."""
    if table.empty:
        return []
    return [m for m in METRICS if int(table[f"residual_{m}"].notna().sum()) >= MIN_TRIALS]


def steal_recorded(table: pd.DataFrame) -> bool:
    return not table.empty and bool(table["machine_steal"].notna().any())


def noise_figure(table: pd.DataFrame) -> Figure | None:
    """The figure from noise-trials.csv's rows (archbench.analyze.noise); None without residuals to plot."""
    metrics = residual_panels(table)
    if not metrics:
        return None
    with_steal = steal_recorded(table)
    panels = len(metrics) + (1 if with_steal else 0)
    rounds = sorted(int(r) for r in table["round"].dropna().unique())
    palette = dict(zip(rounds, sns.color_palette(ROUND_PALETTE, len(rounds)), strict=True))
    frame = table.assign(round=table["round"].astype(int))
    with paper_theme():
        figure = Figure(figsize=(6.3, 1.7 * panels + 0.5))
        axes = figure.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
        for ax, metric in zip(axes, metrics, strict=False):
            column = f"residual_{metric}"
            shown = frame.assign(percent=100.0 * frame[column]).dropna(subset=["percent"])
            ax.axhline(0.0, color="0.5", linewidth=0.7, zorder=1)
            _trial_points(ax, shown, palette)
            _round_means(ax, shown, palette)
            ax.set_ylabel(PANEL_LABELS[metric])
            limit = float(np.nanmax(np.abs(shown["percent"]))) if not shown.empty else 1.0
            if math.isfinite(limit) and limit > 0:
                ax.set_ylim(-1.15 * limit, 1.15 * limit)
        if with_steal:
            ax = axes[-1]
            _trial_points(ax, frame.assign(percent=100.0 * frame["machine_steal"]).dropna(subset=["percent"]), palette)
            ax.set_ylabel(STEAL_LABEL)
            ax.set_ylim(bottom=0.0)
        axes[-1].set_xlabel("Trial in execution order")
        handles = [axes[0].scatter([], [], s=12, color=palette[r], label=f"round {r}", linewidths=0) for r in rounds]
        figure.legend(
            handles=handles, loc="upper center", ncol=min(len(rounds), 8), frameon=False, bbox_to_anchor=(0.5, 1.0)
        )
        figure.tight_layout(rect=(0, 0, 1, 1 - 0.3 / (1.7 * panels + 0.5)))
    return figure


def _trial_points(ax: Axes, shown: pd.DataFrame, palette: dict[int, object]) -> None:
    """A point per trial: its `percent` at its position in execution order, coloured by its round."""
    sns.scatterplot(
        data=shown, x="position", y="percent", hue="round", palette=palette, s=12, linewidth=0, ax=ax, legend=False,
        zorder=3,
    )  # fmt: skip


def _round_means(ax: Axes, shown: pd.DataFrame, palette: dict[int, object]) -> None:
    """Each round's mean residual as a segment spanning the round's trials."""
    for number, group in shown.groupby("round"):
        ax.hlines(
            group["percent"].mean(),
            group["position"].min(),
            group["position"].max(),
            colors=[palette[int(number)]],
            linewidth=1.6,
            zorder=2,
        )
