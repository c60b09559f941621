"""The latency section's macros: Python computes each sentence's facts (numbers formatted, names escaped,
choices as booleans and small lists); the sentences are paper/templates/latency/sentences.tex.j2's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench.analyze.analysis import key_text
from archbench.report.common import (
    and_list,
    distinct_values,
    load_command,
    no_campaign_macros,
    provenance_sentence,
    tt,
)
from archbench.report.latex import (
    MacroSet,
    campaign_provenance,
    escape,
    escape_command,
    format_count,
    format_list,
    format_ms,
    format_percent,
    format_significant,
    is_missing,
)
from archbench.report.prose import Prose
from archbench.report.studies.latency.data import (
    FLOOR_NEAR_FRACTION,
    SETUP_FIXED,
    SETUP_SWEEP,
    SOURCE_001_RATE,
    SOURCE_001_RESULTS,
    LatencyResults,
    ms_text,
    percent_text,
    threshold_key,
)
from archbench.report.studies.latency.tables import share

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
    }


def client_bound_facts(study: LatencyResults) -> dict[str, Any]:
    trials = study.trials
    measured = trials[~trials["warmup"].astype(bool) & (trials["status"] == "ok")] if not trials.empty else trials
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


def floor_facts(study: LatencyResults) -> dict[str, Any]:
    floor = study.floor
    criteria = study.criteria
    if not floor.known:
        return {"known": False}
    if floor.p99_s >= criteria.p99_s:
        verdict = "above"
    elif floor.p99_s >= FLOOR_NEAR_FRACTION * criteria.p99_s:
        verdict = "near"
    else:
        verdict = "below"
    return {
        "known": True,
        "p99": format_ms(floor.p99_s),
        "server": escape(floor.server),
        "rate": format_count(floor.rate),
        "tools": [f"\\texttt{{{escape(t)}}}" for t in _tools(study)],
        "verdict": verdict,
        "first": ms_text(criteria.p99_s),
        "alt": ms_text(criteria.p99_alt_s) if len(criteria.thresholds) > 1 else None,
    }


def _no_knee(row: pd.Series, key: str) -> dict[str, Any]:
    return {
        "server": escape(row["server"]),
        "lowest": format_ms(row["lowest_p99_s"]),
        "why": [w for w in str(row.get(f"why_no_knee_{key}") or "").split(";") if w],
    }


def knee_facts(study: LatencyResults) -> dict[str, Any]:
    table = study.knees
    thresholds = []
    for threshold in study.criteria.thresholds if not table.empty else ():
        key = threshold_key(threshold)
        with_knee = table[table[f"knee_{key}"].notna()]
        without = table if with_knee.empty else table[table[f"knee_{key}"].isna()]
        thresholds.append(
            {
                "ms": ms_text(threshold),
                "knees": [
                    {
                        "server": escape(r["server"]),
                        "rate": format_count(r[f"knee_{key}"]),
                        "fraction": format_percent(r[f"knee_{key}_fraction"]),
                    }
                    for _, r in with_knee.iterrows()
                ],
                "without": [_no_knee(r, key) for _, r in without.iterrows()],
            }
        )
    return {"thresholds": thresholds}


def setup_facts(study: LatencyResults) -> dict[str, Any]:
    fixed = study.setup(SETUP_FIXED)
    if fixed.empty:
        return {"any": False}
    first = fixed.iloc[0]
    fraction = first.get("rate_fraction")
    return {
        "any": True,
        "servers": [escape(v) for v in dict.fromkeys(fixed["variant"])],
        "connections": [format_count(c) for c in sorted(set(fixed["connections"].dropna()))],
        "offered": [format_count(r) for r in sorted(set(fixed["offered_rate"].dropna()))],
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
            facts["largest"] = {
                "same": float(epoll["latency_max_s_max"]) > float(reactor["latency_max_s_max"]),
                "epoll": format_ms(epoll["latency_max_s_max"]),
                "reactor": format_ms(reactor["latency_max_s_max"]),
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


def saturation_facts(study: LatencyResults) -> dict[str, Any]:
    sources = sorted({str(s) for s in study.trials.get("saturation_source", pd.Series(dtype=str)).dropna()})
    return {"sources": [escape(s) for s in sources]}


def latency_macros(
    macros: MacroSet, study: LatencyResults, prose: Prose, present: Mapping[str, bool] | None = None
) -> None:
    """Every \\abLatency... macro templates/latency/section.tex uses, defined for any campaign (or none)."""
    present = dict(present or {})
    criteria = study.criteria
    macros.add(r"\abLatencyKneeThreshold", ms_text(criteria.p99_s), "first knee criterion: p99 below this, ms")
    macros.add(
        r"\abLatencyKneeAltThreshold",
        ms_text(criteria.p99_alt_s if criteria.p99_alt_s else criteria.p99_s),
        "second knee criterion: p99 below this, ms",
    )
    macros.add(
        r"\abLatencyAchievedThreshold",
        percent_text(criteria.achieved_fraction),
        "knee: achieved at least this percent of the offered rate",
    )
    macros.add(
        r"\abLatencyClientBoundThreshold",
        percent_text(criteria.client_bound_busy),
        "load generator CPU busy percent from which an open-loop trial is client-bound",
    )
    macros.add(
        r"\abLatencyHasData",
        "1" if study.available else "0",
        "1: a latency campaign exists (templates/latency/section.tex \\ifnum)",
    )
    if not study.available:
        no_campaign_macros(
            macros,
            prose,
            "latency",
            study.sources[0] if study.sources else None,
            MAKE_TARGET,
            campaign_macros=(r"\abLatencyCampaign", r"\abLatencyCampaignSentence"),
            missing=(r"\abLatencyConnections", r"\abLatencyFractions", r"\abLatencyDuration"),
            empty=(
                r"\abLatencyToolSentence",
                r"\abLatencyCommand",
                r"\abLatencySaturationSentence",
                r"\abLatencyClientBoundSentence",
                r"\abLatencyFloorSentence",
                r"\abLatencyKneeFinding",
                r"\abLatencyResultsSentence",
                r"\abLatencySourceOneSetup",
                r"\abLatencySourceOneFinding",
            ),
        )
        return

    def sentence(name: str, facts: Mapping[str, Any]) -> str:
        return prose.sentence(TEMPLATE, name, facts)

    macros.add(
        r"\abLatencyCampaign",
        and_list(prose, [tt(c.meta.get("campaign") or c.path.name) for c in study.campaigns]),
        "latency campaigns",
    )
    macros.add(
        r"\abLatencyCampaignSentence",
        provenance_sentence(prose, study.campaigns, "section"),
        "campaigns, host and dates of the latency numbers",
    )
    sweep_trials = study.trials[study.trials["setup"] == SETUP_SWEEP] if not study.trials.empty else study.trials
    macros.add(
        r"\abLatencyConnections", format_list(distinct_values(sweep_trials, "connections")), "connections of the sweep"
    )
    fractions = distinct_values(sweep_trials, "rate_fraction")
    macros.add(
        r"\abLatencyFractions",
        and_list(prose, [f"{f * 100:g}" for f in fractions]) + (r"\,\%" if fractions else ""),
        "offered fractions of each server's saturation",
    )
    macros.add(
        r"\abLatencyDuration", format_list(distinct_values(study.trials, "duration_s")), "open-loop trial duration, s"
    )
    macros.add(
        r"\abLatencyToolSentence", sentence("tool", tool_facts(study)), "which open-loop tool, its version and mode"
    )
    record = None
    for campaign in study.campaigns:
        record = record or next(
            (
                r
                for r in campaign.trials
                if (r.get("config") or {}).get("offered_rate") is not None
                and r.get("status") == "ok"
                and not r.get("warmup")
            ),
            None,
        )
    command = load_command(record)
    macros.add(
        r"\abLatencyCommand",
        escape_command(command) if command else sentence("no_command", {}),
        "exact load command of one open-loop trial",
    )
    macros.add(
        r"\abLatencySaturationSentence",
        sentence("saturation", saturation_facts(study)),
        "where the saturation rates come from",
    )
    macros.add(
        r"\abLatencyClientBoundSentence",
        sentence("client_bound", client_bound_facts(study)),
        "client-bound trials, excluded",
    )
    macros.add(
        r"\abLatencyFloorSentence", sentence("floor", floor_facts(study)), "the load generator's floor against 1 ms"
    )
    macros.add(r"\abLatencyKneeFinding", sentence("knees", knee_facts(study)), "knees per server and threshold")
    macros.add(
        r"\abLatencyResultsSentence",
        sentence(
            "results",
            {
                "achieved": bool(present.get("achieved")),
                "percentiles": bool(present.get("percentiles")),
                "table": not study.setup(SETUP_SWEEP).empty,
            },
        ),
        "cites the latency figures and table",
    )
    macros.add(r"\abLatencySourceOneSetup", sentence("setup", setup_facts(study)), "source 001's set-up as reproduced")
    macros.add(
        r"\abLatencySourceOneFinding",
        sentence("source_001", source_001_facts(study)),
        "comparison with source 001's wrk2 numbers",
    )
