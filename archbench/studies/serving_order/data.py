"""The serving-order study's data: the thread pool's FIFO queue against its LIFO stack under the same offered load.

Per trial (archbench.analyze.open_loop_trials.latency_trials: the open-loop trials' p50, p99, p99.9, achieved
rate and client CPU), a trial is *usable* when it is a measured ok trial, not flagged (socket errors, non-2xx), not
client-bound, and sustained: at least 1 - SUSTAIN_TOLERANCE of its scheduled requests completed (the achieved rate
within SUSTAIN_TOLERANCE of the offered one where the client keeps no counts; archbench.analyze.open_loop_checks
.kept_up_ratio, the same ratio as the latency knee's kept-up mark). Percentiles of a run that fell behind describe a queue that grew all run long,
not the serving order.

Per offered rate, for each percentile: each hand-off's median over its usable trials, and the ratio LIFO / FIFO
paired within rounds (both hand-offs ran in the same round at the same offered rate; archbench.stats.paired: the
geometric mean of the per-round ratios with its Student-t interval on the logarithms). A round where either side is
not usable is left out of the pair.

The pre-declared test (one percentile, one rate, so no correction across comparisons): the p99.9 ratio at the
highest offered rate where at least MIN_ROUNDS rounds paired; "lengthens" when its interval lies above 1, "shortens"
when below, "inconclusive" when it covers 1, "not testable here" when no rate has enough rounds (interval_side). The
text quotes the median's paired ratio at that rate beside it, judged by the same rule: a median ratio whose interval
covers 1 is not shown different, whatever its point estimate.

Every campaign the study reads is one look of that test (the shipped five-round pilot and the twelve-round run made
after it was inconclusive): running again until a test passes finds an effect more often than its level says, so
the error FAMILY_ERROR is split evenly over the looks (Bonferroni) and each look's intervals are at 1 - FAMILY_ERROR
/ looks. The first look, in the order they ran, whose interval excludes 1 decides; when none does, the test is
inconclusive, and when decisive looks point opposite ways it is inconclusive too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from archbench.analyze.open_loop_checks import RATE_TOLERANCE
from archbench.analyze.open_loop_trials import TrialCriteria, latency_trials
from archbench.analyze.paired import by_round
from archbench.data import storage
from archbench.render.common import measured_ok_including_disturbed
from archbench.stats.paired import paired_log_ratio

TRIALS_CSV = "serving-order-trials.csv"
COMPARISON_CSV = "serving-order-comparison.csv"
FIFO, LIFO = "queue", "stack"
PERCENTILES = ("50", "99", "99_9")
TESTED_PERCENTILE = "99_9"
MIN_ROUNDS = 3
SUSTAIN_TOLERANCE = RATE_TOLERANCE  # latency_trials' `sustained`
FAMILY_ERROR = 0.05  # the test's error over all its looks
LENGTHENS, SHORTENS, INCONCLUSIVE, NOT_TESTABLE = "lengthens", "shortens", "inconclusive", "not testable here"
DECISIVE = (LENGTHENS, SHORTENS)


def look_level(looks: int) -> float:
    """The confidence level of each look when FAMILY_ERROR is split evenly over `looks` (Bonferroni)."""
    return 1.0 - FAMILY_ERROR / max(1, looks)


@dataclass
class Look:
    """One campaign of the test: its trials, its comparison per offered rate at `level`, and its verdict."""

    campaign: storage.Campaign
    trials: pd.DataFrame
    comparison: pd.DataFrame
    level: float

    @property
    def name(self) -> str:
        return self.campaign.name

    @property
    def planned_rounds(self) -> int | None:
        rounds = (self.campaign.meta.get("parameters") or {}).get("trials")
        return int(rounds) if rounds is not None else None

    @property
    def verdict(self) -> dict[str, object]:
        return verdict(self.comparison)


@dataclass
class ServingOrderResults:
    """Every look of the test, in the order they ran (none without a campaign)."""

    looks: tuple[Look, ...] = ()

    @property
    def available(self) -> bool:
        return any(not look.comparison.empty for look in self.looks)

    @property
    def level(self) -> float:
        return look_level(len(self.looks))

    @property
    def trials(self) -> pd.DataFrame:
        return _stacked([look.trials.assign(look=i + 1) for i, look in enumerate(self.looks)])

    @property
    def comparison(self) -> pd.DataFrame:
        frames = [
            look.comparison.assign(look=i + 1, campaign=look.name, level=look.level)
            for i, look in enumerate(self.looks)
            if not look.comparison.empty
        ]
        return _stacked(frames)


def _stacked(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def read_looks(campaigns: list[storage.Campaign]) -> ServingOrderResults:
    """The looks of the test, one per campaign in the order they ran, each compared at the split level."""
    ordered = sorted(campaigns, key=lambda c: str(c.meta.get("created_at") or ""))
    level = look_level(len(ordered))
    looks = []
    for campaign in ordered:
        trials = serving_order_trials(campaign)
        looks.append(Look(campaign, trials, compare(trials, level) if not trials.empty else trials, level))
    return ServingOrderResults(tuple(looks))


def serving_order_trials(campaign: storage.Campaign) -> pd.DataFrame:
    """The open-loop trials of the thread pool's two hand-offs, each with `usable` and why not (latency_trials:
    measured, ok, not flagged, not client-bound and `sustained`: its kept-up ratio within SUSTAIN_TOLERANCE of 1)."""
    frame = latency_trials([campaign], TrialCriteria())
    if frame.empty:
        return frame
    frame = frame[frame["architecture"] == "thread_pool"].copy()
    frame["handoff"] = frame["handoff"].fillna(FIFO)
    return frame.reset_index(drop=True)


def compare(trials: pd.DataFrame, level: float = 1.0 - FAMILY_ERROR) -> pd.DataFrame:
    """One row per offered rate: each hand-off's median percentiles and usable trials, and LIFO / FIFO per
    percentile paired within rounds (ratio, interval at `level`, rounds)."""
    measured = measured_ok_including_disturbed(trials) if not trials.empty else trials
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
            paired = paired_log_ratio(rounds["lifo"], rounds["fifo"], level)
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
    return {"verdict": interval_side(row[f"low_p{q}"], row[f"high_p{q}"]), "row": row}


def interval_side(low: float, high: float) -> str:
    """Where a LIFO / FIFO interval lies: LENGTHENS above 1, SHORTENS below, INCONCLUSIVE when it covers 1 (or is
    missing). The test's rule, which the text applies to the median's ratio too."""
    if low > 1:
        return LENGTHENS
    if high < 1:
        return SHORTENS
    return INCONCLUSIVE


def sequential_verdict(study: ServingOrderResults) -> dict[str, object]:
    """The test over its looks (module docstring): the verdict, the look it rests on (0-based `deciding`), and
    `conflict` when decisive looks point opposite ways."""
    verdicts = [look.verdict["verdict"] for look in study.looks]
    decisive = [i for i, v in enumerate(verdicts) if v in DECISIVE]
    testable = [i for i, v in enumerate(verdicts) if v != NOT_TESTABLE]
    if not testable:
        return {"verdict": NOT_TESTABLE, "deciding": None, "conflict": False}
    if len({verdicts[i] for i in decisive}) > 1:
        return {"verdict": INCONCLUSIVE, "deciding": None, "conflict": True}
    deciding = decisive[0] if decisive else testable[-1]
    return {"verdict": verdicts[deciding], "deciding": deciding, "conflict": False}
