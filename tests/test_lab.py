"""`python -m archbench lab` (what `make lab` runs): JupyterLab headless on loopback with the project's kernel.

Started on a free loopback port, its REST API answers with the token the command printed, lists the `archbench`
kernel, and SIGTERM stops it within a bounded wait.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from archbench.config.paths import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # starts a Jupyter server

URL = re.compile(r"JupyterLab: (http://127\.0\.0\.1:(\d+)/lab\?token=([0-9a-f]+))")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def test_lab_starts_headless_answers_its_api_and_stops(repo_env: dict[str, str], tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "lab.log"
    command = [sys.executable, "-m", "archbench", "lab", "--port", str(port), "--no-browser"]
    with open(log, "w") as stderr:
        lab = subprocess.Popen(command, cwd=REPO_ROOT, env=repo_env, stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            assert lab.stdout is not None
            printed = lab.stdout.readline()
            match = URL.search(printed)
            assert match, f"no URL with a token on stdout: {printed!r}"
            assert int(match.group(2)) == port
            base, token = f"http://127.0.0.1:{port}", match.group(3)
            status: dict = {}
            deadline = time.monotonic() + 45
            while time.monotonic() < deadline:
                try:
                    status = get_json(f"{base}/api/status?token={token}")
                    break
                except (urllib.error.URLError, ConnectionError):
                    assert lab.poll() is None, log.read_text()
                    time.sleep(0.3)
            assert "started" in status, log.read_text()
            specs = get_json(f"{base}/api/kernelspecs?token={token}")
            assert "archbench" in specs["kernelspecs"]
            assert specs["kernelspecs"]["archbench"]["spec"]["display_name"] == "archbench (.venv)"
            with pytest.raises(urllib.error.HTTPError) as refused:
                get_json(f"{base}/api/kernelspecs")  # without the token
            assert refused.value.code == 403
        finally:
            lab.send_signal(signal.SIGTERM)
            try:
                lab.wait(timeout=15)
            except subprocess.TimeoutExpired:
                lab.kill()
                lab.wait()
                pytest.fail("JupyterLab did not stop within 15 s of SIGTERM")
    assert lab.returncode is not None
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, "the port is still served after SIGTERM"
