"""The latency study's tables: latency against offered rate (fraction sweep), each server's knee, and source
001's set-up beside its published numbers. Column headers and verdict cells are short labels; captions,
notes and no-data sentences are the templates' (paper/templates/latency/tables.tex.j2)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from archbench.analyze.analysis import key_text
from archbench.report.latex import (
    CLIENT_BOUND_MARK,
    FLAGGED_MARK,
    MISSING,
    Column,
    adjusted_table,
    escape,
    format_count,
    format_ms,
    format_percent,
    format_significant,
    is_missing,
    mark_notes,
    notes_block,
    notes_for_marks,
    range_notes,
    render_longtable,
    render_tabular,
    row_marks,
    stacked,
    table_interval,
)
from archbench.report.prose import Prose
from archbench.report.studies.latency.data import (
    SETUP_FIXED,
    SETUP_SWEEP,
    SOURCE_001_RATE,
    SOURCE_001_RESULTS,
    Criteria,
    LatencyResults,
    ms_text,
    percent_text,
    threshold_key,
)

TEMPLATE = "latency/tables"
VERDICT = {"yes": "yes", "no": "no", "excluded": "excl.", "none": MISSING}


def share(fraction: Any) -> str:
    """A fraction as a percentage, one decimal, or two significant digits below 1 % (0.049 %, not 0.0 %)."""
    if is_missing(fraction):
        return MISSING
    percent = float(fraction) * 100.0
    text = format_significant(percent, 2) if 0 < abs(percent) < 1 else f"{percent:,.1f}"
    return text + r"\,\%"


def _marks(row: pd.Series) -> str:
    # The latency tables count unsupported trials but do not mark them.
    return row_marks(row, client_bound=True, unsupported=False)


def _timeouts(value: Any) -> str:
    return format_significant(value, 3) if not is_missing(value) else MISSING


def _notes(rows: pd.DataFrame, criteria: Criteria, prose: Prose) -> list[str]:
    return notes_for_marks(
        rows,
        failed=mark_notes(prose).failed,
        unsupported=None,
        flagged=prose.sentence(TEMPLATE, "flagged_note", mark=FLAGGED_MARK),
        client_bound=prose.sentence(
            TEMPLATE, "client_bound_note", mark=CLIENT_BOUND_MARK, threshold=percent_text(criteria.client_bound_busy)
        ),
    )


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
        Column(stacked("p50", "(ms)"), "r"),
        Column(stacked("p90", "(ms)"), "r"),
        Column(stacked("p99", "(ms)"), "r"),
        Column(stacked("p99.9", "(ms)"), "r"),
        Column(stacked("max", "(ms)"), "r"),
        Column(stacked("Time-", "outs"), "r"),
        *[Column(stacked("p99 $<$", f"{ms_text(t)}\\,ms"), "c") for t in criteria.thresholds],
    ]
    body, breaks = [], []
    previous = None
    for _, row in sweep.iterrows():
        if row["server"] != previous:
            breaks.append(len(body))
            body.append([f"\\multicolumn{{{len(columns)}}}{{@{{}}l}}{{\\textit{{{escape(row['server'])}}}}}"])
            previous = row["server"]
        body.append(
            [
                format_count(row["offered_rate"]),
                format_percent(row["rate_fraction"]),
                format_count(row["n"]),
                format_count(row["achieved_mean"]) + _marks(row),
                share(row["achieved_fraction_mean"]),
                format_ms(row["latency_p50_s_mean"]),
                format_ms(row["latency_p90_s_mean"]),
                format_ms(row["latency_p99_s_mean"]),
                format_ms(row["latency_p99_9_s_mean"]),
                format_ms(row["latency_max_s_max"]),
                _timeouts(row["timeouts_mean"]),
                *[VERDICT.get(row[f"qualifies_{threshold_key(t)}"], MISSING) for t in criteria.thresholds],
            ]
        )
    caption = prose.sentence(TEMPLATE, "rates_caption", achieved=percent_text(criteria.achieved_fraction))
    return render_longtable(
        columns, body, caption, "tab:latency-rates", breaks, notes=notes_block(_notes(sweep, criteria, prose))
    )


def knees_table(study: LatencyResults, prose: Prose) -> str:
    table = study.knees
    if table.empty:
        return prose.sentence(TEMPLATE, "no_knees_table") + "\n"
    criteria = study.criteria
    columns = [Column("Server", "l"), Column(stacked("Saturation", "(req/s)"), "r"), Column("Rates", "r")]
    for threshold in criteria.thresholds:
        columns += [
            Column(stacked(f"Knee, p99 $<$ {ms_text(threshold)}\\,ms", "(req/s)"), "r"),
            Column(stacked("of sat-", "uration"), "r"),
        ]
    columns += [
        Column(stacked("Lowest p99", "(ms)"), "r"),
        Column(stacked("at", "(req/s)"), "r"),
        Column(stacked("Client-bound", "trials"), "r"),
    ]
    body = []
    for _, row in table.iterrows():
        cells = [escape(row["server"]), format_count(row["saturation_rate"]), format_count(row["rates"])]
        for threshold in criteria.thresholds:
            key = threshold_key(threshold)
            knee = row[f"knee_{key}"]
            cells += ["none" if is_missing(knee) else format_count(knee), format_percent(row[f"knee_{key}_fraction"])]
        lowest = format_ms(row["lowest_p99_s"]) + (CLIENT_BOUND_MARK if row["lowest_p99_client_bound_only"] else "")
        cells += [lowest, format_count(row["lowest_p99_rate"]), format_count(row["n_client_bound"])]
        body.append(cells)
    caption = prose.sentence(TEMPLATE, "knees_caption", achieved=percent_text(criteria.achieved_fraction))
    notes = []
    if table["lowest_p99_client_bound_only"].any():
        notes.append(prose.sentence(TEMPLATE, "knees_client_bound_note", mark=CLIENT_BOUND_MARK))
    return adjusted_table(caption, "tab:latency-knees", render_tabular(columns, body), notes_block(notes)) + "\n"


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
        Column(stacked("p99", "(ms)"), "r"),
        Column(stacked("max", "(ms)"), "r"),
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
            format_count(row["achieved_mean"]) + _marks(row),
            table_interval(row["achieved_ci95_low"], row["achieved_ci95_high"], row.get("n")),
            share(row["achieved_fraction_mean"]),
            format_ms(row["latency_p99_s_mean"]),
            format_ms(row["latency_max_s_max"]),
            _timeouts(row["timeouts_mean"]),
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
        offered=[format_count(r) for r in sorted(set(fixed["offered_rate"].dropna()))],
        connections=[format_count(c) for c in sorted(set(fixed["connections"].dropna()))],
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
