"""open_loop as the runner's open-loop load generator: its command line, and one short trial against a
real server on loopback through the runner."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from archbench.analyze.open_loop_checks import assess
from archbench.config.loadgen import OpenLoopClient, load_generator, open_loop_generators
from archbench.config.params import resolve_parameters
from archbench.config.plan import expand_grid
from archbench.measure.runner import run_campaign
from archbench.parse import parse_output


def test_registered_as_an_open_loop_generator() -> None:
    assert "open_loop" in open_loop_generators()
    assert load_generator("open_loop").protocol == "http"


def test_open_loop_command() -> None:
    params = resolve_parameters(
        "latency", check_host=False, servers=["epoll"], load_generator="open_loop", offered_rates=[250]
    )
    config = expand_grid(params)[0].as_dict()
    argv = OpenLoopClient().command(config, "http://127.0.0.1:9/", 2, build_dir=Path("b"))
    assert argv == [
        "b/bin/open_loop",
        *("--host", "127.0.0.1", "--port", "9", "--path", "/", "--rate", "250", "--duration", "5"),
        *("--connections", "100", "--threads", "1", "--timeout", "2", "--arrival", "fixed"),
    ]
    # More threads than connections would be refused: the threads are capped.
    few = dict(config, connections=2, load_threads=4)
    argv = OpenLoopClient().command(few, "http://127.0.0.1:9/", 2)
    assert argv[argv.index("--threads") + 1] == "2"


def test_missing_binary_is_named(tmp_path: Path) -> None:
    assert "make servers" in OpenLoopClient().missing_reason(tmp_path)


@pytest.fixture
def open_loop_built(real_build_dir: Path) -> Path:
    if OpenLoopClient().missing_reason(real_build_dir) is not None:
        pytest.skip(OpenLoopClient().missing_reason(real_build_dir))
    return real_build_dir


def test_open_loop_trial_against_epoll(open_loop_built: Path, cpu_pair, tmp_path: Path) -> None:
    server_cpus, load_cpus = cpu_pair
    params = resolve_parameters(
        "latency",
        servers=["epoll"],
        connection_counts=[10],
        duration_s=2,
        trials=1,
        warmup=False,
        load_generator="open_loop",
        rate_fractions=[0.5],
        saturation_rates={"epoll-level-c10": 400.0},
        saturation_source="test",
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(open_loop_built),
        raw_root=str(tmp_path),
        campaign="ol",
        seed=2,
        max_reruns=0,  # one trial's files, whatever else this machine runs meanwhile
    )
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"ok": 1}
    trial_id = "epoll-level-c10-lt1-d2s-open_loop-w20-rate200-r01"  # the latency profile's 20 us of work
    record = json.loads((tmp_path / "ol" / f"{trial_id}.json").read_text())
    assert record["status"] == "ok", record["failure_reason"]
    load = record["load"]
    assert load["argv"][:4] == ["taskset", "-c", load_cpus, OpenLoopClient().program(open_loop_built)]
    assert load["argv"][load["argv"].index("--rate") + 1] == "200"
    assert load["output_file"] == f"{trial_id}.open_loop.txt" and load["flags"] == []
    parsed = parse_output("open_loop", (tmp_path / "ol" / load["output_file"]).read_text())
    assert parsed["counts"]["scheduled"] == 400 and parsed["total_requests"] >= 395  # 200/s for 2 s
    percentiles = parsed["latency_s"]["percentiles"]
    assert 0 < percentiles["50"] <= percentiles["99"] <= parsed["latency_s"]["max"] < 0.5
    checks = assess(parsed)
    assert checks["sustained"] and not checks["client_bound"]
