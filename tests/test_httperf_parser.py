"""archbench.parse.httperf on real httperf 0.9 output (tests/fixtures/httperf/README.md says how each was captured)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from archbench.parse import LoadOutputError, parse_file, parse_output
from archbench.parse.httperf import command_options, parse

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "httperf"
NO_ERRORS = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "other": 0}


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.httperf.txt").read_text()


# name -> the contract fields (contracts.md section 3) the record must have.
EXPECTED: dict[str, dict[str, Any]] = {
    "normal": {
        "url": "http://127.0.0.1:32871/",
        "connections": 1000,
        "duration_s": 8.617,
        "total_requests": 600000,
        "requests_per_sec": 600000 / 8.617,
        "bytes_read": 600000 * 91,
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "latency_s": {"avg": 0.014, "stdev": None, "max": None, "percentiles": {}},
        "flags": [],
    },
    "short": {
        "connections": 200,
        "duration_s": 0.224,
        "total_requests": 20000,
        "requests_per_sec": 20000 / 0.224,
        "socket_errors": NO_ERRORS,
        "latency_s": {"avg": 0.002, "stdev": None, "max": None, "percentiles": {}},
        "flags": [],
    },
    "timeout_epoll": {
        "connections": 400,
        "total_requests": 23,
        "socket_errors": {**NO_ERRORS, "timeout": 400},
        "non_2xx": 0,
        "flags": ["socket_errors"],
    },
    "timeout_silent_server": {
        "connections": 50,
        "duration_s": 1.054,
        "total_requests": 0,
        "requests_per_sec": 0.0,
        "bytes_read": 0,
        "socket_errors": {**NO_ERRORS, "timeout": 50},
        "latency_s": {"avg": None, "stdev": None, "max": None, "percentiles": {}},
        "flags": ["socket_errors", "no_requests"],
    },
    "connrefused": {
        "connections": 20,
        "total_requests": 0,
        "socket_errors": {**NO_ERRORS, "connect": 20},
        "flags": ["socket_errors", "no_requests"],
    },
    "connreset": {
        "connections": 30,
        "total_requests": 0,
        "socket_errors": {**NO_ERRORS, "read": 30},
        "flags": ["socket_errors", "no_requests"],
    },
    "status4xx": {
        "url": "http://127.0.0.1:32871/a b",
        "connections": 20,
        "total_requests": 20,
        "non_2xx": 20,
        "socket_errors": {**NO_ERRORS, "read": 20},
        "flags": ["socket_errors", "non_2xx"],
    },
    "stdout_and_stderr": {
        "connections": 100,
        "total_requests": 1000,
        "socket_errors": NO_ERRORS,
        "flags": [],
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_contract_fields(name: str) -> None:
    record = parse(fixture(name))
    assert record["tool"] == "httperf"
    assert record["threads"] == 1 and record["configured_duration_s"] is None
    for key, value in EXPECTED[name].items():
        assert record[key] == (pytest.approx(value) if isinstance(value, float) else value), key


def test_every_fixture_is_in_the_table() -> None:
    names = {path.name.removesuffix(".httperf.txt") for path in FIXTURES.glob("*.httperf.txt")}
    assert names == set(EXPECTED)


def test_normal_run_in_detail() -> None:
    record = parse(fixture("normal"))
    assert record["options"]["num-conns"] == "1000" and "hog" in record["options"]
    assert record["calls_per_connection"] == 600 and record["connection_rate_option"] == 100000
    assert record["max_connect_burst"] == 125
    assert (record["connections_issued"], record["requests_sent"], record["replies"]) == (1000, 600000, 600000)
    assert record["connection_rate"] == 116.0 and record["max_concurrent_connections"] == 1000
    assert record["connection_time_s"] == {
        "min": 7.6643,
        "avg": 8.4225,
        "max": 8.6052,
        "median": 8.4935,
        "stddev": 0.1675,
    }
    assert record["connect_time_s"] == 0.0369
    assert record["replies_per_connection"] == 600.0
    assert record["request_rate"] == 69627.3 and record["request_size_bytes"] == 62.0
    assert record["reply_rate"] == {"min": 69890.0, "avg": 69890.0, "max": 69890.0, "stddev": 0.0, "samples": 1}
    assert record["reply_time_s"] == {"response": 0.014, "transfer": 0.0}
    assert record["reply_size_bytes"] == {"header": 87.0, "content": 4.0, "footer": 0.0, "total": 91.0}
    assert record["status_classes"] == {"1xx": 0, "2xx": 600000, "3xx": 0, "4xx": 0, "5xx": 0}
    assert record["cpu_s"] == {"user": 0.25, "system": 2.89}
    assert record["net_io"] == {"bytes_per_s": 10403.3 * 1024, "bits_per_s": 85.2e6}
    assert record["errors"] == dict.fromkeys(
        (
            "total",
            "client-timo",
            "socket-timo",
            "connrefused",
            "connreset",
            "fd-unavail",
            "addrunavail",
            "ftab-full",
            "other",
        ),
        0,
    )
    assert record["transfer_per_sec_bytes"] == pytest.approx(600000 * 91 / 8.617)


def test_client_timeouts_are_timeouts_and_every_error_kind_is_kept() -> None:
    record = parse(fixture("timeout_epoll"))
    assert record["errors"]["client-timo"] == 400 and record["errors"]["total"] == 400
    assert record["socket_errors"]["timeout"] == 400
    assert record["requests_sent"] == 24 and record["replies"] == 23


def test_nothing_measured_is_null_not_zero() -> None:
    record = parse(fixture("timeout_silent_server"))
    assert set(record["connection_time_s"].values()) == {None}
    assert record["reply_time_s"] == {"response": None, "transfer": None}
    assert set(record["reply_size_bytes"].values()) == {None}
    short = parse(fixture("short"))
    assert short["reply_rate"] == {"min": None, "avg": None, "max": None, "stddev": None, "samples": 0}


def test_stderr_lines_are_kept_as_messages() -> None:
    record = parse(fixture("stdout_and_stderr"))
    assert record["messages"] == ["warning: open file limit > FD_SETSIZE; limiting max. # of open files to FD_SETSIZE"]


def test_parse_output_and_parse_file_dispatch_to_it(tmp_path: Path) -> None:
    assert parse_output("httperf", fixture("normal")) == parse(fixture("normal"))
    named = tmp_path / "epoll-c1000-httperf-r01.httperf.txt"
    named.write_text(fixture("normal"))
    assert parse_file(named) == parse(fixture("normal"))


def test_command_options_keep_unquoted_values() -> None:
    assert command_options(" --hog --uri=/a b --num-conns=5") == {"hog": None, "uri": "/a b", "num-conns": "5"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty output"),
        ("Running 2s test @ http://127.0.0.1:1/\n", "line 1 is not httperf output"),
        (fixture("normal").replace("Errors: fd-unavail", "Errors: fd-gone"), "is not httperf output"),
        ("\n".join(fixture("normal").splitlines()[:-2]), "no errors_1, errors_2 line"),
        (fixture("normal") + fixture("normal"), "second 'command' line"),
        (fixture("normal").replace("2xx=600000", "2xx=599999"), "do not add up to the 600000 replies"),
        (fixture("normal").replace("Errors: total 0", "Errors: total 3"), "do not add up to their total"),
    ],
)
def test_what_is_not_httperf_output_fails_naming_why(text: str, message: str) -> None:
    with pytest.raises(LoadOutputError, match=message.replace("(", r"\(")):
        parse(text)
