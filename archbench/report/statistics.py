"""The report's statistics, cross-OS, rules and environment sections (Hoefler & Belli's twelve rules).

`generate` is called by `archbench.report.build.write_generated_tex` with the campaign's
MacroSet before it is rendered; it adds the macros that paper/sections/statistics.tex,
crossos.tex, rules.tex and environment.tex quote, and returns the generated files
those sections input (name -> LaTeX). It also writes three regenerable tables beside
trials.csv and summary.csv (docs/contracts.md section 4):

* `comparisons.csv`: the family of comparisons within the campaign (each pool size
  against the next smaller one; request against connection dispatch at equal N,
  connections and depth; each architecture against nginx at each depth), one row per
  pair: `archbench.stats.compare` (Welch's t when both groups pass Shapiro-Wilk, else
  Mann-Whitney U; effect size and difference with intervals), Holm- and BH-adjusted
  within each family (`p_holm`, `reject_holm`, `p_bh`, `reject_bh`).
* `crossos.csv`: source 000's published cross-OS and separate-client/loopback comparisons
  (`archbench.analyze.crossos.source000_cross_os`, `source000_setups`), the comparisons of
  configurations measured on two or more OSes or hosts (`crossos.measured_comparisons`)
  and of this campaign against the reference campaign (`crossos.compare_with_reference`),
  with a `table` column naming which.
* `outliers.csv`: every measured trial beyond Tukey's fences (`archbench.analyze.outliers.outlier_rows`).

The rules' statuses and where each is met are generated here too, so a reference is
only ever made to a table or figure that this campaign produced. Everything degrades to
a sentence when the campaign lacks the data: a minimal campaign (one trial) still gets
every section, with the reason each analysis is missing.
"""
from __future__ import annotations

import json
import math
import os
import platform
import re
import textwrap
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from archbench.measure import adaptive
from archbench.analyze import analysis
from archbench.analyze import crossos
from archbench.config.params import FD_HEADROOM
from archbench.report import figures
from archbench.report import latex
from archbench.analyze import outliers
from archbench.measure import provenance
from archbench import stats
from archbench.analyze.analysis import Labeller, key_text, main_pool_series, series_of
from archbench.report.latex import (
    MISSING,
    MacroSet,
    escape,
    escape_identifier,
    format_count,
    format_decimal,
    format_list,
    is_missing,
)

# Files written into paper/generated/ (each always written, so a stale one is never picked up).
DIAGNOSTICS_TABLE_FILE = "table-diagnostics.tex"
QQ_FIGURE_FILE = "figure-qq.tex"
COMPARISONS_TABLE_FILE = "table-comparisons.tex"
CROSSOS_SOURCE_TABLE_FILE = "table-crossos-source000.tex"
CROSSOS_MEASURED_TABLE_FILE = "table-crossos-measured.tex"
CROSSOS_REFERENCE_TABLE_FILE = "table-crossos-reference.tex"
PROVENANCE_TABLE_FILE = "table-provenance.tex"
FACTORS_TABLE_FILE = "table-factors.tex"
RULES_TABLE_FILE = "table-rules.tex"
GENERATED_FILES = (
    DIAGNOSTICS_TABLE_FILE, QQ_FIGURE_FILE, COMPARISONS_TABLE_FILE, CROSSOS_SOURCE_TABLE_FILE,
    CROSSOS_MEASURED_TABLE_FILE, CROSSOS_REFERENCE_TABLE_FILE, PROVENANCE_TABLE_FILE, FACTORS_TABLE_FILE,
    RULES_TABLE_FILE,
)
# Figure written into paper/figures/, and the processed tables beside trials.csv.
QQ_FIGURE = "qq-throughput.pdf"
COMPARISONS_CSV = "comparisons.csv"
CROSSOS_CSV = "crossos.csv"
OUTLIERS_CSV = "outliers.csv"

REFERENCE_CAMPAIGN = "reference"  # the campaign shipped in git (data/raw/reference)
IMPORT_DIR = "import"  # a campaign directory with this subdirectory came from `python -m archbench import`
QQ_MAX_PANELS = 12
QQ_COLUMNS = 4
MAX_NAMED = 6  # items named in one generated sentence before "and N more"
ALPHA = stats.DEFAULT_ALPHA
LEVEL = stats.DEFAULT_CONFIDENCE

# The comparison families within a campaign, in table order: key -> (title, what a and b are).
FAMILIES: dict[str, str] = {
    "pool": "Pool size: each pool size $N$ against the next smaller one",
    "dispatch": "Request against connection dispatch at equal $N$, connections and depth",
    "nginx": "Each architecture against nginx, the reference, at each pipeline depth",
}
FAMILY_WORDS = {"pool": "pool size", "dispatch": "dispatch mode", "nginx": "against nginx"}
TEST_NAMES = {"welch_t": "Welch", "mann_whitney_u": "M--W", "none": MISSING}
EFFECT_SYMBOLS = {"hedges_g": "$g$", "cliffs_delta": r"$\delta$"}


# =========================================================================== formatting


def _minus(text: str) -> str:
    """A leading hyphen as a typeset minus sign."""
    return "$-$" + text[1:] if text.startswith("-") else text


def fmt_rate(value: Any) -> str:
    return _minus(format_count(value))


def fmt_number(value: Any, digits: int = 2) -> str:
    return _minus(format_decimal(value, digits))


def fmt_bracket(low: Any, high: Any, formatter: Callable[[Any], str] = fmt_rate) -> str:
    """'[12,345; 14,000]': a semicolon, since commas separate thousands; '--' when undefined."""
    if is_missing(low) or is_missing(high) or not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return MISSING
    return f"[{formatter(low)}; {formatter(high)}]"


def fmt_p(value: Any) -> str:
    if is_missing(value):
        return MISSING
    p = float(value)
    if p < 0.001:
        return "$<$0.001"
    return f"{p:.2f}" if p >= 0.1 else f"{p:.3f}"


def fmt_pct(value: Any, digits: int = 1) -> str:
    return MISSING if is_missing(value) else _minus(format_decimal(value, digits)) + r"\,\%"


def two_lines(top: str, bottom: str) -> str:
    """A right-aligned cell of two lines (an estimate over its interval)."""
    if bottom in ("", MISSING):
        return top
    # "{}" keeps a bottom line that starts with "[" from being read as \\'s optional skip.
    return r"\begin{tabular}[t]{@{}r@{}}" + top + r"\\{}" + bottom + r"\end{tabular}"


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "1.0", "yes")


def _count(value: Any) -> int:
    return 0 if is_missing(value) else int(float(value))


def _named(items: Sequence[str]) -> str:
    """Up to MAX_NAMED items as an English list, then 'and N more'."""
    items = list(items)
    if len(items) <= MAX_NAMED:
        return format_list_text(items)
    return ", ".join(items[:MAX_NAMED]) + f" and {len(items) - MAX_NAMED} more"


def format_list_text(items: Sequence[str]) -> str:
    items = list(items)
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def config_text(row: Mapping[str, Any], labels: Labeller, several_depths: bool) -> str:
    """'epoll (edge), 50 conn., $D=16$' (escaped) for a summary row."""
    text = f"{escape(labels.variant(row))}, {format_count(row.get('connections'))} conn."
    if several_depths:
        text += f", $D={key_text(row.get('pipeline')) or '1'}$"
    return text


def _several_depths(summary: pd.DataFrame) -> bool:
    return len(analysis.pipeline_depths(summary)) > 1


def longtable(columns: Sequence[tuple[str, str]], caption: str, label: str, body: Sequence[str],
              size: str = r"\footnotesize", tabcolsep: str = "3pt", notes: str = "") -> str:
    """A booktabs longtable (breaks across pages) in its own font size; `body` lines end with \\\\."""
    header = " & ".join(h for h, _ in columns) + r" \\"
    lines = [
        "{" + size + r"\setlength{\tabcolsep}{" + tabcolsep + r"}\setlength{\LTcapwidth}{\linewidth}",
        r"\begin{longtable}{" + "".join(a for _, a in columns) + "}",
        r"\caption{" + caption + r"}\label{" + label + r"}\\",
        r"\toprule", header, r"\midrule", r"\endfirsthead",
        r"\toprule", header, r"\midrule", r"\endhead",
        r"\bottomrule", r"\endfoot",
        *body,
        r"\end{longtable}",
    ]
    if notes:
        lines += [r"\vspace{-0.5\baselineskip}", r"{\raggedright " + notes + r"\par}"]
    lines.append("}")
    return "\n".join(lines) + "\n"


# Widths (em) of Latin Modern Roman glyphs, for sizing a longtable's first column from its data; the report is
# 11 pt on A4 with 2.4 cm margins. A glyph not listed counts as an upper-case letter's width, so estimates err wide.
# Small sizes use optically scaled designs with wider glyphs, so each size's em is taken from a digit's measured
# width (\settowidth in the report's preamble: ten digits are 36.67 pt in \tiny, 42.5 pt in \scriptsize).
FONT_EM_PT = {r"\tiny": 7.34, r"\scriptsize": 8.5, r"\footnotesize": 9.25, r"\small": 10.0}
ESTIMATE_MARGIN = 1.03
TEXT_WIDTH_PT = 459.0
MINIMUM_FIRST_COLUMN_CM = 2.6
_GLYPH_EM = {**{d: 0.5 for d in "0123456789"}, **{c: 0.278 for c in ".,;:!'[]"}, **{c: 0.389 for c in "()"},
             " ": 0.333, "~": 0.333, "-": 0.333, "/": 0.5, "?": 0.472, "%": 0.833, "*": 0.5, "<": 0.778, ">": 0.778,
             "+": 0.778, "=": 0.778, "\u2212": 0.778, "\u2009": 0.167, "|": 0.278, "_": 0.0, "^": 0.0,
             **{c: 0.5 for c in "abcdeghknopqrsuvxyz"}, **{c: 0.278 for c in "fijlt"}, "m": 0.833, "w": 0.722}
_INLINE = [(r"$-$", "\u2212"), (r"\,", "\u2009"), (r"\%", "%"), (r"\_", "_"), (r"\&", "&"), (r"{[}", "["), (r"{]}", "]")]
_CONTROL = re.compile(r"\\begin\{tabular\}(\[[a-z]\])?\{(?:[^{}]|\{\})*\}|\\end\{tabular\}|\\[A-Za-z]+|[{}$]")


def natural_width_pt(cell: str, size: str) -> float:
    """An estimate of a cell's width, from above: its widest line, glyph by glyph, at the table's font size."""
    widest = 0.0
    for line in cell.split("\\\\"):
        for pattern, glyph in _INLINE:
            line = line.replace(pattern, glyph)
        text = _CONTROL.sub("", line)
        widest = max(widest, sum(_GLYPH_EM.get(c, 0.75) for c in text))
    return widest * FONT_EM_PT.get(size, 11.0) * ESTIMATE_MARGIN


def free_first_column_pt(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]], size: str,
                         tabcolsep_pt: float) -> float:
    """The width left for the first (paragraph) column once the other columns take their natural widths."""
    others = 0.0
    for index in range(1, len(columns)):
        cells = [columns[index][0]] + [row[index] for row in rows if index < len(row)]
        others += max(natural_width_pt(c, size) for c in cells) + 2 * tabcolsep_pt
    return TEXT_WIDTH_PT - others - 2 * tabcolsep_pt


def first_column_cm(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]], size: str, tabcolsep_pt: float,
                    minimum_cm: float = MINIMUM_FIRST_COLUMN_CM, maximum_cm: float = 5.5) -> float:
    free_cm = free_first_column_pt(columns, rows, size, tabcolsep_pt) / 28.4527
    return round(max(minimum_cm, min(maximum_cm, free_cm)), 2)


def fitting_size(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]], sizes: Sequence[str],
                 tabcolsep_pt: float) -> str:
    """The largest of `sizes` (largest first) at which the table fits the text width; else the smallest."""
    for size in sizes:
        if free_first_column_pt(columns, rows, size, tabcolsep_pt) >= MINIMUM_FIRST_COLUMN_CM * 28.4527:
            return size
    return sizes[-1]


def fitted(columns: list[tuple[str, str]], rows: Sequence[Sequence[str]], size: str, tabcolsep_pt: float,
           maximum_cm: float = 5.5) -> list[tuple[str, str]]:
    width = first_column_cm(columns, rows, size, tabcolsep_pt, maximum_cm=maximum_cm)
    return [(columns[0][0], r">{\raggedright\arraybackslash}p{" + f"{width}cm" + "}"), *columns[1:]]


def _family_row(columns: int, text: str) -> str:
    return r"\multicolumn{" + str(columns) + r"}{@{}l}{\textit{" + text + r"}} \\"


# =========================================================================== values per configuration


def measured_values(trials: pd.DataFrame, value: str = "requests_per_sec") -> dict[str, np.ndarray]:
    """config_id -> the measured ok trials' values (flagged ones included, as in summary.csv)."""
    rows = outliers.measured_ok(trials) if not trials.empty else trials
    if rows.empty or value not in rows:
        return {}
    return {str(cid): stats.as_sample(pd.to_numeric(group[value], errors="coerce"))
            for cid, group in rows.groupby("config_id", sort=False)}


# =========================================================================== adaptive repetition


@dataclass(frozen=True)
class AdaptiveOutcome:
    """Whether the campaign used adaptive repetition, its target and what each configuration reached."""

    enabled: bool
    target_pct: float | None
    max_trials: int | None
    configs: dict[str, dict[str, Any]]
    source: str  # "recorded" (adaptive/adaptive-<UTC>.json), "derived" (from the trial records) or ""


def adaptive_outcome(campaign_dir: Path | None, meta: Mapping[str, Any], trials: pd.DataFrame) -> AdaptiveOutcome:
    """The adaptive phase's outcome: the latest recorded summary, else derived from the trials as the
    runner decides it (95 % t half-width of the ok, unflagged measured trials within ci_target % of the mean)."""
    parameters = meta.get("parameters") or {}
    target = parameters.get("ci_target")
    max_trials = parameters.get("max_trials")
    if target is None:
        return AdaptiveOutcome(False, None, None, {}, "")
    recorded = adaptive.latest_summary(campaign_dir) if campaign_dir is not None else None
    if recorded and isinstance(recorded.get("configs"), dict):
        return AdaptiveOutcome(True, float(target), max_trials, dict(recorded["configs"]), "recorded")
    configs: dict[str, dict[str, Any]] = {}
    if not trials.empty:
        measured = trials[~outliers.truthy(trials["warmup"])]
        for cid, rows in measured.groupby("config_id", sort=False):
            ok = rows[(rows["status"] == "ok") & ~outliers.truthy(rows.get("flagged", pd.Series(False, index=rows.index)))]
            values = stats.as_sample(pd.to_numeric(ok["requests_per_sec"], errors="coerce"))
            interval = stats.mean_ci_t(values)
            mean = stats.sample_mean(values)
            half = stats.ratio(100.0 * interval.half_width, abs(mean)) if values.size >= 2 else math.nan
            met = not math.isnan(half) and half <= float(target)
            reached_max = max_trials is not None and len(rows) >= int(max_trials)
            configs[str(cid)] = {"trials": len(rows), "n": int(values.size), "mean": mean, "half_width_pct": half,
                                 "met": met, "stopped_by": "target" if met else ("max_trials" if reached_max else None)}
    return AdaptiveOutcome(True, float(target), max_trials, configs, "derived")


# =========================================================================== diagnostics table and sentences


def diagnostics_table(summary: pd.DataFrame, adaptive_state: AdaptiveOutcome) -> str:
    """Per configuration: mean with its CI half-width (% of the mean), total/total rate, median with its
    order-statistic interval and coverage, Shapiro-Wilk W and p, Tukey outliers (and the adaptive outcome)."""
    if summary.empty:
        return r"\noindent The campaign has no configuration with a trial record, so there are no diagnostics." + "\n"
    labels = Labeller(summary)
    several = _several_depths(summary)
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
    cells_of_rows = []
    previous = None
    for _, row in summary.iterrows():
        family = labels.family(row)
        if previous is not None and family != previous:
            body.append(r"\midrule")
        previous = family
        outlier_cell = MISSING if _count(row.get("n")) == 0 else str(_count(row.get("n_outliers")))
        if _count(row.get("n_far_out")):
            outlier_cell += f" ({_count(row.get('n_far_out'))})"
        cells = [
            config_text(row, labels, several) + latex.row_marks(row),
            format_count(row.get("n")),
            fmt_rate(row.get("mean")),
            format_decimal(row.get("ci95_half_width_pct"), 1),
            fmt_rate(row.get("total_rate")),
            two_lines(fmt_rate(row.get("median")), fmt_bracket(row.get("median_ci95_low"), row.get("median_ci95_high"))),
            format_decimal(100.0 * float(row["median_ci_coverage"]), 1)
            if not is_missing(row.get("median_ci_coverage")) else MISSING,
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
        cells_of_rows.append(cells)
        body.append(" & ".join(cells) + r" \\[1pt]")
    adaptive_text = (
        f" Target: whether the configuration's 95\\,\\% CI half-width of the mean over its ok, unflagged trials "
        f"reached the target of {format_decimal(adaptive_state.target_pct, 1)}\\,\\% of the mean (``max.\\ trials'': "
        f"stopped at the maximum number of trials instead)."
        if adaptive_state.enabled else ""
    )
    caption = (
        r"Diagnostics of every configuration's throughput over its measured trials with status ok (flagged ones "
        r"included, as in every table): the mean and the half-width of its Student-$t$ 95\,\% confidence interval "
        r"as a percentage of the mean ($\pm$CI); the rate of the trials together, total requests over total "
        r"measured seconds ($\sum$req./$\sum$s, r/s); the median with its distribution-free interval from order "
        r"statistics and that interval's exact coverage (Cov.; below 95 where the trials are too few for the level, "
        r"the interval then being $[\min, \max]$); Shapiro--Wilk's $W$ and $p$ (at least three trials needed); "
        r"and the trials beyond Tukey's fences (far out in parentheses), which are kept in every statistic."
        + adaptive_text
    )
    size = fitting_size(columns, cells_of_rows, (r"\scriptsize", r"\tiny"), 2.5)
    columns = fitted(columns, cells_of_rows, size, 2.5)
    return longtable(columns, caption, "tab:diagnostics", body, size=size, tabcolsep="2.5pt",
                     notes=mark_notes(summary))


def mark_notes(rows: pd.DataFrame) -> str:
    """The explanations of the flagged / failed / unsupported marks that `latex.row_marks` puts on these rows,
    run together (a longtable's notes paragraph)."""
    return " ".join(latex.notes_for_marks(rows))


def median_coverage_sentence(summary: pd.DataFrame) -> str:
    """The order-statistic interval and its exact coverage for each trial count n in the campaign."""
    counts = sorted({_count(n) for n in summary.get("n", pd.Series(dtype=float)) if _count(n) >= 2})
    if not counts:
        return ("No configuration of this campaign has two or more successful trials, so no interval of a "
                "median is defined.")
    parts = []
    for n in counts:
        result = stats.median_ci(np.arange(n, dtype=float))
        interval = "$[\\min,\\max]$" if result.lower_rank == 1 else f"$[x_{{({result.lower_rank})}}, x_{{({result.upper_rank})}}]$"
        short = "" if result.reaches_level else ", short of 95\\,\\%"
        parts.append(f"with $n={n}$, {interval} covers the median with probability "
                     f"{format_decimal(100 * result.coverage, 1)}\\,\\%{short}")
    text = "In this campaign, " + format_list_text(parts) + "."
    return text[0].upper() + text[1:]


def determinism_sentence(summary: pd.DataFrame) -> str:
    rows = summary[pd.to_numeric(summary.get("n", pd.Series(dtype=float)), errors="coerce") >= 2] \
        if not summary.empty else summary
    if rows.empty:
        return ("this campaign has no configuration with two or more successful trials, so it cannot show how much "
                "they vary, and every interval is undefined (--).")
    sd = pd.to_numeric(rows["sd"], errors="coerce")
    mean = pd.to_numeric(rows["mean"], errors="coerce")
    cv = (100.0 * sd / mean.abs()).replace([np.inf, -np.inf], np.nan).dropna()
    constant = int((sd == 0).sum())
    text = (f"in {'all ' if constant == 0 else ''}{_plural(len(rows) - constant, 'configuration')} with two or more "
            f"successful trials the trials differed from each other")
    if not cv.empty:
        text += (f" (coefficient of variation from {fmt_pct(cv.min())} to {fmt_pct(cv.max())}, median "
                 f"{fmt_pct(cv.median())})")
    if constant:
        text += f", and in {_plural(constant, 'configuration')} all trials gave the same rate"
    return text + ", so every mean and median is reported with a confidence interval."


def normality_sentence(summary: pd.DataFrame, labels: Labeller, several: bool) -> str:
    if summary.empty:
        return "The campaign has no measured configuration to check."
    n = pd.to_numeric(summary["n"], errors="coerce").fillna(0)
    checkable = summary[n >= 3]
    too_few = int(((n > 0) & (n < 3)).sum())
    p = pd.to_numeric(checkable.get("shapiro_p", pd.Series(dtype=float)), errors="coerce")
    passing = checkable[p >= ALPHA]
    failing = checkable[p < ALPHA]
    undefined = checkable[p.isna()]
    parts = []
    if checkable.empty:
        parts.append("No configuration of this campaign has three or more successful trials, so normality cannot be "
                     "checked and every comparison uses the rank test")
    else:
        text = (f"Of the {_plural(len(checkable), 'configuration')} with three or more successful trials, "
                f"{len(passing)} pass Shapiro--Wilk at $\\alpha={format_decimal(ALPHA, 2)}$ and {len(failing)} do not")
        if not failing.empty:
            text += " (" + _named([config_text(r, labels, several) for _, r in failing.iterrows()]) + ")"
        if not undefined.empty:
            text += f"; in {_plural(len(undefined), 'configuration')} all trials were equal, so there is no spread to check"
        parts.append(text)
    if too_few:
        parts.append(f"{_plural(too_few, 'configuration')} with one or two successful trials cannot be checked")
    sentence = "; ".join(parts) + "."
    if not summary.empty:
        sentence += r" Table~\ref{tab:diagnostics} gives $W$ and $p$ per configuration."
    return sentence


def rate_summary_sentence(summary: pd.DataFrame, labels: Labeller, several: bool) -> str:
    if summary.empty:
        return "The campaign has no measured configuration, so there is no rate to summarise."
    mean = pd.to_numeric(summary["mean"], errors="coerce")
    total = pd.to_numeric(summary.get("total_rate", pd.Series(math.nan, index=summary.index)), errors="coerce")
    harmonic = pd.to_numeric(summary.get("harmonic_mean", pd.Series(math.nan, index=summary.index)), errors="coerce")
    valid = mean.notna() & total.notna() & (total > 0)
    if not valid.any():
        return ("No configuration has both the requests and the measured duration of its trials, so the total over "
                "total cannot be computed here; the tables give the arithmetic mean of the rates.")
    relative = (100.0 * (mean - total).abs() / total)[valid]
    worst = summary.loc[relative.idxmax()]
    text = (f"Over the {_plural(int(valid.sum()), 'configuration')} with successful trials, the arithmetic mean of the "
            f"trials' rates, which the tables report as source~000 does, differs from the total over total "
            f"(Table~\\ref{{tab:diagnostics}}) by at most {fmt_pct(relative.max(), 2)} "
            f"({config_text(worst, labels, several)})")
    both = valid & harmonic.notna()
    if both.any():
        harmonic_gap = (100.0 * (harmonic - total).abs() / total)[both]
        text += f", and the harmonic mean by at most {fmt_pct(harmonic_gap.max(), 2)}"
    return text + (": the measured durations differ slightly from the configured one, and wherever the trials of a "
                   "configuration vary more, the harmonic mean, which would be right for fixed work, falls below "
                   "the rate of the trials together.")


def outlier_sentence(trials: pd.DataFrame, summary: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    rows = outliers.outlier_rows(trials, by=("config_id",)) if not trials.empty and "requests_per_sec" in trials \
        else pd.DataFrame(columns=["config_id", "trial_id", "value", "kind"])
    n = pd.to_numeric(summary.get("n", pd.Series(dtype=float)), errors="coerce").fillna(0)
    checkable = int((n >= 4).sum())
    if rows.empty:
        if checkable == 0:
            return ("No configuration has four or more successful trials, the fewest with which a trial can lie "
                    "beyond the fences, so there are no outliers to report.", rows)
        return (f"No trial of the {_plural(checkable, 'configuration')} with four or more successful trials lies "
                "beyond the fences.", rows)
    far = int((rows["kind"] == "far out").sum())
    named = [f"{escape_identifier(r['trial_id'])} ({fmt_rate(r['value'])}\\,r/s"
             + (", far out)" if r["kind"] == "far out" else ")") for _, r in rows.iterrows()]
    text = (f"{_plural(len(rows), 'trial')} in {_plural(rows['config_id'].nunique(), 'configuration')} "
            f"{'lies' if len(rows) == 1 else 'lie'} beyond the fences ({far} far out): {_named(named)}; "
            f"{'it stays' if len(rows) == 1 else 'they stay'} in every statistic, and "
            f"\\texttt{{data/\\allowbreak processed/\\allowbreak {OUTLIERS_CSV}}} lists "
            f"{'it' if len(rows) == 1 else 'them'} with the fences.")
    return text, rows


def adaptive_sentence(state: AdaptiveOutcome, labels: Labeller, summary: pd.DataFrame, several: bool) -> str:
    if not state.enabled:
        return ("Adaptive repetition was off for this campaign (no \\texttt{ci\\_target}): every configuration has its "
                "planned number of trials, and the precision reached is whatever those trials give.")
    total = len(state.configs)
    met = [cid for cid, c in state.configs.items() if c.get("met")]
    stopped = [cid for cid, c in state.configs.items() if not c.get("met") and c.get("stopped_by") == "max_trials"]
    open_ = total - len(met) - len(stopped)
    by_id = {str(r["config_id"]): r for _, r in summary.iterrows()} if not summary.empty else {}

    def name(cid: str) -> str:
        return config_text(by_id[cid], labels, several) if cid in by_id else escape_identifier(cid)

    maximum = f"at most {state.max_trials} trials" if state.max_trials is not None else "no maximum"
    text = (f"Adaptive repetition was on: after the planned trials, rounds of one more trial went to every "
            f"configuration whose 95\\,\\% CI half-width of the mean exceeded "
            f"{format_decimal(state.target_pct, 1)}\\,\\% of the mean ({maximum}). "
            f"{len(met)} of {_plural(total, 'configuration')} met the target")
    if stopped:
        text += f", {len(stopped)} stopped at the maximum without meeting it ({_named([name(c) for c in stopped])})"
    if open_:
        text += f", and {open_} had neither met it nor reached the maximum when the campaign ended"
    source = ("as recorded in the campaign's \\texttt{adaptive/} summary" if state.source == "recorded"
              else "as derived from the trial records")
    return text + f" ({source}" + ("; Table~\\ref{tab:diagnostics})." if not summary.empty else ").")


def half_width_sentence(summary: pd.DataFrame, labels: Labeller, several: bool) -> str:
    half = pd.to_numeric(summary.get("ci95_half_width_pct", pd.Series(dtype=float)), errors="coerce") \
        if not summary.empty else pd.Series(dtype=float)
    defined = half.dropna()
    if defined.empty:
        return ("No configuration has the two successful trials a confidence interval needs, so no precision can "
                "be stated.")
    narrowest, widest = summary.loc[defined.idxmin()], summary.loc[defined.idxmax()]
    return (f"The half-width of the mean's 95\\,\\% CI, as a percentage of the mean, has a median of "
            f"{fmt_pct(defined.median())} over the {_plural(len(defined), 'configuration')} with an interval, from "
            f"{fmt_pct(defined.min())} ({config_text(narrowest, labels, several)}) to {fmt_pct(defined.max())} "
            f"({config_text(widest, labels, several)}); Table~\\ref{{tab:diagnostics}} gives it per configuration.")


def mean_median_sentence(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "The campaign has no measured configuration."
    rows = summary[pd.to_numeric(summary["n"], errors="coerce") >= 2]
    if rows.empty:
        return "No configuration has two or more successful trials, so mean and median cannot disagree here."
    if (pd.to_numeric(rows["n"], errors="coerce") == 2).all():
        return ("With two trials per configuration the median is the mean, so the two summaries cannot disagree "
                "here; with more trials Table~\\ref{tab:diagnostics} shows both.")
    mean = pd.to_numeric(rows["mean"], errors="coerce")
    median = pd.to_numeric(rows["median"], errors="coerce")
    gap = (100.0 * (mean - median).abs() / mean.abs()).replace([np.inf, -np.inf], np.nan)
    half = pd.to_numeric(rows.get("ci95_half_width_pct", pd.Series(math.nan, index=rows.index)), errors="coerce")
    inside = int((gap <= half).sum())
    return (f"Over the {_plural(len(rows), 'configuration')} with two or more successful trials, mean and median "
            f"throughput differ by at most {fmt_pct(gap.max())} of the mean (median {fmt_pct(gap.median())}), and "
            f"in {inside} of them by less than the half-width of the mean's interval, so for throughput either "
            f"centre summarises the trials.")


# =========================================================================== Q-Q plots


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
        if cid in seen or _count(row.get("n")) < 3:
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
    plt = figures.plt  # archbench.report.figures selected the Agg backend before importing pyplot
    values = measured_values(trials)
    labels = Labeller(summary)
    several = _several_depths(summary)
    columns = min(QQ_COLUMNS, len(chosen))
    rows = math.ceil(len(chosen) / columns)
    style = dict(figures.STYLE, **{"axes.titlesize": 6.5, "xtick.labelsize": 6.5, "ytick.labelsize": 6.5})
    with plt.rc_context(style):
        figure, axes = plt.subplots(rows, columns, figsize=(6.3, 1.95 * rows + 0.45), squeeze=False,
                                    sharex=True, sharey=True)
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
            statistic = (f"n={n}, W={float(row['shapiro_w']):.3f}, {p_text}"
                         if not is_missing(row.get("shapiro_w")) else f"n={n}, no spread")
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


def qq_outputs(summary: pd.DataFrame, trials: pd.DataFrame, figures_dir: Path, paper_dir: Path) -> tuple[str, bool]:
    figure = qq_figure(summary, trials)
    path = Path(figures_dir) / QQ_FIGURE
    if figure is None:
        if path.exists():
            path.unlink()
        # The normality sentence already says that no configuration has the three trials a check needs.
        return "% No Q-Q figure: no configuration has three or more successful trials.\n", False
    figures.save_figure(figure, path)
    include = Path(os.path.relpath(path, paper_dir)).as_posix()
    shown = len(qq_configurations(summary))
    caption = (
        r"Normal Q-Q plots of the throughput of the main configurations (the rows of the architecture comparison "
        r"tables and the main pool-size sweep first, then the others, " + str(shown) + r" with three or more "
        r"successful trials shown): each trial's throughput standardised by its configuration's mean and standard "
        r"deviation, against the normal quantile of its rank (Blom's positions $(i-3/8)/(n+1/4)$). Points near the "
        r"grey line $y=x$ are consistent with a normal distribution; with a handful of trials only a gross "
        r"departure shows. Each panel gives $n$ and Shapiro--Wilk's $W$ and $p$."
    )
    return latex.figure_block(include, "fig:qq", caption, ""), True


# =========================================================================== comparisons within the campaign


@dataclass(frozen=True)
class Pair:
    """Two configurations to compare (a - b, a / b) within a family; the texts are plain (not LaTeX)."""

    family: str
    context: str
    a_name: str
    b_name: str
    a: str
    b: str


def comparison_pairs(summary: pd.DataFrame) -> list[Pair]:
    """The families of the report: each pool size against the next smaller (every thread-pool sweep),
    request against connection dispatch at equal N, connections, handoff and depth, and every
    architecture of each comparison table against its nginx reference."""
    if summary.empty:
        return []
    several = _several_depths(summary)
    pairs: list[Pair] = []

    def depth_text(row: Mapping[str, Any]) -> str:
        return f", D={key_text(row.get('pipeline')) or '1'}" if several else ""

    for one in series_of(summary, "threads"):
        if one.first["architecture"] != "thread_pool":
            continue
        rows = one.rows.sort_values("threads", kind="stable")
        first = one.first
        context = (f"{analysis.architecture_label('thread_pool', first.get('dispatch'), first.get('handoff'), short=True)}"
                   f", {format_count(first['connections'])} conn.{depth_text(first)}")
        records = [r for _, r in rows.iterrows()]
        for lower, higher in zip(records, records[1:]):
            pairs.append(Pair("pool", context, f"N={int(float(higher['threads']))}", f"N={int(float(lower['threads']))}",
                              str(higher["config_id"]), str(lower["config_id"])))

    pool = summary[summary["architecture"] == "thread_pool"]
    if not pool.empty and "dispatch" in pool:
        fields = [f for f in ("handoff", "threads", "connections", "pipeline", "load_threads", "duration_s",
                              "response", "load_generator", "proto") if f in pool]
        several_handoffs = pool["handoff"].map(key_text).nunique() > 1 if "handoff" in pool else False
        keyed = pool.assign(_key=[tuple(key_text(r[f]) for f in fields) for _, r in pool.iterrows()])
        for _, rows in keyed.groupby("_key", sort=False):
            request = rows[rows["dispatch"].map(key_text).isin(["request", ""])]
            connection = rows[rows["dispatch"].map(key_text) == "connection"]
            if len(request) == 1 and len(connection) == 1:
                row = request.iloc[0]
                context = f"N={int(float(row['threads']))}, {format_count(row['connections'])} conn.{depth_text(row)}"
                if several_handoffs:
                    context += f", {key_text(row.get('handoff'))}"
                pairs.append(Pair("dispatch", context, "request", "connection", str(row["config_id"]),
                                  str(connection.iloc[0]["config_id"])))

    labels = Labeller(summary)
    for one in analysis.comparisons(summary):
        if one.reference is None:
            continue
        reference = one.reference
        context = f"D={one.pipeline}, {format_count(one.point.get('connections'))} conn." if several \
            else f"{format_count(one.point.get('connections'))} conn."
        for _, row in one.rows.iterrows():
            pairs.append(Pair("nginx", context, labels.variant(row), labels.variant(reference),
                              str(row["config_id"]), str(reference["config_id"])))
    return pairs


def run_comparisons(pairs: Sequence[Pair], trials: pd.DataFrame, *, alpha: float = ALPHA,
                    seed: int | None = stats.DEFAULT_SEED, resamples: int = stats.DEFAULT_RESAMPLES) -> pd.DataFrame:
    """`stats.compare` on every pair, then Holm and Benjamini-Hochberg within each family."""
    values = measured_values(trials)
    empty = np.array([])
    records = []
    for pair in pairs:
        result = stats.compare(values.get(pair.a, empty), values.get(pair.b, empty), alpha, seed=seed,
                               resamples=resamples)
        records.append({"family": pair.family, "context": pair.context, "a_name": pair.a_name, "b_name": pair.b_name,
                        "config_a": pair.a, "config_b": pair.b, **result.as_dict()})
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    return adjust_within_families(frame, alpha)


def adjust_within_families(frame: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """p_holm / reject_holm and p_bh / reject_bh, each family corrected on its own."""
    frame = frame.copy()
    for column in ("p_holm", "p_bh"):
        frame[column] = math.nan
    frame["reject_holm"] = False
    frame["reject_bh"] = False
    frame["family_size"] = 0
    for _, rows in frame.groupby("family", sort=False):
        holm = stats.holm(rows["p_value"].tolist(), alpha)
        bh = stats.benjamini_hochberg(rows["p_value"].tolist(), alpha)
        frame.loc[rows.index, "p_holm"] = holm.adjusted
        frame.loc[rows.index, "reject_holm"] = holm.reject
        frame.loc[rows.index, "p_bh"] = bh.adjusted
        frame.loc[rows.index, "reject_bh"] = bh.reject
        frame.loc[rows.index, "family_size"] = holm.m
    return frame


def effect_cell(row: Mapping[str, Any]) -> str:
    name = str(row.get("effect_size_name") or "")
    if name not in EFFECT_SYMBOLS or is_missing(row.get("effect_size")):
        return MISSING
    top = f"{EFFECT_SYMBOLS[name]}$\\,=\\,${fmt_number(row['effect_size'], 2)}"
    return two_lines(top, fmt_bracket(row.get("effect_size_ci_low"), row.get("effect_size_ci_high"),
                                      lambda v: fmt_number(v, 2)))


def difference_cell(row: Mapping[str, Any]) -> str:
    if is_missing(row.get("difference")):
        return MISSING
    return two_lines(fmt_rate(row["difference"]), fmt_bracket(row.get("difference_ci_low"), row.get("difference_ci_high")))


def ratio_cell(row: Mapping[str, Any]) -> str:
    if is_missing(row.get("ratio")):
        return MISSING
    return two_lines(fmt_number(row["ratio"], 3),
                     fmt_bracket(row.get("ratio_ci_low"), row.get("ratio_ci_high"), lambda v: fmt_number(v, 3)))


def p_equation(p: Any, name: str = r"p_{\mathrm{Holm}}") -> str:
    """'$p_{Holm}=0.012$' or '$p_{Holm}<0.001$' for running text."""
    text = fmt_p(p)
    if text == MISSING:
        return f"${name}$ undefined"
    if text.startswith("$<$"):
        return f"${name}<{text[3:]}$"
    return f"${name}={text}$"


def p_cell(p: Any, reject: Any) -> str:
    text = fmt_p(p)
    return r"\textbf{" + text + "}" if _truthy(reject) and text != MISSING else text


COMPARISON_NOTES = (
    r"Test: Welch's $t$ where both groups pass Shapiro--Wilk (difference of means with Welch's interval, effect "
    r"Hedges' $g$), else M--W, the Mann--Whitney $U$ test (difference of medians with a bootstrap interval, effect "
    r"Cliff's $\delta$); -- where a group has fewer than two successful trials. Ratio: the same centres, a over b, "
    r"with a seeded bootstrap interval. $p$ is adjusted by Holm's method within each family; bold: significant at "
    r"$\alpha=0.05$ after the adjustment."
)


def pair_text(text: Any) -> str:
    """Escaped, with 'N=2' and 'D=16' typeset as mathematics."""
    return re.sub(r"\b([ND])=(\d+)", r"$\1=\2$", escape(text))


def comparisons_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        # The comparison sentence says that the campaign has no pair in the families.
        return "% No comparison table: the campaign has no pair of configurations in the comparison families.\n"
    columns = [
        ("Comparison (a vs b)", "l"),
        (r"$n_a/n_b$", "r"),
        ("Test", "l"),
        (r"$p_{\mathrm{Holm}}$", "r"),
        (latex.stacked("Effect size", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Difference a$-$b", r"(r/s) {[}95\,\% CI{]}"), "r"),
        (latex.stacked("Ratio a/b", r"{[}95\,\% CI{]}"), "r"),
    ]
    body: list[str | list[str]] = []
    for family, rows in frame.groupby("family", sort=False):
        if body:
            body.append(r"\midrule")
        body.append(_family_row(len(columns), f"{FAMILIES.get(family, escape(family))} ($m={int(rows['family_size'].iloc[0])}$ "
                                              f"tested of {len(rows)})"))
        for _, row in rows.iterrows():
            name = f"{pair_text(row['context'])}: {pair_text(row['a_name'])} vs {pair_text(row['b_name'])}"
            body.append([
                name,
                f"{_count(row['n_a'])}/{_count(row['n_b'])}",
                TEST_NAMES.get(str(row["test"]), escape(row["test"])),
                p_cell(row.get("p_holm"), row.get("reject_holm")),
                effect_cell(row),
                difference_cell(row),
                ratio_cell(row),
            ])
    cells_of_rows = [cells for cells in body if isinstance(cells, list)]
    size = fitting_size(columns, cells_of_rows, (r"\footnotesize", r"\scriptsize"), 3.0)
    columns = fitted(columns, cells_of_rows, size, 3.0)
    body = [line if isinstance(line, str) else " & ".join(line) + r" \\[2pt]" for line in body]
    caption = (
        r"Comparisons within the campaign, one family per block, on the throughput of the measured trials with "
        r"status ok: the test the normality check chose, its $p$-value after Holm's correction within the family "
        r"($m$: the comparisons with a defined $p$), the effect size, the difference and the ratio, each with its "
        r"95\,\% confidence interval."
    )
    return longtable(columns, caption, "tab:comparisons", body, size=size, notes=COMPARISON_NOTES)


def comparison_sentence(frame: pd.DataFrame, seed: int | None, resamples: int) -> str:
    if frame.empty:
        return ("This campaign has no pair of configurations in the comparison families (pool sizes of one sweep, "
                "the two dispatch modes at equal $N$, or an architecture and nginx at one depth), so no test is "
                "made; the method above applies as soon as a campaign measures such pairs.")
    sizes = [f"{FAMILY_WORDS.get(f, f)}: {len(rows)}" for f, rows in frame.groupby("family", sort=False)]
    tested = frame[frame["test"] != "none"]
    welch = int((frame["test"] == "welch_t").sum())
    mwu = int((frame["test"] == "mann_whitney_u").sum())
    untested = int((frame["test"] == "none").sum())
    raw = int((pd.to_numeric(tested["p_value"], errors="coerce") < ALPHA).sum())
    holm = int(frame["reject_holm"].map(_truthy).sum())
    bh = int(frame["reject_bh"].map(_truthy).sum())
    text = (f"Table~\\ref{{tab:comparisons}} holds {_plural(len(frame), 'comparison')} in "
            f"{_plural(frame['family'].nunique(), 'family', 'families')} ({'; '.join(sizes)}). The normality check led "
            f"to Welch's $t$ for {welch} and to the Mann--Whitney test for {mwu}")
    if untested:
        text += f"; {untested} could not be tested (a group with fewer than two successful trials)"
    text += (f". Of the {len(tested)} tested, {raw} {'is' if raw == 1 else 'are'} significant at "
             f"$\\alpha={format_decimal(ALPHA, 2)}$ before correction, {holm} after Holm's correction within each family "
             f"and {bh} under Benjamini--Hochberg's.")
    hopeless = tested[tested["notes"].fillna("").str.contains("no outcome could be significant")]
    if not hopeless.empty:
        example = hopeless.iloc[0]
        smallest = min(1.0, 2.0 / math.comb(_count(example["n_a"]) + _count(example["n_b"]), _count(example["n_a"])))
        text += (f" In {len(hopeless)} of them the groups are too small for the rank test ever to be significant (with "
                 f"$n={_count(example['n_a'])}$ and ${_count(example['n_b'])}$ its smallest two-sided $p$ is "
                 f"{format_decimal(smallest, 2)}): their effect sizes and intervals, not their tests, carry the "
                 f"information.")
    text += (f" Bootstrap intervals use seed {seed} and {format_count(resamples)} resamples; "
             f"\\texttt{{data/\\allowbreak processed/\\allowbreak {COMPARISONS_CSV}}} has every column.")
    return text


def speedup_sentence(summary: pd.DataFrame, trials: pd.DataFrame, seed: int | None, resamples: int) -> str:
    """Rule 1: the pool-size speed-up with its base case's absolute rate and a bootstrap interval of the ratio."""
    main = main_pool_series(summary)
    if main is None:
        return ("The campaign has no thread-pool sweep over pool sizes, so no speed-up is reported; every ratio in "
                "the report is one ratio of two measured centres, given beside both absolute rates.")
    rows = main.rows.dropna(subset=["mean"])
    if rows.empty:
        return "The main pool-size sweep has no successful trial, so no speed-up is reported."
    first = rows.iloc[0]
    best = rows.loc[pd.to_numeric(rows["mean"]).idxmax()]
    values = measured_values(trials)
    interval = stats.bootstrap_ratio_ci(values.get(str(best["config_id"]), []), values.get(str(first["config_id"]), []),
                                        center="mean", seed=seed, resamples=resamples)
    base = f"$N={int(float(first['threads']))}$"
    text = (f"The speed-up of the main pool-size sweep ({escape(main.label)}) is stated against its base case, the "
            f"pool of {base} worker{'s' if int(float(first['threads'])) != 1 else ''}, whose absolute rate is "
            f"{fmt_rate(first['mean'])}\\,r/s (95\\,\\% CI {latex.format_interval(first['ci95_low'], first['ci95_high'])})")
    if str(best["config_id"]) == str(first["config_id"]):
        return text + "; no larger pool is faster, so there is no speed-up to report."
    ratio_text = fmt_number(interval.estimate, 2)
    ci_text = fmt_bracket(interval.ci.low, interval.ci.high, lambda v: fmt_number(v, 2))
    return (text + f": the fastest pool, $N={int(float(best['threads']))}$ at {fmt_rate(best['mean'])}\\,r/s, reaches "
            f"{ratio_text} times that rate"
            + (f" (95\\,\\% bootstrap interval of the ratio of means {ci_text})." if ci_text != MISSING
               else " (no interval: a group has fewer than two successful trials)."))


# =========================================================================== cross-OS, cross-host, reference


@dataclass
class CrossOs:
    source_os: pd.DataFrame = field(default_factory=pd.DataFrame)
    source_setups: pd.DataFrame = field(default_factory=pd.DataFrame)
    source_cpu_share: pd.DataFrame = field(default_factory=pd.DataFrame)
    source_error: str = ""
    measured: pd.DataFrame = field(default_factory=pd.DataFrame)
    measured_group: str = ""
    measured_campaigns: list[str] = field(default_factory=list)
    measured_groups: dict[str, list[str]] = field(default_factory=dict)
    measured_unreadable: list[str] = field(default_factory=list)  # "name (error)" of campaigns left out
    reference: pd.DataFrame | None = None
    reference_status: str = ""  # "self", "missing", "error", "ran"
    reference_error: str = ""


def source000_frames(state: CrossOs, path: Path | None = None) -> None:
    try:
        table = crossos.load_source000(path or crossos.SOURCE000_CSV)
    except (OSError, ValueError) as error:
        state.source_error = f"{type(error).__name__}: {error}"
        return
    state.source_os = crossos.source000_cross_os(table)
    state.source_setups = crossos.source000_setups(table)
    state.source_cpu_share = crossos.source000_cross_os(table, match="cpu_share")


def _factor_names(confounded_with: Any) -> list[str]:
    """'cpu: A vs B | compiler: X vs Y' -> ['cpu', 'compiler']."""
    text = "" if is_missing(confounded_with) else str(confounded_with)
    return [part.split(":", 1)[0].strip() for part in text.split(crossos.FACTOR_SEPARATOR) if part.strip()]


FACTOR_WORDS = {"machine": "machine", "cpu": "CPU", "logical_processors": "logical processors",
                "clock_ghz": "reported clock", "memory": "memory", "ethernet": "network adapter",
                "os_version": "OS version", "compiler": "compiler", "client": "client machine",
                "load_command": "load command", "cpu_model": "CPU model", "cpu_count": "logical CPUs",
                "memory_bytes": "memory", "kernel": "kernel", "os": "OS", "hostname": "host"}


def source000_table(state: CrossOs) -> str:
    if state.source_error or (state.source_os.empty and state.source_setups.empty):
        return (r"\noindent Source~000's published tables (\texttt{data/\allowbreak external/\allowbreak "
                r"source000\_throughput.csv}) could not be read (" + escape(state.source_error or "empty") +
                r"), so there is no cross-OS table." + "\n")
    columns = [
        ("a vs b", "l"),
        (latex.stacked("Means a, b (r/s)", "{[}$n${]}"), "r"),
        (r"$t$ ($\nu$)", "r"),
        (r"$p_{\mathrm{Holm}}$", "r"),
        (latex.stacked("Difference a$-$b", r"(r/s) {[}95\,\% CI{]}"), "r"),
        (latex.stacked("Ratio a/b", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Hedges' $g$", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Hardware", "differs"), "c"),
    ]
    blocks = [
        (state.source_os, r"Operating systems at equal thread counts, wrk on a separate client"),
        (state.source_setups, r"Separate client against loopback, Linux machine"),
    ]
    lines = []
    for frame, title in blocks:
        if frame.empty:
            continue
        if lines:
            lines.append(r"\midrule")
        lines.append(_family_row(len(columns), f"{title} (Holm over $m={int(frame['family_size'].iloc[0])}$)"))
        for _, row in frame.iterrows():
            at = (f"{int(row['threads'])} threads" if "threads" in row and not is_missing(row.get("threads")) else "")
            if row["group_by"] == "setup":
                at = f"{escape(row.get('os', ''))}, {at}"
            means = two_lines(f"{fmt_rate(row['mean_a'])} [{_count(row['n_a'])}]",
                              f"{fmt_rate(row['mean_b'])} {{[}}{_count(row['n_b'])}{{]}}")
            pair = f"{escape(row['a'])} vs {escape(row['b'])}"
            lines.append(" & ".join([
                r"\begin{tabular}[t]{@{}l@{}}" + pair + r"\\{}" + at + r"\end{tabular}",
                means,
                f"{fmt_number(row['statistic'], 2)} ({fmt_number(row['df'], 1)})",
                p_cell(row.get("p_adjusted"), row.get("reject")),
                difference_cell(row),
                ratio_cell(row),
                effect_cell(row),
                "yes" if _truthy(row.get("confounded_with_hardware")) else "no",
            ]) + r" \\[2pt]")
    caption = (
        r"Source~000's published results~\cite{src000whaleconnect} compared pair by pair: Welch's $t$-test from the "
        r"published sample mean, sample standard deviation and $n$ (the trials themselves are not published, so "
        r"normality cannot be checked), Holm-corrected within each block; the difference with Welch's interval, the "
        r"ratio with a delta-method interval on the log scale and Hedges' $g$ with its noncentral-$t$ interval. "
        r"Thread counts are the source's (pool size plus one). ``Hardware differs'': the two results come from "
        r"different server hardware (or the same model at a different reported clock), so their difference is not "
        r"an effect of the operating system alone."
    )
    return "\n".join([
        r"\begin{table}[htbp]", r"\centering", r"\footnotesize", r"\setlength{\tabcolsep}{3pt}",
        r"\caption{" + caption + "}", r"\label{tab:crossos-source000}", r"\smallskip",
        r"\begin{adjustbox}{max width=\linewidth}",
        r"\begin{tabular}{" + "".join(a for _, a in columns) + "}",
        r"\toprule", " & ".join(h for h, _ in columns) + r" \\", r"\midrule",
        *lines,
        r"\bottomrule", r"\end{tabular}",
        r"\end{adjustbox}", r"\end{table}", "",
    ])


def source000_sentences(state: CrossOs) -> dict[str, str]:
    if state.source_error or state.source_os.empty:
        missing = ("Source~000's published tables could not be read, so its operating systems are not compared "
                   f"here ({escape(state.source_error or 'no rows')}).")
        return {"source": missing, "confounding": "", "setup": "", "share": ""}
    frame = state.source_os
    significant = frame[frame["reject"].map(_truthy)]
    described = [
        f"{escape(r['a'])} against {escape(r['b'])} at {int(r['threads'])} threads "
        f"({fmt_rate(r['mean_a'])} against {fmt_rate(r['mean_b'])}\\,r/s, ratio {fmt_number(r['ratio'], 2)})"
        for _, r in significant.iterrows()
    ]
    source = (f"Table~\\ref{{tab:crossos-source000}} compares every pair of operating systems that source~000 measured "
              f"at the same thread count: after Holm's correction over the {_plural(len(frame), 'test')}, "
              f"{len(significant)} {'difference is' if len(significant) == 1 else 'differences are'} significant at "
              f"$\\alpha={format_decimal(ALPHA, 2)}$" + (f": {_named(described)}." if described else "."))
    confounded = frame[frame["confounded_with_hardware"].map(_truthy)]
    pairs = []
    for _, r in confounded.iterrows():
        factors = [FACTOR_WORDS.get(f, f.replace("_", " ")) for f in _factor_names(r["confounded_with"])]
        pairs.append(f"{escape(r['a'])} and {escape(r['b'])} in {format_list_text(list(dict.fromkeys(factors)))}")
    if len(confounded) == len(frame):
        confounding = (f"All {_plural(len(frame), 'comparison')} {'is' if len(frame) == 1 else 'are'} confounded with "
                       f"the hardware: the three operating systems ran on different machines (and were built with "
                       f"different compilers), so no difference here is an effect of the operating system alone. The "
                       f"pairs differ as follows: {'; '.join(dict.fromkeys(pairs))}.")
    elif confounded.empty:
        confounding = "No pair differs in its recorded server hardware."
    else:
        confounding = (f"{len(confounded)} of the {_plural(len(frame), 'comparison')} are confounded with the hardware: "
                       f"{'; '.join(dict.fromkeys(pairs))}; those differences are not effects of the operating system "
                       "alone.")
    setups = state.source_setups
    setup = ""
    if not setups.empty:
        parts = [f"{int(r['threads'])} threads: {fmt_rate(r['mean_a'])} ($n={_count(r['n_a'])}$) against "
                 f"{fmt_rate(r['mean_b'])}\\,r/s ($n={_count(r['n_b'])}$), {p_equation(r['p_adjusted'])}"
                 for _, r in setups.iterrows()]
        same = not setups["confounded_with_hardware"].map(_truthy).any()
        others = sorted({FACTOR_WORDS.get(f, f) for c in setups["confounded_with"] for f in _factor_names(c)})
        setup = (f"On the Linux machine the source also ran wrk on the server itself: separate client against "
                 f"loopback at {'; '.join(parts)}. "
                 + ("The server hardware is the same" if same else "The server hardware differs")
                 + (f", but the {format_list_text(others)} differ too, and loopback puts wrk's own load on the server's "
                    "cores." if others else "."))
    share = state.source_cpu_share
    share_text = ""
    if not share.empty:
        share_text = (f"Matched instead by threads per logical processor, the source's own pairing for the "
                      f"eight-processor Mac, {int(share['reject'].map(_truthy).sum())} of "
                      f"{_plural(len(share), 'difference')} {'is' if len(share) == 1 else 'are'} significant after "
                      f"Holm's correction, with the same confounding.")
    return {"source": source, "confounding": confounding, "setup": setup, "share": share_text}


def analysed_campaigns(raw_root: Path, campaign: str) -> list[str]:
    """The campaigns set beside the report's for the cross-host comparison: the shipped reference and every
    campaign imported from another machine (`python -m archbench import` leaves an import/ directory)."""
    names = []
    for name in analysis.list_campaigns(raw_root):
        if name == campaign:
            continue
        if name == REFERENCE_CAMPAIGN or (Path(raw_root) / name / IMPORT_DIR).is_dir():
            names.append(name)
    return names


def _http_only(trials: pd.DataFrame) -> pd.DataFrame:
    """Closed-loop HTTP trials: an echo rate or an open-loop achieved rate is another measure."""
    if "proto" in trials:
        trials = trials[trials["proto"].map(key_text).isin(["", "http"])]
    if "offered_rate" in trials:
        trials = trials[pd.to_numeric(trials["offered_rate"], errors="coerce").isna()]
    return trials


def _load_other(raw_root: Path, name: str) -> pd.DataFrame:
    frame = crossos.load_campaign_trials(Path(raw_root) / name)
    return frame.assign(campaign=name)


def measured_cross_host(state: CrossOs, trials: pd.DataFrame, campaign: str, raw_root: Path | None, *,
                        seed: int | None, resamples: int) -> None:
    """(b): every configuration measured on two or more OSes (else hosts) among the analysed campaigns."""
    frames = [trials.assign(campaign=campaign)]
    names = [campaign]
    if raw_root is not None:
        for name in analysed_campaigns(raw_root, campaign):
            try:
                frames.append(_load_other(raw_root, name))
                names.append(name)
            except (OSError, ValueError, KeyError) as error:  # a broken extra campaign must not break the report
                state.measured_unreadable.append(f"{name} ({type(error).__name__})")
    state.measured_campaigns = names
    combined = _http_only(pd.concat(frames, ignore_index=True)) if frames else trials
    rows = outliers.measured_ok(combined) if not combined.empty else combined
    group = ""
    for column in ("os", "hostname"):
        if column in rows and rows[column].dropna().nunique() >= 2:
            group = column
            break
    state.measured_group = group
    for column in ("os", "hostname"):
        if column in rows:
            state.measured_groups[column] = sorted({str(v) for v in rows[column].dropna()})
    if not group or rows.empty:
        return
    state.measured = crossos.measured_comparisons(combined, group, seed=seed, resamples=resamples,
                                                  family=f"throughput by {group}")


def reference_comparison(state: CrossOs, trials: pd.DataFrame, campaign: str, raw_root: Path | None, *,
                         seed: int | None, resamples: int) -> None:
    """(c): this campaign against data/raw/reference, configuration by configuration."""
    if campaign == REFERENCE_CAMPAIGN:
        state.reference_status = "self"
        return
    if raw_root is None or not (Path(raw_root) / REFERENCE_CAMPAIGN / "campaign.json").is_file():
        state.reference_status = "missing"
        return
    try:
        reference = _http_only(_load_other(raw_root, REFERENCE_CAMPAIGN))
    except (OSError, ValueError, KeyError) as error:
        state.reference_status = "error"
        state.reference_error = f"{type(error).__name__}: {error}"
        return
    local = _http_only(trials.assign(campaign=campaign))
    state.reference = crossos.compare_with_reference(local, reference, seed=seed, resamples=resamples)
    state.reference_status = "ran"


def _measured_label(row: Mapping[str, Any]) -> str:
    if not is_missing(row.get("variant")) and not is_missing(row.get("connections")):
        text = f"{escape(row['variant'])}, {format_count(row['connections'])} conn."
        depth = key_text(row.get("pipeline"))
        if depth and depth != "1":
            text += f", $D={depth}$"
        return text
    return r"\texttt{" + escape(row.get("config_id", "")) + "}"


def measured_table(frame: pd.DataFrame | None, label: str, caption: str, empty_sentence: str) -> str:
    """(b) and (c): per-group means with intervals and the comparison, Holm-corrected (a longtable)."""
    if frame is None or frame.empty:
        # The section's generated sentence (cross host / reference) already says why there is no table.
        return f"% No table: {empty_sentence}\n"
    columns = [
        ("Configuration; a vs b", "l"),
        (r"$n_a/n_b$", "r"),
        (latex.stacked("Mean a (r/s)", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Mean b (r/s)", r"{[}95\,\% CI{]}"), "r"),
        ("Test", "l"),
        (r"$p_{\mathrm{Holm}}$", "r"),
        (latex.stacked("Difference a$-$b", r"(r/s) {[}95\,\% CI{]}"), "r"),
        (latex.stacked("Effect size", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Hard-", "ware"), "c"),
    ]
    one_pair = frame[["a", "b"]].astype(str).drop_duplicates().shape[0] == 1
    cells_of_rows = []
    for _, row in frame.iterrows():
        confounded = row.get("confounded_with_hardware")
        hardware = "?" if confounded is None or is_missing(confounded) else ("differs" if _truthy(confounded) else "same")
        groups = "" if one_pair else r"\newline " + f"{escape(row['a'])} vs {escape(row['b'])}"
        cells_of_rows.append([
            _measured_label(row) + groups,
            f"{_count(row['n_a'])}/{_count(row['n_b'])}",
            two_lines(fmt_rate(row.get("mean_a")), fmt_bracket(row.get("mean_ci_low_a"), row.get("mean_ci_high_a"))),
            two_lines(fmt_rate(row.get("mean_b")), fmt_bracket(row.get("mean_ci_low_b"), row.get("mean_ci_high_b"))),
            TEST_NAMES.get(str(row["test"]), escape(row["test"])),
            p_cell(row.get("p_adjusted"), row.get("reject")),
            difference_cell(row),
            effect_cell(row),
            hardware,
        ])
    # The first cell's two lines (configuration, groups) are measured apart: it is the column being sized.
    if one_pair:
        columns[0] = ("Configuration", columns[0][1])
    size = fitting_size(columns, cells_of_rows, (r"\scriptsize", r"\tiny"), 2.5)
    columns = fitted(columns, cells_of_rows, size, 2.5)
    body = [" & ".join(cells) + r" \\[2pt]" for cells in cells_of_rows]
    if one_pair:
        first = frame.iloc[0]
        body.insert(0, _family_row(len(columns), f"a = {escape(first['a'])}, b = {escape(first['b'])}"))
    notes = COMPARISON_NOTES.replace(r" Ratio: the same centres, a over b, with a seeded bootstrap interval.", "")
    notes = notes.replace("within each family", "over the table")
    return longtable(columns, caption, label, body, size=size, tabcolsep="2.5pt", notes=notes)


def _confounding_summary(frame: pd.DataFrame) -> str:
    differs = frame[frame["confounded_with_hardware"].map(lambda v: v is not None and not is_missing(v) and _truthy(v))]
    unknown = frame[frame["confounded_with_hardware"].map(lambda v: v is None or is_missing(v))]
    factors = sorted({FACTOR_WORDS.get(f, f) for c in frame["confounded_with"] for f in _factor_names(c)})
    if not differs.empty:
        text = (f"In {_plural(len(differs), 'comparison')} the recorded hardware differs, so the difference mixes the "
                "grouping with the machine")
    elif not unknown.empty:
        text = f"For {_plural(len(unknown), 'comparison')} the hardware was not recorded for both groups"
    else:
        text = "The recorded hardware is the same for every pair"
    if factors:
        text += f"; the groups also differ in {format_list_text(factors)}"
    return text + "."


def cross_host_sentence(state: CrossOs) -> str:
    unreadable = ("" if not state.measured_unreadable else
                  " Left out because they could not be read: " + ", ".join(escape(u) for u in state.measured_unreadable)
                  + ".")
    return _cross_host_text(state) + unreadable


def _cross_host_text(state: CrossOs) -> str:
    campaigns = ", ".join(r"\texttt{" + escape(c) + "}" for c in state.measured_campaigns)
    if not state.measured_group:
        hosts = state.measured_groups.get("hostname", [])
        systems = state.measured_groups.get("os", [])
        where = (f"one host ({escape(hosts[0])})" if len(hosts) == 1 else "one host") + (
            f" and one operating system ({escape(systems[0])})" if len(systems) == 1 else "")
        return (f"The campaigns analysed here ({campaigns}) ran on {where}, so no configuration was measured on two "
                f"operating systems or hosts. The comparison is made whenever campaigns from other machines sit beside "
                f"this one (\\texttt{{make import RAW=...}} brings them in).")
    word = "operating systems" if state.measured_group == "os" else "hosts"
    if state.measured.empty:
        return (f"The analysed campaigns ({campaigns}) span {len(state.measured_groups.get(state.measured_group, []))} "
                f"{word}, but no configuration was measured on two of them.")
    holm = int(state.measured["reject"].map(_truthy).sum())
    return (f"The analysed campaigns ({campaigns}) span {len(state.measured_groups[state.measured_group])} {word}. "
            f"Table~\\ref{{tab:crossos-measured}} compares the "
            f"{_plural(state.measured['config_id'].nunique(), 'configuration')} measured on two or more of them "
            f"({_plural(len(state.measured), 'comparison')}, Holm-corrected together): {holm} "
            f"{'is' if holm == 1 else 'are'} significant at $\\alpha={format_decimal(ALPHA, 2)}$. "
            + _confounding_summary(state.measured))


def reference_sentence(state: CrossOs, campaign: str) -> str:
    if state.reference_status == "self":
        return ("This report is built from the reference campaign itself, so there is nothing to set it against. The "
                "comparison of this machine's campaign with the reference is made as soon as a second campaign exists: "
                "after \\texttt{make all} on another machine, or once \\texttt{make import} has brought one in.")
    if state.reference_status == "missing":
        return ("No reference campaign (\\texttt{data/\\allowbreak raw/\\allowbreak reference/}) sits beside this one, "
                "so this campaign is not compared with it; the comparison is made whenever both exist.")
    if state.reference_status == "error":
        return f"The reference campaign could not be read ({escape(state.reference_error)}), so it is not compared."
    frame = state.reference
    if frame is None or frame.empty:
        return (f"Campaign \\texttt{{{escape(campaign)}}} shares no configuration with the reference campaign, so "
                "there is nothing to compare.")
    holm = int(frame["reject"].map(_truthy).sum())
    tested = int((frame["test"] != "none").sum())
    return (f"Table~\\ref{{tab:crossos-reference}} sets campaign \\texttt{{{escape(campaign)}}} (a) against the "
            f"reference campaign (b) for the {_plural(len(frame), 'configuration')} both measured ({tested} tested, "
            f"Holm-corrected together): {holm} {'differs' if holm == 1 else 'differ'} significantly at "
            f"$\\alpha={format_decimal(ALPHA, 2)}$. " + _confounding_summary(frame)
            + " Campaigns also differ in when they ran and in anything not recorded.")


# =========================================================================== environment appendix


def _records(campaign: Any) -> list[dict[str, Any]]:
    return list(getattr(campaign, "trials", []) or [])


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def provenance_values(meta: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Counter]:
    """Flattened provenance key (tools.wrk, python_packages.numpy) -> Counter of its values over the trials
    (campaign.json's provenance when the campaign has no trial record)."""
    sources = [r.get("provenance") or {} for r in records] or [meta.get("provenance") or {}]
    values: dict[str, Counter] = {}
    for source in sources:
        flat: dict[str, Any] = {}
        _flatten("", source, flat)
        for key, value in flat.items():
            values.setdefault(key, Counter())[json.dumps(value, sort_keys=True, default=str)] += 1
    return values


def _value_text(raw: str, typewriter: bool = False) -> str:
    value = json.loads(raw)
    if value is None:
        text = "not recorded"
        return text
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, list):
        text = ", ".join(str(v) for v in value)
    else:
        text = str(value)
    text = escape(text.strip().splitlines()[0] if text.strip() else text)
    return r"\texttt{" + text + "}" if typewriter else text


def _counted(counter: Counter | None, typewriter: bool = False, transform: Callable[[Any], str] | None = None,
             trials: int = 0) -> str:
    if not counter:
        return "not recorded"

    def show(raw: str) -> str:
        if transform is not None:
            value = json.loads(raw)
            return "not recorded" if value is None else transform(value)
        return _value_text(raw, typewriter)

    if len(counter) == 1:
        return show(next(iter(counter)))
    return "; ".join(f"{show(raw)} ({_plural(count, 'trial')})" for raw, count in counter.most_common())


def _gib(value: Any) -> str:
    return format_decimal(float(value) / 2**30, 1) + r"\,GiB"


TOOL_ORDER = ("wrk", "wrk2", "oha", "nginx", "taskset", "cmake", "gcc")


def provenance_table(meta: Mapping[str, Any], records: Sequence[Mapping[str, Any]], trials: pd.DataFrame) -> str:
    """Every provenance fact the campaign recorded, grouped; a value that changed between trials is listed with
    how many trials had each."""
    values = provenance_values(meta, records)
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    groups.append(("Hardware", [
        ("CPU model", _counted(values.get("cpu_model"))),
        ("Logical CPUs", _counted(values.get("cpu_count"))),
        ("CPUs the runner could use", _counted(values.get("cpu_affinity"))),
        ("Memory", _counted(values.get("memory_bytes"), transform=_gib)),
    ]))
    groups.append(("Operating system", [
        ("Operating system", _counted(values.get("os"))),
        ("Family", _counted(values.get("os_family"))),
        ("Kernel", _counted(values.get("kernel"))),
        ("Host name", _counted(values.get("hostname"))),
        ("Open files (soft, hard)", _counted(values.get("open_files_limit"))),
        (r"\texttt{net.core.somaxconn}", _counted(values.get("somaxconn"))),
    ]))
    groups.append(("Build of the servers", [
        ("Compiler", _counted(values.get("compiler"))),
        ("C flags", _counted(values.get("c_flags"), typewriter=True)),
        ("Build type", _counted(values.get("build_type"))),
        ("Architectures built", _counted(values.get("build_architectures"))),
    ]))
    tools = sorted({k.split(".", 1)[1] for k in values if k.startswith("tools.")},
                   key=lambda t: (TOOL_ORDER.index(t) if t in TOOL_ORDER else len(TOOL_ORDER), t))
    groups.append(("Tools (first line of each version output)",
                   [(escape(t), _counted(values.get(f"tools.{t}"))) for t in tools] or [("Tools", "not recorded")]))
    packages = sorted(k.split(".", 1)[1] for k in values if k.startswith("python_packages."))
    measured_python = [("Python", _counted(values.get("python")))]
    if packages:
        measured_python += [(escape(p), _counted(values.get(f"python_packages.{p}"))) for p in packages]
    else:
        measured_python.append(("Packages", "not recorded (the campaign predates their recording)"))
    groups.append(("Python of the measurement (recorded with the trials)", measured_python))
    analysis_packages = provenance.python_packages()
    groups.append(("Python of this analysis (the machine that built the report)",
                   [("Python", escape(platform.python_version()))]
                   + [(escape(name), escape(version or "not installed")) for name, version in analysis_packages.items()]))
    needed = [((r.get("open_files") or {}).get("needed")) for r in records]
    needed = [int(n) for n in needed if isinstance(n, (int, float))]
    server_cpus = Counter(str((r.get("server") or {}).get("cpus")) for r in records if (r.get("server") or {}).get("cpus"))
    load_cpus = Counter(str((r.get("load") or {}).get("cpus")) for r in records if (r.get("load") or {}).get("cpus"))
    groups.append(("Limits and pinning of the trials", [
        ("Descriptors needed per process", f"at most {format_count(max(needed))} (connections + "
         f"{analysis_headroom()})" if needed else "not recorded"),
        ("Server CPUs (\\texttt{taskset -c})", "; ".join(f"{escape(k)} ({_plural(v, 'trial')})" for k, v in
                                                          server_cpus.most_common()) if len(server_cpus) > 1
         else (escape(next(iter(server_cpus))) if server_cpus else "not recorded")),
        ("Load generator CPUs", "; ".join(f"{escape(k)} ({_plural(v, 'trial')})" for k, v in load_cpus.most_common())
         if len(load_cpus) > 1 else (escape(next(iter(load_cpus))) if load_cpus else "not recorded")),
    ]))
    groups.append(("Code and campaign", [
        ("Git commit", _counted(values.get("git_commit"), typewriter=True)),
        ("Uncommitted changes", _counted(values.get("git_dirty"))),
        ("Campaign", escape(meta.get("campaign", ""))),
        ("Profile", escape(meta.get("profile") or "not recorded")),
        ("Seed of the trial order", escape(meta.get("seed", "not recorded"))),
        ("Created (UTC)", escape(str(meta.get("created_at") or "not recorded")[:19].replace("T", " "))),
    ]))
    body = []
    for title, items in groups:
        if body:
            body.append(r"\midrule")
        body.append(r"\multicolumn{2}{@{}l}{\textbf{" + title + r"}} \\")
        body += [f"{name} & {value} \\\\" for name, value in items]
    caption = (r"Provenance recorded with the campaign's trials (\texttt{docs/\allowbreak contracts.md}, section~2): a value that differed "
               r"between trials is listed with the number of trials that recorded each. The analysis versions are "
               r"those of the machine that built this report.")
    return longtable([("Item", r">{\raggedright\arraybackslash}p{4.4cm}"),
                      ("Value", r">{\raggedright\arraybackslash}p{10.6cm}")],
                     caption, "tab:provenance", body, size=r"\footnotesize")


def analysis_headroom() -> str:
    return str(FD_HEADROOM)


FACTOR_NAMES = {
    "architecture": "architecture", "dispatch": "thread-pool dispatch", "handoff": "thread-pool hand-off",
    "trigger": "epoll trigger", "max_threads": "thread cap (thread per connection)",
    "threads": "threads or workers $N$", "connections": "connections (wrk \\texttt{-c})",
    "load_threads": "load threads (wrk \\texttt{-t})", "duration_s": "duration (s)", "response": "response",
    "load_generator": "load generator", "pipeline": "pipeline depth $D$", "proto": "protocol",
}
# Campaign parameters that are bookkeeping, not factors (the name, where the files went).
PARAMETER_SKIP = ("campaign", "raw_root", "build_dir")


def factor_levels(summary: pd.DataFrame, trials: pd.DataFrame) -> list[tuple[str, list[tuple[str, int]]]]:
    """(configuration field, [(level, configurations at it)]) for every configuration field, in CONFIG_FIELDS
    order then the extras; 'none' is the level of an architecture without the field."""
    if summary.empty:
        return []
    fields = trials.attrs.get("config_columns") or [f for f in analysis.CONFIG_FIELDS if f in summary]
    out = []
    for name in fields:
        if name not in summary:
            continue
        default = "http" if name == "proto" else "n/a"  # contracts.md: a missing proto means http
        counts = Counter(key_text(v) or default for v in summary[name])
        def order(item: tuple[str, int]) -> tuple[int, float, str]:
            level = item[0]
            if level == "n/a":
                return (2, 0.0, level)
            try:
                return (0, float(level), level)
            except ValueError:
                rank = analysis.architecture_rank(level) if name == "architecture" else 0
                return (1, float(rank), level)
        out.append((name, sorted(counts.items(), key=order)))
    return out


def _parameter_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_parameter_text(v) for v in value) if value else "none"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}={_parameter_text(v)}" for k, v in value.items()) if value else "none"
    return str(value)


def _server_entry_text(entry: Any) -> str:
    if not isinstance(entry, Mapping):
        return str(entry)
    name = str(entry.get("architecture", "?"))
    options = [f"{k}={'/'.join(str(x) for x in v) if isinstance(v, (list, tuple)) else v}"
               for k, v in entry.items() if k != "architecture"]
    return name + (":" + ",".join(options) if options else "")


def factors_table(meta: Mapping[str, Any], summary: pd.DataFrame, trials: pd.DataFrame,
                  records: Sequence[Mapping[str, Any]] = ()) -> str:
    levels = factor_levels(summary, trials)
    varying = [(n, l) for n, l in levels if len(l) > 1]
    fixed = [(n, l) for n, l in levels if len(l) == 1]
    body = []

    def level_text(items: list[tuple[str, int]], with_counts: bool) -> str:
        return ", ".join(escape(level) + (f" ({count})" if with_counts else "") for level, count in items)

    body.append(r"\multicolumn{2}{@{}l}{\textbf{Varying factors: levels (configurations at each)}} \\")
    body += [f"{FACTOR_NAMES.get(n, escape(n))} & {level_text(l, True)} \\\\" for n, l in varying] or \
        [r"\multicolumn{2}{@{}l}{none: the campaign has " + ("one configuration" if len(summary) == 1 else
                                                               "no configuration") + r"} \\"]
    body.append(r"\midrule")
    body.append(r"\multicolumn{2}{@{}l}{\textbf{Fixed factors (one level in every configuration)}} \\")
    body += [f"{FACTOR_NAMES.get(n, escape(n))} & {level_text(l, False)} \\\\" for n, l in fixed] or \
        [r"\multicolumn{2}{@{}l}{none} \\"]
    body.append(r"\midrule")
    body.append(r"\multicolumn{2}{@{}l}{\textbf{Campaign parameters (campaign.json)}} \\")
    parameters = dict(meta.get("parameters") or {})
    if not parameters:
        body.append(r"\multicolumn{2}{@{}l}{none recorded} \\")
    for name, value in parameters.items():
        if name in PARAMETER_SKIP:
            continue
        if name == "servers" and isinstance(value, list):
            text = "; ".join(escape_identifier(_server_entry_text(e)) for e in value) or "none"
        else:
            text = escape(_parameter_text(value))
        body.append(f"\\texttt{{{escape(name)}}} & {text} \\\\")
    if "seed" not in parameters:
        body.append(f"\\texttt{{seed}} & {escape(meta.get('seed', 'not recorded'))} \\\\")
    if not trials.empty:
        measured = trials[~outliers.truthy(trials["warmup"])]
        per_config = measured.groupby("config_id").size() if not measured.empty else pd.Series(dtype=int)
        warmups = trials[outliers.truthy(trials["warmup"])].groupby("config_id").size()
        body.append(r"\midrule")
        body.append(r"\multicolumn{2}{@{}l}{\textbf{As run (from the trial records)}} \\")
        body.append(f"measured trials per configuration & {format_list(sorted(set(per_config.tolist())) or [0])} \\\\")
        body.append(f"warm-up trials per configuration & {format_list(sorted(set(warmups.tolist())) or [0])} \\\\")
        added = sum(1 for record in records if record.get("adaptive"))
        body.append(f"trials added by adaptive repetition & {added} \\\\")
    caption = (r"Every factor of the campaign and its levels: the configuration fields that vary between the "
               r"configurations (with the number of configurations at each level; n/a: the architecture has no such "
               r"option), those that are the same in all, "
               r"and the campaign parameters as recorded in \texttt{campaign.json}, including per-server sweeps, "
               r"durations, trial counts, warm-up, timeouts and CPU sets.")
    return longtable([("Factor", r">{\raggedright\arraybackslash}p{4.4cm}"),
                      ("Levels or value", r">{\raggedright\arraybackslash}p{10.6cm}")],
                     caption, "tab:factors", body, size=r"\footnotesize")


def environment_sentence(meta: Mapping[str, Any], summary: pd.DataFrame, trials: pd.DataFrame,
                         records: Sequence[Mapping[str, Any]]) -> str:
    levels = factor_levels(summary, trials)
    varying = [FACTOR_NAMES.get(n, escape(n)) for n, l in levels if len(l) > 1]
    changed = latex.provenance_differences(list(records))
    text = (f"The campaign's {_plural(len(summary), 'configuration')} "
            + (f"vary {_plural(len(varying), 'factor')}: {format_list_text(varying)}."
               if varying else "vary no configuration field.")
            )
    if changed:
        text += (" The recorded provenance changed during the campaign in "
                 + format_list_text([r"\texttt{" + escape(c) + "}" for c in changed])
                 + ", listed value by value in Table~\\ref{tab:provenance}.")
    else:
        text += " The recorded provenance is the same for every trial."
    return text


# =========================================================================== the twelve rules


RULES: tuple[str, ...] = (
    "For a speed-up, report the base case and its absolute performance.",
    "Say why only a subset of the benchmarks or of the resources is used.",
    "Summarise costs with the arithmetic mean, rates with the harmonic mean (or total over total).",
    "Do not summarise ratios; summarise the costs or rates behind them (a geometric mean only if unavoidable).",
    "Report whether measurements are deterministic; give confidence intervals for nondeterministic data.",
    "Do not assume normality without a diagnostic check.",
    "Compare nondeterministic data in a statistically sound way.",
    "Check whether the mean or median is a useful summary; some questions need other percentiles.",
    "Document every varying factor, its levels and the complete set-up.",
    "Report the measurement, synchronisation and summarisation techniques.",
    "Show upper performance bounds where possible.",
    "Plot enough information to interpret the results; connect points by lines only where interpolation is valid.",
)


@dataclass
class ReportContext:
    """What the rules table may cite: which tables and figures exist in this build, and the key facts."""

    summary: pd.DataFrame
    trials: pd.DataFrame
    meta: Mapping[str, Any]
    pool_table_labels: list[str]
    architecture_table_labels: list[str]
    figures_present: dict[str, bool]
    qq_present: bool
    comparisons: pd.DataFrame
    cross: CrossOs
    adaptive_state: AdaptiveOutcome


def _refs(labels: Sequence[str], kind: str = "Table") -> str:
    labels = list(labels)
    if not labels:
        return ""
    if len(labels) == 1:
        return f"{kind}~\\ref{{{labels[0]}}}"
    return f"{kind}s~" + ", ".join(f"\\ref{{{l}}}" for l in labels[:-1]) + f" and~\\ref{{{labels[-1]}}}"


def main_pool_table_label(main: Any, labels: Sequence[str]) -> str | None:
    """The label of the source-000 table that holds the main pool-size sweep (latex.pool_size_table_blocks
    names them tab:threads-<architecture>-<dispatch>-<handoff>[-p<depth>])."""
    first = main.first
    stem = "tab:threads-" + "-".join(
        k for k in ("thread_pool", key_text(first.get("dispatch")), key_text(first.get("handoff"))) if k
    ).replace("_", "-")
    depth = key_text(first.get("pipeline")) or "1"
    wanted = stem if depth == "1" else f"{stem}-p{depth}"
    return wanted if wanted in labels else None


def cpus_in_use(trials: pd.DataFrame, meta: Mapping[str, Any]) -> tuple[set[int], int]:
    """(the CPUs the server or the load generator was pinned to in any trial, the machine's logical CPUs or 0)."""
    used: set[int] = set()
    for column in ("server_cpus", "load_cpus"):
        if column in trials:
            for value in trials[column].dropna():
                used |= analysis.parse_cpu_list(value)
    count = (meta.get("provenance") or {}).get("cpu_count")
    return used, int(count) if isinstance(count, (int, float)) and not isinstance(count, bool) else 0


def rule_rows(ctx: ReportContext) -> list[tuple[str, str]]:
    """(status, where and how) for each of the twelve rules, citing only what this build contains."""
    summary = ctx.summary
    has_data = not summary.empty and (pd.to_numeric(summary["n"], errors="coerce").fillna(0) > 0).any()
    n = pd.to_numeric(summary.get("n", pd.Series(dtype=float)), errors="coerce").fillna(0)
    arch = _refs(ctx.architecture_table_labels)
    rows: list[tuple[str, str]] = []

    # 1. base case of speed-ups
    main = main_pool_series(summary) if not summary.empty else None
    if main is not None and main.rows["mean"].notna().any():
        table = main_pool_table_label(main, ctx.pool_table_labels)
        text = ("Met. The pool-size speed-up is given against the base case, the smallest pool, with its absolute "
                "rate and interval, and the ratio's bootstrap interval (Section~\\ref{sec:comparisons})"
                + (f"; {_refs([table])} lists every pool size's absolute rate." if table else "."))
        if ctx.architecture_table_labels:
            text += f" Ratios to nginx stand beside both absolute rates ({arch})."
        rows.append(("met", text))
    elif ctx.architecture_table_labels:
        rows.append(("met", f"No speed-up is reported. The ratios to nginx stand beside both absolute rates ({arch})."))
    else:
        rows.append(("n/a", "Not applicable: this campaign reports no speed-up and no ratio."))

    # 2. subsets
    profile = escape(ctx.meta.get("profile") or "unknown")
    missing = int(pd.to_numeric(summary.get("n_missing", pd.Series(dtype=float)), errors="coerce").fillna(0).sum()) \
        if not summary.empty else 0
    used, total = cpus_in_use(ctx.trials, ctx.meta)
    idle = total - len(used) if total else 0
    subset = (
        f"The campaign (profile {profile}) measures the configurations of Table~\\ref{{tab:factors}}. Where a profile "
        "trims the full grid of architectures, connections, threads and depths, it keeps the one-dimensional sweeps "
        "that answer the questions asked (how a design copes with more connections, what more threads or workers "
        "cost) and leaves out the rest of the cross product, whose interactions neither sweep needs "
        "(\\texttt{archbench/\\allowbreak profiles.py}). Server and load generator are pinned to disjoint CPU sets so "
        "that they never compete for a core (Section~\\ref{sec:method}). Failed, unsupported and flagged trials are "
        "counted, never dropped"
        + (f", and so {'is' if missing == 1 else 'are'} the {_plural(missing, 'planned trial')} without a record."
           if missing else ".")
    )
    if idle > 0:
        rows.append(("partly", (
            f"Partly. {subset} But {idle} of the machine's {total} logical CPUs ran neither the server nor the load "
            "generator, so how a server scales onto more cores than its pinned set is outside this campaign.")))
    else:
        rows.append(("met", f"Met. {subset}" + (f" Together they use all {total} logical CPUs." if total else "")))

    # 3. means
    if has_data:
        rows.append(("met", (
            "Met. Throughput is a rate: Table~\\ref{tab:diagnostics} gives total requests over total measured seconds "
            "beside the arithmetic mean the tables report (wrk runs for a fixed time, so the two agree up to the "
            "measured durations, Section~\\ref{sec:statistics}); server CPU time per request is a cost and is "
            "averaged arithmetically.")))
    else:
        rows.append(("n/a", "Not applicable to this campaign: no rate was measured. Section~\\ref{sec:statistics} "
                            "gives the rule the analysis applies."))

    # 4. ratios
    rows.append(("met", (
        "Met. No ratio is averaged: each ratio (to nginx, between pool sizes, between compared configurations) is one "
        "ratio of two measured centres, with a seeded bootstrap interval where it is tested"
        + (" (Table~\\ref{tab:comparisons})" if not ctx.comparisons.empty else "")
        + "; no geometric mean is used.")))

    # 5. determinism and CIs
    if (n >= 2).any():
        rows.append(("met", (
            "Met. The trials are nondeterministic (Section~\\ref{sec:statistics} gives the spread); every mean has "
            "its Student-$t$ interval and every median its order-statistic interval with the coverage reached "
            "(Table~\\ref{tab:diagnostics}); configurations with fewer than two trials show a dash, not a number.")))
    else:
        rows.append(("partly", (
            "Partly. The measurements are nondeterministic, but this campaign has no configuration with two successful "
            "trials, so every interval is undefined and shown as a dash (Section~\\ref{sec:statistics}).")))

    # 6. normality
    checkable = summary[n >= 3] if not summary.empty else summary
    qq = " and the Q-Q plots of Figure~\\ref{fig:qq}" if ctx.qq_present else ""
    if checkable.empty:
        rows.append(("partly", (
            "Partly. No configuration has the three trials Shapiro--Wilk needs, so normality is not assumed: a "
            "comparison would use the Mann--Whitney test. The Student-$t$ intervals of the means do assume it; the "
            "distribution-free intervals of the medians beside them do not" + (
                " (Table~\\ref{tab:diagnostics})." if not summary.empty else "."))))
    else:
        p = pd.to_numeric(checkable["shapiro_p"], errors="coerce")
        failing = int((p < ALPHA).sum())
        status = "met" if failing == 0 and len(checkable) == int((n > 0).sum()) else "partly"
        rows.append((status, (
            ("Met. " if status == "met" else "Partly. ")
            + f"Shapiro--Wilk checks every configuration with three or more trials (Table~\\ref{{tab:diagnostics}}){qq}; "
            "a comparison uses Welch's $t$ only when both groups pass. The Student-$t$ intervals of the means still "
            "assume approximate normality"
            + (f" ({failing} of {len(checkable)} checked configurations fail the check)" if failing else "")
            + "; the order-statistic intervals of the medians beside them assume nothing.")))

    # 7. sound comparisons
    if not ctx.comparisons.empty:
        rows.append(("met", (
            "Met. Configurations are compared by the test the normality check selects, with effect sizes and "
            "intervals, Holm-corrected within each family (Table~\\ref{tab:comparisons}); source~000's operating "
            "systems likewise, from its summary statistics (Table~\\ref{tab:crossos-source000})"
            + ("; and the machines and campaigns of Section~\\ref{sec:crossos}" if (
                not ctx.cross.measured.empty or (ctx.cross.reference is not None and not ctx.cross.reference.empty))
               else "") + ".")))
    else:
        rows.append(("partly", (
            "Partly. This campaign has no pair of configurations in the comparison families, so none is tested "
            "(Section~\\ref{sec:comparisons}); source~000's operating systems are compared soundly from its "
            "published statistics (Table~\\ref{tab:crossos-source000}).")))

    # 8. mean vs median, percentiles
    latency = (f"; latency, a tail question, is given as wrk's median and 99th percentile ({arch})"
               if ctx.architecture_table_labels else "")
    rows.append(("met" if has_data else "n/a", (
        ("Met. " if has_data else "Not applicable to this campaign (no measurement). ")
        + "Mean and median of the throughput are given side by side, each with its interval, and how far they "
          "differ (Section~\\ref{sec:statistics}" + (", Table~\\ref{tab:diagnostics})" if not summary.empty else ")")
        + latency + ".")))

    # 9. factors and set-up
    rows.append(("met", (
        "Met. Appendix~\\ref{app:environment} lists every varying factor with its levels, the fixed ones and the "
        "campaign parameters (Table~\\ref{tab:factors}), and the hardware, software, build, tools, limits, pinning "
        "and code version recorded with every trial (Table~\\ref{tab:provenance})."
        + (" Source~000's set-ups, which differ in hardware, are named on every cross-OS row "
           "(Table~\\ref{tab:crossos-source000})." if not ctx.cross.source_os.empty else ""))))

    # 10. techniques
    rows.append(("met", (
        "Met. Section~\\ref{sec:method} gives how each trial is measured (a fresh pinned server, wrk's fixed-time closed "
        "loop, warm-up trials excluded, randomised interleaved order, starvation counted by the server); no "
        "synchronisation across processes is needed, since wrk times its own run; Section~\\ref{sec:statistics} gives "
        "every summary, interval and test, with its seed.")))

    # 11. upper bounds
    if ctx.architecture_table_labels:
        rows.append(("partly", (
            f"Partly. No analytical bound is derived; the fastest server measured at each depth, and nginx, serve as "
            f"measured upper bounds ({arch}), and client-bound trials are marked where wrk, not the server, set the "
            f"rate (Section~\\ref{{sec:architectures}}).")))
    else:
        rows.append(("partly", (
            "Partly. No analytical bound is derived, and this campaign measured too few servers at one depth for a "
            "measured bound; client-bound trials would be marked where wrk, not the server, set the rate.")))

    # 12. plots
    present = [k for k, v in ctx.figures_present.items() if v]
    if present or ctx.qq_present:
        rows.append(("met", (
            "Met. The figures show means with their confidence intervals and, along the pool-size and connection "
            "sweeps, every trial; points are joined by lines only along a numeric sweep (threads, connections), where "
            "intermediate values exist; architectures, which have no order, are bars"
            + (", and normality is shown as Q-Q plots" if ctx.qq_present else "") + ".")))
    else:
        rows.append(("partly", (
            "Partly. The campaign has too few configurations for any figure; the tables carry every number, with "
            "intervals.")))
    return rows


STATUS_WORDS = {"met": "met", "partly": "partly", "n/a": "n/a"}


def rules_table(rows: Sequence[tuple[str, str]]) -> str:
    body = []
    for number, (rule, (status, text)) in enumerate(zip(RULES, rows), start=1):
        body.append(f"{number} & {rule} & {STATUS_WORDS.get(status, status)} & {text} \\\\[2pt]")
    caption = (r"The twelve rules of Hoefler and Belli~\cite{hoefler2015scientific}, paraphrased (the wording is "
               r"ours; see the paper for theirs), with whether and where this report meets each. Status: met, partly "
               r"met (the reason is given) or not applicable (n/a) to this campaign.")
    return longtable([("", "r"), ("Rule (paraphrased)", r">{\raggedright\arraybackslash}p{4.6cm}"),
                      ("Status", "l"), ("Where and how", r">{\raggedright\arraybackslash}p{8.4cm}")],
                     caption, "tab:rules", body, size=r"\footnotesize")


def rules_summary_sentence(rows: Sequence[tuple[str, str]]) -> str:
    counts = Counter(status for status, _ in rows)
    partly = [str(i) for i, (status, _) in enumerate(rows, start=1) if status == "partly"]
    na = [str(i) for i, (status, _) in enumerate(rows, start=1) if status == "n/a"]
    text = f"For this campaign, {counts.get('met', 0)} of the twelve rules are met"
    if partly:
        text += f", {len(partly)} partly ({'rule' if len(partly) == 1 else 'rules'} {format_list_text(partly)})"
    if na:
        text += f", and {len(na)} {'does' if len(na) == 1 else 'do'} not apply ({'rule' if len(na) == 1 else 'rules'} " \
                f"{format_list_text(na)})"
    return text + "; the table says why."


# =========================================================================== entry point


def generate(
    processed: analysis.ProcessedCampaign,
    macros: MacroSet,
    generated_dir: Path,
    figures_dir: Path,
    figures_present: Mapping[str, bool] | None = None,
    *,
    raw_root: Path | None = None,
    seed: int | None = stats.DEFAULT_SEED,
    resamples: int = stats.DEFAULT_RESAMPLES,
    source000_csv: Path | None = None,
) -> dict[str, str]:
    """Add the sections' macros to `macros`, write the processed tables and the Q-Q figure, and return the
    generated LaTeX files (name -> text). `raw_root` defaults to the campaign directory's parent (where the
    reference and imported campaigns are)."""
    summary, trials, campaign = processed.summary, processed.trials, processed.campaign
    campaign_dir = Path(campaign.path)
    campaign_name = campaign_dir.name
    raw_root = Path(raw_root) if raw_root is not None else campaign_dir.parent
    generated_dir, figures_dir = Path(generated_dir), Path(figures_dir)
    processed_dir = Path(processed.summary_csv).parent
    labels = Labeller(summary) if not summary.empty else Labeller(pd.DataFrame(columns=["architecture"]))
    several = _several_depths(summary)
    meta = campaign.meta
    records = _records(campaign)

    # Method constants (not measurements) that the text quotes.
    macros.add("bootstrap seed", escape(seed if seed is not None else "none"), "seed of every bootstrap interval")
    macros.add("bootstrap resamples", format_count(resamples), "bootstrap resamples")
    macros.add("normality alpha", format_decimal(ALPHA, 2), "Shapiro-Wilk level for choosing Welch's t")
    macros.add("test alpha", format_decimal(ALPHA, 2), "significance level of the tests (after correction)")

    # Statistics section.
    state = adaptive_outcome(campaign_dir, meta, trials)
    macros.add("determinism sentence", determinism_sentence(summary), "spread of the trials (rule 5)")
    macros.add("median coverage sentence", median_coverage_sentence(summary), "order-statistic coverage per n")
    macros.add("normality sentence", normality_sentence(summary, labels, several), "Shapiro-Wilk outcomes")
    qq_tex, qq_present = qq_outputs(summary, trials, figures_dir, generated_dir.parent)
    macros.add("qq figure sentence",
               "Figure~\\ref{fig:qq} shows the normal Q-Q plots of the main configurations." if qq_present else "",
               "cites the Q-Q figure (empty without one)")
    macros.add("rate summary sentence", rate_summary_sentence(summary, labels, several), "rule 3 in numbers")
    outlier_text, outlier_frame = outlier_sentence(trials, summary)
    macros.add("outlier sentence", outlier_text, "Tukey outliers, named")
    macros.add("adaptive sentence", adaptive_sentence(state, labels, summary, several), "adaptive repetition")
    macros.add("half width sentence", half_width_sentence(summary, labels, several), "achieved CI half-widths")
    macros.add("mean median sentence", mean_median_sentence(summary), "mean against median")

    pairs = comparison_pairs(summary)
    comparisons = run_comparisons(pairs, trials, seed=seed, resamples=resamples)
    macros.add("comparison sentence", comparison_sentence(comparisons, seed, resamples), "the comparison families")
    macros.add("speedup sentence", speedup_sentence(summary, trials, seed, resamples), "rule 1: base case")
    holm_count = int(comparisons["reject_holm"].map(_truthy).sum()) if not comparisons.empty else 0
    macros.add(
        "comparison abstract sentence",
        (f"Of {_plural(len(comparisons), 'planned comparison')} between configurations, {holm_count} "
         f"{'is' if holm_count == 1 else 'are'} significant after Holm's correction."
         if not comparisons.empty else "The campaign has no pair of configurations to compare."),
        "the comparisons in one sentence",
    )

    # Cross-OS section.
    cross = CrossOs()
    source000_frames(cross, source000_csv)
    sentences = source000_sentences(cross)
    macros.add("cross os source sentence", sentences["source"], "source 000's OS comparison")
    macros.add("cross os confounding sentence", sentences["confounding"], "what the OS effect is confounded with")
    macros.add("cross os setup sentence", sentences["setup"], "separate client against loopback")
    macros.add("cross os cpu share sentence", sentences["share"], "matched by threads per logical processor")
    measured_cross_host(cross, trials, campaign_name, raw_root, seed=seed, resamples=resamples)
    macros.add("cross host sentence", cross_host_sentence(cross), "configurations measured on several OSes/hosts")
    reference_comparison(cross, trials, campaign_name, raw_root, seed=seed, resamples=resamples)
    macros.add("reference sentence", reference_sentence(cross, campaign_name), "this campaign against the reference")

    # Environment appendix.
    macros.add("environment sentence", environment_sentence(meta, summary, trials, records), "factors and provenance")

    # Rules.
    context = ReportContext(
        summary=summary, trials=trials, meta=meta,
        pool_table_labels=[label for label, _ in latex.pool_size_table_blocks(summary)],
        architecture_table_labels=[label for label, _ in latex.comparison_table_blocks(summary)],
        figures_present=dict(figures_present or {}), qq_present=qq_present, comparisons=comparisons, cross=cross,
        adaptive_state=state,
    )
    rows = rule_rows(context)
    macros.add("rules summary sentence", rules_summary_sentence(rows), "how many rules are met")

    _write_processed(processed_dir, comparisons, cross, outlier_frame)
    measured_caption = (
        r"Configurations measured on two or more " + ("operating systems" if cross.measured_group == "os" else "hosts")
        + r" among the analysed campaigns: each group's mean throughput with its Student-$t$ interval, the test "
        r"the normality check chose, its $p$-value after Holm's correction over the table, the difference and the "
        r"effect size with their 95\,\% intervals, and whether the recorded hardware differs (? where it was not "
        r"recorded for both)."
    )
    reference_caption = (
        r"This campaign (a) against the reference campaign (b), configuration by configuration: means with "
        r"Student-$t$ intervals, the test the normality check chose, Holm-adjusted $p$, the difference and the "
        r"effect size with their 95\,\% intervals, and whether the recorded hardware differs."
    )
    return {
        DIAGNOSTICS_TABLE_FILE: diagnostics_table(summary, state),
        QQ_FIGURE_FILE: qq_tex,
        COMPARISONS_TABLE_FILE: comparisons_table(comparisons),
        CROSSOS_SOURCE_TABLE_FILE: source000_table(cross),
        CROSSOS_MEASURED_TABLE_FILE: measured_table(
            cross.measured, "tab:crossos-measured", measured_caption,
            "No configuration was measured on two operating systems or hosts, so there is no cross-host table."),
        CROSSOS_REFERENCE_TABLE_FILE: measured_table(
            cross.reference, "tab:crossos-reference", reference_caption,
            "There is no comparison with the reference campaign in this build (see above)."),
        PROVENANCE_TABLE_FILE: provenance_table(meta, records, trials),
        FACTORS_TABLE_FILE: factors_table(meta, summary, trials, records),
        RULES_TABLE_FILE: rules_table(rows),
    }


def _write_processed(processed_dir: Path, comparisons: pd.DataFrame, cross: CrossOs, outlier_frame: pd.DataFrame) -> None:
    processed_dir.mkdir(parents=True, exist_ok=True)
    comparisons.to_csv(processed_dir / COMPARISONS_CSV, index=False, lineterminator="\n")
    parts = [frame.assign(table=name) for name, frame in (
        ("source000_cross_os", cross.source_os), ("source000_cross_os_cpu_share", cross.source_cpu_share),
        ("source000_setups", cross.source_setups), ("measured", cross.measured),
        ("reference", cross.reference if cross.reference is not None else pd.DataFrame()),
    ) if frame is not None and not frame.empty]
    combined = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["table"])
    combined.to_csv(processed_dir / CROSSOS_CSV, index=False, lineterminator="\n")
    outlier_frame.to_csv(processed_dir / OUTLIERS_CSV, index=False, lineterminator="\n")
