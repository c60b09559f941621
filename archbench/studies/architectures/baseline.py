"""The campaign's bandwidth baseline beside its throughput in bytes per second (paper/report.tex, Results).

campaign.json's provenance carries the iperf3 baseline measured when the campaign was created
(`archbench.measure.baseline`, key `bandwidth_baseline`); campaigns recorded before it (every shipped one)
have none, and the sentence then says so. The configuration with the highest mean throughput (named so, not the
fastest server, when the load generator bounded half its trials or more); its bytes per second are that mean times its response length: the length nginx's launcher
measured for nginx (`response_bytes`), else our servers' response computed from its format
(`archbench.analyze.analysis.our_response_bytes`). Its share of the baseline compares payload bits
(headers included, requests and TCP/IP overhead not) with the bits one iperf3 stream carried.

Macros: \\abBandwidthBaselineGbit (Gbit/s, or a dash), \\abFastestResponseBytesPerSecond (MB/s),
\\abFastestBaselineShare (percent). The sentence is the macro `finding` of paper/templates/architectures/baseline.tex.j2,
which the section renders from `baseline_facts`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench.analyze.analysis import Labeller, our_response_bytes
from archbench.analyze.client_bound import client_set_rate
from archbench.render.latex import MISSING, MacroSet, escape, format_count, format_decimal, format_percent, is_missing

HALF = 0.5  # a share of the baseline from which the path itself may bound the rate
BASELINE_KEY = "bandwidth_baseline"  # archbench.measure.baseline.BASELINE_KEY (report must not import measure)


def recorded_baseline(meta: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The campaign's baseline record, or None when campaign.json has none."""
    baseline = (meta.get("provenance") or {}).get(BASELINE_KEY)
    return baseline if isinstance(baseline, Mapping) else None


def response_length(row: Mapping[str, Any]) -> float:
    """Bytes of one response of this configuration: nginx's as measured, else ours as computed."""
    measured = row.get("response_bytes")
    if not is_missing(measured):
        return float(measured)
    ours = our_response_bytes(row.get("response") or "test")
    return math.nan if ours is None else float(ours)


def fastest_row(summary: pd.DataFrame) -> pd.Series | None:
    """The configuration with the highest mean throughput whose response length is known."""
    if summary.empty or "mean" not in summary:
        return None
    rows = summary[pd.to_numeric(summary["mean"], errors="coerce").notna()]
    rows = rows[[not math.isnan(response_length(row)) for _, row in rows.iterrows()]]
    if rows.empty:
        return None
    return rows.loc[pd.to_numeric(rows["mean"]).idxmax()]


def baseline_facts(meta: Mapping[str, Any], summary: pd.DataFrame) -> dict[str, Any]:
    """The template's facts: what was recorded, the baseline, the fastest configuration and its share."""
    baseline = recorded_baseline(meta)
    status = None if baseline is None else str(baseline.get("status") or "")
    bits = None if baseline is None else baseline.get("received_bits_per_s")
    measured = status == "ok" and isinstance(bits, (int, float)) and bits > 0
    fastest = fastest_row(summary)
    bytes_per_s = math.nan if fastest is None else float(fastest["mean"]) * response_length(fastest)
    return {
        "recorded": baseline is not None,
        "measured": measured,
        "status": escape(status or ""),
        "reason": escape(str(baseline.get("reason") or "")) if baseline is not None else "",
        "placement": escape(str(baseline.get("placement") or "")) if baseline is not None else "",
        "seconds": format_count(baseline.get("duration_s")) if baseline is not None else MISSING,
        "version": escape(str(baseline.get("version") or "")) if baseline is not None else "",
        "gbit": format_decimal(bits / 1e9, 2) if measured else MISSING,
        "has_fastest": fastest is not None,
        "fastest": escape(Labeller(summary).variant(fastest)) if fastest is not None else "",
        # The load generator bounded half its trials or more: its rate, not the server's.
        "client_set": fastest is not None and client_set_rate(fastest),
        "client_bound": format_count(fastest.get("n_client_bound")) if fastest is not None else MISSING,
        "trials": format_count(fastest.get("n")) if fastest is not None else MISSING,
        "fastest_rate": format_count(fastest["mean"]) if fastest is not None else MISSING,
        "response_bytes": format_count(response_length(fastest)) if fastest is not None else MISSING,
        "megabytes_per_s": format_decimal(bytes_per_s / 1e6, 1),
        "share": format_percent(bytes_per_s * 8 / bits, 1) if measured and fastest is not None else MISSING,
        "below_half": bool(measured and fastest is not None and bytes_per_s * 8 / bits < HALF),
    }


def baseline_findings(macros: MacroSet, meta: Mapping[str, Any], summary: pd.DataFrame) -> dict[str, Any]:
    """The baseline's numbers as macros; returns the facts of its sentence."""
    facts = baseline_facts(meta, summary)
    macros.add(r"\abBandwidthBaselineGbit", facts["gbit"], "iperf3 baseline, Gbit/s received (one TCP stream)")
    macros.add(r"\abFastestResponseBytesPerSecond", facts["megabytes_per_s"], "fastest configuration's responses, MB/s")
    macros.add(r"\abFastestBaselineShare", facts["share"], "fastest configuration's response bits / baseline bits")
    return facts
