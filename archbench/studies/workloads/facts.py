"""The workloads section's facts: the campaign, how many trials the server bounded, and what the literature
expects of each workload checked against these data (each verdict computed, never typed: confirmed, not
confirmed, or not testable here with the reason), and what to pick per workload point (`pick_facts`: the section
fact `picks`, which the findings study reads from this study's section facts, never by importing it).

The expectations, with the point that tests each (archbench.studies.workloads.data):
- Gammo, Bruyere, Brecht et al. (OLS 2004): poll matches epoll without idle connections and falls behind as idle
  ones grow. Tested on server CPU per request, poll over epoll, at the most idle connections measured against the
  baseline: confirmed when the ratio grows to at least IDLE_GROWTH times the baseline's.
  The selection must agree: poll shown slower than the best at that idle point (else "not confirmed"). Only the
  second part is tested: the ratio without idle connections is a point estimate, no test that poll matches epoll.
- Pai, Druschel, Zwaenepoel, Flash (USENIX 1999): a single event loop stalls on blocking calls; helpers (here a
  pool's workers) overlap them. Tested at the longest blocking wait measured: confirmed when epoll serves at most
  STALL_SLACK times one request per wait, the fastest thread pool at least OVERLAP_FACTOR times epoll, and the
  selection shows epoll slower than the best.
- Pariag, Brecht et al. (EuroSys 2007) and Harji, Buhr, Brecht (SYSTOR 2012): well-tuned designs land within about
  10-18 % of each other on CPU-bound work. Tested at the most work per request measured, among the server-bound
  event-driven and pool designs, on the selection's simultaneous intervals against the best: confirmed when every
  such design is shown within CPU_BOUND_SPREAD of the best, contradicted when one is shown further below, else
  inconclusive.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench.analyze.bottleneck import SERVER, WAIT
from archbench.analyze.labels import architecture_label
from archbench.analyze.values import number
from archbench.render.common import measured_ok_including_disturbed, provenance_facts
from archbench.render.latex import MacroSet, escape, format_count, format_significant
from archbench.studies.workloads.data import WorkloadsResults, points, rankable
from archbench.studies.workloads.tables import point_outcome, selection_method_facts

IDLE_GROWTH = 2.0
STALL_SLACK = 1.1
OVERLAP_FACTOR = 10.0
CPU_BOUND_SPREAD = 0.18
CONFIRMED, NOT_CONFIRMED, NOT_TESTABLE = "confirmed", "not confirmed", "not testable here"
CONTRADICTED, INCONCLUSIVE = "contradicted", "inconclusive"
EVENT_AND_POOL = ("thread_pool", "poll", "epoll", "reactor", "reuseport", "prefork", "io_uring")
SINGLE_LOOPS = ("poll", "epoll", "reactor", "reuseport", "prefork", "io_uring")  # one thread, loop or worker each


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
    point = at_most[_numeric(at_most, "work_us") == work]
    poll, epoll = _row(point, "poll"), _row(point, "epoll")
    poll_slower = poll is not None and poll["ranked_verdict"] == "slower"
    epoll_pick = epoll is not None and epoll["ranked_verdict"] == "within"
    verdict = CONFIRMED if with_idle >= IDLE_GROWTH * without and poll_slower else NOT_CONFIRMED
    return {
        "verdict": verdict,
        "poll_slower": poll_slower,
        "epoll_pick": epoll_pick,
        "poll_ratio": format_significant(poll["ratio"], 2) if poll is not None else "",
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
    epoll_slower = epoll["ranked_verdict"] == "slower"
    verdict = CONFIRMED if stalls and factor >= OVERLAP_FACTOR and epoll_slower else NOT_CONFIRMED
    loops = at[at["architecture"].isin(SINGLE_LOOPS)]
    return {
        "verdict": verdict,
        "epoll_slower": epoll_slower,
        "loops_slower": bool(len(loops)) and bool((loops["ranked_verdict"] == "slower").all()),
        "pool_pick": pool["ranked_verdict"] == "within",
        "block_us": format_count(longest),
        "epoll": format_count(epoll["mean"]),
        "one_per_wait": format_count(one_per_wait),
        "pool": format_count(pool["mean"]),
        "pool_threads": format_count(pool["threads"]),
        "factor": format_significant(factor, 2),
        "overlap": format_count(OVERLAP_FACTOR),
    }


def cpu_bound_facts(study: WorkloadsResults) -> dict[str, Any]:
    """Pariag et al., Harji et al.: at the most work per request, are the server-bound event-driven and pool designs
    within CPU_BOUND_SPREAD of the best? Decided on the selection's simultaneous intervals (module docstring)."""
    work = _points_where(_plain_points(study.map), "work_us")
    if work.empty:
        return {"verdict": NOT_TESTABLE, "why": "no_work"}
    most = pd.to_numeric(work["work_us"]).max()
    at = work[(pd.to_numeric(work["work_us"]) == most) & work["architecture"].isin(EVENT_AND_POOL)]
    bound = at[(at["bottleneck"] == SERVER) & at["low"].notna()]
    if len(bound) < 2:
        return {"verdict": NOT_TESTABLE, "why": "not_server_bound", "work_us": format_count(most)}
    floor = 1.0 - CPU_BOUND_SPREAD
    if (bound["low"] > floor).all():
        verdict = CONFIRMED
    elif (bound["high"] < floor).any():
        verdict = CONTRADICTED
    else:
        verdict = INCONCLUSIVE
    return {
        "verdict": verdict,
        "work_us": format_count(most),
        "designs": format_count(len(bound)),
        "lowest": format_significant(bound["low"].min(), 2),
        "spread": format_count(100 * (1 - bound["ratio"].min())),
        "limit": format_count(100 * CPU_BOUND_SPREAD),
        "beyond": [escape(v) for v in bound.loc[bound["high"] < floor, "variant"]],
    }


def bound_share(study: WorkloadsResults) -> dict[str, Any]:
    """How many measured ok trials the server (or its waits) bounded: the share a ranking can rest on; and the same
    among the trials sized to load the server (per-request work or a wait), with the designs that stayed unbounded
    there (e.g. the blocking server, which serves one connection at a time and leaves its CPU idle between them)."""
    ok = measured_ok_including_disturbed(study.trials) if not study.trials.empty else study.trials
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


def selection_facts(study: WorkloadsResults) -> dict[str, Any]:
    """What the selection decided over the points that can rank the designs here: how many it resolved, the open
    ones with the rounds they would need, and the rounds the points took (the first look's and the most)."""
    outcomes = [(point, point_outcome(study.map[study.map["point"] == point])) for point in points(study.map)]
    ranked = [(point, o) for point, o in outcomes if o["state"] not in ("none", "not rankable")]
    resolved = [point for point, o in ranked if o["state"] == "resolved"]
    still_open = [
        {"point": escape(point), "designs": format_count(len(o["open"])), "needed": o["needed"]}
        for point, o in ranked
        if o["state"] != "resolved"
    ]
    rounds = pd.to_numeric(study.map["point_rounds"], errors="coerce").dropna()
    return {
        **selection_method_facts(study),
        "rankable": format_count(len(ranked)),
        "resolved": format_count(len(resolved)),
        "all_resolved": bool(ranked) and len(resolved) == len(ranked),
        "open": still_open,
        "fewest_rounds": format_count(rounds.min()) if not rounds.empty else "0",
        "most_rounds": format_count(rounds.max()) if not rounds.empty else "0",
    }


def literature_checks(study: WorkloadsResults) -> dict[str, Any]:
    """The literature's expectations checked against the data: idle connections, blocking calls, CPU-bound work."""
    return {"idle": idle_facts(study), "blocking": blocking_facts(study), "cpu_bound": cpu_bound_facts(study)}


def pick_facts(study: WorkloadsResults | None, checks: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Per workload point the study's decision (archbench.studies.workloads.tables.point_outcome): the designs shown
    within delta of the best, those still open and the rounds they would need; and the points that cannot rank the
    servers here, grouped by what bounded their fastest design. The findings render what to pick from it (the
    section fact `picks`, which they read through the study context)."""
    if study is None or not study.available or study.map.empty:
        return {"available": False}
    frame = study.map
    ranked: list[dict[str, Any]] = []
    unranked: dict[str, list[str]] = {}
    for point in points(frame):
        outcome = point_outcome(frame[frame["point"] == point])
        if outcome["state"] in ("none", "not rankable"):
            unranked.setdefault(outcome.get("bottleneck", "none"), []).append(escape(point))
            continue
        ranked.append({"point": escape(point), **outcome})
    return {
        "available": True,
        "points": format_count(len(ranked) + sum(len(p) for p in unranked.values())),
        "ranked": ranked,
        "unranked": [{"reason": reason, "points": names} for reason, names in unranked.items()],
        "delta": format_count(100 * study.settings.delta) if study.settings else "",
        **(checks or literature_checks(study)),
    }


def workloads_sentences(study: WorkloadsResults, figure_present: bool) -> dict[str, Any]:
    """The facts the section template renders its sentences from (paper/templates/workloads/section.tex.j2), and the
    abstract its sentence (`abstract` of sentences.tex.j2, as `studies.workloads`); without a campaign only
    `campaign` (None) says anything: the rest stands inside the section's \\ifnum, and the abstract's is empty.
    `picks` (`pick_facts`, with or without a campaign) is what the findings render what to pick from."""
    if not study.available:
        return dict.fromkeys(("campaign", "bound", "selection", "idle", "blocking", "cpu_bound")) | {
            "figure": False,
            "picks": pick_facts(study),
        }
    assert study.campaign is not None
    checks = literature_checks(study)
    return {
        "campaign": {"section": "section", "campaigns": [provenance_facts(study.campaign)]},
        "bound": {**bound_share(study), **rankable_points(study)},
        "figure": figure_present,
        "selection": selection_facts(study),
        **checks,
        "picks": pick_facts(study, checks),
    }


def workloads_macros(macros: MacroSet, study: WorkloadsResults) -> None:
    """\\abWorkloadsHasData, which the section tests, defined for any campaign (or none)."""
    macros.add(r"\abWorkloadsHasData", "1" if study.available else "0", "1: a workloads campaign exists (\\ifnum)")
