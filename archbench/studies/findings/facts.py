"""The findings' facts, each computed from a study that ran before: what to pick per workload point (the workloads
study's decision map and its literature checks, archbench.studies.workloads.facts.pick_facts: its section fact
`picks`, which the findings read through the study context, never by importing that study), the server CPU time per
request ranked per pipeline depth (the main campaign), the designs that left connections unanswered (the main
campaign), and what this machine could not test (the server's CPUs, where every campaign ran, the network links'
delays, the workload points and sources that this machine could not decide). Every word is
paper/templates/findings/'s: section.tex.j2 calls the macros of findings.tex.j2 with these facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import Labeller, key_text, parse_cpu_list
from archbench.analyze.published_compare import NOT_TESTABLE
from archbench.measure.placement import LinkModel, PlacementError
from archbench.render.latex import escape, format_compact, format_count, format_significant, table_interval

CPU_COLUMN = "server_cpu_us_per_request"
STARVED_COLUMN = "starved_connections_mean"
DEFAULT_PLACEMENT = "loopback"  # a campaign that records no placement ran on loopback (the runner's default)


def _overlaps(row: pd.Series, other: pd.Series) -> bool:
    """Whether two configurations' 95 % intervals of CPU per request overlap (or either has none): their means are
    then not separated by these data."""
    bounds = [row.get(f"{CPU_COLUMN}_ci95_{side}") for side in ("low", "high")]
    others = [other.get(f"{CPU_COLUMN}_ci95_{side}") for side in ("low", "high")]
    if any(pd.isna(v) for v in (*bounds, *others)):
        return True
    return float(others[0]) <= float(bounds[1]) and float(others[1]) >= float(bounds[0])


def cpu_facts(summary: pd.DataFrame) -> list[dict[str, Any]]:
    """Per pipeline depth, every correct server of the architecture comparison (nginx included, the reference floor
    not: it parses nothing) in the order of its mean server CPU time per request, lowest first, with its 95 %
    interval, and how many of the others' intervals overlap the lowest mean's: an order of means is not a ranking,
    so the text names the lowest mean as the cheapest only where no other interval overlaps its own."""
    depths = []
    for one in analysis.comparisons(summary):
        rows = one.ranked_rows
        if CPU_COLUMN not in rows:
            continue
        rows = rows.assign(cpu=pd.to_numeric(rows[CPU_COLUMN], errors="coerce")).dropna(subset=["cpu"])
        if len(rows) < 2:
            continue
        rows = rows.sort_values("cpu", kind="stable")
        labels = Labeller(one.all_rows)
        depths.append(
            {
                "pipeline": str(one.pipeline),
                "connections": format_count(one.connections),
                "ranked": [
                    {
                        "name": escape(labels.variant(row)),
                        "cpu": format_significant(row["cpu"], 2),
                        "interval": table_interval(
                            row.get(f"{CPU_COLUMN}_ci95_low"),
                            row.get(f"{CPU_COLUMN}_ci95_high"),
                            row.get("n"),
                            lambda v: format_significant(v, 2),
                        ),
                    }
                    for _, row in rows.iterrows()
                ],
                "overlapping": format_count(
                    sum(_overlaps(rows.iloc[0], other) for _, other in rows.iloc[1:].iterrows())
                ),
                "separated": not any(_overlaps(rows.iloc[0], other) for _, other in rows.iloc[1:].iterrows()),
                "factor": format_significant(rows["cpu"].iloc[-1] / rows["cpu"].iloc[0], 2),
            }
        )
    return depths


def starvation_facts(summary: pd.DataFrame) -> dict[str, Any]:
    """Per design (the architecture family, any thread count or depth), the largest share of its connections it
    left unanswered in one configuration and in how many configurations it left any; the designs that answered
    every connection everywhere; and those whose starvation was not measured (nginx reports no such counter)."""
    if summary.empty or STARVED_COLUMN not in summary:
        return {"measured": False}
    labels = Labeller(summary)
    frame = summary.assign(
        family=[labels.family(row) for _, row in summary.iterrows()],
        starved=pd.to_numeric(summary[STARVED_COLUMN], errors="coerce"),
        conns=pd.to_numeric(summary["connections"], errors="coerce"),
    )
    measured = frame[frame["starved"].notna() & (frame["conns"] > 0)]
    starving, never = [], []
    for family, rows in measured.groupby("family", sort=False):
        shares = rows["starved"] / rows["conns"]
        if (rows["starved"] <= 0).all():
            never.append(escape(family))
            continue
        worst = rows.loc[shares.idxmax()]
        starving.append(
            {
                "name": escape(family),
                "share": float(shares.max()),
                "starved": format_compact(worst["starved"]),
                "connections": format_count(worst["conns"]),
                "percent": format_count(100 * shares.max()),
                "configurations": format_count(int((rows["starved"] > 0).sum())),
                "of": format_count(len(rows)),
            }
        )
    starving.sort(key=lambda entry: -entry["share"])
    unmeasured = [escape(f) for f in frame["family"].drop_duplicates() if f not in set(measured["family"])]
    return {"measured": not measured.empty, "starving": starving, "never": never, "unmeasured": unmeasured}


def server_cpu_count(trials: pd.DataFrame) -> int | None:
    """The most CPUs the server was pinned to in any trial of the main campaign (None: not recorded)."""
    if trials.empty or "server_cpus" not in trials:
        return None
    lists = [parse_cpu_list(v) for v in trials["server_cpus"] if key_text(v)]
    counts = [len(cpus) for cpus in lists if cpus]
    return max(counts) if counts else None


def _placement(meta: Mapping[str, Any]) -> tuple[str, str | None]:
    parameters = meta.get("parameters") or {}
    return str(parameters.get("placement") or DEFAULT_PLACEMENT), parameters.get("link") or None


def _delay(link: str | None) -> str | None:
    if not link:
        return None
    try:
        return LinkModel.parse(str(link)).delay
    except PlacementError:
        return None


def limit_facts(
    trials: pd.DataFrame,
    campaign_metas: list[Mapping[str, Any]],
    picks: Mapping[str, Any],
    source_verdicts: list[str],
) -> dict[str, Any]:
    """What this machine could not test, each from what the campaigns record: the server's CPUs (one: no
    multi-core scaling), where the campaigns ran (no ssh placement: no second host), the links the network
    campaigns modelled (no delay: no wire latency), and the workload points and sources it could not decide."""
    cpus = server_cpu_count(trials)
    placements = [_placement(meta) for meta in campaign_metas]
    links = [link for _, link in placements if link]
    delays = [d for d in (_delay(link) for link in links) if d]
    return {
        "server_cpus": None if cpus is None else format_count(cpus),
        "one_cpu": cpus == 1,
        "second_host": any(placement == "ssh" for placement, _ in placements),
        "placements": sorted({escape(placement) for placement, _ in placements}),
        "links": sorted({escape(link) for link in links}),
        "delay": bool(delays),
        "unranked_points": sum(len(group["points"]) for group in picks.get("unranked", [])),
        "points": picks.get("points"),
        "untestable_sources": format_count(sum(v == NOT_TESTABLE for v in source_verdicts)),
        "sources": format_count(len(source_verdicts)),
        "summary": bool(source_verdicts),  # the sources' summary table exists to cite
    }
