"""The servers' line protocol (archbench.measure.server_protocol), read the way every caller reads it."""

from __future__ import annotations

import pytest

from archbench.measure.server_protocol import (
    READY_LINE,
    ReadyLine,
    ShutdownLineError,
    exact_shutdown_stats,
    format_ready_line,
    format_shutdown_line,
    parse_ready_line,
    sanitizer_report,
    shutdown_stats,
)


def test_a_ready_line_round_trips() -> None:
    line = format_ready_line("127.0.0.1", 8080)
    assert line == "listening on 127.0.0.1:8080"
    assert parse_ready_line(line + "\n") == ReadyLine("127.0.0.1", 8080)
    assert parse_ready_line(b"listening on [::1]:9\n") == ReadyLine("[::1]", 9)


def test_a_ready_line_carries_key_value_fields() -> None:
    line = "listening on 127.0.0.1:41234 work_iters_per_us=619.249 work_iterations=12385"
    ready = parse_ready_line(line + "\n")
    assert ready is not None and (ready.host, ready.port) == ("127.0.0.1", 41234)
    assert ready.fields == {"work_iters_per_us": "619.249", "work_iterations": "12385"}
    assert ready.float_field("work_iters_per_us") == 619.249
    assert ready.float_field("work_iterations") == 12385.0
    assert ready.float_field("missing") is None
    assert format_ready_line("127.0.0.1", 41234, {"work_iters_per_us": 619.249, "work_iterations": 12385}) == line
    # what the runner records is the whole line, fields included
    match = READY_LINE.fullmatch(line)
    assert match is not None and match.group(0) == line and match.group("port") == "41234"
    assert parse_ready_line("listening on 127.0.0.1:1 note=a=b").fields == {"note": "a=b"}
    assert parse_ready_line("listening on 127.0.0.1:1 x=1").float_field("x") == 1.0
    assert parse_ready_line("listening on 127.0.0.1:1 x=fast").float_field("x") is None


@pytest.mark.parametrize(
    "line",
    [
        "",
        "listening on 127.0.0.1",
        "error: port in use",
        "listening on h:80 extra",
        "listening on h:80 work_iters_per_us=",
        "listening on h:80 =5",
        "listening on h:80 Key=5",
        "listening on h:80  a=1",
        "listening on h:80 a=1 trailing",
    ],
)
def test_other_lines_are_not_ready_lines(line: str) -> None:
    assert parse_ready_line(line) is None


def test_shutdown_stats_takes_the_last_json_object_line() -> None:
    output = b'listening on 127.0.0.1:1\n{"threads":1}\nnot json {\n{"architecture":"epoll","errors":0}\nbye\n'
    assert shutdown_stats(output) == {"architecture": "epoll", "errors": 0}
    assert shutdown_stats(b"listening on 127.0.0.1:1\n[1, 2]\n") is None


def test_exact_shutdown_stats_wants_one_json_object() -> None:
    assert exact_shutdown_stats(format_shutdown_line({"threads": 2}) + "\n\n") == {"threads": 2}
    for bad in ('{"a":1}\n{"b":2}\n', "", "[1]\n", "{nope\n"):
        with pytest.raises(ShutdownLineError):
            exact_shutdown_stats(bad)


def test_sanitizer_reports_are_recognised_with_their_context() -> None:
    stderr = "line before\n==1==ERROR: AddressSanitizer: heap-use-after-free\n    #0 0x1 in f\n"
    report = sanitizer_report(stderr.encode())
    assert report is not None and report.startswith("line before\n==1==ERROR: AddressSanitizer")
    assert sanitizer_report("io_uring: 2 ring(s)\n") is None
    assert sanitizer_report(None) is None
