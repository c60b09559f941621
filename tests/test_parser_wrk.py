"""wrk output parser: exact values for every captured fixture, unit conversions, loud failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from archbench.parse import LoadOutputError, known_tools, parse_file, parse_output, tool_from_filename
from archbench.parse.common import percentage
from archbench.parse.wrk import byte_count, count, parse, seconds

FIXTURES = Path(__file__).parent / "fixtures" / "wrk"
NO_ERRORS = {"connect": 0, "read": 0, "write": 0, "timeout": 0}
NO_PERCENTILES = {"50": None, "75": None, "90": None, "99": None}
MB = 1024 * 1024

# Every fixture's complete parsed record, written out by hand from the text of the file.
EXPECTED = {
    "normal_latency.wrk.txt": {
        "tool": "wrk",
        "url": "http://127.0.0.1:34549/",
        "threads": 1,
        "connections": 400,
        "configured_duration_s": 2.0,
        "duration_s": 2.08,
        "latency_s": {
            "avg": 0.00663,
            "stdev": 0.00745,
            "max": 0.07325,
            "within_stdev_pct": 92.43,
            "percentiles": {"50": 0.00472, "75": 0.00648, "90": 0.01206, "99": 0.04932},
        },
        "req_per_thread": {"avg": 61170.0, "stdev": 16220.0, "max": 88250.0, "within_stdev_pct": 75.0},
        "total_requests": 123767,
        "bytes_read": round(10.74 * MB),
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "requests_per_sec": 59488.75,
        "transfer_per_sec_bytes": 5.16 * MB,
        "flags": [],
    },
    "no_latency.wrk.txt": {
        "tool": "wrk",
        "url": "http://127.0.0.1:39009/",
        "threads": 2,
        "connections": 50,
        "configured_duration_s": 2.0,
        "duration_s": 2.1,
        "latency_s": {
            "avg": 0.00069402,
            "stdev": 0.00104,
            "max": 0.00835,
            "within_stdev_pct": 87.87,
            "percentiles": NO_PERCENTILES,
        },
        "req_per_thread": {"avg": 52710.0, "stdev": 8230.0, "max": 99560.0, "within_stdev_pct": 92.68},
        "total_requests": 215073,
        "bytes_read": 19566428,
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "requests_per_sec": 102435.23,
        "transfer_per_sec_bytes": 9321840.64,
        "flags": [],
    },
    "socket_errors.wrk.txt": {
        "tool": "wrk",
        "url": "http://127.0.0.1:33371/",
        "threads": 1,
        "connections": 20,
        "configured_duration_s": 2.0,
        "duration_s": 2.1,
        "latency_s": {
            "avg": 0.00018932,
            "stdev": 0.00010653,
            "max": 0.00302,
            "within_stdev_pct": 95.77,
            "percentiles": {"50": 0.000191, "75": 0.000211, "90": 0.000228, "99": 0.000293},
        },
        "req_per_thread": {"avg": 93170.0, "stdev": 3370.0, "max": 96600.0, "within_stdev_pct": 70.0},
        "total_requests": 92608,
        "bytes_read": 8430551,
        "socket_errors": {"connect": 0, "read": 20, "write": 61558, "timeout": 0},
        "non_2xx": 0,
        "requests_per_sec": 44076.17,
        "transfer_per_sec_bytes": 4016046.08,
        "flags": ["socket_errors"],
    },
    "non_2xx.wrk.txt": {
        "tool": "wrk",
        "url": "http://127.0.0.1:34005/missing",
        "threads": 1,
        "connections": 4,
        "configured_duration_s": 2.0,
        "duration_s": 2.0,
        "latency_s": {
            "avg": 0.00111,
            "stdev": 0.00095,
            "max": 0.01966,
            "within_stdev_pct": 95.52,
            "percentiles": {"50": 0.00093, "75": 0.00113, "90": 0.00146, "99": 0.00525},
        },
        "req_per_thread": {"avg": 3650.0, "stdev": 738.65, "max": 4190.0, "within_stdev_pct": 84.21},
        "total_requests": 6921,
        "bytes_read": 3596616,
        "socket_errors": NO_ERRORS,
        "non_2xx": 6921,
        "requests_per_sec": 3455.6,
        "transfer_per_sec_bytes": 1793064.96,
        "flags": ["non_2xx"],
    },
    "units_k_M_ms_us.wrk.txt": {
        "tool": "wrk",
        "url": "http://127.0.0.1:39009/",
        "threads": 1,
        "connections": 100,
        "configured_duration_s": 2.0,
        "duration_s": 2.0,
        "latency_s": {
            "avg": 0.00067888,
            "stdev": 0.00030291,
            "max": 0.00506,
            "within_stdev_pct": 84.95,
            "percentiles": {"50": 0.000512, "75": 0.00087, "90": 0.00105, "99": 0.00137},
        },
        "req_per_thread": {"avg": 102100.0, "stdev": 3250.0, "max": 106010.0, "within_stdev_pct": 65.0},
        "total_requests": 202756,
        "bytes_read": 18454938,
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "requests_per_sec": 101156.27,
        "transfer_per_sec_bytes": 9206497.28,
        "flags": [],
    },
    "timeouts_slow_server.wrk.txt": {
        "tool": "wrk",
        "url": "http://127.0.0.1:41759/",
        "threads": 2,
        "connections": 20,
        "configured_duration_s": 4.0,
        "duration_s": 4.01,
        "latency_s": {
            "avg": 0.63322,
            "stdev": 0.17532,
            "max": 0.93367,
            "within_stdev_pct": 60.87,
            "percentiles": {"50": 0.60502, "75": 0.73236, "90": 0.90989, "99": 0.93367},
        },
        "req_per_thread": {"avg": 8.31, "stdev": 5.96, "max": 30.0, "within_stdev_pct": 86.21},
        "total_requests": 49,
        "bytes_read": 5632,
        "socket_errors": {"connect": 0, "read": 0, "write": 0, "timeout": 26},
        "non_2xx": 0,
        "requests_per_sec": 12.23,
        "transfer_per_sec_bytes": 1402.88,
        "flags": ["socket_errors"],
    },
    "seconds_latency.wrk.txt": {
        "tool": "wrk",
        "url": "http://127.0.0.1:33741/",
        "threads": 1,
        "connections": 10,
        "configured_duration_s": 4.0,
        "duration_s": 4.01,
        "latency_s": {
            "avg": 1.29,
            "stdev": 0.226,
            "max": 1.77,
            "within_stdev_pct": 64.0,
            "percentiles": {"50": 1.26, "75": 1.49, "90": 1.58, "99": 1.77},
        },
        "req_per_thread": {"avg": 9.56, "stdev": 7.4, "max": 30.0, "within_stdev_pct": 77.78},
        "total_requests": 25,
        "bytes_read": 2877,
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "requests_per_sec": 6.23,
        "transfer_per_sec_bytes": 716.61,
        "flags": [],
    },
    "no_requests.wrk.txt": {
        "tool": "wrk",
        "url": "http://127.0.0.1:45231/",
        "threads": 1,
        "connections": 10,
        "configured_duration_s": 2.0,
        "duration_s": 2.01,
        "latency_s": {
            "avg": 0.0,
            "stdev": 0.0,
            "max": 0.0,
            "within_stdev_pct": None,
            "percentiles": {"50": 0.0, "75": 0.0, "90": 0.0, "99": 0.0},
        },
        "req_per_thread": {"avg": 0.0, "stdev": 0.0, "max": 0.0, "within_stdev_pct": None},
        "total_requests": 0,
        "bytes_read": 0,
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "requests_per_sec": 0.0,
        "transfer_per_sec_bytes": 0.0,
        "flags": ["no_requests"],
    },
    # Source 003's excerpt: indentation lost in capture, host name instead of an address.
    "seed003_excerpt.wrk.txt": {
        "tool": "wrk",
        "url": "http://flouride:8080",
        "threads": 8,
        "connections": 32,
        "configured_duration_s": 5.0,
        "duration_s": 5.1,
        "latency_s": {
            "avg": 0.00054274,
            "stdev": 0.00001881,
            "max": 0.00141,
            "within_stdev_pct": 89.78,
            "percentiles": NO_PERCENTILES,
        },
        "req_per_thread": {"avg": 1840.0, "stdev": 27.67, "max": 1990.0, "within_stdev_pct": 90.2},
        "total_requests": 9316,
        "bytes_read": 717332,
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "requests_per_sec": 1826.7,
        "transfer_per_sec_bytes": 140656.64,
        "flags": [],
    },
}


def test_every_fixture_has_expected_values() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_parses_to_exact_record(name: str) -> None:
    assert parse_file(FIXTURES / name) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_record_has_contract_keys_in_order(name: str) -> None:
    record = parse_file(FIXTURES / name)
    assert list(record) == [
        "tool",
        "url",
        "threads",
        "connections",
        "configured_duration_s",
        "duration_s",
        "latency_s",
        "req_per_thread",
        "total_requests",
        "bytes_read",
        "socket_errors",
        "non_2xx",
        "requests_per_sec",
        "transfer_per_sec_bytes",
        "flags",
    ]
    assert list(record["latency_s"]["percentiles"]) == ["50", "75", "90", "99"]


def test_time_units_to_seconds() -> None:
    assert seconds("512.00us") == 0.000512
    assert seconds("0.87ms") == 0.00087
    assert seconds("1.29s") == 1.29
    assert seconds("5s") == 5.0
    assert seconds("0.85m") == 51.0
    assert seconds("2m") == 120.0
    assert seconds("1.50h") == 5400.0
    with pytest.raises(LoadOutputError):
        seconds("12.0")


def test_metric_units_are_powers_of_1000() -> None:
    assert count("27.67") == 27.67
    assert count("1.84k") == 1840.0
    assert count("1.00M") == 1_000_000.0
    assert count("2.50G") == 2_500_000_000.0
    assert count("1.00T") == 1e12
    with pytest.raises(LoadOutputError):
        count("1.00K")  # wrk prints a lower-case k for metric values


def test_binary_units_are_powers_of_1024() -> None:
    assert byte_count("716.61B") == 716.61
    assert byte_count("1.00KB") == 1024.0
    assert byte_count("1.00MB") == 1024.0**2
    assert byte_count("1.50GB") == 1.5 * 1024.0**3
    assert byte_count("1.00TB") == 1024.0**4
    with pytest.raises(LoadOutputError):
        byte_count("1.00kB")


def test_percentage_nan_is_none() -> None:
    assert percentage("84.95%") == 84.95
    assert percentage("-nan%") is None
    assert percentage("nan%") is None


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_both_socket_errors_and_non_2xx_are_flagged() -> None:
    text = _text("non_2xx.wrk.txt").replace(
        "  Non-2xx", "  Socket errors: connect 1, read 0, write 0, timeout 0\n  Non-2xx"
    )
    record = parse(text)
    assert record["flags"] == ["socket_errors", "non_2xx"]
    assert record["socket_errors"] == {"connect": 1, "read": 0, "write": 0, "timeout": 0}


def test_not_wrk_output_fails_naming_the_line() -> None:
    with pytest.raises(LoadOutputError, match=r"line 1 is not wrk output: 'hello world'"):
        parse("hello world\n")


def test_unknown_line_inside_wrk_output_fails() -> None:
    text = _text("normal_latency.wrk.txt").replace("Requests/sec:", "Something else\nRequests/sec:")
    with pytest.raises(LoadOutputError, match=r"line 12 is not wrk output: 'Something else'"):
        parse(text)


def test_empty_output_fails() -> None:
    with pytest.raises(LoadOutputError, match="empty output"):
        parse("")


def test_truncated_output_names_missing_lines() -> None:
    lines = _text("normal_latency.wrk.txt").splitlines()
    with pytest.raises(LoadOutputError, match="no requests_per_sec, transfer_per_sec line"):
        parse("\n".join(lines[:-2]))


def test_duplicated_summary_fails() -> None:
    text = _text("no_latency.wrk.txt")
    with pytest.raises(LoadOutputError, match="second 'running' line"):
        parse(text + text)


def test_parse_output_dispatches_on_tool() -> None:
    assert parse_output("wrk", _text("no_latency.wrk.txt")) == EXPECTED["no_latency.wrk.txt"]
    assert known_tools() == ["echo_client", "httperf", "iperf3", "oha", "open_loop", "wrk", "wrk2"]
    with pytest.raises(
        ValueError, match="no parser for load generator 'ab'; known: echo_client, httperf, iperf3, oha, open_loop"
    ):
        parse_output("ab", "")


def test_tool_from_file_name() -> None:
    assert tool_from_filename(Path("thread_pool-request-queue-t4-c100-lt1-d5s-r03.wrk.txt")) == "wrk"
    with pytest.raises(ValueError, match="expected <trial-id>.<tool>.txt"):
        tool_from_filename(Path("x-r01.server.txt"))


def test_parse_file_with_explicit_tool(tmp_path: Path) -> None:
    path = tmp_path / "anything.txt"
    path.write_text(_text("seed003_excerpt.wrk.txt"))
    assert parse_file(path, tool="wrk") == EXPECTED["seed003_excerpt.wrk.txt"]
