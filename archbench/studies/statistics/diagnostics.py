"""Per-configuration diagnostics: the table, and the facts of the statistics section's sentences about them
(paper/templates/statistics/diagnostics.tex.j2)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from archbench import stats
from archbench.analyze import outliers
from archbench.analyze.adaptive_state import AdaptiveOutcome
from archbench.analyze.analysis import Labeller, number, several_depths
from archbench.render import latex
from archbench.render.formats import (
    ALPHA,
    DIAGNOSTICS_SIZE,
    config_text,
    count_of,
    fill_first,
    first_named,
    fmt_bracket,
    fmt_p,
    fmt_pct,
    fmt_rate,
    notes_after,
    two_lines,
)
from archbench.render.latex import MISSING, escape_identifier, format_count, format_decimal
from archbench.render.prose import Prose

OUTLIERS_CSV = "outliers.csv"  # data/processed/: every measured trial beyond Tukey's fences
TEMPLATE = "statistics/diagnostics"  # paper/templates/statistics/diagnostics.tex.j2


def numbers(frame: pd.DataFrame, column: str) -> pd.Series:
    """The column as numbers (NaN where unparseable), or all NaN in a frame without it."""
    if column not in frame:
        return pd.Series(math.nan, index=frame.index, dtype=float)
    return pd.to_numeric(frame[column], errors="coerce")


def pct_range(values: pd.Series) -> dict[str, Any]:
    """How many values are defined and their least, greatest and median, as percentages."""
    values = pd.to_numeric(values, errors="coerce").dropna()
    if values.empty:
        return {"count": 0}
    return {
        "count": len(values),
        "min": fmt_pct(values.min()),
        "max": fmt_pct(values.max()),
        "median": fmt_pct(values.median()),
    }


def config_names(summary: pd.DataFrame, labels: Labeller, several: bool) -> Callable[[Any], str]:
    """A configuration's name in a sentence from its id: `config_text`, or its escaped id where the summary lacks it."""
    names = {str(row["config_id"]): config_text(row, labels, several) for _, row in summary.iterrows()}
    return lambda cid: names.get(str(cid), escape_identifier(str(cid)))


def diagnostics_table(summary: pd.DataFrame, adaptive_state: AdaptiveOutcome, prose: Prose) -> str:
    """Per configuration: mean with its CI half-width (% of the mean), total/total rate, median with its
    order-statistic interval and coverage, Shapiro-Wilk W and p, Tukey outliers (and the adaptive outcome)."""
    if summary.empty:
        return prose.block(TEMPLATE, "no_diagnostics")
    labels = Labeller(summary)
    several = several_depths(summary)
    columns = [
        ("Configuration", "l"),
        ("$n$", "r"),
        (latex.stacked("Mean", "(r/s)"), "r"),
        (latex.stacked(r"$\pm$CI", r"(\%)"), "r"),
        (latex.stacked(r"$\sum$req.", r"/$\sum$s"), "r"),
        (latex.stacked("Median (r/s)", "{[}interval{]}"), "r"),
        (latex.stacked("Cov.", r"(\%)"), "r"),
        ("$W$", "r"),
        ("$p$", "r"),
        (latex.stacked("Out-", "liers"), "r"),
    ]
    if adaptive_state.enabled:
        columns.append(("Target", "l"))
    body = []
    previous = None
    for _, row in summary.iterrows():
        family = labels.family(row)
        if previous is not None and family != previous:
            body.append(r"\midrule")
        previous = family
        outlier_cell = MISSING if count_of(row.get("n")) == 0 else str(count_of(row.get("n_outliers")))
        if count_of(row.get("n_far_out")):
            outlier_cell += f" ({count_of(row.get('n_far_out'))})"
        cells = [
            config_text(row, labels, several) + latex.row_marks(row),
            format_count(row.get("n")),
            fmt_rate(row.get("mean")),
            format_decimal(row.get("ci95_half_width_pct"), 1),
            fmt_rate(row.get("total_rate")),
            two_lines(
                fmt_rate(row.get("median")), fmt_bracket(row.get("median_ci95_low"), row.get("median_ci95_high"))
            ),
            format_decimal(100.0 * number(row.get("median_ci_coverage")), 1),
            format_decimal(row.get("shapiro_w"), 3),
            fmt_p(row.get("shapiro_p")),
            outlier_cell,
        ]
        if adaptive_state.enabled:
            state = adaptive_state.configs.get(str(row["config_id"]))
            if state is None:
                cells.append(MISSING)
            elif state.get("met"):
                cells.append("met")
            else:
                cells.append("max.\\ trials" if state.get("stopped_by") == "max_trials" else "not met")
        body.append(" & ".join(cells) + r" \\[1pt]")
    caption = prose.sentence(
        TEMPLATE, "table_caption", adaptive=adaptive_state.enabled, target=format_decimal(adaptive_state.target_pct, 1)
    )
    # The explanations of the flagged / failed / unsupported marks that `latex.row_marks` put on the rows.
    marks = latex.mark_notes(prose)
    notes = latex.notes_for_marks(summary, marks.flagged, marks.failed, marks.unsupported)
    return latex.render_longtable(
        fill_first(columns),
        body,
        caption,
        "tab:diagnostics",
        tabcolsep="2.5pt",
        notes=notes_after(" ".join(notes)),
        size=DIAGNOSTICS_SIZE,
    )


def median_coverage_facts(summary: pd.DataFrame) -> dict[str, Any]:
    """The order-statistic interval and its exact coverage for each trial count n in the campaign."""
    counts = sorted({count_of(n) for n in summary.get("n", pd.Series(dtype=float)) if count_of(n) >= 2})
    facts = []
    for n in counts:
        result = stats.median_ci(np.arange(n, dtype=float))
        facts.append(
            {
                "n": n,
                "min_max": result.lower_rank == 1,
                "lower": result.lower_rank,
                "upper": result.upper_rank,
                "coverage": format_decimal(100 * result.coverage, 1),
                "short": not result.reaches_level,
            }
        )
    return {"counts": facts}


def determinism_facts(summary: pd.DataFrame) -> dict[str, Any]:
    rows = summary[numbers(summary, "n") >= 2]
    if rows.empty:
        return {"none": True}
    sd, mean = numbers(rows, "sd"), numbers(rows, "mean")
    cv = (100.0 * sd / mean.abs()).replace([np.inf, -np.inf], np.nan).dropna()
    constant = int((sd == 0).sum())
    return {
        "none": False,
        "constant": constant,
        "varying": len(rows) - constant,
        "cv_min": None if cv.empty else fmt_pct(cv.min()),
        "cv_max": None if cv.empty else fmt_pct(cv.max()),
        "cv_median": None if cv.empty else fmt_pct(cv.median()),
    }


def normality_facts(summary: pd.DataFrame, labels: Labeller, several: bool) -> dict[str, Any]:
    if summary.empty:
        return {"empty": True}
    n = numbers(summary, "n").fillna(0)
    checkable = summary[n >= 3]
    p = numbers(checkable, "shapiro_p")
    failing, more = first_named([config_text(r, labels, several) for _, r in checkable[p < ALPHA].iterrows()])
    return {
        "empty": False,
        "checkable": len(checkable),
        "passing": len(checkable[p >= ALPHA]),
        "failing": failing,
        "failing_more": more,
        "undefined": len(checkable[p.isna()]),
        "too_few": int(((n > 0) & (n < 3)).sum()),
        "alpha": format_decimal(ALPHA, 2),
    }


def rate_summary_facts(summary: pd.DataFrame, labels: Labeller, several: bool) -> dict[str, Any]:
    if summary.empty:
        return {"empty": True}
    mean, total, harmonic = (numbers(summary, c) for c in ("mean", "total_rate", "harmonic_mean"))
    valid = mean.notna() & total.notna() & (total > 0)
    if not valid.any():
        return {"empty": False, "valid": 0}
    relative = (100.0 * (mean - total).abs() / total)[valid]
    both = valid & harmonic.notna()
    return {
        "empty": False,
        "valid": int(valid.sum()),
        "gap": fmt_pct(relative.max(), 2),
        "worst": config_text(summary.loc[relative.idxmax()], labels, several),
        "harmonic_gap": fmt_pct((100.0 * (harmonic - total).abs() / total)[both].max(), 2) if both.any() else None,
    }


def outlier_facts(trials: pd.DataFrame, summary: pd.DataFrame, prose: Prose) -> tuple[dict[str, Any], pd.DataFrame]:
    """The trials beyond Tukey's fences (the first few named) and every one of them as a frame (outliers.csv)."""
    rows = (
        outliers.outlier_rows(trials, by=("config_id",))
        if not trials.empty and "requests_per_sec" in trials
        else pd.DataFrame(columns=["config_id", "trial_id", "value", "kind"])
    )
    n = numbers(summary, "n").fillna(0)
    named, more = first_named(
        [
            prose.sentence(
                TEMPLATE,
                "outlier_trial",
                id=escape_identifier(r["trial_id"]),
                rate=fmt_rate(r["value"]),
                far=r["kind"] == "far out",
            )
            for _, r in rows.iterrows()
        ]
    )
    facts = {
        "count": len(rows),
        "checkable": int((n >= 4).sum()),
        "configurations": rows["config_id"].nunique() if not rows.empty else 0,
        "far": int((rows["kind"] == "far out").sum()) if not rows.empty else 0,
        "trials": named,
        "more": more,
        "csv": OUTLIERS_CSV,
    }
    return facts, rows


def adaptive_facts(state: AdaptiveOutcome, labels: Labeller, summary: pd.DataFrame, several: bool) -> dict[str, Any]:
    if not state.enabled:
        return {"enabled": False}
    total = len(state.configs)
    met = [cid for cid, c in state.configs.items() if c.get("met")]
    stopped = [cid for cid, c in state.configs.items() if not c.get("met") and c.get("stopped_by") == "max_trials"]
    name = config_names(summary, labels, several)
    named, more = first_named([name(c) for c in stopped])
    return {
        "enabled": True,
        "target": format_decimal(state.target_pct, 1),
        "max_trials": state.max_trials,
        "met": len(met),
        "total": total,
        "stopped": named,
        "stopped_more": more,
        "open": total - len(met) - len(stopped),
        "recorded": state.source == "recorded",
        "has_summary": not summary.empty,
    }


def half_width_facts(summary: pd.DataFrame, labels: Labeller, several: bool) -> dict[str, Any]:
    half = numbers(summary, "ci95_half_width_pct").dropna()
    if half.empty:
        return {"count": 0}
    return {
        **pct_range(half),
        "narrowest": config_text(summary.loc[half.idxmin()], labels, several),
        "widest": config_text(summary.loc[half.idxmax()], labels, several),
    }


def mean_median_facts(summary: pd.DataFrame) -> dict[str, Any]:
    if summary.empty:
        return {"empty": True}
    rows = summary[numbers(summary, "n") >= 2]
    if rows.empty:
        return {"empty": False, "count": 0}
    if (numbers(rows, "n") == 2).all():
        return {"empty": False, "count": len(rows), "all_two": True}
    mean, median, half = (numbers(rows, c) for c in ("mean", "median", "ci95_half_width_pct"))
    gap = (100.0 * (mean - median).abs() / mean.abs()).replace([np.inf, -np.inf], np.nan)
    return {
        "empty": False,
        "count": len(rows),
        "all_two": False,
        "max_gap": fmt_pct(gap.max()),
        "median_gap": fmt_pct(gap.median()),
        "inside": int((gap <= half).sum()),
    }
