"""Parsers of load-generator output into the record of contracts.md section 3.

One module per tool (wrk, wrk2, oha, open_loop, httperf, echo_client, and iperf3 for the loopback baseline);
`parse_output` dispatches on the tool name, so another parser slots in by adding a module, one entry
to `_parsers()` and its signature to `archbench.parse.detect`. `parse_file` takes the tool from the
file name `<trial-id>.<tool>.txt`, else from the content (`detect.detect_tool`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from archbench.parse import detect, echo_client, httperf, iperf3, oha, open_loop, wrk, wrk2
from archbench.parse.common import LoadOutputError
from archbench.parse.detect import ToolDetectionError

ParsedRecord = dict[str, Any]

__all__ = [
    "LoadOutputError",
    "ParsedRecord",
    "ToolDetectionError",
    "detect_tool",
    "known_tools",
    "parse_file",
    "parse_output",
    "tool_from_filename",
]


def _parsers() -> Mapping[str, Callable[[str], ParsedRecord]]:
    # A function rather than a module-level dict: no mutable module state.
    return {
        "echo_client": echo_client.parse,
        "httperf": httperf.parse,
        "iperf3": iperf3.parse,
        "oha": oha.parse,
        "open_loop": open_loop.parse,
        "wrk": wrk.parse,
        "wrk2": wrk2.parse,
    }


def known_tools() -> list[str]:
    return sorted(_parsers())


def parse_output(tool: str, text: str) -> ParsedRecord:
    """Parse the verbatim stdout of `tool` (e.g. "wrk") into the contract record."""
    parsers = _parsers()
    if tool not in parsers:
        raise ValueError(f"no parser for load generator {tool!r}; known: {', '.join(sorted(parsers))}")
    return parsers[tool](text)


def tool_from_filename(path: Path) -> str:
    """`<trial-id>.<tool>.txt` -> tool (contracts.md section 2)."""
    name = Path(path).name
    parts = name.split(".")
    if len(parts) < 3 or parts[-1] != "txt" or parts[-2] not in _parsers():
        raise ValueError(
            f"cannot tell the load generator from the file name {name!r}: expected <trial-id>.<tool>.txt "
            f"with tool one of {', '.join(known_tools())}; name it with --tool"
        )
    return parts[-2]


def detect_tool(text: str) -> str:
    """The tool whose output `text` is, from its content; ToolDetectionError (naming --tool) if unclear."""
    return detect.detect_tool(text, known_tools())


def _tool_named_by(path: Path) -> str | None:
    try:
        return tool_from_filename(path)
    except ValueError:
        return None


def parse_file(path: Path | str, tool: str | None = None) -> ParsedRecord:
    """Parse a stored load-generator output: the tool as given, else from the file name
    `<trial-id>.<tool>.txt`, else recognised from the content."""
    path = Path(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    tool = tool or _tool_named_by(path)
    if tool is None:
        try:
            tool = detect_tool(text)
        except ToolDetectionError as error:
            raise ToolDetectionError(
                f"{path.name!r}: its name does not say which tool wrote it (expected <trial-id>.<tool>.txt) and {error}"
            ) from None
    return parse_output(tool, text)
