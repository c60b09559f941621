"""The serving-order study's data: the thread pool's FIFO queue against its LIFO stack under the same offered load.

Per trial (archbench.report.studies.latency.data.latency_trials: the open-loop trials' p50, p99, p99.9, achieved
rate and client CPU), a trial is *usable* when it is a measured ok trial, not flagged (socket errors, non-2xx), not
client-bound, and sustained: its achieved rate within SUSTAIN_TOLERANCE of the offered one
(archbench.analyze.open_loop_checks). Percentiles of a run that fell behind describe a queue that grew all run long,
not the serving order.

Per offered rate, for each percentile: each hand-off's median over its usable trials, and the ratio LIFO / FIFO
paired within rounds (both hand-offs ran in the same round at the same offered rate; archbench.stats.paired: the
geometric mean of the per-round ratios with its Student-t interval on the logarithms). A round where either side is
not usable is left out of the pair.

The pre-declared test (one, so no correction for multiplicity): the p99.9 ratio at the highest offered rate where
at least MIN_ROUNDS rounds paired; "lengthens" when its interval lies above 1, "shortens" when below, "inconclusive"
when it covers 1, "not testable here" when no rate has enough rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from archbench.analyze.open_loop_checks import RATE_TOLERANCE
from archbench.analyze.paired import by_round
from archbench.data import storage
from archbench.report.studies.latency.data import Criteria, latency_trials
from archbench.stats.paired import paired_log_ratio

TRIALS_CSV = "serving-order-trials.csv"
COMPARISON_CSV = "serving-order-comparison.csv"
FIFO, LIFO = "queue", "stack"
PERCENTILES = ("50", "99", "99_9")
TESTED_PERCENTILE = "99_9"
MIN_ROUNDS = 3
SUSTAIN_TOLERANCE = RATE_TOLERANCE
LENGTHENS, SHORTENS, INCONCLUSIVE, NOT_TESTABLE = "lengthens", "shortens", "inconclusive", "not testable here"


@dataclass
class ServingOrderResults:
    """The campaign's usable trials and the comparison per offered rate (empty without a campaign)."""

    campaign: storage.Campaign | None
    trials: pd.DataFrame = field(default_factory=pd.DataFrame)
    comparison: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def available(self) -> bool:
        return not self.comparison.empty


def serving_order_trials(campaign: storage.Campaign) -> pd.DataFrame:
    """The open-loop trials of the thread pool's two hand-offs, each with `usable` and why not."""
    frame = latency_trials([campaign], Criteria())
    if frame.empty:
        return frame
    frame = frame[frame["architecture"] == "thread_pool"].copy()
    frame["handoff"] = frame["handoff"].fillna(FIFO)
    sustained = (frame["achieved_fraction"] - 1).abs() <= SUSTAIN_TOLERANCE + 1e-12
    frame["sustained"] = sustained
    frame["usable"] = (
        (frame["status"] == "ok")
        & ~frame["warmup"].astype(bool)
        & ~frame["flagged"].astype(bool)
        & ~frame["client_bound"].astype(bool)
        & sustained
    )
    return frame.reset_index(drop=True)


def compare(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per offered rate: each hand-off's median percentiles and usable trials, and LIFO / FIFO per
    percentile paired within rounds (ratio, interval, rounds)."""
    measured = trials[(trials["status"] == "ok") & ~trials["warmup"].astype(bool)] if not trials.empty else trials
    rows = []
    for rate, at_rate in measured.groupby("offered_rate", sort=True):
        usable = at_rate[at_rate["usable"]]
        fifo, lifo = (usable[usable["handoff"] == side] for side in (FIFO, LIFO))
        row: dict[str, float | int | str] = {
            "offered_rate": rate,
            "rate_fraction": at_rate["rate_fraction"].iloc[0],
            "fifo_trials": len(at_rate[at_rate["handoff"] == FIFO]),
            "lifo_trials": len(at_rate[at_rate["handoff"] == LIFO]),
            "fifo_usable": len(fifo),
            "lifo_usable": len(lifo),
            "fifo_client_cpu": at_rate.loc[at_rate["handoff"] == FIFO, "load_cpu_utilisation"].median(),
        }
        for q in PERCENTILES:
            column = f"latency_p{q}_s"
            row[f"fifo_p{q}_s"] = fifo[column].median() if not fifo.empty else math.nan
            row[f"lifo_p{q}_s"] = lifo[column].median() if not lifo.empty else math.nan
            rounds = pd.concat([by_round(lifo, column).rename("lifo"), by_round(fifo, column).rename("fifo")], axis=1)
            paired = paired_log_ratio(rounds["lifo"], rounds["fifo"])
            row[f"ratio_p{q}"] = paired.ratio
            row[f"low_p{q}"] = paired.ci.low
            row[f"high_p{q}"] = paired.ci.high
            row[f"rounds_p{q}"] = paired.n
        rows.append(row)
    return pd.DataFrame(rows)


def verdict(comparison: pd.DataFrame) -> dict[str, object]:
    """The pre-declared test (module docstring): the tested percentile's ratio at the highest offered rate with
    at least MIN_ROUNDS paired rounds."""
    q = TESTED_PERCENTILE
    if comparison.empty:
        return {"verdict": NOT_TESTABLE, "why": "no_rate"}
    enough = comparison[comparison[f"rounds_p{q}"] >= MIN_ROUNDS]
    if enough.empty:
        return {"verdict": NOT_TESTABLE, "why": "few_rounds"}
    row = enough.loc[enough["offered_rate"].idxmax()]
    low, high = row[f"low_p{q}"], row[f"high_p{q}"]
    if low > 1:
        outcome = LENGTHENS
    elif high < 1:
        outcome = SHORTENS
    else:
        outcome = INCONCLUSIVE
    return {"verdict": outcome, "row": row}
