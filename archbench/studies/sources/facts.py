"""Published beside measured (paper/templates/sources/section.tex.j2) and the one-page summary's facts.

Each source's published numbers (data/external/, `archbench.analyze.published`) are set beside the campaigns the
report already processes: the main campaign's summary, and the echo and latency studies' summaries in the
processed directory (their process steps write them before the report is generated, and remove them when the
study has no campaign). `archbench.analyze.published_compare` computes the ratios, intervals and verdicts; the
words are in paper/templates/sources/ and paper/templates/summary/.

Outputs: every source's facts (`archbench.analyze.published_compare.SourceFacts`: the section template renders each source's sentence from them, and
archbench.studies.summary.tables the summary's row), the figures and tables the section inputs
(generated/published-NNN-figure.tex, published-NNN-table.tex; PDFs published-000-pool.pdf and
published-002-workers.pdf), and the facts of the method section's sentence on wrk -t (`load_threads_facts`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from archbench.analyze import published_compare as compare
from archbench.analyze.client_bound import client_set_rate
from archbench.analyze.crossos import load_source000
from archbench.analyze.labels import architecture_label
from archbench.analyze.published import published_table, source_001_throughput, source_004_echo
from archbench.analyze.published_compare import SourceFacts
from archbench.config.paths import EXTERNAL_DIR
from archbench.config.values import parse_cpu_list
from archbench.render import latex
from archbench.render.common import client_bound_rule, tt
from archbench.render.latex import Column, format_count, format_decimal, format_interval
from archbench.render.prose import Prose
from archbench.render.study import Paper
from archbench.stats.intervals import MIN_TRIALS_FOR_INTERVAL
from archbench.studies.sources.data import SourcesCampaign, no_sources_campaign
from archbench.studies.sources.figures import plot_relative_curves

TABLES = "sources/tables"
ECHO_SUMMARY_CSV = "echo-summary.csv"
ECHO_MAX_CONNS_CSV = "echo-max-conns.csv"
LATENCY_SUMMARY_CSV = "latency-summary.csv"
NETWORK_COMPARISON_CSV = "network-comparison.csv"
FIGURE_000 = "published-000-pool.pdf"
FIGURE_002 = "published-002-workers.pdf"


def pair_facts(pairs: list[compare.PairOutcome]) -> dict[str, Any]:
    """How the pairs a source separates fare here, for the text: each pair with labels, and the counts."""
    listed = [
        {"higher": architecture_label(p.higher), "lower": architecture_label(p.lower), "outcome": p.outcome}
        for p in pairs
    ]
    counts = {
        key: sum(p.outcome == outcome for p in pairs)
        for key, outcome in (
            ("confirmed", compare.SAME_WAY),
            ("contradicted", compare.OTHER_WAY),
            ("not_separated", compare.NOT_SEPARATED),
            ("no_interval", compare.NO_INTERVAL),
        )
    }
    return {"pairs": listed, "pair_count": len(pairs), **counts, "min_trials": MIN_TRIALS_FOR_INTERVAL}


def ratio_text(ratio: compare.Ratio | None) -> tuple[str, str]:
    """(value, interval) formatted for the text: 1.58, 1.41--1.77."""
    if ratio is None:
        return latex.MISSING, latex.MISSING
    interval = latex.MISSING if math.isnan(ratio.low) else f"{ratio.low:.2f}--{ratio.high:.2f}"
    return f"{ratio.value:.2f}", interval


def read_processed(processed_dir: Path, name: str) -> pd.DataFrame:
    """The processed table, or an empty frame when the campaign wrote none or wrote it without rows."""
    path = Path(processed_dir) / name
    if not path.is_file():
        return pd.DataFrame()
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def server_cpu_number(trials: pd.DataFrame) -> int | None:
    """How many CPUs the campaign's trials gave the server (their recorded placement); None when not recorded or
    not the same for every trial."""
    lists = {str(v) for v in trials.get("server_cpus", pd.Series(dtype=str)).dropna()}
    if len(lists) != 1:
        return None
    return len(parse_cpu_list(next(iter(lists)), "server_cpus"))


def server_cpu_count(trials: pd.DataFrame) -> str:
    number = server_cpu_number(trials)
    return latex.MISSING if number is None else str(number)


def testable_on_cpus(facts: SourceFacts, server_cpus: int | None, top_key: str) -> SourceFacts:
    """`facts` with the verdict "not testable here" when its scaling question went up to `facts.facts[top_key]`
    workers on fewer server CPUs (compare.cpu_limited); `facts.facts["cpu_limited"]` says which for the text."""
    top = facts.facts.get(top_key)
    limited = bool(facts.facts.get("measured")) and compare.cpu_limited(server_cpus, top)
    facts.facts["cpu_limited"] = limited
    return replace(facts, verdict=compare.NOT_TESTABLE) if limited else facts


# --------------------------------------------------------------------------- per source


def source_000(
    summary: pd.DataFrame, processed_dir: Path, external: Path, sources_summary: pd.DataFrame | None = None
) -> tuple[SourceFacts, pd.DataFrame, pd.DataFrame]:
    published = compare.source_000_published_curve(load_source000(external / "source000_throughput.csv"))
    loopback = compare.network_loopback_summary(read_processed(processed_dir, NETWORK_COMPARISON_CSV))
    measured, connections, origin = compare.source_000_measured_curve(summary, loopback, sources_summary)
    theirs, ours = compare.last_ratio(published), compare.last_ratio(measured)
    assert theirs is not None
    facts: dict[str, Any] = {"measured": ours is not None, "connections": connections, "origin": origin}
    facts["published_last"], _ = ratio_text(theirs)
    facts["published_last_n"] = int(published["pool_size"].iloc[-1])
    facts["published_peak_n"] = int(published.loc[published["mean"].idxmax(), "pool_size"])
    facts["measured_last"], facts["measured_last_ci"] = ratio_text(ours)
    facts["measured_last_n"] = int(measured["pool_size"].iloc[-1]) if ours is not None else None
    common = sorted(set(published["pool_size"]) & set(measured["pool_size"]) - {1}) if ours is not None else []
    inside = [
        n
        for n in common
        if compare.Ratio(
            *measured.loc[measured["pool_size"] == n, ["ratio", "ratio_low", "ratio_high"]].iloc[0]
        ).contains(float(published.loc[published["pool_size"] == n, "ratio"].iloc[0]))
    ]
    facts["common_count"] = len(common)
    facts["inside_count"] = len(inside) if common else None
    return SourceFacts("000", compare.direction_verdict(theirs, ours), facts), published, measured


def source_001(latency_summary: pd.DataFrame, external: Path, prose: Prose) -> tuple[SourceFacts, str]:
    published = source_001_throughput(external).set_index("our_architecture")
    order = ["reactor", "epoll", "thread_per_conn", "blocking"]
    measured = compare.source_001_measured(latency_summary)
    measured = measured.set_index("architecture") if not measured.empty else measured
    verdict, pairs = compare.source_001_verdict(published.reset_index(), measured.reset_index())
    items, rows = [], []
    for name in order:
        label = architecture_label(name)
        mean, ci, timeouts = latex.MISSING, latex.MISSING, latex.MISSING
        if name in measured.index:
            row = measured.loc[name]
            mean = format_count(row["achieved_mean"])
            ci = latex.table_interval(row["achieved_ci95_low"], row["achieved_ci95_high"], row.get("n"))
            ci_text = format_interval(row["achieved_ci95_low"], row["achieved_ci95_high"], row.get("n"))
            timeouts = format_count(row["timeouts_mean"])
            items.append({"label": label, "mean": mean, "ci": ci_text})
        rows.append(
            [label, format_count(published.loc[name, "requests_per_s"]), format_count(published.loc[name, "timeouts"]),
             mean, ci, timeouts]
        )  # fmt: skip
    facts: dict[str, Any] = {
        "measured": not measured.empty,
        "entries": items,
        "published_items": [
            {"label": architecture_label(n), "mean": format_count(published.loc[n, "requests_per_s"])} for n in order
        ],
        **pair_facts(pairs),
        "verdict": verdict,
        "tie": format_count(compare.TIE_FRACTION * 100),
        "offered": format_count(measured["offered_rate"].iloc[0]) if not measured.empty else latex.MISSING,
        "connections": format_count(measured["connections"].iloc[0]) if not measured.empty else latex.MISSING,
        "n": format_count(measured["n"].min()) if not measured.empty else latex.MISSING,
    }
    columns = [
        Column("architecture", "l"),
        Column("source 001 req/s", "r"),
        Column("timeouts", "r"),
        Column("ours req/s", "r"),
        Column("95\\,\\% CI", "r"),
        Column("timeouts", "r"),
    ]
    notes = latex.notes_block(latex.range_notes(measured.reset_index())) if not measured.empty else ""
    caption = prose.sentence(TABLES, "t001_caption")
    table = latex.render_longtable(columns, rows, caption, "tab:published-001", notes=notes)
    return SourceFacts("001", verdict, facts), table


SOURCE_002_SERVERS = ("prefork", "nginx", "pong")


def source_002_one_worker(summary: pd.DataFrame) -> tuple[list[list[str]], dict[str, Any]]:
    """The one-worker rows of source 002's servers under wrk and under httperf (replies per second): table rows,
    and the facts the sentence quotes (pong's rate over the correct server's with the higher mean, per load
    generator; `correct_client_set`: the load generators that set the rate of both correct servers, by
    `client_set_rate`, where the two are not ranked)."""
    rows: list[list[str]] = []
    rates: dict[str, dict[str, pd.Series]] = {"wrk": {}, "httperf": {}}
    for name in SOURCE_002_SERVERS:
        cells = [architecture_label(name)]
        for generator in rates:
            found = compare.response_rows(summary, name, "source002", generator)
            found = found[pd.to_numeric(found["threads"], errors="coerce").fillna(1) == 1] if not found.empty else found
            if found.empty:
                cells += [latex.MISSING, latex.MISSING]
                continue
            row = found.iloc[0]
            rates[generator][name] = row
            cells += [
                format_count(row["mean"]),
                format_interval(row.get("ci95_low"), row.get("ci95_high"), row.get("n")),
            ]
        rows.append(cells)
    facts: dict[str, Any] = {"correct_client_set": []}
    for generator, by_server in rates.items():
        correct = [by_server[n] for n in ("prefork", "nginx") if n in by_server]
        if "pong" in by_server and correct:
            # The higher mean, not a ranking: where the load generator set both rates (`correct_client_set`), the
            # sentence says the two are not ranked.
            higher = max(correct, key=lambda r: float(r["mean"]))
            ratio = compare.summary_ratio(by_server["pong"], higher)
            facts[f"pong_{generator}_ratio"], facts[f"pong_{generator}_ci"] = ratio_text(ratio)
            facts[f"pong_{generator}_over"] = architecture_label(str(higher["architecture"]))
        if len(correct) == 2 and all(client_set_rate(row) for row in correct):
            facts["correct_client_set"].append(generator)
    facts["httperf_measured"] = bool(rates["httperf"])
    # Without pong or httperf the table would repeat the figure's one-worker points.
    return (rows if rates["httperf"] or "pong" in rates["wrk"] else []), facts


def source_002(summary: pd.DataFrame, cpus: str) -> tuple[SourceFacts, pd.DataFrame]:
    prefork = compare.response_rows(summary, "prefork", "source002")
    nginx = compare.response_rows(summary, "nginx", "source002")
    facts: dict[str, Any] = {"measured": len(prefork) >= 2, "server_cpus": cpus}
    curves = []
    for name, rows in (("prefork", prefork), ("nginx", nginx)):
        workers = sorted(int(w) for w in rows["threads"].dropna()) if not rows.empty else []
        top = workers[-1] if len(workers) >= 2 and workers[0] == 1 else None
        ratio = compare.worker_ratio(rows, top, 1) if top is not None else None
        facts[f"{name}_top"] = top
        facts[f"{name}_ratio"], facts[f"{name}_ci"] = ratio_text(ratio)
        facts[f"{name}_ratio_object"] = ratio
        for n in workers:
            r = compare.worker_ratio(rows, n, 1) if 1 in workers else None
            if r is not None:
                curves.append({"series": name, "x": n, "ratio": r.value, "low": r.low, "high": r.high})
    facts["connections"] = format_count(prefork["connections"].iloc[0]) if not prefork.empty else latex.MISSING
    facts["one_worker_rows"], one_worker = source_002_one_worker(summary)
    facts.update(one_worker)
    # Direction rule against its claim that prefork scales to 8 workers (its nginx claim is stated, not scored:
    # it has no published number).
    claim = compare.Ratio(2.0)  # "does scale": up, at face value
    verdict = (
        compare.direction_verdict(claim, facts["prefork_ratio_object"]) if facts["measured"] else compare.NOT_MEASURED
    )
    return SourceFacts("002", verdict, facts), pd.DataFrame(curves)


def source_003(summary: pd.DataFrame, external: Path) -> SourceFacts:
    """64 over 32 connections per pool size (compare.source_003_verdict): the pool sizes kept, each with its ratio
    and its interval's relation to source 003's range, those left out where the load generator set the rate, and
    those left out because they left connections unanswered (with how many, at 32 and at 64 connections)."""
    published = compare.source_003_published(published_table("003", external))
    ratios, architecture = compare.source_003_ratios(summary)
    facts: dict[str, Any] = {"measured": bool(ratios), "client_bound_threshold": client_bound_rule()}
    facts["label"] = architecture_label(architecture, "connection", "stack") if architecture else latex.MISSING
    facts["pools"] = []
    for pool in (r for r in ratios if r.kept):
        value, interval = ratio_text(pool.ratio)
        # Our interval against its range: the relation the effect rule's verdict is decided on.
        facts["pools"].append(
            {"n": pool.pool_size, "ratio": value, "ratio_ci": interval,
             "range": compare.range_relation(published, pool.ratio)}
        )  # fmt: skip
    facts["left_out"] = [r.pool_size for r in ratios if r.client_set]
    facts["measured_sizes"] = [r.pool_size for r in ratios if r.pool_size is not None]
    facts["starved_out"] = [
        {"n": r.pool_size, "low": format_count(r.starved[0]), "high": format_count(r.starved[1])}
        for r in ratios
        if r.starving and not r.client_set
    ]
    return SourceFacts("003", compare.source_003_verdict(published, ratios), facts)


def source_004_ceiling_facts(
    max_conns: pd.DataFrame, ceilings: dict[str, float]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per server with a published ceiling: what it held here, whether the campaign's cap stopped it, its verdict;
    and the cap with the open-file limit it was set within (the echo study's --max-conns ramp)."""
    entries: list[dict[str, Any]] = []
    limits: dict[str, Any] = {"cap": None, "open_files": None}
    if max_conns.empty:
        return entries, limits
    for row in max_conns.itertuples():
        if row.architecture not in ceilings or pd.isna(row.reached_median):
            continue
        capped = bool(row.reached_median >= row.cap)
        entries.append(
            {"name": row.architecture, "label": architecture_label(row.architecture),
             "held": format_count(row.reached_median), "held_value": float(row.reached_median), "capped": capped,
             "published": format_count(ceilings[row.architecture]),
             "verdict": compare.ceiling_verdict(ceilings[row.architecture], float(row.reached_median), capped)}
        )  # fmt: skip
        limits["cap"] = format_count(row.cap)
        soft = getattr(row, "open_files_soft", math.nan)
        limits["open_files"] = None if pd.isna(soft) else format_count(soft)
    return entries, limits


def source_004_ordering_facts(published: pd.DataFrame, measured: pd.DataFrame) -> list[dict[str, Any]]:
    """Per client count source 004 listed: its servers there, how each pair it separates fares here, and the
    servers whose rate the load generator set there (`client_set`, left out of the ordering)."""
    orderings = []
    for clients, theirs in published.groupby("connections"):
        mapping, ours, client_set = compare.source_004_ordering_inputs(theirs, measured, clients)
        orderings.append(
            {"clients": format_count(clients),
             "verdict": compare.ordering_verdict(mapping, ours, client_set=client_set)[0],
             "servers": [architecture_label(name) for name in mapping],
             "client_set": [architecture_label(name) for name in mapping if name in client_set],
             **pair_facts(compare.ordering_pairs(mapping, ours, client_set=client_set))}
        )  # fmt: skip
    return orderings


def source_004(processed_dir: Path, external: Path, prose: Prose) -> tuple[SourceFacts, str]:
    published = source_004_echo(external)
    ceilings = compare.source_004_ceilings(published_table("004", external))
    echo = read_processed(processed_dir, ECHO_SUMMARY_CSV)
    measured = compare.source_004_measured(echo)
    entries, limits = source_004_ceiling_facts(read_processed(processed_dir, ECHO_MAX_CONNS_CSV), ceilings)
    held = {e["name"]: e["held_value"] for e in entries}
    capped = {e["name"]: e["capped"] for e in entries}
    verdicts = compare.source_004_verdicts(published, measured, ceilings, held, capped)
    rows = []
    for row in published.itertuples():
        ours = (
            measured[(measured["architecture"] == row.our_architecture) & (measured["connections"] == row.connections)]
            if not measured.empty
            else measured
        )
        first = ours.iloc[0] if not ours.empty else pd.Series(dtype=float)
        mean, low, high = (
            first.get(f"bytes_received_per_sec_{s}", math.nan) for s in ("mean", "ci95_low", "ci95_high")
        )
        interval = f"{low / 1e6:.1f}--{high / 1e6:.1f}" + latex.interval_note(first.get("n"))
        rows.append(
            [architecture_label(row.our_architecture), format_count(row.connections),
             format_decimal(row.bytes_per_s / 1e6, 1), format_decimal(mean / 1e6, 1),
             latex.MISSING if math.isnan(low) else interval]
        )  # fmt: skip
    columns = [
        Column("server", "l"),
        Column("clients", "r"),
        Column("source 004 MB/s", "r"),
        Column("ours MB/s", "r"),
        Column("95\\,\\% CI", "r"),
    ]
    table = latex.render_longtable(columns, rows, prose.sentence(TABLES, "t004_caption"), "tab:published-004")
    campaign = ""
    if not echo.empty and "campaign" in echo:
        campaign = r"\texttt{" + latex.escape(str(echo["campaign"].iloc[0])) + "}"
    facts: dict[str, Any] = {
        "measured": not measured.empty,
        "entries": entries,
        "campaign_tt": campaign,
        "orderings": source_004_ordering_facts(published, measured),
        "tie": format_count(compare.TIE_FRACTION * 100),
        "client_bound_threshold": client_bound_rule(),
        "ceiling_verdict": verdicts["ceiling"],
        "published_ceilings": [
            {"label": architecture_label(name), "value": format_count(value)} for name, value in ceilings.items()
        ],
        **limits,
    }
    verdict = compare.source_004_verdict(verdicts) if not measured.empty else compare.NOT_MEASURED
    facts["verdict"] = verdict  # the ceilings' sentence says the whole is untested only where the verdict does
    return SourceFacts("004", verdict, facts), table


# --------------------------------------------------------------------------- outputs


def hosts(trials: pd.DataFrame) -> set[str]:
    return {str(h) for h in trials["hostname"].dropna()} if "hostname" in trials else set()


def campaign_name(summary: pd.DataFrame) -> str:
    return tt(summary["campaign"].iloc[0]) if not summary.empty and "campaign" in summary else latex.MISSING


def collect(
    summary: pd.DataFrame,
    trials: pd.DataFrame,
    processed_dir: Path,
    prose: Prose,
    external: Path = EXTERNAL_DIR,
    sources: SourcesCampaign | None = None,
) -> tuple[dict[str, SourceFacts], dict[str, Any]]:
    """Every source's facts, and the frames and tables the section draws. Sources 000, 002 and 003 come from the
    sources campaign where it measured them (their own protocols), else from the main campaign."""
    sources = sources if sources is not None else no_sources_campaign()
    cpus = server_cpu_count(trials)
    sources_cpus = server_cpu_count(sources.trials) if sources.available else cpus
    # Source 000's sweep: the sources campaign only when it ran on the main campaign's host, so that `make all` on
    # another machine sets that machine's own sweep (main campaign or network study) beside the source.
    same_host = bool(hosts(sources.trials)) and hosts(sources.trials) <= hosts(trials)
    facts000, published000, measured000 = source_000(
        summary, processed_dir, external, sources.summary if same_host else None
    )
    from_sources = facts000.facts["origin"] == "sources"
    facts000.facts["server_cpus"] = sources_cpus if from_sources else cpus
    facts000 = testable_on_cpus(
        facts000, server_cpu_number(sources.trials if from_sources else trials), "measured_last_n"
    )
    facts000.facts["campaign_tt"] = campaign_name(sources.summary if from_sources else summary)
    facts001, table001 = source_001(read_processed(processed_dir, LATENCY_SUMMARY_CSV), external, prose)
    # Sources 002 and 003: the sources campaign where it measured them, else the main campaign.
    for source_summary, source_trials, source_cpus in (
        (sources.summary, sources.trials, sources_cpus),
        (summary, trials, cpus),
    ):
        facts002, curves002 = source_002(source_summary, source_cpus)
        facts002.facts["campaign_tt"] = campaign_name(source_summary)
        facts002 = testable_on_cpus(facts002, server_cpu_number(source_trials), "prefork_top")
        if facts002.facts["measured"]:
            break
    for source_summary in (sources.summary, summary):
        facts003 = source_003(source_summary, external)
        facts003.facts["campaign_tt"] = campaign_name(source_summary)
        if facts003.facts["measured"]:
            break
    facts004, table004 = source_004(processed_dir, external, prose)
    sources = {f.source: f for f in (facts000, facts001, facts002, facts003, facts004)}
    drawn = {"published000": published000, "measured000": measured000, "curves002": curves002,
             "table001": table001, "table004": table004}  # fmt: skip
    return sources, drawn


def load_threads_facts(trials: pd.DataFrame) -> dict[str, Any]:
    """Why wrk runs with the threads it runs: the facts of `load_threads_reason` (sentences.tex.j2), which the method
    section renders from `studies.sources.load_threads`."""
    loads = {str(v) for v in trials.get("load_cpus", pd.Series(dtype=str)).dropna()}
    threads = sorted({int(v) for v in pd.to_numeric(trials.get("load_threads", pd.Series(dtype=float))).dropna()})
    return {
        "load_cpus": str(len(parse_cpu_list(next(iter(loads)), "load_cpus"))) if len(loads) == 1 else None,
        "load_threads": latex.format_list(threads),
    }


def published_outputs(
    summary: pd.DataFrame,
    trials: pd.DataFrame,
    processed_dir: Path,
    paper: Paper,
    external: Path = EXTERNAL_DIR,
    sources_campaign: SourcesCampaign | None = None,
) -> tuple[dict[str, str], dict[str, SourceFacts]]:
    """The section's generated figures and tables (name -> text) and every source's facts (its sentences', and the
    summary's)."""
    sources, drawn = collect(summary, trials, processed_dir, paper.prose, external, sources_campaign)
    prose = paper.prose
    curve000 = pd.concat(
        [
            drawn["published000"].assign(series="source 000 (published)"),
            drawn["measured000"].assign(series="this machine"),
        ]
    ).rename(columns={"pool_size": "x", "ratio_low": "low", "ratio_high": "high"})
    figure000 = paper.figure(
        plot_relative_curves(curve000, Path(paper.figures_dir) / FIGURE_000, "pool size $N$"),
        "fig:published-000",
        TABLES,
        ("fig000_caption", "fig000_missing"),
    )
    figure002 = paper.figure(
        plot_relative_curves(drawn["curves002"], Path(paper.figures_dir) / FIGURE_002, "workers"),
        "fig:published-002",
        TABLES,
        ("fig002_caption", "fig002_missing"),
    )
    files = {
        "published-000-figure.tex": figure000,
        "published-000-table.tex": table_000(drawn["published000"], drawn["measured000"], prose),
        "published-001-table.tex": drawn["table001"],
        "published-002-figure.tex": figure002 if sources["002"].facts["measured"] else "",
        "published-002-table.tex": table_002(sources["002"].facts["one_worker_rows"], prose),
        "published-004-table.tex": drawn["table004"],
    }
    return files, sources


def table_002(rows: list[list[str]], prose: Prose) -> str:
    """Source 002's servers at one worker under wrk and httperf; nothing when no campaign measured them."""
    if not rows:
        return ""
    columns = [
        Column("server", "l"),
        Column("wrk req/s", "r"),
        Column("95\\,\\% CI", "r"),
        Column("httperf replies/s", "r"),
        Column("95\\,\\% CI", "r"),
    ]
    return latex.render_longtable(columns, rows, prose.sentence(TABLES, "t002_caption"), "tab:published-002")


def table_000(published: pd.DataFrame, measured: pd.DataFrame, prose: Prose) -> str:
    rows = []
    sizes = sorted(set(published["pool_size"]) | set(measured.get("pool_size", pd.Series(dtype=int))))
    for n in sizes:
        theirs = published[published["pool_size"] == n]
        ours = measured[measured["pool_size"] == n] if not measured.empty else measured

        def cells(frame: pd.DataFrame) -> list[str]:
            if frame.empty:
                return [latex.MISSING] * 3
            row = frame.iloc[0]
            value, interval = ratio_text(compare.Ratio(row["ratio"], row["ratio_low"], row["ratio_high"]))
            return [format_count(row["mean"]), value, interval]

        rows.append([str(n), str(n + 1), *cells(theirs), *cells(ours)])
    columns = [
        Column("$N$", "r"),
        Column("its threads", "r"),
        Column("source 000 r/s", "r"),
        Column("ratio", "r"),
        Column("95\\,\\% CI", "r"),
        Column("ours r/s", "r"),
        Column("ratio", "r"),
        Column("95\\,\\% CI", "r"),
    ]
    return latex.render_longtable(columns, rows, prose.sentence(TABLES, "t000_caption"), "tab:published-000")
