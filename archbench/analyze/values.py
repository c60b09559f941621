"""Reading cell values from records and frames: a missing measurement is NaN (never 0), and a grouping key is a
stable string."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from archbench import stats


def number(value: Any) -> float:
    """A float, NaN for None/bool/unparseable (a missing measurement is not zero)."""
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def sum_or_nan(*values: Any) -> float:
    """The sum, NaN when any part is missing (user + sys CPU seconds mean nothing with one of them unknown)."""
    numbers = [number(v) for v in values]
    return math.nan if any(math.isnan(n) for n in numbers) else sum(numbers)


def max_or_nan(values: pd.Series) -> float:
    """The largest present value, NaN when none is."""
    sample = stats.as_sample(values)
    return float(sample.max()) if sample.size else math.nan


def key_text(value: Any) -> str:
    """A stable string for grouping: NaN/None (architectures without the field) become ''."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def count_text(value: Any) -> str:
    """A count as plain text, rounded, with thousands separators ('12,345'); '--' where missing (the report's
    MISSING: archbench.render.latex.format_count is this function)."""
    return "--" if is_nan(value) else f"{float(value):,.0f}"


def is_nan(value: Any) -> bool:
    """Whether a value is missing: None, NaN, NaT or pd.NA (latex.is_missing is this function)."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
