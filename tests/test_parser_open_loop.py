"""archbench.parse.open_loop on open_loop's real output (tests/fixtures/open_loop) and on broken output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archbench.parse import LoadOutputError, parse_file, parse_output
from archbench.parse.open_loop import SEND_LAG, parse

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "open_loop"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_a_run_against_epoll() -> None:
    r = parse_file(FIXTURES / "epoll_poisson.open_loop.txt")
    assert r["tool"] == "open_loop" and r["url"] == "http://127.0.0.1:18933/"
    assert (r["threads"], r["connections"], r["duration_s"], r["offered_rate"]) == (2, 4, 2.0, 500.0)
    assert r["total_requests"] == 1009 and r["requests_per_sec"] == pytest.approx(504.5)
    assert r["latency_s"]["percentiles"] == {"50": 108288e-9, "90": 293120e-9, "99": 3846144e-9, "99.9": 5468160e-9}
    assert r["latency_s"]["max"] == pytest.approx(7026922e-9) and r["latency_s"]["stdev"] is None
    assert r["flags"] == [] and r["socket_errors"] == {"connect": 0, "read": 0, "write": 0, "timeout": 0, "other": 0}
    assert sum(n for _, _, n in r["histogram"]["buckets"]) == 1009
    assert r["cpu_s"] == pytest.approx(0.048973)
    assert r["cpu_per_request_s"] == pytest.approx(0.048973 / (1009 + 244))
    assert r["cpu_busy_fraction"] == pytest.approx(0.048973 / (2.500207 * 2))


def test_a_pipelined_run_keeps_its_depth() -> None:
    r = parse(_broken(lambda r: r["parameters"].update(pipelining=True, pipeline=4)))
    assert r["parameters"]["pipeline"] == 4 and r["parameters"]["pipelining"] is True
    assert r["total_requests"] == 1009 and r["flags"] == [] and r["send_lag_ns"] is None


def test_the_client_s_send_lag_is_kept() -> None:
    lag = {"count": 1009, "mean": 2500.5, "p50": 2047, "p99": 51200, "max": 60001}
    assert parse(_broken(lambda r: r.update(send_lag_ns=lag)))["send_lag_ns"] == lag


def test_refused_connects() -> None:
    r = parse_output("open_loop", _text("refused.open_loop.txt"))
    assert r["socket_errors"]["connect"] == 100 and r["errors"]["connect"] == {"ECONNREFUSED": 100}
    assert r["flags"] == ["socket_errors", "no_requests"]
    assert r["latency_s"]["percentiles"] == {} and r["latency_s"]["avg"] is None
    assert r["counts"]["unsent_at_end"] == r["counts"]["scheduled"] == 25
    assert r["cpu_per_request_s"] is None


def _broken(change) -> str:
    report = json.loads(_text("epoll_poisson.open_loop.txt"))
    change(report)
    return json.dumps(report)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("histogram"), "the object lacks histogram"),
        (lambda r: r["counts"].pop("lost"), "counts lacks lost"),
        (lambda r: r["counts"].__setitem__("sent", -1), "counts.sent is not a count"),
        (lambda r: r["histogram"]["buckets"].pop(), "the histogram holds"),
        (lambda r: r["histogram"]["buckets"].reverse(), "reversed or out of order"),
        (lambda r: r["histogram"]["buckets"].__setitem__(0, [1, 2]), "is not \\[lower, upper, count\\]"),
        (lambda r: r["per_second"].__setitem__("sent", 3), "per_second.sent is not a list"),
        (lambda r: r["cpu"].__setitem__("wall_s", "x"), "cpu.wall_s is not a non-negative number"),
        (lambda r: r["parameters"].__setitem__("pipeline", 0), "parameters.pipeline is below 1"),
        (lambda r: r.__setitem__("send_lag_ns", {"count": 3}), "send_lag_ns lacks mean"),
        (lambda r: r.__setitem__("send_lag_ns", dict.fromkeys(SEND_LAG, -1)), "send_lag_ns.count is not a non-neg"),
        (lambda r: r["parameters"].__setitem__("pipeline", "4"), "parameters.pipeline is not a count"),
    ],
)
def test_broken_output_is_refused(change, message: str) -> None:
    with pytest.raises(LoadOutputError, match=message):
        parse(_broken(change))


def test_not_open_loop_output() -> None:
    with pytest.raises(LoadOutputError, match="no JSON object found"):
        parse("open_loop: 1 scheduled, 0 sent\n")
    with pytest.raises(LoadOutputError, match="not open_loop's"):
        parse('{"tool": "idle_holder"}\n')
    with pytest.raises(LoadOutputError, match="not valid open_loop JSON"):
        parse(_text("epoll_poisson.open_loop.txt")[:500])
