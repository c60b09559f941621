"""The echo study's tables: throughput and RTT per server and client count, and the connection ceiling
(--max-conns). Column headers are short labels; captions, notes and the no-data sentences are the
templates' (paper/templates/echo/tables.tex.j2)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from archbench.analyze.analysis import CLIENT_BOUND_THRESHOLD
from archbench.render.latex import (
    FAILED_MARK,
    FLAGGED_MARK,
    MISSING,
    Column,
    cell_of,
    escape,
    flagged_failed,
    format_count,
    format_range,
    format_significant,
    group_starts,
    is_missing,
    ms_cells,
    notes_for_marks,
    range_notes,
    row_marks,
    stacked_column,
    study_mark_notes,
    study_marks,
    table_float,
    table_interval,
    tabulate,
)
from archbench.render.prose import Prose
from archbench.studies.echo.data import KIB, MB, EchoResults, tally_items

TEMPLATE = "echo/tables"


def mb_text(value: Any) -> str:
    """Bytes per second as MB/s, three significant digits."""
    return MISSING if is_missing(value) else format_significant(float(value) / MB, 3)


def kib_text(value: Any) -> str:
    """Bytes as KiB, three significant digits."""
    return MISSING if is_missing(value) else format_significant(float(value) / KIB, 3)


def reasons_text(reasons: str) -> str:
    """ "cap_reached:2;echo_timeout:1" -> "cap\\_reached (2), echo\\_timeout (1)"; one reason alone without its count."""
    items = tally_items(reasons)
    if not items:
        return MISSING
    if len(items) == 1:
        return r"\texttt{" + escape(items[0][0]) + "}"
    return ", ".join(r"\texttt{" + escape(name) + "}" + f" ({count})" for name, count in items)


def flagged_note(prose: Prose) -> str:
    """The throughput table's note on its flagged mark (as study_mark_notes puts it under the table)."""
    return prose.sentence(TEMPLATE, "flagged_note", mark=FLAGGED_MARK)


def connect_failures(row: pd.Series) -> str:
    """The clients that failed to connect, counting those never attempted after the run stopped."""
    connect = row["connect_errors"]
    if not is_missing(row.get("not_attempted")) and float(row["not_attempted"]) > 0:
        connect = (0.0 if is_missing(connect) else float(connect)) + float(row["not_attempted"])
    return format_count(connect)


def throughput_table(study: EchoResults, prose: Prose) -> str:
    summary = study.summary
    if summary.empty:
        return prose.sentence(TEMPLATE, "no_throughput_table") + "\n"
    columns, body = tabulate(
        summary,
        [
            (Column("Server", "l"), lambda row: escape(row["variant"])),
            (Column("Clients", "r"), cell_of("connections")),
            (Column("$n$", "r"), cell_of("n")),
            (
                stacked_column("Received", "(MB/s)"),
                lambda row: mb_text(row["bytes_received_per_sec_mean"]) + study_marks(row),
            ),
            (
                stacked_column(r"95\,\% CI", "(MB/s)"),
                lambda row: table_interval(
                    row["bytes_received_per_sec_ci95_low"], row["bytes_received_per_sec_ci95_high"], row["n"], mb_text
                ),
            ),
            *ms_cells(
                ("RTT p50", "rtt_p50_s_mean"),
                ("p99", "rtt_p99_s_mean"),
                ("p99.9", "rtt_p99_9_s_mean"),
                ("max", "rtt_max_s_max"),
            ),
            (stacked_column("Flagged/", "failed"), flagged_failed),
            (stacked_column("Verify", "errors"), cell_of("verify_errors")),
            (stacked_column("Connect", "failures"), connect_failures),
        ],
    )
    notes = [
        *study_mark_notes(summary, prose, TEMPLATE, f"{CLIENT_BOUND_THRESHOLD * 100:.0f}"),
        *range_notes(summary),
    ]
    caption = prose.sentence(TEMPLATE, "throughput_caption")
    return table_float(caption, "tab:echo", columns, body, group_starts(summary["variant"]), notes)


def max_conns_table(study: EchoResults, prose: Prose) -> str:
    table = study.max_conns
    if table.empty:
        return prose.sentence(TEMPLATE, "no_max_conns_table") + "\n"
    columns, body = tabulate(
        table,
        [
            (Column("Server", "l"), lambda row: escape(row["variant"])),
            (Column("Cap", "r"), cell_of("cap")),
            (Column("$n$", "r"), cell_of("n")),
            (
                stacked_column("Connections", "held"),
                lambda row: format_range(row["reached_min"], row["reached_max"]) + row_marks(row, unsupported=False),
            ),
            (stacked_column("Alive at", "the end"), cell_of("alive_at_end_min")),
            (
                Column("Why it stopped", r">{\raggedright\arraybackslash}p{3.1cm}"),
                cell_of("stop_reasons", reasons_text),
            ),
            (stacked_column("Server RSS per", "connection (KiB)"), cell_of("rss_per_conn_bytes_median", kib_text)),
            (
                stacked_column("Open files", "soft/hard"),
                lambda row: f"{format_count(row['open_files_soft'])}/{format_count(row['open_files_hard'])}",
            ),
            (stacked_column("Flagged/", "failed"), flagged_failed),
        ],
    )
    flags = "; ".join(escape(f"{r['variant']}: {r['flags']}") for _, r in table.iterrows() if r["n_flagged"] > 0)
    notes = notes_for_marks(
        table,
        unsupported=None,
        flagged=prose.sentence(TEMPLATE, "max_conns_flagged_note", mark=FLAGGED_MARK, flags=flags),
        failed=prose.sentence(TEMPLATE, "max_conns_failed_note", mark=FAILED_MARK),
    )
    caption = prose.sentence(TEMPLATE, "max_conns_caption")
    return table_float(caption, "tab:echo-max-conns", columns, body, notes=notes)
