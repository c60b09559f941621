"""Open-loop latency trials: offered rates from saturation, oha through the runner."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import WRK_FIXTURES

from archbench.config.loadgen import Oha, Wrk2, load_generator
from archbench.config.params import ParameterError, resolve_parameters
from archbench.config.plan import expand_grid, saturation_key
from archbench.data.storage import write_new_json
from archbench.measure.latency import highest_saturation, latency_overview, saturation_rates
from archbench.measure.runner import PreflightError, preflight, run_campaign
from archbench.parse import parse_output


def resolve(**overrides):
    return resolve_parameters(overrides.pop("profile", "latency"), check_host=False, **overrides)


SATURATION = {
    "blocking-c100": 1000.0,
    "thread_per_conn-max1000-c100": 40000.0,
    "epoll-level-c100": 60000.0,
    "reactor-edge-t2-c100": 50000.0,
}


def test_fractions_of_each_configurations_own_saturation() -> None:
    params = resolve(
        load_generator="oha",
        rate_fractions=[0.1, 1.1],
        saturation_rates=SATURATION,
        saturation_source="campaign closed: median",
    )
    grid = {c.config_id: c.as_dict() for c in expand_grid(params)}
    assert list(grid)[:2] == ["blocking-c100-lt1-d5s-oha-w20-rate100", "blocking-c100-lt1-d5s-oha-w20-rate1100"]
    config = grid["epoll-level-c100-lt1-d5s-oha-w20-rate6000"]
    assert {
        k: config[k]
        for k in (
            "offered_rate",
            "rate_fraction",
            "saturation_rate",
            "saturation_of",
            "saturation_source",
            "load_generator",
            "connections",
        )
    } == {
        "offered_rate": 6000,
        "rate_fraction": 0.1,
        "saturation_rate": 60000.0,
        "saturation_of": "epoll-level-c100",
        "saturation_source": "campaign closed: median",
        "load_generator": "oha",
        "connections": 100,
    }
    assert saturation_key(config) == "epoll-level-c100"
    assert len(grid) == 8


def test_source_001_one_fixed_rate_for_every_server() -> None:
    reference = highest_saturation(SATURATION, list(SATURATION))
    assert reference == "epoll-level-c100"
    params = resolve(load_generator="oha", rate_fractions=[0.9], saturation_rates=SATURATION, rate_reference=reference)
    configs = [c.as_dict() for c in expand_grid(params)]
    assert {c["offered_rate"] for c in configs} == {54000}
    assert {(c["saturation_of"], c["rate_fraction"]) for c in configs} == {("epoll-level-c100", 0.9)}


def test_absolute_rates_record_the_fraction_where_the_saturation_is_known() -> None:
    params = resolve(
        servers=["epoll", "poll"],
        load_generator="wrk2",
        offered_rates=[3000],
        saturation_rates={"epoll-level-c100": 60000.0},
    )
    configs = {c.config_id: c.as_dict() for c in expand_grid(params)}
    assert configs["epoll-level-c100-lt1-d5s-wrk2-w20-rate3000"]["rate_fraction"] == 0.05
    assert configs["poll-c100-lt1-d5s-wrk2-w20-rate3000"]["rate_fraction"] is None


@pytest.mark.parametrize(
    ("overrides", "parameter", "message"),
    [
        ({"load_generator": "oha"}, "rate_fractions", "oha offers a fixed rate"),
        ({"offered_rates": [100]}, "offered_rates", "wrk is a closed loop; offered rates need load_generator"),
        (
            {"load_generator": "oha", "offered_rates": [100], "pipeline_depths": [16]},
            "pipeline_depths",
            "oha sends one request at a time",
        ),
        ({"load_generator": "oha", "rate_fractions": [0]}, "rate_fractions", "0 is not a positive number"),
        (
            {"load_generator": "oha", "rate_fractions": [0.5], "saturation_rates": SATURATION, "rate_reference": "x"},
            "rate_reference",
            "'x' is not a key of saturation_rates",
        ),
        (
            {"load_generator": "oha", "rate_fractions": [0.5], "saturation_rates": {"epoll-level-c100": -1}},
            "saturation_rates['epoll-level-c100']",
            "-1 is not a positive number",
        ),
    ],
)
def test_bad_open_loop_parameters_are_named(overrides, parameter: str, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        resolve(**overrides)
    assert caught.value.parameter == parameter and message in str(caught.value)


def test_a_configuration_without_a_saturation_fails_before_running() -> None:
    params = resolve(load_generator="oha", rate_fractions=[0.5], saturation_rates={"epoll-level-c100": 1.0})
    with pytest.raises(ParameterError, match="saturation_rates: no saturation throughput for blocking-c100"):
        expand_grid(params)


def test_saturation_rates_are_medians_of_ok_unflagged_closed_loop_trials(tmp_path: Path) -> None:
    campaign = tmp_path / "closed"
    campaign.mkdir()
    write_new_json(campaign / "campaign.json", {"schema": 1, "campaign": "closed", "plan": []})
    config = {
        "architecture": "epoll",
        "threads": None,
        "trigger": "level",
        "connections": 100,
        "pipeline": 1,
        "load_generator": "wrk",
    }
    fixtures = {"r01": "normal_latency", "r02": "units_k_M_ms_us", "r03": "socket_errors", "warmup": "normal_latency"}
    for index, (suffix, fixture) in enumerate(fixtures.items()):
        trial_id = f"epoll-level-c100-lt1-d5s-{suffix}"
        (campaign / f"{trial_id}.wrk.txt").write_bytes((WRK_FIXTURES / f"{fixture}.wrk.txt").read_bytes())
        write_new_json(
            campaign / f"{trial_id}.json",
            {
                "trial_id": trial_id,
                "config_id": "epoll-level-c100-lt1-d5s",
                "config": config,
                "status": "ok",
                "warmup": suffix == "warmup",
                "repetition": index,
                "order_index": index,
                "load": {"tool": "wrk", "output_file": f"{trial_id}.wrk.txt"},
            },
        )
    rates = [
        parse_output("wrk", (WRK_FIXTURES / f"{name}.wrk.txt").read_text())["requests_per_sec"]
        for name in ("normal_latency", "units_k_M_ms_us")
    ]
    # socket_errors is flagged, the warm-up excluded: the median of the two others.
    assert saturation_rates(campaign) == {"epoll-level-c100": pytest.approx(sum(rates) / 2)}


def test_preflight_names_a_missing_open_loop_generator(
    monkeypatch: pytest.MonkeyPatch, real_build_dir: Path, tmp_path: Path
) -> None:
    from archbench.config.plan import plan_campaign

    monkeypatch.setenv("WRK2", str(tmp_path / "no-such-wrk2"))
    params = resolve(
        servers=["epoll"], load_generator="wrk2", offered_rates=[100], build_dir=str(real_build_dir), seed=1
    )
    with pytest.raises(PreflightError, match=r"load generator missing: WRK2=.*no-such-wrk2 is not an executable"):
        preflight(params, plan_campaign(params))


def test_open_loop_commands() -> None:
    params = resolve(servers=["epoll"], load_generator="oha", offered_rates=[250])
    config = expand_grid(params)[0].as_dict()
    argv = load_generator("oha").command(config, "http://127.0.0.1:9/", 2)
    assert argv[1:] == [
        "-z",
        "5s",
        "-c",
        "100",
        "-q",
        "250",
        "--latency-correction",
        "--wait-ongoing-requests-after-deadline",
        "-t",
        "2s",
        "--no-tui",
        "--output-format",
        "json",
        "http://127.0.0.1:9/",
    ]
    wrk2 = Wrk2().command(config, "http://127.0.0.1:9/", 2)
    assert wrk2[1:] == ["-t1", "-c100", "-d5s", "-R250", "--latency", "-U", "--timeout", "2s", "http://127.0.0.1:9/"]


# --------------------------------------------------------------------------- a real oha trial


@pytest.fixture
def oha_installed() -> None:
    reason = Oha().missing_reason()
    if reason is not None:
        pytest.skip(reason)


# Slow: not the trial (seconds) but oha, which `make test-slow` builds (4 to 7 minutes on 2 CPUs) and `make test`
# leaves out.
@pytest.mark.slow
def test_oha_trial_against_epoll(oha_installed, real_build_dir: Path, cpu_pair, tmp_path: Path) -> None:
    server_cpus, load_cpus = cpu_pair
    params = resolve_parameters(
        "latency",
        servers=["epoll"],
        connection_counts=[10],
        duration_s=2,
        trials=1,
        warmup=False,
        load_generator="oha",
        rate_fractions=[0.5],
        saturation_rates={"epoll-level-c10": 400.0},
        saturation_source="test",
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(real_build_dir),
        raw_root=str(tmp_path),
        campaign="oha",
        seed=2,
        max_reruns=0,  # one trial's files, whatever else this machine runs meanwhile
    )
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"ok": 1}
    trial_id = "epoll-level-c10-lt1-d2s-oha-w20-rate200-r01"
    record = json.loads((tmp_path / "oha" / f"{trial_id}.json").read_text())
    assert record["status"] == "ok", record["failure_reason"]
    config = record["config"]
    assert (config["offered_rate"], config["rate_fraction"], config["saturation_rate"], config["saturation_of"]) == (
        200,
        0.5,
        400.0,
        "epoll-level-c10",
    )
    load = record["load"]
    assert load["argv"][:4] == ["taskset", "-c", load_cpus, Oha().program()]
    assert load["argv"][load["argv"].index("-q") + 1] == "200" and "--latency-correction" in load["argv"]
    assert load["output_file"] == f"{trial_id}.oha.txt" and load["flags"] == []
    assert record["provenance"]["tools"]["oha"].startswith("oha ")
    parsed = parse_output("oha", (tmp_path / "oha" / load["output_file"]).read_text())
    assert parsed["total_requests"] == pytest.approx(400, rel=0.1)  # 200/s for 2 s
    percentiles = parsed["latency_s"]["percentiles"]
    assert 0 < percentiles["50"] <= percentiles["99"] <= parsed["latency_s"]["max"] < 0.5
    (row,) = latency_overview(tmp_path / "oha")
    assert row["offered"] == 200 and row["achieved/offered"] == pytest.approx(1.0, abs=0.1)
