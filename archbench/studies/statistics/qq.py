"""Normal Q-Q plots of the planned comparisons' log ratios: the diagnostic of what their paired t tests assume.

It chooses nothing (the test is pre-declared, archbench.stats.predeclared); it shows how far from normal the
per-round log ratios are, beside Shapiro-Wilk's W and p on the same values."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy import stats as scipy_stats

from archbench import stats
from archbench.analyze.planned_comparisons import Pair, comparison_pairs, planned_results
from archbench.render import latex, plots
from archbench.render.common import saved_include
from archbench.render.formats import QQ_COLUMNS, QQ_MAX_PANELS
from archbench.render.prose import Prose
from archbench.render.theme import paper_theme

QQ_FIGURE = "qq-log-ratios.pdf"  # paper/figures/
TEMPLATE = "statistics/diagnostics"  # the caption sits with the normality sentences it illustrates


def qq_comparisons(
    summary: pd.DataFrame, trials: pd.DataFrame, limit: int = QQ_MAX_PANELS
) -> tuple[list[tuple[Pair, stats.PlannedComparison]], int]:
    """(the planned comparisons tested by the paired test whose log ratios Shapiro-Wilk could check, in table order,
    at most `limit`; how many there are in all)."""
    if summary.empty:
        return [], 0
    checked = [
        (pair, result)
        for pair, result in planned_results(comparison_pairs(summary), trials)
        if result.test == stats.PAIRED_TEST and len(result.log_ratios) >= 3
    ]
    return checked[:limit], len(checked)


def qq_figure(summary: pd.DataFrame, trials: pd.DataFrame) -> Figure | None:
    """Small multiples: each planned comparison's standardised log ratios (the values its paired t test assumes
    roughly normal) against normal quantiles (Blom's plotting positions), with the line y = x; None when no
    comparison was tested with three or more rounds."""
    chosen, _ = qq_comparisons(summary, trials)
    if not chosen:
        return None
    rows, columns = plots.panel_grid(len(chosen), QQ_COLUMNS)
    with paper_theme(**{"axes.titlesize": 6.5, "xtick.labelsize": 6.5, "ytick.labelsize": 6.5}):
        figure = Figure(figsize=(6.3, 1.95 * rows + 0.45))
        axes = figure.subplots(rows, columns, squeeze=False, sharex=True, sharey=True)
        limit = 2.0
        shown = plots.panel_axes(axes, len(chosen))
        for ax, (pair, result) in zip(shown, chosen, strict=True):
            sample = np.sort(np.asarray(result.log_ratios, dtype=float))
            n = sample.size
            theoretical = scipy_stats.norm.ppf((np.arange(1, n + 1) - 0.375) / (n + 0.25))
            sd = float(sample.std(ddof=1)) if n >= 2 else 0.0
            standardised = (sample - sample.mean()) / sd if sd > 0 else np.zeros(n)
            limit = max(limit, float(np.abs(standardised).max()) * 1.15, float(np.abs(theoretical).max()) * 1.15)
            ax.plot([-5, 5], [-5, 5], color="0.6", linewidth=0.8, zorder=1)
            ax.scatter(theoretical, standardised, s=10, color="C0", zorder=2, linewidths=0)
            name = f"{pair.context}: {pair.a_name} vs {pair.b_name}"
            check = result.normality
            p_text = "p<0.001" if check.p_value < 0.001 else f"p={check.p_value:.3f}"
            statistic = f"n={n}, W={check.statistic:.3f}, {p_text}" if not math.isnan(check.statistic) else f"n={n}"
            ax.set_title("\n".join(textwrap.wrap(name, 30)[:2] + [statistic]), pad=3)
        for ax in shown[-columns:]:  # nothing visible under it: label its x axis
            ax.xaxis.set_tick_params(labelbottom=True)
        for ax in axes.flat:
            ax.set_xlim(-limit, limit)
            ax.set_ylim(-limit, limit)
            ax.set_aspect("equal", adjustable="box")
        figure.supxlabel("Normal quantile (Blom)", fontsize=8)
        figure.supylabel("Standardised log ratio", fontsize=8)
        figure.tight_layout(pad=0.4, h_pad=1.0, w_pad=0.4)
    return figure


def qq_outputs(
    summary: pd.DataFrame, trials: pd.DataFrame, figures_dir: Path, paper_dir: Path, prose: Prose
) -> tuple[str, bool]:
    include = saved_include(qq_figure(summary, trials), Path(figures_dir) / QQ_FIGURE, paper_dir)
    if include is None:
        return prose.block(TEMPLATE, "no_qq_figure"), False
    shown, total = qq_comparisons(summary, trials)
    caption = prose.sentence(TEMPLATE, "qq_caption", shown=len(shown), total=total)
    return latex.figure_block(include, "fig:qq", caption, ""), True
