"""Generated prose: the qualitative statements of the report that depend on the data.

"Throughput rises with pool size up to N", "the CIs overlap", "the blocking
server starved connections": each is computed here from summary.csv and written
as a macro, so the text of paper/report.tex stays true for any campaign on any
machine. Every sentence degrades to a statement of what is missing when the
campaign lacks the configurations it needs.

This module computes the facts (numbers already formatted, names escaped, booleans and small lists that choose
a phrasing); every sentence is a macro of paper/templates/pool/sentences.tex.j2, called by the section template. The
architecture comparison's findings are in archbench.studies.architectures.facts.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import (
    Labeller,
    Series,
    key_text,
    main_pool_series,
    series_of,
    several_depths,
)
from archbench.analyze.client_bound import client_set_rate, trial_count
from archbench.analyze.outliers import is_true
from archbench.analyze.planned_comparisons import VERDICT_NOT_SIGNIFICANT, VERDICT_SIGNIFICANT
from archbench.render.common import client_bound_rule, configuration_describer, depth_of
from archbench.render.formats import format_cpu_per_request
from archbench.render.latex import (
    MISSING,
    MacroSet,
    best_row,
    escape,
    format_compact,
    format_count,
    format_decimal,
    format_interval,
    interval_of,
    is_missing,
)
from archbench.render.prose import Prose
from archbench.stats import MIN_ROUNDS

# The numbers of the main pool-size series, each also a macro of its own (\abPool...).
POOL_NUMBERS = {
    "best threads": r"\abPoolBestThreads",
    "best threads plus one": r"\abPoolBestThreadsPlusOne",
    "best mean": r"\abPoolBestMean",
    "best ci": r"\abPoolBestCi",
    "first threads": r"\abPoolFirstThreads",
    "first mean": r"\abPoolFirstMean",
    "best over first": r"\abPoolBestOverFirst",
    "connections": r"\abPoolConnections",
    "label": r"\abPoolLabel",
}


def _pool_numbers(one: Series) -> dict[str, Any] | None:
    """The facts of one pool-size series (None: no pool size has a measured trial)."""
    rows = one.rows.dropna(subset=["mean"])
    if rows.empty:
        return None
    best = best_row(rows)
    first = rows.iloc[0]
    last = rows.iloc[-1]
    ratio = float(best["mean"]) / float(first["mean"]) if float(first["mean"]) else float("nan")
    best_n = int(best["threads"])
    facts: dict[str, Any] = {
        "empty": False,
        "label": escape(one.label),
        "first_mean": format_count(first["mean"]),
        "first_threads": str(int(first["threads"])),
        "best_mean": format_count(best["mean"]),
        "best_threads": str(best_n),
        "best_threads_plus_one": str(best_n + 1),
        "best_ci": format_interval(best["ci95_low"], best["ci95_high"], best.get("n")),
        "best_over_first": format_decimal(ratio, 2),
        "connections": format_count(first["connections"]),
        "largest_is_fastest": best_n == int(last["threads"]),
        "last_mean": format_count(last["mean"]),
        "last_threads": str(int(last["threads"])),
        "has_runner_up": False,
        # The load generator bounded half or more of the trials at the highest mean: its rate, so no pool size is
        # named the fastest, nor compared with the runner-up.
        "client_set": client_set_rate(best),
        "best_trials": trial_count(best.get("n")),
        "best_bound": trial_count(best.get("n_client_bound")),
        "rule": client_bound_rule(),
        "client_set_sizes": sum(client_set_rate(row) for _, row in rows.iterrows()),
        "sizes": len(rows),
    }
    neighbours = rows[rows["threads"] != best["threads"]]
    if not neighbours.empty and not facts["client_set"]:
        # The runner-up is the comparison that decides whether "best" is distinguishable at all.
        runner_up = neighbours.loc[neighbours["mean"].idxmax()]
        best_ci, runner_ci = interval_of(best), interval_of(runner_up)
        facts.update(
            has_runner_up=True,
            intervals_defined=best_ci.is_defined and runner_ci.is_defined,
            overlap=best_ci.is_defined and runner_ci.is_defined and best_ci.overlaps(runner_ci),
            runner_threads=str(int(runner_up["threads"])),
            runner_ci=format_interval(runner_up["ci95_low"], runner_up["ci95_high"], runner_up.get("n")),
        )
    return facts


# The planned verdicts of a dispatch pair, each counted as a fact of that name ("client_set": significant, but the
# load generator set the lower rate, so the pair orders nothing: archbench.analyze.planned_comparisons).
DISPATCH_VERDICTS = ("faster", "slower", "client_set", "undecided", "not_run", "unplanned")


def _dispatch_verdict(pair: pd.Series, planned: pd.DataFrame | None) -> str:
    """The planned comparison "request vs connection dispatch" of one pair (`planned`: the rows of comparisons.csv's
    family "dispatch"): "faster" or "slower" (request against connection, significant after Holm within the
    family, and ordered), "client_set", "undecided", "not_run" or "unplanned" (no such comparison), the verdict of the
    planned comparisons' table."""
    if planned is None or planned.empty:
        return "unplanned"
    a, b = str(pair["config_id_request"]), str(pair["config_id_connection"])
    rows = planned[(planned["config_a"] == a) & (planned["config_b"] == b)]
    if rows.empty:
        return "unplanned"
    verdict = rows["verdict"].iloc[0]
    if verdict == VERDICT_SIGNIFICANT:
        if not is_true(rows["ordered"].iloc[0]):
            return "client_set"
        return "faster" if float(rows["ratio"].iloc[0]) > 1 else "slower"
    return "undecided" if verdict == VERDICT_NOT_SIGNIFICANT else "not_run"


def dispatch_comparison(summary: pd.DataFrame, planned: pd.DataFrame | None = None) -> dict[str, Any] | None:
    """Request vs connection dispatch at equal N and connections, where both were measured (None: no campaign).

    The planned comparison "request vs connection dispatch" (`planned`: the family "dispatch" of the planned
    comparisons, Holm within it) decides which is faster, never the ratio of means; a significant pair whose lower
    rate the load generator set (its `ordered` is false) orders nothing."""
    if summary.empty:
        return None
    pool = summary[(summary["architecture"] == "thread_pool") & summary["mean"].notna()]
    request = pool[pool["dispatch"].map(key_text) == "request"]
    connection = pool[pool["dispatch"].map(key_text) == "connection"]
    # Pairs differ only in dispatch: same pool size, connections, hand-off, and pipeline depth and wrk load.
    keys = [
        k
        for k in ("threads", "connections", "handoff", "pipeline", "load_threads", "duration_s", "response")
        if k in pool
    ]
    merged = request.merge(connection, on=keys, suffixes=("_request", "_connection"))
    if merged.empty:
        return {"pairs": None}
    verdicts = pd.Series([_dispatch_verdict(pair, planned) for _, pair in merged.iterrows()], index=merged.index)
    ordered = merged[verdicts.isin(["faster", "slower"])]
    ratios = ordered["mean_request"] / ordered["mean_connection"]
    starving = merged[merged["connections"] > merged["threads"]]
    facts: dict[str, Any] = {
        "pairs": format_count(len(merged)),
        "rule": client_bound_rule(),
        "ordered": len(ordered),
        **{verdict: int((verdicts == verdict).sum()) for verdict in DISPATCH_VERDICTS},
        "min_rounds": str(MIN_ROUNDS),
        "ratio_low": format_decimal(ratios.min(), 2),
        "ratio_high": format_decimal(ratios.max(), 2),
        "starving_pairs": None,
    }
    if not starving.empty:
        starved = starving["starved_connections_mean_connection"].fillna(0)
        facts.update(
            starving_pairs=format_count(len(starving)),
            starved_low=format_compact(starved.min()),
            starved_high=format_compact(starved.max()),
            request_starved_high=format_compact(starving["starved_connections_mean_request"].fillna(0).max()),
        )
    return facts


def connection_findings(summary: pd.DataFrame) -> dict[str, Any]:
    """One sentence per connection sweep of source 000's designs (the others are in the architecture figures)."""
    original = summary[summary["architecture"].isin(analysis.ORIGINAL_ARCHITECTURES)] if not summary.empty else summary
    series = []
    for one in series_of(original, "connections"):
        low, high = one.rows.iloc[0], one.rows.iloc[-1]
        series.append(
            {
                "label": escape(one.label[0].upper() + one.label[1:]),
                "low_mean": format_count(low["mean"]),
                "low_connections": format_count(low["connections"]),
                "one_low_connection": low["connections"] == 1,
                "high_mean": format_count(high["mean"]),
                "high_connections": format_count(high["connections"]),
                "starved": format_compact(high["starved_connections_mean"]),
                "timeouts": format_compact(high["timeouts_mean"]),
            }
        )
    return {"series": series}


def starvation_finding(summary: pd.DataFrame) -> dict[str, Any] | None:
    """Every configuration that left connections unanswered or had timeouts (None: no configuration)."""
    if summary.empty:
        return None
    starving = summary[(summary["starved_connections_mean"].fillna(0) > 0) | (summary["timeouts_mean"].fillna(0) > 0)]
    labels = Labeller(summary)
    several = several_depths(summary)
    groups: dict[str, list[dict[str, Any]]] = {}
    for _, row in starving.iterrows():
        starved = row["starved_connections_mean"]
        with_threads = row["architecture"] in analysis.thread_units() and not is_missing(row.get("threads"))
        groups.setdefault(labels.family(row), []).append(
            {
                "threads": str(int(row["threads"])) if with_threads else None,
                "depth": depth_of(row) if several else None,
                "connections": format_count(row["connections"]),
                "starved": None if is_missing(starved) else format_compact(starved),
                "timeouts": format_compact(row["timeouts_mean"]),
            }
        )
    return {
        "total": format_count(len(summary)),
        "starving": format_count(len(starving)),
        "groups": [{"name": escape(name), "entries": entries} for name, entries in groups.items()],
    }


def cpu_cost_finding(summary: pd.DataFrame, prose: Prose) -> dict[str, Any]:
    rows = summary.dropna(subset=["server_cpu_us_per_request"]) if not summary.empty else summary
    if rows.empty:
        return {"cheapest": None}
    cheapest = rows.loc[rows["server_cpu_us_per_request"].idxmin()]
    dearest = rows.loc[rows["server_cpu_us_per_request"].idxmax()]
    describe = configuration_describer(summary, prose)
    return {
        "cheapest": format_cpu_per_request(cheapest["server_cpu_us_per_request"]),
        "cheapest_configuration": describe(cheapest),
        "dearest": format_cpu_per_request(dearest["server_cpu_us_per_request"]),
        "dearest_configuration": describe(dearest),
    }


def pool_findings(
    macros: MacroSet, summary: pd.DataFrame, prose: Prose, dispatch_planned: pd.DataFrame | None = None
) -> dict[str, Any]:
    """The main pool-size series' numbers as macros, and the facts of the section's findings
    (paper/templates/pool/section.tex.j2; a None or empty one says what the campaign lacks). `dispatch_planned`:
    the planned comparisons of request against connection dispatch, whose verdicts decide which is faster."""
    main = main_pool_series(summary)
    main_facts = _pool_numbers(main) if main else None
    for words, name in POOL_NUMBERS.items():
        value = main_facts[words.replace(" ", "_")] if main_facts else MISSING
        macros.add(name, value, f"main pool-size series: {words}")
    other_pools = [
        _pool_numbers(s) or {"empty": True, "label": escape(s.label)}
        for s in series_of(summary, "threads")
        if s.first["architecture"] == "thread_pool" and (main is None or s.key != main.key)
    ]
    return {
        # No main series at all, or one without a measured pool size ("empty").
        "main_pool": None if main is None else main_facts or {"empty": True, "label": escape(main.label)},
        "other_pools": other_pools,
        "dispatch": dispatch_comparison(summary, dispatch_planned),
        "connections": connection_findings(summary),
        "starvation": starvation_finding(summary),
        "cpu_cost": cpu_cost_finding(summary, prose),
    }
