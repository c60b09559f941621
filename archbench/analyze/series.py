"""Series: what one line of a figure or one block of a table shows, the configurations that differ only in the
swept axis (threads or connections)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench.analyze.fields import FAMILY_FIELDS, ORIGINAL_ARCHITECTURES, SERIES_FIELDS, thread_units
from archbench.analyze.labels import Labeller, architecture_label
from archbench.analyze.values import is_nan, key_text


@dataclass(frozen=True)
class Series:
    key: tuple[Any, ...]
    label: str
    rows: pd.DataFrame  # summary rows, sorted by the swept axis

    @property
    def first(self) -> pd.Series:
        return self.rows.iloc[0]


def series_of(summary: pd.DataFrame, swept: str, min_points: int = 2) -> list[Series]:
    """Groups of configurations that differ only in `swept` ("threads" or "connections").

    The other swept axis is part of the key, so a pool-size series has one
    connection count and a connection series one pool size.
    """
    if summary.empty or swept not in summary:
        return []
    other = "connections" if swept == "threads" else "threads"
    key_fields = [f for f in SERIES_FIELDS if f in summary] + [other]
    varying = _varying_fields(summary)
    labels = Labeller(summary)
    units = thread_units()
    keyed = summary.assign(_key=[tuple(key_text(row[f]) for f in key_fields) for _, row in summary.iterrows()])
    series = []
    for key, rows in keyed.groupby("_key", sort=False):
        rows = rows.drop(columns="_key").sort_values(swept, kind="stable")
        if rows[swept].nunique() < min_points:
            continue
        first = rows.iloc[0]
        architecture = key_text(first["architecture"])
        if architecture in ORIGINAL_ARCHITECTURES:
            label = architecture_label(architecture, first.get("dispatch"), first.get("handoff"))
        else:
            label = labels.family(first)
        extras = []
        if other == "connections":
            extras.append(f"{int(first['connections'])} connections")
        elif architecture == "thread_pool":
            extras.append(f"N = {int(first['threads'])}")
        elif architecture in units and not is_nan(first.get("threads")):
            label = labels.variant(first)
        extras += [_describe_field(f, first[f]) for f in varying if f in first.index]
        if extras:
            label += " (" + ", ".join(extras) + ")"
        series.append(Series(key=key, label=label, rows=rows))
    return series


def main_pool_series(summary: pd.DataFrame) -> Series | None:
    """The pool-size sweep the report leads with: request dispatch with a FIFO queue
    (source 000's design) if measured, without pipelining, most pool sizes first, then most connections."""
    candidates = [s for s in series_of(summary, "threads") if s.first["architecture"] == "thread_pool"]
    if not candidates:
        return None

    def preference(one: Series) -> tuple[int, int, int, int, float]:
        first = one.first
        return (
            int(key_text(first.get("pipeline")) in ("", "1")),
            int(key_text(first.get("dispatch")) == "request"),
            int(key_text(first.get("handoff")) in ("queue", "")),
            len(one.rows),
            float(first["connections"]),
        )

    return max(candidates, key=preference)


def _varying_fields(summary: pd.DataFrame) -> list[str]:
    # Only fields that differ within the campaign need to appear in labels; the family fields are in the name.
    ignored = set(FAMILY_FIELDS)
    return [f for f in SERIES_FIELDS if f in summary and f not in ignored and summary[f].map(key_text).nunique() > 1]


def _describe_field(name: str, value: Any) -> str:
    described = {
        "load_threads": lambda v: f"wrk -t{v}",
        "duration_s": lambda v: f"{v} s",
        "response": lambda v: f"response {v}",
        "pipeline": lambda v: f"pipeline {v}",
        "load_generator": lambda v: f"{v}",
    }
    return described.get(name, lambda v: f"{name} {v}")(key_text(value))
