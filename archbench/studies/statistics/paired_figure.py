"""Forest plot of the paired ratios: each configuration's compared ratio to its reference on a log axis, the
paired interval (rounds as blocks) over the unpaired one (two independent means)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from archbench.analyze.paired import CPU_PER_REQUEST
from archbench.render.plots import interval_errors
from archbench.render.theme import paper_theme

PAIRED_COLOUR = "C0"
UNPAIRED_COLOUR = "0.6"
ROW_HEIGHT_IN = 0.19


def row_label(row: pd.Series, several_depths: bool) -> str:
    """'epoll (edge), D=16 [CPU/req.]': the configuration, its depth where several, the metric compared."""
    text = str(row["variant"])
    if several_depths:
        text += f", D={int(row['pipeline'])}"
    if row["metric"] == CPU_PER_REQUEST:
        text += " [CPU/req.]"
    return text


def forest_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The compared rows with a paired ratio, by depth then ratio (the report's table order)."""
    if frame.empty:
        return frame
    rows = frame[frame["compared"].astype(bool)]
    rows = rows[pd.to_numeric(rows["ratio"], errors="coerce") > 0]
    return rows.sort_values(["pipeline", "metric", "ratio"], kind="stable").reset_index(drop=True)


def forest_figure(frame: pd.DataFrame, several_depths: bool) -> Figure | None:
    """Ratio to the reference (log axis) per configuration: the paired interval in colour, the unpaired one in grey
    just below it, a line at 1; None when no compared pair has a ratio."""
    rows = forest_rows(frame)
    if rows.empty:
        return None
    with paper_theme():
        figure = Figure(figsize=(6.3, ROW_HEIGHT_IN * len(rows) + 0.9))
        axes = figure.subplots()
        positions = np.arange(len(rows))[::-1].astype(float)
        for offset, prefix, colour, label in (
            (0.0, "", PAIRED_COLOUR, "paired (within rounds)"),
            (-0.3, "unpaired_", UNPAIRED_COLOUR, "unpaired (two means)"),
        ):
            axes.errorbar(
                pd.to_numeric(rows[f"{prefix}ratio"], errors="coerce").to_numpy(dtype=float),
                positions + offset,
                xerr=interval_errors(rows, f"{prefix}ratio", f"{prefix}low", f"{prefix}high"),
                fmt="o",
                markersize=3,
                capsize=2,
                linewidth=1,
                color=colour,
                label=label,
            )
        axes.axvline(1.0, color="0.3", linewidth=0.8, zorder=0)
        axes.set_xscale("log")
        # Plain ratios (0.1, 0.2, 0.5, 1, 2) read better than powers of ten.
        axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:g}"))
        axes.xaxis.set_minor_formatter(NullFormatter())
        axes.set_yticks(positions, [row_label(r, several_depths) for _, r in rows.iterrows()], fontsize=6.5)
        axes.set_ylim(-0.8, len(rows) - 0.4)
        axes.set_xlabel("Ratio to the reference (log scale), 95 % CI")
        axes.grid(axis="y", visible=False)
        axes.legend(loc="upper left", fontsize=6.5)
        figure.tight_layout(pad=0.4)
    return figure
