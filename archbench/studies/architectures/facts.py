"""The facts of the architecture comparison's sentences: the fastest server where the server set the rate and the
reference floor (archbench.studies.architectures.fastest), nginx (each server counted faster, slower or not
separated by its planned comparison against nginx, the verdict of the planned comparisons' table), response lengths,
the sources' designs.

This module computes facts (numbers already formatted, names escaped, choices of phrasing); the section template
(paper/templates/architectures/section.tex.j2) renders them with the macros of sentences.tex.j2. The response
lengths stay macros of macros.tex (\\abOurResponseBytes, ...); the abstract renders its sentence on the fastest
servers from `fastest_summary`, as `studies.architectures.fastest_summary`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import (
    REFERENCE_ARCHITECTURE,
    Comparison,
    Labeller,
    key_text,
)
from archbench.analyze.outliers import is_true
from archbench.analyze.planned_comparisons import VERDICT_NOT_SIGNIFICANT, VERDICT_SIGNIFICANT
from archbench.render.common import configuration_describer, depth_of, distinct_values, rows_with_any
from archbench.render.formats import detectable_number, format_cpu_per_request
from archbench.render.latex import (
    MISSING,
    MacroSet,
    escape,
    format_compact,
    format_count,
    format_decimal,
    format_list,
    interval_of,
    is_missing,
)
from archbench.render.prose import Prose
from archbench.stats import MIN_ROUNDS
from archbench.studies.architectures.fastest import fastest_by_depth, fastest_summary

# What the planned comparison against nginx (archbench.analyze.planned_comparisons, family "nginx", Holm within it)
# decided for one of our servers: faster or slower (significant and ordered), significant but the load generator set
# the lower rate, not significant, not run, or no such comparison.
FASTER, SLOWER, CLIENT_SET, UNDECIDED, NOT_RUN, UNPLANNED = (
    "faster",
    "slower",
    "client set",
    "undecided",
    "not run",
    "unplanned",
)


def _planned_pair(row: pd.Series, reference: pd.Series, planned: pd.DataFrame | None) -> pd.Series | None:
    """The planned comparison of `row` against nginx `reference` (`planned`: the rows of comparisons.csv's family
    "nginx"), None when none was planned."""
    if planned is None or planned.empty:
        return None
    pair = planned[
        (planned["config_a"] == str(row["config_id"])) & (planned["config_b"] == str(reference["config_id"]))
    ]
    return None if pair.empty else pair.iloc[0]


def nginx_verdict(row: pd.Series, reference: pd.Series, planned: pd.DataFrame | None) -> str:
    """The planned comparison's verdict on `row` against nginx; the table of the planned comparisons shows the same
    verdict."""
    pair = _planned_pair(row, reference, planned)
    if pair is None:
        return UNPLANNED
    if pair["verdict"] == VERDICT_SIGNIFICANT:
        if not is_true(pair.get("ordered")):
            return CLIENT_SET
        return FASTER if float(pair["ratio"]) > 1 else SLOWER
    return UNDECIDED if pair["verdict"] == VERDICT_NOT_SIGNIFICANT else NOT_RUN


def _nginx_facts(one: Comparison, labels: Labeller, planned: pd.DataFrame | None = None) -> dict[str, Any]:
    """Our architectures against nginx at one depth, each counted by its planned comparison's verdict (`planned`: the
    family "nginx" of the planned comparisons); for those it does not separate from nginx, that same test's minimum
    detectable difference (the planned comparisons' MDD column), so that "not distinguishable" comes with the size of
    difference the test that said so could have called."""
    reference = one.reference
    facts: dict[str, Any] = {
        "pipeline": str(one.pipeline),
        "connections": format_count(one.connections),
        "reference": None,
    }
    if reference is None or is_missing(reference.get("mean")):
        return facts
    ours = one.correct_rows[pd.to_numeric(one.correct_rows["mean"], errors="coerce").notna()]
    facts.update(reference=escape(labels.variant(reference)), mean=format_count(reference["mean"]), low=None)
    if ours.empty:
        return facts
    ratios = pd.to_numeric(ours["ratio_to_nginx"], errors="coerce")
    low, high = ours.loc[ratios.idxmin()], ours.loc[ratios.idxmax()]
    verdicts = pd.Series([nginx_verdict(row, reference, planned) for _, row in ours.iterrows()], index=ours.index)
    # "Not distinguishable" says nothing without the size of difference the planned test could have called.
    undecided = ours.loc[verdicts == UNDECIDED]
    mdd = pd.Series(
        [
            pd.to_numeric(_planned_pair(row, reference, planned)["mdd_pct"], errors="coerce")
            for _, row in undecided.iterrows()
        ],
        dtype=float,
    )
    detectable = mdd.dropna()
    facts.update(
        low=escape(labels.variant(low)),
        low_ratio=format_decimal(low["ratio_to_nginx"], 2),
        high=escape(labels.variant(high)),
        high_ratio=format_decimal(high["ratio_to_nginx"], 2),
        faster=format_count(int((verdicts == FASTER).sum())),
        slower=format_count(int((verdicts == SLOWER).sum())),
        client_set=int((verdicts == CLIENT_SET).sum()),
        undecided=int((verdicts == UNDECIDED).sum()),
        not_run=int((verdicts == NOT_RUN).sum()),
        unplanned=int((verdicts == UNPLANNED).sum()),
        min_rounds=str(MIN_ROUNDS),
        ours=format_count(len(ours)),
        detectable_median=detectable_number(detectable.median()) if len(detectable) else None,
        detectable_low=detectable_number(detectable.min()) if len(detectable) else None,
        detectable_high=detectable_number(detectable.max()) if len(detectable) else None,
        detectable_one=len(detectable) == 1,
        not_computable=int(mdd.isna().sum()),
    )
    return facts


def response_bytes_findings(macros: MacroSet, summary: pd.DataFrame) -> dict[str, Any]:
    """Our response length (computed), nginx's (measured) and the difference as macros; the facts of the sentence
    comparing them, with wrk's per-response bytes."""
    nginx = summary[summary["architecture"] == REFERENCE_ARCHITECTURE] if not summary.empty else summary
    response = key_text(nginx["response"].iloc[0]) if not nginx.empty and "response" in nginx else "test"
    response = response or "test"
    ours = analysis.our_response_bytes(response)
    macros.add(
        r"\abOurResponseBytes", format_count(ours), f"length of our {response} response, computed from its format"
    )
    measured = distinct_values(nginx, "response_bytes")
    macros.add(
        r"\abNginxResponseBytes",
        format_list(measured) if measured else MISSING,
        "length of nginx's response as its trial records measure it",
    )
    difference = (max(measured) - ours) if measured and ours is not None else None
    macros.add(
        r"\abResponseByteDifference",
        format_count(difference),
        "nginx's response minus ours, bytes (largest if several)",
    )
    facts: dict[str, Any] = {
        "response": escape(response),
        "ours": None if ours is None else format_count(ours),
        "lengths": format_list(measured) if measured else None,
        "nginx_read": None,
    }
    if ours is not None and measured:
        facts.update(difference=format_count(difference), share=format_decimal(difference / ours * 100.0, 0))
        if "bytes_per_response_mean" in summary:
            theirs_read = analysis.stats.sample_mean(nginx["bytes_per_response_mean"])
            ours_rows = summary[
                (summary["architecture"] != REFERENCE_ARCHITECTURE)
                & (summary["response"].map(key_text).isin([response, ""]) if "response" in summary else True)
            ]
            ours_read = analysis.stats.sample_mean(ours_rows["bytes_per_response_mean"])
            if not (math.isnan(theirs_read) or math.isnan(ours_read)):
                # wrk prints its byte count rounded to two decimals of KB/MB; 1 % is well above that rounding.
                agree = (
                    abs(theirs_read - max(measured)) <= 0.01 * max(measured) and abs(ours_read - ours) <= 0.01 * ours
                )
                facts.update(
                    nginx_read=format_decimal(theirs_read, 1), ours_read=format_decimal(ours_read, 1), agree=agree
                )
    return facts


def poll_epoll_finding(summary: pd.DataFrame) -> dict[str, Any]:
    """Source 004's comparison: poll against epoll at equal depth and point."""
    if summary.empty:
        return {"kind": "empty"}
    measured = summary[pd.to_numeric(summary["mean"], errors="coerce").notna()]
    poll = measured[measured["architecture"] == "poll"]
    epoll = measured[measured["architecture"] == "epoll"]
    if poll.empty or epoll.empty:
        return {"kind": "not_both"}
    keys = [f for f in ("pipeline", *analysis.POINT_FIELDS) if f in summary]
    labels = Labeller(summary)
    points = []
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
            ratios.append({"ratio": format_decimal(p["mean"] / e["mean"], 2), "epoll": escape(labels.variant(e))})
        points.append({"depth": depth_of(p), "connections": format_count(p["connections"]), "ratios": ratios})
    return {"kind": "pairs", "points": points, "overlapping": format_count(overlapping), "pairs": format_count(pairs)}


def source_one_finding(comparisons: list[Comparison]) -> dict[str, Any]:
    """Source 001's four designs (blocking, thread per connection, epoll, reactor) at the shallowest depth."""
    wanted = ("blocking", "thread_per_conn", "epoll", "reactor")
    for one in comparisons:
        rows = one.rows[one.rows["architecture"].isin(wanted)]
        if rows.empty:
            continue
        labels = Labeller(one.all_rows)
        designs = []
        for _, row in rows.iterrows():
            starved = row.get("starved_connections_mean")
            designs.append(
                {
                    "name": escape(labels.variant(row)),
                    "mean": format_count(row["mean"]),
                    "starved": None if is_missing(starved) else format_compact(starved),
                    "timeouts": format_compact(row.get("timeouts_mean")),
                }
            )
        return {"pipeline": str(one.pipeline), "connections": format_count(one.connections), "designs": designs}
    return {"designs": None}


def architecture_cpu_finding(comparisons: list[Comparison]) -> dict[str, Any]:
    depths = []
    for one in comparisons:
        # Correct servers only: pong's cost, the floor, is stated beside the fastest server (fastest.py).
        rows = one.correct_rows.dropna(subset=["server_cpu_us_per_request"])
        if rows.empty or len(one.all_rows) < 2:
            continue
        labels = Labeller(one.all_rows)
        values = pd.to_numeric(rows["server_cpu_us_per_request"])
        cheapest, dearest = rows.loc[values.idxmin()], rows.loc[values.idxmax()]
        with_nginx = one.reference is not None and not is_missing(one.reference.get("server_cpu_us_per_request"))
        depths.append(
            {
                "pipeline": str(one.pipeline),
                "cheapest": format_cpu_per_request(cheapest["server_cpu_us_per_request"]),
                "cheapest_name": escape(labels.variant(cheapest)),
                "dearest": format_cpu_per_request(dearest["server_cpu_us_per_request"]),
                "dearest_name": escape(labels.variant(dearest)),
                "nginx": format_cpu_per_request(one.reference["server_cpu_us_per_request"]) if with_nginx else None,
            }
        )
    return {"depths": depths}


def architecture_findings(
    macros: MacroSet,
    summary: pd.DataFrame,
    prose: Prose,
    nginx_comparisons: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The facts of the section's sentences: the fastest server per depth (where the server set the rate) and the
    reference floor, nginx (`nginx_comparisons`: the planned comparisons with nginx, whose verdicts count the
    servers faster and slower than nginx and whose minimum detectable differences go with those not separated), the response lengths, the sources' designs and CPU per request. Into `macros`: the
    response lengths."""
    comparisons = analysis.comparisons(summary)
    labels = Labeller(summary)
    has_nginx = not summary.empty and (summary["architecture"] == REFERENCE_ARCHITECTURE).any()
    return {
        "fastest": fastest_by_depth(comparisons, labels),
        "fastest_summary": fastest_summary(comparisons, labels),
        "nginx": {
            "comparisons": [_nginx_facts(one, labels, nginx_comparisons) for one in comparisons] if has_nginx else []
        },
        "response_bytes": response_bytes_findings(macros, summary),
        "unsupported": unsupported_finding(summary, prose),
        "poll_epoll": poll_epoll_finding(summary),
        "source_one": source_one_finding(comparisons),
        "architecture_cpu": architecture_cpu_finding(comparisons),
    }


def unsupported_finding(summary: pd.DataFrame, prose: Prose) -> dict[str, Any]:
    if summary.empty or "n_unsupported" not in summary:
        return {"names": []}
    rows = rows_with_any(summary, "n_unsupported")
    describe = configuration_describer(summary, prose)
    return {
        "trials": format_count(rows["n_unsupported"].sum()),
        "configurations": format_count(len(rows)),
        "one_configuration": len(rows) == 1,
        "names": [
            {
                "configuration": describe(r),
                "unsupported": format_count(r["n_unsupported"]),
                "measured": format_count(r["n_measured"]),
            }
            for _, r in rows.iterrows()
        ],
    }
