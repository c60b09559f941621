"""The iperf3 -J parser and the campaign's bandwidth baseline (archbench.measure.baseline)."""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from archbench.config.params import resolve_parameters
from archbench.measure import baseline, runner
from archbench.measure.baseline import commands, measure_baseline
from archbench.measure.placement import Loopback
from archbench.parse import LoadOutputError, parse_output
from archbench.parse.iperf3 import parse

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "iperf3"


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.iperf3.txt").read_text()


def params(**overrides: object):
    values = {"servers": ["epoll"], "server_cpus": "0", "load_cpus": "1", "check_host": False, **overrides}
    return resolve_parameters("smoke", **values)


def test_loopback_run() -> None:
    record = parse(fixture("loopback"))
    assert record["tool"] == "iperf3" and record["version"] == "iperf 3.12"
    assert record["sent_bits_per_s"] == 8231776131.963643
    assert record["received_bits_per_s"] == 8217858294.115914
    assert (record["sent_bytes"], record["received_bytes"]) == (2059010048, 2057699328)
    assert record["retransmits"] == 39 and record["duration_s"] == 2.001036
    assert record["configured_duration_s"] == 2.0 and record["protocol"] == "TCP" and record["streams"] == 1
    assert record["host"] == "127.0.0.1" and record["intervals"] == 2
    assert record["error"] is None and record["flags"] == []
    assert parse_output("iperf3", fixture("loopback")) == record


def test_a_failed_test_is_output_with_its_error() -> None:
    record = parse(fixture("refused"))
    assert record["error"] == "unable to connect to server: Connection refused"
    assert record["sent_bits_per_s"] is None and record["received_bits_per_s"] is None
    assert record["flags"] == ["error"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty output"),
        ("Connecting to host 127.0.0.1, port 5201\n", "was iperf3 run with -J"),
        ('{"start": {}}', "no intervals, end"),
        ("[1, 2]", "is not an object"),
        ('{"start": {}, "intervals": [], "end": {"sum_sent": {"bits_per_second": "fast"}}}', "is not a number"),
    ],
)
def test_what_is_not_iperf3_json_fails(text: str, message: str) -> None:
    with pytest.raises(LoadOutputError, match=message):
        parse(text)


def test_commands_are_pinned_and_placed() -> None:
    server, client = commands(params(), Loopback(), 5201, 2)
    assert server == ["taskset", "-c", "0", "iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", "5201", "--forceflush"]
    assert client == ["taskset", "-c", "1", "iperf3", "-c", "127.0.0.1", "-p", "5201", "-J", "-t", "2"]


def test_a_missing_iperf3_is_recorded_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(baseline.shutil, "which", lambda name: None)
    record = measure_baseline(params(), Loopback())
    assert record["status"] == "missing" and "iperf3 is not on PATH" in record["reason"]
    assert record["sent_bits_per_s"] is None


def test_baseline_zero_is_not_measured() -> None:
    record = measure_baseline(params(baseline_s=0), Loopback())
    assert record["status"] == "not_measured" and record["server_argv"] is None


def test_ssh_placement_is_not_measured() -> None:
    @dataclass(frozen=True)
    class Elsewhere:
        kind: str = "ssh"

    record = measure_baseline(params(), Elsewhere())  # type: ignore[arg-type]
    assert record["status"] == "not_measured" and "placement ssh" in record["reason"]


def test_a_server_that_cannot_start_is_a_failed_baseline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "iperf3"
    fake.write_text("#!/bin/sh\necho 'iperf3: error - unable to start listener' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    record = measure_baseline(params(), Loopback(), seconds=1)
    assert record["status"] == "failed"
    assert "not listening" in record["reason"] and "unable to start listener" in record["reason"]


@pytest.mark.integration
def test_a_real_loopback_baseline() -> None:
    if shutil.which("iperf3") is None or shutil.which("taskset") is None:
        pytest.skip("iperf3 or taskset not installed (apt-get install iperf3 util-linux)")
    record = measure_baseline(params(), Loopback(), seconds=1)
    assert record["status"] == "ok", record["reason"]
    assert record["received_bits_per_s"] > 1e8 and record["sent_bytes"] > 0
    assert record["version"].startswith("iperf 3") and record["placement"] == "loopback"


def test_the_runner_measures_once_and_a_resumed_run_carries_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[str] = []
    seen: list[dict] = []

    def fake_baseline(params, placement) -> dict:
        measured.append(placement.kind)
        return {"status": "ok", "received_bits_per_s": 1e9}

    def fake_trial(planned, params, provenance, placement=None) -> runner.TrialOutcome:
        seen.append(provenance)
        if len(seen) == 2:
            raise KeyboardInterrupt
        record = {"trial_id": planned.trial_id, "status": "ok", "config_id": planned.config_id}
        return runner.TrialOutcome(record=record, outputs={f"{planned.trial_id}.server.txt": b""})

    monkeypatch.setattr(runner, "preflight", lambda params, plan: None)
    monkeypatch.setattr(runner, "collect_provenance", lambda build_dir: {"hostname": "test"})
    monkeypatch.setattr(runner, "measure_baseline", fake_baseline)
    monkeypatch.setattr(runner, "run_trial", fake_trial)
    campaign = params(campaign="resumed", raw_root=str(tmp_path), seed=5, servers=["blocking"])
    with pytest.raises(runner.CampaignInterrupted):
        runner.run_campaign(campaign, stream=io.StringIO())
    runner.run_campaign(campaign, stream=io.StringIO())
    assert measured == ["loopback"]  # not again on resume
    meta = json.loads((tmp_path / "resumed" / "campaign.json").read_text())
    assert meta["provenance"]["bandwidth_baseline"] == {"status": "ok", "received_bits_per_s": 1e9}
    assert all(p["bandwidth_baseline"] == meta["provenance"]["bandwidth_baseline"] for p in seen)
    assert len(seen) > 2
