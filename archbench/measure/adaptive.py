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
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from archbench.config.plan import PlannedTrial, TrialConfig, repetition_id, repetition_width
from archbench.data.storage import load_campaign, write_new_json
from archbench.parse import LoadOutputError, parse_output
from archbench.parse.combine import combine_outputs
from archbench.stats import DEFAULT_CONFIDENCE, mean_ci_t

SUMMARY_DIR = "adaptive"
SUMMARY_SCHEMA = 1


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


def trial_throughput(record: Mapping[str, Any], campaign_dir: Path) -> tuple[float | None, list[str]]:
    """(throughput, flags) of a stored trial; (None, []) if it has no usable load output."""
    load = record.get("load") or {}
    outputs = [host["output_file"] for host in load.get("hosts") or []] or [load.get("output_file")]
    if record.get("status") != "ok" or not all(outputs):
        return None, []
    try:
        texts = [(Path(campaign_dir) / name).read_text(encoding="utf-8") for name in outputs]
        # Placement ssh: one output per client host, whose counts add up (archbench.parse.combine).
        each = [parse_output(load["tool"], text) for text in texts]
        parsed = each[0] if len(each) == 1 else combine_outputs(each)
    except (OSError, LoadOutputError, ValueError):
        return None, ["unparsed"]
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
    for record in load_campaign(campaign_dir).trials:
        config_id = record.get("config_id")
        if config_id not in wanted or record.get("warmup"):
            continue
        trials[config_id] += 1
        last[config_id] = max(last[config_id], int(record.get("repetition") or 0))
        rate, flags = trial_throughput(record, campaign_dir)
        if rate is not None and not flags:
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
    width = repetition_width(trials)
    planned = []
    for offset, config_id in enumerate(short):
        repetition = states[config_id].last_repetition + 1
        planned.append(
            PlannedTrial(
                trial_id=repetition_id(config_id, repetition, width),
                config=by_id[config_id],
                repetition=repetition,
                warmup=False,
                order_index=next_order_index + offset,
                adaptive=True,
            )
        )
    return planned


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
