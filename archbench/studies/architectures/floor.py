"""pong, the reference floor of the architecture comparison: what the comparison says of it at each depth.

pong answers every request terminator with the same bytes and parses nothing (servers_c/pong/pong.c): no correct
server, but the cheapest possible one, so its server CPU time per request is the floor of what a server costs. Source
002 called its own pong an upper bound; its throughput bounds the correct servers' only where the servers set the
rate. Where a correct server serves more than pong, the rate was not the servers': the load generator or noise set
it. So this study never calls pong an upper bound: every label names it the reference floor (archbench.analyze.labels).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench.analyze.analysis import Comparison, Labeller, key_text
from archbench.analyze.client_bound import trial_count
from archbench.analyze.fields import thread_units
from archbench.analyze.published_compare import summary_ratio
from archbench.analyze.values import number
from archbench.render.latex import MISSING, escape, format_count, format_decimal, format_interval


def thread_text(row: Mapping[str, Any]) -> str | None:
    """'1 thread', '2 threads' for the floor's loops; None without a thread count."""
    threads = number(row.get("threads"))
    if threads != threads:  # NaN: run without a thread count
        return None
    units = thread_units().get(key_text(row.get("architecture")), ("thread", "threads"))
    return f"{threads:.0f} {units[0] if threads == 1 else units[1]}"


def interval_text(row: pd.Series) -> str | None:
    """The row's 95 % interval as the sentences print it; None where it is undefined."""
    text = format_interval(row["ci95_low"], row["ci95_high"], row.get("n"))
    return None if text == MISSING else text


def floor_facts(one: Comparison, labels: Labeller) -> dict[str, Any] | None:
    """What the comparison says of the floor at one depth: its rate, its CPU per request against the cheapest
    correct server's, and the correct servers whose mean throughput exceeds its own (None where not measured)."""
    floor = one.upper_bound
    if floor is None:
        return None
    correct = one.ranked_rows[pd.to_numeric(one.ranked_rows["mean"], errors="coerce").notna()]
    facts: dict[str, Any] = {
        "threads": thread_text(floor),
        "mean": format_count(floor["mean"]),
        "interval": interval_text(floor),
        "trials": trial_count(floor.get("n")),
        "bound": trial_count(floor.get("n_client_bound")),
        "cpu": None,
        "above": 0,
        "top_share": None,
    }
    floor_cpu = number(floor.get("server_cpu_us_per_request"))
    costs = pd.to_numeric(correct.get("server_cpu_us_per_request", pd.Series(dtype=float)), errors="coerce").dropna()
    if floor_cpu == floor_cpu and floor_cpu > 0 and not costs.empty:
        cheapest = correct.loc[costs.idxmin()]
        facts.update(
            cpu=format_decimal(floor_cpu, 2),
            cheapest=escape(labels.variant(cheapest)),
            cheapest_ratio=format_decimal(costs.min() / floor_cpu, 2),
            cheaper=bool(costs.min() < floor_cpu),
        )
    if correct.empty:
        return facts
    means = pd.to_numeric(correct["mean"])
    top = correct.loc[means.idxmax()]
    share = summary_ratio(top, floor)
    above = correct[means > float(floor["mean"])]
    facts.update(
        above=len(above),
        correct=len(correct),
        top_share=format_decimal(share.value, 2),
        top_share_interval=None
        if share.low != share.low
        else f"{format_decimal(share.low, 2)}--{format_decimal(share.high, 2)}",
        top_name=escape(labels.variant(top)),
    )
    return facts
