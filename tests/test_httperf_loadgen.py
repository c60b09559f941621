"""httperf as a load generator: its parameters, configurations, command line, and a real campaign under it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from archbench.cli.main import main
from archbench.config.loadgen import Httperf, HttperfWorkload, load_generator
from archbench.config.parameter_model import StoredParameters
from archbench.config.params import ParameterError, parameters_from_dict, resolve_parameters
from archbench.config.plan import expand_grid, plan_campaign
from archbench.config.plan_description import describe_configurations
from archbench.data.records import CampaignMeta, TrialConfigRecord, TrialRecord
from archbench.measure.runner import PreflightError, preflight, run_campaign
from archbench.parse import parse_file

SOURCE_002 = {"load_generator": "httperf", "connection_counts": [1000], "httperf_calls": 100, "httperf_rate": 100000}


def httperf_params(**overrides: object):
    values = {"servers": ["epoll"], "check_host": False, **SOURCE_002, **overrides}
    return resolve_parameters("smoke", **values)


def test_source_002_command_line() -> None:
    config = expand_grid(httperf_params())[0].as_dict()
    argv = load_generator("httperf").command(config, "http://127.0.0.1:8000/", 2)
    assert argv == [
        "httperf",
        "--hog",
        "--timeout",
        "2",
        "--server",
        "127.0.0.1",
        "--port",
        "8000",
        "--uri",
        "/",
        "--num-conns",
        "1000",
        "--num-calls",
        "100",
        "--rate",
        "100000",
    ]


def test_rate_zero_and_no_hog_leave_the_options_out() -> None:
    config = {"connections": 10, "httperf_calls": 3, "httperf_rate": 0, "httperf_hog": False}
    argv = Httperf().command(config, "http://10.213.7.1:4242/", 5)
    assert "--rate" not in argv and "--hog" not in argv
    assert argv[argv.index("--server") + 1] == "10.213.7.1" and argv[argv.index("--port") + 1] == "4242"
    assert argv[argv.index("--num-calls") + 1] == "3"


def test_configuration_carries_the_workload_and_says_it_in_its_id() -> None:
    (config,) = expand_grid(httperf_params())
    assert config.config_id == "epoll-level-c1000-lt1-d1s-httperf-k100-cr100000"
    record = config.as_dict()
    assert (record["httperf_calls"], record["httperf_rate"], record["httperf_hog"]) == (100, 100000, True)
    TrialConfigRecord.model_validate(record)
    (plain,) = expand_grid(httperf_params(httperf_rate=None, httperf_calls=None, httperf_hog=False))
    assert plain.config_id == "epoll-level-c1000-lt1-d1s-httperf-k1-nohog"
    assert HttperfWorkload(calls=5, rate=7).id_parts() == ["k5", "cr7"]


def test_other_generators_have_no_httperf_fields() -> None:
    (config,) = expand_grid(resolve_parameters("smoke", servers=["epoll"], pipeline_depths=[1], check_host=False))
    assert not any(key.startswith("httperf") for key in config.as_dict())
    assert "httperf" not in config.config_id


def test_load_threads_auto_gives_httperf_one() -> None:
    params = httperf_params(load_cpus="1", server_cpus="0")
    assert params.load_threads_auto
    assert {config.load_threads for config in expand_grid(params)} == {1}


@pytest.mark.parametrize(
    ("overrides", "parameter"),
    [
        ({"load_generator": "wrk", "httperf_calls": 100, "httperf_rate": None}, "httperf_calls"),
        ({"load_generator": "wrk", "httperf_calls": None, "httperf_rate": 5}, "httperf_rate"),
        ({"load_generator": "wrk", "httperf_calls": None, "httperf_rate": None, "httperf_hog": False}, "httperf_hog"),
        ({"httperf_calls": 0}, "httperf_calls"),
        ({"httperf_rate": -1}, "httperf_rate"),
        ({"httperf_hog": "sometimes"}, "httperf_hog"),
        ({"load_threads": [2], "connection_counts": [1000]}, "load_threads"),
        ({"pipeline_depths": [1, 16]}, "pipeline_depths"),
        ({"baseline_s": -2}, "baseline_s"),
    ],
)
def test_bad_values_fail_naming_the_parameter(overrides: dict, parameter: str) -> None:
    with pytest.raises(ParameterError) as caught:
        httperf_params(**overrides)
    assert str(caught.value).startswith(parameter), caught.value


def test_stored_parameters_round_trip() -> None:
    params = httperf_params(seed=3, campaign="h")
    stored = params.to_dict()
    StoredParameters.model_validate(stored)
    assert parameters_from_dict(stored) == params
    assert stored["httperf_calls"] == 100 and stored["baseline_s"] == 2


def test_dry_run_lists_the_httperf_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--profile", "smoke", "--servers", "epoll", "--load-generator", "httperf",
                 "--connection-counts", "100", "--httperf-calls", "10", "--httperf-rate", "500", "--dry-run"]) == 0  # fmt: skip
    assert "epoll-level-c100-lt1-d1s-httperf-k10-cr500" in capsys.readouterr().out


def test_a_campaign_under_httperf(real_build_dir: Path, load_tools: None, tmp_path: Path) -> None:
    if shutil.which("httperf") is None:
        pytest.skip("httperf not installed (apt-get install httperf)")
    params = resolve_parameters(
        "smoke",
        servers=["epoll"],
        load_generator="httperf",
        connection_counts=[50],
        httperf_calls=20,
        httperf_rate=1000,
        trials=1,
        warmup=False,
        duration_s=5,
        baseline_s=1,
        raw_root=str(tmp_path),
        campaign="httperf-run",
        build_dir=str(real_build_dir),
        server_cpus="0",
        load_cpus="1",
    )
    result = run_campaign(params)
    assert result.statuses == {"ok": 1}
    campaign = tmp_path / "httperf-run"
    (record_path,) = campaign.glob("*-r01.json")
    record = json.loads(record_path.read_text())
    TrialRecord.model_validate(record)
    assert record["load"]["argv"][:4] == ["taskset", "-c", "1", "httperf"]
    assert record["load"]["flags"] == []
    parsed = parse_file(campaign / record["load"]["output_file"])
    assert parsed["total_requests"] == 50 * 20 and parsed["connections"] == 50
    meta = json.loads((campaign / "campaign.json").read_text())
    CampaignMeta.model_validate(meta)
    baseline = meta["provenance"]["bandwidth_baseline"]
    assert baseline["status"] in ("ok", "missing")
    if baseline["status"] == "ok":
        assert baseline["received_bits_per_s"] > 0 and baseline["duration_s"] == 1


def test_an_entry_of_its_own_runs_httperf_beside_wrk_entries() -> None:
    entries = [
        {"architecture": "epoll", "source": "002", "load_generator": "httperf", "connections": [1000]},
        {"architecture": "epoll", "source": "002", "connections": [1000]},
    ]
    params = resolve_parameters(
        "smoke", servers=entries, httperf_calls=100, httperf_rate=100000, pipeline_depths=[1], check_host=False
    )
    lines = describe_configurations(params, expand_grid(params))
    assert any(
        "| httperf --hog --timeout 2 --server 127.0.0.1 --port PORT --uri / --num-conns 1000" in line for line in lines
    )
    assert any("| wrk -t1 -c1000" in line for line in lines)
    with pytest.raises(ParameterError, match="^pipeline_depths"):
        resolve_parameters("smoke", servers=entries, pipeline_depths=[1, 16], check_host=False)


def test_ssh_placement_refuses_an_entry_of_its_own_under_httperf(fake_build_dir) -> None:
    build = fake_build_dir("epoll", "#!/bin/sh\nexit 0\n")
    entries = [{"architecture": "epoll", "load_generator": "httperf", "connections": [100]}]
    params = resolve_parameters(
        "smoke",
        servers=entries,
        placement="ssh",
        hosts=str(Path(__file__).resolve().parent / "fixtures" / "hosts" / "three-hosts.toml"),
        build_dir=str(build),
        pipeline_depths=[1],
        seed=1,
        check_host=False,
    )
    with pytest.raises(PreflightError, match="placement ssh runs wrk on the client hosts, not httperf"):
        preflight(params, plan_campaign(params))
