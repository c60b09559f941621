"""Several client hosts' load outputs as one trial (placement ssh): counts add up, percentiles are never averaged."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from archbench.analyze.trials import default_parser, trial_row
from archbench.measure.adaptive import trial_throughput
from archbench.parse import parse_file
from archbench.parse.combine import combine_outputs

WRK = Path(__file__).parent / "fixtures" / "wrk"
ONE, TWO = WRK / "normal_latency.wrk.txt", WRK / "socket_errors.wrk.txt"


def test_counts_add_up_and_latency_is_left_out() -> None:
    a, b = parse_file(ONE), parse_file(TWO)
    combined = combine_outputs([a, b])
    assert combined["requests_per_sec"] == pytest.approx(a["requests_per_sec"] + b["requests_per_sec"])
    assert combined["total_requests"] == a["total_requests"] + b["total_requests"]
    assert combined["bytes_read"] == a["bytes_read"] + b["bytes_read"]
    for kind, count in b["socket_errors"].items():
        assert combined["socket_errors"][kind] == a["socket_errors"].get(kind, 0) + count
    assert combined["duration_s"] == max(a["duration_s"], b["duration_s"])
    assert combined["latency_s"] == {} and combined["hosts"] == 2
    assert combined["flags"] == sorted(set(a["flags"]) | set(b["flags"]))


def test_nothing_to_combine_is_an_error() -> None:
    with pytest.raises(ValueError, match="no load output"):
        combine_outputs([])


def ssh_record(campaign_dir: Path) -> dict:
    hosts = []
    for name, source in (("c1", ONE), ("c2", TWO)):
        output = f"t-r01.{name}.wrk.txt"
        shutil.copy(source, campaign_dir / output)
        hosts.append({"host": name, "output_file": output})
    config = {"architecture": "epoll", "connections": 10, "threads": None, "load_generator": "wrk"}
    load = {"tool": "wrk", "output_file": None, "hosts": hosts, "cpus": "c1:1,c2:1"}
    return {"trial_id": "t-r01", "config_id": "t", "status": "ok", "config": config, "load": load, "server": {}}


def test_an_ssh_trial_is_analysed_from_every_client_hosts_output(tmp_path: Path) -> None:
    record = ssh_record(tmp_path)
    expected = parse_file(ONE)["requests_per_sec"] + parse_file(TWO)["requests_per_sec"]
    row = trial_row(record, tmp_path, default_parser())
    assert row["parse_error"] is None
    assert row["requests_per_sec"] == pytest.approx(expected)
    assert math.isnan(row["latency_p99_s"])  # per-host percentiles are not averaged into the trial's
    rate, flags = trial_throughput(record, tmp_path)
    assert rate == pytest.approx(expected) and "socket_errors" in flags


def test_a_missing_host_output_is_a_visible_parse_error(tmp_path: Path) -> None:
    record = ssh_record(tmp_path)
    (tmp_path / "t-r01.c2.wrk.txt").unlink()
    row = trial_row(record, tmp_path, default_parser())
    assert row["parse_error"] and math.isnan(row["requests_per_sec"])
    assert trial_throughput(record, tmp_path) == (None, ["unparsed"])
