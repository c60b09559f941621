"""The one JSON object that a client of ours prints among lines of text.

echo_client (`--json`) and idle_holder print exactly one JSON object on one line of stdout; a
capture may hold other lines beside it (echo_client's stderr summary in a merged file,
idle_holder's `holding K connections` ready line). `find_tool_object` returns the object and its
line number, ignoring the other lines, and fails naming the line for anything else: broken JSON,
another tool's object, a second object, text after the object on its line, or no object at all.
"""

from __future__ import annotations

import json
from typing import Any

from archbench.parse.common import LoadOutputError


def find_tool_object(text: str, tool: str, missing_hint: str) -> tuple[dict[str, Any], int]:
    """The one JSON object of `text` whose "tool" is `tool`, and its line number.

    `missing_hint` ends the message when there is no object at all (e.g. "was echo_client run with
    --json?"). Raises LoadOutputError.
    """
    decoder = json.JSONDecoder()
    found: tuple[dict[str, Any], int] | None = None
    first_other: tuple[int, str] | None = None
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    number = 0
    while number < len(lines):
        raw = lines[number]
        stripped = raw.strip()
        number += 1
        if not stripped.startswith("{"):
            if stripped and first_other is None:
                first_other = (number, raw.rstrip("\r\n"))
            continue
        start = offsets[number - 1] + raw.index("{")
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            raise LoadOutputError(
                f"line {number}: not valid {tool} JSON ({error.msg} at column {error.colno}): {raw.rstrip()[:120]!r}"
            ) from None
        if not isinstance(value, dict) or value.get("tool") != tool:
            raise LoadOutputError(
                f'line {number}: a JSON object that is not {tool}\'s (its "tool" is '
                f"{value.get('tool') if isinstance(value, dict) else None!r})"
            )
        if found is not None:
            raise LoadOutputError(f"line {number}: second {tool} JSON object (the first is on line {found[1]})")
        found = (value, number)
        # continue after the object; the rest of its last line must be empty
        while number < len(lines) and offsets[number] < end:
            number += 1
        if text[end : offsets[number]].strip():
            raise LoadOutputError(
                f"line {number}: text after the {tool} JSON object: {text[end : offsets[number]].strip()[:120]!r}"
            )
    if found is None:
        if first_other is None:
            raise LoadOutputError(f"empty output: no {tool} JSON object at all")
        raise LoadOutputError(
            f"line {first_other[0]} is not {tool} JSON output: {first_other[1]!r}; no JSON object found ({missing_hint})"
        )
    return found
