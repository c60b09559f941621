"""Which tool wrote an output, from its content: for `python -m archbench parse FILE` when the name does not say.

Each tool leaves a signature no other one prints:

    httperf      its echoed command line "httperf --..." or its "Total: connections N requests N" line
    wrk2         wrk's "Running 2s test @ URL" with a wrk2-only line: "Thread calibration: mean lat.",
                 "Latency Distribution (HdrHistogram - Recorded Latency)" or the "#[Mean = ..." footer
    wrk          "Running 2s test @ URL" without any of them
    oha          a JSON object with oha's "summary" and "latencyPercentiles" keys (or oha's text summary,
                 "Summary:" then "Success rate:", which the parser then refuses with its own hint)
    echo_client  a JSON object whose "tool" is "echo_client" (stderr lines may surround it)
    open_loop    a JSON object whose "tool" is "open_loop" (stderr lines may surround it)
    iperf3       a JSON object with iperf3 -J's "start", "intervals" and "end" keys

wrk2 prints its calibration lines about 10 s into a run, and its HdrHistogram only with --latency, so a
short wrk2 run without --latency looks like wrk; such a text is wrk's if the wrk parser accepts it, else
wrk2's if the wrk2 parser does. A text matching no signature, or more than one, fails with an error that
names `--tool` and lists the tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from archbench.parse import wrk, wrk2
from archbench.parse.common import LoadOutputError

HTTPERF_SIGNATURE = re.compile(r"^\s*(?:httperf --|Total: connections \d+ requests \d+)", re.M)
WRK_RUNNING = re.compile(r"^\s*Running \S+ test @ \S+", re.M)
WRK2_SIGNATURE = re.compile(
    r"^\s*(?:Thread calibration: mean lat\.|Latency Distribution \(HdrHistogram - Recorded Latency\)|#\[Mean\s*=)",
    re.M,
)
OHA_TEXT_SIGNATURE = re.compile(r"^\s*Summary:\s*\n\s*Success rate:", re.M)
ECHO_CLIENT_SIGNATURE = re.compile(r'^\s*\{\s*"tool"\s*:\s*"echo_client"', re.M)
OPEN_LOOP_SIGNATURE = re.compile(r'^\s*\{\s*"tool"\s*:\s*"open_loop"', re.M)
OHA_KEYS = ("summary", "latencyPercentiles")
IPERF3_KEYS = ("start", "intervals", "end")


class ToolDetectionError(LoadOutputError):
    """The content does not tell which tool wrote it."""


def _json_object(text: str) -> Mapping[str, Any] | None:
    """The text as one JSON object, or None."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _accepts(parse: Callable[[str], Any], text: str) -> bool:
    try:
        parse(text)
    except LoadOutputError:
        return False
    return True


def _wrk_family(text: str) -> str | None:
    """wrk or wrk2 for a text with wrk's "Running ... test @" line (see the module docstring), else None."""
    if not WRK_RUNNING.search(text):
        return None
    if WRK2_SIGNATURE.search(text):
        return "wrk2"
    if not _accepts(wrk.parse, text) and _accepts(wrk2.parse, text):
        return "wrk2"
    return "wrk"


def candidates(text: str) -> list[str]:
    """Every tool whose signature the text carries (normally exactly one)."""
    found: list[str] = []
    family = _wrk_family(text)
    if family is not None:
        found.append(family)
    if HTTPERF_SIGNATURE.search(text):
        found.append("httperf")
    whole = _json_object(text)
    if (whole is not None and all(key in whole for key in OHA_KEYS)) or OHA_TEXT_SIGNATURE.search(text):
        found.append("oha")
    if whole is not None and all(key in whole for key in IPERF3_KEYS):
        found.append("iperf3")
    if ECHO_CLIENT_SIGNATURE.search(text):
        found.append("echo_client")
    if OPEN_LOOP_SIGNATURE.search(text):
        found.append("open_loop")
    return found


def detect_tool(text: str, tools: list[str]) -> str:
    """The one tool among `tools` whose output `text` is; else ToolDetectionError naming --tool."""
    found = [tool for tool in candidates(text) if tool in tools]
    hint = f"name the tool with --tool (one of {', '.join(tools)})"
    if len(found) == 1:
        return found[0]
    if not found:
        if not text.strip():
            raise ToolDetectionError(f"the file is empty: no tool's output to recognise; {hint}")
        raise ToolDetectionError(f"the content is not recognisably the output of any known tool; {hint}")
    raise ToolDetectionError(f"the content looks like the output of several tools ({', '.join(found)}); {hint}")
