"""The pool study's tables (paper/generated/tables-threads.tex, table-configurations.tex).

A table the campaign cannot produce becomes a sentence saying why; the sentences citing tables and figures
(paper/templates/pool/citations.tex.j2) are empty (or a plain statement) when the thing they would cite does not
exist, so report.tex never \\ref's a missing label.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from archbench.analyze.analysis import ORIGINAL_ARCHITECTURES, Labeller, architecture_label, key_text, several_depths
from archbench.render.common import depth_of, short_family, starved_cell
from archbench.render.formats import format_cpu_per_request
from archbench.render.latex import (
    NOT_MEASURED,
    Column,
    MarkNotes,
    adjusted_table,
    any_positive,
    cell_of,
    escape,
    flagged_failed,
    format_compact,
    format_count,
    format_percent,
    group_starts,
    mark_notes,
    render_longtable,
    render_tabular,
    row_marks,
    stacked_column,
    table_interval,
    table_notes,
    tabulate,
)
from archbench.render.prose import Prose

TABLES_TEMPLATE = "pool/tables"  # captions and "no table" sentences


def pool_size_table(series_rows: pd.DataFrame, label: str, caption: str, notes: MarkNotes) -> str:
    """Source 000's table (N, sample mean, sample sd) plus n and the 95% CI of the mean.

    Rows are sorted by connections, then N. A Connections column appears when
    the table mixes connection counts; the N column only for the thread pool,
    whose pool size is the swept parameter (the other architectures have none).
    """
    rows = series_rows.sort_values(["connections", "threads"], kind="stable")
    show_connections = rows["connections"].nunique() > 1 or not _is_pool(rows)
    show_threads = _is_pool(rows)
    columns = []
    if show_connections:
        columns.append(stacked_column("Connections", "(wrk \\texttt{-c})"))
    if show_threads:
        columns.append(stacked_column("Number of", "threads $N$"))
    columns += [
        Column("$n$", "r"),
        stacked_column("Sample mean", "(r/s)"),
        stacked_column("Sample standard", "deviation (r/s)"),
        stacked_column(r"95\,\% CI of", "the mean (r/s)"),
    ]
    body = []
    for _, row in rows.iterrows():
        marks = row_marks(row, client_bound=True)
        cells = []
        if show_connections:
            cells.append(format_count(row["connections"]) + ("" if show_threads else marks))
        if show_threads:
            cells.append(format_count(row["threads"]) + marks)
        cells += [
            format_count(row["n"]),
            format_count(row["mean"]),
            format_count(row["sd"]),
            table_interval(row["ci95_low"], row["ci95_high"], row.get("n")),
        ]
        body.append(cells)
    # A rule between connection counts when the table has both columns.
    breaks = group_starts(rows["connections"]) if show_connections and show_threads else []
    tabular = render_tabular(columns, body, breaks)
    return adjusted_table(
        caption, label, tabular, table_notes(rows, notes, client_bound=True), size=r"\small", shrink=False
    )


def _is_pool(rows: pd.DataFrame) -> bool:
    return bool((rows["architecture"] == "thread_pool").all())


def pool_size_table_blocks(summary: pd.DataFrame, prose: Prose | None = None) -> list[tuple[str, str]]:
    """(label, table) per architecture, dispatch mode and pipeline depth, in source 000's form.

    Only the designs of source 000's comparison (blocking, thread per connection, thread pool);
    the event-driven architectures and nginx are in the architecture comparison. Without `prose`, the
    repository's templates.
    """
    prose = prose or Prose()
    if summary.empty:
        return []
    notes = mark_notes(prose)
    summary = summary[summary["architecture"].isin(ORIGINAL_ARCHITECTURES)]
    if summary.empty:
        return []
    blocks = []
    group_fields = [f for f in ("architecture", "dispatch", "handoff", "pipeline") if f in summary]
    depths = several_depths(summary)
    keyed = summary.assign(_key=[tuple(key_text(r[f]) for f in group_fields) for _, r in summary.iterrows()])
    for key, rows in keyed.groupby("_key", sort=False):
        rows = rows.drop(columns="_key")
        first = rows.iloc[0]
        depth = depth_of(first)
        name = architecture_label(first["architecture"], first.get("dispatch"), first.get("handoff"))
        connections = sorted(rows["connections"].dropna().unique())
        caption = prose.sentence(
            TABLES_TEMPLATE,
            "pool_size_caption",
            {
                "name": escape(name),
                "depth": depth if depths else None,
                "pool": _is_pool(rows),
                "connections": format_count(connections[0]) if len(connections) == 1 else None,
                "architecture": str(first["architecture"]),
            },
        )
        # Depth 1 keeps the label it had before pipelining existed.
        parts = [k for k in key[:-1] if k] if "pipeline" in group_fields else [k for k in key if k]
        label = "tab:threads-" + "-".join(parts).replace("_", "-") + ("" if depth == "1" else f"-p{depth}")
        blocks.append((label, pool_size_table(rows, label, caption, notes)))
    return blocks


def pool_size_tables(blocks: Sequence[tuple[str, str]], prose: Prose) -> str:
    """The source-000 tables (tables-threads.tex) of `blocks` (pool_size_table_blocks), or the sentence saying the
    campaign has none."""
    if not blocks:
        return prose.sentence(TABLES_TEMPLATE, "no_pool_size_table") + "\n"
    return "\n\n".join(tex for _, tex in blocks) + "\n"


def configurations_table(summary: pd.DataFrame, prose: Prose) -> str:
    """Every configuration with the starvation evidence next to its throughput.

    A longtable: a full campaign has dozens of configurations and must be able to break across pages.
    """
    if summary.empty:
        return prose.sentence(TABLES_TEMPLATE, "no_configurations") + "\n"
    labels = Labeller(summary)
    depths = several_depths(summary)
    any_unsupported = any_positive(summary, "n_unsupported")
    names = [short_family(row, labels) for _, row in summary.iterrows()]
    columns, body = tabulate(
        summary,
        [
            (Column("Architecture", "l"), lambda row: escape(short_family(row, labels))),
            *([(Column("$D$", "r"), lambda row: escape(depth_of(row)))] if depths else []),
            (Column("$N$", "r"), cell_of("threads")),
            (stacked_column("Conn-", "ections"), cell_of("connections")),
            (Column("$n$", "r"), cell_of("n")),
            (
                stacked_column("Mean", "(r/s)"),
                lambda row: format_count(row["mean"]) + row_marks(row, client_bound=True),
            ),
            (stacked_column("SD", "(r/s)"), cell_of("sd")),
            (stacked_column("wrk", "timeouts"), cell_of("timeouts_mean", format_compact)),
            (stacked_column("Starved", "conn."), starved_cell),
            (
                stacked_column("Server CPU", r"(\textmu s/req.)"),
                cell_of("server_cpu_us_per_request", format_cpu_per_request),
            ),
            (stacked_column("wrk", "CPU"), lambda row: format_percent(row.get("load_busy_share_mean"))),
            (
                stacked_column("Flagged/", "failed/unsup." if any_unsupported else "failed"),
                lambda row: (
                    flagged_failed(row) + (f"/{format_count(row.get('n_unsupported'))}" if any_unsupported else "")
                ),
            ),
        ],
    )
    caption = prose.sentence(
        TABLES_TEMPLATE, "configurations_caption", several_depths=depths, any_unsupported=any_unsupported
    )
    notes = mark_notes(prose)
    extra = [notes.not_measured] if any(starved_cell(r) == NOT_MEASURED for _, r in summary.iterrows()) else []
    return render_longtable(
        columns,
        body,
        caption,
        "tab:configurations",
        group_starts(names),
        tabcolsep="2.5pt",
        notes=table_notes(summary, notes, extra, client_bound=True),
    )
