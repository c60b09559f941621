"""Generated prose: the qualitative statements of the report that depend on the data.

"Throughput rises with pool size up to N", "the CIs overlap", "the blocking
server starved connections": each is computed here from summary.csv and written
as a macro, so the text of paper/report.tex stays true for any campaign on any
machine. Every sentence degrades to a statement of what is missing when the
campaign lacks the configurations it needs.
"""
from __future__ import annotations

import math

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import (
    CLIENT_BOUND_THRESHOLD,
    REFERENCE_ARCHITECTURE,
    Comparison,
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
    format_list,
    format_percent,
    interval_of,
    is_missing,
)


MAX_LISTED = 6  # configurations named in one generated sentence before "and N more"


def _labels(summary: pd.DataFrame) -> Labeller:
    return Labeller(summary)


def _several_depths(summary: pd.DataFrame) -> bool:
    return len(analysis.pipeline_depths(summary)) > 1


def describe_configuration(row: pd.Series, labels: Labeller, several_depths: bool) -> str:
    """"reactor, 2 threads, 50 connections, depth 16" (escaped)."""
    connections = format_count(row["connections"])
    text = f"{escape(labels.variant(row))}, {connections} connection{'' if connections == '1' else 's'}"
    if several_depths:
        text += f", depth {key_text(row.get('pipeline')) or '1'}"
    return text

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
    # Pairs differ only in dispatch: same pool size, connections, hand-off, and pipeline depth and wrk load.
    keys = [k for k in ("threads", "connections", "handoff", "pipeline", "load_threads", "duration_s", "response")
            if k in pool]
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
    """One sentence per connection sweep of source 000's designs (the others are in the architecture figures)."""
    original = summary[summary["architecture"].isin(analysis.ORIGINAL_ARCHITECTURES)] if not summary.empty else summary
    series = series_of(original, "connections")
    if not series:
        return (
            "The campaign has no blocking, thread-per-connection or thread-pool server measured at two or more "
            "connection counts."
        )
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
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    by_architecture: dict[str, list[str]] = {}
    for _, row in starving.iterrows():
        name = labels.family(row)
        detail = ""
        if row["architecture"] in analysis.THREAD_UNITS and not is_missing(row.get("threads")):
            detail = f"$N={int(row['threads'])}$, "
        if several_depths:
            detail += f"depth {key_text(row.get('pipeline')) or '1'}, "
        starved = row["starved_connections_mean"]
        by_architecture.setdefault(name, []).append(
            f"{detail}{format_count(row['connections'])} conn.: "
            f"{'starvation not measured' if is_missing(starved) else format_compact(starved) + ' starved'}, "
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
        labels = _labels(summary)
        several_depths = _several_depths(summary)
        names = [describe_configuration(r, labels, several_depths) for _, r in flagged.iterrows()]
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
    unsupported = summary[summary.get("n_unsupported", pd.Series(0, index=summary.index)).fillna(0) > 0]
    if not unsupported.empty:
        parts.append(
            f"{format_count(unsupported['n_unsupported'].sum())} were unsupported (counted apart, not as failed)"
        )
    return "; ".join(parts) + "."

def client_bound_finding(summary: pd.DataFrame, threshold: float = CLIENT_BOUND_THRESHOLD) -> str:
    """How many trials were client-bound (wrk's CPU at least `threshold` busy), and where."""
    rows = summary.dropna(subset=["mean"]) if not summary.empty else summary
    if rows.empty or "load_cpu_utilisation_mean" not in rows or rows["load_cpu_utilisation_mean"].isna().all():
        return "The campaign has no load-generator CPU measurements to judge whether wrk was the bottleneck."
    rule = f"{threshold * 100:.0f}\\,\\%"
    highest = rows.loc[rows["load_cpu_utilisation_mean"].idxmax()]
    bound = rows[rows.get("n_client_bound", pd.Series(0, index=rows.index)).fillna(0) > 0]
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    if bound.empty:
        return (
            f"No measured trial was client-bound: wrk's CPU was at most {format_percent(highest['load_cpu_utilisation_mean'])} "
            f"busy on average in any configuration ({describe_configuration(highest, labels, several_depths)}), "
            f"below the {rule} rule, so the server, not the client, set every rate."
        )
    trials = int(bound["n_client_bound"].sum())
    total = int(rows["n"].fillna(0).sum())
    # The most client-bound configurations first; a long list is cut, the tables mark every one.
    ranked = bound.assign(_share=bound["n_client_bound"] / bound["n"].where(bound["n"] > 0)).sort_values(
        ["_share", "load_cpu_utilisation_mean"], ascending=False, kind="stable"
    )
    names = [
        f"{describe_configuration(r, labels, several_depths)} ({format_count(r['n_client_bound'])} of {format_count(r['n'])})"
        for _, r in ranked.head(MAX_LISTED).iterrows()
    ]
    if len(ranked) > MAX_LISTED:
        names[-1] += f" and {format_count(len(ranked) - MAX_LISTED)} more"
    return (
        f"{format_count(trials)} of the {format_count(total)} measured trials with status ok were client-bound "
        f"(wrk's CPU at least {rule} busy), in {format_count(len(bound))} configuration"
        f"{'s' if len(bound) != 1 else ''}: " + "; ".join(names) + ". Their rates are the client's ceiling, "
        "not the server's, and the tables mark them."
    )


def cpu_cost_finding(summary: pd.DataFrame) -> str:
    rows = summary.dropna(subset=["server_cpu_us_per_request"]) if not summary.empty else summary
    if rows.empty:
        return "The campaign has no server CPU measurements."
    cheapest = rows.loc[rows["server_cpu_us_per_request"].idxmin()]
    dearest = rows.loc[rows["server_cpu_us_per_request"].idxmax()]
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    return (
        f"Server CPU time per completed request ranges from {format_decimal(cheapest['server_cpu_us_per_request'], 1)}"
        f"\\,\\textmu s ({describe_configuration(cheapest, labels, several_depths)}) to "
        f"{format_decimal(dearest['server_cpu_us_per_request'], 1)}\\,\\textmu s "
        f"({describe_configuration(dearest, labels, several_depths)})."
    )


# --------------------------------------------------------------------------- architecture comparison


def _client_bound_clause(row: pd.Series, threshold: float = CLIENT_BOUND_THRESHOLD) -> str:
    """Whose bound the fastest configuration is: the client's when wrk's CPU was saturated."""
    n = int(float(row.get("n") or 0)) if not is_missing(row.get("n")) else 0
    bound = 0 if is_missing(row.get("n_client_bound")) else int(float(row["n_client_bound"]))
    utilisation = row.get("load_cpu_utilisation_mean")
    rule = f"{threshold * 100:.0f}\\,\\%"
    if bound and bound >= n:
        which = "its only trial" if n == 1 else ("both its trials" if n == 2 else f"all {format_count(n)} of its trials")
        return (
            f"In {which} wrk's CPU was at least {rule} busy ({format_percent(utilisation)} on average), so this upper "
            "bound is the client's, not the server's: one wrk thread on its core could not load the server harder, "
            "and the server may be faster than measured"
        )
    if bound:
        return (
            f"In {format_count(bound)} of its {format_count(n)} trials wrk's CPU was at least {rule} busy, so this "
            "upper bound is at least partly the client's, not the server's"
        )
    if is_missing(utilisation):
        return "wrk's CPU time was not recorded, so whether the client set this bound is unknown"
    return (
        f"wrk's CPU was {format_percent(utilisation)} busy there on average, below the {rule} client-bound rule, "
        "so the bound is the server's, not the client's"
    )


def upper_bound_sentence(one: Comparison, labels: Labeller, first: bool = True) -> str:
    fastest = one.fastest()
    depth = f"At pipeline depth {one.pipeline} ({format_count(one.connections)} connections)"
    if fastest is None:
        return f"{depth} no server has a measured trial with status ok."
    if len(one.all_rows) < 2:
        return (
            f"{depth} only one server was measured ({escape(labels.variant(fastest))}), so no upper bound across "
            "architectures is stated."
        )
    name = escape(labels.variant(fastest))
    if fastest["architecture"] == REFERENCE_ARCHITECTURE:
        name += " (the reference)"
    interval = format_interval(fastest["ci95_low"], fastest["ci95_high"])
    measured = f"{format_count(fastest['mean'])}\\,r/s " + (
        f"(95\\,\\% CI {interval})" if interval != MISSING else "(no confidence interval with fewer than two trials)"
    )
    if first:
        sentence = (
            f"{depth} the fastest server is {name}, {measured}; as source~002 used its ``pong'' server, we take it "
            "as the measured upper bound for this machine at this depth"
        )
    else:
        sentence = f"{depth} the fastest server, and so the upper bound, is {name}, {measured}"
    others = one.all_rows[
        (one.all_rows["config_id"] != fastest["config_id"]) & pd.to_numeric(one.all_rows["mean"], errors="coerce").notna()
    ]
    if not others.empty:
        runner_up = others.loc[pd.to_numeric(others["mean"]).idxmax()]
        best_ci, runner_ci = interval_of(fastest), interval_of(runner_up)
        runner = escape(labels.variant(runner_up))
        if best_ci.is_defined and runner_ci.is_defined:
            if best_ci.overlaps(runner_ci):
                sentence += (
                    f". Its confidence interval overlaps that of the runner-up, {runner} "
                    f"({format_interval(runner_up['ci95_low'], runner_up['ci95_high'])}), so these data do not "
                    "separate the two"
                )
            else:
                sentence += (
                    f". Its confidence interval lies above that of the runner-up, {runner} "
                    f"({format_interval(runner_up['ci95_low'], runner_up['ci95_high'])})"
                )
        else:
            sentence += f". With fewer than two trials no interval separates it from the runner-up, {runner}"
    return sentence + ". " + _client_bound_clause(fastest) + "."


def upper_bound_summary(comparisons: list[Comparison], labels: Labeller) -> str:
    """One clause for the abstract: the fastest server per depth, and whose bound it is."""
    parts = []
    for one in comparisons:
        fastest = one.fastest()
        if fastest is None or len(one.all_rows) < 2:
            continue
        text = f"{escape(labels.variant(fastest))} at pipeline depth {one.pipeline} ({format_count(fastest['mean'])}\\,r/s"
        n = 0 if is_missing(fastest.get("n")) else int(float(fastest["n"]))
        bound = 0 if is_missing(fastest.get("n_client_bound")) else int(float(fastest["n_client_bound"]))
        if bound and bound >= n:
            text += ", a bound set by the client"
        elif bound:
            text += ", partly client-bound"
        parts.append(text + ")")
    if not parts:
        return "No pipeline depth has two or more servers measured, so there is no measured upper bound."
    return "The fastest servers, our measured upper bounds, were " + format_list_text(parts) + "."


def format_list_text(items: list[str]) -> str:
    """Already-escaped items joined as "a, b and c"."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def nginx_sentence(one: Comparison, labels: Labeller) -> str:
    depth = f"At pipeline depth {one.pipeline}"
    reference = one.reference
    if reference is None or is_missing(reference.get("mean")):
        return f"{depth} nginx was not measured at {format_count(one.connections)} connections, so nothing is compared with it."
    ours = one.rows[pd.to_numeric(one.rows["mean"], errors="coerce").notna()]
    head = f"{depth} the reference ({escape(labels.variant(reference))}) reached {format_count(reference['mean'])}\\,r/s"
    if ours.empty:
        return head + ", and none of our architectures has a measured trial there."
    ratios = pd.to_numeric(ours["ratio_to_nginx"], errors="coerce")
    low, high = ours.loc[ratios.idxmin()], ours.loc[ratios.idxmax()]
    ref_ci = interval_of(reference)
    faster = slower = 0
    for _, row in ours.iterrows():
        ci = interval_of(row)
        if ci.is_defined and ref_ci.is_defined and not ci.overlaps(ref_ci):
            if row["mean"] > reference["mean"]:
                faster += 1
            else:
                slower += 1
    return (
        f"{head}; our architectures reached from {format_decimal(low['ratio_to_nginx'], 2)} times its mean "
        f"({escape(labels.variant(low))}) to {format_decimal(high['ratio_to_nginx'], 2)} times "
        f"({escape(labels.variant(high))}). With non-overlapping 95\\,\\% intervals, {format_count(faster)} of the "
        f"{format_count(len(ours))} are faster than nginx and {format_count(slower)} slower; the rest are not "
        "distinguishable from it in these data."
    )


def response_bytes_macros(macros: MacroSet, summary: pd.DataFrame) -> None:
    """Our response length (computed), nginx's (measured), the difference, and wrk's per-response bytes."""
    nginx = summary[summary["architecture"] == REFERENCE_ARCHITECTURE] if not summary.empty else summary
    response = key_text(nginx["response"].iloc[0]) if not nginx.empty and "response" in nginx else "test"
    response = response or "test"
    ours = analysis.our_response_bytes(response)
    macros.add("our response bytes", format_count(ours), f"length of our {response} response, computed from its format")
    measured = (
        sorted({float(v) for v in nginx["response_bytes"] if not is_missing(v)})
        if not nginx.empty and "response_bytes" in nginx
        else []
    )
    macros.add(
        "nginx response bytes",
        format_list(measured) if measured else MISSING,
        "length of nginx's response as its trial records measure it",
    )
    difference = (max(measured) - ours) if measured and ours is not None else None
    macros.add(
        "response byte difference", format_count(difference), "nginx's response minus ours, bytes (largest if several)"
    )
    if ours is None:
        sentence = f"The length of our response {escape(response)} is not known to the analysis, so no byte difference is stated."
    elif not measured:
        sentence = (
            f"The campaign has no nginx trial that recorded its response length, so the difference to our "
            f"{format_count(ours)}-byte response is not stated."
        )
    else:
        lengths = format_list(measured)
        share = difference / ours * 100.0
        sentence = (
            f"nginx's response to wrk's request is {lengths} bytes long (measured with each nginx trial), ours "
            f"{format_count(ours)} bytes (computed from the response our servers build), so every nginx response "
            f"carries {format_count(difference)} bytes ({format_decimal(share, 0)}\\,\\%) more"
        )
        if "bytes_per_response_mean" in summary:
            theirs_read = analysis.stats.sample_mean(nginx["bytes_per_response_mean"])
            ours_rows = summary[
                (summary["architecture"] != REFERENCE_ARCHITECTURE)
                & (summary["response"].map(key_text).isin([response, ""]) if "response" in summary else True)
            ]
            ours_read = analysis.stats.sample_mean(ours_rows["bytes_per_response_mean"])
            if not (math.isnan(theirs_read) or math.isnan(ours_read)):
                # wrk prints its byte count rounded to two decimals of KB/MB; 1 % is well above that rounding.
                agree = abs(theirs_read - max(measured)) <= 0.01 * max(measured) and abs(ours_read - ours) <= 0.01 * ours
                sentence += (
                    f". wrk read {format_decimal(theirs_read, 1)} bytes per completed request from nginx and "
                    f"{format_decimal(ours_read, 1)} from our servers on average, "
                    + ("which agrees with these lengths" if agree else "which does not agree with these lengths")
                )
        sentence += "."
    macros.add("response bytes finding", sentence, "nginx's response length against ours")


def unsupported_finding(summary: pd.DataFrame) -> str:
    if summary.empty or "n_unsupported" not in summary:
        return "No measured trial was unsupported."
    rows = summary[summary["n_unsupported"].fillna(0) > 0]
    if rows.empty:
        return "No measured trial was unsupported."
    labels = _labels(summary)
    several_depths = _several_depths(summary)
    names = [
        f"{describe_configuration(r, labels, several_depths)} ({format_count(r['n_unsupported'])} of "
        f"{format_count(r['n_measured'])})"
        for _, r in rows.iterrows()
    ]
    return (
        f"{format_count(rows['n_unsupported'].sum())} measured trials were unsupported, in "
        f"{format_count(len(rows))} configuration{'s' if len(rows) != 1 else ''}: " + "; ".join(names) + ". The "
        "server reported a kernel feature it needs as missing and exited before serving; these trials are "
        "counted and shown, never averaged and never counted as failures."
    )


def poll_epoll_finding(summary: pd.DataFrame) -> str:
    """Source 004's comparison: poll against epoll at equal depth and point."""
    if summary.empty:
        return "The campaign has no poll and epoll configurations to compare."
    measured = summary[pd.to_numeric(summary["mean"], errors="coerce").notna()]
    poll = measured[measured["architecture"] == "poll"]
    epoll = measured[measured["architecture"] == "epoll"]
    if poll.empty or epoll.empty:
        return "The campaign does not have both poll and epoll measured, so source~004's comparison is not repeated."
    keys = [f for f in ("pipeline", *analysis.POINT_FIELDS) if f in summary]
    labels = _labels(summary)
    parts = []
    pairs = overlapping = 0
    for _, p in poll.iterrows():
        same = epoll[[all(key_text(e[k]) == key_text(p[k]) for k in keys) for _, e in epoll.iterrows()]]
        if same.empty:
            continue
        ratios = []
        for _, e in same.iterrows():
            pairs += 1
            if interval_of(p).is_defined and interval_of(e).is_defined and interval_of(p).overlaps(interval_of(e)):
                overlapping += 1
            ratios.append(f"{format_decimal(p['mean'] / e['mean'], 2)} times that of {escape(labels.variant(e))}")
        parts.append(
            f"at depth {key_text(p.get('pipeline')) or '1'} and {format_count(p['connections'])} connections, "
            + format_list_text(ratios)
        )
    if not parts:
        return "Poll and epoll were never measured at the same depth and connection count, so they are not compared."
    sentence = "Poll's mean throughput was, " + "; ".join(parts)
    sentence += (
        f". In {format_count(overlapping)} of these {format_count(pairs)} pairs the 95\\,\\% intervals overlap, "
        "so those differences are within the trial-to-trial noise."
    )
    return sentence


def source_one_finding(comparisons: list[Comparison]) -> str:
    """Source 001's four designs (blocking, thread per connection, epoll, reactor) at the shallowest depth."""
    wanted = ("blocking", "thread_per_conn", "epoll", "reactor")
    for one in comparisons:
        rows = one.rows[one.rows["architecture"].isin(wanted)]
        if rows.empty:
            continue
        labels = Labeller(one.all_rows)
        parts = []
        for _, row in rows.iterrows():
            starved = row.get("starved_connections_mean")
            starved_text = "starvation not measured" if is_missing(starved) else f"{format_compact(starved)} starved"
            parts.append(
                f"{escape(labels.variant(row))} {format_count(row['mean'])}\\,r/s ({starved_text}, "
                f"{format_compact(row.get('timeouts_mean'))} timeouts)"
            )
        return (
            f"Source~001's designs at pipeline depth {one.pipeline} and {format_count(one.connections)} connections "
            "(means per trial): " + "; ".join(parts) + "."
        )
    return "The campaign has none of source~001's designs (blocking, thread per connection, epoll, reactor)."


def architecture_cpu_finding(comparisons: list[Comparison]) -> str:
    parts = []
    for one in comparisons:
        rows = one.rows.dropna(subset=["server_cpu_us_per_request"])
        if rows.empty or len(one.all_rows) < 2:
            continue
        labels = Labeller(one.all_rows)
        values = pd.to_numeric(rows["server_cpu_us_per_request"])
        cheapest, dearest = rows.loc[values.idxmin()], rows.loc[values.idxmax()]
        text = (
            f"at depth {one.pipeline} from {format_decimal(cheapest['server_cpu_us_per_request'], 2)}\\,\\textmu s "
            f"({escape(labels.variant(cheapest))}) to {format_decimal(dearest['server_cpu_us_per_request'], 2)}\\,\\textmu s "
            f"({escape(labels.variant(dearest))})"
        )
        if one.reference is not None and not is_missing(one.reference.get("server_cpu_us_per_request")):
            text += f", nginx {format_decimal(one.reference['server_cpu_us_per_request'], 2)}\\,\\textmu s"
        parts.append(text)
    if not parts:
        return "The campaign has no pipeline depth with two or more servers whose CPU time per request can be compared."
    return "Server CPU time per request ranged " + "; ".join(parts) + "."


def nginx_cpu_source_finding(summary: pd.DataFrame) -> str:
    nginx = summary[summary["architecture"] == REFERENCE_ARCHITECTURE] if not summary.empty else summary
    if nginx.empty:
        return "The campaign has no nginx trial."
    sources = {s for value in nginx.get("server_cpu_source", pd.Series(dtype=str)).fillna("") for s in str(value).split(";") if s}
    if sources == {analysis.CPU_SOURCE_STATS}:
        return (
            "For every nginx configuration the server CPU time is that of nginx's own processes, as its trial "
            "records' \\texttt{cpu\\_source} says, not that of the process tree that launched it."
        )
    if sources == {analysis.CPU_SOURCE_TREE}:
        return (
            "For nginx the server CPU time is that of the launched process tree (its records name no other "
            "source), which contains nginx's master and workers."
        )
    if not sources:
        return "nginx's trials record no CPU time."
    return (
        "nginx's CPU time comes from its own processes in some trials and from the launched process tree in "
        "others (see \\texttt{server\\_cpu\\_source} in trials.csv)."
    )


def architecture_macros(macros: MacroSet, summary: pd.DataFrame) -> list[Comparison]:
    """The generated text of the architecture comparison; returns the comparisons it describes."""
    comparisons = analysis.comparisons(summary)
    labels = _labels(summary)
    macros.add(
        "upper bound finding",
        " ".join(upper_bound_sentence(one, labels, first=index == 0) for index, one in enumerate(comparisons))
        or "The campaign has no measured server, so there is no upper bound.",
        "fastest server per pipeline depth and whose bound it is",
    )
    macros.add("upper bound summary", upper_bound_summary(comparisons, labels), "the upper bounds in one sentence")
    has_nginx = not summary.empty and (summary["architecture"] == REFERENCE_ARCHITECTURE).any()
    macros.add(
        "nginx finding",
        " ".join(nginx_sentence(one, labels) for one in comparisons)
        if has_nginx and comparisons
        else "The campaign has no nginx measurement, so no architecture is compared with it.",
        "our architectures against nginx per depth",
    )
    connections = sorted({one.connections for one in comparisons})
    macros.add("comparison connections", format_list(connections), "wrk connections of the comparison tables")
    response_bytes_macros(macros, summary)
    macros.add("unsupported finding", unsupported_finding(summary), "unsupported trials")
    macros.add("poll epoll finding", poll_epoll_finding(summary), "source 004: poll against epoll")
    macros.add("source one finding", source_one_finding(comparisons), "source 001's four designs")
    macros.add("architecture cpu finding", architecture_cpu_finding(comparisons), "server CPU per request by architecture")
    macros.add("nginx cpu source finding", nginx_cpu_source_finding(summary), "which CPU numbers nginx's are")
    return comparisons


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
    architecture_macros(macros, summary)
    fastest = best_row(summary) if not summary.empty else None
    if fastest is not None:
        fastest_text = (
            f"{describe_configuration(fastest, _labels(summary), _several_depths(summary))}: "
            f"{format_count(fastest['mean'])}\\,r/s"
        )
    else:
        fastest_text = "no configuration (no measured trial)"
    macros.add("fastest configuration", fastest_text, "highest mean throughput")
