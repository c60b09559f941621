"""The comparison families within one campaign, as several studies use them: pairs, their pre-declared tests
(archbench.stats.predeclared), Holm/BH adjustment within each family, minimum detectable differences and verdicts.
Analyze stage: the table cells of a compared pair are the report's (archbench.render.formats).

A significant difference orders a pair (`ordered`) only where the load generator did not set the lower rate
(archbench.analyze.client_bound.client_set_rate of the configuration with the lower mean): a rate the load generator
capped is a floor of what that server can do, so a higher rate than it says nothing, while a capped higher rate only
understates the higher one's lead."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis, outliers
from archbench.analyze.analysis import key_text, series_of
from archbench.analyze.client_bound import client_set_rate
from archbench.analyze.values import count_text, number

ALPHA = stats.DEFAULT_ALPHA

VERDICT_SIGNIFICANT, VERDICT_NOT_SIGNIFICANT, VERDICT_NOT_RUN = "significant", "not significant", "not run"


@dataclass(frozen=True)
class Pair:
    """Two configurations to compare (a - b, a / b) within a family; the texts are plain (not LaTeX)."""

    family: str
    context: str
    a_name: str
    b_name: str
    a: str
    b: str
    a_client_set: bool = False  # the load generator set a's rate (archbench.analyze.client_bound.client_set_rate)
    b_client_set: bool = False


def comparison_pairs(summary: pd.DataFrame) -> list[Pair]:
    """The families of the report: each pool size against the next smaller (every thread-pool sweep),
    request against connection dispatch at equal N, connections, handoff and depth, and every
    architecture of each comparison table against its nginx reference."""
    if summary.empty:
        return []
    several = analysis.several_depths(summary)
    pairs: list[Pair] = []

    def depth_text(row: Mapping[str, Any]) -> str:
        return f", D={key_text(row.get('pipeline')) or '1'}" if several else ""

    for one in series_of(summary, "threads"):
        if one.first["architecture"] != "thread_pool":
            continue
        rows = one.rows.sort_values("threads", kind="stable")
        first = one.first
        context = (
            f"{analysis.architecture_label('thread_pool', first.get('dispatch'), first.get('handoff'), short=True)}"
            f", {count_text(first['connections'])} conn.{depth_text(first)}"
        )
        records = [r for _, r in rows.iterrows()]
        for lower, higher in zip(records, records[1:], strict=False):  # neighbours
            pairs.append(
                Pair(
                    "pool",
                    context,
                    f"N={int(float(higher['threads']))}",
                    f"N={int(float(lower['threads']))}",
                    str(higher["config_id"]),
                    str(lower["config_id"]),
                    client_set_rate(higher),
                    client_set_rate(lower),
                )
            )

    pool = summary[summary["architecture"] == "thread_pool"]
    if not pool.empty and "dispatch" in pool:
        fields = [
            f
            for f in (
                "handoff",
                "threads",
                "connections",
                "pipeline",
                "load_threads",
                "duration_s",
                "response",
                "load_generator",
                "proto",
            )
            if f in pool
        ]
        several_handoffs = pool["handoff"].map(key_text).nunique() > 1 if "handoff" in pool else False
        keyed = pool.assign(_key=[tuple(key_text(r[f]) for f in fields) for _, r in pool.iterrows()])
        for _, rows in keyed.groupby("_key", sort=False):
            request = rows[rows["dispatch"].map(key_text).isin(["request", ""])]
            connection = rows[rows["dispatch"].map(key_text) == "connection"]
            if len(request) == 1 and len(connection) == 1:
                row = request.iloc[0]
                context = f"N={int(float(row['threads']))}, {count_text(row['connections'])} conn.{depth_text(row)}"
                if several_handoffs:
                    context += f", {key_text(row.get('handoff'))}"
                pairs.append(
                    Pair(
                        "dispatch",
                        context,
                        "request",
                        "connection",
                        str(row["config_id"]),
                        str(connection.iloc[0]["config_id"]),
                        client_set_rate(row),
                        client_set_rate(connection.iloc[0]),
                    )
                )

    labels = analysis.Labeller(summary)
    for one in analysis.comparisons(summary):
        if one.reference is None:
            continue
        reference = one.reference
        context = (
            f"D={one.pipeline}, {count_text(one.point.get('connections'))} conn."
            if several
            else f"{count_text(one.point.get('connections'))} conn."
        )
        for _, row in one.rows.iterrows():
            pairs.append(
                Pair(
                    "nginx",
                    context,
                    labels.variant(row),
                    labels.variant(reference),
                    str(row["config_id"]),
                    str(reference["config_id"]),
                    client_set_rate(row),
                    client_set_rate(reference),
                )
            )
    return pairs


@dataclass(frozen=True)
class RoundSample:
    """One configuration's measured values and the round of each (None: the campaign recorded no rounds)."""

    values: tuple[float, ...]
    rounds: tuple[Any, ...] | None


def round_samples(trials: pd.DataFrame, value: str = "requests_per_sec") -> dict[str, RoundSample]:
    """config_id -> its measured ok trials' values (the ones summary.csv uses) with their rounds (`repetition`)."""
    rows = outliers.measured_ok_undisturbed(trials) if not trials.empty else trials
    if rows.empty or value not in rows:
        return {}
    samples = {}
    for config_id, group in rows.groupby("config_id", sort=False):
        values = pd.to_numeric(group[value], errors="coerce")
        rounds = pd.to_numeric(group["repetition"], errors="coerce") if "repetition" in group else None
        labels = None if rounds is None or rounds.isna().all() else tuple(None if pd.isna(r) else r for r in rounds)
        samples[str(config_id)] = RoundSample(tuple(float(v) for v in values), labels)
    return samples


def planned_columns(result: stats.PlannedComparison) -> dict[str, Any]:
    """comparisons.csv's columns of one pre-declared test (before the family's adjustment)."""
    return {
        "test": result.test,
        "test_reason": result.reason,
        "paired": result.paired,
        "n_rounds": result.n if result.paired else 0,
        "n_dropped": result.dropped,
        "n_a": result.n_a,
        "n_b": result.n_b,
        "ratio": result.ratio,
        "ratio_ci_low": result.ci.low,
        "ratio_ci_high": result.ci.high,
        "ci_level": result.ci.level,
        "mean_log": result.mean_log,
        "sd_log": result.sd_log,
        "standard_error": result.standard_error,
        "df": result.df,
        "statistic": result.statistic,
        "p_value": result.p_value,
        "shapiro_w_log": result.normality.statistic,
        "shapiro_p_log": result.normality.p_value,
    }


def planned_results(
    pairs: Sequence[Pair], trials: pd.DataFrame, alpha: float = ALPHA
) -> list[tuple[Pair, stats.PlannedComparison]]:
    """Each pair with its pre-declared test (`stats.planned_comparison`), before any family's adjustment."""
    samples = round_samples(trials)
    empty = RoundSample((), ())  # a configuration without a measured trial: no round to pair, whatever the other has
    results = []
    for pair in pairs:
        a, b = samples.get(pair.a, empty), samples.get(pair.b, empty)
        result = stats.planned_comparison(a.values, b.values, rounds_a=a.rounds, rounds_b=b.rounds, level=1.0 - alpha)
        results.append((pair, result))
    return results


def run_comparisons(pairs: Sequence[Pair], trials: pd.DataFrame, *, alpha: float = ALPHA) -> pd.DataFrame:
    """The pre-declared test of every pair, then Holm and Benjamini-Hochberg within each family, the minimum
    detectable difference of each test run and the rounds each test not run needs."""
    records = [
        {
            "family": pair.family,
            "context": pair.context,
            "a_name": pair.a_name,
            "b_name": pair.b_name,
            "config_a": pair.a,
            "config_b": pair.b,
            "a_client_set": pair.a_client_set,
            "b_client_set": pair.b_client_set,
            **planned_columns(result),
        }
        for pair, result in planned_results(pairs, trials, alpha)
    ]
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    return add_verdicts(adjust_within_families(frame, alpha), alpha)


def adjust_within_families(frame: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """p_holm / reject_holm and p_bh / reject_bh, each family corrected on its own over the tests run (a test not
    run has no p and is no part of the family: `family_size` counts the tests run, `planned_size` every row)."""
    frame = frame.copy()
    for column in ("p_holm", "p_bh"):
        frame[column] = math.nan
    frame["reject_holm"] = False
    frame["reject_bh"] = False
    frame["family_size"] = 0
    frame["planned_size"] = 0
    for _, rows in frame.groupby("family", sort=False):
        holm = stats.holm(rows["p_value"].tolist(), alpha)
        bh = stats.benjamini_hochberg(rows["p_value"].tolist(), alpha)
        frame.loc[rows.index, "p_holm"] = holm.adjusted
        frame.loc[rows.index, "reject_holm"] = holm.reject
        frame.loc[rows.index, "p_bh"] = bh.adjusted
        frame.loc[rows.index, "reject_bh"] = bh.reject
        frame.loc[rows.index, "family_size"] = holm.m
        frame.loc[rows.index, "planned_size"] = len(rows)
    return frame


def add_verdicts(frame: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """`mdd_alpha` (alpha / m, the level every rank of Holm's steps is at least tested at), `mdd_pct` (the minimum
    detectable difference there, `stats.minimum_detectable_pct`), `rounds_needed` (a test not run: the fewest paired
    rounds at which the observed ratio and spread would be significant at alpha over the planned family, at least
    MIN_ROUNDS; NaN when the spread is unknown, inf when no number up to stats.predeclared.MAX_ROUNDS_NEEDED is
    enough), `verdict` ("significant", "not significant" or "not run") and `ordered` (significant, and the load
    generator did not set the lower rate: module docstring)."""
    frame = frame.copy()
    mdd_alpha, mdd, needed, verdicts, ordered = [], [], [], [], []
    rejected = outliers.truthy(frame["reject_holm"])
    for (_, row), reject in zip(frame.iterrows(), rejected, strict=True):
        run = row["test"] != stats.NOT_RUN
        level = alpha / int(row["family_size"]) if run and int(row["family_size"]) else math.nan
        mdd_alpha.append(level)
        mdd.append(stats.minimum_detectable_pct(row["standard_error"], row["df"], level) if run else math.nan)
        if run:
            needed.append(math.nan)
            verdicts.append(VERDICT_SIGNIFICANT if reject else VERDICT_NOT_SIGNIFICANT)
            lower_client_set = row.get("b_client_set") if number(row.get("ratio")) > 1 else row.get("a_client_set")
            ordered.append(bool(reject) and not outliers.is_true(lower_client_set))
        else:
            ordered.append(False)
            needed.append(stats.rounds_needed(row["mean_log"], row["sd_log"], alpha / max(1, int(row["planned_size"]))))
            verdicts.append(VERDICT_NOT_RUN)
    frame["mdd_alpha"] = mdd_alpha
    frame["mdd_pct"] = mdd
    frame["rounds_needed"] = needed
    frame["verdict"] = verdicts
    frame["ordered"] = ordered
    return frame
