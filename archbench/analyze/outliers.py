"""Tukey outliers of per-trial measurements, per configuration: counted and listed, never dropped.

`archbench.stats.tukey_outliers` does one sample; this module applies it to a trials
DataFrame (data/processed/trials.csv: one row per trial) group by group and names the
trials by id, so a report can say which repetitions lie beyond the fences and by how much.
The statistics in summary.csv are computed with every trial, outliers included.

Columns of `outlier_summary` (one row per group, in the order the groups first appear):
    <by columns>        the group key (default campaign, config_id)
    n                   measured trials with a value
    q1, q3, iqr         quartiles (numpy's linear interpolation) and their distance
    lower_fence, upper_fence          q1 - k·IQR, q3 + k·IQR   (k = 1.5)
    far_lower_fence, far_upper_fence  q1 - far_k·IQR, q3 + far_k·IQR   (far_k = 3)
    n_outliers          trials strictly outside the k fences (far-out ones included)
    n_far_out           trials strictly outside the far_k fences
    outlier_trials      their ids, ";"-separated, in trial order
    far_out_trials      the far-out ones' ids

Columns of `outlier_rows` (one row per trial outside the k fences):
    <by columns>, <id column>, value, kind ("outlier" or "far out"), lower_fence, upper_fence,
    far_lower_fence, far_upper_fence
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench import stats

SEPARATOR = ";"
DEFAULT_BY: tuple[str, ...] = ("campaign", "config_id")


def is_true(value: Any) -> bool:
    """A boolean cell as read from any CSV: True, "True", "true", 1 -> True; False, "", NaN -> False."""
    return str(value).strip().lower() in ("true", "1", "1.0", "yes")


def truthy(column: pd.Series) -> pd.Series:
    """A boolean column as read from any CSV, cell by cell as `is_true` reads it."""
    return column.map(is_true).astype(bool)


def measured_ok_undisturbed(trials: pd.DataFrame) -> pd.DataFrame:
    """Measured (non-warm-up) trials whose status is ok and that no other work disturbed (trials.csv `disturbed`,
    archbench.measure.interference): the rows summary.csv's statistics use."""
    rows = trials
    if "warmup" in rows:
        rows = rows[~truthy(rows["warmup"])]
    if "status" in rows:
        rows = rows[rows["status"] == "ok"]
    if "disturbed" in rows:
        rows = rows[~truthy(rows["disturbed"])]
    return rows


def _groups(trials: pd.DataFrame, by: Sequence[str]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    keys = [c for c in by if c in trials]
    if not keys:
        return [((), trials)]
    return [
        ((key,) if not isinstance(key, tuple) else key, rows)
        for key, rows in trials.groupby(keys, sort=False, dropna=False)
    ]


@dataclass(frozen=True)
class GroupOutliers:
    """One group's Tukey report and the ids of its trials, in the order the report indexes them."""

    key: tuple[Any, ...]
    report: stats.OutlierReport
    ids: list[Any]


def _group_outliers(
    trials: pd.DataFrame,
    value: str,
    by: Sequence[str],
    id_column: str,
    k: float,
    far_k: float,
    measured_only: bool,
) -> tuple[list[str], list[GroupOutliers]]:
    """The group key columns present and, per group in order of first appearance, its Tukey report."""
    rows_in = measured_ok_undisturbed(trials) if measured_only else trials
    keys = [c for c in by if c in rows_in]
    groups = []
    for key, rows in _groups(rows_in, keys):
        values = pd.to_numeric(rows[value], errors="coerce").tolist()
        report = stats.tukey_outliers(values, k=k, far_k=far_k)
        ids = rows[id_column].tolist() if id_column in rows else list(rows.index)
        groups.append(GroupOutliers(key, report, ids))
    return keys, groups


def outlier_summary(
    trials: pd.DataFrame,
    value: str = "requests_per_sec",
    by: Sequence[str] = DEFAULT_BY,
    id_column: str = "trial_id",
    k: float = 1.5,
    far_k: float = 3.0,
    measured_only: bool = True,
) -> pd.DataFrame:
    """One row per group with Tukey's fences and the trials beyond them (columns above)."""
    keys, groups = _group_outliers(trials, value, by, id_column, k, far_k, measured_only)
    out = []
    for group in groups:
        report, ids = group.report, group.ids
        record: dict[str, Any] = dict(zip(keys, group.key, strict=True))
        record.update(
            n=report.n,
            q1=report.q1,
            q3=report.q3,
            iqr=report.iqr,
            lower_fence=report.lower_fence,
            upper_fence=report.upper_fence,
            far_lower_fence=report.far_lower_fence,
            far_upper_fence=report.far_upper_fence,
            n_outliers=report.count,
            n_far_out=report.far_count,
            outlier_trials=SEPARATOR.join(str(ids[i]) for i in report.indices),
            far_out_trials=SEPARATOR.join(str(ids[i]) for i in report.far_indices),
        )
        out.append(record)
    columns = [
        *keys,
        "n",
        "q1",
        "q3",
        "iqr",
        "lower_fence",
        "upper_fence",
        "far_lower_fence",
        "far_upper_fence",
        "n_outliers",
        "n_far_out",
        "outlier_trials",
        "far_out_trials",
    ]
    return pd.DataFrame(out, columns=columns)


def outlier_rows(
    trials: pd.DataFrame,
    value: str = "requests_per_sec",
    by: Sequence[str] = DEFAULT_BY,
    id_column: str = "trial_id",
    k: float = 1.5,
    far_k: float = 3.0,
    measured_only: bool = True,
) -> pd.DataFrame:
    """One row per trial beyond the k fences (columns above); empty frame when there are none."""
    keys, groups = _group_outliers(trials, value, by, id_column, k, far_k, measured_only)
    out = []
    for group in groups:
        report, ids = group.report, group.ids
        far = set(report.far_indices)
        for position, observed in zip(report.indices, report.values, strict=True):
            record: dict[str, Any] = dict(zip(keys, group.key, strict=True))
            record.update(
                {
                    id_column: ids[position],
                    "value": observed,
                    "kind": "far out" if position in far else "outlier",
                    "lower_fence": report.lower_fence,
                    "upper_fence": report.upper_fence,
                    "far_lower_fence": report.far_lower_fence,
                    "far_upper_fence": report.far_upper_fence,
                }
            )
            out.append(record)
    columns = [*keys, id_column, "value", "kind", "lower_fence", "upper_fence", "far_lower_fence", "far_upper_fence"]
    return pd.DataFrame(out, columns=columns)
