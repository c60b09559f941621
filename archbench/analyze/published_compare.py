"""Each source's published answer beside this machine's, and whether they agree (the report's published-beside-
measured section and its one-page summary).

The verdict rule, in order (paper/templates/summary/ states it in words, once):

* "not testable here" when the campaign lacks what the question needs: the server had fewer CPUs than the largest
  level of parallelism compared (`cpu_limited`: a gain from 1 to 8 workers on one CPU is the cost of sharing that
  CPU, not parallel speed-up; the count comes from the campaign's recorded placement), or a quantity the question
  asks about was not measured (source 004's connection ceilings);
* "inconclusive" when our 95 % interval covers both no effect and the published effect (any part of a published
  range, as source 003's gains over three hosts), or we have no interval;
* "agree" / "disagree" only otherwise, by one of three rules:
  - Effect (sources 000, 002, 003): a ratio of two throughputs (more workers over one worker, 64 over 32
    connections). Agree when our interval reaches the published ratio (or range) or points the same way (up: above 1, down:
    below 1; a published ratio without an interval counts at face value); disagree otherwise. Source 003's ratio
    is taken at each pool size measured, leaving out those where the load generator set the rate at 32 or 64
    connections (`source_003_verdict`): disagree if any pool size left disagrees, agree only if every one agrees,
    else inconclusive; not testable here when none is left.
  - Ordering (sources 001, 004): every pair of servers the source separates by more than `TIE_FRACTION` must not
    be separated the other way by our intervals (ours "separates" a pair when their 95 % intervals do not overlap;
    a server measured in fewer than MIN_TRIALS_FOR_INTERVAL trials has no interval and separates nothing).
    A pair with a server whose rate the load generator set (`client_set_rate`: client-bound in half or more of
    its trials) is left out: that rate is the client's, not the server's. Agree: no pair contradicted and at
    least one confirmed; disagree: a pair contradicted; inconclusive: none of the source's pairs separated here,
    though measured; not testable here: every measured pair left out so. Where the source separates no pair (one
    server, or all within the tie) it states no ordering there, and that part is left out.
  - Ceiling (source 004): the connection count a server held here, against the ceiling the source published for
    it: a server that held more than its published ceiling contradicts it; one stopped by the campaign's own cap
    (the open-file limit) below that ceiling cannot test it.

A question of several parts (source 004: its orderings and its ceilings) is contradicted when any part tested here
disagrees, whatever the others; otherwise a part that could not be tested leaves it "not testable here".

A source whose set-up no campaign here measured gets the verdict "not measured".
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench.analyze.client_bound import client_set_rate
from archbench.analyze.published import published_value
from archbench.analyze.values import number
from archbench.stats.intervals import MIN_TRIALS_FOR_INTERVAL
from archbench.stats.welch import ratio_ci_from_stats

AGREE, DISAGREE, INCONCLUSIVE, NOT_MEASURED = "agree", "disagree", "inconclusive", "not measured"
NOT_TESTABLE = "not testable here"
NO_ORDERING = "no ordering"  # a part where the source itself separates no pair: nothing to test, left out
# How one pair the source separates fares here (PairOutcome.outcome); CLIENT_SET: a server of the pair had the
# load generator's rate, not its own (archbench.analyze.client_bound), so the pair is left out.
SAME_WAY, OTHER_WAY, NOT_SEPARATED, NO_INTERVAL = "same way", "other way", "not separated", "no interval"
CLIENT_SET = "client set the rate"
# Where our interval lies against a published range (range_relation).
INSIDE, OUTSIDE, OVERLAPS = "inside", "outside", "overlaps"
# Published values closer than this fraction of the larger are a tie: the source did not separate them.
TIE_FRACTION = 0.10
SOURCE_000_CONNECTIONS = 400


@dataclass(frozen=True)
class SourceFacts:
    """One source's facts for its section and its summary row: its number, its verdict (this module's rule) and the
    facts its sentences render (archbench.studies.sources.facts makes them; archbench.studies.summary.tables
    tabulates them)."""

    source: str
    verdict: str
    facts: dict[str, Any]


@dataclass(frozen=True)
class Ratio:
    """A ratio of two throughputs with its 95 % interval (NaN bounds: none)."""

    value: float
    low: float = math.nan
    high: float = math.nan

    @property
    def direction(self) -> str | None:
        """up, down, flat; None without an interval (then only a published value at face value has one)."""
        if math.isnan(self.low) or math.isnan(self.high):
            return None
        return "up" if self.low > 1 else "down" if self.high < 1 else "flat"

    def contains(self, value: float) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high)) and self.low <= value <= self.high

    def reaches(self, published: Ratio) -> bool:
        """Whether this interval reaches the published effect: its range where it has one (source 003's gains over
        three hosts), else its value (`range_relation` not OUTSIDE)."""
        return range_relation(published, self) in (INSIDE, OVERLAPS)


def range_relation(published: Ratio, ours: Ratio) -> str | None:
    """Where our interval lies against the published range (its value where it has none): INSIDE it, OUTSIDE it
    (disjoint), or OVERLAPS it without lying inside, where whether our effect is in the range cannot be told;
    None without our interval. The effect rule's `reaches` is this relation, so a sentence that states it and the
    verdict are one decision."""
    if math.isnan(ours.low) or math.isnan(ours.high):
        return None
    low, high = (
        (published.value, published.value)
        if math.isnan(published.low) or math.isnan(published.high)
        else (published.low, published.high)
    )
    if ours.high < low or ours.low > high:
        return OUTSIDE
    return INSIDE if low <= ours.low and ours.high <= high else OVERLAPS


def summary_ratio(top: pd.Series, bottom: pd.Series, column: str = "mean", sd: str = "sd") -> Ratio:
    """top / bottom of two summary rows (mean, sd, n), with the delta-method interval of archbench.stats; a row
    over itself is 1 exactly, without an interval (the normalising point)."""
    if top is bottom or top.equals(bottom):
        return Ratio(1.0)
    value, interval = ratio_ci_from_stats(
        float(top[column]), float(top[sd]), int(top["n"]), float(bottom[column]), float(bottom[sd]), int(bottom["n"])
    )
    return Ratio(value, interval.low, interval.high)


def direction_verdict(published: Ratio, ours: Ratio | None) -> str:
    """The effect rule: inconclusive when our interval is missing or covers both 1 (no effect) and the published
    effect (its range where it has one); agree when it reaches the published effect or points the same way (a
    published ratio without interval points up above 1, down below); disagree otherwise."""
    if ours is None:
        return NOT_MEASURED
    mine = ours.direction
    if mine is None or (ours.contains(1.0) and ours.reaches(published)):
        return INCONCLUSIVE
    if ours.reaches(published):
        return AGREE
    theirs = published.direction or ("up" if published.value > 1 else "down" if published.value < 1 else "flat")
    return AGREE if theirs == mine else DISAGREE


def cpu_limited(server_cpus: int | None, top_level: int | None) -> bool:
    """True when a scaling question up to `top_level` workers or threads cannot be answered on a server given
    `server_cpus` CPUs: fewer CPUs than the level compared (or a placement that was not recorded)."""
    if top_level is None or top_level <= 1:
        return False
    return server_cpus is None or server_cpus < top_level


@dataclass(frozen=True)
class PairOutcome:
    """A pair of servers the source separates (`higher` above `lower` in its numbers) and how ours compare:
    SAME_WAY, OTHER_WAY, NOT_SEPARATED (our intervals overlap), NO_INTERVAL (a side without one) or NOT_MEASURED."""

    higher: str
    lower: str
    outcome: str


def ordering_pairs(
    published: Mapping[str, float],
    ours: Mapping[str, tuple[float, float]],
    tie: float = TIE_FRACTION,
    client_set: Collection[str] = (),
) -> list[PairOutcome]:
    """Every pair the source separates by more than `tie` of the larger value, with how our intervals place it
    (CLIENT_SET where a server of the pair is in `client_set`, whose rate the load generator set)."""
    names = list(published)
    pairs = []
    for index, first in enumerate(names):
        for second in names[index + 1 :]:
            a, b = published[first], published[second]
            if abs(a - b) <= tie * max(a, b):
                continue
            high, low = (first, second) if a > b else (second, first)
            if high not in ours or low not in ours:
                outcome = NOT_MEASURED
            elif high in client_set or low in client_set:
                outcome = CLIENT_SET
            elif any(map(math.isnan, (*ours[high], *ours[low]))):
                outcome = NO_INTERVAL
            elif ours[high][0] > ours[low][1]:
                outcome = SAME_WAY
            elif ours[high][1] < ours[low][0]:
                outcome = OTHER_WAY
            else:
                outcome = NOT_SEPARATED
            pairs.append(PairOutcome(high, low, outcome))
    return pairs


def ordering_verdict(
    published: Mapping[str, float],
    ours: Mapping[str, tuple[float, float]],
    tie: float = TIE_FRACTION,
    client_set: Collection[str] = (),
) -> tuple[str, int, int]:
    """(verdict, pairs confirmed, pairs contradicted) of the ordering rule; `ours` maps a server to its interval
    (NaN bounds: measured without one), `client_set` names the servers whose rate the load generator set. NO_ORDERING
    when the source separates no pair, NOT_MEASURED when no pair it separates was measured here, NOT_TESTABLE when
    every measured pair has a server in `client_set`; a measured pair without intervals separates nothing, so it
    leaves the verdict inconclusive, never "not measured"."""
    pairs = ordering_pairs(published, ours, tie, client_set)
    if not pairs:
        return NO_ORDERING, 0, 0
    measured = [p for p in pairs if p.outcome != NOT_MEASURED]
    if not measured:
        return NOT_MEASURED, 0, 0
    measured = [p for p in measured if p.outcome != CLIENT_SET]
    if not measured:
        return NOT_TESTABLE, 0, 0
    confirmed = sum(p.outcome == SAME_WAY for p in measured)
    contradicted = sum(p.outcome == OTHER_WAY for p in measured)
    verdict = DISAGREE if contradicted else AGREE if confirmed else INCONCLUSIVE
    return verdict, confirmed, contradicted


def separating_interval(low: float, high: float, n: float) -> tuple[float, float]:
    """A measured interval the ordering rule may use: NaN under MIN_TRIALS_FOR_INTERVAL trials, where the bounds are
    only the trials' range and separate nothing."""
    if pd.isna(n) or float(n) < MIN_TRIALS_FOR_INTERVAL:
        return math.nan, math.nan
    return float(low), float(high)


def combined(verdicts: Sequence[str]) -> str:
    """One verdict of several parts: disagree if any part does, agree if every measured part does (parts not
    measured, with no ordering to test, or not testable here are left out)."""
    measured = [v for v in verdicts if v not in (NOT_MEASURED, NO_ORDERING, NOT_TESTABLE)]
    if not measured:
        return NOT_MEASURED
    if DISAGREE in measured:
        return DISAGREE
    return AGREE if all(v == AGREE for v in measured) else INCONCLUSIVE


# --------------------------------------------------------------------------- source 000: the pool-size curve


def source_000_published_curve(source000: pd.DataFrame) -> pd.DataFrame:
    """Its loopback table normalised to its 1-worker point: pool_size, mean, ratio, ratio interval."""
    table = source000[source000["table"] == "loopback"].sort_values("thread_pool_size")
    base = table.iloc[0]
    rows = []
    for _, row in table.iterrows():
        ratio = summary_ratio(row, base, "mean_rps", "sd_rps")
        rows.append(
            {"pool_size": int(row["thread_pool_size"]), "mean": float(row["mean_rps"]), "ratio": ratio.value,
             "ratio_low": ratio.low, "ratio_high": ratio.high, "n": int(row["n"])}
        )  # fmt: skip
    return pd.DataFrame(rows)


def network_loopback_summary(network_comparison: pd.DataFrame) -> pd.DataFrame:
    """The network study's loopback campaign (source 000's pool sizes at 400 connections) as summary rows."""
    if network_comparison.empty:
        return pd.DataFrame()
    frame = network_comparison.rename(columns={"loopback_mean": "mean", "loopback_sd": "sd", "loopback_n": "n"})
    return frame.assign(architecture="thread_pool", dispatch="request", pipeline=1, response="test")[
        ["architecture", "dispatch", "pipeline", "response", "threads", "connections", "mean", "sd", "n"]
    ]


def source_000_measured_curve(
    summary: pd.DataFrame, loopback: pd.DataFrame | None = None, sources: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, int | None, str]:
    """Our thread pool (request dispatch, pipeline 1) normalised to N = 1, and where it comes from ("sources",
    "main" or "network"): the sources campaign (source 000's protocol) at its 400 connections, else the main
    campaign there if it has N = 1 and another size, else the network study's loopback campaign (source 000's sizes
    at 400), else the main campaign at the connection count with the most pool sizes."""
    protocol, protocol_connections = _measured_curve(sources if sources is not None else pd.DataFrame())
    if protocol_connections == SOURCE_000_CONNECTIONS:
        return protocol, protocol_connections, "sources"
    curve, connections = _measured_curve(summary)
    if connections == SOURCE_000_CONNECTIONS:
        return curve, connections, "main"
    network, network_connections = _measured_curve(loopback if loopback is not None else pd.DataFrame())
    if network_connections is not None:
        return network, network_connections, "network"
    return curve, connections, "main"


def _measured_curve(summary: pd.DataFrame) -> tuple[pd.DataFrame, int | None]:
    if summary.empty or "dispatch" not in summary:
        return pd.DataFrame(), None
    pool = summary[
        (summary["architecture"] == "thread_pool")
        & (summary["dispatch"] == "request")
        & (pd.to_numeric(summary["pipeline"], errors="coerce").fillna(1) == 1)
        & (summary["response"].fillna("test") == "test")
        & (pd.to_numeric(summary["n"], errors="coerce").fillna(0) >= 2)
    ]
    usable = {c: rows for c, rows in pool.groupby("connections") if 1 in set(rows["threads"]) and len(rows) >= 2}
    if not usable:
        return pd.DataFrame(), None
    connections = (
        SOURCE_000_CONNECTIONS if SOURCE_000_CONNECTIONS in usable else max(usable, key=lambda c: len(usable[c]))
    )
    rows_here = usable[connections].sort_values("threads")
    base = rows_here[rows_here["threads"] == 1].iloc[0]
    rows = []
    for _, row in rows_here.iterrows():
        ratio = summary_ratio(row, base)
        rows.append(
            {"pool_size": int(row["threads"]), "mean": float(row["mean"]), "ratio": ratio.value,
             "ratio_low": ratio.low, "ratio_high": ratio.high, "n": int(row["n"])}
        )  # fmt: skip
    return pd.DataFrame(rows), int(connections)


def last_ratio(curve: pd.DataFrame) -> Ratio | None:
    if curve.empty or len(curve) < 2:
        return None
    row = curve.iloc[-1]
    return Ratio(float(row["ratio"]), float(row["ratio_low"]), float(row["ratio_high"]))


# --------------------------------------------------------------------------- source 001: four architectures


def source_001_measured(latency_summary: pd.DataFrame) -> pd.DataFrame:
    """Our four at 2000 connections under one fixed offered rate (the latency study's source-001 set-up)."""
    if latency_summary.empty or "setup" not in latency_summary:
        return pd.DataFrame()
    rows = latency_summary[latency_summary["setup"] == "source_001"]
    return rows[
        ["architecture", "connections", "offered_rate", "achieved_mean", "achieved_ci95_low", "achieved_ci95_high",
         "n", "timeouts_mean"]
    ].reset_index(drop=True)  # fmt: skip


def source_001_verdict(published: pd.DataFrame, measured: pd.DataFrame) -> tuple[str, list[PairOutcome]]:
    """The ordering rule over source 001's four designs, and how each pair it separates fares here."""
    if measured.empty:
        return NOT_MEASURED, []
    theirs = dict(zip(published["our_architecture"], published["requests_per_s"], strict=True))
    ours = {
        row.architecture: separating_interval(row.achieved_ci95_low, row.achieved_ci95_high, row.n)
        for row in measured.itertuples()
        if not pd.isna(row.achieved_mean)  # no usable trial: not measured here
    }
    return ordering_verdict(theirs, ours)[0], ordering_pairs(theirs, ours)


# --------------------------------------------------------------------------- sources 002 and 003


def response_rows(
    summary: pd.DataFrame, architecture: str, response_part: str, load_generator: str = "wrk"
) -> pd.DataFrame:
    """Summary rows of an architecture whose --response contains `response_part`, pipeline 1, n >= 2, measured by
    `load_generator` (a campaign without the column ran wrk)."""
    if summary.empty or "response" not in summary:
        return pd.DataFrame()
    generator = summary["load_generator"] if "load_generator" in summary else pd.Series("wrk", index=summary.index)
    rows = summary[
        (summary["architecture"] == architecture)
        & summary["response"].fillna("").str.contains(response_part, regex=False)
        & (pd.to_numeric(summary["pipeline"], errors="coerce").fillna(1) == 1)
        & (pd.to_numeric(summary["n"], errors="coerce").fillna(0) >= 2)
        & (generator.fillna("wrk") == load_generator)
    ]
    return rows


def worker_ratio(rows: pd.DataFrame, top: int, bottom: int) -> Ratio | None:
    by_workers = {int(row["threads"]): row for _, row in rows.iterrows() if not pd.isna(row["threads"])}
    if top not in by_workers or bottom not in by_workers:
        return None
    return summary_ratio(by_workers[top], by_workers[bottom])


@dataclass(frozen=True)
class PoolRatio:
    """Source 003's ratio at one pool size (`pool_size` None: a server without a pool), and whether the load
    generator set the rate at either connection count (`client_set`: `client_set_rate` of either row), and the
    connections it never answered at each (`starved`: the mean over trials at 32 and at 64 connections; a pool that
    serves a connection per thread until it closes starves the rest, and more connections then cannot add
    throughput, so such a pool size says nothing about source 003's finding)."""

    pool_size: int | None
    ratio: Ratio
    client_set: bool
    starved: tuple[float, float] = (0.0, 0.0)

    @property
    def starving(self) -> bool:
        return any(value > 0 for value in self.starved)

    @property
    def kept(self) -> bool:
        """Whether this pool size can speak to source 003's finding: the server set the rate, every connection
        was answered."""
        return not self.client_set and not self.starving


def connection_ratios(rows: pd.DataFrame, top: int, bottom: int) -> list[PoolRatio]:
    """`top` over `bottom` connections at each pool size (threads) the rows measured at both, smallest first: one
    ratio per pool size, never one pool size's row standing in for another's."""
    if rows.empty:
        return []
    ratios = []
    for threads, group in rows.groupby(pd.to_numeric(rows["threads"], errors="coerce").fillna(-1), sort=True):
        by_connections = {int(c): group[group["connections"] == c] for c in group["connections"]}
        if top not in by_connections or bottom not in by_connections:
            continue
        high, low = by_connections[top].iloc[0], by_connections[bottom].iloc[0]
        starved = [number(row.get("starved_connections_mean")) for row in (low, high)]
        ratios.append(
            PoolRatio(
                None if threads == -1 else int(threads),
                summary_ratio(high, low),
                client_set_rate(high) or client_set_rate(low),
                (0.0 if math.isnan(starved[0]) else starved[0], 0.0 if math.isnan(starved[1]) else starved[1]),
            )
        )
    return ratios


def source_003_ratios(summary: pd.DataFrame) -> tuple[list[PoolRatio], str | None]:
    """64 over 32 connections for a threaded server, per pool size: source 003's "Hello World!" pool, else its
    thread per connection (with "hello"), else a thread per connection with any response."""
    for architecture, part in (("thread_pool", "hello"), ("thread_per_conn", "hello"), ("thread_per_conn", "")):
        ratios = connection_ratios(response_rows(summary, architecture, part), 64, 32)
        if ratios:
            return ratios, architecture
    return [], None


def source_003_verdict(published: Ratio, ratios: Sequence[PoolRatio]) -> str:
    """The effect rule at each pool size where the server set the rate and answered every connection: a pool size
    where the load generator set the rate at 32 or 64 connections (`client_set_rate`) is left out, that ratio being
    the client's, and so is one that left connections unanswered (`PoolRatio.starving`). Of the pool sizes left,
    `combined`: disagree if any disagrees, agree only if every one agrees, else inconclusive; not testable here when
    every pool size is left out, not measured without one."""
    if not ratios:
        return NOT_MEASURED
    kept = [r for r in ratios if r.kept]
    if not kept:
        return NOT_TESTABLE
    return combined([direction_verdict(published, r.ratio) for r in kept])


def source_003_published(published003: pd.DataFrame) -> Ratio:
    low = published_value(published003, "throughput_increase_min_pct")
    high = published_value(published003, "throughput_increase_max_pct")
    assert low is not None and high is not None
    # Its range over three hosts, as a ratio: the middle as the value, the range as its bounds.
    return Ratio(1 + (low + high) / 200, 1 + low / 100, 1 + high / 100)


# --------------------------------------------------------------------------- source 004: echo


def source_004_measured(echo_summary: pd.DataFrame) -> pd.DataFrame:
    """Source 004's servers in the echo study's summary, with `client_set` (`client_set_rate` over its trials with
    status ok: echo_client client-bound in half or more of them; False where the summary has no such count)."""
    if echo_summary.empty:
        return pd.DataFrame()
    rows = echo_summary[echo_summary["architecture"].isin(["thread_per_conn", "poll", "epoll"])]
    client_set = [
        client_set_rate({"n": row.get("n_ok", row.get("n")), "n_client_bound": row.get("n_client_bound")})
        for _, row in rows.iterrows()
    ]
    return rows[
        ["architecture", "connections", "bytes_received_per_sec_mean", "bytes_received_per_sec_ci95_low",
         "bytes_received_per_sec_ci95_high", "n"]
    ].assign(client_set=client_set).reset_index(drop=True)  # fmt: skip


def source_004_ceilings(published004: pd.DataFrame) -> dict[str, float]:
    """The connection ceiling source 004 published per server (its long table's "connection ceiling" rows)."""
    rows = published004[
        (published004["table"] == "connection ceiling") & (published004["quantity"] == "max_connections")
    ]
    return {str(row.our_architecture): float(row.value) for row in rows.itertuples()}


def ceiling_verdict(ceiling: float, held: float, capped: bool) -> str:
    """One server's ceiling: more held here than published contradicts it; stopped by the campaign's own cap at or
    below the published ceiling, the count says nothing about it; held fewer, uncapped, it agrees."""
    if held > ceiling:
        return DISAGREE
    return NOT_TESTABLE if capped else AGREE


def source_004_verdicts(
    published: pd.DataFrame,
    measured: pd.DataFrame,
    ceilings: Mapping[str, float],
    held: Mapping[str, float],
    capped: Mapping[str, bool] | None = None,
) -> dict[str, str]:
    """Per part: bytes per second at each client count (ordering), and the connection ceilings (`capped`: the
    servers whose count the campaign's cap stopped)."""
    verdicts: dict[str, str] = {}
    for clients, theirs in published.groupby("connections"):
        mapping, ours, client_set = source_004_ordering_inputs(theirs, measured, clients)
        verdicts[f"bytes {int(clients)}"] = ordering_verdict(mapping, ours, client_set=client_set)[0]
    parts = [
        ceiling_verdict(ceilings[name], held[name], bool((capped or {}).get(name))) for name in ceilings if name in held
    ]
    if not parts:
        verdicts["ceiling"] = NOT_MEASURED
    elif DISAGREE in parts:
        verdicts["ceiling"] = DISAGREE
    else:
        verdicts["ceiling"] = AGREE if AGREE in parts else NOT_TESTABLE
    return verdicts


def source_004_ordering_inputs(
    theirs: pd.DataFrame, measured: pd.DataFrame, clients: float
) -> tuple[dict[str, float], dict[str, tuple[float, float]], set[str]]:
    """(published bytes per second by server, our separating intervals by server, the servers whose rate the
    load generator set) at one client count."""
    ours_rows = measured[measured["connections"] == clients] if not measured.empty else measured
    ours = {
        row.architecture: separating_interval(
            row.bytes_received_per_sec_ci95_low, row.bytes_received_per_sec_ci95_high, row.n
        )
        for row in ours_rows.itertuples()
        if not pd.isna(row.bytes_received_per_sec_mean)  # no usable trial: not measured here
    }
    client_set = {
        row.architecture for row in ours_rows.itertuples() if row.architecture in ours and bool(row.client_set)
    }
    return dict(zip(theirs["our_architecture"], theirs["bytes_per_s"], strict=True)), ours, client_set


def source_004_verdict(verdicts: Mapping[str, str]) -> str:
    """The whole question (the ordering at each client count and the connection ceilings): disagree when any part
    tested here disagrees; else not testable here when a part could not be tested (no ceiling tested, or no
    ordering: none measured, or every one the load generator's rate); else the parts combined (agree or
    inconclusive)."""
    if DISAGREE in verdicts.values():
        return DISAGREE
    orderings = [v for key, v in verdicts.items() if key.startswith("bytes ") and v != NO_ORDERING]
    untested = (NOT_MEASURED, NOT_TESTABLE)
    if verdicts.get("ceiling", NOT_MEASURED) in untested or all(v in untested for v in orderings):
        return NOT_TESTABLE
    return combined(list(verdicts.values()))
