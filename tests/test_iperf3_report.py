"""The bandwidth baseline in the report (archbench.studies.architectures.baseline, paper/templates/architectures/baseline.tex.j2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.studies.architectures.baseline import baseline_facts, baseline_findings, response_length

REPO = Path(__file__).resolve().parent.parent
SUMMARY = pd.DataFrame(
    [
        {"architecture": "epoll", "trigger": "level", "threads": None, "response": "test", "mean": 100_000.0,
         "response_bytes": None},
        {"architecture": "nginx", "trigger": None, "threads": 1, "response": "test", "mean": 50_000.0,
         "response_bytes": 250.0},
    ]
)  # fmt: skip


def meta_with(baseline: dict[str, Any] | None) -> dict[str, Any]:
    provenance: dict[str, Any] = {"hostname": "vm"}
    if baseline is not None:
        provenance["bandwidth_baseline"] = baseline
    return {"campaign": "c", "provenance": provenance}


OK = {"status": "ok", "reason": None, "placement": "loopback", "duration_s": 2, "version": "iperf 3.12",
      "received_bits_per_s": 8e9, "sent_bits_per_s": 8.1e9}  # fmt: skip


def sentence(meta: dict[str, Any], summary: pd.DataFrame = SUMMARY) -> str:
    return Prose().sentence("architectures/baseline", "finding", baseline_facts(meta, summary))


def test_response_length_is_nginx_measured_else_ours_computed() -> None:
    assert response_length(SUMMARY.iloc[1]) == 250.0
    assert response_length(SUMMARY.iloc[0]) == 91.0  # epoll's `test` response: 87 header bytes + 4


def test_a_measured_baseline_beside_the_fastest_bytes_per_second() -> None:
    facts = baseline_facts(meta_with(OK), SUMMARY)
    assert facts["gbit"] == "8.00" and facts["fastest"] == "epoll (level)"
    assert facts["megabytes_per_s"] == "9.1"  # 100,000 x 91 B
    assert facts["share"] == r"0.9\,\%" and facts["below_half"]  # 72.8 Mbit/s of 8 Gbit/s
    text = sentence(meta_with(OK))
    assert "carried 8.00 Gbit/s" in text and "9.1 MB/s" in text and "not the bytes, set the rate" in text


def test_a_share_near_the_link_says_the_path_may_bound_the_rate() -> None:
    slow_link = {**OK, "received_bits_per_s": 1e8}
    text = sentence(meta_with(slow_link))
    assert r"72.8\,\%" in text and "the path itself may have bounded the rate" in text


def test_campaigns_without_a_baseline_say_so() -> None:
    shipped = json.loads((REPO / "data" / "raw" / "reference" / "campaign.json").read_text())
    assert "bandwidth_baseline" not in shipped["provenance"]
    text = sentence(shipped)
    assert text.startswith("This campaign was recorded before campaigns measured an iperf3 bandwidth baseline")
    failed = sentence(meta_with({"status": "missing", "reason": "iperf3 is not on PATH", "placement": "loopback"}))
    assert "was not measured (missing): iperf3 is not on PATH." in failed
    assert "No configuration" in sentence(meta_with(None), pd.DataFrame())


NUMBERS = {r"\abBandwidthBaselineGbit", r"\abFastestResponseBytesPerSecond", r"\abFastestBaselineShare"}


def test_macros_and_the_facts_of_the_sentence() -> None:
    macros = MacroSet()
    assert baseline_findings(macros, meta_with(OK), SUMMARY) == baseline_facts(meta_with(OK), SUMMARY)
    assert NUMBERS <= macros.names()
    empty = MacroSet()
    assert baseline_findings(empty, meta_with(None), pd.DataFrame()) == baseline_facts(meta_with(None), pd.DataFrame())
    assert NUMBERS <= empty.names()
