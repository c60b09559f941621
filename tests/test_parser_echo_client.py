"""echo_client --json parser: every real fixture's flags and RTTs in seconds exactly, the JSON kept field for field,
stderr text around the object tolerated, anything else failing loudly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archbench.parse import LoadOutputError, parse_file, parse_output, tool_from_filename
from archbench.parse.echo_client import FIELDS, parse, seconds_from_ns

FIXTURES = Path(__file__).parent / "fixtures" / "echo_client"
NO_RTT = {
    "mean": None,
    "min": None,
    "max": None,
    "percentiles": {"50": None, "90": None, "99": None, "99.9": None, "99.99": None},
}

# rtt_s and flags of every fixture, written out by hand from the rtt_ns and counters in the file.
EXPECTED = {
    "normal.echo_client.txt": (
        {
            "mean": 0.0039192698,
            "min": 0.00018114,
            "max": 0.04024125,
            "percentiles": {
                "50": 0.000950271,
                "90": 0.010354687,
                "99": 0.020709375,
                "99.9": 0.04024125,
                "99.99": 0.04024125,
            },
        },
        [],
    ),
    "verify_errors.echo_client.txt": (
        {
            "mean": 0.0025264902,
            "min": 0.000029915,
            "max": 0.009935369,
            "percentiles": {
                "50": 0.000071679,
                "90": 0.009935369,
                "99": 0.009935369,
                "99.9": 0.009935369,
                "99.99": 0.009935369,
            },
        },
        ["verify_errors"],
    ),
    "connect_refused.echo_client.txt": (NO_RTT, ["connect_failures", "not_all_connected", "no_echoes"]),
    "closed_early.echo_client.txt": (
        {
            "mean": 0.0008628062,
            "min": 0.000017857,
            "max": 0.037231961,
            "percentiles": {
                "50": 0.000038911,
                "90": 0.000118783,
                "99": 0.037224447,
                "99.9": 0.037231961,
                "99.99": 0.037231961,
            },
        },
        ["closed_early"],
    ),
    "unanswered_rate.echo_client.txt": (
        {
            "mean": 0.003312144,
            "min": 0.000107745,
            "max": 0.021729179,
            "percentiles": {
                "50": 0.002260991,
                "90": 0.007733247,
                "99": 0.015335423,
                "99.9": 0.021729179,
                "99.99": 0.021729179,
            },
        },
        ["unanswered"],
    ),
    "max_conns.echo_client.txt": (
        {
            "mean": 0.001205832,
            "min": 0.000034701,
            "max": 0.007849066,
            "percentiles": {
                "50": 0.001196031,
                "90": 0.002883583,
                "99": 0.006946815,
                "99.9": 0.007849066,
                "99.99": 0.007849066,
            },
        },
        [],
    ),
    # max_conns mode: no not_all_connected (connections is the cap's default, not a target), but the refusal shows.
    "max_conns_refused.echo_client.txt": (NO_RTT, ["connect_failures", "no_echoes"]),
    "stdout_and_stderr.echo_client.txt": (
        {
            "mean": 0.0005381474,
            "min": 0.000071647,
            "max": 0.009500085,
            "percentiles": {
                "50": 0.000120831,
                "90": 0.001490943,
                "99": 0.006488063,
                "99.9": 0.009306111,
                "99.99": 0.009500085,
            },
        },
        [],
    ),
}

# The normal run's complete record, written out from its file.
NORMAL = {
    "tool": "echo_client",
    "mode": "throughput",
    "host": "127.0.0.1",
    "port": 39891,
    "connections": 100,
    "threads": 1,
    "duration_s": 2,
    "size": 64,
    "depth": 1,
    "rate": 0,
    "connect_rate": 0,
    "connect_timeout_s": 5,
    "sources": 0,
    "seed": 1,
    "nofile_soft": 20000,
    "nofile_hard": 20000,
    "elapsed_s": 2.007632,
    "window_s": 2.007256,
    "interrupted": False,
    "connected": 100,
    "all_connected_s": 0.011757,
    "open_at_end": 100,
    "not_attempted": 0,
    "connect_errors": {},
    "closed_early": {},
    "bytes_sent": 3266880,
    "bytes_received": 3266880,
    "echoes": 51045,
    "window_echoes": 50933,
    "echoes_per_sec": 25374.447,
    "unanswered_messages": 0,
    "due_unsent_messages": 0,
    "verify_errors": 0,
    "first_verify_error": None,
    "rtt_ns": {
        "count": 51045,
        "mean": 3919269.8,
        "min": 181140,
        "max": 40241250,
        "percentiles": {"50": 950271, "90": 10354687, "99": 20709375, "99.9": 40241250, "99.99": 40241250},
    },
    "rtt_s": EXPECTED["normal.echo_client.txt"][0],
    "series": [
        {"second": 1.003, "bytes_sent": 1533504, "bytes_received": 1527104, "echoes": 23861, "open_connections": 100},
        {"second": 2.007, "bytes_sent": 1732608, "bytes_received": 1732608, "echoes": 27072, "open_connections": 100},
    ],
    "max_conns": None,
    "exit_status": 0,
    "flags": [],
}


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def _json_object(name: str) -> dict:
    line = next(line for line in _text(name).splitlines() if line.startswith("{"))
    return json.loads(line)


def test_every_fixture_has_expected_values() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_rtt_in_seconds_and_flags(name: str) -> None:
    parsed = parse_file(FIXTURES / name)
    rtt_s, flags = EXPECTED[name]
    assert parsed["rtt_s"] == rtt_s
    assert parsed["flags"] == flags


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_json_fields_are_kept_as_printed_in_order(name: str) -> None:
    parsed = parse_file(FIXTURES / name)
    report = _json_object(name)
    assert list(parsed) == [
        *FIELDS[: FIELDS.index("rtt_ns") + 1],
        "rtt_s",
        *FIELDS[FIELDS.index("rtt_ns") + 1 :],
        "flags",
    ]
    assert {key: value for key, value in parsed.items() if key not in ("rtt_s", "flags")} == report


def test_normal_run_exact_record() -> None:
    assert parse_file(FIXTURES / "normal.echo_client.txt") == NORMAL


def test_failure_details_are_kept() -> None:
    verify = parse_file(FIXTURES / "verify_errors.echo_client.txt")
    assert verify["verify_errors"] == 4 and verify["exit_status"] == 1
    assert verify["first_verify_error"] == {
        "connection": 0,
        "offset": 4999,
        "expected": 9,
        "got": 246,
        "at_s": 0.020293,
    }
    refused = parse_file(FIXTURES / "connect_refused.echo_client.txt")
    assert refused["connect_errors"] == {"ECONNREFUSED": 10} and refused["connected"] == 0
    assert refused["all_connected_s"] is None and refused["rtt_ns"]["count"] == 0
    closed = parse_file(FIXTURES / "closed_early.echo_client.txt")
    assert closed["closed_early"] == {"eof": 5} and closed["open_at_end"] == 0
    unanswered = parse_file(FIXTURES / "unanswered_rate.echo_client.txt")
    assert (unanswered["rate"], unanswered["depth"]) == (100, 4)
    assert (unanswered["unanswered_messages"], unanswered["due_unsent_messages"]) == (8, 192)


def test_max_conns_block() -> None:
    held = parse_file(FIXTURES / "max_conns.echo_client.txt")
    assert held["mode"] == "max_conns"
    assert held["max_conns"] == {
        "cap": 200,
        "reached": 200,
        "alive_at_end": 200,
        "stop_reason": "cap_reached",
        "stop_s": 0.099673,
        "echo_timeouts": 0,
        "server_pid": 27244,
        "server_rss_before_bytes": 1511424,
        "server_rss_after_bytes": 2584576,
        "server_rss_per_conn_bytes": 5365.8,
    }
    refused = parse_file(FIXTURES / "max_conns_refused.echo_client.txt")
    assert refused["max_conns"]["stop_reason"] == "connect_ECONNREFUSED" and refused["max_conns"]["reached"] == 0
    assert refused["max_conns"]["server_pid"] is None and refused["exit_status"] == 0


def test_stderr_text_around_the_object_is_ignored() -> None:
    text = _text("stdout_and_stderr.echo_client.txt")
    assert text.startswith("echo_client: 127.0.0.1:")  # the real merged capture: text summary first
    object_only = _json_object("stdout_and_stderr.echo_client.txt")
    parsed = parse(text)
    assert parsed["rate"] == 100 and parsed["echoes"] == 1996
    assert {k: v for k, v in parsed.items() if k not in ("rtt_s", "flags")} == object_only
    assert parse(json.dumps(object_only) + "\n" + text.split("{")[0]) == parsed  # text after the object too


def test_pretty_printed_object_parses() -> None:
    report = _json_object("normal.echo_client.txt")
    assert parse(json.dumps(report, indent=2)) == NORMAL


def test_seconds_from_ns_is_exact() -> None:
    assert seconds_from_ns(294938.2) == 0.0002949382
    assert seconds_from_ns(24475) == 0.000024475
    assert seconds_from_ns(3919269.8) == 0.0039192698
    with pytest.raises(LoadOutputError):
        seconds_from_ns("12")  # type: ignore[arg-type]


def test_flags_all_at_once() -> None:
    report = _json_object("normal.echo_client.txt")
    report.update(
        verify_errors=1,
        connect_errors={"ETIMEDOUT": 1},
        closed_early={"ECONNRESET": 2},
        due_unsent_messages=3,
        connected=99,
        echoes=0,
    )
    assert parse(json.dumps(report))["flags"] == [
        "verify_errors",
        "connect_failures",
        "closed_early",
        "unanswered",
        "not_all_connected",
        "no_echoes",
    ]


def test_no_json_object_fails_naming_the_line() -> None:
    with pytest.raises(
        LoadOutputError,
        match=r"line 1 is not echo_client JSON output: 'hello world'; "
        r"no JSON object found \(was echo_client run with --json\?\)",
    ):
        parse("hello world\n")
    text_only = _text("stdout_and_stderr.echo_client.txt").split("{")[0]
    with pytest.raises(LoadOutputError, match=r"line 1 is not echo_client JSON output: 'echo_client: 127"):
        parse(text_only)


def test_empty_output_fails() -> None:
    with pytest.raises(LoadOutputError, match="empty output"):
        parse("\n")


def test_broken_json_fails_naming_the_line() -> None:
    text = "text line\n" + _text("normal.echo_client.txt")[:200] + "\n"
    with pytest.raises(LoadOutputError, match=r"line 2: not valid echo_client JSON"):
        parse(text)


def test_other_json_fails() -> None:
    with pytest.raises(
        LoadOutputError, match=r"line 1: a JSON object that is not echo_client's \(its \"tool\" is 'wrk'\)"
    ):
        parse('{"tool": "wrk"}\n')
    with pytest.raises(LoadOutputError, match="a JSON object that is not echo_client's"):
        parse('{"architecture":"epoll","threads":1}\n')


def test_two_objects_fail() -> None:
    text = _text("normal.echo_client.txt")
    with pytest.raises(LoadOutputError, match="line 2: second echo_client JSON object"):
        parse(text + text)


def test_text_after_the_object_on_its_line_fails() -> None:
    with pytest.raises(LoadOutputError, match=r"line 1: text after the echo_client JSON object: 'garbage'"):
        parse(_text("normal.echo_client.txt").rstrip("\n") + " garbage\n")


def test_missing_fields_fail() -> None:
    report = _json_object("normal.echo_client.txt")
    del report["verify_errors"], report["series"]
    with pytest.raises(LoadOutputError, match="incomplete echo_client JSON: no verify_errors, series"):
        parse(json.dumps(report))
    report = _json_object("max_conns.echo_client.txt")
    del report["max_conns"]["stop_reason"]
    with pytest.raises(LoadOutputError, match="max_conns lacks stop_reason"):
        parse(json.dumps(report))


def test_dispatch_and_file_name() -> None:
    assert tool_from_filename(Path("epoll-echo-c100-r01.echo_client.txt")) == "echo_client"
    assert parse_output("echo_client", _text("normal.echo_client.txt")) == NORMAL


def test_command_line_parse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from archbench.cli.main import main

    fixture = FIXTURES / "max_conns.echo_client.txt"
    assert main(["parse", str(fixture)]) == 0
    assert json.loads(capsys.readouterr().out) == parse_file(fixture)
    renamed = tmp_path / "output.txt"
    renamed.write_text(fixture.read_text())
    assert main(["parse", "--tool", "echo_client", str(renamed)]) == 0
    assert json.loads(capsys.readouterr().out)["max_conns"]["reached"] == 200
    assert main(["parse", "--tool", "oha", str(fixture)]) == 1
    assert (
        capsys.readouterr().err == "error: incomplete oha JSON: no summary, latencyPercentiles, rps, details, "
        "statusCodeDistribution, errorDistribution\n"
    )
