"""The sources profile: each source's protocol as entries labelled by source, per-entry response and load
generator, the 151-byte file of source 002, and the dry run that lists each source's configurations with flags."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from archbench.cli.main import main
from archbench.config.params import ParameterError, parse_server_entry, resolve_parameters
from archbench.config.plan import expand_grid
from archbench.config.profiles import profile_values
from archbench.config.topology import read_topology

REPO_ROOT = Path(__file__).resolve().parents[1]
REFERENCE_TREE = REPO_ROOT / "tests" / "fixtures" / "topology" / "2cpu"
REFERENCE = read_topology(REFERENCE_TREE)
SOURCE_002_FILE = REPO_ROOT / "data" / "external" / "source002_index.html"


@pytest.fixture(autouse=True)
def _at_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    # The profile names source 002's file relative to the repository root, where make runs.
    monkeypatch.chdir(REPO_ROOT)


def sources_grid():
    return expand_grid(resolve_parameters("sources", check_host=False, topology=REFERENCE))


def test_every_entry_names_its_source() -> None:
    entries = profile_values("sources")["servers"]
    assert all(isinstance(entry, dict) and entry.get("source") in {"000", "001", "002", "003"} for entry in entries)


def test_source_000_pool_sizes_are_its_threads_minus_one() -> None:
    grid = [c for c in sources_grid() if c.source == "000"]
    assert sorted(c.threads for c in grid) == [k - 1 for k in (2, 4, 6, 8, 10, 12)]
    assert {(c.architecture, dict(c.options)["dispatch"], c.connections, c.duration_s) for c in grid} == {
        ("thread_pool", "request", 400, 5)
    }
    assert {c.response for c in grid} == {"test"}


def test_source_002_serves_its_151_byte_file_with_one_to_eight_workers() -> None:
    grid = [c for c in sources_grid() if c.source == "002"]
    under_wrk = [c for c in grid if c.load_generator == "wrk"]
    for architecture in ("prefork", "nginx"):
        assert sorted(c.threads for c in under_wrk if c.architecture == architecture) == list(range(1, 9))
    assert {c.response for c in grid} == {"file:data/external/source002_index.html"}
    assert {c.connections for c in grid} == {1000}


def test_source_002_runs_httperf_at_one_worker_and_pong_as_its_upper_bound() -> None:
    grid = [c for c in sources_grid() if c.source == "002"]
    httperf = [c for c in grid if c.load_generator == "httperf"]
    assert sorted((c.architecture, c.threads) for c in httperf) == [("nginx", 1), ("pong", 1), ("prefork", 1)]
    assert {
        (c.as_dict()["httperf_calls"], c.as_dict()["httperf_rate"], c.as_dict()["httperf_hog"]) for c in httperf
    } == {(100, 100000, True)}
    assert {c.load_generator for c in grid if c.architecture == "pong"} == {"wrk", "httperf"}


def test_source_002_file_is_nginx_index_html_byte_exact() -> None:
    body = SOURCE_002_FILE.read_bytes()
    assert len(body) == 151
    assert body.startswith(b"<html>\n<head>\n<title>Welcome to nginx!</title>") and body.endswith(b"</html>\n")
    assert hashlib.sha256(body).hexdigest() == "6f0e2620a2a986c8329612f1db92f273949a58480290ace72eca7f1dba1a5c98"


def test_source_003_hello_and_stack_handoff_at_32_and_64_connections() -> None:
    grid = [c for c in sources_grid() if c.source == "003"]
    assert {c.response for c in grid} == {"hello"}
    assert {c.connections for c in grid} == {32, 64}
    pools = [dict(c.options) for c in grid if c.architecture == "thread_pool"]
    assert pools and all(o["dispatch"] == "connection" and o["handoff"] == "stack" for o in pools)
    assert {c.architecture for c in grid} == {"blocking", "thread_per_conn", "thread_pool"}


def test_source_is_recorded_per_configuration_but_not_in_its_id() -> None:
    config = next(c for c in sources_grid() if c.source == "003")
    assert config.as_dict()["source"] == "003"
    assert "003" not in config.config_id
    assert (
        "source"
        not in next(c for c in expand_grid(resolve_parameters("smoke", check_host=False, topology=REFERENCE))).as_dict()
    )


def test_entry_labels_are_validated() -> None:
    assert parse_server_entry("blocking:source=003,response=hello", "servers").source == "003"
    with pytest.raises(ParameterError, match="not a source number"):
        parse_server_entry({"architecture": "blocking", "source": "three"}, "servers")
    with pytest.raises(ParameterError, match="no such file"):
        parse_server_entry({"architecture": "blocking", "response": "file:/nonexistent/x.html"}, "servers")
    with pytest.raises(ParameterError, match="valid:"):
        parse_server_entry({"architecture": "blocking", "load_generator": "ab"}, "servers")


def test_an_entry_cannot_take_an_open_loop_or_echo_generator() -> None:
    with pytest.raises(ParameterError, match="closed loop"):
        resolve_parameters(
            "smoke",
            check_host=False,
            topology=REFERENCE,
            servers=[{"architecture": "blocking", "load_generator": "echo_client"}],
        )


def test_dry_run_groups_configurations_by_source_with_their_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "run",
        "--profile",
        "sources",
        "--dry-run",
        "--raw-root",
        str(tmp_path),
        "--topology-root",
        str(REFERENCE_TREE),
    ]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    headings = [line for line in lines if line.startswith("source ")]
    assert [h.split(":")[0] for h in headings] == ["source 000", "source 001", "source 002", "source 003", "source 004"]
    assert (
        "  thread_pool-request-queue-t11-c400-lt1-d5s: thread_pool --threads 11 --dispatch request --handoff queue "
        f"--response test | wrk -t1 -c400 -d5s --latency --timeout 2s -s {REPO_ROOT}/archbench/config/lua/pipeline.lua "
        "http://127.0.0.1:PORT/"
    ) in lines
    assert any("--handoff stack --response hello | wrk -t1 -c64" in line for line in lines)
    assert any(line.startswith("  not in this campaign: echo servers") for line in lines)
    assert any("| httperf --hog --timeout 2 --server 127.0.0.1 --port PORT --uri / --num-conns 1000 --num-calls 100 "
               "--rate 100000" in line for line in lines)  # fmt: skip
    assert lines[-1].startswith("42 configurations x 6 runs = 252 trials")
    assert list(tmp_path.iterdir()) == []
