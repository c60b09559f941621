"""Ctrl-C during `python -m archbench notebook run_trials` stops the campaign inside the kernel.

jupyter_client starts the kernel in a session of its own, so a terminal's SIGINT reaches the notebook runner
but not the kernel; the runner passes it on (archbench.cli.notebooks.interrupts_forwarded_to_kernel), the
campaign stops the way `python -m archbench run` does, and nothing is left running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from archbench.cli.notebooks import child_pids


@pytest.mark.slow
def test_sigint_reaches_the_kernel_and_the_campaign_stops_cleanly(
    real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path, repo_env: dict[str, str]
) -> None:
    raw = tmp_path / "raw"
    parameters = {"profile": "smoke", "servers": '["blocking"]', "connection_counts": "[4]", "trials": "6"}
    parameters |= {"duration_s": "1", "warmup": "false", "server_cpus": cpu_pair[0], "load_cpus": cpu_pair[1]}
    command = [sys.executable, "-m", "archbench", "notebook", "run_trials", "--campaign", "nb", "--raw-root", str(raw)]
    for key, value in parameters.items():
        command += ["-p", key, value]
    runner = subprocess.Popen(command, env=repo_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        campaign = raw / "nb"
        while time.monotonic() < deadline and not list(campaign.glob("*-r01.json")):
            time.sleep(0.2)
        assert list(campaign.glob("*-r01.json")), "no trial finished within 60 s"
        kernels = child_pids(runner.pid)
        assert kernels, "the notebook runner has no kernel process"
        runner.send_signal(signal.SIGINT)
        _, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode != 0
    assert "CampaignInterrupted" in err and "run the same command again to resume" in err
    finished = [json.loads(p.read_text()) for p in campaign.glob("*-r0*.json")]
    assert 1 <= len(finished) < 6 and all(record["status"] == "ok" for record in finished)
    for pid in kernels:
        assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    assert os.path.isdir(campaign / "executed")  # the interrupted run's executed copy is kept
