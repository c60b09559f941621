"""Adaptive repetition: more trials for a configuration until its mean throughput is known well enough.

With the campaign parameter `ci_target` (percent), once the planned trials are
done the runner keeps adding measured trials to every configuration whose 95%
Student-t confidence interval of the mean throughput (`archbench.stats.mean_ci_t`)
has a half-width above `ci_target` % of the mean, until it is within the target
or the configuration has `max_trials` measured trials (failed ones included, so
a configuration that keeps failing stops too).

Throughput is the parsed load output's `requests_per_sec` (wrk, oha, wrk2: the
achieved rate) or `echoes_per_sec` (echo_client). Only ok, unflagged trials count
towards the interval (a flagged trial is never averaged silently); `--max-conns`
configurations measure no throughput and are left out.

Order and ids. The extra trials are run in rounds: each round gives one more
trial to every configuration still short of the target that has the fewest
trials (an interrupted round is completed first), in an order shuffled
with a `random.Random` seeded from the campaign's seed and the round, so drift
of the machine spreads over configurations as in the planned rounds. An extra
trial continues its configuration's repetition numbering (`-r06` after `-r05`)
and the campaign's `order_index`, and its record says `"adaptive": true`.

Resume. Everything is derived from the trial records on disk, so re-running an
interrupted campaign recomputes which configurations are short and continues
the numbering: nothing is run twice.

What met the target. At the end of the adaptive phase the outcome per
configuration is written once to `adaptive/adaptive-<UTC>.json` in the campaign
directory (a subdirectory, so it is never taken for a trial record), unless the
latest such file already says the same. It can equally be derived downstream
from the trial records and `ci_target`/`max_trials` in campaign.json with
`config_states` and `summary`.

Criteria (campaign parameter `adaptive_criterion`). "mean" is the above, per configuration. "paired" and
"paired_median" stop on the quantity the report compares (archbench.analyze.paired): each configuration's
ratio to its reference measured in the same round (the reference floor "pong" where measured at the
configuration's pipeline depth and load point, else nginx), a Student-t interval of the log ratios over
rounds (archbench.stats.paired), on server CPU per request when the pair is client-bound (the load
generator set the rate in at least half of the paired rounds) and on throughput otherwise. "paired" stops
when every such pair's half-width is within `ci_target` % of its ratio, "paired_median" when their median
is. More rounds are whole rounds: every configuration once, repetition k for all, shuffled with a
`random.Random` seeded from the campaign seed and k, so pairing stays intact; an interrupted round is
completed first. Besides `max_trials` (measured trials per configuration, i.e. rounds) the phase keeps to
`adaptive_budget_s`, if set: no round starts whose expected duration (each trial's duration plus the
fixed overhead) would take the adaptive trials' wall time on disk (started_at to finished_at) beyond it.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from archbench.config.params import DEFAULT_INTERFERENCE_SHARE, Parameters
from archbench.config.plan import PlannedTrial, TrialConfig, repetition_id, repetition_width, warmup_duration_s
from archbench.config.profiles import TRIAL_OVERHEAD_S
from archbench.data.storage import load_campaign, write_new_json
from archbench.measure.interference import campaign_share, judged_disturbed
from archbench.measure.load_bound import client_bound
from archbench.measure.reruns import RERUN_KEY
from archbench.measure.warmup import without_warmup
from archbench.parse import LoadOutputError, parse_output
from archbench.parse.combine import combine_outputs
from archbench.stats import DEFAULT_CONFIDENCE, mean_ci_t
from archbench.stats.paired import paired_log_ratio

SUMMARY_DIR = "adaptive"
SUMMARY_SCHEMA = 1
MEAN_CRITERION = "mean"
PAIRED_CRITERION = "paired"  # every compared pair within the target
PAIRED_MEDIAN_CRITERION = "paired_median"  # the median over the compared pairs within the target
# The pairing the report uses (archbench.analyze.paired imports these, so the two cannot drift apart).
REFERENCE_PREFERENCE: tuple[str, ...] = ("pong", "nginx")  # the reference floor where measured, else nginx
CLIENT_BOUND_SHARE = 0.5  # a pair is client-bound when this share of its paired rounds was, on either side
THROUGHPUT = "requests_per_sec"
CPU_PER_REQUEST = "server_cpu_us_per_request"


@dataclass(frozen=True)
class ConfigState:
    """One configuration's measured trials so far."""

    config_id: str
    trials: int  # measured (non-warm-up) trials of any status
    values: tuple[float, ...]  # throughputs of the ok, unflagged ones
    last_repetition: int

    @property
    def mean(self) -> float | None:
        return sum(self.values) / len(self.values) if self.values else None

    def half_width_pct(self, level: float = DEFAULT_CONFIDENCE) -> float | None:
        """CI half-width as a percentage of the mean; None while undefined (fewer than 2 values, mean 0)."""
        interval = mean_ci_t(self.values, level)
        mean = self.mean
        if not interval.is_defined or not mean:
            return None
        return 100.0 * interval.half_width / abs(mean)

    def met(self, ci_target: float) -> bool:
        half_width = self.half_width_pct()
        return half_width is not None and half_width <= ci_target


def _parsed_output(record: Mapping[str, Any], campaign_dir: Path) -> tuple[dict[str, Any] | None, list[str]]:
    """(parsed load output, []) of an ok trial; (None, []) without output, (None, ["unparsed"]) if unreadable."""
    load = record.get("load") or {}
    outputs = [host["output_file"] for host in load.get("hosts") or []] or [load.get("output_file")]
    if record.get("status") != "ok" or not all(outputs):
        return None, []
    try:
        texts = [(Path(campaign_dir) / name).read_text(encoding="utf-8") for name in outputs]
        # Placement ssh: one output per client host, whose counts add up (archbench.parse.combine).
        each = [parse_output(load["tool"], text) for text in texts]
        return (each[0] if len(each) == 1 else combine_outputs(each)), []
    except (OSError, LoadOutputError, ValueError):
        return None, ["unparsed"]


def trial_throughput(record: Mapping[str, Any], campaign_dir: Path) -> tuple[float | None, list[str]]:
    """(throughput, flags) of a stored trial; (None, []) if it has no usable load output."""
    parsed, problems = _parsed_output(record, campaign_dir)
    if parsed is None:
        return None, problems
    rate = parsed.get("requests_per_sec")
    if rate is None:
        rate = parsed.get("echoes_per_sec")
    return (None if rate is None else float(rate)), list(parsed.get("flags") or [])


def measures_throughput(config: TrialConfig) -> bool:
    return config.echo is None or config.echo.mode != "max_conns"


def config_states(campaign_dir: Path, configs: Iterable[TrialConfig]) -> dict[str, ConfigState]:
    """The measured trials on disk of each of `configs` (the ones that measure a throughput)."""
    wanted = {c.config_id for c in configs if measures_throughput(c)}
    trials = {cid: 0 for cid in wanted}
    values: dict[str, list[float]] = {cid: [] for cid in wanted}
    last = {cid: 0 for cid in wanted}
    campaign = load_campaign(campaign_dir)
    share = campaign_share(campaign.meta)
    for record in campaign.trials:
        config_id = record.get("config_id")
        if config_id not in wanted or record.get("warmup"):
            continue
        if not record.get(RERUN_KEY):  # a re-run stands in for its trial: no trial of its own
            trials[config_id] += 1
        last[config_id] = max(last[config_id], int(record.get("repetition") or 0))
        rate, flags = trial_throughput(record, campaign_dir)
        if rate is not None and not flags and not judged_disturbed(record, share):
            values[config_id].append(rate)
    return {cid: ConfigState(cid, trials[cid], tuple(values[cid]), last[cid]) for cid in wanted}


def short_of_target(states: Mapping[str, ConfigState], ci_target: float, max_trials: int) -> list[str]:
    """Configurations that still need a trial: target not met and fewer than max_trials."""
    return sorted(cid for cid, state in states.items() if not state.met(ci_target) and state.trials < max_trials)


def next_round(
    configs: Sequence[TrialConfig],
    states: Mapping[str, ConfigState],
    *,
    ci_target: float,
    max_trials: int,
    trials: int,
    seed: int,
    next_order_index: int,
) -> list[PlannedTrial]:
    """One more trial for each configuration short of the target, in a shuffled order."""
    by_id = {c.config_id: c for c in configs}
    short = short_of_target(states, ci_target, max_trials)
    if not short:
        return []
    # Round k brings every short configuration to k + 1 trials: those already there (a round
    # interrupted half-way) wait, so no configuration gets its (k + 2)-th trial before all have a
    # (k + 1)-th. Seeded by the campaign seed and k, a resumed round is drawn in the same order.
    round_number = min(states[cid].trials for cid in short)
    short = [cid for cid in short if states[cid].trials == round_number]
    random.Random(f"{seed}-adaptive-{round_number}").shuffle(short)
    entries = [(by_id[cid], states[cid].last_repetition + 1) for cid in short]
    return added_trials(entries, trials, next_order_index)


def added_trials(entries: Sequence[tuple[TrialConfig, int]], trials: int, next_order_index: int) -> list[PlannedTrial]:
    """The trials a phase adds, in the order given: (configuration, repetition) each, numbered as the planned
    rounds are (`trials` sets the repetition's digits) and continuing the campaign's order index."""
    width = repetition_width(trials)
    return [
        PlannedTrial(
            trial_id=repetition_id(config.config_id, repetition, width),
            config=config,
            repetition=repetition,
            warmup=False,
            order_index=next_order_index + offset,
            adaptive=True,
        )
        for offset, (config, repetition) in enumerate(entries)
    ]


def expected_round_s(params: Parameters, configs: Iterable[TrialConfig]) -> float:
    """Seconds a round of these configurations is expected to take: each trial's load, warm-up and overhead."""
    return float(sum(c.duration_s + warmup_duration_s(params, c) + TRIAL_OVERHEAD_S for c in configs))


def summary(states: Mapping[str, ConfigState], *, campaign: str, ci_target: float, max_trials: int) -> dict[str, Any]:
    """Per configuration: trials, ok values, mean, CI half-width (% of mean) and whether it met the target."""
    rows = {}
    for config_id in sorted(states):
        state = states[config_id]
        half_width = state.half_width_pct()
        met = state.met(ci_target)
        rows[config_id] = {
            "trials": state.trials,
            "n": len(state.values),
            "mean": state.mean,
            "half_width_pct": None if half_width is None or math.isnan(half_width) else round(half_width, 4),
            "met": met,
            "stopped_by": "target" if met else ("max_trials" if state.trials >= max_trials else None),
        }
    return {
        "schema": SUMMARY_SCHEMA,
        "campaign": campaign,
        "ci_target_pct": ci_target,
        "max_trials": max_trials,
        "level": DEFAULT_CONFIDENCE,
        "method": "student-t",
        "configs": rows,
    }


def latest_summary(campaign_dir: Path) -> dict[str, Any] | None:
    files = sorted((Path(campaign_dir) / SUMMARY_DIR).glob("adaptive-*.json"))
    return json.loads(files[-1].read_text(encoding="utf-8")) if files else None


def record_summary(campaign_dir: Path, content: Mapping[str, Any], now: datetime | None = None) -> Path | None:
    """Write `adaptive/adaptive-<UTC>.json` once; None (nothing written) if the latest one says the same."""
    previous = latest_summary(campaign_dir)
    if previous is not None and {k: v for k, v in previous.items() if k != "written_at"} == dict(content):
        return None
    moment = now or datetime.now(timezone.utc)
    directory = Path(campaign_dir) / SUMMARY_DIR
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"adaptive-{moment.strftime('%Y%m%dT%H%M%S%fZ')}"
    path = directory / f"{stem}.json"
    write_new_json(path, {**content, "written_at": moment.isoformat()})
    return path


def run_mean_phase(
    params: Parameters,
    configs: Sequence[TrialConfig],
    campaign_dir: Path,
    first_order_index: int,
    run_round: Callable[[list[PlannedTrial]], None],
    stream: TextIO,
) -> dict[str, Any]:
    """Rounds of one more trial for each configuration short of ci_target (`next_round`; `run_round` runs and stores
    them) until none is or each has max_trials; writes and returns the outcome (`summary`)."""
    assert params.ci_target is not None and params.max_trials is not None and params.seed is not None
    while True:
        states = config_states(campaign_dir, configs)
        records = load_campaign(campaign_dir).trials
        next_index = max((int(r.get("order_index") or 0) for r in records), default=first_order_index - 1) + 1
        extra = next_round(
            configs,
            states,
            ci_target=params.ci_target,
            max_trials=params.max_trials,
            trials=params.trials,
            seed=params.seed,
            next_order_index=next_index,
        )
        if not extra:
            break
        print(
            f"adaptive: {len(extra)} configurations above a {params.ci_target:g}% CI half-width "
            f"(max {params.max_trials} trials): one more trial each",
            file=stream,
            flush=True,
        )
        run_round(extra)
    content = summary(states, campaign=params.campaign, ci_target=params.ci_target, max_trials=params.max_trials)
    written = record_summary(campaign_dir, content)
    met = sum(1 for row in content["configs"].values() if row["met"])
    where = f"; written to {written}" if written else ""
    print(f"adaptive: {met} of {len(content['configs'])} configurations met the target{where}", file=stream, flush=True)
    return content


# --------------------------------------------------------------------------- the paired criteria


@dataclass(frozen=True)
class RoundMeasure:
    """What the paired criteria read from one measured ok trial (flagged ones included, as in the report)."""

    config_id: str
    repetition: int
    throughput: float
    cpu_us_per_request: float
    client_bound: bool


@dataclass(frozen=True)
class PairState:
    """A configuration's paired ratio to its reference so far, on the metric the report compares."""

    config_id: str
    reference: str
    metric: str
    rounds: int
    half_width_pct: float | None

    def met(self, ci_target: float) -> bool:
        return self.half_width_pct is not None and self.half_width_pct <= ci_target


def server_cpu_s(server: Mapping[str, Any]) -> float:
    """The server's user + sys CPU seconds: its own numbers when `cpu_source` says "stats" (nginx), else the
    launched tree's (archbench.analyze.trials.server_cpu_seconds reads the lenient spellings too), without a
    warm-up's."""
    own = server.get("stats") or {}
    source = own if str(server.get("cpu_source") or "") == "stats" else server
    try:
        whole_life = float(source["cpu_user_s"]) + float(source["cpu_sys_s"])
    except (KeyError, TypeError, ValueError):
        return math.nan
    return without_warmup(whole_life, server)  # the warm-up's CPU is not the measured requests


def round_measure(record: Mapping[str, Any], campaign_dir: Path) -> RoundMeasure | None:
    """The trial's throughput, server CPU per request and client-bound flag; None unless measured, ok and not
    disturbed (a disturbed trial's re-run stands for it in its round)."""
    if record.get("warmup") or record.get("status") != "ok" or judged_disturbed(record, DEFAULT_INTERFERENCE_SHARE):
        return None
    parsed, _ = _parsed_output(record, campaign_dir)
    if parsed is None or parsed.get("requests_per_sec") is None:
        return None
    requests = float(parsed.get("total_requests") or 0)
    cpu = server_cpu_s(record.get("server") or {})
    return RoundMeasure(
        config_id=str(record["config_id"]),
        repetition=int(record.get("repetition") or 0),
        throughput=float(parsed["requests_per_sec"]),
        cpu_us_per_request=cpu * 1e6 / requests if requests > 0 else math.nan,
        client_bound=client_bound(record.get("load") or {}),
    )


def comparison_point(config: TrialConfig) -> tuple[Any, ...]:
    """Where a configuration meets its reference: pipeline depth and the load point (archbench.analyze.fields
    POINT_FIELDS: connections, wrk threads, duration, response, load generator, protocol)."""
    return (
        config.pipeline,
        config.connections,
        config.load_threads,
        config.duration_s,
        config.response,
        config.load_generator,
        config.proto,
    )


def pair_references(configs: Sequence[TrialConfig], measures: Sequence[RoundMeasure]) -> dict[str, str]:
    """Config id -> its reference's: the preferred reference architecture at its point, the fastest of it."""
    means: dict[str, list[float]] = {}
    for measure in measures:
        means.setdefault(measure.config_id, []).append(measure.throughput)
    best: dict[tuple[Any, ...], tuple[int, float, str]] = {}
    for config in configs:
        values = means.get(config.config_id)
        if config.architecture not in REFERENCE_PREFERENCE or not values:
            continue
        candidate = (REFERENCE_PREFERENCE.index(config.architecture), -sum(values) / len(values), config.config_id)
        point = comparison_point(config)
        if point not in best or candidate < best[point]:
            best[point] = candidate
    out = {}
    for config in configs:
        chosen = best.get(comparison_point(config))
        if chosen is not None and chosen[2] != config.config_id and config.architecture != REFERENCE_PREFERENCE[0]:
            out[config.config_id] = chosen[2]
    return out


def pair_states(campaign_dir: Path, configs: Iterable[TrialConfig]) -> dict[str, PairState]:
    """Every configuration with a reference: its paired ratio's half-width on the compared metric."""
    wanted = [c for c in configs if measures_throughput(c)]
    ids = {c.config_id for c in wanted}
    records = load_campaign(campaign_dir).trials
    measures = [m for r in records if r.get("config_id") in ids and (m := round_measure(r, campaign_dir))]
    by_config: dict[str, dict[int, RoundMeasure]] = {}
    for measure in measures:
        by_config.setdefault(measure.config_id, {})[measure.repetition] = measure
    states = {}
    for config_id, reference in pair_references(wanted, measures).items():
        mine, theirs = by_config.get(config_id, {}), by_config.get(reference, {})
        rounds = sorted(set(mine) & set(theirs))
        bound = [mine[k].client_bound or theirs[k].client_bound for k in rounds]
        pair_bound = bool(rounds) and sum(bound) / len(rounds) >= CLIENT_BOUND_SHARE
        field = "cpu_us_per_request" if pair_bound else "throughput"
        paired = paired_log_ratio(
            [getattr(mine[k], field) for k in rounds], [getattr(theirs[k], field) for k in rounds]
        )
        half = paired.half_width_pct
        states[config_id] = PairState(
            config_id,
            reference,
            CPU_PER_REQUEST if pair_bound else THROUGHPUT,
            paired.n,
            None if math.isnan(half) else half,
        )
    return states


def pairs_met(states: Mapping[str, PairState], criterion: str, ci_target: float) -> bool:
    """Whether the paired criterion is met: every pair ("paired") or their median ("paired_median") within the
    target. No pair, or under "paired" a pair without an interval yet, is not met."""
    halves = [s.half_width_pct for s in states.values()]
    defined = [h for h in halves if h is not None]
    if not defined or (criterion == PAIRED_CRITERION and len(defined) < len(halves)):
        return False
    if criterion == PAIRED_MEDIAN_CRITERION:
        return statistics.median(defined) <= ci_target
    return all(h <= ci_target for h in defined)


def adaptive_wall_s(records: Iterable[Mapping[str, Any]]) -> float:
    """Wall time the adaptive trials on disk took (started_at to finished_at), the budget's spending."""
    total = 0.0
    for record in records:
        if not record.get("adaptive"):
            continue
        try:
            start = datetime.fromisoformat(str(record["started_at"]))
            end = datetime.fromisoformat(str(record["finished_at"]))
        except (KeyError, ValueError):
            continue
        total += max(0.0, (end - start).total_seconds())
    return total


def next_paired_round(
    params: Parameters, configs: Sequence[TrialConfig], campaign_dir: Path, next_order_index: int
) -> tuple[list[PlannedTrial], str | None]:
    """(the next whole round, None) or ([], why the phase stops: "target", "max_trials", "budget")."""
    assert params.ci_target is not None and params.max_trials is not None and params.seed is not None
    wanted = [c for c in configs if measures_throughput(c)]
    records = [r for r in load_campaign(campaign_dir).trials if not r.get("warmup")]
    done: dict[int, set[str]] = {}
    for record in records:
        done.setdefault(int(record.get("repetition") or 0), set()).add(str(record.get("config_id")))
    ids = {c.config_id for c in wanted}
    last = max((k for k, have in done.items() if have & ids), default=params.trials)
    # An interrupted round is completed before anything is decided; then whole rounds only.
    round_number = last if ids - done.get(last, set()) and last > params.trials else last + 1
    if round_number == last + 1:
        if pairs_met(pair_states(campaign_dir, wanted), params.adaptive_criterion, params.ci_target):
            return [], "target"
        if round_number > params.max_trials:
            return [], "max_trials"
        expected = expected_round_s(params, wanted)
        if params.adaptive_budget_s is not None and adaptive_wall_s(records) + expected > params.adaptive_budget_s:
            return [], "budget"
    order = [c for c in wanted if c.config_id not in done.get(round_number, set())]
    random.Random(f"{params.seed}-paired-{round_number}").shuffle(order)
    planned = added_trials([(config, round_number) for config in order], params.trials, next_order_index)
    return planned, None


def paired_summary(
    states: Mapping[str, PairState], *, campaign: str, params: Parameters, stopped_by: str | None
) -> dict[str, Any]:
    """The paired phase's outcome, in the shape of `summary` (configs: met, stopped_by) plus the pairs."""
    assert params.ci_target is not None
    met_all = pairs_met(states, params.adaptive_criterion, params.ci_target)
    rows = {}
    for config_id in sorted(states):
        state = states[config_id]
        met = state.met(params.ci_target)
        rows[config_id] = {
            "reference": state.reference,
            "metric": state.metric,
            "trials": state.rounds,
            "n": state.rounds,
            "half_width_pct": None if state.half_width_pct is None else round(state.half_width_pct, 4),
            "met": met,
            "stopped_by": "target" if met else stopped_by,
        }
    return {
        "schema": SUMMARY_SCHEMA,
        "campaign": campaign,
        "ci_target_pct": params.ci_target,
        "max_trials": params.max_trials,
        "level": DEFAULT_CONFIDENCE,
        "method": f"paired log ratio, student-t ({params.adaptive_criterion})",
        "criterion": params.adaptive_criterion,
        "budget_s": params.adaptive_budget_s,
        "met": met_all,
        "stopped_by": stopped_by,
        "configs": rows,
    }


def run_paired_phase(
    params: Parameters,
    configs: Sequence[TrialConfig],
    campaign_dir: Path,
    first_order_index: int,
    run_round: Callable[[list[PlannedTrial]], None],
    stream: TextIO,
) -> dict[str, Any]:
    """Whole rounds (`run_round` runs and stores them) until the paired criterion is met, max_trials rounds are
    measured or the budget is spent; writes and returns the outcome (`paired_summary`)."""
    while True:
        records = load_campaign(campaign_dir).trials
        next_index = max((int(r.get("order_index") or 0) for r in records), default=first_order_index - 1) + 1
        extra, stopped_by = next_paired_round(params, configs, campaign_dir, next_index)
        if not extra:
            break
        print(
            f"adaptive ({params.adaptive_criterion}): round {extra[0].repetition}, {len(extra)} trials, until the "
            f"paired ratios' 95% CI half-width is within {params.ci_target:g}% (max {params.max_trials} rounds"
            + (f", budget {params.adaptive_budget_s:g} s)" if params.adaptive_budget_s is not None else ")"),
            file=stream,
            flush=True,
        )
        run_round(extra)
    states = pair_states(campaign_dir, configs)
    content = paired_summary(states, campaign=params.campaign, params=params, stopped_by=stopped_by)
    written = record_summary(campaign_dir, content)
    met = sum(1 for row in content["configs"].values() if row["met"])
    where = f"; written to {written}" if written else ""
    print(
        f"adaptive ({params.adaptive_criterion}): {'met' if content['met'] else 'not met'} (stopped by "
        f"{stopped_by}); {met} of {len(content['configs'])} pairs within the target{where}",
        file=stream,
        flush=True,
    )
    return content
