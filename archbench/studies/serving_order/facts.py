"""The serving-order section's facts: the campaigns (one look of the test each), the usable trials and the test's
verdict over its looks (archbench.studies.serving_order.data). The words are
paper/templates/serving_order/sentences.tex.j2, called by its section template; the findings section renders the
verdict from the same facts (studies.serving_order.finding)."""

from __future__ import annotations

import math
from typing import Any

from archbench.analyze.open_loop_trials import TrialCriteria, requests_counted_throughout
from archbench.render.common import provenance_facts, tt
from archbench.render.latex import (
    MISSING,
    MacroSet,
    format_bound,
    format_count,
    format_ms,
    format_significant,
    is_missing,
)
from archbench.studies.serving_order.data import (
    FAMILY_ERROR,
    MIN_ROUNDS,
    NOT_TESTABLE,
    SUSTAIN_TOLERANCE,
    TESTED_PERCENTILE,
    Look,
    ServingOrderResults,
    interval_side,
    sequential_verdict,
)


def format_level(level: float) -> str:
    """A confidence level as a percentage without trailing zeros: 95, 97.5."""
    return f"{100 * level:.4g}"


def usable_rule(study: ServingOrderResults) -> dict[str, Any]:
    """The sustained rule as the text and the table note state it: at least `kept_up` percent of the scheduled
    requests completed, or, where the client keeps no counts (`counted` false), the rate within `tolerance`."""
    return {
        "tolerance": format_count(100 * SUSTAIN_TOLERANCE),
        "kept_up": format_count(100 * (1 - SUSTAIN_TOLERANCE)),
        "counted": requests_counted_throughout(study.trials),
    }


def usable_facts(look: Look) -> dict[str, Any]:
    comparison = look.comparison
    if comparison.empty:
        return {"trials": "0", "usable": "0", "rates": "0"}
    trials = int(comparison["fifo_trials"].sum() + comparison["lifo_trials"].sum())
    usable = int(comparison["fifo_usable"].sum() + comparison["lifo_usable"].sum())
    return {"trials": format_count(trials), "usable": format_count(usable), "rates": format_count(len(comparison))}


def look_facts(look: Look, number: int) -> dict[str, Any]:
    """One look's test: where it ran, how many rounds it planned, and (when testable) its ratio and interval, and
    the median's paired ratio at the same rate with its interval and the side of 1 it lies on (data.interval_side,
    the test's rule: an interval covering 1 is not shown different)."""
    found = look.verdict
    out: dict[str, Any] = {
        "number": number,
        "campaign_tt": tt(look.name),
        "planned_rounds": format_count(look.planned_rounds) if look.planned_rounds is not None else MISSING,
        "verdict": found["verdict"],
        "why": found.get("why", ""),
        "level": format_level(look.level),
    }
    if found["verdict"] == NOT_TESTABLE:
        return out
    row = found["row"]
    q = TESTED_PERCENTILE
    fraction = row["rate_fraction"]
    out.update(
        rate=format_count(row["offered_rate"]),
        fraction=format_count(100 * fraction) if not is_missing(fraction) else "",
        fifo=format_ms(row[f"fifo_p{q}_s"]),
        lifo=format_ms(row[f"lifo_p{q}_s"]),
        ratio=format_significant(row[f"ratio_p{q}"], 2),
        low=format_bound(row[f"low_p{q}"]),
        high=format_bound(row[f"high_p{q}"]),
        rounds=format_count(row[f"rounds_p{q}"]),
        median_ratio=format_significant(row["ratio_p50"], 2) if not math.isnan(row["ratio_p50"]) else MISSING,
        median_low=format_bound(row["low_p50"]),
        median_high=format_bound(row["high_p50"]),
        median_rounds=format_count(row["rounds_p50"]),
        median_side=interval_side(row["low_p50"], row["high_p50"]) if not math.isnan(row["ratio_p50"]) else "",
    )
    return out


def verdict_facts(study: ServingOrderResults) -> dict[str, Any]:
    """The test over its looks: each look's facts, the verdict, the look it rests on and the levels."""
    decision = sequential_verdict(study)
    looks = [look_facts(look, i + 1) for i, look in enumerate(study.looks)]
    deciding = decision["deciding"]
    return {
        "looks": looks,
        "verdict": decision["verdict"],
        "deciding": looks[deciding] if deciding is not None else None,
        "conflict": decision["conflict"],
        "min_rounds": MIN_ROUNDS,
        "family": format_level(1 - FAMILY_ERROR),
        "family_error": format_level(FAMILY_ERROR),
        "level": format_level(study.level),
    }


def serving_order_macros(macros: MacroSet, study: ServingOrderResults) -> None:
    """\\abServingOrderHasData, which this section and the findings test (\\ifnum), defined for any campaign (or none)."""
    macros.add(r"\abServingOrderHasData", "1" if study.available else "0", "1: a serving-order campaign exists")


def serving_order_sentences(study: ServingOrderResults) -> dict[str, Any]:
    """The section's facts: its campaigns (none: the section says why), how many trials of each were usable, and the
    test's verdict over its looks (`finding`, which the findings section quotes as studies.serving_order.finding)."""
    if not study.available:
        return {"campaigns": None, "usable": None, "finding": None}
    return {
        "campaigns": {"section": "section", "campaigns": [provenance_facts(look.campaign) for look in study.looks]},
        "usable": {
            "looks": [{**usable_facts(look), "number": i + 1} for i, look in enumerate(study.looks)],
            **usable_rule(study),
            "client_busy": format_count(100 * TrialCriteria().client_bound_busy),
        },
        "finding": verdict_facts(study),
    }
