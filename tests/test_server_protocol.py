"""The servers' line protocol (archbench.measure.server_protocol), read the way every caller reads it."""

from __future__ import annotations

import pytest

from archbench.measure.server_protocol import (
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


@pytest.mark.parametrize("line", ["", "listening on 127.0.0.1", "error: port in use", "listening on h:80 extra"])
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
