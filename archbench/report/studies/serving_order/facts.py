"""The serving-order section's facts: the campaign, the usable trials and the pre-declared test's verdict
(archbench.report.studies.serving_order.data), as \\abServingOrder... macros. The words are
paper/templates/serving_order/sentences.tex.j2."""

from __future__ import annotations

from typing import Any

from archbench.report.common import provenance_sentence
from archbench.report.latex import MacroSet, format_count, format_ms, format_significant
from archbench.report.prose import Prose
from archbench.report.studies.latency.data import Criteria
from archbench.report.studies.serving_order.data import (
    MIN_ROUNDS,
    NOT_TESTABLE,
    SUSTAIN_TOLERANCE,
    TESTED_PERCENTILE,
    ServingOrderResults,
    verdict,
)

TEMPLATE = "serving_order/sentences"


def usable_facts(study: ServingOrderResults) -> dict[str, Any]:
    comparison = study.comparison
    trials = int(comparison["fifo_trials"].sum() + comparison["lifo_trials"].sum())
    usable = int(comparison["fifo_usable"].sum() + comparison["lifo_usable"].sum())
    return {
        "trials": format_count(trials),
        "usable": format_count(usable),
        "tolerance": format_count(100 * SUSTAIN_TOLERANCE),
        "client_busy": format_count(100 * Criteria().client_bound_busy),
        "rates": format_count(len(comparison)),
    }


def verdict_facts(study: ServingOrderResults) -> dict[str, Any]:
    found = verdict(study.comparison)
    out: dict[str, Any] = {"verdict": found["verdict"], "why": found.get("why", ""), "min_rounds": MIN_ROUNDS}
    if found["verdict"] == NOT_TESTABLE:
        return out
    row = found["row"]
    q = TESTED_PERCENTILE
    out.update(
        rate=format_count(row["offered_rate"]),
        fraction=format_count(100 * row["rate_fraction"]) if row["rate_fraction"] == row["rate_fraction"] else "",
        fifo=format_ms(row[f"fifo_p{q}_s"]),
        lifo=format_ms(row[f"lifo_p{q}_s"]),
        ratio=format_significant(row[f"ratio_p{q}"], 2),
        low=format_significant(row[f"low_p{q}"], 2),
        high=format_significant(row[f"high_p{q}"], 2),
        rounds=format_count(row[f"rounds_p{q}"]),
        median_ratio=format_significant(row["ratio_p50"], 2),
    )
    return out


def serving_order_macros(macros: MacroSet, study: ServingOrderResults, prose: Prose) -> None:
    """Every \\abServingOrder... macro the section uses, defined for any campaign (or none)."""
    macros.add(r"\abServingOrderHasData", "1" if study.available else "0", "1: a serving-order campaign exists")
    if not study.available:
        macros.add(r"\abServingOrderCampaignSentence", prose.sentence(TEMPLATE, "no_campaign"), "no campaign")
        macros.add(r"\abServingOrderUsableSentence", "", "no campaign")
        macros.add(r"\abServingOrderFinding", "", "no campaign")
        return
    assert study.campaign is not None
    macros.add(
        r"\abServingOrderCampaignSentence",
        provenance_sentence(prose, [study.campaign], "section"),
        "campaign, host and dates of the serving-order numbers",
    )
    macros.add(
        r"\abServingOrderUsableSentence",
        prose.sentence(TEMPLATE, "usable", usable_facts(study)),
        "how many open-loop trials were usable (sustained, not client-bound, not flagged)",
    )
    macros.add(
        r"\abServingOrderFinding",
        prose.sentence(TEMPLATE, "finding", verdict_facts(study)),
        "the pre-declared test: LIFO over FIFO p99.9 at the highest rate with enough rounds",
    )
