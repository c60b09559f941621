"""Open-loop trial records into the trials frame: one row per trial (warm-ups, failed and flagged trials included)
with its latencies, achieved rate, client load and the checks that decide whether its latencies are the server's.
The latency study (archbench.studies.latency) and the serving-order study (archbench.studies.serving_order) read
their trials through latency_trials. A trial's set-up (SETUP_SWEEP or SETUP_FIXED, source 001's) is read from the
data as archbench.studies.latency's docstring says.

Definitions (every one is stated in the generated text):

* client-bound trial: the load generator's CPUs were at least 95 % busy (`load.cpus_busy`, from
  /proc/stat) or its own CPU time was at least 95 % of its pinned CPUs' wall time
  (`load.cpu_utilisation`, or open_loop's own `cpu_busy_fraction`): the load generator, not the server,
  may have set the rate and the latencies. Client-bound trials are shown, marked and counted, and
  not counted for the knee.
* kept-up ratio (`kept_up_fraction`, archbench.analyze.open_loop_checks.kept_up_ratio): completed over scheduled
  requests where the client counts them (open_loop: `requests_counted`), else achieved over offered rate (wrk2,
  oha). The one ratio both marks below decide by; `achieved_fraction` stays a column, for the tables.
* sustained: the kept-up ratio within +-5 % of 1 (the run checks' tolerance): at least 95 % of the scheduled
  requests completed, since a count ratio cannot exceed 1; for the rate, within +-5 % of the offered one.
* usable trial: a measured ok trial, not flagged, not client-bound and sustained; open_loop's trials also carry the
  other checks of archbench.analyze.open_loop_checks (`checks`: its "did_not_sustain" is this `sustained`, a trend
  in the per-second rate, too few samples for a percentile).
* kept up: the kept-up ratio at least 95 % (1 - the tolerance; no upper bound): the trial did not fall behind. With
  counts it is `sustained` exactly.
* disturbed trial: other work took at least the campaign's `interference_share` of the server's or the load
  generator's CPUs during the load (archbench.measure.interference, as judged in trials.csv); a re-run of it
  (archbench.measure.reruns) is a trial of its own.
* a trial's p99 for the knee (`knee_p99_s`): its p99 when it kept up without errors, timeouts or error
  responses; +inf when it did not (the server fell behind, and its latencies describe a growing queue); empty
  (not counted) for a warm-up, failed, client-bound or disturbed trial, or one with too few samples for a p99.
  The knee itself is archbench.studies.latency.knee's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis, open_loop_checks
from archbench.analyze.analysis import number
from archbench.analyze.study_trials import (
    study_trial_ids,
    study_trial_outcome,
    study_trial_placement,
    study_trials_frame,
    total_count,
)
from archbench.analyze.trials import interference_columns
from archbench.config.params import DEFAULT_INTERFERENCE_SHARE
from archbench.config.plan import saturation_key
from archbench.data import storage
from archbench.measure.load_bound import CLIENT_BOUND_BUSY, client_bound

PERCENTILES: tuple[str, ...] = ("50", "90", "99", "99.9")
SETUP_SWEEP = "sweep"
SETUP_FIXED = "source_001"
# The kept-up ratio (open_loop_checks.kept_up_ratio: completed over scheduled requests, achieved over offered rate
# for clients without counts) below it: the server fell behind, by the run checks' tolerance. Counts, not rates,
# where the client keeps them: a one-second Poisson schedule varies its own rate by about 1 %.
KEPT_UP_FRACTION = 1 - open_loop_checks.RATE_TOLERANCE


@dataclass(frozen=True)
class TrialCriteria:
    """What decides a trial's marks: when its load generator was busy enough to be client-bound, and what share of
    its scheduled requests it must complete to have kept up. The knee's Criteria (archbench.studies.latency.knee)
    adds the knee's own rule to these; every value appears in the text."""

    kept_up_fraction: float = KEPT_UP_FRACTION
    client_bound_busy: float = CLIENT_BOUND_BUSY


def _own_key(config: Mapping[str, Any]) -> str:
    try:
        return saturation_key(config)
    except (KeyError, ValueError, TypeError):
        return str(config.get("architecture"))


def latency_trial_row(record: Mapping[str, Any], campaign: storage.Campaign, criteria: TrialCriteria) -> dict[str, Any]:
    config = dict(record.get("config") or {})
    load = dict(record.get("load") or {})
    server = dict(record.get("server") or {})
    tool = load.get("tool") or config.get("load_generator")
    parsed, outcome = study_trial_outcome(record, campaign.path, tool)
    parameters = campaign.meta.get("parameters") or {}
    own = _own_key(config)
    saturation_of = config.get("saturation_of") or own
    fixed = bool(parameters.get("rate_reference")) or saturation_of != own
    campaign_name = record.get("campaign") or campaign.meta.get("campaign")
    row = study_trial_ids(record, campaign_name, setup=SETUP_FIXED if fixed else SETUP_SWEEP, server_key=own)
    offered = number(config.get("offered_rate"))
    row.update(
        offered_rate=offered,
        rate_fraction=number(config.get("rate_fraction")),
        saturation_rate=number(config.get("saturation_rate")),
        saturation_of=saturation_of,
        saturation_source=config.get("saturation_source"),
        tool=tool,
        work_us=number(config.get("work_us")),
        arrival=config.get("arrival") or ("fixed" if tool == "open_loop" else None),
    )
    row.update(outcome)
    p = parsed or {}
    latency = p.get("latency_s") or {}
    percentiles = latency.get("percentiles") or {}
    socket_errors = p.get("socket_errors") or {}
    achieved = number(p.get("requests_per_sec"))
    row.update(
        achieved_rate=achieved,
        achieved_fraction=stats.ratio(achieved, offered),
        total_requests=number(p.get("total_requests")),
        measured_duration_s=number(p.get("duration_s")),
        latency_max_s=number(latency.get("max")),
        latency_avg_s=number(latency.get("avg")),
        timeouts=number(socket_errors.get("timeout")),
        socket_errors=total_count(socket_errors) if socket_errors else math.nan,
        non_2xx=number(p.get("non_2xx")),
    )
    for q in PERCENTILES:
        row[f"latency_p{q.replace('.', '_')}_s"] = number(percentiles.get(q))
    utilisation = analysis.load_cpu_utilisation(load)
    busy = number(load.get("cpus_busy"))
    own_busy = number(p.get("cpu_busy_fraction"))
    row.update(
        load_cpu_utilisation=utilisation,
        load_cpus_busy=busy,
        client_cpu_busy=own_busy,
        client_cpu_per_request_s=number(p.get("cpu_per_request_s")),
        send_lag_p99_s=number((p.get("send_lag_ns") or {}).get("p99")) / 1e9,
        # Whole life without a warm-up on it (analysis.server_cpu_seconds), over the window's responses.
        server_cpu_per_request_s=stats.ratio(analysis.server_cpu_seconds(server)[0], number(p.get("total_requests"))),
        server_cpus_busy=number(server.get("cpus_busy")),
        client_bound=client_bound(load, own_busy, criteria.client_bound_busy),
        **study_trial_placement(record),
    )
    eligible = row["status"] == "ok" and not row["warmup"] and not row["client_bound"]
    row["eligible"] = eligible
    share = (campaign.meta.get("parameters") or {}).get("interference_share", DEFAULT_INTERFERENCE_SHARE)
    row.update(interference_columns(record, float(share)))
    # One ratio decides both usability (`sustained`) and the knee's `kept_up` (open_loop_checks.kept_up_ratio).
    tolerance = 1.0 - criteria.kept_up_fraction
    row["requests_counted"] = open_loop_checks.counted(p)
    row["kept_up_fraction"] = open_loop_checks.kept_up_ratio(p, offered)
    row["sustained"] = open_loop_checks.ratio_sustained(row["kept_up_fraction"], tolerance)
    row["kept_up"] = open_loop_checks.kept_up(row["kept_up_fraction"], tolerance)
    row["checks"] = _checks(p, row["sustained"], row["client_bound"], tolerance)
    row["usable"] = bool(eligible and not row["flagged"] and row["sustained"])
    row["knee_p99_s"] = _knee_p99(row)
    return row


def _knee_p99(row: Mapping[str, Any]) -> float:
    """The trial's p99 as the knee counts it: NaN when it does not count, +inf when the server fell behind."""
    p99 = row["latency_p99_s"]
    few_samples = "few_samples_p99" in str(row["checks"]).split(";")
    if not row["eligible"] or row["disturbed"] or math.isnan(p99) or few_samples:
        return math.nan
    return math.inf if row["flagged"] or not row["kept_up"] else p99


def _checks(parsed: Mapping[str, Any], sustained: bool, client_bound: bool, tolerance: float) -> str:
    """The failed checks of a trial, `;`-separated: the row's own rate and client verdicts (`sustained`,
    `client_bound`: the rules the row's `usable` applies), then open_loop_checks.assess's other checks for open_loop
    output (the per-second trend, samples per percentile)."""
    own = ["did_not_sustain"] * (not sustained) + ["client_bound"] * client_bound
    if parsed.get("tool") == "open_loop" and parsed.get("per_second") and parsed.get("latency_ns"):
        decided_here = ("did_not_sustain", "client_bound")
        own += [flag for flag in open_loop_checks.assess(parsed, tolerance)["flags"] if flag not in decided_here]
    return ";".join(own)


def requests_counted_throughout(trials: pd.DataFrame) -> bool:
    """Whether the client counted the scheduled and completed requests of every measured ok trial (open_loop does;
    wrk2 and oha do not): the text then states the usability rule by the counts alone, without the rate fallback."""
    if trials.empty or "requests_counted" not in trials:
        return False
    measured = trials[~trials["warmup"].astype(bool) & (trials["status"] == "ok")]
    return bool(measured["requests_counted"].astype(bool).all())


def latency_trials(campaigns: Sequence[storage.Campaign], criteria: TrialCriteria) -> pd.DataFrame:
    """One row per open-loop HTTP trial record of the campaigns (latency_trial_row; closed-loop and echo trials are
    left out), with `server` naming the variant, and its connections when the sweep has several."""
    rows = []
    for campaign in campaigns:
        for record in campaign.trials:
            config = record.get("config") or {}
            if config.get("offered_rate") is None or config.get("proto", "http") != "http":
                continue  # closed-loop (saturation) and echo trials are not this section's
            rows.append(latency_trial_row(record, campaign, criteria))
    ids = ["campaign", "trial_id", "config_id", "setup", "server_key"]
    frame = study_trials_frame(
        rows, [*ids, *analysis.CONFIG_FIELDS, "offered_rate", "warmup", "status", "flagged", "client_bound"]
    )
    if frame.empty:
        return frame
    several = frame[frame["setup"] == SETUP_SWEEP]["connections"].nunique() > 1
    frame.insert(
        5,
        "server",
        [
            f"{v}, {int(c):,} conn." if several and s == SETUP_SWEEP else v
            for v, c, s in zip(frame["variant"], frame["connections"], frame["setup"], strict=True)
        ],
    )
    return frame
