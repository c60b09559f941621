"""nginx as the reference: its configuration, the launcher's lifecycle, and real trials through the runner."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT, write_executable

from archbench.config.params import resolve_parameters
from archbench.config.plan import plan_campaign
from archbench.measure import nginx as launcher
from archbench.measure.nginx import NginxConfig, find_nginx, parse_stub_status, response_location
from archbench.measure.runner import PreflightError, run_campaign, run_trial
from archbench.parse import parse_output

needs_nginx = pytest.mark.skipif(find_nginx() is None, reason="nginx not installed (apt-get install nginx-light)")


def nginx_processes(prefix: str) -> list[str]:
    done = subprocess.run(["pgrep", "-af", prefix], capture_output=True, text=True)
    return [line for line in done.stdout.splitlines() if "pgrep" not in line]


def group_members(pgid: int) -> list[int]:
    done = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True)
    return [int(pid) for pid in done.stdout.split()]


def wait_until(condition, limit_s: float = 10.0) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def launcher_facts(output: str) -> tuple[str, int]:
    """(prefix directory, nginx master pid) from the launcher's start-up line."""
    match = re.search(r"master pid (\d+)\) with prefix (\S+)/,", output)
    assert match, output
    return match.group(2), int(match.group(1))


# --------------------------------------------------------------------------- configuration


def test_configuration_has_what_the_reference_needs(tmp_path: Path) -> None:
    config = NginxConfig(
        prefix=tmp_path, host="127.0.0.1", port=8080, worker_processes=3, response="test", open_files=20000
    )
    text = config.text()
    for directive in (
        "master_process on;",
        "worker_processes 3;",
        "worker_rlimit_nofile 20000;",
        f'pid "{tmp_path}/nginx.pid";',
        "use epoll;",
        "worker_connections 10940;",
        "access_log off;",
        "error_log stderr warn;",
        "server_tokens off;",
        "keepalive_requests 1000000000;",
        "keepalive_timeout 75s;",
        "listen 127.0.0.1:8080 backlog=4096;",
        "default_type text/html;",
        'return 200 "test";',
        "location = /archbench-status {",
        "stub_status;",
    ):
        assert directive in text, directive
    assert "daemon" not in text  # given with -g on the command line; nginx rejects it twice
    for temp in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        assert f'{temp}_temp_path "{tmp_path}/{temp}";' in text
    assert "worker_connections 10940;" in text  # 10,000 connections and the sixteenth nginx keeps free


def test_configuration_adapts_to_the_open_file_limit_and_the_build(tmp_path: Path) -> None:
    config = NginxConfig(
        prefix=tmp_path,
        host="127.0.0.1",
        port=1,
        worker_processes=1,
        response="hello",
        open_files=1024,
        missing_modules=launcher.missing_modules(
            "configure arguments: --without-http_uwsgi_module --without-http_scgi_module"
        ),
    )
    assert config.worker_connections == 1024 - 256
    text = config.text()
    assert "uwsgi_temp_path" not in text and "scgi_temp_path" not in text and "fastcgi_temp_path" in text
    assert "default_type text/plain;" in text and 'return 200 "Hello World!";' in text


def test_file_response_is_served_from_its_directory(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text("<p>hi</p>")
    lines = response_location(f"file:{page}")
    assert f'root "{tmp_path}";' in lines and 'try_files "/index.html" =404;' in lines
    assert "default_type text/html;" in lines
    with pytest.raises(ValueError, match="no such file"):
        response_location(f"file:{tmp_path / 'missing.txt'}")
    (tmp_path / "$x").write_text("")
    with pytest.raises(ValueError, match="contains"):
        response_location("file:" + str(tmp_path / "$x"))  # nginx would read $x as a variable


def test_stub_status_and_the_launchers_own_traffic() -> None:
    body = (
        b"Active connections: 1 \nserver accepts handled requests\n 19 19 75860 \nReading: 0 Writing: 1 Waiting: 0 \n"
    )
    assert parse_stub_status(body) == (19, 75860)
    line = launcher.shutdown_line(
        worker_processes=4,
        accepts=19,
        requests=75860,
        own=launcher.OwnTraffic(connections=2, requests=2),
        response_bytes=143,
        usage=None,
    )
    assert line == {
        "architecture": "nginx",
        "threads": 4,
        "connections_accepted": 17,
        "connections_served": None,
        "requests_served": 75858,
        "bad_requests": None,
        "connection_resets": None,
        "errors": 0,
        "response_bytes": 143,
        "cpu_user_s": None,
        "cpu_sys_s": None,
    }


# --------------------------------------------------------------------------- the launcher alone


def start_launcher(repo_env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "archbench.measure.nginx", *args],
        cwd=REPO_ROOT,
        env=repo_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_launcher_fails_with_nginxs_stderr_when_nginx_does_not_start(tmp_path: Path, repo_env) -> None:
    fake = write_executable(
        tmp_path / "nginx", "#!/bin/sh\necho 'nginx: [emerg] pretend the config is bad' >&2\nexit 1\n"
    )
    proc = start_launcher(repo_env, "--nginx", str(fake))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert out == ""  # no ready line, no JSON
    assert "nginx exited with status 1 at start-up: nginx: [emerg] pretend the config is bad" in err
    prefix, _ = launcher_facts(err)
    assert not Path(prefix).exists()  # the temporary prefix is removed


def test_launcher_without_nginx_names_the_install_command(tmp_path: Path, repo_env) -> None:
    proc = start_launcher(repo_env, "--nginx", str(tmp_path / "no-such-nginx"))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and "apt-get install nginx-light" in err


@needs_nginx
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_launcher_stops_nginx_on_sigterm_and_sigint(stop_signal: int, repo_env) -> None:
    proc = start_launcher(repo_env, "--worker-processes", "2")
    try:
        ready = proc.stdout.readline()
        assert re.fullmatch(r"listening on 127\.0\.0\.1:\d+\n", ready), ready
        proc.send_signal(stop_signal)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    stats = json.loads(out)
    assert (stats["architecture"], stats["threads"], stats["connections_accepted"], stats["requests_served"]) == (
        "nginx",
        2,
        0,
        0,
    )  # the launcher's own probe and status requests are not counted
    assert stats["response_bytes"] > 100 and stats["cpu_user_s"] + stats["cpu_sys_s"] > 0
    prefix, master = launcher_facts(err)
    assert nginx_processes(prefix) == [] and group_members(master) == []
    assert not Path(prefix).exists()


@needs_nginx
def test_nginx_dies_with_a_launcher_killed_outright(repo_env) -> None:
    proc = start_launcher(repo_env, "--worker-processes", "2")
    try:
        assert proc.stdout.readline().startswith("listening on ")
        os.kill(proc.pid, signal.SIGKILL)  # the launcher only, not its (or nginx's) group
        proc.wait(timeout=10)
        _, err = proc.communicate(timeout=10)
        prefix, master = launcher_facts(err)
        assert wait_until(lambda: nginx_processes(prefix) == [] and group_members(master) == []), nginx_processes(
            prefix
        )
        # A launcher killed outright cannot remove its temporary prefix; the test does.
        shutil.rmtree(prefix)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# --------------------------------------------------------------------------- through the runner


def nginx_params(cpu_pair, tmp_path: Path, **overrides):
    server_cpus, load_cpus = cpu_pair
    values = dict(
        servers=["nginx"],
        thread_counts=[2],
        connection_counts=[16],
        trials=1,
        warmup=False,
        duration_s=1,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        raw_root=str(tmp_path / "raw"),
        campaign="ngx",
        seed=1,
    )
    values.update(overrides)
    return resolve_parameters("smoke", **values)


@needs_nginx
@pytest.mark.parametrize("depth", [1, 16])
def test_real_nginx_trial_through_the_runner(depth: int, load_tools, cpu_pair, tmp_path: Path) -> None:
    params = nginx_params(cpu_pair, tmp_path, pipeline_depths=[depth])
    planned = plan_campaign(params)[0]
    outcome = run_trial(planned, params, provenance={})
    record = outcome.record
    assert (record["status"], record["failure_reason"]) == ("ok", None), record["failure_reason"]
    assert record["trial_id"] == ("nginx-t2-c16-lt1-d1s-r01" if depth == 1 else "nginx-t2-c16-lt1-d1s-p16-r01")

    server, load = record["server"], record["load"]
    assert server["argv"][:6] == ["taskset", "-c", cpu_pair[0], sys.executable, "-m", "archbench.measure.nginx"]
    assert (server["exit_code"], server["signal_sent"], server["cpu_source"]) == (0, "SIGTERM", "stats")
    stats = server["stats"]
    assert (stats["architecture"], stats["threads"], stats["errors"]) == ("nginx", 2, 0)
    assert stats["connections_served"] is None and stats["bad_requests"] is None and stats["connection_resets"] is None

    parsed = parse_output("wrk", outcome.outputs[load["output_file"]].decode())
    assert parsed["total_requests"] > 1000 and parsed["flags"] == []
    # Counters: wrk's connections (wrk opens one more to start), every request wrk counted and at most the
    # ones still in flight when it stopped.
    assert 16 <= stats["connections_accepted"] <= 17
    assert parsed["total_requests"] <= stats["requests_served"] <= parsed["total_requests"] + 16 * depth
    # The measured response length is what wrk read per response.
    assert stats["response_bytes"] == pytest.approx(parsed["bytes_read"] / parsed["total_requests"], abs=0.5)
    # nginx's own CPU is part of the launcher's tree, which also holds the launcher's Python start-up.
    nginx_cpu = stats["cpu_user_s"] + stats["cpu_sys_s"]
    assert 0 < nginx_cpu < server["cpu_user_s"] + server["cpu_sys_s"]
    assert 0 < load["cpu_utilisation"] <= 1.05

    prefix, master = launcher_facts(outcome.outputs[server["output_file"]].decode())
    assert nginx_processes(prefix) == [] and group_members(master) == []
    assert not Path(prefix).exists()


def test_missing_nginx_fails_before_any_trial(monkeypatch: pytest.MonkeyPatch, cpu_pair, tmp_path: Path) -> None:
    monkeypatch.setattr("archbench.config.nginx_spec.find_nginx", lambda: None)
    params = nginx_params(cpu_pair, tmp_path)
    with pytest.raises(PreflightError, match=r"nginx is not installed .*apt-get install nginx-light"):
        run_campaign(params, stream=io.StringIO())
    assert not (tmp_path / "raw").exists()
