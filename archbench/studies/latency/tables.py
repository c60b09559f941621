"""The latency study's tables: latency against offered rate (fraction sweep) with each rate's verdict against its
design's floor, each server's floor and knee, and source 001's set-up beside its published numbers. Column headers and verdict cells are short labels; captions,
notes and no-data sentences are the templates' (paper/templates/latency/tables.tex.j2)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from archbench.analyze.analysis import key_text
from archbench.analyze.open_loop_trials import SETUP_FIXED, SETUP_SWEEP, requests_counted_throughout
from archbench.render.common import distinct_values
from archbench.render.formats import family_row
from archbench.render.latex import (
    MISSING,
    Cell,
    Column,
    cell_of,
    escape,
    format_count,
    format_ms,
    format_percent,
    format_significant,
    group_starts,
    is_missing,
    ms_cells,
    notes_block,
    range_notes,
    render_longtable,
    stacked_column,
    study_mark_notes,
    study_marks,
    table_float,
    table_interval,
    tabulate,
)
from archbench.render.prose import Prose
from archbench.studies.latency.data import (
    SOURCE_001_RATE,
    SOURCE_001_RESULTS,
    LatencyResults,
    percent_text,
    rule_words,
)
from archbench.studies.latency.knee import (
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
# A sweep rate's verdict against its design's floor (archbench.studies.latency.knee).
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
    columns, cells = tabulate(
        sweep,
        [
            (stacked_column("Offered", "(req/s)"), cell_of("offered_rate")),
            (stacked_column("of sat-", "uration"), cell_of("rate_fraction", format_percent)),
            (Column("$n$", "r"), cell_of("n")),
            (stacked_column("Achieved", "(req/s)"), lambda row: format_count(row["achieved_mean"]) + study_marks(row)),
            (stacked_column("of", "offered"), cell_of("achieved_fraction_mean", share)),
            *ms_cells(
                ("p50", "latency_p50_s_median"),
                ("p90", "latency_p90_s_median"),
                ("p99", "latency_p99_s_median"),
                ("p99.9", "latency_p99_9_s_median"),
                ("max", "latency_max_s_max"),
            ),
            (stacked_column("Time-", "outs"), lambda row: format_significant(row["timeouts_mean"], 3)),
            (stacked_column("vs.", "floor", align="c"), lambda row: VERDICT.get(row["versus_floor"], MISSING)),
        ],
    )
    # One block per server under a heading row (names are too long for a narrow first column).
    body, breaks = [], []
    starts = set(group_starts(sweep["server"]))
    for index, (server, row_cells) in enumerate(zip(sweep["server"], cells, strict=True)):
        if index in starts:
            breaks.append(len(body))
            body.append(family_row(len(columns), escape(server)))
        body.append(row_cells)
    counted = requests_counted_throughout(study.trials)
    caption = prose.sentence(TEMPLATE, "rates_caption", counted=counted, **rule_words(criteria))
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
    columns, body = tabulate(
        table,
        [
            (Column("Server", "l"), lambda row: escape(row["server"])),
            (stacked_column("Saturation", "(req/s)"), cell_of("saturation_rate")),
            (stacked_column("Floor", "at"), cell_of("floor_fraction", format_percent)),
            (stacked_column("Floor", "p99 (ms)"), cell_of("floor_p99_s", p99_cell)),
            (stacked_column("Knee", "(of sat.)"), knee_cell),
            (
                stacked_column("p99 at", "knee (ms)"),
                lambda row: p99_cell(row["knee_p99_s"]) if row["knee_state"] == KNEE else MISSING,
            ),
            (stacked_column("Trials", "per rate"), cell_of("trials_per_rate")),
            (stacked_column("Client-", "bound"), cell_of("n_client_bound")),
            (stacked_column("Dis-", "turbed"), cell_of("n_disturbed")),
        ],
    )
    disturbed = "/".join(f"{share * 100:g}" for share in study.interference_shares)
    caption = prose.sentence(TEMPLATE, "knees_caption", disturbed=disturbed, **rule_words(study.criteria))
    return table_float(caption, "tab:latency-knees", columns, body)


def _cited(show: Callable[[dict[str, Any]], str]) -> Cell:
    """A cell of source 001's published result for the row's architecture; MISSING where it published none."""

    def cell(row: pd.Series) -> str:
        cited = SOURCE_001_RESULTS.get(key_text(row["architecture"]))
        return show(cited) if cited else MISSING

    return cell


def source_001_table(study: LatencyResults, prose: Prose) -> str:
    fixed = study.setup(SETUP_FIXED)
    if fixed.empty:
        return prose.sentence(TEMPLATE, "no_source_001_table") + "\n"
    # Connections and the offered rate are one value for all in source 001's set-up: the caption gives them,
    # and a column appears only if the rows differ.
    several_connections = fixed["connections"].nunique() > 1
    several_rates = fixed["offered_rate"].nunique() > 1
    columns, body = tabulate(
        fixed,
        [
            (Column("Server", "l"), lambda row: escape(row["variant"])),
            *([(stacked_column("Conn-", "ections"), cell_of("connections"))] if several_connections else []),
            (Column("$n$", "r"), cell_of("n")),
            *([(stacked_column("Offered", "(req/s)"), cell_of("offered_rate"))] if several_rates else []),
            (stacked_column("Achieved", "(req/s)"), lambda row: format_count(row["achieved_mean"]) + study_marks(row)),
            (
                stacked_column(r"95\,\% CI", "(req/s)"),
                lambda row: table_interval(row["achieved_ci95_low"], row["achieved_ci95_high"], row.get("n")),
            ),
            (stacked_column("of", "offered"), cell_of("achieved_fraction_mean", share)),
            *ms_cells(("p99", "latency_p99_s_mean"), ("max", "latency_max_s_max")),
            (stacked_column("Timeouts", "per trial"), lambda row: format_significant(row["timeouts_mean"], 3)),
            (stacked_column("001:", "req/s"), _cited(lambda cited: format_count(cited["requests_per_sec"]))),
            (
                stacked_column("001:", "of offered"),
                _cited(lambda cited: share(cited["requests_per_sec"] / SOURCE_001_RATE)),
            ),
            (stacked_column("001:", "max (ms)"), _cited(lambda cited: format_ms(cited["latency_max_s"]))),
            (stacked_column("001:", "timeouts"), _cited(lambda cited: format_count(cited["timeouts"]))),
        ],
    )
    caption = prose.sentence(
        TEMPLATE,
        "source_001_caption",
        offered=[format_count(r) for r in distinct_values(fixed, "offered_rate")],
        connections=[format_count(c) for c in distinct_values(fixed, "connections")],
    )
    notes = [*_notes(fixed, study.criteria, prose), *range_notes(fixed)]
    return table_float(caption, "tab:latency-001", columns, body, [0], notes)
