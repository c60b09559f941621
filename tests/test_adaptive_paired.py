"""Adaptive stopping on the paired ratios (archbench.measure.adaptive, criteria "paired" and "paired_median"):
whole rounds, resume of an interrupted round, the stops (target, max_trials, budget), and the parameters."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.analyze import fields
from archbench.analyze import paired as analyze_paired
from archbench.config.params import ParameterError, resolve_parameters
from archbench.config.plan import TrialConfig
from archbench.measure import adaptive, runner
from archbench.measure.adaptive import PairState, next_paired_round, pair_states, pairs_met, run_paired_phase

EPOLL = synthetic.config("epoll", None, 100, trigger="level")
NGINX = synthetic.config("nginx", 1, 100)
CONFIGS = [
    TrialConfig("epoll", 100, 1, 1, options=(("trigger", "level"),)),
    TrialConfig("nginx", 100, 1, 1, threads=1),
]
RATES = {  # per round: epoll tracks nginx's drift closely, so the paired ratio is tight
    1: (20_000.0, 10_000.0),
    2: (22_100.0, 11_000.0),
    3: (18_050.0, 9_000.0),
}


def _write(writer: synthetic.CampaignWriter, cfg: dict, repetition: int, rate: float, utilisation: float) -> None:
    writer.trial(
        cfg,
        repetition,
        wrk=synthetic.wrk_report(rate, int(rate), 100),
        load_utilisation=utilisation,
        cpu=(rate * 2e-6, rate * 1e-6),
    )


def _campaign(tmp_path: Path, rounds: dict[int, tuple[float, float]], utilisation: float = 0.5) -> Path:
    writer = synthetic.CampaignWriter(tmp_path, "paired-adapt")
    for repetition, (epoll_rate, nginx_rate) in rounds.items():
        _write(writer, EPOLL, repetition, epoll_rate, utilisation)
        _write(writer, NGINX, repetition, nginx_rate, utilisation)
    return writer.finish()


def _params(**overrides):
    values = dict(check_host=False, trials=3, seed=5, ci_target=1.0, max_trials=5, adaptive_criterion="paired")
    values.update(overrides)
    return resolve_parameters("smoke", **values)


def test_the_pairing_is_the_reports() -> None:
    assert analyze_paired.UPPER_BOUND_ARCHITECTURE == "pong"
    assert adaptive.REFERENCE_PREFERENCE[1] == fields.REFERENCE_ARCHITECTURE


def test_pairs_met_every_pair_or_the_median() -> None:
    states = {c: PairState(c, "ref", "requests_per_sec", 4, h) for c, h in (("a", 1.0), ("b", 2.0), ("c", 9.0))}
    assert not pairs_met(states, "paired", 3.0)
    assert pairs_met(states, "paired_median", 3.0)
    states["d"] = PairState("d", "ref", "requests_per_sec", 1, None)
    assert not pairs_met(states, "paired", 99.0)  # a pair without an interval is not within any target
    assert not pairs_met({}, "paired_median", 3.0)


def test_pair_states_use_the_compared_metric(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path, RATES)
    (state,) = pair_states(campaign, CONFIGS).values()
    assert (state.config_id, state.reference, state.metric, state.rounds) == (
        "epoll-level-c100-lt1-d1s",
        "nginx-t1-c100-lt1-d1s",
        "requests_per_sec",
        3,
    )
    assert 0 < state.half_width_pct < 5
    bound = _campaign(tmp_path / "bound", RATES, utilisation=0.99)
    (state,) = pair_states(bound, CONFIGS).values()
    assert state.metric == "server_cpu_us_per_request"  # client-bound: CPU per request, as the report


def test_next_round_is_whole_and_resumes_an_interrupted_one(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path, RATES)
    planned, stopped = next_paired_round(_params(ci_target=0.001), CONFIGS, campaign, next_order_index=6)
    assert stopped is None
    assert sorted(t.trial_id for t in planned) == ["epoll-level-c100-lt1-d1s-r04", "nginx-t1-c100-lt1-d1s-r04"]
    assert all(t.adaptive and t.repetition == 4 for t in planned) and [t.order_index for t in planned] == [6, 7]
    again, _ = next_paired_round(_params(ci_target=0.001), CONFIGS, campaign, next_order_index=6)
    assert again == planned  # seeded by the campaign seed and the round
    # Round 4 interrupted after epoll: nginx's r04 comes next, whatever the target says.
    writer = synthetic.CampaignWriter.__new__(synthetic.CampaignWriter)
    writer.dir, writer.name, writer.plan, writer.order = campaign, "paired-adapt", [], 6
    _write(writer, EPOLL, 4, 20_000.0, 0.5)
    resumed, stopped = next_paired_round(_params(ci_target=99.0), CONFIGS, campaign, next_order_index=7)
    assert [t.trial_id for t in resumed] == ["nginx-t1-c100-lt1-d1s-r04"] and stopped is None


@pytest.mark.parametrize(
    ("overrides", "why"),
    [
        ({"ci_target": 50.0}, "target"),
        ({"ci_target": 0.001, "max_trials": 3}, "max_trials"),
        ({"ci_target": 0.001, "adaptive_budget_s": 1.0}, "budget"),  # a round of two 1-s trials does not fit
    ],
)
def test_the_phase_stops(tmp_path: Path, overrides: dict, why: str) -> None:
    campaign = _campaign(tmp_path, RATES)
    planned, stopped = next_paired_round(_params(**overrides), CONFIGS, campaign, next_order_index=6)
    assert planned == [] and stopped == why


def test_run_paired_phase_records_its_outcome(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path, RATES)
    rounds: list[list[str]] = []
    stream = io.StringIO()
    content = run_paired_phase(
        _params(ci_target=50.0), CONFIGS, campaign, 6, lambda extra: rounds.append(extra), stream
    )
    assert rounds == [] and content["met"] and content["stopped_by"] == "target"
    (written,) = (campaign / "adaptive").iterdir()
    stored = json.loads(written.read_text())
    assert stored["criterion"] == "paired" and stored["configs"]["epoll-level-c100-lt1-d1s"]["met"]
    assert "pairs within the target" in stream.getvalue()


def test_paired_parameters_are_validated() -> None:
    params = _params(adaptive_budget_s=120)
    assert (params.adaptive_criterion, params.adaptive_budget_s) == ("paired", 120.0)
    assert resolve_parameters("smoke", check_host=False).adaptive_criterion == "mean"
    with pytest.raises(ParameterError, match="adaptive_criterion"):
        _params(adaptive_criterion="median")
    with pytest.raises(ParameterError, match="adaptive_criterion: applies only with ci_target"):
        resolve_parameters("smoke", check_host=False, adaptive_criterion="paired")
    with pytest.raises(ParameterError, match="adaptive_budget_s: applies only with ci_target"):
        resolve_parameters("smoke", check_host=False, adaptive_budget_s=60)


def test_paired_campaign_adds_whole_rounds(real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path) -> None:
    """A real campaign (epoll and nginx, 1-s trials): an unreachable target adds one whole round, then max_trials."""
    server_cpus, load_cpus = cpu_pair
    params = resolve_parameters(
        "smoke",
        servers=["epoll", "nginx"],
        thread_counts=[1],
        connection_counts=[16],
        pipeline_depths=[1],
        duration_s=1,
        trials=2,
        warmup=False,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(real_build_dir),
        raw_root=str(tmp_path),
        campaign="paired",
        seed=3,
        ci_target=0.0001,
        max_trials=3,
        adaptive_criterion="paired",
        adaptive_budget_s=60,
        max_reruns=0,  # the paired rounds alone, whatever else this machine runs meanwhile:
        interference_share=0.99,  # no trial judged disturbed, none re-run
    )
    stream = io.StringIO()
    result = runner.run_campaign(params, stream=stream)
    campaign = tmp_path / "paired"
    records = [json.loads(p.read_text()) for p in campaign.glob("*.json") if p.name != "campaign.json"]
    extras = [r for r in records if r.get("adaptive")]
    configs = {r["config_id"] for r in records}
    assert result.ran == len(records) and {r["repetition"] for r in extras} == {3}
    assert {r["config_id"] for r in extras} == configs  # a whole round: every configuration once
    summary = adaptive.latest_summary(campaign)
    assert summary["criterion"] == "paired" and summary["stopped_by"] == "max_trials"
    (row,) = summary["configs"].values()
    assert row["reference"].startswith("nginx") and row["n"] == 3
