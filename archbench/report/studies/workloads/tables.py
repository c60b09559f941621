"""The workloads section's tables: the decision map in full (every configuration at every workload point) and
"what to pick" (per point, the configurations not distinguishable from the best, or why the point cannot rank the
servers here). The words are paper/templates/workloads/tables.tex.j2."""

from __future__ import annotations

import pandas as pd

from archbench.report.latex import (
    FILL_COLUMN,
    MISSING,
    Column,
    escape,
    format_count,
    format_decimal,
    format_ms,
    format_significant,
    is_missing,
    render_longtable,
)
from archbench.report.prose import Prose
from archbench.report.studies.workloads.data import WorkloadsResults, points, rankable

TEMPLATE = "workloads/tables"
BOTTLENECK_LETTER = {"server": "s", "client": "c", "both": "b", "wait": "w", "neither": "n", "": MISSING}


def ratio_cell(row: pd.Series) -> str:
    """'0.90 (0.89--0.91)': the paired ratio to the point's best with its interval; 'best' for the best."""
    if bool(row["is_best"]):
        return r"\textbf{best}"
    if is_missing(row["ratio"]):
        return MISSING
    interval = (
        ""
        if is_missing(row["low"])
        else f" ({format_significant(row['low'], 2)}--{format_significant(row['high'], 2)})"
    )
    return format_significant(row["ratio"], 2) + interval


def map_table(study: WorkloadsResults, prose: Prose) -> str:
    frame = study.map
    columns = [
        Column(prose.sentence(TEMPLATE, "server_heading"), FILL_COLUMN),
        Column(prose.sentence(TEMPLATE, "rate_heading"), "r"),
        Column(prose.sentence(TEMPLATE, "ratio_heading"), "r"),
        Column(prose.sentence(TEMPLATE, "p99_heading"), "r"),
        Column(prose.sentence(TEMPLATE, "cpu_heading"), "r"),
        Column(prose.sentence(TEMPLATE, "bottleneck_heading"), "c"),
        Column(prose.sentence(TEMPLATE, "n_heading"), "r"),
    ]
    rows: list[list[str] | str] = []
    breaks = []
    for point in points(frame):
        breaks.append(len(rows))
        rows.append(r"\multicolumn{" + str(len(columns)) + r"}{@{}l}{\textit{" + escape(point) + r"}}\\")
        group = frame[frame["point"] == point].sort_values("mean", ascending=False, kind="stable")
        for _, row in group.iterrows():
            rows.append(
                [
                    escape(row["variant"]) + (r"\,\textsuperscript{\dag}" if bool(row["pick"]) else ""),
                    format_count(row["mean"]),
                    ratio_cell(row),
                    format_ms(row["latency_p99_s_mean"]),
                    format_decimal(row["server_cpu_us_per_request"], 1),
                    BOTTLENECK_LETTER.get(str(row["bottleneck"]), MISSING),
                    format_count(row["n"]),
                ]
            )
    notes = prose.sentence(TEMPLATE, "map_notes")
    return render_longtable(
        columns, rows, prose.sentence(TEMPLATE, "map_caption"), "tab:workloads-map", breaks, notes=notes
    )


def picks_table(study: WorkloadsResults, prose: Prose) -> str:
    frame = study.map
    columns = [
        Column(prose.sentence(TEMPLATE, "point_heading"), "l"),
        Column(prose.sentence(TEMPLATE, "picks_heading"), FILL_COLUMN),
        Column(prose.sentence(TEMPLATE, "detectable_heading"), "r"),
    ]
    rows: list[list[str] | str] = []
    for point in points(frame):
        group = frame[frame["point"] == point]
        best = group[group["is_best"]]
        if best.empty:
            picks = prose.sentence(TEMPLATE, "no_best")
        elif not rankable(group):
            picks = prose.sentence(TEMPLATE, "not_rankable", bottleneck=str(best.iloc[0]["bottleneck"]))
        else:
            chosen = group[group["pick"]].sort_values("mean", ascending=False, kind="stable")
            picks = ", ".join(escape(v) for v in chosen["variant"])
        detectable = group["detectable_pct"].dropna()
        rows.append(
            [
                escape(point),
                picks,
                MISSING if detectable.empty else format_count(detectable.median()) + r"\,\%",
            ]
        )
    return render_longtable(
        columns,
        rows,
        prose.sentence(TEMPLATE, "picks_caption"),
        "tab:workloads-picks",
        notes=prose.sentence(TEMPLATE, "picks_notes"),
    )
