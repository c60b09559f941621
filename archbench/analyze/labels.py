"""Names and order of configurations: human labels for architectures and their variants, the family key, and
the canonical sort of tables and figures."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench.analyze.fields import FAMILY_FIELDS, architecture_order, thread_units
from archbench.analyze.values import key_text, number
from archbench.config.servers import upper_bound_architectures


def architecture_rank(architecture: Any, order: tuple[str, ...] | None = None) -> int:
    """Its place in `order` (the registry's canonical order if None); an unknown architecture after them all."""
    order = architecture_order() if order is None else order
    name = key_text(architecture)
    return order.index(name) if name in order else len(order)


def sort_configurations(frame: pd.DataFrame) -> pd.DataFrame:
    """Architecture (canonical order), its variant fields, then pipeline depth and the swept axes ascending."""
    order = architecture_order()
    ranked = frame.assign(
        _rank=[architecture_rank(a, order) for a in frame["architecture"]],
        _name=[key_text(a) for a in frame["architecture"]],
    )
    keys = ["_rank", "_name"] + [
        c
        for c in ("dispatch", "handoff", "trigger", "max_threads", "pipeline", "load_threads", "connections", "threads")
        if c in frame
    ]
    return ranked.sort_values(keys, kind="stable", na_position="first").drop(columns=["_rank", "_name"])


def architecture_label(architecture: str, dispatch: Any = None, handoff: Any = None, short: bool = False) -> str:
    """Human names for the architectures; the thread pool's two dispatch modes are different designs."""
    if architecture == "thread_pool":
        dispatch = key_text(dispatch) or "request"
        handoff = key_text(handoff) or "queue"
        handoff_name = {"queue": "FIFO queue", "stack": "LIFO stack"}.get(handoff, handoff)
        if short:
            return f"pool ({dispatch}, {handoff})"
        return f"thread pool, {dispatch} dispatch, {handoff_name}"
    names = {"blocking": "blocking", "thread_per_conn": "thread-per-connection"}
    if short:
        names["thread_per_conn"] = "thread/conn."
    return names.get(architecture, str(architecture).replace("_", " ") if architecture != "io_uring" else "io_uring")


class Labeller:
    """Names of configurations, knowing the campaign: the epoll trigger is named for epoll always
    ("epoll (edge)") and for the other loops only when the campaign measured more than one."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.multiple_triggers: set[str] = set()
        if "trigger" in frame and not frame.empty:
            for architecture, rows in frame.groupby("architecture"):
                if len({t for t in rows["trigger"].map(key_text) if t}) > 1:
                    self.multiple_triggers.add(str(architecture))

    def family(self, row: Mapping[str, Any]) -> str:
        """The architecture variant without its thread count: "thread pool (request, queue)", "epoll (edge)"."""
        architecture = key_text(row.get("architecture"))
        if architecture == "thread_pool":
            dispatch = key_text(row.get("dispatch")) or "request"
            handoff = key_text(row.get("handoff")) or "queue"
            return f"thread pool ({dispatch}, {handoff})"
        if architecture == "thread_per_conn":
            cap = number(row.get("max_threads"))
            return "thread-per-connection" + (f" (max {cap:.0f})" if not math.isnan(cap) and cap > 0 else "")
        name = architecture_label(architecture)
        trigger = key_text(row.get("trigger"))
        if trigger and (architecture == "epoll" or architecture in self.multiple_triggers):
            name += f" ({trigger})"
        if architecture in upper_bound_architectures():
            # Every table and figure says that it is no correct server, and what it is instead: the cheapest
            # possible one, whose CPU per request is the floor of what a server costs.
            name += " (reference floor)"
        return name

    def variant(self, row: Mapping[str, Any]) -> str:
        """The family with its thread or worker count: "reactor, 2 threads", "nginx, 1 worker"."""
        family = self.family(row)
        units = thread_units().get(key_text(row.get("architecture")))
        threads = number(row.get("threads"))
        if units is None or math.isnan(threads):
            return family
        return f"{family}, {threads:.0f} {units[0] if threads == 1 else units[1]}"


def family_key(row: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(key_text(row.get(f)) for f in FAMILY_FIELDS)
