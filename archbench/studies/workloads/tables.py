"""The workloads section's tables: the decision map in full (every configuration at every workload point) and
"what to pick" (per point, the configurations shown within delta of the best, how many were shown slower, those still
open with the rounds the point would need, or why the point cannot rank the servers here). The words are
paper/templates/workloads/tables.tex.j2."""

from __future__ import annotations

from typing import Any

import pandas as pd

from archbench.render.latex import (
    FILL_COLUMN,
    MISSING,
    Column,
    cell_of,
    escape,
    format_bound,
    format_count,
    format_decimal,
    format_ms,
    format_significant,
    is_missing,
    render_longtable,
    tabulate,
)
from archbench.render.prose import Prose
from archbench.studies.workloads.data import UNRANKED, WorkloadsResults, points, rankable

TEMPLATE = "workloads/tables"
BOTTLENECK_LETTER = {"server": "s", "client": "c", "both": "b", "wait": "w", "neither": "n", "": MISSING}


VERDICT_WORD = {"within": "pick", "slower": "slower", "open": "open", UNRANKED: "unranked"}


def ratio_cell(row: pd.Series, delta: float | None = None) -> str:
    """'0.90 (0.85--1.0)': the ratio to the point's fastest design with the simultaneous interval of the design
    against the best of the others; 'fastest' for the fastest, where the point can rank the servers (elsewhere its
    ratio, 1.0: no server is named the fastest where the load generator set the rate). The bounds get more digits
    where two would put them on or across 1 or 1 - delta, the thresholds of the verdicts (latex.format_bound)."""
    if is_missing(row["ratio"]):
        return MISSING
    named = bool(row["is_best"]) and row["ranked_verdict"] != UNRANKED
    head = r"\textbf{fastest}" if named else format_significant(row["ratio"], 2)
    if is_missing(row["low"]):
        return head
    marks = (1.0,) if delta is None else (1.0, 1.0 - delta)
    return f"{head} ({format_bound(row['low'], marks)}--{format_bound(row['high'], marks)})"


def _column(prose: Prose, name: str, align: str) -> Column:
    """A column headed by the template's `<name>_heading`."""
    return Column(prose.sentence(TEMPLATE, f"{name}_heading"), align)


def _delta_facts(study: WorkloadsResults) -> dict[str, str]:
    return {"delta": format_count(100 * study.settings.delta) if study.settings else MISSING}


def map_table(study: WorkloadsResults, prose: Prose) -> str:
    frame = study.map
    spec = [
        (_column(prose, "server", FILL_COLUMN), lambda row: escape(row["variant"])),
        (_column(prose, "rate", "r"), cell_of("mean")),
        (_column(prose, "ratio", "r"), lambda row: ratio_cell(row, study.settings.delta if study.settings else None)),
        (_column(prose, "verdict", "l"), lambda row: VERDICT_WORD.get(str(row["ranked_verdict"]), MISSING)),
        (_column(prose, "p99", "r"), cell_of("latency_p99_s_mean", format_ms)),
        (_column(prose, "cpu", "r"), cell_of("server_cpu_us_per_request", format_decimal)),
        (_column(prose, "bottleneck", "c"), lambda row: BOTTLENECK_LETTER.get(str(row["bottleneck"]), MISSING)),
        (_column(prose, "n", "r"), lambda row: format_count(row["n_rounds"]) if row["n_rounds"] else MISSING),
    ]
    rows: list[list[str] | str] = []
    breaks = []
    for point in points(frame):
        breaks.append(len(rows))
        rows.append(r"\multicolumn{" + str(len(spec)) + r"}{@{}l}{\textit{" + escape(point) + r"}}\\")
        group = frame[frame["point"] == point].sort_values("mean", ascending=False, kind="stable")
        rows += tabulate(group, spec)[1]
    facts = _delta_facts(study)
    return render_longtable(
        [column for column, _ in spec],
        rows,
        prose.sentence(TEMPLATE, "map_caption", facts),
        "tab:workloads-map",
        breaks,
        notes=prose.sentence(TEMPLATE, "map_notes", facts),
    )


def point_outcome(group: pd.DataFrame) -> dict[str, Any]:
    """A point's decision as the picks table and the findings state it: "none" (nothing measured), "not rankable"
    (with what bounded the fastest), else the picks (fastest first), the slower and open designs, its rounds, and
    for an open point the rounds it would need (None: more than archbench.stats.selection.ROUNDS_NEEDED_CAP, or
    no look was taken)."""
    best = group[group["is_best"].astype(bool)]
    if best.empty:
        return {"state": "none"}
    if not rankable(group):
        share = best.iloc[0]["point_client_bound_share"]
        return {"state": "not rankable", "bottleneck": "client", "percent": format_count(100 * share)}
    ranked = group.sort_values("ratio", ascending=False, kind="stable")
    by_verdict = {v: ranked[ranked["verdict"] == v] for v in ("within", "slower", "open")}
    needed = pd.to_numeric(group["point_rounds_needed"], errors="coerce").dropna()
    resolved = bool(group["point_resolved"].iloc[0])
    return {
        "state": "resolved" if resolved else ("undecided" if (group["verdict"] == "").all() else "open"),
        "picks": [escape(v) for v in by_verdict["within"]["variant"]],
        "slower": [escape(v) for v in by_verdict["slower"]["variant"]],
        "open": [escape(v) for v in by_verdict["open"]["variant"]],
        "rounds": format_count(group["point_rounds"].max()),
        "needed": None if needed.empty else format_count(needed.iloc[0]),
    }


def picks_table(study: WorkloadsResults, prose: Prose) -> str:
    frame = study.map
    columns = [
        _column(prose, "point", "l"),
        _column(prose, "picks", FILL_COLUMN),
        _column(prose, "slower", "r"),
        _column(prose, "rounds", "r"),
    ]
    rows: list[list[str] | str] = []
    for point in points(frame):
        outcome = point_outcome(frame[frame["point"] == point])
        rows.append(
            [
                escape(point),
                prose.sentence(TEMPLATE, "point_picks", outcome),
                format_count(len(outcome.get("slower", ()))) if "slower" in outcome else MISSING,
                outcome.get("rounds", MISSING),
            ]
        )
    return render_longtable(
        columns,
        rows,
        prose.sentence(TEMPLATE, "picks_caption", _delta_facts(study)),
        "tab:workloads-picks",
        notes=prose.sentence(TEMPLATE, "picks_notes", selection_method_facts(study)),
    )


def selection_method_facts(study: WorkloadsResults) -> dict[str, Any]:
    """The declared procedure, as the table notes and the section state it once: delta, the first look, the most
    rounds a point may reach and the level of each look."""
    settings = study.settings
    if settings is None:
        return {"declared": False}
    looks = settings.max_rounds - settings.first_look + 1
    return {
        "declared": settings.declared_rounds,
        "delta": format_count(100 * settings.delta),
        "first_look": format_count(settings.first_look),
        "max_rounds": format_count(settings.max_rounds),
        "looks": format_count(looks),
        "alpha_per_look": format_significant(settings.alpha / looks, 2),
    }
