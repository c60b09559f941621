"""Re-running disturbed trials in their round (archbench.measure.reruns), with a fake trial runner: the ids, the
re-run itself, the cap on re-runs, what is never re-run, and resuming an interrupted campaign."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from archbench.config.params import resolve_parameters
from archbench.config.plan import PlannedTrial, TrialConfig
from archbench.data.storage import CampaignStore, load_campaign
from archbench.measure import reruns, runner

CONFIG = TrialConfig("epoll", 16, 1, 1, options=(("trigger", "level"),))


def planned(repetition: int = 1, **overrides: Any) -> PlannedTrial:
    values = dict(
        trial_id=f"{CONFIG.config_id}-r{repetition:02d}",
        config=CONFIG,
        repetition=repetition,
        warmup=False,
        order_index=repetition,
    )
    values.update(overrides)
    return PlannedTrial(**values)


def record_of(trial: PlannedTrial, disturbed: bool, status: str = "ok") -> dict[str, Any]:
    return {
        "trial_id": trial.trial_id,
        "config_id": trial.config_id,
        "repetition": trial.repetition,
        "warmup": trial.warmup,
        "order_index": trial.order_index,
        "status": status,
        "interference": {"disturbed": disturbed, "reasons": ["server CPUs: 45 %"] if disturbed else []},
    }


class FakeTrials:
    """Runs nothing: each trial's record says what `verdicts` (trial id -> disturbed) says, and is committed to
    `store` as the runner does; `interrupt_at` raises KeyboardInterrupt instead of running that trial."""

    def __init__(self, store: CampaignStore, verdicts: Callable[[str], bool], interrupt_at: str | None = None):
        self.store, self.verdicts, self.interrupt_at = store, verdicts, interrupt_at
        self.ran: list[str] = []

    def __call__(self, trial: PlannedTrial, rerun_of: str | None) -> Mapping[str, Any]:
        if trial.trial_id == self.interrupt_at:
            raise KeyboardInterrupt
        self.ran.append(trial.trial_id)
        record = record_of(trial, self.verdicts(trial.trial_id))
        if rerun_of is not None:
            record[reruns.RERUN_KEY] = rerun_of
        self.store.commit_trial(trial.trial_id, {}, record)
        return record


def test_rerun_ids() -> None:
    assert reruns.rerun_id("epoll-c16-lt1-d1s-r05", 1) == "epoll-c16-lt1-d1s-r05-rerun1"
    assert reruns.rerun_id("epoll-c16-lt1-d1s-r05-rerun1", 2) == "epoll-c16-lt1-d1s-r05-rerun2"
    assert reruns.original_id("epoll-c16-lt1-d1s-r05-rerun2") == "epoll-c16-lt1-d1s-r05"
    assert [reruns.attempt(t) for t in ("x-r05", "x-r05-rerun1", "x-r05-rerun12")] == [0, 1, 12]
    assert not reruns.is_rerun("x-warmup") and reruns.is_rerun("x-r01-rerun3")


def test_a_disturbed_trial_is_run_again_in_its_round(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path / "c")
    store.path.mkdir()
    fake = FakeTrials(store, lambda trial_id: trial_id.endswith("-r01"))
    records = reruns.run_with_reruns(planned(), fake, max_reruns=2)
    assert fake.ran == [f"{CONFIG.config_id}-r01", f"{CONFIG.config_id}-r01-rerun1"]
    first, again = records
    assert first["interference"]["disturbed"] and not again["interference"]["disturbed"]
    assert again[reruns.RERUN_KEY] == first["trial_id"]
    # Same round, same place in the order: only the id differs.
    assert (again["repetition"], again["order_index"], again["config_id"]) == (1, 1, CONFIG.config_id)
    assert reruns.progress_detail(records) == f"disturbed; re-run 1x as {again['trial_id']}: ok"


def test_re_runs_stop_at_max_reruns_and_stay_disturbed(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path / "c")
    store.path.mkdir()
    fake = FakeTrials(store, lambda trial_id: True)
    records = reruns.run_with_reruns(planned(), fake, max_reruns=2)
    assert [r["trial_id"] for r in records] == [
        f"{CONFIG.config_id}-r01",
        f"{CONFIG.config_id}-r01-rerun1",
        f"{CONFIG.config_id}-r01-rerun2",
    ]
    assert [r.get(reruns.RERUN_KEY) for r in records] == [None, records[0]["trial_id"], records[1]["trial_id"]]
    assert all(r["interference"]["disturbed"] for r in records)  # the last one is kept as it was measured
    assert reruns.progress_detail(records).endswith("still disturbed")
    assert reruns.run_with_reruns(planned(2), fake, max_reruns=0)[0]["trial_id"].endswith("-r02")
    assert len(fake.ran) == 4


@pytest.mark.parametrize(
    ("trial", "status"),
    [(planned(), "failed"), (planned(), "unsupported"), (planned(0, warmup=True, trial_id="x-warmup"), "ok")],
)
def test_failed_unsupported_and_warm_up_trials_are_not_re_run(trial: PlannedTrial, status: str) -> None:
    assert not reruns.needs_rerun(record_of(trial, True, status), max_reruns=2)
    assert reruns.needs_rerun(record_of(planned(), True), max_reruns=2)
    assert not reruns.needs_rerun(record_of(planned(), False), max_reruns=2)
    assert not reruns.needs_rerun({"status": "ok", "trial_id": "x-r01"}, max_reruns=2)  # never judged


def test_due_reruns_come_from_the_records_on_disk() -> None:
    first, second = planned(1), planned(2)
    on_disk = [
        record_of(first, True),
        {**record_of(reruns.rerun_of(first, first.trial_id), True), reruns.RERUN_KEY: first.trial_id},
        record_of(second, False),
    ]
    (due,) = reruns.due_reruns(on_disk, {CONFIG.config_id: CONFIG}, max_reruns=2)
    original, last = due
    assert original == first and last["trial_id"] == f"{first.trial_id}-rerun1"
    assert reruns.due_reruns(on_disk, {CONFIG.config_id: CONFIG}, max_reruns=1) == []  # the cap is reached
    assert reruns.due_reruns(on_disk, {}, max_reruns=2) == []  # not a configuration of this campaign


# --------------------------------------------------------------------------- through the runner


def params(tmp_path: Path, **overrides: Any):
    values = dict(
        servers=["epoll"],
        connection_counts=[16],
        pipeline_depths=[1],
        duration_s=1,
        trials=3,
        warmup=False,
        server_cpus="0",
        load_cpus="1",
        raw_root=str(tmp_path),
        campaign="fake-reruns",
        seed=7,
        baseline_s=0,
        check_host=False,
        max_reruns=2,  # the smoke profile's tests re-run nothing
    )
    values.update(overrides)
    return resolve_parameters("smoke", **values)


@pytest.fixture
def fake_runner(monkeypatch: pytest.MonkeyPatch):
    """run_campaign without servers: no preflight, no provenance, and run_trial replaced by a fake whose records
    are disturbed as `disturbed(trial_id)` says; `calls` counts the runs of each trial id."""
    calls: Counter[str] = Counter()
    state: dict[str, Any] = {"disturbed": lambda trial_id: False, "interrupt_at": None}

    def run_trial(trial: PlannedTrial, params, provenance, placement) -> runner.TrialOutcome:
        if trial.trial_id == state["interrupt_at"]:
            raise KeyboardInterrupt
        calls[trial.trial_id] += 1
        record = record_of(trial, state["disturbed"](trial.trial_id))
        return runner.TrialOutcome(record=record, outputs={f"{trial.trial_id}.wrk.txt": b"fake\n"})

    monkeypatch.setattr(runner, "preflight", lambda params, plan: None)
    monkeypatch.setattr(runner, "collect_provenance", lambda build_dir: {})
    monkeypatch.setattr(runner, "run_trial", run_trial)
    return calls, state


def test_the_runner_re_runs_disturbed_trials_beside_the_plan(tmp_path: Path, fake_runner) -> None:
    calls, state = fake_runner
    state["disturbed"] = lambda trial_id: trial_id.endswith("-r02") or trial_id.endswith("-r02-rerun1")
    result = runner.run_campaign(params(tmp_path), stream=io.StringIO())
    campaign = load_campaign(tmp_path / "fake-reruns")
    ids = [r["trial_id"] for r in campaign.trials]
    base = "epoll-level-c16-lt1-d1s"
    assert ids == [f"{base}-r01", f"{base}-r02", f"{base}-r02-rerun1", f"{base}-r02-rerun2", f"{base}-r03"]
    assert campaign.meta["plan"] == [f"{base}-r01", f"{base}-r02", f"{base}-r03"]  # re-runs are not planned
    assert set(calls.values()) == {1}
    # The three planned trials ran (r02 standing for itself and its re-runs); the re-runs are counted apart.
    assert (result.ran, result.reruns, result.disturbed) == (3, 2, 2) and dict(result.statuses) == {"ok": 3}
    assert runner.campaign_overview(campaign)[0]["disturbed"] == 2


def test_an_interrupted_re_run_is_run_when_the_campaign_resumes_and_only_then(tmp_path: Path, fake_runner) -> None:
    calls, state = fake_runner
    base = "epoll-level-c16-lt1-d1s"
    state["disturbed"] = lambda trial_id: trial_id == f"{base}-r01"
    state["interrupt_at"] = f"{base}-r01-rerun1"
    with pytest.raises(runner.CampaignInterrupted, match="1 of 3 trials are finished"):
        runner.run_campaign(params(tmp_path), stream=io.StringIO())
    kept = (tmp_path / "fake-reruns" / f"{base}-r01.json").read_bytes()
    state["interrupt_at"] = None
    stream = io.StringIO()
    result = runner.run_campaign(params(tmp_path), stream=stream)  # prepare_campaign's plan check passes
    ids = sorted(p.stem for p in (tmp_path / "fake-reruns").glob("*.json") if p.name != "campaign.json")
    assert ids == [f"{base}-r01", f"{base}-r01-rerun1", f"{base}-r02", f"{base}-r03"]
    assert set(calls.values()) == {1} and (result.ran, result.reruns) == (2, 1)  # r01 was kept: its re-run, r02, r03
    assert f"{base}-r01: disturbed; re-run 1x as {base}-r01-rerun1: ok" in stream.getvalue()
    rerun = json.loads((tmp_path / "fake-reruns" / f"{base}-r01-rerun1.json").read_text())
    assert rerun[reruns.RERUN_KEY] == f"{base}-r01"
    assert (tmp_path / "fake-reruns" / f"{base}-r01.json").read_bytes() == kept  # never rewritten
    again = runner.run_campaign(params(tmp_path), stream=io.StringIO())
    assert again.ran == 0 and set(calls.values()) == {1}  # nothing is due twice
