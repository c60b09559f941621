"""summary.csv: one row per configuration, statistics over its measured trials with status ok that no other work
disturbed, outcomes counted (flagged, failed, unsupported, disturbed), never averaged or dropped, and each row's ratio
to the nginx reference."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze.bottleneck import BOTH, NEITHER, SERVER, WAIT, dominant
from archbench.analyze.fields import (
    CONFIG_FIELDS,
    FLAG_SEPARATOR,
    LATENCY_PERCENTILES,
    POINT_FIELDS,
    REFERENCE_ARCHITECTURE,
    SOCKET_ERROR_KINDS,
)
from archbench.analyze.labels import Labeller, sort_configurations
from archbench.analyze.outliers import truthy
from archbench.analyze.values import is_nan, key_text, max_or_nan


def summary_frame(trials: pd.DataFrame, planned_trial_ids: Iterable[str] = ()) -> pd.DataFrame:
    """One row per configuration; statistics over measured trials with status ok, disturbed ones left out and
    counted (`n_disturbed`)."""
    planned_measured = _planned_measured_per_config(planned_trial_ids)
    config_columns = trials.attrs.get("config_columns") or [c for c in CONFIG_FIELDS if c in trials]
    labels = Labeller(trials) if not trials.empty else None
    rows = []
    for config_id, group in trials.groupby("config_id", sort=False, dropna=False):
        measured = group[~group["warmup"].astype(bool)]
        disturbed = truthy(_column(measured, "disturbed")) & (measured["status"] == "ok")
        ok = measured[(measured["status"] == "ok") & ~disturbed]
        throughput = stats.summarize(ok["requests_per_sec"], level=stats.DEFAULT_CONFIDENCE)
        cpu = stats.summarize(_column(ok, "server_cpu_us_per_request"), level=stats.DEFAULT_CONFIDENCE)
        row: dict[str, Any] = {"campaign": group["campaign"].iloc[0], "config_id": config_id}
        first = group.iloc[0]
        row["variant"] = labels.variant(first) if labels else ""
        row["family"] = labels.family(first) if labels else ""
        for column in config_columns:
            row[column] = group[column].iloc[0] if column in group else None
        row.update(
            n_planned=planned_measured.get(str(config_id), math.nan),
            n_measured=len(measured),
            n_warmup=int(group["warmup"].astype(bool).sum()),
        )
        row.update(throughput.as_dict())
        row.update(distribution_columns(ok))
        socket_errors = ok[[f"socket_errors_{k}" for k in SOCKET_ERROR_KINDS]]
        utilisation = _column(ok, "load_cpu_utilisation")
        row.update(
            **outcome_counts(measured, ok),
            n_disturbed=int(disturbed.sum()),
            n_client_bound=int(_column(ok, "client_bound").fillna(False).astype(bool).sum()),
            **bottleneck_counts(ok),
            n_latency_invalid=int((_column(ok, "latency_invalid_percentiles").fillna("").astype(str) != "").sum()),
            flags=FLAG_SEPARATOR.join(sorted({f for fs in ok["flags"] for f in str(fs).split(FLAG_SEPARATOR) if f})),
            server_cpu_us_per_request=cpu.mean,
            server_cpu_us_per_request_ci95_low=cpu.mean_ci.low,
            server_cpu_us_per_request_ci95_high=cpu.mean_ci.high,
            server_window_cpu_us_per_request=stats.sample_mean(_column(ok, "server_window_cpu_us_per_request")),
            server_cpu_source=FLAG_SEPARATOR.join(sorted({str(v) for v in _column(ok, "server_cpu_source").dropna()})),
            timeouts_mean=stats.sample_mean(ok["socket_errors_timeout"]),
            socket_errors_mean=stats.sample_mean(socket_errors.sum(axis=1, min_count=1)),
            # Errors other than timeouts: connect/read/write socket errors and non-2xx responses, per trial.
            errors_mean=stats.sample_mean(
                pd.concat([socket_errors.drop(columns="socket_errors_timeout"), ok[["non_2xx"]]], axis=1).sum(
                    axis=1, min_count=1
                )
            ),
            non_2xx_mean=stats.sample_mean(ok["non_2xx"]),
            starved_connections_mean=stats.sample_mean(ok["starved_connections"]),
            starved_connections_max=max_or_nan(ok["starved_connections"]),
            load_cpu_utilisation_mean=stats.sample_mean(utilisation),
            load_cpu_utilisation_max=max_or_nan(utilisation),
            load_busy_share_mean=stats.sample_mean(_column(ok, "load_busy_share")),
            response_bytes=stats.sample_mean(_column(ok, "response_bytes")),
            bytes_per_response_mean=stats.sample_mean(_column(ok, "bytes_per_response")),
        )
        for p in LATENCY_PERCENTILES:
            row[f"latency_p{p}_s_mean"] = stats.sample_mean(ok[f"latency_p{p}_s"])
        row["n_missing"] = (
            max(0, row["n_planned"] - row["n_measured"]) if not math.isnan(row["n_planned"]) else math.nan
        )
        rows.append(row)
    summary = pd.DataFrame(rows)
    if summary.empty:
        return summary
    summary = _with_nginx_ratio(summary)
    return sort_configurations(summary).reset_index(drop=True)


def outcome_counts(measured: pd.DataFrame, ok: pd.DataFrame) -> dict[str, int]:
    """How a configuration's measured trials ended: ok but flagged, failed, unsupported (each counted,
    never averaged; `ok` is the measured trials with status ok)."""
    return {
        "n_flagged": int(ok["flagged"].astype(bool).sum()),
        "n_failed": int((measured["status"] == "failed").sum()),
        "n_unsupported": int((measured["status"] == "unsupported").sum()),
    }


def distribution_columns(ok: pd.DataFrame) -> dict[str, Any]:
    """summary.csv's columns beyond the mean and its interval (stats.rate_ci), over one configuration's measured ok trials:
    the median's distribution-free interval (order statistics, with its exact coverage), the CI half-width as a
    percentage of the mean, the rate summaries of Hoefler & Belli's rule 3 (harmonic mean; total requests over
    total measured seconds, the rate of the trials together), Shapiro-Wilk W and p, and Tukey outlier counts
    (reported, never removed)."""
    values = pd.to_numeric(_column(ok, "requests_per_sec"), errors="coerce")
    median = stats.median_ci(values, stats.DEFAULT_CONFIDENCE)
    interval = stats.rate_ci(values, stats.DEFAULT_CONFIDENCE)
    mean = stats.sample_mean(values)
    normality = stats.shapiro_wilk(values)
    tukey = stats.tukey_outliers(values.tolist())
    sample = stats.as_sample(values)
    return {
        "median_ci95_low": median.ci.low,
        "median_ci95_high": median.ci.high,
        "median_ci_coverage": median.coverage,
        # A range is not an interval: no half-width to report under three trials.
        "ci95_half_width_pct": math.nan
        if interval.method == stats.RANGE_METHOD
        else stats.ratio(100.0 * interval.half_width, abs(mean)),
        "harmonic_mean": stats.harmonic_mean(sample) if (sample >= 0).all() else math.nan,
        "total_rate": stats.total_rate(_column(ok, "total_requests"), _column(ok, "measured_duration_s")),
        "shapiro_w": normality.statistic,
        "shapiro_p": normality.p_value,
        "n_outliers": tukey.count,
        "n_far_out": tukey.far_count,
    }


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column, or an all-NaN one for frames from records that predate it."""
    return frame[name] if name in frame else pd.Series(math.nan, index=frame.index, dtype=float)


def _with_nginx_ratio(summary: pd.DataFrame) -> pd.DataFrame:
    """`ratio_to_nginx`: mean over the mean of the fastest nginx configuration at the same
    pipeline depth and comparison point (connections, wrk threads, duration, response);
    `nginx_reference` names that configuration. NaN/empty where nginx was not measured there."""
    summary = summary.copy()
    summary["nginx_reference"] = ""
    summary["ratio_to_nginx"] = math.nan
    keys = [f for f in ("pipeline", *POINT_FIELDS) if f in summary]
    point_of = [tuple(key_text(r[f]) for f in keys) for _, r in summary.iterrows()]
    references: dict[tuple[str, ...], pd.Series] = {}
    for point, (_, row) in zip(point_of, summary.iterrows(), strict=True):
        if row["architecture"] != REFERENCE_ARCHITECTURE or is_nan(row["mean"]):
            continue
        if point not in references or row["mean"] > references[point]["mean"]:
            references[point] = row
    for index, point in zip(summary.index, point_of, strict=True):
        reference = references.get(point)
        if reference is not None:
            summary.at[index, "nginx_reference"] = reference["config_id"]
            summary.at[index, "ratio_to_nginx"] = stats.ratio(
                float(summary.at[index, "mean"]), float(reference["mean"])
            )
    return summary


def _planned_measured_per_config(planned_trial_ids: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for trial_id in planned_trial_ids:
        config_id, _, suffix = str(trial_id).rpartition("-")
        if suffix.startswith("r") and suffix[1:].isdigit():
            counts[config_id] = counts.get(config_id, 0) + 1
    return counts


def bottleneck_counts(ok: pd.DataFrame) -> dict[str, Any]:
    """How many measured ok trials each side bounded (n_server_bound, n_both_bound, n_wait_bound, n_neither_bound;
    n_client_bound counts client or both, as before), and the configuration's dominant class."""
    classes = [str(c) for c in _column(ok, "bottleneck").fillna("") if c]
    counts = {f"n_{name}_bound": classes.count(name) for name in (SERVER, BOTH, WAIT, NEITHER)}
    return {**counts, "bottleneck": dominant(classes)}
