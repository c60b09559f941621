"""The latency study's tables: latency against offered rate (fraction sweep) with each rate's verdict against its
design's floor, each server's floor and knee, and source 001's set-up beside its published numbers. Column headers and verdict cells are short labels; captions,
notes and no-data sentences are the templates' (paper/templates/latency/tables.tex.j2)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from archbench.analyze.analysis import key_text
from archbench.report.common import distinct_values
from archbench.report.formats import family_row
from archbench.report.latex import (
    MISSING,
    Column,
    adjusted_table,
    escape,
    format_count,
    format_ms,
    format_percent,
    format_significant,
    group_starts,
    is_missing,
    ms_columns,
    notes_block,
    range_notes,
    render_longtable,
    render_tabular,
    stacked,
    study_mark_notes,
    study_marks,
    table_interval,
)
from archbench.report.prose import Prose
from archbench.report.studies.latency.data import (
    SETUP_FIXED,
    SETUP_SWEEP,
    SOURCE_001_RATE,
    SOURCE_001_RESULTS,
    LatencyResults,
    percent_text,
    rule_words,
)
from archbench.report.studies.latency.knee import (
    KNEE,
    NO_KNEE_IN_RANGE,
    NOT_MEASURED,
    RATE_FLOOR,
    RATE_HELD,
    RATE_NO_TRIAL,
    RATE_RISEN,
    RATE_UNDECIDED,
    RATE_UNTESTED,
    TOO_FEW,
    UNDECIDED,
    Criteria,
)

TEMPLATE = "latency/tables"
# A sweep rate's verdict against its design's floor (archbench.report.studies.latency.knee).
VERDICT = {
    RATE_FLOOR: "floor",
    RATE_RISEN: "risen",
    RATE_HELD: "held",
    RATE_UNDECIDED: "undec.",
    RATE_NO_TRIAL: "excl.",
    RATE_UNTESTED: MISSING,
}
# A design's knee cell when it has no knee.
NO_KNEE = {NO_KNEE_IN_RANGE: "beyond", UNDECIDED: "undecided", TOO_FEW: "too few", NOT_MEASURED: "floor"}


def share(fraction: Any) -> str:
    """A fraction as a percentage, one decimal, or two significant digits below 1 % (0.049 %, not 0.0 %)."""
    if is_missing(fraction):
        return MISSING
    percent = float(fraction) * 100.0
    text = format_significant(percent, 2) if 0 < abs(percent) < 1 else f"{percent:,.1f}"
    return text + r"\,\%"


def _notes(rows: pd.DataFrame, criteria: Criteria, prose: Prose) -> list[str]:
    return study_mark_notes(rows, prose, TEMPLATE, percent_text(criteria.client_bound_busy))


def rates_table(study: LatencyResults, prose: Prose) -> str:
    sweep = study.setup(SETUP_SWEEP)
    if sweep.empty:
        return prose.sentence(TEMPLATE, "no_rates_table") + "\n"
    criteria = study.criteria
    # One block per server under a heading row (names are too long for a narrow first column).
    columns = [
        Column(stacked("Offered", "(req/s)"), "r"),
        Column(stacked("of sat-", "uration"), "r"),
        Column("$n$", "r"),
        Column(stacked("Achieved", "(req/s)"), "r"),
        Column(stacked("of", "offered"), "r"),
        *ms_columns("p50", "p90", "p99", "p99.9", "max"),
        Column(stacked("Time-", "outs"), "r"),
        Column(stacked("vs.", "floor"), "c"),
    ]
    body, breaks = [], []
    starts = set(group_starts(sweep["server"]))
    for index, (_, row) in enumerate(sweep.iterrows()):
        if index in starts:
            breaks.append(len(body))
            body.append(family_row(len(columns), escape(row["server"])))
        body.append(
            [
                format_count(row["offered_rate"]),
                format_percent(row["rate_fraction"]),
                format_count(row["n"]),
                format_count(row["achieved_mean"]) + study_marks(row),
                share(row["achieved_fraction_mean"]),
                format_ms(row["latency_p50_s_median"]),
                format_ms(row["latency_p90_s_median"]),
                format_ms(row["latency_p99_s_median"]),
                format_ms(row["latency_p99_9_s_median"]),
                format_ms(row["latency_max_s_max"]),
                format_significant(row["timeouts_mean"], 3),
                VERDICT.get(row["versus_floor"], MISSING),
            ]
        )
    caption = prose.sentence(TEMPLATE, "rates_caption", **rule_words(criteria))
    return render_longtable(
        columns, body, caption, "tab:latency-rates", breaks, notes=notes_block(_notes(sweep, criteria, prose))
    )


def p99_cell(seconds: Any) -> str:
    """A median p99 in ms, or "behind" when most of its trials fell behind the offered rate (+inf)."""
    return "behind" if not is_missing(seconds) and math.isinf(float(seconds)) else format_ms(seconds)


def knee_cell(row: pd.Series) -> str:
    """ "70--90\\,%": p99 had risen beyond the multiple of the floor by the upper fraction, not (shown) at the lower;
    else why there is no knee."""
    if row["knee_state"] != KNEE:
        return NO_KNEE.get(row["knee_state"], MISSING)
    low, high = row["below_fraction"], row["knee_fraction"]
    if is_missing(low) or is_missing(high):
        return format_count(row["knee_rate"])
    return f"{float(low) * 100:g}--{float(high) * 100:g}\\,\\%"


def knees_table(study: LatencyResults, prose: Prose) -> str:
    table = study.knees
    if table.empty:
        return prose.sentence(TEMPLATE, "no_knees_table") + "\n"
    criteria = study.criteria
    columns = [
        Column("Server", "l"),
        Column(stacked("Saturation", "(req/s)"), "r"),
        Column(stacked("Floor", "at"), "r"),
        Column(stacked("Floor", "p99 (ms)"), "r"),
        Column(stacked("Knee", "(of sat.)"), "r"),
        Column(stacked("p99 at", "knee (ms)"), "r"),
        Column(stacked("Trials", "per rate"), "r"),
        Column(stacked("Client-", "bound"), "r"),
        Column(stacked("Dis-", "turbed"), "r"),
    ]
    body = []
    for _, row in table.iterrows():
        knee = row["knee_state"] == KNEE
        body.append(
            [
                escape(row["server"]),
                format_count(row["saturation_rate"]),
                format_percent(row["floor_fraction"]),
                p99_cell(row["floor_p99_s"]),
                knee_cell(row),
                p99_cell(row["knee_p99_s"]) if knee else MISSING,
                format_count(row["trials_per_rate"]),
                format_count(row["n_client_bound"]),
                format_count(row["n_disturbed"]),
            ]
        )
    disturbed = "/".join(f"{share * 100:g}" for share in study.interference_shares)
    caption = prose.sentence(TEMPLATE, "knees_caption", disturbed=disturbed, **rule_words(criteria))
    return adjusted_table(caption, "tab:latency-knees", render_tabular(columns, body)) + "\n"


def source_001_table(study: LatencyResults, prose: Prose) -> str:
    fixed = study.setup(SETUP_FIXED)
    if fixed.empty:
        return prose.sentence(TEMPLATE, "no_source_001_table") + "\n"
    # Connections and the offered rate are one value for all in source 001's set-up: the caption gives them,
    # and a column appears only if the rows differ.
    several_connections = fixed["connections"].nunique() > 1
    several_rates = fixed["offered_rate"].nunique() > 1
    columns = [
        Column("Server", "l"),
        *([Column(stacked("Conn-", "ections"), "r")] if several_connections else []),
        Column("$n$", "r"),
        *([Column(stacked("Offered", "(req/s)"), "r")] if several_rates else []),
        Column(stacked("Achieved", "(req/s)"), "r"),
        Column(stacked(r"95\,\% CI", "(req/s)"), "r"),
        Column(stacked("of", "offered"), "r"),
        *ms_columns("p99", "max"),
        Column(stacked("Timeouts", "per trial"), "r"),
        Column(stacked("001:", "req/s"), "r"),
        Column(stacked("001:", "of offered"), "r"),
        Column(stacked("001:", "max (ms)"), "r"),
        Column(stacked("001:", "timeouts"), "r"),
    ]
    body = []
    for _, row in fixed.iterrows():
        cited = SOURCE_001_RESULTS.get(key_text(row["architecture"]))
        cells = [
            escape(row["variant"]),
            *([format_count(row["connections"])] if several_connections else []),
            format_count(row["n"]),
            *([format_count(row["offered_rate"])] if several_rates else []),
            format_count(row["achieved_mean"]) + study_marks(row),
            table_interval(row["achieved_ci95_low"], row["achieved_ci95_high"], row.get("n")),
            share(row["achieved_fraction_mean"]),
            format_ms(row["latency_p99_s_mean"]),
            format_ms(row["latency_max_s_max"]),
            format_significant(row["timeouts_mean"], 3),
        ]
        if cited:
            cells += [
                format_count(cited["requests_per_sec"]),
                share(cited["requests_per_sec"] / SOURCE_001_RATE),
                format_ms(cited["latency_max_s"]),
                format_count(cited["timeouts"]),
            ]
        else:
            cells += [MISSING] * 4
        body.append(cells)
    caption = prose.sentence(
        TEMPLATE,
        "source_001_caption",
        offered=[format_count(r) for r in distinct_values(fixed, "offered_rate")],
        connections=[format_count(c) for c in distinct_values(fixed, "connections")],
    )
    return (
        adjusted_table(
            caption,
            "tab:latency-001",
            render_tabular(columns, body, [0]),
            notes_block([*_notes(fixed, study.criteria, prose), *range_notes(fixed)]),
        )
        + "\n"
    )
