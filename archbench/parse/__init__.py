"""Parsers of load-generator output into the record of contracts.md section 3.

One module per tool (wrk, wrk2, oha, echo_client); `parse_output` dispatches on
the tool name, so another parser slots in by adding a module and one entry to
`_parsers()`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from archbench.parse import echo_client, oha, wrk, wrk2
from archbench.parse.common import LoadOutputError

ParsedRecord = dict[str, Any]

__all__ = ["LoadOutputError", "ParsedRecord", "known_tools", "parse_file", "parse_output", "tool_from_filename"]


def _parsers() -> Mapping[str, Callable[[str], ParsedRecord]]:
    # A function rather than a module-level dict: no mutable module state.
    return {"echo_client": echo_client.parse, "oha": oha.parse, "wrk": wrk.parse, "wrk2": wrk2.parse}


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
            f"with tool one of {', '.join(known_tools())}"
        )
    return parts[-2]


def parse_file(path: Path | str, tool: str | None = None) -> ParsedRecord:
    """Parse a stored load-generator output; the tool comes from the file name unless given."""
    path = Path(path)
    return parse_output(tool or tool_from_filename(path), path.read_text(encoding="utf-8", errors="replace"))
