"""Generated prose: the qualitative statements of the report that depend on the data.

"Throughput rises with pool size up to N", "the CIs overlap", "the blocking
server starved connections": each is computed here from summary.csv and written
as a macro, so the text of paper/report.tex stays true for any campaign on any
machine. Every sentence degrades to a statement of what is missing when the
campaign lacks the configurations it needs.
"""
from __future__ import annotations

import pandas as pd

from archbench.analysis import Series, architecture_label, key_text, main_pool_series, series_of
from archbench.latex import (
    MISSING,
    MacroSet,
    best_row,
    escape,
    format_compact,
    format_count,
    format_decimal,
    format_interval,
    interval_of,
)

def pool_series_finding(one: Series) -> dict[str, str]:
    """Numbers and a sentence for one pool-size series."""
    rows = one.rows.dropna(subset=["mean"])
    if rows.empty:
        return {"sentence": f"For the {escape(one.label)} no pool size has a measured trial with status ok."}
    best = best_row(rows)
    first = rows.iloc[0]
    last = rows.iloc[-1]
    ratio = float(best["mean"]) / float(first["mean"]) if float(first["mean"]) else float("nan")
    best_n = int(best["threads"])
    first_n = int(first["threads"])
    sentence = (
        f"For the {escape(one.label)}, mean throughput goes from {format_count(first['mean'])}\\,r/s at "
        f"$N={first_n}$ to a maximum of {format_count(best['mean'])}\\,r/s at $N={best_n}$ "
        f"(source~000's count: {best_n + 1} threads), {format_decimal(ratio, 2)} times the $N={first_n}$ mean"
    )
    if best_n == int(last["threads"]):
        sentence += "; the largest pool measured is the fastest"
    else:
        sentence += (
            f"; larger pools do not raise it further ({format_count(last['mean'])}\\,r/s at "
            f"$N={int(last['threads'])}$)"
        )
    neighbours = rows[rows["threads"] != best["threads"]]
    if not neighbours.empty:
        # The runner-up is the comparison that decides whether "best" is distinguishable at all.
        runner_up = neighbours.loc[neighbours["mean"].idxmax()]
        best_ci, runner_ci = interval_of(best), interval_of(runner_up)
        if best_ci.is_defined and runner_ci.is_defined:
            relation = "overlap" if best_ci.overlaps(runner_ci) else "do not overlap"
            verdict = (
                "so these data do not separate the two"
                if best_ci.overlaps(runner_ci)
                else "so the difference is larger than the trial-to-trial noise"
            )
            sentence += (
                f". Its 95\\,\\% CI ({format_interval(best['ci95_low'], best['ci95_high'])}) and that of the "
                f"runner-up $N={int(runner_up['threads'])}$ "
                f"({format_interval(runner_up['ci95_low'], runner_up['ci95_high'])}) {relation}, {verdict}"
            )
        else:
            sentence += ". With fewer than two trials per configuration no confidence interval is defined"
    return {
        "sentence": sentence + ".",
        "best threads": str(best_n),
        "best threads plus one": str(best_n + 1),
        "best mean": format_count(best["mean"]),
        "best ci": format_interval(best["ci95_low"], best["ci95_high"]),
        "first threads": str(first_n),
        "first mean": format_count(first["mean"]),
        "best over first": format_decimal(ratio, 2),
        "connections": format_count(first["connections"]),
        "label": escape(one.label),
    }

def dispatch_comparison(summary: pd.DataFrame) -> str:
    """Request vs connection dispatch at equal N and connections, where both were measured."""
    if summary.empty:
        return ""
    pool = summary[(summary["architecture"] == "thread_pool") & summary["mean"].notna()]
    request = pool[pool["dispatch"].map(key_text) == "request"]
    connection = pool[pool["dispatch"].map(key_text) == "connection"]
    keys = ["threads", "connections", "handoff"]
    merged = request.merge(connection, on=keys, suffixes=("_request", "_connection"))
    if merged.empty:
        return "The campaign has no pair of request- and connection-dispatch configurations with equal $N$ and connections to compare."
    ratios = merged["mean_request"] / merged["mean_connection"]
    faster = int((ratios > 1).sum())
    starving = merged[merged["connections"] > merged["threads"]]
    sentence = (
        f"At equal $N$ and connection count ({format_count(len(merged))} pairs), request dispatch is faster than "
        f"connection dispatch in {format_count(faster)} of them (ratio of means from {format_decimal(ratios.min(), 2)} to "
        f"{format_decimal(ratios.max(), 2)})"
    )
    if not starving.empty:
        starved = starving["starved_connections_mean_connection"].fillna(0)
        sentence += (
            f". Where connections outnumber workers ({format_count(len(starving))} pairs), connection dispatch left "
            f"{format_compact(starved.min())} to {format_compact(starved.max())} connections per trial unanswered "
            f"(request dispatch: {format_compact(starving['starved_connections_mean_request'].fillna(0).max())} at most)"
        )
    return sentence + "."

def connection_findings(summary: pd.DataFrame) -> str:
    series = series_of(summary, "connections")
    if not series:
        return "The campaign has no architecture measured at two or more connection counts."
    sentences = []
    for one in series:
        rows = one.rows
        low, high = rows.iloc[0], rows.iloc[-1]
        sentences.append(
            f"{escape(one.label[0].upper() + one.label[1:])}: {format_count(low['mean'])}\\,r/s at "
            f"{format_count(low['connections'])} connection{'s' if low['connections'] != 1 else ''} and "
            f"{format_count(high['mean'])}\\,r/s at {format_count(high['connections'])} connections, with "
            f"{format_compact(high['starved_connections_mean'])} starved connections and "
            f"{format_compact(high['timeouts_mean'])} wrk timeouts per trial at {format_count(high['connections'])}."
        )
    return " ".join(sentences)

def starvation_finding(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "The campaign has no measured configuration."
    starving = summary[(summary["starved_connections_mean"].fillna(0) > 0) | (summary["timeouts_mean"].fillna(0) > 0)]
    if starving.empty:
        return (
            "No configuration in this campaign left a connection unanswered or had a wrk timeout "
            f"(over {format_count(len(summary))} configurations)."
        )
    by_architecture: dict[str, list[str]] = {}
    for _, row in starving.iterrows():
        name = architecture_label(row["architecture"], row.get("dispatch"), row.get("handoff"))
        detail = f"$N={int(row['threads'])}$, " if row["architecture"] == "thread_pool" else ""
        by_architecture.setdefault(name, []).append(
            f"{detail}{format_count(row['connections'])} conn.: {format_compact(row['starved_connections_mean'])} starved, "
            f"{format_compact(row['timeouts_mean'])} timeouts"
        )
    parts = [f"{escape(name)} ({'; '.join(items)})" for name, items in by_architecture.items()]
    return (
        f"{format_count(len(starving))} of {format_count(len(summary))} configurations left connections "
        f"unanswered or had wrk timeouts (means per trial): " + "; ".join(parts) + "."
    )

def flag_finding(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "The campaign has no measured configuration."
    flagged = summary[summary["n_flagged"].fillna(0) > 0]
    failed = summary[summary["n_failed"].fillna(0) > 0]
    parts = []
    if flagged.empty:
        parts.append("No measured trial was flagged (socket errors, non-2xx responses or no requests)")
    else:
        names = [
            f"{escape(architecture_label(r['architecture'], r.get('dispatch'), r.get('handoff'), short=True))} "
            f"$N={int(r['threads'])}$/{format_count(r['connections'])} conn."
            for _, r in flagged.iterrows()
        ]
        parts.append(
            f"{format_count(len(flagged))} configurations had flagged trials ("
            f"{format_count(summary['n_flagged'].fillna(0).sum())} trials in all): " + "; ".join(names)
        )
    if failed.empty:
        parts.append("no measured trial failed")
    else:
        parts.append(
            f"{format_count(summary['n_failed'].fillna(0).sum())} measured trials failed, in "
            f"{format_count(len(failed))} configurations"
        )
    return "; ".join(parts) + "."

def client_bound_finding(summary: pd.DataFrame, threshold: float = 0.9) -> str:
    """Whether wrk's own core was saturated: then the measured maximum may be the client's."""
    rows = summary.dropna(subset=["mean"]) if not summary.empty else summary
    if rows.empty or "load_cpu_utilisation_mean" not in rows or rows["load_cpu_utilisation_mean"].isna().all():
        return "The campaign has no load-generator CPU measurements to judge whether wrk was the bottleneck."
    fastest = best_row(rows)
    utilisation = float(fastest["load_cpu_utilisation_mean"])
    highest = float(rows["load_cpu_utilisation_mean"].max())
    verdict = (
        "so the load generator, not the server, may have set the highest throughputs"
        if utilisation >= threshold
        else "so the load generator's core was not saturated there"
    )
    return (
        f"In the fastest configuration wrk used {format_decimal(utilisation * 100, 0)}\\,\\% of its core "
        f"(highest across configurations: {format_decimal(highest * 100, 0)}\\,\\%), {verdict}."
    )

def cpu_cost_finding(summary: pd.DataFrame) -> str:
    rows = summary.dropna(subset=["server_cpu_us_per_request"]) if not summary.empty else summary
    if rows.empty:
        return "The campaign has no server CPU measurements."
    cheapest = rows.loc[rows["server_cpu_us_per_request"].idxmin()]
    dearest = rows.loc[rows["server_cpu_us_per_request"].idxmax()]

    def describe(row: pd.Series) -> str:
        name = escape(architecture_label(row["architecture"], row.get("dispatch"), row.get("handoff")))
        pool = f", $N={int(row['threads'])}$" if row["architecture"] == "thread_pool" else ""
        connections = format_count(row["connections"])
        return f"{name}{pool}, {connections} connection{'' if connections == '1' else 's'}"

    return (
        f"Server CPU time per completed request ranges from {format_decimal(cheapest['server_cpu_us_per_request'], 1)}"
        f"\\,\\textmu s ({describe(cheapest)}) to {format_decimal(dearest['server_cpu_us_per_request'], 1)}\\,\\textmu s "
        f"({describe(dearest)})."
    )

def finding_macros(macros: MacroSet, summary: pd.DataFrame) -> None:
    main = main_pool_series(summary)
    main_numbers = pool_series_finding(main) if main else {}
    for words in (
        "best threads",
        "best threads plus one",
        "best mean",
        "best ci",
        "first threads",
        "first mean",
        "best over first",
        "connections",
        "label",
    ):
        macros.add(("pool", words), main_numbers.get(words, MISSING), f"main pool-size series: {words}")
    all_pool = [
        pool_series_finding(s)["sentence"]
        for s in series_of(summary, "threads")
        if s.first["architecture"] == "thread_pool" and (main is None or s.key != main.key)
    ]
    macros.add(
        "pool source comparison",
        f"Our fastest pool size is $N={main_numbers['best threads']}$ ({main_numbers['best threads plus one']} "
        f"threads in source~000's count) for the {main_numbers['label']}"
        if main
        else "This campaign has no thread-pool sweep over pool sizes to set beside it",
        "our best pool size in source 000's terms (no final period)",
    )
    macros.add("other pool findings", " ".join(all_pool), "one sentence per other pool-size series (may be empty)")
    macros.add(
        "main pool finding",
        main_numbers.get("sentence", "The campaign has no thread-pool configuration measured at two or more pool sizes."),
        "sentence for the main pool-size series",
    )
    macros.add("dispatch finding", dispatch_comparison(summary), "request vs connection dispatch")
    macros.add("connection findings", connection_findings(summary), "one sentence per connection series")
    macros.add("starvation finding", starvation_finding(summary), "starved connections and timeouts")
    macros.add("flag finding", flag_finding(summary), "flagged and failed trials")
    macros.add("client bound finding", client_bound_finding(summary), "wrk CPU utilisation")
    macros.add("cpu cost finding", cpu_cost_finding(summary), "server CPU per request")
    fastest = best_row(summary) if not summary.empty else None
    if fastest is not None:
        pool = f" with $N={int(fastest['threads'])}$" if fastest["architecture"] == "thread_pool" else ""
        fastest_text = (
            f"{escape(architecture_label(fastest['architecture'], fastest.get('dispatch'), fastest.get('handoff')))}{pool} at "
            f"{format_count(fastest['connections'])} connections, {format_count(fastest['mean'])}\\,r/s"
        )
    else:
        fastest_text = "no configuration (no measured trial)"
    macros.add("fastest configuration", fastest_text, "highest mean throughput")
