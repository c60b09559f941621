"""Rounds where the answer is open: the selection of the best design per workload point, as a campaign phase.

With the campaign parameter `selection_delta` (the indifference zone), once the planned rounds (`trials`) are done the
runner keeps measuring only where the answer is still open. For every workload point (archbench.config.workloads
`point_key`: the workload settings, connections and pipeline depth) the designs measured there (pong, which answers
without doing the work, left out) are compared by `archbench.stats.selection.select_sequentially` over the rounds on
disk: the first look after the planned rounds, one look per round after it, up to `selection_max_rounds` rounds, each
look at alpha / L. A design shown slower than the best leaves the point; every design still in gets one more round
while some design of the point is open, the point can rank the designs here (its fastest design was bound by the
load generator in fewer than half of its rounds) and the budget allows. One phase round runs the next repetition of
every open point's designs in one shuffled order (seeded by the campaign seed), so each point's designs stay paired
within rounds.

`point_selections` is the one place that reads the rounds and replays the looks: the runner decides with it, and the
workloads study's decision map reports from it (archbench.studies.workloads), so what the report says about a
point is what decided its rounds. A round's value of a design is the mean rate of its usable trials with that
repetition: ok, measured (not a warm-up) and not disturbed (archbench.measure.interference: a disturbed trial is
re-run in its round, and the re-run counts instead).

Everything is derived from the records on disk: an interrupted phase resumes by completing the round in flight.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from archbench.config.params import DEFAULT_INTERFERENCE_SHARE, Parameters
from archbench.config.plan import PlannedTrial, TrialConfig
from archbench.config.workloads import point_key, point_label
from archbench.data.storage import load_campaign
from archbench.measure.adaptive import (
    CLIENT_BOUND_SHARE,
    adaptive_wall_s,
    added_trials,
    expected_round_s,
    record_summary,
    trial_throughput,
)
from archbench.measure.interference import campaign_share, judged_disturbed
from archbench.measure.load_bound import client_bound
from archbench.stats.samples import DEFAULT_ALPHA
from archbench.stats.selection import DEFAULT_DELTA, OPEN, SequentialSelection, select_sequentially

REFERENCE_FLOOR = "pong"  # parses nothing and answers without the work: never a candidate for the best
SELECTION_CRITERION = "selection"
# Why a point gets no more rounds.
RESOLVED, NOT_RANKABLE, MAX_ROUNDS, BUDGET, TOO_FEW = "resolved", "not rankable", "max rounds", "budget", "too few"


@dataclass(frozen=True)
class SelectionSettings:
    """How a campaign's points are selected: the indifference zone, the first look and the last round."""

    delta: float
    first_look: int
    max_rounds: int
    alpha: float = DEFAULT_ALPHA

    @classmethod
    def of_campaign(cls, parameters: Mapping[str, Any], rounds_measured: int) -> SelectionSettings:
        """A campaign's declared selection (campaign.json's parameters); a campaign that declared none had a fixed
        number of rounds, so its one look is at the rounds it measured, with the default delta."""
        delta = parameters.get("selection_delta")
        trials = int(parameters.get("trials") or rounds_measured or 2)
        if delta is None:
            rounds = max(2, rounds_measured)
            return cls(DEFAULT_DELTA, rounds, rounds)
        return cls(float(delta), trials, int(parameters.get("selection_max_rounds") or 3 * trials))

    @property
    def declared_rounds(self) -> bool:
        return self.max_rounds > self.first_look


@dataclass(frozen=True)
class PointRounds:
    """One workload point's candidate designs and their values by round (rows: repetition 1, 2, ...)."""

    key: tuple[str, ...]
    label: str
    config_ids: tuple[str, ...]
    rates: np.ndarray  # rounds x config_ids; NaN: no usable trial that round
    client_bound: Mapping[str, float]  # config id -> share of its usable rounds bound by the load generator
    run: Mapping[str, frozenset[int]]  # config id -> repetitions with a measured trial of any status

    @property
    def rounds(self) -> int:
        return int(self.rates.shape[0])

    def fastest(self) -> str | None:
        """The candidate with the highest mean log rate over its usable rounds."""
        with np.errstate(divide="ignore", invalid="ignore"):
            means = [
                np.nanmean(np.log(self.rates[:, i])) if np.any(self.rates[:, i] > 0) else -math.inf
                for i in range(len(self.config_ids))
            ]
        if not means or max(means) == -math.inf:
            return None
        return self.config_ids[int(np.argmax(means))]


@dataclass(frozen=True)
class PointSelection:
    """A point's rounds and what the looks decided over them."""

    point: PointRounds
    selection: SequentialSelection | None  # None: fewer rounds than the first look

    @property
    def resolved(self) -> bool:
        return self.selection is not None and self.selection.resolved

    def fastest(self) -> str | None:
        """The design with the highest estimate at the last look (among the designs still in), else over all rounds."""
        if self.selection is None or not self.selection.looks:
            return self.point.fastest()
        return max(self.selection.looks[-1].result.designs, key=lambda design: design.mean_log).name

    def client_bound_share(self) -> float:
        """The share of the fastest design's usable rounds that the load generator bound (NaN without one)."""
        fastest = self.fastest()
        return math.nan if fastest is None else self.point.client_bound.get(fastest, 0.0)

    def rankable(self) -> bool:
        """Whether the designs can be ranked here: the load generator bound the fastest design in fewer than half
        of its rounds (where it bound it, it set the rate)."""
        return self.client_bound_share() < CLIENT_BOUND_SHARE


def _usable(record: Mapping[str, Any], max_share: float) -> bool:
    """ok, measured and not disturbed (archbench.measure.interference.judged_disturbed)."""
    return record.get("status") == "ok" and not record.get("warmup") and not judged_disturbed(record, max_share)


def point_rounds(
    records: Iterable[Mapping[str, Any]], campaign_dir: Path, max_share: float = DEFAULT_INTERFERENCE_SHARE
) -> list[PointRounds]:
    """Every workload point's candidates and their rates by round, from the trial records (points in the order
    their first trial ran); `max_share` is the campaign's interference_share."""
    values: dict[tuple[str, ...], dict[str, dict[int, list[float]]]] = {}
    bound: dict[str, list[bool]] = {}
    run: dict[str, set[int]] = {}
    labels: dict[tuple[str, ...], str] = {}
    for record in records:
        config = record.get("config") or {}
        if record.get("warmup") or config.get("architecture") == REFERENCE_FLOOR or config.get("proto") == "echo":
            continue
        if config.get("offered_rate") is not None:
            continue
        key = point_key(config)
        labels.setdefault(key, point_label(config))
        config_id, repetition = str(record.get("config_id")), int(record.get("repetition") or 0)
        by_round = values.setdefault(key, {}).setdefault(config_id, {})
        run.setdefault(config_id, set()).add(repetition)
        if not _usable(record, max_share):
            continue
        rate, _ = trial_throughput(record, campaign_dir)
        if rate is None or rate <= 0:
            continue
        by_round.setdefault(repetition, []).append(rate)
        bound.setdefault(config_id, []).append(client_bound(record.get("load") or {}))
    points = []
    for key, configs in values.items():
        ids = tuple(sorted(configs))
        rounds = max((max(run[c]) for c in ids if run.get(c)), default=0)
        rates = np.full((rounds, len(ids)), np.nan)
        for column, config_id in enumerate(ids):
            for repetition, rates_of_round in configs[config_id].items():
                if 1 <= repetition <= rounds:
                    rates[repetition - 1, column] = float(np.mean(rates_of_round))
        shares = {c: (sum(bound[c]) / len(bound[c]) if bound.get(c) else 0.0) for c in ids}
        points.append(PointRounds(key, labels[key], ids, rates, shares, {c: frozenset(run.get(c, ())) for c in ids}))
    return points


def select_point(point: PointRounds, settings: SelectionSettings) -> PointSelection:
    """Replay the looks over one point's rounds (archbench.stats.selection.select_sequentially)."""
    if len(point.config_ids) < 2 or point.rounds < settings.first_look:
        return PointSelection(point, None)
    selection = select_sequentially(
        point.rates,
        point.config_ids,
        first_look=settings.first_look,
        max_rounds=settings.max_rounds,
        delta=settings.delta,
        alpha=settings.alpha,
    )
    return PointSelection(point, selection)


def point_selections(campaign_dir: Path) -> tuple[SelectionSettings, list[PointSelection]]:
    """The campaign's selection settings and every workload point's selection, from its records on disk."""
    campaign = load_campaign(campaign_dir)
    points = point_rounds(campaign.trials, campaign.path, campaign_share(campaign.meta))
    measured = max((p.rounds for p in points), default=0)
    settings = SelectionSettings.of_campaign(campaign.meta.get("parameters") or {}, measured)
    return settings, [select_point(point, settings) for point in points]


def survivors_for_round(point: PointRounds, settings: SelectionSettings, repetition: int) -> tuple[str, ...]:
    """The designs that run round `repetition` of a point: all of them up to the first look, then those the looks
    over the earlier rounds kept in."""
    if repetition <= settings.first_look:
        return point.config_ids
    earlier = PointRounds(
        point.key, point.label, point.config_ids, point.rates[: repetition - 1], point.client_bound, point.run
    )
    chosen = select_point(earlier, settings).selection
    return point.config_ids if chosen is None else chosen.still_in


def due(point: PointRounds, settings: SelectionSettings) -> tuple[int, tuple[str, ...], str | None]:
    """(repetition, config ids that still need it, None) for the point's next round, or (0, (), why not)."""
    last = point.rounds
    if last >= 1:
        missing = tuple(c for c in survivors_for_round(point, settings, last) if last not in point.run.get(c, ()))
        if missing:  # a round interrupted half-way is completed before anything is decided
            return last, missing, None
    chosen = select_point(point, settings).selection
    if chosen is None:
        return 0, (), TOO_FEW
    if chosen.resolved:
        return 0, (), RESOLVED
    if not PointSelection(point, chosen).rankable():
        return 0, (), NOT_RANKABLE
    if last + 1 > settings.max_rounds:
        return 0, (), MAX_ROUNDS
    return last + 1, chosen.still_in, None


def next_selection_round(
    params: Parameters,
    configs: Sequence[TrialConfig],
    campaign_dir: Path,
    next_order_index: int,
    deadline: float | None = None,
) -> tuple[list[PlannedTrial], dict[str, str]]:
    """(the next phase round, {}) or ([], why each point stopped), within the budget and before the deadline
    (time.monotonic())."""
    campaign = load_campaign(campaign_dir)
    settings = SelectionSettings.of_campaign(campaign.meta.get("parameters") or params.to_dict(), params.trials)
    by_id = {c.config_id: c for c in configs}
    wanted: list[tuple[TrialConfig, int]] = []
    stopped: dict[str, str] = {}
    for point in point_rounds(campaign.trials, campaign.path, params.interference_share):
        repetition, ids, why = due(point, settings)
        if why is not None:
            stopped[point.label] = why
            continue
        wanted.extend((by_id[c], repetition) for c in ids if c in by_id)
    if not wanted:
        return [], stopped
    expected = expected_round_s(params, (c for c, _ in wanted))
    spent = adaptive_wall_s(r for r in campaign.trials if not r.get("warmup"))
    over_budget = params.selection_budget_s is not None and spent + expected > params.selection_budget_s
    if over_budget or (deadline is not None and time.monotonic() + expected > deadline):
        return [], {**stopped, **{point_label(c.as_dict()): BUDGET for c, _ in wanted}}
    top = max(repetition for _, repetition in wanted)
    random.Random(f"{params.seed}-selection-{top}-{len(wanted)}").shuffle(wanted)
    return added_trials(wanted, params.trials, next_order_index), {}


def selection_summary(
    settings: SelectionSettings, selections: Sequence[PointSelection], stopped: Mapping[str, str]
) -> dict[str, Any]:
    """What the phase decided, per point: rounds, verdicts, the designs still in, and why it stopped."""
    points = {}
    for chosen in selections:
        selection = chosen.selection
        designs = {}
        if selection is not None:
            for name, comparison in selection.final.items():
                designs[name] = {
                    "verdict": comparison.verdict,
                    "ratio_to_best_other": round(comparison.ratio, 6),
                    "low": round(math.exp(comparison.low), 6),
                    "high": round(math.exp(comparison.high), 6),
                    "decided_at_round": selection.decided_at[name],
                }
        points[chosen.point.label] = {
            "rounds": chosen.point.rounds,
            "rankable": chosen.rankable(),
            "resolved": chosen.resolved,
            "rounds_needed": None if selection is None else selection.rounds_needed,
            "stopped_by": stopped.get(chosen.point.label),
            "designs": designs,
        }
    return {
        "criterion": SELECTION_CRITERION,
        "delta": settings.delta,
        "alpha": settings.alpha,
        "first_look": settings.first_look,
        "max_rounds": settings.max_rounds,
        "points": points,
    }


def _open_points(selections: Sequence[PointSelection]) -> list[str]:
    return [
        f"{s.point.label} ({sum(1 for c in s.selection.final.values() if c.verdict == OPEN)} open)"
        for s in selections
        if s.selection is not None and not s.selection.resolved and s.rankable()
    ]


def run_selection_phase(
    params: Parameters,
    configs: Sequence[TrialConfig],
    campaign_dir: Path,
    first_order_index: int,
    run_round: Callable[[list[PlannedTrial]], None],
    stream: TextIO,
    deadline: float | None = None,
) -> dict[str, Any]:
    """Phase rounds (`run_round` runs and stores them) while some rankable point is open, within max rounds, the
    budget and the deadline; writes the outcome once to the campaign's adaptive/ directory and returns it."""
    while True:
        records = load_campaign(campaign_dir).trials
        next_index = max((int(r.get("order_index") or 0) for r in records), default=first_order_index - 1) + 1
        extra, stopped = next_selection_round(params, configs, campaign_dir, next_index, deadline)
        if not extra:
            break
        _, selections = point_selections(campaign_dir)
        budget = f", budget {params.selection_budget_s:g} s" if params.selection_budget_s is not None else ""
        print(
            f"selection (within {100 * (params.selection_delta or DEFAULT_DELTA):g}% of the best): "
            f"{len(extra)} trials for the open points: {'; '.join(_open_points(selections)) or 'completing a round'}"
            f" (max {params.selection_max_rounds} rounds{budget})",
            file=stream,
            flush=True,
        )
        run_round(extra)
    settings, selections = point_selections(campaign_dir)
    content = selection_summary(settings, selections, stopped)
    written = record_summary(campaign_dir, content)
    resolved = sum(1 for s in selections if s.resolved)
    where = f"; written to {written}" if written else ""
    print(
        f"selection: {resolved} of {len(selections)} points resolved"
        + (f"; open: {'; '.join(_open_points(selections))}" if _open_points(selections) else "")
        + where,
        file=stream,
        flush=True,
    )
    return content
