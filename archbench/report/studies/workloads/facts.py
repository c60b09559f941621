"""The workloads section's facts: the campaign, how many trials the server bounded, and what the literature
expects of each workload checked against these data (each verdict computed, never typed: confirmed, not
confirmed, or not testable here with the reason).

The expectations, with the point that tests each (archbench.report.studies.workloads.data):
- Gammo, Bruyere, Brecht et al. (OLS 2004): poll matches epoll without idle connections and falls behind as idle
  ones grow. Tested on server CPU per request, poll over epoll, at the most idle connections measured against the
  baseline: confirmed when the ratio grows to at least IDLE_GROWTH times the baseline's.
- Pai, Druschel, Zwaenepoel, Flash (USENIX 1999): a single event loop stalls on blocking calls; helpers (here a
  pool's workers) overlap them. Tested at the longest blocking wait measured: confirmed when epoll serves at most
  STALL_SLACK times one request per wait and the fastest thread pool at least OVERLAP_FACTOR times epoll.
- Pariag, Brecht et al. (EuroSys 2007) and Harji, Buhr, Brecht (SYSTOR 2012): well-tuned designs land within about
  10-18 % of each other on CPU-bound work. Tested at the most work per request measured, among the server-bound
  event-driven and pool designs: confirmed when the slowest is within CPU_BOUND_SPREAD of the fastest.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from archbench.analyze.bottleneck import SERVER, WAIT
from archbench.analyze.labels import architecture_label
from archbench.analyze.values import number
from archbench.report.common import provenance_sentence
from archbench.report.latex import MacroSet, escape, format_count, format_significant
from archbench.report.prose import Prose
from archbench.report.studies.workloads.data import WorkloadsResults, rankable

TEMPLATE = "workloads/sentences"
IDLE_GROWTH = 2.0
STALL_SLACK = 1.1
OVERLAP_FACTOR = 10.0
CPU_BOUND_SPREAD = 0.18
CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE = "confirmed", "not confirmed", "not testable here"
EVENT_AND_POOL = ("thread_pool", "poll", "epoll", "reactor", "reuseport", "prefork", "io_uring")


def _points_where(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    return frame[_numeric(frame, column) > 0]


def _row(frame: pd.DataFrame, architecture: str) -> pd.Series | None:
    rows = frame[(frame["architecture"] == architecture) & frame["mean"].notna()]
    return None if rows.empty else rows.loc[rows["mean"].idxmax()]


def _numeric(frame: pd.DataFrame, column: str) -> pd.Series:
    if column not in frame:
        return pd.Series(0.0, frame.index)
    return pd.to_numeric(frame[column], errors="coerce").fillna(0.0)


def _plain_points(frame: pd.DataFrame) -> pd.DataFrame:
    """The keep-alive points with the default body, no wait and no idle connection: the baseline and the cpu
    family's points, each the reference of the idle points measured on top of the same work."""
    plain = (_numeric(frame, "block_us") == 0) & (_numeric(frame, "idle_connections") == 0)
    if "connection_mode" in frame:
        plain &= frame["connection_mode"].fillna("keep-alive").astype(str).isin(("", "keep-alive"))
    if "response" in frame:
        plain &= frame["response"].fillna("").astype(str).isin(("", "test"))
    return frame[plain]


def _poll_over_epoll(frame: pd.DataFrame) -> float | None:
    poll, epoll = _row(frame, "poll"), _row(frame, "epoll")
    if poll is None or epoll is None:
        return None
    return number(poll["server_cpu_us_per_request"]) / number(epoll["server_cpu_us_per_request"])


def idle_facts(study: WorkloadsResults) -> dict[str, Any]:
    """Gammo et al.: poll's CPU per request over epoll's, at the most idle connections against the same work
    without idle connections. Where the idle points were measured at several amounts of work, the most work with
    both sides measured is used: it is the level sized so that the server, not the load generator, is the
    bottleneck (profile workloads), so the servers' throughput there says the same as their CPU."""
    idle = _points_where(study.map, "idle_connections")
    if idle.empty:
        return {"verdict": NOT_TESTABLE, "why": "no_idle"}
    most = _numeric(idle, "idle_connections").max()
    at_most = idle[_numeric(idle, "idle_connections") == most]
    plain = _plain_points(study.map)
    found = None
    for work in sorted(set(_numeric(at_most, "work_us")), reverse=True):
        ratios = (
            _poll_over_epoll(plain[_numeric(plain, "work_us") == work]),
            _poll_over_epoll(at_most[_numeric(at_most, "work_us") == work]),
        )
        if None not in ratios:
            found = (work, ratios)
            break
    if found is None:
        return {"verdict": NOT_TESTABLE, "why": "no_poll_epoll"}
    work, (without, with_idle) = found
    if math.isnan(without) or math.isnan(with_idle):
        return {"verdict": NOT_TESTABLE, "why": "no_cpu"}
    verdict = CONFIRMED if with_idle >= IDLE_GROWTH * without else NOT_CONFIRMED
    return {
        "verdict": verdict,
        "idle": format_count(most),
        "work_us": format_count(work),
        "without": format_significant(without, 2),
        "with": format_significant(with_idle, 2),
        "growth": format_significant(IDLE_GROWTH, 2),
    }


def blocking_facts(study: WorkloadsResults) -> dict[str, Any]:
    """Flash: epoll at the longest wait against one request per wait; the fastest pool against epoll."""
    blocking = _points_where(study.map, "block_us")
    if blocking.empty:
        return {"verdict": NOT_TESTABLE, "why": "no_block"}
    longest = pd.to_numeric(blocking["block_us"]).max()
    at = blocking[pd.to_numeric(blocking["block_us"]) == longest]
    epoll, pool = _row(at, "epoll"), _row(at, "thread_pool")
    if epoll is None or pool is None:
        return {"verdict": NOT_TESTABLE, "why": "no_epoll_pool"}
    one_per_wait = 1e6 / longest
    factor = number(pool["mean"]) / number(epoll["mean"])
    stalls = number(epoll["mean"]) <= STALL_SLACK * one_per_wait
    verdict = CONFIRMED if stalls and factor >= OVERLAP_FACTOR else NOT_CONFIRMED
    return {
        "verdict": verdict,
        "block_us": format_count(longest),
        "epoll": format_count(epoll["mean"]),
        "one_per_wait": format_count(one_per_wait),
        "pool": format_count(pool["mean"]),
        "pool_threads": format_count(pool["threads"]),
        "factor": format_significant(factor, 2),
        "overlap": format_count(OVERLAP_FACTOR),
    }


def cpu_bound_facts(study: WorkloadsResults) -> dict[str, Any]:
    """Pariag et al., Harji et al.: the spread of the server-bound designs at the most work per request."""
    work = _points_where(_plain_points(study.map), "work_us")
    if work.empty:
        return {"verdict": NOT_TESTABLE, "why": "no_work"}
    most = pd.to_numeric(work["work_us"]).max()
    at = work[(pd.to_numeric(work["work_us"]) == most) & work["architecture"].isin(EVENT_AND_POOL)]
    bound = at[at["bottleneck"] == SERVER]
    if len(bound) < 2:
        return {"verdict": NOT_TESTABLE, "why": "not_server_bound", "work_us": format_count(most)}
    fastest, slowest = bound["mean"].max(), bound["mean"].min()
    spread = 1 - slowest / fastest
    return {
        "verdict": CONFIRMED if spread <= CPU_BOUND_SPREAD else NOT_CONFIRMED,
        "work_us": format_count(most),
        "designs": format_count(len(bound)),
        "spread": format_count(100 * spread),
        "limit": format_count(100 * CPU_BOUND_SPREAD),
    }


def bound_share(study: WorkloadsResults) -> dict[str, Any]:
    """How many measured ok trials the server (or its waits) bounded: the share a ranking can rest on; and the same
    among the trials sized to load the server (per-request work or a wait), with the designs that stayed unbounded
    there (e.g. the blocking server, which serves one connection at a time and leaves its CPU idle between them)."""
    trials = study.trials
    ok = trials[(trials["status"] == "ok") & ~trials["warmup"].astype(bool)] if not trials.empty else trials
    if ok.empty:
        return {"trials": "0", "bound": "0", "percent": "0", "sized": "0"}
    is_bound = ok["bottleneck"].isin((SERVER, WAIT))
    out = {
        "trials": format_count(len(ok)),
        "bound": format_count(int(is_bound.sum())),
        "percent": format_count(100 * is_bound.sum() / len(ok)),
    }
    sized = (_numeric(ok, "work_us") > 0) | (_numeric(ok, "block_us") > 0)
    out["sized"] = format_count(int(sized.sum()))
    if sized.any():
        unbound = ok[sized & ~is_bound]
        counts = unbound["architecture"].value_counts()
        out.update(
            sized_bound=format_count(int((sized & is_bound).sum())),
            sized_percent=format_count(100 * (sized & is_bound).sum() / sized.sum()),
            sized_unbound=[
                {"label": escape(architecture_label(str(name)).split(",")[0]), "trials": format_count(int(n))}
                for name, n in counts.items()
            ],
        )
    return out


def rankable_points(study: WorkloadsResults) -> dict[str, Any]:
    names = [p for p, rows in study.map.groupby("point", sort=False) if rankable(rows)]
    total = study.map["point"].nunique()
    return {"rankable": format_count(len(names)), "points": format_count(total)}


def workloads_macros(macros: MacroSet, study: WorkloadsResults, prose: Prose, figure_present: bool) -> None:
    """Every \\abWorkloads... macro the section uses, defined for any campaign (or none)."""
    macros.add(r"\abWorkloadsHasData", "1" if study.available else "0", "1: a workloads campaign exists (\\ifnum)")
    if not study.available:
        reason = prose.sentence(TEMPLATE, "no_campaign")
        macros.add(r"\abWorkloadsCampaignSentence", reason, "why the workloads section has no measurements")
        for name in (
            r"\abWorkloadsBoundSentence",
            r"\abWorkloadsFigureSentence",
            r"\abWorkloadsIdleFinding",
            r"\abWorkloadsBlockingFinding",
            r"\abWorkloadsCpuBoundFinding",
            r"\abWorkloadsAbstractSentence",
        ):
            macros.add(name, "", "no workloads campaign")
        return
    assert study.campaign is not None
    macros.add(
        r"\abWorkloadsCampaignSentence",
        provenance_sentence(prose, [study.campaign], "section"),
        "campaign, host and dates of the workloads numbers",
    )
    macros.add(
        r"\abWorkloadsBoundSentence",
        prose.sentence(TEMPLATE, "bound", {**bound_share(study), **rankable_points(study)}),
        "how many trials the server or its waits bounded, and how many points can rank the servers",
    )
    macros.add(
        r"\abWorkloadsFigureSentence",
        prose.sentence(TEMPLATE, "figure", present=figure_present),
        "cites the decision map",
    )
    blocking, idle, cpu_bound = blocking_facts(study), idle_facts(study), cpu_bound_facts(study)
    macros.add(r"\abWorkloadsIdleFinding", prose.sentence(TEMPLATE, "idle", idle), "Gammo et al.")
    macros.add(r"\abWorkloadsBlockingFinding", prose.sentence(TEMPLATE, "blocking", blocking), "Flash")
    macros.add(r"\abWorkloadsCpuBoundFinding", prose.sentence(TEMPLATE, "cpu_bound", cpu_bound), "Pariag, Harji")
    macros.add(
        r"\abWorkloadsAbstractSentence",
        prose.sentence(TEMPLATE, "abstract", {"blocking": blocking, "idle": idle, "cpu": cpu_bound}),
        "the abstract's answer: the three expectations' numbers, where testable",
    )
