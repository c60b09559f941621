"""Number, interval and list formats of the statistics tables and sentences (a compared pair's cells among them), and
each configuration's values."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from archbench import stats
from archbench.analyze import outliers
from archbench.analyze.analysis import Labeller
from archbench.render import latex
from archbench.render.common import depth_of
from archbench.render.latex import (
    MISSING,
    count_or_zero,
    escape,
    format_count,
    format_decimal,
    is_missing,
    minus,
)

QQ_MAX_PANELS = 12
QQ_COLUMNS = 4
# Each long table's font size, chosen once: the smallest the old width estimate picked for the reference
# campaign (the cross-host tables' for million-scale rates of two hosts), so the other columns fit.
DIAGNOSTICS_SIZE = r"\scriptsize"
COMPARISONS_SIZE = r"\footnotesize"
MEASURED_SIZE = r"\tiny"
MAX_NAMED = 6  # items named in one generated sentence before "and N more"
ALPHA = stats.DEFAULT_ALPHA

TEST_NAMES = {"welch_t": "Welch", "mann_whitney_u": "M--W", "none": MISSING}
EFFECT_SYMBOLS = {"hedges_g": "$g$", "cliffs_delta": r"$\delta$"}


# =========================================================================== formatting


def fmt_rate(value: Any) -> str:
    return minus(format_count(value))


def fmt_number(value: Any, digits: int = 2) -> str:
    return minus(format_decimal(value, digits))


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
    return MISSING if is_missing(value) else minus(format_decimal(value, digits)) + r"\,\%"


def two_lines(top: str, bottom: str) -> str:
    """A right-aligned cell of two lines (an estimate over its interval)."""
    if bottom in ("", MISSING):
        return top
    # "{}" keeps a bottom line that starts with "[" from being read as \\'s optional skip.
    return r"\begin{tabular}[t]{@{}r@{}}" + top + r"\\{}" + bottom + r"\end{tabular}"


truthy = outliers.is_true  # one cell; outliers.truthy reads a whole column


def count_of(value: Any) -> int:
    return int(count_or_zero(value))


def first_named(items: Sequence[str]) -> tuple[list[str], int]:
    """The items a sentence names (at most MAX_NAMED) and how many more it only counts."""
    items = list(items)
    return items[:MAX_NAMED] if len(items) > MAX_NAMED else items, max(0, len(items) - MAX_NAMED)


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def config_text(row: Mapping[str, Any], labels: Labeller, several_depths: bool) -> str:
    """'epoll (edge), 50 conn., $D=16$' (escaped) for a summary row."""
    text = f"{escape(labels.variant(row))}, {format_count(row.get('connections'))} conn."
    if several_depths:
        text += f", $D={depth_of(row)}$"
    return text


def family_row(columns: int, text: str) -> str:
    return r"\multicolumn{" + str(columns) + r"}{@{}l}{\textit{" + text + r"}} \\"


# =========================================================================== values per configuration


def measured_values(trials: pd.DataFrame, value: str = "requests_per_sec") -> dict[str, np.ndarray]:
    """config_id -> the measured ok trials' values (flagged ones included, as in summary.csv)."""
    rows = outliers.measured_ok_undisturbed(trials) if not trials.empty else trials
    if rows.empty or value not in rows:
        return {}
    return {
        str(cid): stats.as_sample(pd.to_numeric(group[value], errors="coerce"))
        for cid, group in rows.groupby("config_id", sort=False)
    }


def fill_first(columns: Sequence[tuple[str, str]]) -> list[latex.Column]:
    """The columns with the first one taking the width the others leave (LaTeX sizes it, not Python)."""
    return [
        latex.Column(header, latex.FILL_COLUMN if index == 0 else align)
        for index, (header, align) in enumerate(columns)
    ]


def notes_after(notes: str) -> str:
    """A long table's notes as one ragged paragraph just under its last rule; empty without notes."""
    if not notes:
        return ""
    return r"\vspace{-0.5\baselineskip}" + "\n" + r"{\raggedright " + notes + r"\par}"


# =========================================================================== compared pairs' cells
# The table cells and running-text p values of a compared pair (archbench.analyze.planned_comparisons), for the
# statistics study's table and the cross-OS tables.


def _estimate_cell(row: Mapping[str, Any], column: str, formatter: Callable[[Any], str], prefix: str = "") -> str:
    """The estimate in `column` (after `prefix`) over its interval (`<column>_ci_low`, `<column>_ci_high`)."""
    if is_missing(row.get(column)):
        return MISSING
    bracket = fmt_bracket(row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high"), formatter)
    return two_lines(prefix + formatter(row[column]), bracket)


def effect_cell(row: Mapping[str, Any]) -> str:
    name = str(row.get("effect_size_name") or "")
    if name not in EFFECT_SYMBOLS:
        return MISSING
    return _estimate_cell(row, "effect_size", lambda v: fmt_number(v, 2), f"{EFFECT_SYMBOLS[name]}$\\,=\\,$")


def difference_cell(row: Mapping[str, Any]) -> str:
    return _estimate_cell(row, "difference", fmt_rate)


def ratio_cell(row: Mapping[str, Any]) -> str:
    return _estimate_cell(row, "ratio", lambda v: fmt_number(v, 3))


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
    return r"\textbf{" + text + "}" if truthy(reject) and text != MISSING else text


# Beyond this a difference detectable with 80 % power is a ratio above 11: printed as "more than" it, since with two
# rounds and alpha / m the exact figure runs to hundreds of digits and says no more than that.
DETECTABLE_SHOWN_UP_TO_PCT = 1000.0


def detectable_number(value: Any, digits: int = 0) -> str:
    """A detectable difference as printed (percent, without the sign): the minimum detectable difference of a
    planned comparison or the difference detectable with 80 % power (archbench.analyze.paired), or '$>$1,000'."""
    if is_missing(value):
        return MISSING
    if float(value) > DETECTABLE_SHOWN_UP_TO_PCT:
        return "$>$" + format_decimal(DETECTABLE_SHOWN_UP_TO_PCT, 0)
    return format_decimal(value, digits)


def format_cpu_per_request(value: object) -> str:
    """Server CPU time per request in microseconds as every table and sentence of the architecture and pool studies
    prints it: two decimals, so that a sub-microsecond cost (0.45) reads the same in each."""
    return format_decimal(value, 2)
