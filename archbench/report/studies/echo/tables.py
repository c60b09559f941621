"""The echo study's tables: throughput and RTT per server and client count, and the connection ceiling
(--max-conns). Column headers are short labels; captions, notes and the no-data sentences are the
templates' (paper/templates/echo/tables.tex.j2)."""

from __future__ import annotations

from typing import Any

from archbench.analyze.analysis import CLIENT_BOUND_THRESHOLD
from archbench.report.latex import (
    FAILED_MARK,
    FLAGGED_MARK,
    MISSING,
    Column,
    adjusted_table,
    escape,
    format_count,
    format_ms,
    format_range,
    format_significant,
    group_starts,
    is_missing,
    ms_columns,
    notes_block,
    notes_for_marks,
    range_notes,
    render_tabular,
    row_marks,
    stacked,
    study_mark_notes,
    study_marks,
    table_interval,
)
from archbench.report.prose import Prose
from archbench.report.studies.echo.data import KIB, MB, EchoResults, tally_items

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


def throughput_table(study: EchoResults, prose: Prose) -> str:
    summary = study.summary
    if summary.empty:
        return prose.sentence(TEMPLATE, "no_throughput_table") + "\n"
    columns = [
        Column("Server", "l"),
        Column("Clients", "r"),
        Column("$n$", "r"),
        Column(stacked("Received", "(MB/s)"), "r"),
        Column(stacked(r"95\,\% CI", "(MB/s)"), "r"),
        *ms_columns("RTT p50", "p99", "p99.9", "max"),
        Column(stacked("Flagged/", "failed"), "r"),
        Column(stacked("Verify", "errors"), "r"),
        Column(stacked("Connect", "failures"), "r"),
    ]
    body = []
    for _, row in summary.iterrows():
        connect = row["connect_errors"]
        if not is_missing(row.get("not_attempted")) and float(row["not_attempted"]) > 0:
            connect = (0.0 if is_missing(connect) else float(connect)) + float(row["not_attempted"])
        body.append(
            [
                escape(row["variant"]),
                format_count(row["connections"]),
                format_count(row["n"]),
                mb_text(row["bytes_received_per_sec_mean"]) + study_marks(row),
                table_interval(
                    row["bytes_received_per_sec_ci95_low"], row["bytes_received_per_sec_ci95_high"], row["n"], mb_text
                ),
                format_ms(row["rtt_p50_s_mean"]),
                format_ms(row["rtt_p99_s_mean"]),
                format_ms(row["rtt_p99_9_s_mean"]),
                format_ms(row["rtt_max_s_max"]),
                f"{format_count(row['n_flagged'])}/{format_count(row['n_failed'])}",
                format_count(row["verify_errors"]),
                format_count(connect),
            ]
        )
    notes = [
        *study_mark_notes(summary, prose, TEMPLATE, f"{CLIENT_BOUND_THRESHOLD * 100:.0f}"),
        *range_notes(summary),
    ]
    caption = prose.sentence(TEMPLATE, "throughput_caption")
    return (
        adjusted_table(
            caption, "tab:echo", render_tabular(columns, body, group_starts(summary["variant"])), notes_block(notes)
        )
        + "\n"
    )


def max_conns_table(study: EchoResults, prose: Prose) -> str:
    table = study.max_conns
    if table.empty:
        return prose.sentence(TEMPLATE, "no_max_conns_table") + "\n"
    columns = [
        Column("Server", "l"),
        Column("Cap", "r"),
        Column("$n$", "r"),
        Column(stacked("Connections", "held"), "r"),
        Column(stacked("Alive at", "the end"), "r"),
        Column("Why it stopped", r">{\raggedright\arraybackslash}p{3.1cm}"),
        Column(stacked("Server RSS per", "connection (KiB)"), "r"),
        Column(stacked("Open files", "soft/hard"), "r"),
        Column(stacked("Flagged/", "failed"), "r"),
    ]
    body = []
    for _, row in table.iterrows():
        marks = row_marks(row, unsupported=False)
        body.append(
            [
                escape(row["variant"]),
                format_count(row["cap"]),
                format_count(row["n"]),
                format_range(row["reached_min"], row["reached_max"]) + marks,
                format_count(row["alive_at_end_min"]),
                reasons_text(row["stop_reasons"]),
                kib_text(row["rss_per_conn_bytes_median"]),
                f"{format_count(row['open_files_soft'])}/{format_count(row['open_files_hard'])}",
                f"{format_count(row['n_flagged'])}/{format_count(row['n_failed'])}",
            ]
        )
    flags = "; ".join(escape(f"{r['variant']}: {r['flags']}") for _, r in table.iterrows() if r["n_flagged"] > 0)
    notes = notes_for_marks(
        table,
        unsupported=None,
        flagged=prose.sentence(TEMPLATE, "max_conns_flagged_note", mark=FLAGGED_MARK, flags=flags),
        failed=prose.sentence(TEMPLATE, "max_conns_failed_note", mark=FAILED_MARK),
    )
    caption = prose.sentence(TEMPLATE, "max_conns_caption")
    return adjusted_table(caption, "tab:echo-max-conns", render_tabular(columns, body), notes_block(notes)) + "\n"
