"""The latency section's facts: Python computes each sentence's facts (numbers formatted, names escaped,
choices as booleans and small lists) for the section template (latency_sentences), and its numbers as macros
(latency_macros); the sentences are paper/templates/latency/sentences.tex.j2's."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench.analyze.analysis import key_text
from archbench.analyze.open_loop_trials import SETUP_FIXED, SETUP_SWEEP, requests_counted_throughout
from archbench.render.common import (
    and_list,
    campaign_facts,
    distinct_values,
    measured_ok_including_disturbed,
    quoted_load_command,
    tt,
)
from archbench.render.latex import (
    MISSING,
    MacroSet,
    campaign_provenance,
    escape,
    format_count,
    format_list,
    format_ms,
    format_percent,
    format_range,
    format_significant,
    is_missing,
)
from archbench.render.prose import Prose
from archbench.studies.latency.data import (
    SOURCE_001_RATE,
    SOURCE_001_RESULTS,
    LatencyResults,
    ms_text,
    number_text,
    percent_text,
    rule_words,
)
from archbench.studies.latency.knee import (
    FLOOR_DOMINATES,
    FLOOR_UNMEASURED,
    FLOOR_WELL_UNDER_STATE,
    KNEE,
    KNEE_STATES,
)
from archbench.studies.latency.tables import share

TEMPLATE = "latency/sentences"
MAKE_TARGET = "latency-study"
# The architectures of source 001's set-up, in its order.
SOURCE_001_ORDER = ("blocking", "thread_per_conn", "epoll", "reactor")


def _tools(study: LatencyResults) -> list[str]:
    return sorted({str(t) for t in study.trials["tool"].dropna()})


def tool_facts(study: LatencyResults) -> dict[str, Any]:
    trials = study.trials
    if trials.empty:
        return {"any": False}
    tools = _tools(study)
    versions = []
    for campaign in study.campaigns:
        recorded = campaign_provenance(campaign.meta, campaign.trials).get("tools") or {}
        for tool in tools:
            version = recorded.get(tool)
            if version:
                versions.append(f"\\texttt{{{escape(str(version).splitlines()[0])}}}")
    return {
        "any": True,
        "tools": [{"name": escape(t), "trials": format_count(int((trials["tool"] == t).sum()))} for t in tools],
        "versions": list(dict.fromkeys(versions)),
        "wrk2": "wrk2" in tools,
        "oha": "oha" in tools,
        "open_loop": "open_loop" in tools,
    }


def client_bound_facts(study: LatencyResults) -> dict[str, Any]:
    measured = measured_ok_including_disturbed(study.trials)
    if measured.empty:
        return {"state": "none"}
    bound = measured[measured["client_bound"].astype(bool)]
    return {
        "state": "some" if not bound.empty else "clean",
        "threshold": percent_text(study.criteria.client_bound_busy),
        "bound": format_count(len(bound)),
        "measured": format_count(len(measured)),
        "servers": sorted({escape(s) for s in bound["server"]}),
    }


def _with_check(part: pd.DataFrame, check: str) -> int:
    return int(part["checks"].map(lambda checks: check in str(checks).split(";")).sum())


def checks_facts(study: LatencyResults) -> dict[str, Any]:
    """How many measured trials passed the run checks, per set-up, and which servers fell behind where: not
    `sustained`, with the mean of the ratio that decided it (`kept_up_fraction`, the knee's too), and whether the
    client counted their requests (`counted`: completed over scheduled, else achieved over offered rate)."""
    measured = measured_ok_including_disturbed(study.trials)
    if measured.empty or "usable" not in measured:
        return {"any": False, "setups": []}
    setups = []
    for setup in (SETUP_SWEEP, SETUP_FIXED):
        part = measured[measured["setup"] == setup]
        if part.empty:
            continue
        behind = part[~part["sustained"].astype(bool)]
        setups.append(
            {
                "fixed": setup == SETUP_FIXED,
                "measured": format_count(len(part)),
                "usable": format_count(int(part["usable"].astype(bool).sum())),
                "behind": [
                    {
                        "server": escape(server),
                        "trials": format_count(len(group)),
                        "one": len(group) == 1,
                        "share": share(float(group["kept_up_fraction"].mean())),
                        "counted": bool(group["requests_counted"].astype(bool).all()),
                        "fractions": [format_percent(f) for f in sorted(set(group["rate_fraction"].dropna()))],
                    }
                    for server, group in behind.groupby("server", sort=True)
                ],
            }
        )
    usable = int(measured["usable"].astype(bool).sum())
    sweep = measured[measured["setup"] == SETUP_SWEEP]
    knee_p99 = pd.to_numeric(sweep["knee_p99_s"], errors="coerce")
    own = measured[measured["tool"] == "open_loop"]
    cpu = pd.to_numeric(own["client_cpu_per_request_s"], errors="coerce").dropna()
    busy = pd.to_numeric(own["client_cpu_busy"], errors="coerce").dropna()
    usable_own = own[own["usable"].astype(bool)]
    server_cpu = pd.to_numeric(usable_own["server_cpu_per_request_s"], errors="coerce")
    ratio = (pd.to_numeric(usable_own["client_cpu_per_request_s"], errors="coerce") / server_cpu).dropna()
    return {
        "any": True,
        "measured": format_count(len(measured)),
        "usable": format_count(usable),
        "share": format_percent(usable / len(measured)),
        "setups": setups,
        "client_bound": format_count(int(measured["client_bound"].astype(bool).sum())),
        "sweep": format_count(len(sweep)),
        "knee_counted": format_count(int(knee_p99.notna().sum())),
        "disturbed": format_count(int(sweep["disturbed"].astype(bool).sum())),
        "disturbed_share": "/".join(f"{share * 100:g}" for share in study.interference_shares),
        "knee_behind": format_count(int((knee_p99 == math.inf).sum())),
        "kept_up": percent_text(study.criteria.kept_up_fraction),
        "tolerance": percent_text(1 - study.criteria.kept_up_fraction),
        "counted": requests_counted_throughout(study.trials),
        "trend": format_count(_with_check(measured, "rate_trend")),
        "few_p99_9": format_count(_with_check(measured, "few_samples_p99_9")),
        "open_loop": not own.empty,
        "client_cpu_us": format_significant(float(cpu.median()) * 1e6, 2) if not cpu.empty else None,
        "client_busy_max": format_percent(float(busy.max())) if not busy.empty else None,
        "server_cpu_us": format_significant(float(server_cpu.median()) * 1e6, 2) if server_cpu.notna().any() else None,
        "client_over_server": format_significant(float(ratio.median()), 2) if not ratio.empty else None,
    }


def left_out_facts(study: LatencyResults) -> list[dict[str, Any]]:
    """Architectures of source 001's set-up that the fraction sweep did not offer fractions to, with their share
    of the offered rate achieved there."""
    trials = study.trials
    if trials.empty:
        return []
    swept = set(trials.loc[trials["setup"] == SETUP_SWEEP, "architecture"])
    fixed = study.setup(SETUP_FIXED)
    if not swept or fixed.empty:
        return []
    return [
        {
            "architecture": str(r["architecture"]),
            "server": escape(r["variant"]),
            "achieved": share(r["achieved_fraction_mean"]),
            "connections": format_count(r["connections"]),
        }
        for _, r in fixed.iterrows()
        if r["architecture"] not in swept
    ]


def _ms_range(values: pd.Series) -> str:
    """ "0.25--0.31" (ms), or one value when they round alike."""
    finite = sorted(float(v) for v in values if not is_missing(v) and math.isfinite(float(v)))
    return format_range(finite[0], finite[-1], format_ms) if finite else ""


def floor_facts(study: LatencyResults) -> dict[str, Any]:
    """Each design's floor against the threshold, how many are well under it, and what the client says of itself
    (open_loop's send lag at the floor rates)."""
    table = study.knees
    criteria = study.criteria
    least = format_count(criteria.min_floor_trials)
    if table.empty:
        return {"known": False, "designs": None}
    measured = table[table["floor_state"] != FLOOR_UNMEASURED]
    if measured.empty:
        # Every design lost floor trials to its client or to other work: the client and the machine set those runs.
        machine = bool((table["floor_left_out"] > 0).all())
        return {"known": False, "designs": format_count(len(table)), "least": least, "machine": machine}
    well = table[table["floor_state"] == FLOOR_WELL_UNDER_STATE]
    lag = pd.to_numeric(measured["floor_send_lag_p99_s"], errors="coerce").dropna()
    over = table[table["floor_state"] != FLOOR_WELL_UNDER_STATE]
    over_lag = pd.to_numeric(over["floor_send_lag_p99_s"], errors="coerce").fillna(0.0)
    fractions = sorted(set(measured["floor_fraction"].dropna().round(4)))
    return {
        "known": True,
        "range": _ms_range(measured["floor_p99_s"]),
        "well_range": _ms_range(well["floor_p99_s"]),
        "well_fractions": [format_percent(f) for f in sorted(set(well["floor_fraction"].dropna().round(4)))],
        "behind": [escape(s) for s in measured.loc[measured["floor_p99_s"] == math.inf, "server"]],
        "fractions": [format_percent(f) for f in fractions],
        "designs": format_count(len(table)),
        "well": format_count(len(well)),
        "all_well": len(well) == len(table),
        "none_well": well.empty,
        "dominated": [
            {"server": escape(r["server"]), "floor": p99_text(r["floor_p99_s"])}
            for _, r in table[table["floor_state"] == FLOOR_DOMINATES].iterrows()
        ],
        # The client's own lateness alone used up a well-under floor: the client and the machine, not the server.
        "client_late": bool(not over.empty and (over_lag >= criteria.floor_limit_s).all()),
        "unmeasured": [escape(s) for s in table.loc[table["floor_state"] == FLOOR_UNMEASURED, "server"]],
        "least": least,
        "threshold": ms_text(criteria.p99_s),
        "limit": ms_text(criteria.floor_limit_s),
        "tools": [f"\\texttt{{{escape(t)}}}" for t in _tools(study)],
        "send_lag": _ms_range(lag) if not lag.empty else None,
    }


def p99_text(seconds: Any) -> str:
    """A median p99 in ms for a sentence, or "fell behind" for +inf."""
    return "fell behind" if not is_missing(seconds) and math.isinf(float(seconds)) else f"{format_ms(seconds)}\\,ms"


def _fraction_text(fraction: Any) -> str:
    return f"{float(fraction) * 100:g}" if not is_missing(fraction) else MISSING


def knee_facts(study: LatencyResults) -> dict[str, Any]:
    """Every design of the sweep under the knee rule, grouped by what the rule found (one decision: the knees table's
    rows), with the rule's numbers."""
    table = study.knees
    criteria = study.criteria
    groups: dict[str, list[dict[str, Any]]] = {state: [] for state in KNEE_STATES}
    for _, row in table.iterrows():
        groups[str(row["knee_state"])].append(
            {
                "server": escape(row["server"]),
                "low": _fraction_text(row["below_fraction"]),
                "high": _fraction_text(row["knee_fraction"]),
                "rate": format_count(row["knee_rate"]),
                "p99": p99_text(row["knee_p99_s"]),
                "behind": not is_missing(row["knee_p99_s"]) and math.isinf(float(row["knee_p99_s"])),
                "floor": p99_text(row["floor_p99_s"]),
                "highest": _fraction_text(row["highest_fraction"]),
                "state": str(row["floor_state"]),
            }
        )
    sweep = study.setup(SETUP_SWEEP)
    steps = sorted(set(sweep["rate_fraction"].dropna().round(4))) if not sweep.empty else []
    # Trials per rate of the designs the rule tested (their floor well under the threshold).
    per_rate = (
        table.loc[table["floor_state"] == FLOOR_WELL_UNDER_STATE, "trials_per_rate"] if not table.empty else table
    )
    return {
        "any": not table.empty,
        "groups": groups,
        "knee_groups": _knee_groups(groups[KNEE]),
        **rule_words(criteria),
        "least": format_count(criteria.min_floor_trials),
        "trials": format_range(per_rate.min(), per_rate.max()) if not per_rate.empty else "",
        "fractions": [format_percent(f) for f in steps],
        "left_out": left_out_facts(study),
        "sweep_connections": [format_count(c) for c in distinct_values(sweep, "connections")],
    }


def _knee_groups(knees: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The designs with a knee, grouped by the fractions it lies between (the lowest first): {low, high, designs,
    servers}."""
    brackets: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for knee in knees:
        brackets.setdefault((knee["low"], knee["high"]), []).append(knee)
    return [
        {"low": low, "high": high, "designs": designs, "servers": [d["server"] for d in designs]}
        for (low, high), designs in sorted(brackets.items(), key=lambda item: (float(item[0][1]), float(item[0][0])))
    ]


def setup_facts(study: LatencyResults) -> dict[str, Any]:
    fixed = study.setup(SETUP_FIXED)
    if fixed.empty:
        return {"any": False}
    first = fixed.iloc[0]
    fraction = first.get("rate_fraction")
    return {
        "any": True,
        "servers": [escape(v) for v in dict.fromkeys(fixed["variant"])],
        "connections": [format_count(c) for c in distinct_values(fixed, "connections")],
        "offered": [format_count(r) for r in distinct_values(fixed, "offered_rate")],
        "derived": not is_missing(fraction) and not is_missing(first.get("saturation_rate")),
        "fraction": format_percent(fraction),
        "saturation": format_count(first.get("saturation_rate")),
        "saturation_of": tt(str(first.get("saturation_of") or "unknown")),
    }


def source_001_facts(study: LatencyResults) -> dict[str, Any]:
    fixed = study.setup(SETUP_FIXED)
    if fixed.empty:
        return {"any": False}
    ours = {key_text(r["architecture"]): r for _, r in fixed.iterrows()}
    facts: dict[str, Any] = {"any": True, "largest": None}
    if "epoll" in ours and "reactor" in ours:
        epoll, reactor = ours["epoll"], ours["reactor"]
        if not is_missing(epoll["latency_max_s_max"]) and not is_missing(reactor["latency_max_s_max"]):
            facts["largest"] = {  # the maxima observed, described: one maximum per design orders no designs
                "epoll": format_ms(epoll["latency_max_s_max"]),
                "reactor": format_ms(reactor["latency_max_s_max"]),
                "epoll_n": format_count(epoll["n"]),
                "reactor_n": format_count(reactor["n"]),
                "cited_epoll": format_significant(SOURCE_001_RESULTS["epoll"]["latency_max_s"], 3),
                "cited_reactor": format_significant(SOURCE_001_RESULTS["reactor"]["latency_max_s"], 3),
            }
    facts["achieved"] = [
        {
            "server": escape(ours[a]["variant"]),
            "share": share(ours[a]["achieved_fraction_mean"]),
            "cited": share(SOURCE_001_RESULTS[a]["requests_per_sec"] / SOURCE_001_RATE),
        }
        for a in SOURCE_001_ORDER
        if a in ours and not is_missing(ours[a]["achieved_fraction_mean"])
    ]
    facts["timeouts"] = [
        escape(r["variant"])
        for _, r in fixed.iterrows()
        if not is_missing(r["timeouts_mean"]) and float(r["timeouts_mean"]) > 0
    ]
    return facts


def work_facts(study: LatencyResults) -> dict[str, Any]:
    """The CPU work per request the open-loop trials asked of the servers, and their arrival processes."""
    trials = study.trials
    work = sorted({int(w) for w in trials.get("work_us", pd.Series(dtype=float)).dropna() if w})
    arrivals = sorted({str(a) for a in trials.get("arrival", pd.Series(dtype=str)).dropna()})
    return {"work": [format_count(w) for w in work], "arrivals": arrivals}


def saturation_facts(study: LatencyResults) -> dict[str, Any]:
    sources = sorted({str(s) for s in study.trials.get("saturation_source", pd.Series(dtype=str)).dropna()})
    return {"sources": [escape(s) for s in sources]}


def latency_sentences(study: LatencyResults, present: Mapping[str, bool]) -> dict[str, Any]:
    """The facts of paper/templates/latency/section.tex.j2's sentences: without a campaign, only why there is none
    (every other sentence None, rendered empty)."""
    campaign = campaign_facts("latency", study.sources[0] if study.sources else None, study.campaigns, MAKE_TARGET)
    # finding, setup and source_001 are quoted by other sections too (findings, sources: `studies.latency`).
    names = ("tool", "command", "saturation", "client_bound", "checks", "work", "results", "floor", "knees")
    names += ("finding", "setup", "source_001")
    if not study.available:
        return {"campaign": campaign, **dict.fromkeys(names)}
    # The finding quotes the work, knees, checks and floor sentences' facts.
    finding = {
        "work": work_facts(study),
        "knees": knee_facts(study),
        "checks": checks_facts(study),
        "floor": floor_facts(study),
    }
    return {
        "campaign": campaign,
        "tool": tool_facts(study),
        "command": {
            "line": quoted_load_command(
                (record for campaign in study.campaigns for record in campaign.trials),
                lambda record: (record.get("config") or {}).get("offered_rate") is not None,
            )
        },
        "saturation": saturation_facts(study),
        "client_bound": client_bound_facts(study),
        "checks": finding["checks"],
        "work": finding["work"],
        "results": {
            "achieved": bool(present.get("achieved")),
            "percentiles": bool(present.get("percentiles")),
            "table": not study.setup(SETUP_SWEEP).empty,
        },
        "floor": finding["floor"],
        "knees": finding["knees"],
        "finding": finding,
        "setup": setup_facts(study),
        "source_001": source_001_facts(study),
    }


def latency_macros(macros: MacroSet, study: LatencyResults, prose: Prose) -> None:
    """The latency section's numbers, defined for any campaign (or none)."""
    criteria = study.criteria
    for name, value, comment in (
        (r"\abLatencyKneeThreshold", ms_text(criteria.p99_s), "the latency threshold a floor must be well under, ms"),
        (r"\abLatencyFloorLimit", ms_text(criteria.floor_limit_s), "a floor at most this is well under it, ms"),
        (r"\abLatencyRiseMultiple", number_text(criteria.rise_multiple), "knee: p99 beyond this multiple of the floor"),
        (r"\abLatencyKneeAlpha", number_text(criteria.alpha), "knee: the rank test's level"),
        (
            r"\abLatencyKeptUpThreshold",
            percent_text(criteria.kept_up_fraction),
            "a trial kept up when it completed at least this percent of the requests it scheduled",
        ),
        (
            r"\abLatencyClientBoundThreshold",
            percent_text(criteria.client_bound_busy),
            "load generator CPU busy percent from which an open-loop trial is client-bound",
        ),
        (r"\abLatencyHasData", "1" if study.available else "0", "1: a latency campaign exists (\\ifnum)"),
    ):
        macros.add(name, value, comment)
    connections = fractions = duration = MISSING
    if study.available:
        sweep = study.trials[study.trials["setup"] == SETUP_SWEEP] if not study.trials.empty else study.trials
        connections = format_list(distinct_values(sweep, "connections"))
        shares = distinct_values(sweep, "rate_fraction")
        fractions = and_list(prose, [f"{f * 100:g}" for f in shares]) + (r"\,\%" if shares else "")
        duration = format_list(distinct_values(study.trials, "duration_s"))
    macros.add(r"\abLatencyConnections", connections, "connections of the sweep")
    macros.add(r"\abLatencyFractions", fractions, "offered fractions of each server's saturation")
    macros.add(r"\abLatencyDuration", duration, "open-loop trial duration, s")
