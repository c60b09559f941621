"""The latency study's open-loop set-up: open_loop by default, Poisson arrivals as a recorded parameter (refused,
naming it, where the client cannot draw them), the iterative server left out of the fraction sweep with its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from archbench.config.loadgen import OpenLoopClient
from archbench.config.params import ParameterError, resolve_parameters
from archbench.config.plan import expand_grid
from archbench.config.profiles import source_001_servers
from archbench.measure import latency


def open_loop_configs(**overrides) -> list[dict]:
    params = resolve_parameters(
        "latency", check_host=False, servers=["epoll"], load_generator="open_loop", offered_rates=[250], **overrides
    )
    return [c.as_dict() for c in expand_grid(params)]


def test_poisson_arrivals_are_recorded_and_passed_to_open_loop() -> None:
    (config,) = open_loop_configs(arrival="poisson")
    assert config["arrival"] == "poisson" and config["work_us"] == 20
    argv = OpenLoopClient().command(config, "http://127.0.0.1:9/", 2, build_dir=Path("b"))
    assert argv[argv.index("--arrival") + 1] == "poisson"


def test_fixed_arrivals_by_default_and_when_missing() -> None:
    (config,) = open_loop_configs()
    assert config["arrival"] == "fixed"
    old = {k: v for k, v in config.items() if k != "arrival"}  # a record written before the parameter existed
    argv = OpenLoopClient().command(old, "http://127.0.0.1:9/", 2)
    assert argv[argv.index("--arrival") + 1] == "fixed"


@pytest.mark.parametrize("generator", ["oha", "wrk2"])
def test_poisson_arrivals_are_refused_for_a_client_that_spaces_requests_evenly(generator: str) -> None:
    with pytest.raises(ParameterError) as error:
        resolve_parameters(
            "latency", check_host=False, load_generator=generator, offered_rates=[100], arrival="poisson"
        )
    assert error.value.parameter == "arrival" and generator in str(error.value)
    params = resolve_parameters("latency", check_host=False, load_generator=generator, offered_rates=[100])
    assert all("arrival" not in c.as_dict() for c in expand_grid(params))  # nothing recorded for oha, wrk2


def test_an_unknown_arrival_names_the_parameter() -> None:
    with pytest.raises(ParameterError) as error:
        open_loop_configs(arrival="bursty")
    assert error.value.parameter == "arrival" and "poisson" in str(error.value)


def test_a_closed_loop_campaign_records_no_arrivals() -> None:
    params = resolve_parameters("latency", check_host=False, arrival="poisson")  # wrk: no offered rates
    assert all("arrival" not in c.as_dict() for c in expand_grid(params))


def test_the_study_defaults() -> None:
    assert latency.default_open_loop_generator() == "open_loop"
    assert latency.default_arrival("open_loop") == "poisson" and latency.default_arrival("oha") == "fixed"


def test_the_sweep_leaves_the_iterative_server_out_and_says_why() -> None:
    kept, left = latency.sweep_servers(source_001_servers())
    assert set(left) == {"blocking"} and "one connection at a time" in left["blocking"]
    assert len(kept) == 3 and "blocking" not in [k if isinstance(k, str) else k["architecture"] for k in kept]


def test_the_default_sweep_gives_every_design_that_takes_the_work_its_knee() -> None:
    kept, left = latency.sweep_servers()
    names = [k if isinstance(k, str) else k["architecture"] for k in kept]
    assert not left and "blocking" not in names and len(names) == len(set(names)) == 8
    assert {"epoll", "reactor", "thread_per_conn", "thread_pool", "poll", "io_uring", "prefork", "reuseport"} == set(
        names
    )
    params = latency.closed_loop_parameters(campaign="x", servers=kept, connections=100, check_host=False)
    assert all(c.as_dict().get("work_us") == 20 for c in expand_grid(params))  # nginx and pong would take none
