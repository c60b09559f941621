"""The selection phase (archbench.measure.selection): rounds only for the designs still in at open points, an
interrupted round completed first, the budget and the most rounds respected, the outcome recorded, and the
parameters validated."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.config.params import ParameterError, resolve_parameters
from archbench.config.plan import PlannedTrial, TrialConfig
from archbench.config.workloads import Workload
from archbench.measure import selection

# Two points, three designs each: at 100 us of work the pool is far behind and the others tie (decided at the
# first look); at 10 us poll sits half a zone below epoll with 3 % noise (open after three rounds).
WORK_100, WORK_10 = Workload("cpu", work_us=100), Workload("cpu", work_us=10)
CONFIGS = [TrialConfig("epoll", 64, 1, 1, options=(("trigger", "level"),), workload=w) for w in (WORK_100, WORK_10)] + [
    TrialConfig("poll", 64, 1, 1, workload=w) for w in (WORK_100, WORK_10)
]
CONFIGS += [
    TrialConfig("thread_pool", 64, 1, 1, threads=1, options=(("dispatch", "request"),), workload=w)
    for w in (WORK_100, WORK_10)
]
TRUE_RATES = {  # (architecture, work) -> rate
    ("epoll", 100): 9_800.0,
    ("poll", 100): 9_790.0,
    ("thread_pool", 100): 5_000.0,
    ("epoll", 10): 50_000.0,
    ("poll", 10): 47_500.0,
    ("thread_pool", 10): 30_000.0,
}
NOISE = {100: 0.002, 10: 0.03}


def _params(**overrides):
    values = dict(check_host=False, trials=3, seed=5, selection_delta=0.10, selection_max_rounds=8)
    values.update(overrides)
    return resolve_parameters("smoke", **values)


def _rate(config: TrialConfig, rng: np.random.Generator, noise: dict[int, float]) -> float:
    work = config.workload.work_us if config.workload else 0
    return TRUE_RATES[(config.architecture, work)] * float(np.exp(rng.normal(0.0, noise[work])))


class Campaign:
    """A campaign directory whose trials a test writes round by round, as the runner commits them."""

    def __init__(self, tmp_path: Path, params, noise: dict[int, float] | None = None) -> None:
        self.writer = synthetic.CampaignWriter(tmp_path, "selection-phase")
        self.rng = np.random.default_rng(2026)
        self.params = params
        self.noise = noise or NOISE

    def write(self, config: TrialConfig, repetition: int) -> None:
        rate = _rate(config, self.rng, self.noise)
        self.writer.trial(
            config.as_dict(),
            repetition,
            cid=config.config_id,
            wrk=synthetic.wrk_report(rate, int(rate), 64),
            load_utilisation=0.5,
        )

    def finish(self) -> Path:
        path = self.writer.finish()
        meta = json.loads((path / "campaign.json").read_text())
        meta["parameters"] = self.params.to_dict()
        (path / "campaign.json").write_text(json.dumps(meta))
        return path


def _planned_rounds(tmp_path: Path, params, rounds: int = 3, noise: dict[int, float] | None = None) -> Path:
    campaign = Campaign(tmp_path, params, noise)
    for repetition in range(1, rounds + 1):
        for config in CONFIGS:
            campaign.write(config, repetition)
    return campaign.finish()


def test_rounds_go_only_to_the_open_point_and_its_designs_still_in(tmp_path: Path) -> None:
    path = _planned_rounds(tmp_path, _params())
    _, selections = selection.point_selections(path)
    by_label = {s.point.label: s for s in selections}
    assert by_label["work 100 us"].resolved and not by_label["work 10 us"].resolved
    planned, stopped = selection.next_selection_round(_params(), CONFIGS, path, next_order_index=18)
    assert stopped == {}
    assert {t.repetition for t in planned} == {4} and all(t.adaptive for t in planned)
    chosen = {t.config.config_id for t in planned}
    still_in = set(by_label["work 10 us"].selection.still_in)
    assert chosen == still_in and all("w10" in c for c in chosen)
    # The pool at 0.6 of epoll was shown slower at the first look: it leaves the point.
    assert not any(c.startswith("thread_pool") for c in chosen)
    assert [t.order_index for t in planned] == list(range(18, 18 + len(planned)))
    again, _ = selection.next_selection_round(_params(), CONFIGS, path, next_order_index=18)
    assert again == planned  # seeded by the campaign seed and the round


def test_an_interrupted_round_is_completed_first(tmp_path: Path) -> None:
    path = _planned_rounds(tmp_path, _params())
    planned, _ = selection.next_selection_round(_params(), CONFIGS, path, next_order_index=18)
    first = planned[0]
    writer = synthetic.CampaignWriter.__new__(synthetic.CampaignWriter)
    writer.dir, writer.name, writer.plan, writer.order = path, "selection-phase", [], 18
    writer.trial(
        first.config.as_dict(),
        first.repetition,
        cid=first.config.config_id,
        wrk=synthetic.wrk_report(50_000, 50_000, 64),
        load_utilisation=0.5,
    )
    rest, _ = selection.next_selection_round(_params(), CONFIGS, path, next_order_index=19)
    assert sorted(t.trial_id for t in rest) == sorted(t.trial_id for t in planned[1:])


def test_the_budget_and_the_most_rounds_stop_the_phase(tmp_path: Path) -> None:
    path = _planned_rounds(tmp_path, _params())
    planned, stopped = selection.next_selection_round(
        _params(selection_budget_s=0.5), CONFIGS, path, next_order_index=18
    )
    assert planned == [] and stopped["work 10 us"] == selection.BUDGET
    # A noisy point (30 % per trial) stays open at its one look, and the schedule allows no round more.
    capped = _planned_rounds(tmp_path / "capped", _params(selection_max_rounds=3), noise={100: 0.002, 10: 0.3})
    planned, stopped = selection.next_selection_round(
        _params(selection_max_rounds=3), CONFIGS, capped, next_order_index=18
    )
    assert planned == [] and stopped == {"work 100 us": selection.RESOLVED, "work 10 us": selection.MAX_ROUNDS}


def test_the_phase_runs_until_resolved_and_records_its_outcome(tmp_path: Path) -> None:
    params = _params(selection_max_rounds=40)
    path = _planned_rounds(tmp_path, params)
    campaign = Campaign(tmp_path / "unused", params)  # its generator draws the added rounds
    campaign.writer.dir, campaign.writer.order = path, 18
    rounds: list[list[PlannedTrial]] = []

    def run_round(extra: list[PlannedTrial]) -> None:
        rounds.append(extra)
        for trial in extra:
            campaign.write(trial.config, trial.repetition)

    stream = io.StringIO()
    content = selection.run_selection_phase(params, CONFIGS, path, 18, run_round, stream)
    assert rounds and all({t.config.config_id for t in r} <= {c.config_id for c in CONFIGS[1::2]} for r in rounds)
    work_10 = content["points"]["work 10 us"]
    assert work_10["resolved"] and work_10["rounds"] == 3 + len(rounds)
    assert content["points"]["work 100 us"]["rounds"] == 3
    # poll at 0.95 of epoll: decided, and what is said of it is true (within 10 %, or below the best).
    poll = work_10["designs"]["poll-c64-lt1-d1s-w10"]
    assert poll["verdict"] in ("within", "slower") and poll["low"] <= 0.95 <= poll["high"]
    (written,) = (path / "adaptive").iterdir()
    assert json.loads(written.read_text())["criterion"] == "selection"
    assert "2 of 2 points resolved" in stream.getvalue()


def test_selection_parameters_are_validated() -> None:
    params = _params(selection_budget_s=90)
    assert (params.selection_delta, params.selection_max_rounds, params.selection_budget_s) == (0.1, 8, 90.0)
    assert resolve_parameters("smoke", check_host=False).selection_delta is None
    assert _params(selection_max_rounds=None).selection_max_rounds == 9  # 3 x trials
    with pytest.raises(ParameterError, match="selection_max_rounds: applies only with selection_delta"):
        resolve_parameters("smoke", check_host=False, selection_max_rounds=6)
    with pytest.raises(ParameterError, match="selection_delta"):
        _params(selection_delta=1.5)
    with pytest.raises(ParameterError, match="selection_max_rounds"):
        _params(selection_max_rounds=2)


def test_a_deadline_stops_the_phase_like_its_budget(tmp_path: Path) -> None:
    """`pick`'s time budget: no round starts that would end after the deadline (time.monotonic())."""
    path = _planned_rounds(tmp_path, _params())
    planned, stopped = selection.next_selection_round(
        _params(), CONFIGS, path, next_order_index=18, deadline=time.monotonic() + 0.5
    )
    assert planned == [] and stopped["work 10 us"] == selection.BUDGET
    later, _ = selection.next_selection_round(
        _params(), CONFIGS, path, next_order_index=18, deadline=time.monotonic() + 3600
    )
    assert later and {t.repetition for t in later} == {4}
