"""Which correct server was fastest at each pipeline depth, said only where the server set the rate.

Where the load generator bounded the configuration with the highest mean in half or more of its trials
(archbench.analyze.client_bound), its mean is the load generator's rate, not the server's, so no
server is named the fastest at that depth: the sentence says that the load generator set the rate there. Elsewhere the
fastest correct server is named with its runner-up and the trials the load generator bounded. pong, where measured,
is the reference floor (archbench.studies.architectures.floor), never an upper bound.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from archbench.analyze.analysis import CLIENT_BOUND_THRESHOLD, REFERENCE_ARCHITECTURE, Comparison, Labeller
from archbench.analyze.client_bound import client_set_rate, trial_count
from archbench.render.common import client_bound_rule
from archbench.render.latex import (
    escape,
    format_count,
    format_interval,
    format_percent,
    interval_of,
    is_missing,
)
from archbench.studies.architectures.floor import floor_facts, interval_text

# What set the rate at a depth: nothing measured, one server only, the load generator, or the server.
NONE, SINGLE, CLIENT, SERVER = "none", "single", "client", "server"


def _client_bound_clause(row: pd.Series, threshold: float = CLIENT_BOUND_THRESHOLD) -> dict[str, Any]:
    """How much of a server-set rate the load generator bounded: some trials (fewer than half), none, or unknown."""
    bound = trial_count(row.get("n_client_bound"))
    utilisation = row.get("load_busy_share_mean")
    kind = "part" if bound else ("unknown" if is_missing(utilisation) else "server")
    return {
        "kind": kind,
        "trials": format_count(trial_count(row.get("n"))),
        "bound": format_count(bound),
        "rule": client_bound_rule(threshold),
        "utilisation": format_percent(utilisation),
    }


def _runner_up(measured: pd.DataFrame, fastest: pd.Series, labels: Labeller) -> dict[str, Any]:
    """The correct server with the highest mean after `fastest` (`measured`: the correct servers with a mean)."""
    others = measured[measured["config_id"] != fastest["config_id"]]
    if others.empty:
        return {"runner_up": None}
    runner_up = others.loc[pd.to_numeric(others["mean"]).idxmax()]
    best_ci, runner_ci = interval_of(fastest), interval_of(runner_up)
    if best_ci.is_defined and runner_ci.is_defined:
        relation = "overlap" if best_ci.overlaps(runner_ci) else "above"
    else:
        relation = "undefined"
    return {
        "runner_up": escape(labels.variant(runner_up)),
        "runner_relation": relation,
        "runner_interval": format_interval(runner_up["ci95_low"], runner_up["ci95_high"], runner_up.get("n")),
    }


def depth_facts(one: Comparison, labels: Labeller) -> dict[str, Any]:
    """What the sentence of one depth says: `kind` (NONE, SINGLE, CLIENT, SERVER), the configuration with the highest
    mean and, where pong was measured, the floor's facts."""
    top = one.fastest()
    correct = one.ranked_rows
    facts: dict[str, Any] = {
        "pipeline": str(one.pipeline),
        "connections": format_count(one.connections),
        "floor": floor_facts(one, labels),
    }
    if top is None:
        return {**facts, "kind": NONE}
    facts.update(
        name=escape(labels.variant(top)),
        reference=top["architecture"] == REFERENCE_ARCHITECTURE,
        mean=format_count(top["mean"]),
        trials=trial_count(top.get("n")),
        bound=trial_count(top.get("n_client_bound")),
        rule=client_bound_rule(CLIENT_BOUND_THRESHOLD),
    )
    measured = correct[pd.to_numeric(correct["mean"], errors="coerce").notna()]
    if len(measured) < 2:
        return {**facts, "kind": SINGLE}
    if client_set_rate(top):
        client_set = sum(client_set_rate(row) for _, row in measured.iterrows())
        return {**facts, "kind": CLIENT, "client_set": client_set, "correct": len(measured)}
    return {
        **facts,
        "kind": SERVER,
        "interval": interval_text(top),
        "clause": _client_bound_clause(top),
        **_runner_up(measured, top, labels),
    }


def fastest_by_depth(comparisons: list[Comparison], labels: Labeller) -> dict[str, Any]:
    """The facts of the sentence per depth: the fastest correct server where the server set the rate, else that the
    load generator set it; then pong, the reference floor, where measured."""
    return {"depths": [depth_facts(one, labels) for one in comparisons]}


def fastest_summary(comparisons: list[Comparison], labels: Labeller) -> dict[str, Any]:
    """The facts of the abstract's sentence (`fastest_summary` of sentences.tex.j2, which the abstract renders from
    `studies.architectures.fastest_summary`): per depth with two or more correct servers, the fastest where the server
    set the rate (with its share of pong's rate), else that the load generator set it."""
    parts = []
    for one in comparisons:
        facts = depth_facts(one, labels)
        if facts["kind"] not in (CLIENT, SERVER):
            continue
        floor = facts["floor"]
        share_of_floor = floor is not None and facts["kind"] == SERVER and floor.get("top_share") is not None
        parts.append(
            {
                **facts,
                "share": floor["top_share"] if share_of_floor else None,
                "above": bool(share_of_floor and floor["above"]),
            }
        )
    return {"parts": parts}
