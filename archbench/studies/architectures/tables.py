"""The architecture comparison's tables (paper/generated/tables-architectures.tex); a table the campaign cannot
produce becomes a sentence saying why."""

from __future__ import annotations

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import Comparison, Labeller, key_text
from archbench.render.common import starved_cell
from archbench.render.formats import format_cpu_per_request
from archbench.render.latex import (
    LATENCY_MARK,
    NOT_MEASURED,
    Column,
    adjusted_table,
    any_positive,
    count_or_zero,
    escape,
    format_compact,
    format_count,
    format_decimal,
    format_ms,
    format_percent,
    mark_notes,
    ms_columns,
    render_tabular,
    row_marks,
    stacked_column,
    table_interval,
    table_notes,
)
from archbench.render.prose import Prose

TABLES_TEMPLATE = "architectures/tables"  # captions and "no table" sentences


def comparison_label(one: Comparison) -> str:
    return f"tab:architectures-p{one.pipeline}"


def point_text(one: Comparison) -> str:
    """ "50 wrk connections, one wrk thread, 1-s trials" for a caption."""
    point = one.point
    parts = [f"{format_count(point.get('connections'))} wrk connections"]
    if "load_threads" in point:
        threads = int(float(point["load_threads"]))
        parts.append(f"{threads} wrk thread{'s' if threads != 1 else ''}")
    if "duration_s" in point:
        parts.append(f"{format_compact(point['duration_s'])}-s trials")
    if key_text(point.get("response")) not in ("", "test"):
        parts.append(f"response {escape(key_text(point['response']))}")
    return ", ".join(parts)


def comparison_row_cells(row: pd.Series, labels: Labeller, reference: bool = False) -> list[str]:
    name = escape(labels.variant(row)) + (" (reference)" if reference else "")
    unsupported_only = count_or_zero(row.get("n")) == 0 and count_or_zero(row.get("n_unsupported")) > 0
    mean = "unsupported" if unsupported_only else format_count(row["mean"])
    errors = "/".join(
        [format_compact(row.get("errors_mean")), format_compact(row.get("timeouts_mean")), starved_cell(row)]
    )
    latency_mark = LATENCY_MARK if count_or_zero(row.get("n_latency_invalid")) > 0 else ""
    return [
        name,
        format_count(row["n"]),
        mean + row_marks(row, client_bound=True),
        table_interval(row["ci95_low"], row["ci95_high"], row.get("n")),
        format_decimal(row.get("ratio_to_nginx"), 2),
        format_ms(row.get("latency_p50_s_mean")) + latency_mark,
        format_ms(row.get("latency_p99_s_mean")) + latency_mark,
        format_cpu_per_request(row.get("server_cpu_us_per_request")),
        errors,
        format_percent(row.get("load_busy_share_mean")),
    ]


def comparison_table(one: Comparison, labels: Labeller, prose: Prose) -> str:
    """Every architecture at one pipeline depth and point, nginx below a rule as the reference."""
    columns = [
        Column("Server", r">{\raggedright\arraybackslash}p{3.1cm}"),
        Column("$n$", "r"),
        stacked_column("Mean", "(r/s)"),
        stacked_column(r"95\,\% CI of", "the mean (r/s)"),
        stacked_column("Ratio to", "nginx"),
        *ms_columns("p50", "p99"),
        stacked_column("Server CPU", r"(\textmu s/req.)"),
        stacked_column("Errors/time-", "outs/starved"),
        stacked_column("wrk", "CPU"),
    ]
    body = [comparison_row_cells(row, labels) for _, row in one.rows.iterrows()]
    breaks = []
    if one.reference is not None:
        breaks.append(len(body))
        body.append(comparison_row_cells(one.reference, labels, reference=True))
    caption = prose.sentence(
        TABLES_TEMPLATE,
        "comparison_caption",
        {
            "pipeline": one.pipeline,
            "point": point_text(one),
            "has_reference": one.reference is not None,
            "has_floor": one.upper_bound is not None,
        },
    )
    all_rows = one.all_rows
    notes = mark_notes(prose)
    extra = [notes.not_measured] if any(starved_cell(r) == NOT_MEASURED for _, r in all_rows.iterrows()) else []
    if any_positive(all_rows, "n_latency_invalid"):
        extra.append(notes.latency)
    return adjusted_table(
        caption,
        comparison_label(one),
        render_tabular(columns, body, breaks),
        table_notes(all_rows, notes, extra, client_bound=True),
    )


def comparison_tables(summary: pd.DataFrame, prose: Prose) -> tuple[tuple[str, ...], str]:
    """(the labels of the comparison tables, tables-architectures.tex): a table per pipeline depth at which two or
    more servers can be compared, else a sentence saying why there is none."""
    labels = Labeller(summary) if not summary.empty else None
    table_labels, parts = [], []
    for one in analysis.comparisons(summary):
        if len(one.all_rows) >= 2:
            table_labels.append(comparison_label(one))
            parts.append(comparison_table(one, labels, prose))
        else:
            only = one.all_rows.iloc[0]
            parts.append(
                prose.sentence(
                    TABLES_TEMPLATE,
                    "single_server_comparison",
                    pipeline=one.pipeline,
                    server=escape(labels.variant(only)),
                )
                + "\n"
            )
    if not parts:
        return (), prose.sentence(TABLES_TEMPLATE, "no_comparison") + "\n"
    return tuple(table_labels), "\n\n".join(parts) + "\n"
