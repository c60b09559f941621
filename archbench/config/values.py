"""Parameter values from what a user, a notebook or a file gives: coercions that fail with a ParameterError.

papermill and the command line pass text, profiles and campaign.json pass JSON types; each function here
accepts both where that is meaningful and names the parameter in its error, so that every message a
user sees starts with the parameter to fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any


class ParameterError(ValueError):
    """A parameter value is invalid; `parameter` names it and the message starts with it."""

    def __init__(self, parameter: str, message: str) -> None:
        self.parameter = parameter
        super().__init__(f"{parameter}: {message}")


# --------------------------------------------------------------------------- CPU lists


def parse_cpu_list(text: str | int | Iterable[int], parameter: str) -> tuple[int, ...]:
    """taskset-style "0", "0,2", "1-3" (or an int / list of ints) -> sorted CPU numbers."""
    if isinstance(text, bool):
        raise ParameterError(parameter, f"{text!r} is not a CPU list")
    if isinstance(text, int):
        cpus = {text}
    elif isinstance(text, str):
        cpus = set()
        for part in text.replace(" ", "").split(","):
            match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
            if not match:
                raise ParameterError(parameter, f"{text!r} is not a CPU list like 0 or 0,2 or 1-3")
            low, high = int(match.group(1)), int(match.group(2) or match.group(1))
            if high < low:
                raise ParameterError(parameter, f"{text!r}: range {part} is reversed")
            cpus.update(range(low, high + 1))
    else:
        cpus = set()
        for item in text:
            if isinstance(item, bool) or not isinstance(item, int):
                raise ParameterError(parameter, f"{item!r} is not a CPU number")
            cpus.add(item)
    if not cpus or min(cpus) < 0:
        raise ParameterError(parameter, f"{text!r} names no CPU")
    return tuple(sorted(cpus))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """(0, 1, 2, 5) -> "0-2,5", the form taskset -c takes."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    start = previous = ordered[0]
    for cpu in ordered[1:] + [None]:  # type: ignore[list-item]
        if cpu is not None and cpu == previous + 1:
            previous = cpu
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if cpu is not None:
            start = previous = cpu
    return ",".join(parts)


# --------------------------------------------------------------------------- values


def as_tuple(value: Any, parameter: str) -> tuple[Any, ...]:
    """A list parameter from a list, a single value, or text as papermill's -p passes it:
    JSON ("[1, 2]") or comma-separated ("1,2")."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                raise ParameterError(parameter, f"{value!r} is not a JSON list") from None
        elif "," in text and not text.startswith("{"):
            value = [part.strip() for part in text.split(",") if part.strip()]
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


def positive_ints(values: Any, parameter: str) -> tuple[int, ...]:
    values = as_tuple(values, parameter)
    if not values:
        raise ParameterError(parameter, "must not be empty")
    out = []
    for value in values:
        if isinstance(value, str) and re.fullmatch(r"\d+", value.strip()):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(parameter, f"{value!r} is not a positive integer")
        out.append(value)
    return tuple(dict.fromkeys(out))  # de-duplicated, order kept


def positive_int(value: Any, parameter: str) -> int:
    (number,) = positive_ints((value,), parameter)
    return number


def positive_float(value: Any, parameter: str) -> float:
    if isinstance(value, bool):
        raise ParameterError(parameter, f"{value!r} is not a positive number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParameterError(parameter, f"{value!r} is not a positive number") from None
    if not number > 0 or number == float("inf"):
        raise ParameterError(parameter, f"{value!r} is not a positive number")
    return number


def boolean(value: Any, parameter: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "yes", "on", "1", "false", "no", "off", "0"):
        return value.lower() in ("true", "yes", "on", "1")
    if value in (0, 1):
        return bool(value)
    raise ParameterError(parameter, f"{value!r} is not true or false")


def non_negative_int(value: Any, parameter: str) -> int:
    if isinstance(value, str) and re.fullmatch(r"\d+", value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError(parameter, f"{value!r} is not a non-negative integer")
    return value


def positive_floats(values: Any, parameter: str) -> tuple[float, ...]:
    return tuple(dict.fromkeys(positive_float(value, parameter) for value in as_tuple(values, parameter)))
