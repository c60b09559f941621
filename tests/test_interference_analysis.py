"""Disturbed trials downstream: trials.csv's columns, left out of summary.csv and the measured ok trials, by_round's
choice per round, and the counts (archbench.analyze.noise.interference_counts) on synthetic and shipped campaigns."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.analyze import outliers
from archbench.analyze.noise import InterferenceCounts, interference_counts
from archbench.analyze.paired import by_round
from archbench.analyze.summary import summary_frame
from archbench.analyze.trials import trials_frame
from archbench.data import storage

RAW = Path(__file__).resolve().parent.parent / "data" / "raw"
EPOLL = synthetic.config("epoll", None, 100, trigger="level")
REASON = "server CPUs: 45 % of the expected ticks taken (foreign 45 %)"


def verdict(disturbed: bool) -> dict:
    account = {
        "cpus": 1,
        "expected_ticks": 100.0,
        "ticks": 100.0,
        "busy_ticks": 99.0,
        "interrupt_ticks": 5.0,
        "steal_ticks": 0.0,
        "own_ticks": 49.0 if disturbed else 94.0,
        "foreign_ticks": 45.0 if disturbed else 0.0,
        "missing_ticks": 0.0,
        "saturated": True,
        "taken_share": 0.45 if disturbed else 0.0,
    }
    return {
        "interval_s": 1.0,
        "user_hz": 100,
        "max_share": 0.1,
        "server_cpus": account,
        "load_cpus": {**account, "foreign_ticks": 0.0, "taken_share": 0.0},
        "disturbed": disturbed,
        "reasons": [REASON] if disturbed else [],
    }


def write(writer: synthetic.CampaignWriter, repetition: int, rate: float, disturbed: bool, rerun: int = 0) -> str:
    """A trial of EPOLL in round `repetition` at `rate` req/s, judged by the runner; `rerun` > 0 makes it that
    re-run of the round's trial (its id and `reruns`, as archbench.measure.reruns writes them)."""
    original = f"{synthetic.config_id(EPOLL)}-r{repetition:02d}"
    kept = {name: writer.dir / name for name in (f"{original}.json", f"{original}.wrk.txt")}
    aside = {name: path.rename(path.with_name(f".{name}")) for name, path in kept.items() if rerun and path.exists()}
    trial_id = writer.trial(EPOLL, repetition, wrk=synthetic.wrk_report(rate, int(rate), 100))
    record = json.loads((writer.dir / f"{trial_id}.json").read_text())
    record["interference"] = verdict(disturbed)
    if rerun:
        writer.plan.pop()  # re-runs are not planned
        trial_id = f"{original}-rerun{rerun}"
        record.update(trial_id=trial_id, reruns=original if rerun == 1 else f"{original}-rerun{rerun - 1}")
        record["load"]["output_file"] = f"{trial_id}.wrk.txt"
        kept[f"{original}.wrk.txt"].rename(writer.dir / f"{trial_id}.wrk.txt")
        kept[f"{original}.json"].unlink()
        for name, path in aside.items():
            path.rename(kept[name])
    (writer.dir / f"{trial_id}.json").write_text(json.dumps(record))
    return trial_id


@pytest.fixture
def campaign(tmp_path: Path) -> storage.Campaign:
    """Round 1 disturbed (9,000 req/s) and re-run clean (20,000); round 2 clean (21,000); round 3 disturbed and its
    two re-runs too (the last, 8,000, stays disturbed)."""
    writer = synthetic.CampaignWriter(tmp_path, "interfered")
    write(writer, 1, 9_000.0, True)
    write(writer, 1, 20_000.0, False, rerun=1)
    write(writer, 2, 21_000.0, False)
    write(writer, 3, 7_000.0, True)
    write(writer, 3, 7_500.0, True, rerun=1)
    write(writer, 3, 8_000.0, True, rerun=2)
    return storage.load_campaign(writer.finish())


def test_trials_csv_says_which_trials_were_disturbed(campaign: storage.Campaign) -> None:
    frame = trials_frame(campaign).set_index("trial_id")
    base = synthetic.config_id(EPOLL)
    assert list(frame.index) == [
        f"{base}-r01",
        f"{base}-r01-rerun1",
        f"{base}-r02",
        f"{base}-r03",
        f"{base}-r03-rerun1",
        f"{base}-r03-rerun2",
    ]
    assert frame["disturbed"].tolist() == [True, False, False, True, True, True]
    assert frame.loc[f"{base}-r01", "disturbed_reasons"] == REASON
    assert frame.loc[f"{base}-r02", "disturbed_reasons"] == ""
    assert set(frame["interference_source"]) == {"recorded"}
    assert frame.loc[f"{base}-r01-rerun1", "reruns"] == f"{base}-r01"
    assert frame.loc[f"{base}-r03-rerun2", "reruns"] == f"{base}-r03-rerun1"
    assert frame.loc[f"{base}-r01", "server_cpus_taken_share"] == 0.45
    assert frame["repetition"].tolist() == [1, 1, 2, 3, 3, 3]  # a re-run stays in its round


def test_statistics_leave_disturbed_trials_out_and_count_them(campaign: storage.Campaign) -> None:
    trials = trials_frame(campaign)
    used = outliers.measured_ok_undisturbed(trials)
    assert sorted(used["requests_per_sec"]) == [20_000.0, 21_000.0]
    (row,) = summary_frame(trials, campaign.meta["plan"]).to_dict("records")
    assert (row["n"], row["n_disturbed"], row["mean"]) == (2, 4, 20_500.0)
    assert row["n_measured"] == 6 and row["n_failed"] == 0


def test_by_round_takes_the_undisturbed_trial_of_each_round(campaign: storage.Campaign) -> None:
    trials = trials_frame(campaign)
    rounds = by_round(trials, "requests_per_sec")
    assert rounds.to_dict() == {1: 20_000.0, 2: 21_000.0}  # round 3 kept no undisturbed trial: no value
    assert math.isnan(by_round(trials, "requests_per_sec").reindex([1, 2, 3]).loc[3])
    # A round measured twice, neither disturbed (e.g. two campaigns' rounds together), still keeps its mean.
    twice = pd.DataFrame({"repetition": [1, 1, 2], "requests_per_sec": [10.0, 20.0, 30.0], "disturbed": [False] * 3})
    assert by_round(twice, "requests_per_sec").to_dict() == {1: 15.0, 2: 30.0}
    # Frames from before the column: every trial counts.
    assert by_round(twice.drop(columns="disturbed"), "requests_per_sec").to_dict() == {1: 15.0, 2: 30.0}
    # Read back from trials.csv, the column may be text.
    text = twice.assign(disturbed=["True", "False", "False"])
    assert by_round(text, "requests_per_sec").to_dict() == {1: 20.0, 2: 30.0}


def test_counts(campaign: storage.Campaign) -> None:
    counts = interference_counts(trials_frame(campaign))
    assert counts == InterferenceCounts(trials=6, judged=6, recorded=6, disturbed=4, reruns=3, still_disturbed=1)
    assert interference_counts(pd.DataFrame()) == InterferenceCounts(0, 0, 0, 0, 0, 0)


def test_older_records_are_judged_after_the_fact_and_a_campaign_without_shares_is_not(tmp_path: Path) -> None:
    writer = synthetic.CampaignWriter(tmp_path, "older")
    writer.trial(EPOLL, 1, wrk=synthetic.wrk_report(20_000.0, 20_000, 100))
    frame = trials_frame(storage.load_campaign(writer.finish()))
    assert frame["interference_source"].tolist() == [""] and frame["disturbed"].tolist() == [False]
    assert interference_counts(frame) == InterferenceCounts(1, 0, 0, 0, 0, 0)


def _shipped(name: str) -> storage.Campaign:
    if not (RAW / name / "campaign.json").is_file():
        pytest.skip(f"{name} is not in this checkout")
    return storage.load_campaign(RAW / name)


def test_the_shipped_campaigns_judged_after_the_fact() -> None:
    """The calibration's offline check: 135 of the 775 measured trials of the sized workloads campaign were
    disturbed (another process on the load or the server CPU, in its last rounds above all), none of the earlier
    workloads campaign's 515, and the main campaign's records predate cpu_shares, so nothing can be told."""
    sized = interference_counts(trials_frame(_shipped("reference-workloads-sized")))
    assert (sized.trials, sized.judged, sized.recorded, sized.disturbed, sized.reruns) == (775, 775, 0, 135, 0)
    assert sized.still_disturbed == sized.disturbed  # nothing was re-run
    assert interference_counts(trials_frame(_shipped("reference-workloads"))).disturbed == 0
    main = interference_counts(trials_frame(_shipped("reference")))
    assert (main.judged, main.disturbed) == (0, 0) and main.trials > 0
