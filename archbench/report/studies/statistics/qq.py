"""Normal Q-Q plots of the main configurations' throughput."""

from __future__ import annotations

import math
import os
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy import stats as scipy_stats

from archbench.analyze import analysis
from archbench.analyze.analysis import Labeller, key_text, main_pool_series
from archbench.report import latex, plots
from archbench.report.formats import QQ_COLUMNS, QQ_MAX_PANELS, count_of, measured_values, several_depths
from archbench.report.latex import (
    is_missing,
)
from archbench.report.prose import Prose
from archbench.report.theme import paper_theme

QQ_FIGURE = "qq-throughput.pdf"  # paper/figures/
TEMPLATE = "statistics/diagnostics"  # the caption sits with the normality sentences it illustrates


def qq_configurations(summary: pd.DataFrame, limit: int = QQ_MAX_PANELS) -> list[pd.Series]:
    """The main configurations with three or more trials: the comparison tables' rows, the main pool-size
    sweep, then the other configurations in table order, at most `limit`."""
    if summary.empty:
        return []
    candidates: list[pd.Series] = []
    for one in analysis.comparisons(summary):
        candidates += [row for _, row in one.all_rows.iterrows()]
    main = main_pool_series(summary)
    if main is not None:
        candidates += [row for _, row in main.rows.iterrows()]
    candidates += [row for _, row in summary.iterrows()]
    chosen, seen = [], set()
    for row in candidates:
        cid = str(row["config_id"])
        if cid in seen or count_of(row.get("n")) < 3:
            continue
        seen.add(cid)
        chosen.append(row)
    return chosen[:limit]


def qq_figure(summary: pd.DataFrame, trials: pd.DataFrame):
    """Small multiples: each configuration's standardised throughputs against normal quantiles (Blom's
    plotting positions), with the line y = x; None when no configuration has three or more trials."""
    chosen = qq_configurations(summary)
    if not chosen:
        return None
    values = measured_values(trials)
    labels = Labeller(summary)
    several = several_depths(summary)
    columns = min(QQ_COLUMNS, len(chosen))
    rows = math.ceil(len(chosen) / columns)
    with paper_theme(**{"axes.titlesize": 6.5, "xtick.labelsize": 6.5, "ytick.labelsize": 6.5}):
        figure = Figure(figsize=(6.3, 1.95 * rows + 0.45))
        axes = figure.subplots(rows, columns, squeeze=False, sharex=True, sharey=True)
        limit = 2.0
        for index, row in enumerate(chosen):
            ax = axes[index // columns][index % columns]
            sample = np.sort(values.get(str(row["config_id"]), np.array([])))
            n = sample.size
            theoretical = scipy_stats.norm.ppf((np.arange(1, n + 1) - 0.375) / (n + 0.25))
            sd = float(sample.std(ddof=1)) if n >= 2 else 0.0
            standardised = (sample - sample.mean()) / sd if sd > 0 else np.zeros(n)
            limit = max(limit, float(np.abs(standardised).max()) * 1.15, float(np.abs(theoretical).max()) * 1.15)
            ax.plot([-5, 5], [-5, 5], color="0.6", linewidth=0.8, zorder=1)
            ax.scatter(theoretical, standardised, s=10, color="C0", zorder=2, linewidths=0)
            name = labels.variant(row) + f", {int(float(row['connections']))} conn."
            if several:
                name += f", D={key_text(row.get('pipeline')) or '1'}"
            p_text = "p<0.001" if float(row["shapiro_p"]) < 0.001 else f"p={float(row['shapiro_p']):.3f}"
            statistic = (
                f"n={n}, W={float(row['shapiro_w']):.3f}, {p_text}"
                if not is_missing(row.get("shapiro_w"))
                else f"n={n}, no spread"
            )
            ax.set_title("\n".join(textwrap.wrap(name, 30)[:2] + [statistic]), pad=3)
        for index in range(len(chosen), rows * columns):
            axes[index // columns][index % columns].set_visible(False)
        for index in range(len(chosen)):
            below = index + columns
            if below >= len(chosen):  # nothing visible under it: label its x axis
                axes[index // columns][index % columns].xaxis.set_tick_params(labelbottom=True)
        for ax in axes.flat:
            ax.set_xlim(-limit, limit)
            ax.set_ylim(-limit, limit)
            ax.set_aspect("equal", adjustable="box")
        figure.supxlabel("Normal quantile (Blom)", fontsize=8)
        figure.supylabel("Standardised throughput", fontsize=8)
        figure.tight_layout(pad=0.4, h_pad=1.0, w_pad=0.4)
    return figure


def qq_outputs(
    summary: pd.DataFrame, trials: pd.DataFrame, figures_dir: Path, paper_dir: Path, prose: Prose
) -> tuple[str, bool]:
    figure = qq_figure(summary, trials)
    path = Path(figures_dir) / QQ_FIGURE
    if figure is None:
        if path.exists():
            path.unlink()
        return prose.block(TEMPLATE, "no_qq_figure"), False
    plots.save_figure(figure, path)
    include = Path(os.path.relpath(path, paper_dir)).as_posix()
    caption = prose.sentence(TEMPLATE, "qq_caption", shown=len(qq_configurations(summary)))
    return latex.figure_block(include, "fig:qq", caption, ""), True
