"""archbench.analysis on a small synthetic raw campaign built in a temporary directory.

The load-generator files are in wrk 4.1's exact report format (as `wrk --latency`
prints it), so the real parser reads them; the numbers are chosen so every
expected value can be computed by hand.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from archbench import analysis

CAMPAIGN = "synthetic"


def wrk_report(
    requests_per_sec: float,
    total_requests: int,
    connections: int,
    timeouts: int = 0,
    read_errors: int = 0,
    non_2xx: int = 0,
) -> str:
    lines = [
        "Running 1s test @ http://127.0.0.1:40000/",
        f"  1 threads and {connections} connections",
        "  Thread Stats   Avg      Stdev     Max   +/- Stdev",
        "    Latency   100.00us   20.00us   1.00ms   90.00%",
        "    Req/Sec    10.00k     1.00k   12.00k    70.00%",
        "  Latency Distribution",
        "     50%  100.00us",
        "     75%  110.00us",
        "     90%  120.00us",
        "     99%  200.00us",
        f"  {total_requests} requests in 1.00s, 450.00KB read",
    ]
    if timeouts or read_errors:
        lines.append(f"  Socket errors: connect 0, read {read_errors}, write 0, timeout {timeouts}")
    if non_2xx:
        lines.append(f"  Non-2xx or 3xx responses: {non_2xx}")
    lines += [f"Requests/sec: {requests_per_sec:10.2f}", "Transfer/sec:    450.00KB", ""]
    return "\n".join(lines)


def config(architecture: str, threads: int, connections: int, dispatch: str | None = None) -> dict:
    fields = {"architecture": architecture, "threads": threads, "connections": connections, "load_threads": 1,
              "duration_s": 1, "response": "test", "load_generator": "wrk", "pipeline": 1}
    if dispatch:
        fields.update(dispatch=dispatch, handoff="queue")
    return fields


def config_id(cfg: dict) -> str:
    parts = [cfg["architecture"]] + ([cfg["dispatch"], cfg["handoff"]] if "dispatch" in cfg else [])
    return "-".join(parts + [f"t{cfg['threads']}", f"c{cfg['connections']}", "lt1", "d1s"])


class CampaignWriter:
    def __init__(self, root: Path, name: str = CAMPAIGN) -> None:
        self.dir = root / name
        self.dir.mkdir(parents=True)
        self.name = name
        self.plan: list[str] = []
        self.order = 0

    def trial(
        self,
        cfg: dict,
        repetition: int | None,
        *,
        status: str = "ok",
        wrk: str | None = None,
        served: int | None = None,
        cpu: tuple[float, float] = (0.3, 0.2),
        load_cpu: tuple[float, float] = (0.4, 0.1),
        write_record: bool = True,
    ) -> str:
        cid = config_id(cfg)
        trial_id = f"{cid}-warmup" if repetition is None else f"{cid}-r{repetition:02d}"
        self.plan.append(trial_id)
        if not write_record:
            return trial_id
        if wrk is not None:
            (self.dir / f"{trial_id}.wrk.txt").write_text(wrk)
        record = {
            "schema": 1, "trial_id": trial_id, "campaign": self.name, "config_id": cid, "config": cfg,
            "repetition": 0 if repetition is None else repetition, "warmup": repetition is None,
            "order_index": self.order, "seed": 7, "status": status,
            "failure_reason": None if status == "ok" else "server did not print its ready line",
            "started_at": f"2026-11-21T10:00:{self.order:02d}+00:00",
            "finished_at": f"2026-11-21T10:00:{self.order:02d}.900000+00:00",
            "server": {"argv": ["taskset", "-c", "0", f"build/bin/{cfg['architecture']}"], "cpus": "0",
                       "exit_code": 0, "stats": None if served is None else {"connections_served": served},
                       "cpu_user_s": cpu[0], "cpu_sys_s": cpu[1]},
            "load": {"tool": "wrk", "argv": ["taskset", "-c", "1", "wrk", "http://127.0.0.1:40000/"], "cpus": "1",
                     "exit_code": 0, "wall_s": 1.0, "cpu_user_s": load_cpu[0], "cpu_sys_s": load_cpu[1],
                     "output_file": f"{trial_id}.wrk.txt"},
            "provenance": {"git_commit": "abc", "cpu_model": "Test CPU", "cpu_count": 2},
        }
        (self.dir / f"{trial_id}.json").write_text(json.dumps(record))
        self.order += 1
        return trial_id

    def finish(self) -> Path:
        meta = {"schema": 1, "campaign": self.name, "created_at": "2026-11-21T10:00:00+00:00", "profile": "test",
                "parameters": {"repetitions": 4}, "seed": 7, "plan": self.plan,
                "provenance": {"git_commit": "abc", "cpu_model": "Test CPU", "cpu_count": 2}}
        (self.dir / "campaign.json").write_text(json.dumps(meta))
        return self.dir


POOL = config("thread_pool", 2, 10, dispatch="request")
BLOCKING = config("blocking", 1, 10)


@pytest.fixture
def campaign_dir(tmp_path: Path) -> Path:
    writer = CampaignWriter(tmp_path / "raw")
    # Warm-up with an absurd rate: it must not leak into any statistic.
    writer.trial(POOL, None, wrk=wrk_report(999_999.0, 999_999, 10), served=10)
    writer.trial(POOL, 1, wrk=wrk_report(1000.0, 5000, 10), served=10)
    writer.trial(POOL, 2, wrk=wrk_report(1200.0, 5000, 10), served=10, cpu=(0.5, 0.5))
    writer.trial(POOL, 3, status="failed")  # no wrk output at all
    writer.trial(POOL, 4, wrk=wrk_report(800.0, 4000, 10, timeouts=3, read_errors=1), served=10)
    writer.trial(BLOCKING, None, wrk=wrk_report(500.0, 500, 10), served=1)
    writer.trial(BLOCKING, 1, wrk=wrk_report(400.0, 2000, 10, timeouts=6), served=1)
    writer.trial(BLOCKING, 2, wrk=wrk_report(600.0, 2500, 10, non_2xx=2), served=3)
    writer.trial(BLOCKING, 3, wrk="wrk: connection refused\n")  # ok status, unparseable output
    writer.trial(BLOCKING, 4, write_record=False)  # planned, never run (interrupted campaign)
    return writer.finish()


def tree_digest(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        digest.update(str(path.relative_to(directory)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def processed(campaign_dir: Path, tmp_path: Path) -> analysis.ProcessedCampaign:
    return analysis.process_campaign(campaign_dir, tmp_path / "processed")


def summary_row(processed: analysis.ProcessedCampaign, cfg: dict) -> pd.Series:
    rows = processed.summary[processed.summary["config_id"] == config_id(cfg)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_trials_csv_keeps_every_record(processed):
    trials = pd.read_csv(processed.trials_csv)
    assert len(trials) == 9  # every record: 2 warm-ups, 6 measured (one failed), unparseable included
    assert trials["warmup"].sum() == 2
    failed = trials[trials["status"] == "failed"]
    assert list(failed["trial_id"]) == [config_id(POOL) + "-r03"]
    assert failed["failure_reason"].iloc[0] == "server did not print its ready line"
    for column in ("campaign", "trial_id", "config_id", "architecture", "threads", "connections", "repetition",
                   "warmup", "status", "flags", "requests_per_sec", "total_requests", "latency_p99_s",
                   "socket_errors_timeout", "non_2xx", "server_cpu_s", "server_cpu_us_per_request", "load_cpu_s",
                   "load_cpu_utilisation", "server_cpus", "load_cpus"):
        assert column in trials.columns, column


def test_statistics_exclude_warmup_and_failed_but_count_them(processed):
    row = summary_row(processed, POOL)
    assert row["n"] == 3  # r01, r02, r04; not the warm-up, not the failed r03
    assert row["n_failed"] == 1
    assert row["n_warmup"] == 1
    assert row["mean"] == pytest.approx(1000.0)
    assert row["sd"] == pytest.approx(200.0)
    assert row["median"] == 1000.0 and row["min"] == 800.0 and row["max"] == 1200.0
    # 1000 ± t(0.975, 2) · 200 / √3 = 1000 ± 4.30265273 · 115.4700538
    assert row["ci95_low"] == pytest.approx(1000 - 496.8275, abs=1e-3)
    assert row["ci95_high"] == pytest.approx(1000 + 496.8275, abs=1e-3)


def test_flagged_trials_are_averaged_but_counted(processed):
    row = summary_row(processed, POOL)
    assert row["n_flagged"] == 1
    assert row["flags"] == "socket_errors"
    assert row["timeouts_mean"] == pytest.approx(1.0)  # (0 + 0 + 3) / 3
    trials = processed.trials.set_index("trial_id")
    assert bool(trials.loc[config_id(POOL) + "-r04", "flagged"])
    assert not bool(trials.loc[config_id(POOL) + "-r01", "flagged"])


def test_server_cpu_per_request(processed):
    trials = processed.trials.set_index("trial_id")
    # (0.3 + 0.2) s / 5000 requests = 100 µs; (0.5 + 0.5) s / 5000 = 200 µs; 0.5 s / 4000 = 125 µs.
    assert trials.loc[config_id(POOL) + "-r01", "server_cpu_us_per_request"] == pytest.approx(100.0)
    assert trials.loc[config_id(POOL) + "-r02", "server_cpu_us_per_request"] == pytest.approx(200.0)
    assert trials.loc[config_id(POOL) + "-r04", "server_cpu_us_per_request"] == pytest.approx(125.0)
    assert summary_row(processed, POOL)["server_cpu_us_per_request"] == pytest.approx((100 + 200 + 125) / 3)
    # wrk: 0.5 s of CPU over 1.0 s of wall time.
    assert trials.loc[config_id(POOL) + "-r01", "load_cpu_utilisation"] == pytest.approx(0.5)


def test_starved_connections_and_timeouts_of_a_blocking_server(processed):
    row = summary_row(processed, BLOCKING)
    trials = processed.trials.set_index("trial_id")
    assert trials.loc[config_id(BLOCKING) + "-r01", "starved_connections"] == 9  # 10 configured, 1 served
    assert trials.loc[config_id(BLOCKING) + "-r02", "starved_connections"] == 7
    # The ok trial with unparseable output is flagged and has no throughput; it counts, it is not averaged in.
    assert row["n"] == 2
    assert row["n_flagged"] == 3
    assert row["mean"] == pytest.approx(500.0)
    assert row["starved_connections_mean"] == pytest.approx((9 + 7) / 2)  # r03 has no server counters
    assert row["starved_connections_max"] == 9
    assert row["timeouts_mean"] == pytest.approx(3.0)  # (6 + 0) / 2, the unparsed trial has no count
    assert row["non_2xx_mean"] == pytest.approx(1.0)
    assert set(row["flags"].split(";")) == {"socket_errors", "non_2xx", analysis.FLAG_UNPARSED}


def test_unparseable_output_is_a_visible_row(processed):
    trial = processed.trials.set_index("trial_id").loc[config_id(BLOCKING) + "-r03"]
    assert trial["status"] == "ok"
    assert trial["flags"] == analysis.FLAG_UNPARSED
    assert isinstance(trial["parse_error"], str) and trial["parse_error"]
    assert math.isnan(trial["requests_per_sec"])


def test_planned_but_missing_trials_are_counted(processed):
    assert summary_row(processed, BLOCKING)["n_planned"] == 4
    assert summary_row(processed, BLOCKING)["n_missing"] == 1
    assert summary_row(processed, POOL)["n_missing"] == 0


def test_raw_campaign_is_never_written(campaign_dir, tmp_path):
    before = tree_digest(campaign_dir)
    analysis.process_campaign(campaign_dir, tmp_path / "processed")
    assert tree_digest(campaign_dir) == before
    with pytest.raises(ValueError, match="immutable"):
        analysis.process_campaign(campaign_dir, campaign_dir / "processed")


def test_summary_csv_round_trip(processed):
    summary = pd.read_csv(processed.summary_csv)
    expected = ["n", "n_flagged", "n_failed", "mean", "sd", "median", "min", "max", "ci95_low", "ci95_high",
                "server_cpu_us_per_request", "timeouts_mean", "starved_connections_mean"]
    assert all(column in summary.columns for column in expected)
    # Sorted: blocking before thread_pool.
    assert list(summary["architecture"]) == ["blocking", "thread_pool"]


def test_series_group_the_swept_axis(tmp_path):
    writer = CampaignWriter(tmp_path / "raw", "series")
    for threads in (1, 2, 4):
        cfg = config("thread_pool", threads, 50, dispatch="request")
        for repetition in (1, 2):
            writer.trial(cfg, repetition, wrk=wrk_report(1000.0 * threads + repetition, 1000, 50), served=50)
    for connections in (1, 10):
        writer.trial(config("blocking", 1, connections), 1, wrk=wrk_report(100.0, 100, connections), served=1)
    processed = analysis.process_campaign(writer.finish(), tmp_path / "processed")
    pool = analysis.series_of(processed.summary, "threads")
    assert [s.label for s in pool] == ["thread pool, request dispatch, FIFO queue (50 connections)"]
    assert list(pool[0].rows["threads"]) == [1, 2, 4]
    by_connections = analysis.series_of(processed.summary, "connections")
    assert [s.label for s in by_connections] == ["blocking"]
    assert list(by_connections[0].rows["connections"]) == [1, 10]


def test_extra_config_fields_reach_the_summary(tmp_path):
    writer = CampaignWriter(tmp_path / "raw", "extras")
    capped = {**config("thread_per_conn", 1, 10), "max_threads": 5}
    writer.trial(capped, 1, wrk=wrk_report(100.0, 100, 10), served=5)
    processed = analysis.process_campaign(writer.finish(), tmp_path / "processed")
    assert processed.summary.loc[0, "max_threads"] == 5
    assert processed.summary.loc[0, "starved_connections_mean"] == 5
