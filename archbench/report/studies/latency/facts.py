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
        "open_loop": "open_loop" in tools,
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


def _measured(study: LatencyResults) -> pd.DataFrame:
    trials = study.trials
    if trials.empty:
        return trials
    return trials[~trials["warmup"].astype(bool) & (trials["status"] == "ok")]


def _with_check(part: pd.DataFrame, check: str) -> int:
    return int(part["checks"].map(lambda checks: check in str(checks).split(";")).sum())


def checks_facts(study: LatencyResults) -> dict[str, Any]:
    """How many measured trials passed the run checks, per set-up, and which servers fell behind where."""
    measured = _measured(study)
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
                        "achieved": share(float(group["achieved_fraction"].mean())),
                        "fractions": [format_percent(f) for f in sorted(set(group["rate_fraction"].dropna()))],
                    }
                    for server, group in behind.groupby("server", sort=True)
                ],
            }
        )
    usable = int(measured["usable"].astype(bool).sum())
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
    return {"thresholds": thresholds, "left_out": left_out_facts(study), "sweep_connections": _sweep_connections(study)}


def knee_groups(study: LatencyResults) -> dict[str, Any]:
    """The servers grouped by their knee's fraction of saturation under the first threshold (highest first), the
    trials per rate (the fewest) and the step between the swept fractions (the smallest)."""
    table = study.knees
    key = threshold_key(study.criteria.p99_s)
    if table.empty or f"knee_{key}_fraction" not in table:
        return {"groups": [], "trials": "", "step": ""}
    with_knee = table[table[f"knee_{key}_fraction"].notna()]
    fractions = with_knee[f"knee_{key}_fraction"].round(2)
    groups = [
        {
            "fraction": format_percent(fraction),
            "servers": [escape(s) for s in with_knee.loc[fractions == fraction, "server"]],
        }
        for fraction in sorted(set(fractions), reverse=True)
    ]
    sweep = study.setup(SETUP_SWEEP)
    steps = sorted(set(sweep["rate_fraction"].dropna().round(4)))
    gaps = [b - a for a, b in zip(steps, steps[1:], strict=False)]
    return {
        "groups": groups,
        "trials": _count_range(sweep["n"]) if not sweep.empty else "",
        "step": format_percent(min(gaps)) if gaps else "",
    }


def _count_range(counts: pd.Series) -> str:
    low, high = int(counts.min()), int(counts.max())
    return format_count(low) if low == high else f"{format_count(low)}--{format_count(high)}"


def _sweep_connections(study: LatencyResults) -> list[str]:
    sweep = study.setup(SETUP_SWEEP)
    return [format_count(c) for c in sorted(set(sweep["connections"].dropna()))] if not sweep.empty else []


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


def work_facts(study: LatencyResults) -> dict[str, Any]:
    """The CPU work per request the open-loop trials asked of the servers, and their arrival processes."""
    trials = study.trials
    work = sorted({int(w) for w in trials.get("work_us", pd.Series(dtype=float)).dropna() if w})
    arrivals = sorted({str(a) for a in trials.get("arrival", pd.Series(dtype=str)).dropna()})
    return {"work": [format_count(w) for w in work], "arrivals": arrivals}


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
                r"\abLatencyChecksSentence",
                r"\abLatencyWorkSentence",
                r"\abLatencyFinding",
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
    checks = checks_facts(study)
    knees = knee_facts(study)
    work = work_facts(study)
    finding = {"work": work, "knees": knees, "checks": checks, "first": ms_text(criteria.p99_s), **knee_groups(study)}
    results = {
        "achieved": bool(present.get("achieved")),
        "percentiles": bool(present.get("percentiles")),
        "table": not study.setup(SETUP_SWEEP).empty,
    }
    # (macro, template macro, its facts, what the macro says): one sentence each.
    sentences = (
        (
            r"\abLatencySaturationSentence",
            "saturation",
            saturation_facts(study),
            "where the saturation rates come from",
        ),
        (r"\abLatencyClientBoundSentence", "client_bound", client_bound_facts(study), "client-bound trials, excluded"),
        (r"\abLatencyFloorSentence", "floor", floor_facts(study), "the load generator's floor against 1 ms"),
        (r"\abLatencyChecksSentence", "checks", checks, "how many open-loop trials passed the run checks, per set-up"),
        (r"\abLatencyWorkSentence", "work", work, "the servers' work per request"),
        (r"\abLatencyFinding", "finding", finding, "the findings' summary: knees, who fell behind in 001's set-up"),
        (r"\abLatencyKneeFinding", "knees", knees, "knees per server and threshold"),
        (r"\abLatencyResultsSentence", "results", results, "cites the latency figures and table"),
    )
    for name, template, facts, comment in sentences:
        macros.add(name, sentence(template, facts), comment)
    macros.add(r"\abLatencySourceOneSetup", sentence("setup", setup_facts(study)), "source 001's set-up as reproduced")
    macros.add(
        r"\abLatencySourceOneFinding",
        sentence("source_001", source_001_facts(study)),
        "comparison with source 001's wrk2 numbers",
    )
