"""A real trial of a real server on loopback with a busy loop pinned to the server's CPU: the trial is judged
disturbed, kept, and run again in its round (archbench.measure.interference, archbench.measure.reruns)."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from archbench.config.params import resolve_parameters
from archbench.data.records import TrialRecord
from archbench.measure import runner
from archbench.measure.processes import die_with_parent

BUSY_LOOP = "while True:\n    pass\n"


@pytest.mark.slow
def test_a_busy_loop_beside_the_server_disturbs_its_trial_which_is_run_again(
    real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server_cpus, load_cpus = cpu_pair
    params = resolve_parameters(
        "smoke",
        servers=["epoll"],
        connection_counts=[16],
        pipeline_depths=[1],
        duration_s=1,
        trials=1,
        warmup=False,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(real_build_dir),
        raw_root=str(tmp_path),
        campaign="hogged",
        seed=3,
        baseline_s=0,
        max_reruns=1,
    )
    # The loop shares the server's CPU during the first trial only; it dies with this process whatever happens.
    hog = subprocess.Popen(
        ["taskset", "-c", server_cpus, sys.executable, "-c", BUSY_LOOP],
        preexec_fn=die_with_parent(signal.SIGKILL),
    )
    real_run_trial = runner.run_trial

    def run_trial_beside_the_loop(planned, *args, **kwargs):
        try:
            return real_run_trial(planned, *args, **kwargs)
        finally:
            hog.kill()
            hog.wait(timeout=10)

    monkeypatch.setattr(runner, "run_trial", run_trial_beside_the_loop)
    try:
        result = runner.run_campaign(params, stream=io.StringIO())
    finally:
        hog.kill()
        hog.wait(timeout=10)

    campaign = tmp_path / "hogged"
    (planned_id,) = json.loads((campaign / "campaign.json").read_text())["plan"]
    first = json.loads((campaign / f"{planned_id}.json").read_text())
    again = json.loads((campaign / f"{planned_id}-rerun1.json").read_text())
    for record in (first, again):
        TrialRecord.model_validate(record)
    verdict = first["interference"]
    server = verdict["server_cpus"]
    assert first["status"] == "ok" and verdict["disturbed"], verdict
    # The loop took a large part of the server's CPU: work that is not the server's tree, not interrupts.
    assert server["foreign_ticks"] >= 0.3 * server["expected_ticks"], server
    assert verdict["reasons"][0].startswith("server CPUs:")
    # The re-run: the same configuration and round, a new trial that says which one it stands in for.
    assert again["reruns"] == planned_id and again["repetition"] == first["repetition"] == 1
    assert again["config_id"] == first["config_id"] and again["interference"] is not None
    assert result.reruns == 1 and result.ran == 1  # the planned trial, and its re-run counted apart
