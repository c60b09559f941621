"""idle_holder parser: every real fixture's flags and ready line, the JSON kept field for field, the ready
line and stderr text around the object tolerated, anything else failing loudly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archbench.parse import LoadOutputError
from archbench.parse.idle_holder import FIELDS, parse

FIXTURES = Path(__file__).parent / "fixtures" / "idle_holder"

# (ready_line, flags, exit_status) of every fixture, written out by hand from the file.
EXPECTED = {
    "held.idle_holder.txt": (True, [], 0),
    "thread_per_conn.idle_holder.txt": (True, [], 0),
    "closed.idle_holder.txt": (True, ["closed_by_server"], 4),
    "not_http.idle_holder.txt": (False, ["not_all_established", "first_request_failures", "not_held"], 3),
    "refused.idle_holder.txt": (False, ["not_all_established", "connect_failures", "not_held"], 3),
    "interrupted.idle_holder.txt": (True, [], 0),
}

# The held run's complete record, written out from its file.
HELD = {
    "tool": "idle_holder",
    "host": "127.0.0.1",
    "port": 46189,
    "requested": 500,
    "sources": 2,
    "in_flight": 64,
    "connect_timeout_s": 5,
    "response_timeout_s": 5,
    "duration_s": 1,
    "path": "/",
    "nofile_soft": 20000,
    "nofile_hard": 20000,
    "attempted": 500,
    "connected": 500,
    "established": 500,
    "all_established_s": 0.024669,
    "connect_failures": {},
    "first_request_failures": {},
    "held_s": 1.00053,
    "closed_by_server": {"count": 0, "by_reason": {}, "first_s": None, "last_s": None, "per_second": []},
    "unexpected_bytes": 0,
    "open_at_end": 500,
    "interrupted": False,
    "stopped_by": "duration",
    "elapsed_s": 1.025199,
    "exit_status": 0,
    "ready_line": True,
    "flags": [],
}


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def _json_object(name: str) -> dict:
    return json.loads(next(line for line in _text(name).splitlines() if line.startswith("{")))


def test_every_fixture_has_expected_values() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_ready_line_flags_and_exit_status(name: str) -> None:
    parsed = parse(_text(name))
    ready_line, flags, exit_status = EXPECTED[name]
    assert (parsed["ready_line"], parsed["flags"], parsed["exit_status"]) == (ready_line, flags, exit_status)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_json_fields_are_kept_as_printed_in_order(name: str) -> None:
    parsed = parse(_text(name))
    assert list(parsed) == [*FIELDS, "ready_line", "flags"]
    assert {key: value for key, value in parsed.items() if key not in ("ready_line", "flags")} == _json_object(name)


def test_held_run_exact_record() -> None:
    assert parse(_text("held.idle_holder.txt")) == HELD


def test_closures_are_kept_with_their_times() -> None:
    closed = parse(_text("closed.idle_holder.txt"))["closed_by_server"]
    assert closed == {
        "count": 50,
        "by_reason": {"eof": 50},
        "first_s": 1.002001,
        "last_s": 1.002403,
        "per_second": [{"second": 1, "closed": 50}],
    }
    refused = parse(_text("refused.idle_holder.txt"))
    assert refused["connect_failures"] == {"ECONNREFUSED": 10} and refused["held_s"] is None
    assert parse(_text("not_http.idle_holder.txt"))["first_request_failures"] == {"bad_response": 20}
    interrupted = parse(_text("interrupted.idle_holder.txt"))
    assert (interrupted["interrupted"], interrupted["stopped_by"], interrupted["duration_s"]) == (True, "signal", None)


def test_stderr_text_around_the_object_is_ignored() -> None:
    text = _text("held.idle_holder.txt")
    merged = "idle_holder: 127.0.0.1:46189, 500 connections\n" + text + "idle_holder: 500 of 500 established\n"
    assert parse(merged) == HELD


def test_ready_line_must_name_the_requested_count() -> None:
    text = _text("held.idle_holder.txt").replace("holding 500 connections", "holding 499 connections")
    assert parse(text)["ready_line"] is False
    object_first = "\n".join(reversed(_text("held.idle_holder.txt").splitlines()))
    assert parse(object_first)["ready_line"] is False  # a ready line after the object is not one


def test_no_json_object_fails_naming_the_line() -> None:
    with pytest.raises(
        LoadOutputError,
        match=r"line 1 is not idle_holder JSON output: 'holding 500 connections'; "
        r"no JSON object found \(did idle_holder run to its end\?\)",
    ):
        parse("holding 500 connections\n")
    with pytest.raises(LoadOutputError, match="empty output: no idle_holder JSON object"):
        parse("")


def test_other_json_and_two_objects_fail() -> None:
    with pytest.raises(
        LoadOutputError, match=r"a JSON object that is not idle_holder's \(its \"tool\" is 'echo_client'\)"
    ):
        parse('{"tool": "echo_client"}\n')
    text = _text("refused.idle_holder.txt")
    with pytest.raises(LoadOutputError, match="line 2: second idle_holder JSON object"):
        parse(text + text)


def test_missing_or_malformed_fields_fail() -> None:
    report = _json_object("held.idle_holder.txt")
    del report["open_at_end"], report["closed_by_server"]
    with pytest.raises(LoadOutputError, match="incomplete idle_holder JSON: no closed_by_server, open_at_end"):
        parse(json.dumps(report))
    report = _json_object("closed.idle_holder.txt")
    del report["closed_by_server"]["first_s"]
    with pytest.raises(LoadOutputError, match="closed_by_server lacks first_s"):
        parse(json.dumps(report))
    report = _json_object("held.idle_holder.txt")
    report["connect_failures"] = 3
    with pytest.raises(LoadOutputError, match="connect_failures is not an object: 3"):
        parse(json.dumps(report))
    report = _json_object("held.idle_holder.txt")
    report["stopped_by"] = "tired"
    with pytest.raises(LoadOutputError, match="unknown idle_holder stopped_by 'tired'"):
        parse(json.dumps(report))
