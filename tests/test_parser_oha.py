"""oha JSON parser: exact values for every real fixture, error messages mapped to socket_errors, loud failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archbench.parse import LoadOutputError, parse_file, parse_output, tool_from_filename
from archbench.parse.oha import error_kind, parse, percentile_key

FIXTURES = Path(__file__).parent / "fixtures" / "oha"
NO_ERRORS = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "other": 0}
KEYS = ["10", "25", "50", "75", "90", "95", "99", "99.9", "99.99"]
NO_PERCENTILES = dict.fromkeys(KEYS)
NO_LATENCY = {"avg": None, "stdev": None, "max": None, "min": None, "percentiles": NO_PERCENTILES}
NO_RPS = {"avg": None, "stdev": None, "max": None, "min": None, "percentiles": NO_PERCENTILES}
NO_TRIPLE = {"avg": None, "min": None, "max": None}
NO_DETAILS = {"dns_dialup": NO_TRIPLE, "dns_lookup": NO_TRIPLE, "first_byte": NO_TRIPLE}
FIELDS = [
    "tool",
    "url",
    "threads",
    "connections",
    "configured_duration_s",
    "duration_s",
    "offered_rate",
    "latency_s",
    "total_requests",
    "bytes_read",
    "socket_errors",
    "non_2xx",
    "requests_per_sec",
    "transfer_per_sec_bytes",
    "success_rate",
    "reported_requests_per_sec",
    "size_per_request_bytes",
    "status_codes",
    "errors",
    "aborted_at_deadline",
    "rps_10ms",
    "details_s",
    "flags",
]


def percentiles(*values: float | None) -> dict:
    return dict(zip(KEYS, values, strict=True))


# The rate-limited run (the runner's own command line), written out completely from the file.
RATE_LIMITED = {
    "tool": "oha",
    "url": None,
    "threads": None,
    "connections": None,
    "configured_duration_s": None,
    "duration_s": 2.001669648,
    "offered_rate": None,
    "latency_s": {
        "avg": 0.00015713565057528825,
        "stdev": None,
        "max": 0.005912338,
        "min": 0.000022684,
        "percentiles": percentiles(
            0.00005394,
            0.000061602,
            0.000076584,
            0.000094851,
            0.000129453,
            0.000242251,
            0.002529162,
            0.005837386,
            0.005912338,
        ),
    },
    "total_requests": 3998,
    "bytes_read": 15992,
    "socket_errors": NO_ERRORS,
    "non_2xx": 0,
    "requests_per_sec": 3998 / 2.001669648,
    "transfer_per_sec_bytes": 7989.330315308853,
    "success_rate": 1.0,
    "reported_requests_per_sec": 1997.3325788272132,
    "size_per_request_bytes": 4,
    "status_codes": {"200": 3998},
    "errors": {},
    "aborted_at_deadline": 0,
    "rps_10ms": {
        "avg": 1999.2209958948847,
        "stdev": 88.93871766592397,
        "max": 2166.977302863025,
        "min": 1807.711516558445,
        "percentiles": percentiles(
            1906.6005132780408,
            1929.493312912162,
            1965.4927179040606,
            2090.9072090926065,
            2133.804477361972,
            2141.0763790458864,
            2155.48156745322,
            2166.977302863025,
            2166.977302863025,
        ),
    },
    "details_s": {
        "dns_dialup": {"avg": 0.00006671846000000001, "min": 0.00002634, "max": 0.00020775},
        "dns_lookup": {"avg": 2.2865400000000007e-6, "min": 6.31e-7, "max": 0.000016685},
        "first_byte": {"avg": 0.00013080301000500244, "min": 0.000015433, "max": 0.005890866},
    },
    "flags": [],
}

# The contract fields of every fixture, written out by hand from the file.
EXPECTED = {
    "rate_limited.oha.txt": {
        k: RATE_LIMITED[k]
        for k in (
            "duration_s",
            "total_requests",
            "bytes_read",
            "socket_errors",
            "non_2xx",
            "requests_per_sec",
            "reported_requests_per_sec",
            "status_codes",
            "errors",
            "aborted_at_deadline",
            "flags",
        )
    },
    "unlimited.oha.txt": {
        "duration_s": 2.002074645,
        "total_requests": 97236,
        "bytes_read": 388944,
        "socket_errors": NO_ERRORS,
        "non_2xx": 0,
        "requests_per_sec": 97236 / 2.002074645,
        "reported_requests_per_sec": 48588.59795409876,
        "status_codes": {"200": 97236},
        "errors": {"aborted due to deadline": 42},
        "aborted_at_deadline": 42,
        "flags": [],
    },
    "server_killed_rate.oha.txt": {
        "duration_s": 2.00090741,
        "total_requests": 1980,
        "bytes_read": 7920,
        "socket_errors": {"connect": 2019, "read": 0, "write": 0, "timeout": 0, "other": 0},
        "non_2xx": 0,
        "requests_per_sec": 1980 / 2.00090741,
        "reported_requests_per_sec": 1998.5932282593726,
        "status_codes": {"200": 1980},
        "errors": {"Connection refused (os error 111)": 2019},
        "aborted_at_deadline": 0,
        "flags": ["socket_errors"],
    },
    "server_killed_unlimited.oha.txt": {
        "duration_s": 2.001224664,
        "total_requests": 51903,
        "bytes_read": 207612,
        "socket_errors": {"connect": 55281, "read": 55, "write": 0, "timeout": 0, "other": 0},
        "non_2xx": 0,
        "requests_per_sec": 51903 / 2.001224664,
        "reported_requests_per_sec": 53608.173999598475,
        "status_codes": {"200": 51903},
        "errors": {
            "Connection refused (os error 111)": 55281,
            "Connection reset by peer (os error 104)": 5,
            "aborted due to deadline": 43,
            "connection error": 50,
        },
        "aborted_at_deadline": 43,
        "flags": ["socket_errors"],
    },
    "connect_refused.oha.txt": {
        "duration_s": 1.001495829,
        "total_requests": 0,
        "bytes_read": 0,
        "socket_errors": {"connect": 100, "read": 0, "write": 0, "timeout": 0, "other": 0},
        "non_2xx": 0,
        "requests_per_sec": 0.0,
        "reported_requests_per_sec": 99.85064051624722,
        "status_codes": {},
        "errors": {"Connection refused (os error 111)": 100},
        "aborted_at_deadline": 0,
        "flags": ["socket_errors", "no_requests"],
    },
    "timeouts_silent_server.oha.txt": {
        "duration_s": 2.156129697,
        "total_requests": 0,
        "bytes_read": 0,
        "socket_errors": {"connect": 0, "read": 0, "write": 0, "timeout": 16, "other": 0},
        "non_2xx": 0,
        "requests_per_sec": 0.0,
        "reported_requests_per_sec": 7.4207038761453505,
        "status_codes": {},
        "errors": {"timeout": 16},
        "aborted_at_deadline": 0,
        "flags": ["socket_errors", "no_requests"],
    },
    "non_2xx.oha.txt": {
        "duration_s": 2.00148768,
        "total_requests": 400,
        "bytes_read": 134000,
        "socket_errors": NO_ERRORS,
        "non_2xx": 400,
        "requests_per_sec": 400 / 2.00148768,
        "reported_requests_per_sec": 199.85134257733728,
        "status_codes": {"404": 400},
        "errors": {},
        "aborted_at_deadline": 0,
        "flags": ["non_2xx"],
    },
}

LATENCY = {
    "rate_limited.oha.txt": RATE_LIMITED["latency_s"],
    "unlimited.oha.txt": {
        "avg": 0.0010257199536797075,
        "stdev": None,
        "max": 0.02435799,
        "min": 0.000062884,
        "percentiles": percentiles(
            0.00018814,
            0.000211395,
            0.000259447,
            0.00109995,
            0.003371158,
            0.004084572,
            0.006847594,
            0.01518618,
            0.020492424,
        ),
    },
    "server_killed_rate.oha.txt": {
        "avg": 0.00016562966868686907,
        "stdev": None,
        "max": 0.003925915,
        "min": 0.000036285,
        "percentiles": percentiles(
            0.000065478,
            0.000075984,
            0.000085908,
            0.000106148,
            0.000137686,
            0.000269582,
            0.002711364,
            0.003894659,
            0.003925915,
        ),
    },
    "server_killed_unlimited.oha.txt": {
        "avg": 0.0009512397872377316,
        "stdev": None,
        "max": 0.014235692,
        "min": 0.000077636,
        "percentiles": percentiles(
            0.000188561,
            0.000194811,
            0.000243564,
            0.000424994,
            0.00332579,
            0.003957302,
            0.007286548,
            0.010384349,
            0.014228812,
        ),
    },
    "connect_refused.oha.txt": NO_LATENCY,
    "timeouts_silent_server.oha.txt": NO_LATENCY,
    "non_2xx.oha.txt": {
        "avg": 0.0009575023300000004,
        "stdev": None,
        "max": 0.008630042,
        "min": 0.000483461,
        "percentiles": percentiles(
            0.000747454,
            0.000820213,
            0.000904399,
            0.001044638,
            0.001148142,
            0.001226519,
            0.001475,
            0.008630042,
            0.008630042,
        ),
    },
}


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_every_fixture_has_expected_values() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.txt")) == sorted(EXPECTED) == sorted(LATENCY)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_contract_fields(name: str) -> None:
    parsed = parse_file(FIXTURES / name)
    assert list(parsed) == FIELDS
    assert {k: parsed[k] for k in EXPECTED[name]} == EXPECTED[name]
    assert parsed["latency_s"] == LATENCY[name]
    for absent in ("url", "threads", "connections", "configured_duration_s", "offered_rate"):
        assert parsed[absent] is None


def test_rate_limited_exact_record() -> None:
    assert parse_file(FIXTURES / "rate_limited.oha.txt") == RATE_LIMITED


def test_no_response_statistics_are_null() -> None:
    parsed = parse_file(FIXTURES / "connect_refused.oha.txt")
    assert parsed["rps_10ms"] == NO_RPS and parsed["details_s"] == NO_DETAILS
    assert parsed["success_rate"] == 0.0 and parsed["size_per_request_bytes"] is None
    assert parsed["transfer_per_sec_bytes"] == 0.0


def test_non_2xx_counts_statuses_outside_2xx_and_3xx() -> None:
    report = json.loads(_text("non_2xx.oha.txt"))
    report["statusCodeDistribution"] = {"200": 5, "204": 1, "301": 2, "404": 3, "503": 4, "101": 1}
    parsed = parse(json.dumps(report))
    assert parsed["non_2xx"] == 8 and parsed["total_requests"] == 16
    assert list(parsed["status_codes"]) == ["101", "200", "204", "301", "404", "503"]


def test_error_messages_to_socket_error_kinds() -> None:
    assert error_kind("Connection refused (os error 111)") == "connect"
    assert error_kind("Cannot assign requested address (os error 99)") == "connect"
    assert error_kind("Too many open files (os error 24)") == "connect"
    assert error_kind("Connection reset by peer (os error 104)") == "read"
    assert error_kind("connection error") == "read"
    assert error_kind("connection closed before message completed") == "read"
    assert error_kind("Broken pipe (os error 32)") == "write"
    assert error_kind("timeout") == "timeout"
    assert error_kind("Redirection limit has reached") == "other"
    report = json.loads(_text("unlimited.oha.txt"))
    report["errorDistribution"] = {"Broken pipe (os error 32)": 2, "something new": 3, "aborted due to deadline": 7}
    parsed = parse(json.dumps(report))
    assert parsed["socket_errors"] == {"connect": 0, "read": 0, "write": 2, "timeout": 0, "other": 3}
    assert parsed["aborted_at_deadline"] == 7 and parsed["flags"] == ["socket_errors"]
    assert parsed["errors"] == report["errorDistribution"]


def test_percentile_keys() -> None:
    assert percentile_key("p99.9") == "99.9" and percentile_key("p50") == "50" and percentile_key("p99.990") == "99.99"
    with pytest.raises(LoadOutputError, match="not an oha percentile name: 'median'"):
        percentile_key("median")


def test_text_output_is_not_json_output() -> None:
    with pytest.raises(
        LoadOutputError,
        match=r"line 2 is not oha JSON output: 'Summary:' "
        r"\(was oha run with --output-format json\?\)",
    ):
        parse("\nSummary:\n  Success rate:\t100.00%\n")


def test_empty_output_fails() -> None:
    with pytest.raises(LoadOutputError, match="empty output"):
        parse("  \n")


def test_truncated_json_fails_naming_the_line() -> None:
    with pytest.raises(LoadOutputError, match=r"line \d+: not valid oha JSON"):
        parse(_text("rate_limited.oha.txt")[:500])


def test_text_after_the_object_fails() -> None:
    with pytest.raises(LoadOutputError, match=r"line 112: text after the oha JSON object: 'Error: x'"):
        parse(_text("rate_limited.oha.txt") + "\nError: x\n")


def test_missing_fields_fail() -> None:
    report = json.loads(_text("rate_limited.oha.txt"))
    del report["errorDistribution"], report["rps"]
    with pytest.raises(LoadOutputError, match="incomplete oha JSON: no rps, errorDistribution"):
        parse(json.dumps(report))
    report = json.loads(_text("rate_limited.oha.txt"))
    del report["summary"]["total"]
    with pytest.raises(LoadOutputError, match="summary has no total"):
        parse(json.dumps(report))


def test_wrong_types_fail() -> None:
    report = json.loads(_text("rate_limited.oha.txt"))
    report["statusCodeDistribution"] = {"OK": 3}
    with pytest.raises(LoadOutputError, match="'OK' is not an HTTP status code"):
        parse(json.dumps(report))
    report = json.loads(_text("rate_limited.oha.txt"))
    report["summary"]["average"] = "fast"
    with pytest.raises(LoadOutputError, match="summary.average is not a number: 'fast'"):
        parse(json.dumps(report))


def test_other_json_is_not_oha_output() -> None:
    echo = (FIXTURES.parent / "echo_client" / "normal.echo_client.txt").read_text()
    with pytest.raises(LoadOutputError, match="incomplete oha JSON: no summary, latencyPercentiles"):
        parse(echo)


def test_dispatch_and_file_name() -> None:
    assert tool_from_filename(Path("epoll-c50-lt1-d2s-oha-r01.oha.txt")) == "oha"
    assert parse_output("oha", _text("rate_limited.oha.txt")) == RATE_LIMITED


def test_command_line_parse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from archbench.cli.main import main

    fixture = FIXTURES / "server_killed_unlimited.oha.txt"
    assert main(["parse", str(fixture)]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == parse_file(fixture) and "NaN" not in out
    renamed = tmp_path / "output.txt"
    renamed.write_text(fixture.read_text())
    assert main(["parse", "--tool", "oha", str(renamed)]) == 0
    assert json.loads(capsys.readouterr().out)["socket_errors"]["connect"] == 55281
    assert main(["parse", str(FIXTURES / "connect_refused.oha.txt")]) == 0
    assert "NaN" not in capsys.readouterr().out  # oha's NaN statistics are null, strict JSON
