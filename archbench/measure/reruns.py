"""Re-running a disturbed trial in its round, so that the round still holds an undisturbed measurement.

A measured trial that ends ok but disturbed (its record's `interference`, archbench.measure.interference) stays
recorded: raw data is never overwritten or dropped. Right after it the runner runs the same configuration again,
in the same round, as a new trial: the same repetition, warm-up flag, order index and adaptive flag, the trial id
`<trial id>-rerun<k>` (k = 1, 2, ...), and `"reruns": <the id of the trial it replaces>` in its record. A re-run
that is disturbed again is re-run in turn, until one is not or the campaign parameter `max_reruns` is reached; the
last one stays recorded as disturbed. Failed and unsupported trials are not re-run (their failure is the
measurement), nor are warm-ups (no statistic reads them).

Re-runs are not planned trials: campaign.json's `plan` never lists them, like the adaptive ones. Everything is
derived from the records on disk, so a campaign interrupted between a disturbed trial and its re-run runs that
re-run when it resumes (`due_reruns`), and since a re-run's id is fixed by the trial it replaces and committed files
are never replaced, none runs twice.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from archbench.config.plan import PlannedTrial, TrialConfig
from archbench.measure.interference import is_disturbed

RERUN_KEY = "reruns"
_RERUN_SUFFIX = re.compile(r"^(?P<original>.+)-rerun(?P<attempt>[1-9][0-9]*)$")

# Runs and commits one trial; the second argument is the id of the trial it re-runs (None: a planned one).
RunOne = Callable[[PlannedTrial, "str | None"], Mapping[str, Any]]


def rerun_id(trial_id: str, attempt: int) -> str:
    """The id of the `attempt`-th re-run of the trial `trial_id` (itself a re-run or not)."""
    return f"{original_id(trial_id)}-rerun{attempt}"


def original_id(trial_id: str) -> str:
    """The planned (or adaptive) trial a re-run stands in for; a trial that is no re-run is its own."""
    match = _RERUN_SUFFIX.match(trial_id)
    return match.group("original") if match else trial_id


def attempt(trial_id: str) -> int:
    """0 for a trial that is no re-run, k for its k-th re-run."""
    match = _RERUN_SUFFIX.match(trial_id)
    return int(match.group("attempt")) if match else 0


def is_rerun(trial_id: str) -> bool:
    return attempt(trial_id) > 0


def needs_rerun(record: Mapping[str, Any], max_reruns: int) -> bool:
    """A measured ok trial judged disturbed, with re-runs left."""
    return (
        record.get("status") == "ok"
        and not record.get("warmup")
        and is_disturbed(record)
        and attempt(str(record.get("trial_id"))) < max_reruns
    )


def rerun_of(planned: PlannedTrial, trial_id: str) -> PlannedTrial:
    """The next re-run of `trial_id`, a trial of `planned`'s configuration in its round."""
    return dataclasses.replace(planned, trial_id=rerun_id(trial_id, attempt(trial_id) + 1))


def rerun_until_undisturbed(
    planned: PlannedTrial, record: Mapping[str, Any], run_one: RunOne, max_reruns: int
) -> list[Mapping[str, Any]]:
    """Re-run `record` (a trial of `planned`) while it needs it; the records of the re-runs, in order."""
    records = []
    while needs_rerun(record, max_reruns):
        previous = str(record["trial_id"])
        record = run_one(rerun_of(planned, previous), previous)
        records.append(record)
    return records


def run_with_reruns(planned: PlannedTrial, run_one: RunOne, max_reruns: int) -> list[Mapping[str, Any]]:
    """Run `planned`, then its re-runs while they are disturbed: every record, the planned trial's first."""
    record = run_one(planned, None)
    return [record, *rerun_until_undisturbed(planned, record, run_one, max_reruns)]


def latest_attempts(records: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Per trial that re-runs stand in for (its original id): its last attempt on disk."""
    latest: dict[str, Mapping[str, Any]] = {}
    for record in records:
        trial_id = str(record.get("trial_id") or "")
        key = original_id(trial_id)
        if key not in latest or attempt(trial_id) > attempt(str(latest[key]["trial_id"])):
            latest[key] = record
    return latest


def due_reruns(
    records: Iterable[Mapping[str, Any]], configs: Mapping[str, TrialConfig], max_reruns: int
) -> list[tuple[PlannedTrial, Mapping[str, Any]]]:
    """The re-runs an interrupted campaign owes: (the original trial as planned, its last attempt), in execution
    order, for every trial whose last attempt on disk needs a re-run. `configs` are the campaign's configurations by
    id; a record of another configuration is left alone."""
    due = []
    for key, record in latest_attempts(records).items():
        config = configs.get(str(record.get("config_id")))
        if config is None or not needs_rerun(record, max_reruns):
            continue
        original = PlannedTrial(
            trial_id=key,
            config=config,
            repetition=int(record.get("repetition") or 0),
            warmup=bool(record.get("warmup")),
            order_index=int(record.get("order_index") or 0),
            adaptive=bool(record.get("adaptive")),
        )
        due.append((original, record))
    return sorted(due, key=lambda item: (item[0].order_index, item[0].trial_id))


def progress_detail(records: list[Mapping[str, Any]]) -> str:
    """A progress line's detail for a trial and its re-runs: its failure, or that it was disturbed and how its
    re-runs ended."""
    first, *again = records
    detail = str(first.get("failure_reason") or "")
    if not is_disturbed(first):
        return detail
    if not again:
        return "disturbed" + (f"; {detail}" if detail else "")
    last = again[-1]
    still = ", still disturbed" if is_disturbed(last) else ""
    return f"disturbed; re-run {len(again)}x as {last['trial_id']}: {last['status']}{still}"
