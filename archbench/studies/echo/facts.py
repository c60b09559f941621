"""The echo section's facts: Python computes each sentence's facts (numbers formatted, names escaped, choices as
booleans) for the section template (echo_sentences), and its numbers as macros (echo_macros); the sentences are
paper/templates/echo/sentences.tex.j2's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.analysis import number
from archbench.analyze.client_bound import client_set_rate
from archbench.render.common import (
    campaign_facts,
    distinct_values,
    quoted_load_command,
    rows_with_any,
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
    format_range,
    format_significant,
    is_missing,
)
from archbench.studies.echo.data import (
    DEFAULT_EPHEMERAL_PORTS,
    MODE_MAX_CONNS,
    MODE_THROUGHPUT,
    EchoResults,
    column_sum,
    flag_tally,
    tally_items,
)
from archbench.studies.echo.tables import kib_text, mb_text, reasons_text

MAKE_TARGET = "echo-study"


def _variant_at(summary: pd.DataFrame, architecture: str, connections: float) -> pd.Series | None:
    rows = summary[(summary["architecture"] == architecture) & (pd.to_numeric(summary["connections"]) == connections)]
    rows = rows[rows["bytes_received_per_sec_mean"].notna()]
    return None if rows.empty else rows.iloc[0]


def trials_facts(study: EchoResults) -> dict[str, Any]:
    measured = study.measured
    if measured.empty:
        return {"any": False}
    status = measured["status"]
    ok = measured[status == "ok"]
    flagged = ok[ok["flagged"].astype(bool)]
    warmups = study.trials["warmup"].astype(bool).sum()
    failed = int((status == "failed").sum())
    return {
        "any": True,
        "measured": format_count(len(measured)),
        "throughput": format_count((measured["mode"] == MODE_THROUGHPUT).sum()),
        "max_conns": format_count((measured["mode"] == MODE_MAX_CONNS).sum()),
        "warmups": format_count(warmups),
        "one_warmup": bool(warmups == 1),
        "failed": format_count(failed),
        "one_failed": failed == 1,
        "unsupported": format_count(int((status == "unsupported").sum())),
        "any_unsupported": bool((status == "unsupported").any()),
        "flagged": format_count(len(flagged)),
        "ok": format_count(len(ok)),
        "flagged_throughput": format_count(len(flagged[flagged["mode"] == MODE_THROUGHPUT])),
        # Flag names as echo_client writes them; the template says what each means.
        "tally": [{"flag": k, "escaped": escape(k), "trials": str(v)} for k, v in sorted(flag_tally(flagged).items())],
        "unparsed_flag": analysis.FLAG_UNPARSED,
    }


def verify_facts(study: EchoResults) -> dict[str, Any]:
    ok = study.measured_ok_including_disturbed
    if ok.empty:
        return {"state": "none"}
    with_errors = rows_with_any(ok, "verify_errors")
    if with_errors.empty:
        return {
            "state": "clean",
            "bytes": format_count(column_sum(ok["bytes_received_total"])),
            "trials": format_count(len(ok)),
        }
    return {
        "state": "errors",
        "with_errors": format_count(len(with_errors)),
        "trials": format_count(len(ok)),
        "errors": format_count(column_sum(with_errors["verify_errors"])),
        "servers": sorted({escape(v) for v in with_errors["variant"]}),
        "first": tt(with_errors.iloc[0]["trial_id"]),
    }


def connect_facts(study: EchoResults) -> dict[str, Any]:
    ok = study.measured_ok_including_disturbed
    throughput = ok[ok["mode"] == MODE_THROUGHPUT] if not ok.empty else ok
    if throughput.empty:
        return {"state": "none"}
    failures = throughput[
        (throughput["connect_errors"].fillna(0) > 0)
        | (throughput["not_attempted"].fillna(0) > 0)
        | (throughput["closed_early"].fillna(0) > 0)
    ]
    if failures.empty:
        return {"state": "clean", "trials": format_count(len(throughput))}
    kinds: dict[str, float] = {}
    for text in failures["connect_error_kinds"].fillna(""):
        for name, value in tally_items(text):
            kinds[name] = kinds.get(name, 0.0) + number(value)
    # One entry per server and client count, in the order of "<server> at <clients> clients".
    where = {
        escape(f"{v} at {int(c):,} clients"): {"server": escape(v), "clients": f"{int(c):,}"}
        for v, c in zip(failures["variant"], failures["connections"], strict=True)
    }
    return {
        "state": "failures",
        "failed": format_count(len(failures)),
        "trials": format_count(len(throughput)),
        "connect_errors": format_count(column_sum(failures["connect_errors"])),
        "kinds": [{"name": escape(k), "count": format_count(v)} for k, v in sorted(kinds.items())],
        "not_attempted": format_count(column_sum(failures["not_attempted"])),
        "closed_early": format_count(column_sum(failures["closed_early"])),
        "where": [where[key] for key in sorted(where)],
    }


def _throughput_point(row: pd.Series) -> dict[str, str]:
    """A server's received MB/s and RTT p99 at one client count."""
    return {
        "server": escape(row["variant"]),
        "mb": mb_text(row["bytes_received_per_sec_mean"]),
        "p99": format_ms(row["rtt_p99_s_mean"]),
    }


def scaling_facts(study: EchoResults) -> dict[str, Any]:
    summary = study.summary
    defined = summary[summary["bytes_received_per_sec_mean"].notna()] if not summary.empty else summary
    if defined.empty:
        return {"any": False}
    largest = float(pd.to_numeric(defined["connections"]).max())
    at_largest = defined[pd.to_numeric(defined["connections"]) == largest]
    best = at_largest.loc[at_largest["bytes_received_per_sec_mean"].idxmax()]
    worst = at_largest.loc[at_largest["bytes_received_per_sec_mean"].idxmin()]
    overlapping = []
    if len(at_largest) >= 2:
        best_low = best["bytes_received_per_sec_ci95_low"]
        for _, row in at_largest.iterrows():
            if (
                row["config_id"] == best["config_id"]
                or is_missing(best_low)
                or is_missing(row["bytes_received_per_sec_ci95_high"])
            ):
                continue
            if float(row["bytes_received_per_sec_ci95_high"]) >= float(best_low):
                overlapping.append(escape(row["variant"]))
    smallest = float(pd.to_numeric(defined["connections"]).min())
    growth = []
    if smallest != largest:
        for variant, rows in defined.groupby("variant", sort=False):
            low = rows[pd.to_numeric(rows["connections"]) == smallest]
            high = rows[pd.to_numeric(rows["connections"]) == largest]
            if (
                low.empty
                or high.empty
                or is_missing(low.iloc[0]["rtt_p99_s_mean"])
                or is_missing(high.iloc[0]["rtt_p99_s_mean"])
            ):
                continue
            growth.append((float(high.iloc[0]["rtt_p99_s_mean"]) / float(low.iloc[0]["rtt_p99_s_mean"]), variant))
        growth.sort()
    bound = [escape(row["variant"]) for _, row in at_largest.iterrows() if client_set_rate(row)]
    # Measured there but without an unflagged trial: no mean, so not among the highest and lowest; the text says so.
    unmeasured = summary[
        (pd.to_numeric(summary["connections"]) == largest) & summary["bytes_received_per_sec_mean"].isna()
    ]
    return {
        "any": True,
        "largest": format_count(largest),
        "smallest": format_count(smallest),
        # The configurations at that client count whose rate the client set (half or more of their trials).
        "client_set": bound,
        "without_mean": [escape(v) for v in unmeasured["variant"]],
        "configurations": format_count(len(at_largest)),
        "best": _throughput_point(best),
        "worst": _throughput_point(worst),
        "one_best_and_worst": bool(best["config_id"] == worst["config_id"]),
        "overlapping": overlapping,
        "growth": [{"factor": format_significant(g, 2), "server": escape(v)} for g, v in growth],
    }


def poll_epoll_facts(study: EchoResults) -> dict[str, Any]:
    summary = study.summary
    if summary.empty:
        return {"any_summary": False, "counts": []}
    counts = []
    for connections in sorted(set(pd.to_numeric(summary["connections"]).dropna())):
        poll = _variant_at(summary, "poll", connections)
        epoll = _variant_at(summary, "epoll", connections)
        if poll is None or epoll is None:
            continue
        ratio = stats.ratio(float(poll["bytes_received_per_sec_mean"]), float(epoll["bytes_received_per_sec_mean"]))
        counts.append(
            {
                "clients": format_count(connections),
                "ratio": format_significant(ratio, 3),
                "poll_p99": format_ms(poll["rtt_p99_s_mean"]),
                "epoll_p99": format_ms(epoll["rtt_p99_s_mean"]),
                # Where echo_client set either server's rate the ratio is the client's: said beside it.
                "client_set": client_set_rate(poll) or client_set_rate(epoll),
            }
        )
    return {"any_summary": True, "counts": counts}


def source_004_facts(study: EchoResults) -> dict[str, Any]:
    summary = study.summary
    servers = []
    for architecture in ("thread_per_conn", "poll", "epoll") if not summary.empty else ():
        rows = summary[(summary["architecture"] == architecture) & summary["rtt_p50_s_mean"].notna()]
        if rows.empty:
            continue
        servers.append(
            {
                "architecture": architecture,
                "medians": [
                    {"p50": format_ms(r["rtt_p50_s_mean"]), "clients": format_count(r["connections"])}
                    for _, r in rows.sort_values("connections").iterrows()
                ],
            }
        )
    return {"servers": servers}


def _stop_reasons(reasons: Any) -> list[dict[str, str]]:
    """Each stop reason of a configuration (echo_client's names) with its escaped detail after the prefix."""
    codes = [name for name, *_ in tally_items(reasons)]
    return [{"code": code, "detail": escape(code.split("_", 1)[1] if "_" in code else code)} for code in codes]


def max_conns_facts(study: EchoResults) -> dict[str, Any]:
    table = study.max_conns
    if table.empty:
        return {"state": "none"}
    held = table[table["n"] > 0]
    if held.empty:
        return {"state": "unknown"}
    at_cap = held[held["stop_reasons"].map(lambda s: {name for name, *_ in tally_items(s)} == {"cap_reached"})]
    others = held[~held.index.isin(at_cap.index)]
    failed = table[(table["n"] == 0) & (table["n_failed"] > 0)]
    return {
        "state": "measured",
        "at_cap": [escape(v) for v in at_cap["variant"]],
        "caps": [format_count(c) for c in sorted(set(pd.to_numeric(at_cap["cap"]).dropna()))],
        "stopped": [
            {
                "server": escape(row["variant"]),
                "held": format_range(row["reached_min"], row["reached_max"]),
                "cap": format_count(row["cap"]),
                "reasons": reasons_text(row["stop_reasons"]),
                "stop_reasons": _stop_reasons(row["stop_reasons"]),
            }
            for _, row in others.iterrows()
        ],
        "failed": [escape(v) for v in failed["variant"]],
    }


def memory_facts(study: EchoResults) -> dict[str, Any]:
    table = study.max_conns
    if table.empty:
        return {"state": "none"}
    known = table[table["rss_per_conn_bytes_median"].notna()]
    if known.empty:
        return {"state": "unknown"}
    low = known.loc[known["rss_per_conn_bytes_median"].idxmin()]
    high = known.loc[known["rss_per_conn_bytes_median"].idxmax()]
    return {
        "state": "one" if low["config_id"] == high["config_id"] else "range",
        "low": kib_text(low["rss_per_conn_bytes_median"]),
        "low_server": escape(low["variant"]),
        "high": kib_text(high["rss_per_conn_bytes_median"]),
        "high_server": escape(high["variant"]),
    }


def open_files_facts(study: EchoResults) -> dict[str, Any]:
    measured = study.measured
    if measured.empty:
        return {"known": False}
    soft = distinct_values(measured, "open_files_soft")
    hard = distinct_values(measured, "open_files_hard")
    if not hard:
        provenance = campaign_provenance(study.source.campaign.meta, study.source.campaign.trials)
        limit = provenance.get("open_files_limit")
        if isinstance(limit, (list, tuple)) and len(limit) == 2:
            soft, hard = [float(limit[0])], [float(limit[1])]
    if not hard:
        return {"known": False}
    sources = distinct_values(measured, "sources")
    k = int(sources[-1]) if sources and sources[-1] > 0 else 0
    return {
        "known": True,
        "soft": [format_count(s) for s in soft],
        "hard": [format_count(h) for h in hard],
        "sources": k,
        "ports": format_count(k * DEFAULT_EPHEMERAL_PORTS),
        "ports_per_source": format_count(DEFAULT_EPHEMERAL_PORTS),
    }


def _is_throughput(record: Mapping[str, Any]) -> bool:
    """An echo_client trial of the throughput mode (not --max-conns)."""
    config = record.get("config") or {}
    return config.get("proto") == "echo" and config.get("mode", MODE_THROUGHPUT) == MODE_THROUGHPUT


def echo_sentences(study: EchoResults, figures_present: Mapping[str, bool], picks: pd.DataFrame) -> dict[str, Any]:
    """The facts of paper/templates/echo/section.tex.j2's sentences: without a campaign, only why there is none
    (every other sentence None, rendered empty)."""
    campaigns = [study.source.campaign] if study.source.campaign else []
    campaign = campaign_facts("echo", study.source, campaigns, MAKE_TARGET)
    names = ("command", "trials", "verify", "connect", "table", "scaling", "poll_epoll", "source_004", "time_series")
    if not study.available:
        return {"campaign": campaign, **dict.fromkeys((*names, "open_files", "max_conns", "memory"))}
    shown = bool(figures_present.get("time_series")) and not picks.empty
    return {
        "campaign": campaign,
        "command": {"line": quoted_load_command(study.source.campaign.trials, _is_throughput)},
        "trials": trials_facts(study),
        "verify": verify_facts(study),
        "connect": connect_facts(study),
        "table": {"table": not study.summary.empty, "figure": bool(figures_present.get("scaling"))},
        "scaling": scaling_facts(study),
        "poll_epoll": poll_epoll_facts(study),
        "source_004": source_004_facts(study),
        "time_series": {"shown": shown, "clients": format_count(picks["connections"].iloc[0]) if shown else ""},
        "open_files": open_files_facts(study),
        "max_conns": max_conns_facts(study),
        "memory": memory_facts(study),
    }


def echo_macros(macros: MacroSet, study: EchoResults) -> None:
    """The echo section's numbers, defined for any campaign (or none)."""
    macros.add(r"\abEchoHasData", "1" if study.available else "0", "1: the echo campaign exists (\\ifnum)")
    measured = study.measured
    throughput = measured[measured["mode"] == MODE_THROUGHPUT] if not measured.empty else measured
    for name, frame, column, comment in (
        (r"\abEchoClientCounts", throughput, "connections", "echo_client --connections"),
        (r"\abEchoMessageSize", measured, "message_size", "echo_client --size, bytes"),
        (r"\abEchoSources", measured, "sources", "echo_client --sources"),
        (r"\abEchoDuration", throughput, "duration_s", "echo_client --duration, s"),
    ):
        macros.add(name, format_list(distinct_values(frame, column)) if study.available else MISSING, comment)
