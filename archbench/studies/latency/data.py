"""The latency study's data (source 001): the trials (archbench.analyze.open_loop_trials.latency_trials, whose
docstring defines client-bound, usable, kept-up and disturbed trials and a trial's p99 for the knee; usable and
kept up are one ratio's, completed over scheduled requests, or achieved over offered rate for clients without
counts, archbench.analyze.open_loop_checks.kept_up_ratio) -> one summary
row per configuration (server x offered rate) of each set-up, and each server's floor and knee (the knee's
definitions are archbench.studies.latency.knee's; every one is stated in the generated text).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.analysis import number
from archbench.analyze.open_loop_trials import PERCENTILES, SETUP_SWEEP
from archbench.config.params import DEFAULT_INTERFERENCE_SHARE
from archbench.data import storage
from archbench.render.common import (
    StudySource,
    measured_ok_including_disturbed,
    per_configuration,
    sample_max,
    sample_min,
    sorted_rows,
)
from archbench.studies.latency.knee import (
    FLOOR_UNMEASURED,
    NOT_MEASURED,
    Criteria,
    KneeDecision,
    RateTest,
    decide_knee,
)

# Source 001's wrk2 results, quoted as cited facts (its README, cited as src001tooomasy in paper/references.bib):
# wrk2 -t16 -c2000 -d30s -R200000, latency avg and max as printed, requests/s and socket timeouts.
SOURCE_001_RATE = 200_000
SOURCE_001_RESULTS: dict[str, dict[str, float]] = {
    "blocking": {"requests_per_sec": 97.96, "latency_avg_s": 1.12e-3, "latency_max_s": 5.66e-3, "timeouts": 28860},
    "thread_per_conn": {
        "requests_per_sec": 97015.23,
        "latency_avg_s": 1.76e-3,
        "latency_max_s": 33.41e-3,
        "timeouts": 14000,
    },
    "epoll": {"requests_per_sec": 117496.10, "latency_avg_s": 8.18, "latency_max_s": 13.74, "timeouts": 11},
    "reactor": {"requests_per_sec": 190965.36, "latency_avg_s": 16.64e-3, "latency_max_s": 1.01, "timeouts": 0},
}


def ms_text(threshold_s: float) -> str:
    """0.001 -> "1", 0.0005 -> "0.5": a threshold as the reader would write it."""
    return f"{threshold_s * 1000:g}"


def number_text(value: float) -> str:
    """2.0 -> "2", 0.05 -> "0.05": a constant of the rule as the reader would write it."""
    return f"{value:g}"


def percent_text(fraction: float) -> str:
    """0.99 -> "99": a criterion's fraction as the text states it."""
    return f"{fraction * 100:.0f}"


def rule_words(criteria: Criteria) -> dict[str, str]:
    """The knee rule's numbers as the captions and sentences state them."""
    return {
        "rise": number_text(criteria.rise_multiple),
        "alpha": number_text(criteria.alpha),
        "kept_up": percent_text(criteria.kept_up_fraction),
        "threshold": ms_text(criteria.p99_s),
        "limit": ms_text(criteria.floor_limit_s),
    }


@dataclass(frozen=True)
class LatencyResults:
    """The latency campaigns read into frames (all empty without a campaign)."""

    sources: tuple[StudySource, ...]  # the fraction-sweep campaign, then source 001's (when found)
    criteria: Criteria
    trials: pd.DataFrame
    summary: pd.DataFrame
    knees: pd.DataFrame

    @property
    def campaigns(self) -> list[storage.Campaign]:
        return [s.campaign for s in self.sources if s.campaign is not None]

    @property
    def available(self) -> bool:
        return bool(self.campaigns)

    def setup(self, name: str) -> pd.DataFrame:
        if self.summary.empty:
            return self.summary
        return self.summary[self.summary["setup"] == name]

    @property
    def interference_shares(self) -> list[float]:
        """The taken share of a CPU set from which the campaigns' trials are disturbed (`interference_share`)."""
        return sorted(
            {
                float((c.meta.get("parameters") or {}).get("interference_share", DEFAULT_INTERFERENCE_SHARE))
                for c in self.campaigns
            }
        )

    @property
    def floor(self) -> pd.DataFrame:
        """Each sweep design's floor (its median p99 at its lowest offered rate), whether it is well under the
        threshold, and what became of its knee."""
        columns = ["server", "floor_fraction", "floor_p99_s", "floor_send_lag_p99_s", "floor_state", "knee_state"]
        return self.knees[columns] if not self.knees.empty else pd.DataFrame(columns=columns)


# --------------------------------------------------------------------------- summaries


def rate_summary(trials: pd.DataFrame, decisions: Mapping[str, KneeDecision]) -> pd.DataFrame:
    """One row per configuration (server x offered rate) of each set-up; a sweep rate's verdict against its
    design's floor from `decisions` (`knee_decisions`)."""
    tests = {(key, test.offered_rate): test for key, decision in decisions.items() for test in decision.rates}
    fields = (
        *("campaign", "config_id", "setup", "server_key", "server", "variant", "family", *analysis.CONFIG_FIELDS),
        *("offered_rate", "rate_fraction", "saturation_rate", "saturation_of", "saturation_source", "tool"),
    )
    return per_configuration(
        trials,
        fields,
        lambda group: _rate_statistics(group, tests),
        ["setup", "connections", "offered_rate"],
        by=("campaign", "config_id"),
    )


def _union(column: pd.Series) -> str:
    """Every flag of a column of `;`-separated flags, once each, by name."""
    return analysis.FLAG_SEPARATOR.join(sorted({f for text in column for f in str(text).split(";") if f}))


def _rate_statistics(group: pd.DataFrame, tests: Mapping[tuple[str, float], RateTest]) -> dict[str, Any]:
    """One configuration's counts, achieved rate, latencies and its rate's verdict against the floor (`tests`)."""
    measured = group[~group["warmup"].astype(bool)]
    ok = measured[measured["status"] == "ok"]
    eligible = ok[~ok["client_bound"].astype(bool)]
    first = group.iloc[0]
    achieved = stats.summarize(ok["achieved_rate"])
    row: dict[str, Any] = dict(
        n_measured=len(measured),
        n=achieved.n,
        **analysis.outcome_counts(measured, ok),
        n_client_bound=int(ok["client_bound"].astype(bool).sum()),
        n_disturbed=int(ok["disturbed"].astype(bool).sum()),
        n_eligible=len(eligible),
        n_usable=int(ok["usable"].astype(bool).sum()),
        checks=_union(ok["checks"]),
        flags=_union(ok["flags"]),
        achieved_mean=achieved.mean,
        achieved_sd=achieved.sd,
        achieved_ci95_low=achieved.mean_ci.low,
        achieved_ci95_high=achieved.mean_ci.high,
        achieved_fraction_mean=stats.sample_mean(ok["achieved_fraction"]),
        latency_max_s_max=sample_max(ok["latency_max_s"]),
        timeouts_mean=stats.sample_mean(ok["timeouts"]),
        socket_errors_mean=stats.sample_mean(ok["socket_errors"]),
        non_2xx_mean=stats.sample_mean(ok["non_2xx"]),
        load_cpus_busy_mean=stats.sample_mean(ok["load_cpus_busy"]),
        load_cpu_utilisation_mean=stats.sample_mean(ok["load_cpu_utilisation"]),
        eligible_p99_s_mean=stats.sample_mean(eligible["latency_p99_s"]),
        eligible_p99_s_min=sample_min(eligible["latency_p99_s"]),
    )
    for q in PERCENTILES:
        column = f"latency_p{q.replace('.', '_')}_s"
        row[f"{column}_mean"] = stats.sample_mean(ok[column])
        row[f"{column}_median"] = stats.sample_median(ok[column])
    knee_p99 = stats.as_sample(measured["knee_p99_s"])
    test = tests.get((str(first["server_key"]), float(first["offered_rate"])))
    row.update(
        n_knee=int(knee_p99.size),
        n_fell_behind=int((knee_p99 == math.inf).sum()),
        knee_p99_s_median=stats.sample_median(knee_p99),
        versus_floor=test.verdict if test is not None else None,
        p_risen=test.p_risen if test is not None else math.nan,
        p_held=test.p_held if test is not None else math.nan,
    )
    return row


def knee_decisions(trials: pd.DataFrame, criteria: Criteria) -> dict[str, KneeDecision]:
    """Each fraction-sweep design's floor and knee (archbench.studies.latency.knee), by server key."""
    if trials.empty:
        return {}
    sweep = measured_ok_including_disturbed(trials[trials["setup"] == SETUP_SWEEP])
    decisions = {}
    for key, design in sweep.groupby("server_key", sort=False):
        rates = {}
        for rate, at in design.groupby("offered_rate"):
            fraction = number(at["rate_fraction"].iloc[0])
            if math.isnan(fraction):
                fraction = stats.ratio(float(rate), number(at["saturation_rate"].iloc[0]))
            rates[float(rate)] = (fraction, list(stats.as_sample(at["knee_p99_s"])))
        decisions[str(key)] = decide_knee(rates, criteria)
    return decisions


def _test_columns(prefix: str, test: RateTest | None) -> dict[str, Any]:
    """A rate's offered rate, fraction of saturation, trials and median p99 as `<prefix>_...` columns."""
    return {
        f"{prefix}_rate": test.offered_rate if test else math.nan,
        f"{prefix}_fraction": test.fraction if test else math.nan,
        f"{prefix}_n": test.n if test else 0,
        f"{prefix}_p99_s": test.p99_median_s if test else math.nan,
    }


def knees(summary: pd.DataFrame, trials: pd.DataFrame, decisions: Mapping[str, KneeDecision]) -> pd.DataFrame:
    """One row per server of the fraction sweep: its floor, whether it is well under the threshold, its knee (or
    why there is none) and the trials behind them."""
    sweep = summary[summary["setup"] == SETUP_SWEEP] if not summary.empty else summary
    if sweep.empty:
        return pd.DataFrame()
    rows = []
    for key, group in sweep.groupby("server_key", sort=False):
        group = group.sort_values("offered_rate")
        first = group.iloc[0]
        decision = decisions.get(str(key))
        server_trials = measured_ok_including_disturbed(
            trials[(trials["server_key"] == key) & (trials["setup"] == SETUP_SWEEP)]
        )
        eligible = server_trials[~server_trials["client_bound"].astype(bool)]
        pool = eligible if not eligible.empty else server_trials
        p99 = pd.to_numeric(pool["latency_p99_s"], errors="coerce")
        lowest = pool.loc[p99.idxmin()] if p99.notna().any() else None
        at_floor = server_trials[server_trials["offered_rate"] == group["offered_rate"].min()]
        floor_trials = eligible[eligible["offered_rate"] == group["offered_rate"].min()]
        row: dict[str, Any] = {
            name: first.get(name)
            for name in (
                "campaign",
                "server_key",
                "server",
                "variant",
                "family",
                "architecture",
                "connections",
                "saturation_rate",
                "tool",
            )
        }
        row.update(
            rates=len(group),
            offered_min=float(group["offered_rate"].min()),
            offered_max=float(group["offered_rate"].max()),
            n_trials=int(group["n"].sum()),
            n_client_bound=int(group["n_client_bound"].sum()),
            n_disturbed=int(group["n_disturbed"].sum()),
            n_flagged=int(group["n_flagged"].sum()),
            n_failed=int(group["n_failed"].sum()),
            n_fell_behind=int(group["n_fell_behind"].sum()),
            trials_per_rate=int(group["n_knee"].min()),
            floor_state=decision.floor_state if decision else FLOOR_UNMEASURED,
            knee_state=decision.state if decision else NOT_MEASURED,
            **_test_columns("floor", decision.floor if decision else None),
            floor_p99_max_s=sample_max(floor_trials["knee_p99_s"]),
            floor_left_out=int((at_floor["client_bound"].astype(bool) | at_floor["disturbed"].astype(bool)).sum()),
            # Client-bound trials too: a client late on its schedule is what made them client-bound.
            floor_send_lag_p99_s=stats.sample_median(at_floor["send_lag_p99_s"]),
            **_test_columns("knee", decision.knee if decision else None),
            **_test_columns("below", decision.below if decision else None),
            **_test_columns("highest", decision.highest if decision else None),
            lowest_p99_s=float(p99.min()) if p99.notna().any() else math.nan,
            lowest_p99_rate=float(lowest["offered_rate"]) if lowest is not None else math.nan,
            lowest_p99_client_bound_only=bool(eligible.empty and not server_trials.empty),
        )
        rows.append(row)
    return sorted_rows(pd.DataFrame(rows), ["connections"]).reset_index(drop=True)
