"""Parser of `build/bin/idle_holder` stdout (contracts.md section 9).

idle_holder's stdout is its ready line `holding K connections` (only when all K were established
and answered) and, at the end, exactly one JSON object on one line
(servers_c/clients/idle_report.c `print_idle_json`); its start and summary lines go to stderr.
Lines outside the object are ignored; there must be exactly one object, idle_holder's
(`"tool": "idle_holder"`), with every field of section 9. Anything else fails loudly, naming the
line.

The record is the JSON object as printed, field for field, with `ready_line` (whether stdout
held the ready line before the object) and `flags` at the end, listing why the hold must not be
taken as K idle connections silently:

    not_all_established     fewer connections established (and answered) than requested
    connect_failures        any connect failure (`connect_failures` not empty)
    first_request_failures  any first request that failed (`first_request_failures` not empty)
    closed_by_server        the server closed established connections before the end
    not_held                the hold never began (no ready line: `all_established_s` null)
"""

from __future__ import annotations

import re
from typing import Any

from archbench.parse.common import LoadOutputError
from archbench.parse.tool_json import find_tool_object

TOOL = "idle_holder"
READY_LINE = re.compile(r"holding (?P<connections>\d+) connections")

# Every field of contracts.md section 9, in the order idle_holder prints them.
FIELDS = (
    "tool",
    "host",
    "port",
    "requested",
    "sources",
    "in_flight",
    "connect_timeout_s",
    "response_timeout_s",
    "duration_s",
    "path",
    "nofile_soft",
    "nofile_hard",
    "attempted",
    "connected",
    "established",
    "all_established_s",
    "connect_failures",
    "first_request_failures",
    "held_s",
    "closed_by_server",
    "unexpected_bytes",
    "open_at_end",
    "interrupted",
    "stopped_by",
    "elapsed_s",
    "exit_status",
)
CLOSED_FIELDS = ("count", "by_reason", "first_s", "last_s", "per_second")
STOPPED_BY = ("duration", "signal", "not_established")


def _check(report: dict[str, Any], line: int) -> None:
    missing = [field for field in FIELDS if field not in report]
    if missing:
        raise LoadOutputError(f"line {line}: incomplete idle_holder JSON: no {', '.join(missing)}")
    for field in ("connect_failures", "first_request_failures", "closed_by_server"):
        if not isinstance(report[field], dict):
            raise LoadOutputError(f"line {line}: {field} is not an object: {report[field]!r}")
    closed = report["closed_by_server"]
    missing = [field for field in CLOSED_FIELDS if field not in closed]
    if missing:
        raise LoadOutputError(f"line {line}: closed_by_server lacks {', '.join(missing)}")
    if not isinstance(closed["by_reason"], dict) or not isinstance(closed["per_second"], list):
        raise LoadOutputError(f"line {line}: closed_by_server's by_reason or per_second has the wrong type")
    if report["stopped_by"] not in STOPPED_BY:
        raise LoadOutputError(f"line {line}: unknown idle_holder stopped_by {report['stopped_by']!r}")


def _ready_line(text: str, object_line: int, requested: int) -> bool:
    """Whether a `holding K connections` line (K as requested) comes before the object."""
    for raw in text.splitlines()[: object_line - 1]:
        match = READY_LINE.fullmatch(raw.strip())
        if match and int(match["connections"]) == requested:
            return True
    return False


def flags_of(report: dict[str, Any]) -> list[str]:
    flags = []
    if report["established"] < report["requested"]:
        flags.append("not_all_established")
    if any(report["connect_failures"].values()):
        flags.append("connect_failures")
    if any(report["first_request_failures"].values()):
        flags.append("first_request_failures")
    if report["closed_by_server"]["count"] > 0:
        flags.append("closed_by_server")
    if report["all_established_s"] is None:
        flags.append("not_held")
    return flags


def parse(text: str) -> dict[str, Any]:
    """idle_holder stdout -> its JSON fields + ready_line + flags. Raises LoadOutputError."""
    report, line = find_tool_object(text, TOOL, "did idle_holder run to its end?")
    _check(report, line)
    record: dict[str, Any] = dict(report)
    record["ready_line"] = _ready_line(text, line, report["requested"])
    record["flags"] = flags_of(report)
    return record
