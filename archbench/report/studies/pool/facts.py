"""Generated prose: the qualitative statements of the report that depend on the data.

"Throughput rises with pool size up to N", "the CIs overlap", "the blocking
server starved connections": each is computed here from summary.csv and written
as a macro, so the text of paper/report.tex stays true for any campaign on any
machine. Every sentence degrades to a statement of what is missing when the
campaign lacks the configurations it needs.

This module computes the facts (numbers already formatted, names escaped, booleans and small lists that choose
a phrasing); every sentence is a macro of paper/templates/findings/*.tex.j2, rendered by a `Prose`. The
architecture comparison's findings are in archbench.report.studies.architectures.facts.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import (
    CLIENT_BOUND_THRESHOLD,
    Labeller,
    Series,
    key_text,
    main_pool_series,
    series_of,
)
from archbench.report.latex import (
    MISSING,
    MacroSet,
    best_row,
    escape,
    format_compact,
    format_count,
    format_decimal,
    format_interval,
    format_percent,
    interval_of,
    is_missing,
)
from archbench.report.prose import Prose
from archbench.report.studies.architectures import facts as comparison_findings
from archbench.report.studies.architectures.facts import client_bound_rule, depth_of

MAX_LISTED = 6  # configurations named in one generated sentence before "and N more"

COMMON = "findings/common"
POOL = "findings/pool"
TRIALS = "findings/trials"

# The numbers of the main pool-size series, each also a macro of its own (\abPool...).
POOL_NUMBERS = (
    "best threads",
    "best threads plus one",
    "best mean",
    "best ci",
    "first threads",
    "first mean",
    "best over first",
    "connections",
    "label",
)


def _labels(summary: pd.DataFrame) -> Labeller:
    return Labeller(summary)


def _several_depths(summary: pd.DataFrame) -> bool:
    return len(analysis.pipeline_depths(summary)) > 1


def describe_configuration(row: pd.Series, labels: Labeller, several_depths: bool, prose: Prose) -> str:
    """ "reactor, 2 threads, 50 connections, depth 16" (escaped)."""
    connections = format_count(row["connections"])
    facts = {
        "variant": escape(labels.variant(row)),
        "connections": connections,
        "one_connection": connections == "1",
        "depth": depth_of(row) if several_depths else None,
    }
    return prose.sentence(COMMON, "configuration", facts)


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
        "best_ci": format_interval(best["ci95_low"], best["ci95_high"]),
        "best_over_first": format_decimal(ratio, 2),
        "connections": format_count(first["connections"]),
        "largest_is_fastest": best_n == int(last["threads"]),
        "last_mean": format_count(last["mean"]),
        "last_threads": str(int(last["threads"])),
        "has_runner_up": False,
    }
    neighbours = rows[rows["threads"] != best["threads"]]
    if not neighbours.empty:
        # The runner-up is the comparison that decides whether "best" is distinguishable at all.
        runner_up = neighbours.loc[neighbours["mean"].idxmax()]
        best_ci, runner_ci = interval_of(best), interval_of(runner_up)
        facts.update(
            has_runner_up=True,
            intervals_defined=best_ci.is_defined and runner_ci.is_defined,
            overlap=best_ci.is_defined and runner_ci.is_defined and best_ci.overlaps(runner_ci),
            runner_threads=str(int(runner_up["threads"])),
            runner_ci=format_interval(runner_up["ci95_low"], runner_up["ci95_high"]),
        )
    return facts


def pool_series_finding(one: Series, prose: Prose) -> dict[str, str]:
    """Numbers and a sentence for one pool-size series."""
    facts = _pool_numbers(one)
    if facts is None:
        return {"sentence": prose.sentence(POOL, "pool_series", empty=True, label=escape(one.label))}
    numbers = {words: facts[words.replace(" ", "_")] for words in POOL_NUMBERS}
    return {"sentence": prose.sentence(POOL, "pool_series", facts), **numbers}


def dispatch_comparison(summary: pd.DataFrame, prose: Prose) -> str:
    """Request vs connection dispatch at equal N and connections, where both were measured."""
    if summary.empty:
        return ""
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
        return prose.sentence(POOL, "dispatch", pairs=None)
    ratios = merged["mean_request"] / merged["mean_connection"]
    starving = merged[merged["connections"] > merged["threads"]]
    facts: dict[str, Any] = {
        "pairs": format_count(len(merged)),
        "faster": format_count(int((ratios > 1).sum())),
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
    return prose.sentence(POOL, "dispatch", facts)


def connection_findings(summary: pd.DataFrame, prose: Prose) -> str:
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
    return prose.sentence(POOL, "connections", series=series)


def starvation_finding(summary: pd.DataFrame, prose: Prose) -> str:
    if summary.empty:
        return prose.sentence(TRIALS, "no_configuration")
    starving = summary[(summary["starved_connections_mean"].fillna(0) > 0) | (summary["timeouts_mean"].fillna(0) > 0)]
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    groups: dict[str, list[dict[str, Any]]] = {}
    for _, row in starving.iterrows():
        starved = row["starved_connections_mean"]
        with_threads = row["architecture"] in analysis.THREAD_UNITS and not is_missing(row.get("threads"))
        groups.setdefault(labels.family(row), []).append(
            {
                "threads": str(int(row["threads"])) if with_threads else None,
                "depth": depth_of(row) if several_depths else None,
                "connections": format_count(row["connections"]),
                "starved": None if is_missing(starved) else format_compact(starved),
                "timeouts": format_compact(row["timeouts_mean"]),
            }
        )
    facts = {
        "total": format_count(len(summary)),
        "starving": format_count(len(starving)),
        "groups": [{"name": escape(name), "entries": entries} for name, entries in groups.items()],
    }
    return prose.sentence(TRIALS, "starvation", facts)


def flag_finding(summary: pd.DataFrame, prose: Prose) -> str:
    if summary.empty:
        return prose.sentence(TRIALS, "no_configuration")
    flagged = summary[summary["n_flagged"].fillna(0) > 0]
    failed = summary[summary["n_failed"].fillna(0) > 0]
    unsupported = summary[summary.get("n_unsupported", pd.Series(0, index=summary.index)).fillna(0) > 0]
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    facts = {
        "flagged": None if flagged.empty else format_count(len(flagged)),
        "flagged_trials": format_count(summary["n_flagged"].fillna(0).sum()),
        "flagged_names": [describe_configuration(r, labels, several_depths, prose) for _, r in flagged.iterrows()],
        "failed": None if failed.empty else format_count(len(failed)),
        "failed_trials": format_count(summary["n_failed"].fillna(0).sum()),
        "unsupported": None if unsupported.empty else format_count(unsupported["n_unsupported"].sum()),
    }
    return prose.sentence(TRIALS, "flags", facts)


def client_bound_finding(summary: pd.DataFrame, prose: Prose, threshold: float = CLIENT_BOUND_THRESHOLD) -> str:
    """How many trials were client-bound (wrk's CPU at least `threshold` busy), and where."""
    rows = summary.dropna(subset=["mean"]) if not summary.empty else summary
    if rows.empty or "load_cpu_utilisation_mean" not in rows or rows["load_cpu_utilisation_mean"].isna().all():
        return prose.sentence(TRIALS, "client_bound", no_data=True)
    highest = rows.loc[rows["load_cpu_utilisation_mean"].idxmax()]
    bound = rows[rows.get("n_client_bound", pd.Series(0, index=rows.index)).fillna(0) > 0]
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    # The most client-bound configurations first; a long list is cut, the tables mark every one.
    ranked = bound.assign(_share=bound["n_client_bound"] / bound["n"].where(bound["n"] > 0)).sort_values(
        ["_share", "load_cpu_utilisation_mean"], ascending=False, kind="stable"
    )
    facts = {
        "no_data": False,
        "rule": client_bound_rule(threshold),
        "highest": format_percent(highest["load_cpu_utilisation_mean"]),
        "highest_configuration": describe_configuration(highest, labels, several_depths, prose),
        "trials": format_count(int(bound["n_client_bound"].sum()) if not bound.empty else 0),
        "total": format_count(int(rows["n"].fillna(0).sum())),
        "configurations": format_count(len(bound)),
        "one_configuration": len(bound) == 1,
        "names": [
            {
                "configuration": describe_configuration(r, labels, several_depths, prose),
                "bound": format_count(r["n_client_bound"]),
                "trials": format_count(r["n"]),
            }
            for _, r in ranked.head(MAX_LISTED).iterrows()
        ],
        "more": format_count(len(ranked) - MAX_LISTED) if len(ranked) > MAX_LISTED else None,
    }
    return prose.sentence(TRIALS, "client_bound", facts)


def cpu_cost_finding(summary: pd.DataFrame, prose: Prose) -> str:
    rows = summary.dropna(subset=["server_cpu_us_per_request"]) if not summary.empty else summary
    if rows.empty:
        return prose.sentence(TRIALS, "cpu_cost", cheapest=None)
    cheapest = rows.loc[rows["server_cpu_us_per_request"].idxmin()]
    dearest = rows.loc[rows["server_cpu_us_per_request"].idxmax()]
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    return prose.sentence(
        TRIALS,
        "cpu_cost",
        {
            "cheapest": format_decimal(cheapest["server_cpu_us_per_request"], 1),
            "cheapest_configuration": describe_configuration(cheapest, labels, several_depths, prose),
            "dearest": format_decimal(dearest["server_cpu_us_per_request"], 1),
            "dearest_configuration": describe_configuration(dearest, labels, several_depths, prose),
        },
    )


def unsupported_finding(summary: pd.DataFrame, prose: Prose) -> str:
    if summary.empty or "n_unsupported" not in summary:
        return prose.sentence(TRIALS, "unsupported", names=[])
    rows = summary[summary["n_unsupported"].fillna(0) > 0]
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    facts = {
        "trials": format_count(rows["n_unsupported"].sum()),
        "configurations": format_count(len(rows)),
        "one_configuration": len(rows) == 1,
        "names": [
            {
                "configuration": describe_configuration(r, labels, several_depths, prose),
                "unsupported": format_count(r["n_unsupported"]),
                "measured": format_count(r["n_measured"]),
            }
            for _, r in rows.iterrows()
        ],
    }
    return prose.sentence(TRIALS, "unsupported", facts)


def finding_macros(macros: MacroSet, summary: pd.DataFrame, prose: Prose) -> None:
    main = main_pool_series(summary)
    main_numbers = pool_series_finding(main, prose) if main else {}
    for words in POOL_NUMBERS:
        macros.add(("pool", words), main_numbers.get(words, MISSING), f"main pool-size series: {words}")
    other_pools = [
        pool_series_finding(s, prose)["sentence"]
        for s in series_of(summary, "threads")
        if s.first["architecture"] == "thread_pool" and (main is None or s.key != main.key)
    ]
    comparison_facts = (
        {
            "has_series": True,
            "best_threads": main_numbers["best threads"],
            "best_threads_plus_one": main_numbers["best threads plus one"],
            "label": main_numbers["label"],
        }
        if main
        else {"has_series": False}
    )
    macros.add(
        "pool source comparison",
        prose.sentence(POOL, "pool_source_comparison", comparison_facts),
        "our best pool size in source 000's terms (no final period)",
    )
    macros.add("other pool findings", " ".join(other_pools), "one sentence per other pool-size series (may be empty)")
    macros.add(
        "main pool finding",
        main_numbers["sentence"] if main_numbers else prose.sentence(POOL, "no_pool_series"),
        "sentence for the main pool-size series",
    )
    macros.add("dispatch finding", dispatch_comparison(summary, prose), "request vs connection dispatch")
    macros.add("connection findings", connection_findings(summary, prose), "one sentence per connection series")
    macros.add("starvation finding", starvation_finding(summary, prose), "starved connections and timeouts")
    macros.add("flag finding", flag_finding(summary, prose), "flagged and failed trials")
    macros.add("client bound finding", client_bound_finding(summary, prose), "wrk CPU utilisation")
    macros.add("cpu cost finding", cpu_cost_finding(summary, prose), "server CPU per request")
    comparisons = comparison_findings.architecture_macros(macros, summary, prose)
    macros.add("unsupported finding", unsupported_finding(summary, prose), "unsupported trials")
    comparison_findings.design_macros(macros, summary, comparisons, prose)
    fastest = best_row(summary) if not summary.empty else None
    fastest_facts = (
        {
            "configuration": describe_configuration(fastest, _labels(summary), _several_depths(summary), prose),
            "mean": format_count(fastest["mean"]),
        }
        if fastest is not None
        else {"configuration": None}
    )
    macros.add("fastest configuration", prose.sentence(TRIALS, "fastest", fastest_facts), "highest mean throughput")
