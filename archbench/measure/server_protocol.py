"""The line protocol every measured server speaks, in one place.

A server prints one ready line, `listening on HOST:PORT`, once it accepts connections, optionally followed on
the same line by ` key=value` fields (the C servers add their work loop's calibration there with `--work-us`:
`work_iters_per_us=X work_iterations=N`), and after SIGTERM one JSON object of counters (its shutdown line). A server that exits with status 3 at start-up
says that this kernel lacks a feature it needs (e.g. io_uring). The sanitizer builds halt on the first
report, which starts with one of the markers recognised here.

STANDARD LIBRARY ONLY: ctest runs the socket suites (servers_c/tests/*.py) with the system Python, not
the project's virtual environment, with PYTHONPATH set to the repository root.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any

# The fields after the address: ` key=value` each, keys lower-case words, values without spaces.
_READY_FIELD = r"[a-z][a-z0-9_]*=\S+"
READY_LINE = re.compile(rf"listening on (?P<host>\S+):(?P<port>\d+)(?P<fields>(?: {_READY_FIELD})*)")
READY_PREFIX = "listening on "
# Reserved by the servers for "this kernel lacks a feature I need".
EXIT_UNSUPPORTED = 3

# The first line of every report kind we build with (ASan, LSan, UBSan, TSan).
_SANITIZER_MARKERS = re.compile(
    r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: |"
    r"runtime error: |UndefinedBehaviorSanitizer|SUMMARY: (Address|Thread|UndefinedBehavior|Leak)Sanitizer"
)


@dataclass(frozen=True)
class ReadyLine:
    host: str
    port: int
    # The key=value fields after the address, in order (values as printed).
    fields: dict[str, str] = field(default_factory=dict, hash=False)

    def float_field(self, key: str) -> float | None:
        """A numeric field (e.g. `work_iters_per_us`), or None if the line lacks it or it is not a number."""
        try:
            return float(self.fields[key])
        except (KeyError, ValueError):
            return None


def format_ready_line(host: str, port: int, fields: Mapping[str, object] | None = None) -> str:
    extra = "".join(f" {key}={value}" for key, value in (fields or {}).items())
    return f"{READY_PREFIX}{host}:{port}{extra}"


def ready_fields(match: re.Match[str]) -> dict[str, str]:
    """The key=value fields of a READY_LINE match."""
    return dict(item.split("=", 1) for item in match.group("fields").split())


def typed_fields(fields: Mapping[str, str]) -> dict[str, int | float | str]:
    """Ready-line fields with numbers as numbers (an integer as int, a finite decimal as float), the rest as text:
    what a trial record keeps (`server.ready_fields`)."""
    out: dict[str, int | float | str] = {}
    for key, text in fields.items():
        if re.fullmatch(r"-?\d+", text):
            out[key] = int(text)
            continue
        try:
            number = float(text)
        except ValueError:
            out[key] = text
            continue
        out[key] = number if math.isfinite(number) else text
    return out


def parse_ready_line(line: str | bytes) -> ReadyLine | None:
    """The address (and fields) a ready line announces, or None if `line` is not one."""
    text = line.decode(errors="replace") if isinstance(line, bytes) else line
    match = READY_LINE.fullmatch(text.strip())
    if match is None:
        return None
    return ReadyLine(match.group("host"), int(match.group("port")), ready_fields(match))


def read_first_line(stdout: IO[bytes], timeout_s: float) -> str:
    """The first complete line of a server's stdout (decoded, stripped); "" at EOF."""
    deadline = time.monotonic() + timeout_s
    line = b""
    while time.monotonic() < deadline and not line.endswith(b"\n"):
        chunk = stdout.readline()
        if not chunk:
            break
        line += chunk
    return line.decode(errors="replace").strip()


def format_shutdown_line(stats: dict[str, Any]) -> str:
    """The one JSON line a server prints at shutdown, compact like the C servers'."""
    return json.dumps(stats, separators=(",", ":"))


def output_lines(output: str | bytes) -> list[str]:
    """The non-blank lines of a server's output."""
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    return [line for line in text.splitlines() if line.strip()]


def shutdown_stats(output: str | bytes) -> dict[str, Any] | None:
    """The server's shutdown JSON line: the last output line that is a JSON object (None if none is).

    Lenient on purpose: the runner merges stderr into the output it keeps, so other lines may follow."""
    for line in reversed(output_lines(output)):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


class ShutdownLineError(ValueError):
    """The output after the ready line is not exactly one JSON object."""


def exact_shutdown_stats(output_after_ready: str | bytes) -> dict[str, Any]:
    """The shutdown line of a server whose stdout after the ready line must be that line alone
    (what the test suites check); raises ShutdownLineError otherwise."""
    lines = output_lines(output_after_ready)
    if len(lines) != 1:
        raise ShutdownLineError(f"expected one JSON line at shutdown, got {lines!r}")
    try:
        value = json.loads(lines[0])
    except ValueError as error:
        raise ShutdownLineError(f"the shutdown line is not JSON ({error}): {lines[0]!r}") from None
    if not isinstance(value, dict):
        raise ShutdownLineError(f"the shutdown line is not a JSON object: {lines[0]!r}")
    return value


def sanitizer_report(stderr: str | bytes | None, context_lines: int = 12) -> str | None:
    """The start of the first sanitizer report in stderr, or None if there is none.

    A server that reports and exits is caught by its exit status; this also catches a report from a
    process whose exit status nobody checks (a server killed at the end of a case, a prefork worker,
    a client) and says what the report was."""
    if not stderr:
        return None
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _SANITIZER_MARKERS.search(line):
            return "\n".join(lines[max(0, i - 1) : i + context_lines])
    return None
