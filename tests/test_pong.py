"""pong, the reference floor (source 002's upper bound): its registry entry, what campaigns may ask of it, and the
binary under wrk beside epoll's answers. Its socket-level conformance is CTest's pong_conformance_t*."""

from __future__ import annotations

import signal
import socket
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import REAL_BUILD_DIR, REPO_ROOT

from archbench.analyze.labels import Labeller
from archbench.cli.main import main
from archbench.config.params import ParameterError, resolve_parameters
from archbench.config.plan import TrialConfig
from archbench.config.servers import server_spec, server_specs, upper_bound_architectures
from archbench.config.topology import read_topology
from archbench.measure.server_protocol import exact_shutdown_stats, parse_ready_line

REFERENCE_TREE = REPO_ROOT / "tests" / "fixtures" / "topology" / "2cpu"
REFERENCE = read_topology(REFERENCE_TREE)
PONG = REAL_BUILD_DIR / "bin" / "pong"
REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
RESPONSE = b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\nContent-Type: text/html\r\n\r\ntest"


def test_pong_is_the_registrys_only_reference_floor_and_says_so() -> None:
    pong = server_spec("pong")
    assert pong.upper_bound and pong.label == "pong (reference floor)"
    # Every table and figure names it so too (summary.csv's family and variant).
    labels = Labeller(pd.DataFrame())
    assert (
        labels.family({"architecture": "pong"}) == labels.variant({"architecture": "pong", "threads": 2}) == pong.label
    )
    assert upper_bound_architectures() == ("pong",)
    assert all(not spec.upper_bound and spec.label == name for name, spec in server_specs().items() if name != "pong")
    assert list(server_specs())[-1] == "pong"


def test_pong_serves_http_only_with_the_common_flags() -> None:
    pong = server_spec("pong")
    assert pong.serves("http") and not pong.serves("echo")
    assert server_spec("epoll").serves("echo")  # the other servers keep both protocols
    config = TrialConfig("pong", 100, 1, 5, threads=2).as_dict()
    assert pong.command(config, Path("build")) == [
        "build/bin/pong",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--threads",
        "2",
        "--response",
        "test",
    ]


def test_campaigns_may_sweep_pong_threads_but_not_echo_it() -> None:
    params = resolve_parameters(
        "smoke", check_host=False, topology=REFERENCE, servers=["pong"], thread_counts=[1, 2], connection_counts=[100]
    )
    assert [s.architecture for s in params.servers] == ["pong"]
    with pytest.raises(ParameterError, match="pong does not serve proto echo"):
        resolve_parameters("smoke", check_host=False, topology=REFERENCE, servers=["pong"], proto="echo")


def test_the_dry_run_lists_pong_configurations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--profile", "smoke", "--dry-run", "--campaign", "pong-dry", "--raw-root", str(tmp_path)]
    argv += ["--topology-root", str(REFERENCE_TREE), "--servers", "pong", "--thread-counts", "1", "2"]
    assert main([*argv, "--connection-counts", "100"]) == 0
    assert capsys.readouterr().out.splitlines()[1:-1] == ["pong-t1-c100-lt1-d1s", "pong-t2-c100-lt1-d1s"]


@pytest.fixture
def pong_binary(real_build_dir: Path) -> Path:
    if not PONG.is_file():
        pytest.skip(f"{PONG} not built")
    return PONG


def start(binary: Path, *args: str) -> tuple[subprocess.Popen, int]:
    server = subprocess.Popen(
        [str(binary), "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    ready = parse_ready_line(server.stdout.readline())
    assert ready is not None
    return server, ready.port


def stop(server: subprocess.Popen) -> dict:
    server.send_signal(signal.SIGTERM)
    out, err = server.communicate(timeout=20)
    assert server.returncode == 0, err
    return exact_shutdown_stats(out)


def read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, f"closed after {len(data)} of {n} bytes"
        data += chunk
    return data


@pytest.mark.parametrize("threads", ["1", "2"])
def test_pong_answers_pipelined_and_split_requests_byte_exact(pong_binary: Path, threads: str) -> None:
    server, port = start(pong_binary, "--threads", threads)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(REQUEST * 16)
            assert read_exactly(s, 16 * len(RESPONSE)) == RESPONSE * 16
            s.sendall(REQUEST[:-2])
            s.sendall(REQUEST[-2:] + REQUEST[:-3])
            s.sendall(REQUEST[-3:])
            assert read_exactly(s, 2 * len(RESPONSE)) == RESPONSE * 2
    finally:
        stats = stop(server)
    assert stats["architecture"] == "pong" and stats["threads"] == int(threads)
    assert stats["requests_served"] == 18 and stats["connections_served"] == 1 and stats["errors"] == 0


def test_pong_under_wrk_answers_every_request(pong_binary: Path, load_tools: None) -> None:
    server, port = start(pong_binary)
    try:
        wrk = subprocess.run(
            ["wrk", "-t1", "-c50", "-d1s", f"http://127.0.0.1:{port}/"], capture_output=True, text=True, timeout=30
        )
    finally:
        stats = stop(server)
    assert wrk.returncode == 0 and "Socket errors" not in wrk.stdout and "Non-2xx" not in wrk.stdout, wrk.stdout
    completed = int(wrk.stdout.split(" requests in")[0].split()[-1])
    assert completed > 0 and stats["requests_served"] >= completed
    assert stats["connections_served"] == 50 and stats["errors"] == 0
