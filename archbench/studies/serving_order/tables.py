"""The serving-order table: per run (one look of the test each) and offered rate, each hand-off's p50, p99 and p99.9
and LIFO / FIFO paired within rounds, with intervals at the level each look is judged at. The words are
paper/templates/serving_order/tables.tex.j2."""

from __future__ import annotations

import pandas as pd

from archbench.render.common import tt
from archbench.render.latex import (
    MISSING,
    Column,
    adjusted_table,
    format_bound,
    format_count,
    format_ms,
    format_significant,
    is_missing,
    notes_block,
    render_tabular,
)
from archbench.render.prose import Prose
from archbench.studies.serving_order.data import (
    FAMILY_ERROR,
    PERCENTILES,
    ServingOrderResults,
)
from archbench.studies.serving_order.facts import format_level, usable_rule

TEMPLATE = "serving_order/tables"


def ratio_cell(row: pd.Series, q: str) -> str:
    if is_missing(row[f"ratio_p{q}"]):
        return MISSING
    interval = (
        ""
        if is_missing(row[f"low_p{q}"])
        else f" ({format_bound(row[f'low_p{q}'])}--{format_bound(row[f'high_p{q}'])})"
    )
    return format_significant(row[f"ratio_p{q}"], 2) + interval


def comparison_table(study: ServingOrderResults, prose: Prose) -> str:
    several = len(study.looks) > 1
    level = format_level(study.level)
    columns = [
        *([Column(prose.sentence(TEMPLATE, "run_heading"), "r")] if several else []),
        Column(prose.sentence(TEMPLATE, "rate_heading"), "r"),
        Column(prose.sentence(TEMPLATE, "usable_heading"), "r"),
        *(Column(prose.sentence(TEMPLATE, "fifo_heading", q=q.replace("_", ".")), "r") for q in PERCENTILES),
        *(Column(prose.sentence(TEMPLATE, "lifo_heading", q=q.replace("_", ".")), "r") for q in PERCENTILES),
        *(
            Column(prose.sentence(TEMPLATE, "ratio_heading", q=q.replace("_", "."), level=level), "r")
            for q in PERCENTILES[1:]
        ),
    ]
    rows = []
    for _, row in study.comparison.iterrows():
        rows.append(
            [
                *([format_count(row["look"])] if several else []),
                format_count(row["offered_rate"]),
                f"{format_count(row['fifo_usable'])}/{format_count(row['lifo_usable'])}",
                *(format_ms(row[f"fifo_p{q}_s"]) for q in PERCENTILES),
                *(format_ms(row[f"lifo_p{q}_s"]) for q in PERCENTILES),
                *(ratio_cell(row, q) for q in PERCENTILES[1:]),
            ]
        )
    runs = [
        {"number": i + 1, "campaign_tt": tt(look.name), "rounds": format_count(look.planned_rounds)}
        for i, look in enumerate(study.looks)
    ]
    notes = [prose.sentence(TEMPLATE, "notes", **usable_rule(study))]
    if several:
        family_error = format_level(FAMILY_ERROR)
        notes.append(prose.sentence(TEMPLATE, "runs_note", runs=runs, level=level, family_error=family_error))
    return adjusted_table(
        prose.sentence(TEMPLATE, "caption", level=level, several=several),
        "tab:serving-order",
        render_tabular(columns, rows),
        notes=notes_block(notes),
    )
