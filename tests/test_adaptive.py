"""Adaptive repetition: extra trials until the CI is narrow enough, interleaved, resume-safe."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from archbench.config.params import ParameterError, resolve_parameters
from archbench.config.plan import TrialConfig
from archbench.measure import adaptive, runner
from archbench.measure.adaptive import ConfigState, next_round, short_of_target
from archbench.measure.runner import CampaignInterrupted, run_campaign


def test_target_is_a_ci_half_width_in_percent_of_the_mean() -> None:
    tight = ConfigState("a", trials=3, values=(100.0, 100.5, 99.5), last_repetition=3)
    loose = ConfigState("b", trials=3, values=(50.0, 150.0, 100.0), last_repetition=3)
    single = ConfigState("c", trials=3, values=(100.0,), last_repetition=3)  # two flagged or failed
    # t(0.975, 2) = 4.303: half-width 4.303 * 0.5 / sqrt(3) = 1.24 % of 100.
    assert tight.half_width_pct() == pytest.approx(1.242, abs=1e-3)
    assert tight.met(1.5) and not tight.met(1.0)
    assert not loose.met(50.0) and loose.met(125.0)
    assert single.half_width_pct() is None and not single.met(99.0)
    states = {s.config_id: s for s in (tight, loose, single)}
    assert short_of_target(states, ci_target=1.5, max_trials=4) == ["b", "c"]
    assert short_of_target(states, ci_target=1.5, max_trials=3) == []  # max_trials reached


def test_next_round_continues_numbering_and_order() -> None:
    configs = [TrialConfig("epoll", 16, 1, 1), TrialConfig("poll", 16, 1, 1), TrialConfig("blocking", 16, 1, 1)]
    states = {
        "epoll-c16-lt1-d1s": ConfigState("epoll-c16-lt1-d1s", 2, (1.0, 2.0), 2),
        "poll-c16-lt1-d1s": ConfigState("poll-c16-lt1-d1s", 3, (1.0, 1.0, 1.0), 3),  # met: zero spread
        "blocking-c16-lt1-d1s": ConfigState("blocking-c16-lt1-d1s", 9, (1.0, 3.0), 9),
    }
    first = next_round(configs, states, ci_target=5, max_trials=12, trials=2, seed=1, next_order_index=40)
    again = next_round(configs, states, ci_target=5, max_trials=12, trials=2, seed=1, next_order_index=40)
    assert first == again  # deterministic: a resumed campaign draws the same round
    # Only the configurations with the fewest trials: blocking (9 trials) waits until epoll has as many.
    assert [(t.trial_id, t.repetition, t.order_index) for t in first] == [("epoll-c16-lt1-d1s-r03", 3, 40)]
    assert all(t.adaptive and not t.warmup for t in first)
    states["epoll-c16-lt1-d1s"] = ConfigState("epoll-c16-lt1-d1s", 9, (1.0, 2.0), 9)
    later = next_round(configs, states, ci_target=5, max_trials=12, trials=2, seed=1, next_order_index=50)
    assert sorted(t.trial_id for t in later) == ["blocking-c16-lt1-d1s-r10", "epoll-c16-lt1-d1s-r10"]
    assert sorted(t.order_index for t in later) == [50, 51]


def test_adaptive_parameters_are_validated() -> None:
    params = resolve_parameters("smoke", check_host=False, ci_target=2, trials=3)
    assert (params.ci_target, params.max_trials) == (2.0, 9)  # default: 3 x trials
    with pytest.raises(ParameterError, match="max_trials: applies only with ci_target"):
        resolve_parameters("smoke", check_host=False, max_trials=5)
    with pytest.raises(ParameterError, match="max_trials: 1 is below trials"):
        resolve_parameters("smoke", check_host=False, ci_target=2, trials=3, max_trials=1)
    with pytest.raises(ParameterError, match="ci_target: 0 is not a positive number"):
        resolve_parameters("smoke", check_host=False, ci_target=0)
    with pytest.raises(ParameterError, match="ci_target: 150"):
        resolve_parameters("smoke", check_host=False, ci_target=150)


def test_adaptive_campaign_runs_interleaved_extra_trials_and_resumes(
    real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server_cpus, load_cpus = cpu_pair
    # An unreachable target (0.0001 %): every configuration runs up to max_trials.
    params = resolve_parameters(
        "smoke",
        servers=["thread_pool"],
        thread_counts=[1, 2],
        connection_counts=[16],
        duration_s=1,
        trials=2,
        warmup=False,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(real_build_dir),
        raw_root=str(tmp_path),
        campaign="adapt",
        seed=11,
        ci_target=0.0001,
        max_trials=4,
        max_reruns=0,  # the adaptive rounds alone, whatever else this machine runs meanwhile:
        interference_share=0.99,  # no trial judged disturbed, none re-run
    )
    real_run_trial = runner.run_trial
    adaptive_runs: list[str] = []

    def interrupted_at_the_second_extra(planned, *args, **kwargs):
        if planned.adaptive:
            adaptive_runs.append(planned.trial_id)
            if len(adaptive_runs) == 2:
                raise KeyboardInterrupt
        return real_run_trial(planned, *args, **kwargs)

    monkeypatch.setattr(runner, "run_trial", interrupted_at_the_second_extra)
    with pytest.raises(CampaignInterrupted):
        run_campaign(params, stream=io.StringIO())
    monkeypatch.setattr(runner, "run_trial", real_run_trial)
    campaign = tmp_path / "adapt"
    assert not (campaign / "adaptive").exists()  # the phase did not end

    stream = io.StringIO()
    result = run_campaign(params, stream=stream)
    assert result.skipped == 4 and result.ran == 3  # 4 extra trials in all, one of them before the interrupt
    # On a busy machine a disturbed trial has re-runs beside it (archbench.measure.reruns): they stand for it.
    records = {
        r["trial_id"]: r
        for r in (json.loads(p.read_text()) for p in campaign.glob("*.json"))
        if r.get("trial_id") and not r.get("reruns")
    }
    configs = ["thread_pool-request-queue-t1-c16-lt1-d1s", "thread_pool-request-queue-t2-c16-lt1-d1s"]
    assert sorted(records) == sorted(f"{c}-r{k:02d}" for c in configs for k in range(1, 5))
    extras = sorted((r for r in records.values() if r.get("adaptive")), key=lambda r: r["order_index"])
    assert [r["repetition"] for r in extras] == [3, 3, 4, 4]  # round-robin: every config's r03 before any r04
    assert [r["order_index"] for r in extras] == [4, 5, 6, 7]
    assert all(r["status"] == "ok" and not r["warmup"] for r in extras)
    assert json.loads((campaign / "campaign.json").read_text())["plan"] == sorted(
        [f"{c}-r{k:02d}" for c in configs for k in (1, 2)],
        key=lambda t: json.loads((campaign / f"{t}.json").read_text())["order_index"],
    )

    (summary_file,) = (campaign / "adaptive").iterdir()
    summary = json.loads(summary_file.read_text())
    assert (summary["ci_target_pct"], summary["max_trials"], summary["level"]) == (0.0001, 4, 0.95)
    assert {
        cid: (row["trials"], row["n"], row["met"], row["stopped_by"]) for cid, row in summary["configs"].items()
    } == {c: (4, 4, False, "max_trials") for c in configs}
    assert "0 of 2 configurations met the target" in stream.getvalue()

    # Once more: nothing to run, no duplicate, and the same outcome is not written twice.
    again = run_campaign(params, stream=io.StringIO())
    assert again.ran == 0 and len(list((campaign / "adaptive").iterdir())) == 1
    assert adaptive.latest_summary(campaign)["configs"] == summary["configs"]
