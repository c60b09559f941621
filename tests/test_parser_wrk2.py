"""wrk2 output parser: exact values for every fixture (real outputs and the constructed ones), odd values,
loud failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archbench.parse import LoadOutputError, parse_file, parse_output, tool_from_filename
from archbench.parse.wrk2 import byte_count, count, milliseconds, parse, percentile_key, seconds

FIXTURES = Path(__file__).parent / "fixtures" / "wrk2"
NO_ERRORS = {"connect": 0, "read": 0, "write": 0, "timeout": 0}
NO_PERCENTILES = {
    "50": None,
    "75": None,
    "90": None,
    "99": None,
    "99.9": None,
    "99.99": None,
    "99.999": None,
    "100": None,
}
KB, MB = 1024, 1024 * 1024
SENTINEL_S = 9223372036854.776  # "9223372036854776.000ms": (uint64_t)NaN us, a calibration that saw no response


def cal(mean_s: float, interval_s: float = 0.01) -> dict:
    return {"mean_latency_s": mean_s, "rate_sampling_interval_s": interval_s, "incomplete": mean_s == SENTINEL_S}


INCOMPLETE = cal(SENTINEL_S)


def record(**fields) -> dict:
    """A complete record: wrk2's fields in the parser's order, then the given values."""
    base = {
        "tool": "wrk2",
        "url": None,
        "threads": None,
        "connections": None,
        "configured_duration_s": None,
        "duration_s": None,
        "offered_rate": None,
        "latency_s": None,
        "req_per_thread": None,
        "total_requests": None,
        "bytes_read": None,
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "requests_per_sec": None,
        "transfer_per_sec_bytes": None,
        "calibration": [],
        "percentile_spectrum": None,
        "hdr_footer": None,
        "uncorrected_latency_s": None,
        "flags": [],
    }
    unknown = set(fields) - set(base)
    assert not unknown, unknown
    base.update(fields)
    return base


SEED001 = dict(url="http://localhost:8080", threads=16, connections=2000, configured_duration_s=30.0)

# The record of each fixture without spectra, written out by hand from the text of the file.
EXPECTED = {
    # Source 001: four real wrk2 runs, -c 2000 -d 30s -t 16 -R 200000, without --latency.
    "seed001_basic_single_thread.wrk2.txt": record(
        **SEED001,
        duration_s=30.64,
        latency_s={
            "avg": 0.00112,
            "stdev": 0.00034358,
            "max": 0.00566,
            "within_stdev_pct": 68.15,
            "percentiles": NO_PERCENTILES,
        },
        req_per_thread={"avg": 6.45, "stdev": 26.06, "max": 222.0, "within_stdev_pct": 94.04},
        total_requests=3001,
        bytes_read=round(111.37 * KB),
        socket_errors={"connect": 0, "read": 0, "write": 0, "timeout": 28860},
        requests_per_sec=97.96,
        transfer_per_sec_bytes=3727.36,
        calibration=[cal(0.001749)] + [INCOMPLETE] * 15,
        flags=["socket_errors", "calibration_incomplete"],
    ),
    "seed001_thread_per_connection.wrk2.txt": record(
        **SEED001,
        duration_s=30.63,
        latency_s={
            "avg": 0.00176,
            "stdev": 0.00148,
            "max": 0.03341,
            "within_stdev_pct": 91.18,
            "percentiles": NO_PERCENTILES,
        },
        req_per_thread={"avg": 6250.0, "stdev": 5460.0, "max": 33670.0, "within_stdev_pct": 53.68},
        total_requests=2971789,
        bytes_read=round(107.70 * MB),
        socket_errors={"connect": 0, "read": 0, "write": 0, "timeout": 14000},
        requests_per_sec=97015.23,
        transfer_per_sec_bytes=3690987.52,
        calibration=[
            cal(0.002772),
            cal(0.002603),
            INCOMPLETE,
            INCOMPLETE,
            cal(0.00287),
            INCOMPLETE,
            INCOMPLETE,
            cal(0.002509),
            cal(0.002635),
            cal(0.09906, 0.966),
            INCOMPLETE,
            INCOMPLETE,
            cal(0.002838),
            cal(0.002984),
            cal(0.002707),
            cal(0.00252),
        ],
        flags=["socket_errors", "calibration_incomplete"],
    ),
    "seed001_epoll.wrk2.txt": record(
        **SEED001,
        duration_s=30.0,
        latency_s={"avg": 8.18, "stdev": 2.22, "max": 13.74, "within_stdev_pct": 62.72, "percentiles": NO_PERCENTILES},
        req_per_thread={"avg": 7720.0, "stdev": 163.74, "max": 8120.0, "within_stdev_pct": 82.14},
        total_requests=3524675,
        bytes_read=round(127.73 * MB),
        socket_errors={"connect": 0, "read": 0, "write": 0, "timeout": 11},
        requests_per_sec=117496.1,
        transfer_per_sec_bytes=4466933.76,
        calibration=[
            cal(1.382324, 6.705),
            cal(1.552633, 6.815),
            cal(1.385837, 6.717),
            cal(1.606748, 6.914),
            cal(1.389953, 6.721),
            cal(1.385969, 6.713),
            cal(2.680249, 8.732),
            cal(2.271148, 8.048),
            cal(3.36384, 9.814),
            cal(3.790224, 10.452),
            cal(1.389854, 6.721),
            cal(1.3966, 6.733),
            cal(4.800952, 11.96),
            cal(1.393609, 6.725),
            cal(1.390975, 6.721),
            cal(4.445876, 11.436),
        ],
        flags=["socket_errors"],
    ),
    "seed001_reactor.wrk2.txt": record(
        **SEED001,
        duration_s=30.84,
        latency_s={
            "avg": 0.01664,
            "stdev": 0.09205,
            "max": 1.01,
            "within_stdev_pct": 97.55,
            "percentiles": NO_PERCENTILES,
        },
        req_per_thread={"avg": 13560.0, "stdev": 4990.0, "max": 108670.0, "within_stdev_pct": 83.1},
        total_requests=5889680,
        bytes_read=round(213.44 * MB),
        requests_per_sec=190965.36,
        transfer_per_sec_bytes=7256145.92,
        calibration=[
            cal(s)
            for s in (
                0.002276,
                0.002427,
                0.001987,
                0.002329,
                0.002227,
                0.001861,
                0.002513,
                0.002265,
                0.002146,
                0.002506,
                0.002239,
                0.002253,
                0.002496,
                0.002102,
                0.002421,
                0.002255,
            )
        ],
    ),
    # giltene/wrk2 README: --latency, the early calibration format (usec, msec), indented by four spaces.
    "readme_latency.wrk2.txt": record(
        url="http://127.0.0.1:80/index.html",
        threads=2,
        connections=100,
        configured_duration_s=30.0,
        duration_s=30.0,
        latency_s={
            "avg": 0.0066,
            "stdev": 0.00192,
            "max": 0.0125,
            "within_stdev_pct": 68.46,
            "percentiles": {
                "50": 0.00667,
                "75": 0.00778,
                "90": 0.00914,
                "99": 0.01118,
                "99.9": 0.0123,
                "99.99": 0.01245,
                "99.999": 0.0125,
                "100": 0.0125,
            },
        },
        req_per_thread={"avg": 1040.0, "stdev": 1080.0, "max": 2500.0, "within_stdev_pct": 72.79},
        total_requests=60018,
        bytes_read=round(19.81 * MB),
        requests_per_sec=2000.28,
        transfer_per_sec_bytes=692408.32,
        calibration=[cal(0.010087, 0.022), cal(0.010139, 0.021)],
        hdr_footer={
            "mean_s": 0.006602,
            "stdev_s": 0.001919,
            "max_s": 0.012496,
            "total_count": 39500,
            "buckets": 27,
            "sub_buckets": 2048,
        },
    ),
    # hopeit.engine's benchmark results: -U (both blocks), current calibration format, latencies in s and ms.
    "hopeit_u_latency.wrk2.txt": record(
        url="http://localhost:8021/api/simple-benchmark/1x0/give-me-something?item_id=string",
        threads=8,
        connections=40,
        configured_duration_s=60.0,
        duration_s=60.0,
        latency_s={
            "avg": 19.13,
            "stdev": 8.0,
            "max": 33.08,
            "within_stdev_pct": 57.51,
            "percentiles": {
                "50": 19.12,
                "75": 26.07,
                "90": 30.26,
                "99": 32.82,
                "99.9": 33.06,
                "99.99": 33.08,
                "99.999": 33.1,
                "100": 33.1,
            },
        },
        req_per_thread={"avg": 222.62, "stdev": 2.39, "max": 227.0, "within_stdev_pct": 80.0},
        total_requests=107665,
        bytes_read=round(41.0 * MB),
        requests_per_sec=1794.29,
        transfer_per_sec_bytes=716533.76,
        calibration=[
            cal(s, 9.74) for s in (2.677897, 2.67815, 2.678193, 2.679164, 2.678793, 2.67898, 2.678742, 2.679257)
        ],
        hdr_footer={
            "mean_s": 19.129866,
            "stdev_s": 8.00131,
            "max_s": 33.079296,
            "total_count": 89265,
            "buckets": 27,
            "sub_buckets": 2048,
        },
    ),
    # Constructed from wrk2's printf formats (see the README): no response at all, --latency.
    "constructed_no_responses.wrk2.txt": record(
        url="http://127.0.0.1:8080/",
        threads=2,
        connections=4,
        configured_duration_s=15.0,
        duration_s=15.0,
        latency_s={
            "avg": None,
            "stdev": None,
            "max": 0.0,
            "within_stdev_pct": 0.0,
            "percentiles": dict.fromkeys(NO_PERCENTILES, 0.0),
        },
        req_per_thread={"avg": 0.0, "stdev": 0.0, "max": 0.0, "within_stdev_pct": 100.0},
        total_requests=0,
        bytes_read=0,
        socket_errors={"connect": 0, "read": 0, "write": 0, "timeout": 24},
        requests_per_sec=0.0,
        transfer_per_sec_bytes=0.0,
        calibration=[INCOMPLETE, INCOMPLETE],
        hdr_footer={
            "mean_s": None,
            "stdev_s": None,
            "max_s": 0.0,
            "total_count": 0,
            "buckets": 27,
            "sub_buckets": 2048,
        },
        flags=["socket_errors", "no_requests", "calibration_incomplete"],
    ),
    # Constructed: a run shorter than the calibration (no calibration line, Req/Sec -nan), a Non-2xx line.
    "constructed_short_run.wrk2.txt": record(
        url="http://127.0.0.1:8080/",
        threads=1,
        connections=10,
        configured_duration_s=5.0,
        duration_s=5.0,
        latency_s={
            "avg": 0.00123,
            "stdev": 0.000456,
            "max": 0.00499,
            "within_stdev_pct": 71.2,
            "percentiles": NO_PERCENTILES,
        },
        req_per_thread={"avg": None, "stdev": None, "max": 0.0, "within_stdev_pct": 0.0},
        total_requests=9990,
        bytes_read=round(0.88 * MB),
        non_2xx=12,
        requests_per_sec=1997.85,
        transfer_per_sec_bytes=184535.04,
        flags=["non_2xx", "calibration_incomplete"],
    ),
}
SPECTRUM_ROWS = {"readme_latency.wrk2.txt": 79, "hopeit_u_latency.wrk2.txt": 77, "constructed_no_responses.wrk2.txt": 1}


def row(value_ms: str, percentile: float, total: int, inverse: float | None) -> dict:
    return {
        "value_s": milliseconds(value_ms),
        "percentile": percentile,
        "total_count": total,
        "inverse_complement": inverse,
    }


def _without_spectra(parsed: dict) -> dict:
    result = dict(parsed)
    result["percentile_spectrum"] = None
    result["uncorrected_latency_s"] = None
    return result


def test_every_fixture_has_expected_values() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_parses_to_exact_record(name: str) -> None:
    parsed = parse_file(FIXTURES / name)
    assert _without_spectra(parsed) == EXPECTED[name]
    assert list(parsed) == list(EXPECTED[name])  # field order
    spectrum = parsed["percentile_spectrum"]
    assert (None if spectrum is None else len(spectrum)) == SPECTRUM_ROWS.get(name)
    assert (parsed["uncorrected_latency_s"] is not None) == (name == "hopeit_u_latency.wrk2.txt")


@pytest.mark.parametrize("name", sorted(SPECTRUM_ROWS))
def test_spectrum_is_consistent_with_its_footer(name: str) -> None:
    parsed = parse_file(FIXTURES / name)
    blocks = [(parsed["percentile_spectrum"], parsed["hdr_footer"])]
    if parsed["uncorrected_latency_s"]:
        blocks.append(
            (parsed["uncorrected_latency_s"]["percentile_spectrum"], parsed["uncorrected_latency_s"]["hdr_footer"])
        )
    for spectrum, footer in blocks:
        values = [r["value_s"] for r in spectrum]
        counts = [r["total_count"] for r in spectrum]
        assert values == sorted(values) and counts == sorted(counts)
        assert counts[-1] == footer["total_count"]
        assert spectrum[-1]["percentile"] == 1.0 and spectrum[-1]["inverse_complement"] is None  # "inf"
        for r in spectrum[:-1]:  # 1/(1-Percentile), both printed rounded (6 and 2 decimals)
            low, high = 1 / (1 - (r["percentile"] - 5e-7)), 1 / (1 - (r["percentile"] + 5e-7))
            assert low - 0.005 <= r["inverse_complement"] <= high + 0.005


def test_readme_spectrum_rows() -> None:
    spectrum = parse_file(FIXTURES / "readme_latency.wrk2.txt")["percentile_spectrum"]
    assert spectrum[:3] == [row("0.921", 0.0, 1, 1.0), row("4.053", 0.1, 3951, 1.11), row("4.935", 0.2, 7921, 1.25)]
    assert spectrum[5] == row("6.671", 0.5, 19783, 2.0)
    assert spectrum[-3:] == [
        row("12.479", 0.999973, 39499, 36408.89),
        row("12.503", 0.999976, 39500, 40960.0),
        row("12.503", 1.0, 39500, None),
    ]
    assert spectrum[0]["value_s"] == 0.000921 and spectrum[-1]["value_s"] == 0.012503
    assert sum(r["total_count"] for r in spectrum) == 2804894


def test_hopeit_both_blocks() -> None:
    parsed = parse_file(FIXTURES / "hopeit_u_latency.wrk2.txt")
    recorded = parsed["percentile_spectrum"]
    assert recorded[0] == row("5423.103", 0.0, 9, 1.0)
    assert recorded[-2:] == [row("33095.679", 0.999969, 89265, 32768.0), row("33095.679", 1.0, 89265, None)]
    uncorrected = parsed["uncorrected_latency_s"]
    assert list(uncorrected) == ["percentiles", "percentile_spectrum", "hdr_footer"]
    assert uncorrected["percentiles"] == {
        "50": 0.02216,
        "75": 0.0223,
        "90": 0.0224,
        "99": 0.03038,
        "99.9": 0.07981,
        "99.99": 0.0841,
        "99.999": 0.08646,
        "100": 0.08646,
    }
    assert uncorrected["hdr_footer"] == {
        "mean_s": 0.022394,
        "stdev_s": 0.003477,
        "max_s": 0.0864,
        "total_count": 89265,
        "buckets": 27,
        "sub_buckets": 2048,
    }
    spectrum = uncorrected["percentile_spectrum"]
    assert len(spectrum) == 77
    assert spectrum[0] == row("20.447", 0.0, 1, 1.0)
    assert spectrum[41] == row("74.559", 0.996484, 88952, 284.44)
    assert spectrum[-1] == row("86.463", 1.0, 89265, None)
    # Coordinated omission, seen: the median of the intended-start latency is ~860x the uncorrected one.
    assert parsed["latency_s"]["percentiles"]["50"] / uncorrected["percentiles"]["50"] > 800


def test_empty_histogram_spectrum() -> None:
    parsed = parse_file(FIXTURES / "constructed_no_responses.wrk2.txt")
    assert parsed["percentile_spectrum"] == [row("0.000", 1.0, 0, None)]


def test_odd_values() -> None:
    assert seconds("-nanus") is None and seconds("nanus") is None and seconds("infm") is None
    assert seconds("6.60ms") == 0.0066 and seconds("1.31m") == 78.6 and seconds("343.58us") == 0.00034358
    assert count("-nan") is None and count("1.04k") == 1040.0
    assert byte_count("-nanB") is None and byte_count("infTB") is None and byte_count("676.18KB") == 692408.32
    assert milliseconds("-nan") is None and milliseconds("inf") is None and milliseconds("12.503") == 0.012503
    assert percentile_key("99.900") == "99.9" and percentile_key("100.000") == "100"
    assert percentile_key("50.000") == "50"
    with pytest.raises(LoadOutputError):
        seconds("12.0")


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_inf_rate_and_nan_transfer_become_null() -> None:
    text = _text("constructed_short_run.wrk2.txt").replace("Requests/sec:   1997.85", "Requests/sec:       inf")
    text = text.replace("Transfer/sec:    180.21KB", "Transfer/sec:      -nanB")
    parsed = parse(text)
    assert parsed["requests_per_sec"] is None and parsed["transfer_per_sec_bytes"] is None


def test_calibration_lines_count_against_threads() -> None:
    text = _text("seed001_reactor.wrk2.txt")
    lines = text.splitlines(keepends=True)
    shorter = "".join(line for i, line in enumerate(lines) if not (2 <= i <= 4))  # three calibrations missing
    parsed = parse(shorter)
    assert len(parsed["calibration"]) == 13 and parsed["flags"] == ["calibration_incomplete"]


def test_not_wrk2_output_fails_naming_the_line() -> None:
    with pytest.raises(LoadOutputError, match=r"line 1 is not wrk2 output: 'hello world'"):
        parse("hello world\n")


def test_unknown_line_inside_a_block_fails() -> None:
    text = _text("readme_latency.wrk2.txt").replace("    #[Max", "    something\n    #[Max")
    with pytest.raises(LoadOutputError, match=r"line 101 is not wrk2 output: '    something'"):
        parse(text)


def test_block_lines_out_of_order_fail() -> None:
    text = _text("hopeit_u_latency.wrk2.txt")
    no_title = text.replace("  Detailed Percentile spectrum:\n", "", 1)
    with pytest.raises(LoadOutputError, match=r"line 24: spectrum header out of place in the recorded latency block"):
        parse(no_title)
    truncated = text.replace("#[Buckets =           27, SubBuckets     =         2048]\n", "", 1)
    with pytest.raises(LoadOutputError, match=r"separator out of place in the recorded latency block"):
        parse(truncated)


def test_block_lines_outside_a_block_fail() -> None:
    text = _text("seed001_epoll.wrk2.txt").replace("Requests/sec:", " 50.000%    6.67ms\nRequests/sec:")
    with pytest.raises(LoadOutputError, match=r"line 24: percentile outside a latency distribution"):
        parse(text)


def test_uncorrected_block_alone_fails() -> None:
    text = _text("hopeit_u_latency.wrk2.txt")
    lines = text.splitlines(keepends=True)
    start = lines.index("  Latency Distribution (HdrHistogram - Recorded Latency)\n")
    end = lines.index("----------------------------------------------------------\n", start)
    with pytest.raises(LoadOutputError, match="an uncorrected latency distribution without the recorded one"):
        parse("".join(lines[:start] + lines[end + 1 :]))


def test_second_recorded_block_fails() -> None:
    text = _text("hopeit_u_latency.wrk2.txt").replace(
        "Uncorrected Latency (measured without taking delayed starts into account)", "Recorded Latency"
    )
    with pytest.raises(LoadOutputError, match="second 'Recorded Latency' distribution"):
        parse(text)


def test_truncated_output_names_missing_lines() -> None:
    lines = _text("readme_latency.wrk2.txt").splitlines()
    with pytest.raises(LoadOutputError, match="no requests_per_sec, transfer_per_sec line"):
        parse("\n".join(lines[:-2]))
    with pytest.raises(LoadOutputError, match="the recorded latency block is incomplete before"):
        parse("\n".join(lines[:40] + lines[-3:]))


def test_empty_output_fails() -> None:
    with pytest.raises(LoadOutputError, match="empty output"):
        parse("\n\n")


def test_wrk_output_is_not_wrk2_output_and_vice_versa() -> None:
    wrk_text = (FIXTURES.parent / "wrk" / "normal_latency.wrk.txt").read_text()
    with pytest.raises(LoadOutputError, match="line 6 is not wrk2 output"):  # wrk's "Latency Distribution"
        parse(wrk_text)
    with pytest.raises(LoadOutputError, match="line 3 is not wrk output"):  # a calibration line
        parse_output("wrk", _text("seed001_epoll.wrk2.txt"))


def test_dispatch_and_file_name() -> None:
    assert tool_from_filename(Path("epoll-c100-lt1-d5s-r01.wrk2.txt")) == "wrk2"
    assert parse_output("wrk2", _text("seed001_reactor.wrk2.txt")) == parse_file(FIXTURES / "seed001_reactor.wrk2.txt")


def test_command_line_parse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from archbench.cli.main import main

    fixture = FIXTURES / "hopeit_u_latency.wrk2.txt"
    assert main(["parse", str(fixture)]) == 0
    assert json.loads(capsys.readouterr().out) == parse_file(fixture)
    renamed = tmp_path / "output.txt"
    renamed.write_text(fixture.read_text())
    assert main(["parse", "--tool", "wrk2", str(renamed)]) == 0
    assert json.loads(capsys.readouterr().out) == parse_file(fixture)
    assert main(["parse", "--tool", "wrk", str(fixture)]) == 1
    assert capsys.readouterr().err.startswith("error: line 3 is not wrk output: '  Thread calibration")
