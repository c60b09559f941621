"""The runner against the real thread_pool server and against fake servers that misbehave."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from archbench.config.params import resolve_parameters
from archbench.config.plan import plan_campaign
from archbench.measure.runner import campaign_overview, run_campaign, run_trial
from archbench.parse import parse_file


def process_gone(pid: int) -> bool:
    """True once `pid` no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_until(condition, limit_s: float = 10.0) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def processes_mentioning(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline and not process_gone(int(entry.name)):
            pids.append(int(entry.name))
    return pids


def single_trial(params):
    """The first trial of the plan of `params` (a seed is filled in)."""
    return plan_campaign(params.with_seed(1))[0]


def fake_params(build_dir: Path, cpu_pair, tmp_path: Path, **overrides):
    server_cpus, load_cpus = cpu_pair
    values = dict(
        servers=["blocking"],
        connection_counts=[4],
        trials=1,
        warmup=False,
        duration_s=1,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(build_dir),
        raw_root=str(tmp_path / "raw"),
        campaign="fake",
        ready_timeout_s=1.0,
        stop_grace_s=2.0,
        wrk_timeout_s=1,
        seed=1,
    )
    values.update(overrides)
    return resolve_parameters("smoke", **values)


# --------------------------------------------------------------------------- the real server


def test_trial_end_to_end_against_thread_pool(real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path) -> None:
    server_cpus, load_cpus = cpu_pair
    params = resolve_parameters(
        "smoke",
        servers=["thread_pool"],
        thread_counts=[1],
        connection_counts=[16],
        duration_s=1,
        trials=1,
        warmup=False,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(real_build_dir),
        raw_root=str(tmp_path),
        campaign="e2e",
        seed=5,
        max_reruns=0,  # one trial's files, whatever else this machine runs meanwhile
    )
    result = run_campaign(params, stream=io.StringIO())
    assert (result.planned, result.ran, dict(result.statuses)) == (1, 1, {"ok": 1})

    trial_id = "thread_pool-request-queue-t1-c16-lt1-d1s-r01"
    campaign_dir = tmp_path / "e2e"
    assert sorted(p.name for p in campaign_dir.iterdir()) == sorted(
        ["campaign.json", f"{trial_id}.json", f"{trial_id}.wrk.txt", f"{trial_id}.server.txt"]
    )
    record = json.loads((campaign_dir / f"{trial_id}.json").read_text())
    assert (record["status"], record["failure_reason"], record["schema"]) == ("ok", None, 1)
    assert (record["repetition"], record["warmup"], record["order_index"], record["seed"]) == (1, False, 0, 5)
    assert record["config"]["threads"] == 1 and record["config"]["connections"] == 16

    server, load = record["server"], record["load"]
    assert server["argv"][:4] == ["taskset", "-c", server_cpus, str(real_build_dir / "bin" / "thread_pool")]
    assert server["argv"][4:] == [
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--threads",
        "1",
        "--dispatch",
        "request",
        "--handoff",
        "queue",
        "--response",
        "test",
    ]
    assert server["cpus"] == server_cpus and load["cpus"] == load_cpus
    assert server["ready_line"].startswith("listening on 127.0.0.1:")
    assert (server["exit_code"], server["signal_sent"]) == (0, "SIGTERM")
    assert server["stats"]["architecture"] == "thread_pool" and server["stats"]["threads"] == 1
    assert server["cpu_user_s"] + server["cpu_sys_s"] > 0
    port = server["ready_line"].rsplit(":", 1)[1]
    assert load["argv"] == [
        "taskset",
        "-c",
        load_cpus,
        "wrk",
        "-t1",
        "-c16",
        "-d1s",
        "--latency",
        "--timeout",
        "2s",
        "-s",
        str(REPO_ROOT / "archbench" / "config" / "lua" / "pipeline.lua"),
        f"http://127.0.0.1:{port}/",
    ]
    assert load["exit_code"] == 0 and load["wall_s"] >= 1.0
    assert load["cpu_user_s"] + load["cpu_sys_s"] > 0
    # One load CPU: utilisation is wrk's CPU seconds per wall second.
    assert load["cpu_utilisation"] == pytest.approx((load["cpu_user_s"] + load["cpu_sys_s"]) / load["wall_s"], abs=1e-5)
    assert 0 < load["cpu_utilisation"] <= 1.05
    assert server["cpu_source"] == "tree"
    # Busy fractions of the two CPU sets over the load, interrupt and softirq time included.
    assert 0 < load["cpus_busy"] <= 1 and 0 < server["cpus_busy"] <= 1

    parsed = parse_file(campaign_dir / load["output_file"])
    assert parsed["connections"] == 16 and parsed["total_requests"] > 0
    assert server["stats"]["requests_served"] >= parsed["total_requests"]
    server_output = (campaign_dir / server["output_file"]).read_text()
    assert server_output.startswith(server["ready_line"] + "\n")
    assert json.loads(server_output.strip().splitlines()[-1]) == server["stats"]

    provenance = record["provenance"]
    assert provenance["build_type"] == "Release" and provenance["os_family"] == "Linux"
    assert provenance["tools"]["wrk"].startswith("wrk ")
    assert provenance == json.loads((campaign_dir / "campaign.json").read_text())["provenance"]

    overview = campaign_overview(campaign_dir)
    assert overview[0]["config"] == "thread_pool-request-queue-t1-c16-lt1-d1s"
    # A trial other work disturbed (on a busy machine) is counted, never averaged.
    disturbed = record["interference"]["disturbed"]
    assert overview[0]["ok"] == 1 and overview[0]["disturbed"] == int(disturbed)
    assert overview[0]["median_req_per_s"] == (None if disturbed else parsed["requests_per_sec"])


# --------------------------------------------------------------------------- failing servers


def test_server_that_never_gets_ready_fails_and_is_killed_with_its_children(
    fake_build_dir, cpu_pair, tmp_path: Path
) -> None:
    build = fake_build_dir(
        "blocking",
        f"""#!/bin/sh
echo $$ > {tmp_path}/leader.pid
sleep 60 &
echo $! > {tmp_path}/child.pid
echo "warming up forever"
wait
""",
    )
    params = fake_params(build, cpu_pair, tmp_path, ready_timeout_s=0.5)
    outcome = run_trial(single_trial(params), params, provenance={})
    record = outcome.record
    assert record["status"] == "failed"
    assert record["failure_reason"] == "no ready line ('listening on HOST:PORT') within 0.5 s"
    assert record["server"]["signal_sent"] == "SIGTERM"
    assert record["load"]["argv"] is None  # the load generator never started
    assert list(outcome.outputs) == ["blocking-c4-lt1-d1s-r01.server.txt"]
    assert b"warming up forever" in outcome.outputs["blocking-c4-lt1-d1s-r01.server.txt"]
    for name in ("leader.pid", "child.pid"):
        pid = int((tmp_path / name).read_text())
        assert wait_until(lambda pid=pid: process_gone(pid)), f"{name} {pid} survived"


def test_server_exiting_before_ready_fails_with_status_and_output(fake_build_dir, cpu_pair, tmp_path: Path) -> None:
    build = fake_build_dir("blocking", "#!/bin/sh\necho 'blocking: bind: Address already in use' >&2\nexit 1\n")
    params = fake_params(build, cpu_pair, tmp_path)
    record = run_trial(single_trial(params), params, provenance={}).record
    assert record["status"] == "failed"
    assert record["failure_reason"] == (
        "server exited with status 1 before its ready line; output tail: blocking: bind: Address already in use"
    )
    assert record["server"]["exit_code"] == 1 and record["server"]["signal_sent"] is None


def test_server_reporting_a_missing_kernel_feature_is_unsupported(fake_build_dir, cpu_pair, tmp_path: Path) -> None:
    build = fake_build_dir("blocking", "#!/bin/sh\necho 'kernel lacks io_uring' >&2\nexit 3\n")
    params = fake_params(build, cpu_pair, tmp_path)
    record = run_trial(single_trial(params), params, provenance={}).record
    assert record["status"] == "unsupported"
    assert "kernel lacks io_uring" in record["failure_reason"]


def test_io_uring_exiting_with_status_3_is_unsupported_with_its_message(
    fake_build_dir, cpu_pair, tmp_path: Path
) -> None:
    # A stand-in for build/bin/io_uring on a kernel without it (the real one may work here).
    build = fake_build_dir(
        "io_uring",
        "#!/bin/sh\necho 'io_uring: io_uring_queue_init: Function not implemented "
        "(kernel without io_uring)' >&2\nexit 3\n",
    )
    params = fake_params(build, cpu_pair, tmp_path, servers=["io_uring"], thread_counts=[1])
    outcome = run_trial(single_trial(params), params, provenance={})
    record = outcome.record
    assert record["trial_id"] == "io_uring-t1-c4-lt1-d1s-r01"
    assert record["status"] == "unsupported"
    assert record["failure_reason"] == (
        "server reports an unsupported feature (exit status 3): "
        "io_uring: io_uring_queue_init: Function not implemented (kernel without io_uring)"
    )
    assert record["server"]["exit_code"] == 3 and record["load"]["argv"] is None
    assert record["server"]["argv"][3:] == [
        str(build / "bin" / "io_uring"),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--threads",
        "1",
        "--response",
        "test",
    ]


def test_load_cpu_utilisation_divides_by_the_load_cpus() -> None:
    from archbench.measure.runner import cpu_utilisation

    assert cpu_utilisation(1.5, 2.0, "1") == 0.75
    assert cpu_utilisation(3.0, 2.0, "1-2") == 0.75
    assert cpu_utilisation(1.0, 0.0, "1") is None


def test_server_not_on_loopback_is_not_loaded(fake_build_dir, cpu_pair, tmp_path: Path) -> None:
    build = fake_build_dir("blocking", "#!/bin/sh\necho 'listening on 0.0.0.0:8080'\nexec sleep 60\n")
    params = fake_params(build, cpu_pair, tmp_path)
    record = run_trial(single_trial(params), params, provenance={}).record
    assert record["status"] == "failed"
    assert record["failure_reason"] == "server listens on 0.0.0.0, not on loopback; not loading it"
    assert record["load"]["argv"] is None


PYTHON_FAKE_SERVER = """#!{python}
import signal, socket, sys, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(f"listening on 127.0.0.1:{{listener.getsockname()[1]}}", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
{behaviour}
"""


def test_server_without_shutdown_json_fails(fake_build_dir, load_tools, cpu_pair, tmp_path: Path) -> None:
    # Accepts nothing, answers nothing, exits 0 on SIGTERM without the JSON line.
    build = fake_build_dir("blocking", PYTHON_FAKE_SERVER.format(python=sys.executable, behaviour="time.sleep(60)"))
    params = fake_params(build, cpu_pair, tmp_path)
    outcome = run_trial(single_trial(params), params, provenance={})
    record = outcome.record
    assert record["status"] == "failed"
    assert record["failure_reason"] == "no shutdown JSON line in the server's output"
    assert record["server"]["exit_code"] == 0 and record["server"]["stats"] is None
    assert record["load"]["exit_code"] == 0
    wrk_output = outcome.outputs["blocking-c4-lt1-d1s-r01.wrk.txt"].decode()
    assert "0 requests in" in wrk_output


def test_server_crashing_during_the_load_fails(fake_build_dir, load_tools, cpu_pair, tmp_path: Path) -> None:
    build = fake_build_dir(
        "blocking",
        PYTHON_FAKE_SERVER.format(
            python=sys.executable,
            behaviour="time.sleep(0.3)\nprint('segfault, pretend', file=sys.stderr)\nsys.exit(139)",
        ),
    )
    params = fake_params(build, cpu_pair, tmp_path)
    record = run_trial(single_trial(params), params, provenance={}).record
    assert record["status"] == "failed"
    assert record["failure_reason"] == (
        "server exited on its own during the load with status 139; output tail: listening on 127.0.0.1:"
        f"{record['server']['ready_line'].rsplit(':', 1)[1]}\nsegfault, pretend; "
        "no shutdown JSON line in the server's output"
    )
    assert record["server"]["signal_sent"] is None


def test_a_crashing_server_fails_its_trials_and_the_campaign_goes_on(
    fake_build_dir, load_tools, cpu_pair, tmp_path: Path
) -> None:
    build = fake_build_dir(
        "blocking",
        PYTHON_FAKE_SERVER.format(
            python=sys.executable,
            behaviour="time.sleep(0.3)\nprint('segfault, pretend', file=sys.stderr)\nsys.exit(139)",
        ),
    )
    params = fake_params(build, cpu_pair, tmp_path, trials=2, connection_counts=[4, 8])
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"failed": 4}  # every planned trial ran and was recorded
    reasons = {json.loads(p.read_text())["failure_reason"] for p in (tmp_path / "raw" / "fake").glob("*-r0*.json")}
    assert all("status 139" in r and "segfault, pretend" in r for r in reasons)


def test_failed_trials_are_recorded_not_dropped(fake_build_dir, cpu_pair, tmp_path: Path) -> None:
    build = fake_build_dir("blocking", "#!/bin/sh\nexit 1\n")
    params = fake_params(build, cpu_pair, tmp_path, trials=2, connection_counts=[4, 8])
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"failed": 4}
    records = [json.loads(p.read_text()) for p in (tmp_path / "raw" / "fake").glob("*-r0*.json")]
    assert len(records) == 4 and {r["status"] for r in records} == {"failed"}
    overview = campaign_overview(tmp_path / "raw" / "fake")
    assert [(row["failed"], row["ok"], row["median_req_per_s"]) for row in overview] == [(2, 0, None), (2, 0, None)]


# --------------------------------------------------------------------------- interrupting a campaign


@pytest.mark.slow
def test_interrupted_campaign_resumes_with_each_trial_exactly_once(
    real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path, repo_env: dict[str, str]
) -> None:
    # A private build directory (links to the real binaries) makes this campaign's processes recognisable.
    build = tmp_path / "build-link"
    (build / "bin").mkdir(parents=True)
    (build / "bin" / "thread_pool").symlink_to(real_build_dir / "bin" / "thread_pool")
    (build / "build-info.json").symlink_to(real_build_dir / "build-info.json")
    raw = tmp_path / "raw"
    server_cpus, load_cpus = cpu_pair
    command = [
        sys.executable,
        "-m",
        "archbench",
        "run",
        "--profile",
        "smoke",
        "--campaign",
        "intr",
        "--raw-root",
        str(raw),
        "--build-dir",
        str(build),
        "--servers",
        "thread_pool",
        "--thread-counts",
        "1",
        "2",
        "--trials",
        "2",
        "--no-warmup",
        "--duration-s",
        "1",
        "--server-cpus",
        server_cpus,
        "--load-cpus",
        load_cpus,
        "--seed",
        "3",
        "--wrk-timeout-s",
        "9",
    ]  # "--timeout 9s" marks this test's wrk processes

    first = subprocess.Popen(
        command, cwd=REPO_ROOT, env=repo_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:

        def records() -> list[Path]:
            return (
                [p for p in (raw / "intr").glob("*.json") if p.name != "campaign.json"]
                if (raw / "intr").is_dir()
                else []
            )

        assert wait_until(lambda: len(records()) >= 1, limit_s=60), "no trial finished"
        first.send_signal(signal.SIGINT)
        _, stderr = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 130, stderr
    assert "run the same command again to resume" in stderr

    def ours() -> list[int]:
        return processes_mentioning(str(build)) + processes_mentioning("wrk -t1 -c16 -d1s --latency --timeout 9s")

    left = ours() if not wait_until(lambda: ours() == []) else []
    assert left == [], "left running: " + "; ".join(
        Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode() for pid in left
    )

    kept = {p.name: (p.stat().st_ino, p.read_bytes()) for p in records()}
    planned_kept = [name for name in kept if "-rerun" not in name]
    assert 1 <= len(planned_kept) < 4

    second = subprocess.run(command, cwd=REPO_ROOT, env=repo_env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert f"{len(planned_kept)} already done" in second.stderr

    plan = json.loads((raw / "intr" / "campaign.json").read_text())["plan"]
    assert len(plan) == 4
    # On a busy machine a disturbed trial is run again beside it (archbench.measure.reruns): each re-run names a
    # disturbed trial of the campaign; apart from them, every planned trial's files exactly once.
    reruns = {p.name: json.loads(p.read_text()) for p in (raw / "intr").glob("*-rerun*.json")}
    for record in reruns.values():
        replaced = json.loads((raw / "intr" / f"{record['reruns']}.json").read_text())
        assert replaced["interference"]["disturbed"] and replaced["repetition"] == record["repetition"]
    names = sorted(p.name for p in (raw / "intr").iterdir() if "-rerun" not in p.name)
    expected = sorted(
        ["campaign.json"] + [f"{t}{suffix}" for t in plan for suffix in (".json", ".wrk.txt", ".server.txt")]
    )
    assert names == expected  # every trial exactly once, nothing else
    for name, (inode, content) in kept.items():
        path = raw / "intr" / name
        assert (path.stat().st_ino, path.read_bytes()) == (inode, content)  # never rewritten
    assert {json.loads((raw / "intr" / f"{t}.json").read_text())["status"] for t in plan} == {"ok"}


def test_pipelined_trial_against_epoll_edge(real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path) -> None:
    if not (real_build_dir / "bin" / "epoll").is_file():
        pytest.skip("epoll not built")
    server_cpus, load_cpus = cpu_pair
    params = resolve_parameters(
        "smoke",
        servers=["epoll:trigger=edge"],
        connection_counts=[16],
        pipeline_depths=[16],
        duration_s=1,
        trials=1,
        warmup=False,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(real_build_dir),
        raw_root=str(tmp_path),
        campaign="pipe",
        seed=5,
    )
    outcome = run_trial(single_trial(params), params, provenance={})
    record = outcome.record
    assert (record["trial_id"], record["status"]) == ("epoll-edge-c16-lt1-d1s-p16-r01", "ok"), record["failure_reason"]
    assert record["config"]["pipeline"] == 16 and record["config"]["trigger"] == "edge"
    assert record["server"]["argv"][-4:] == ["--trigger", "edge", "--response", "test"]
    argv = record["load"]["argv"]
    assert argv[argv.index("-s") + 1] == str(REPO_ROOT / "archbench" / "config" / "lua" / "pipeline.lua")
    assert argv[-2:] == ["--", "16"]
    from archbench.parse import parse_output

    parsed = parse_output("wrk", outcome.outputs[record["load"]["output_file"]].decode())
    stats = record["server"]["stats"]
    assert parsed["flags"] == [] and parsed["total_requests"] > 0
    assert parsed["total_requests"] <= stats["requests_served"] <= parsed["total_requests"] + 16 * 16


def test_cpu_busy_fraction_from_proc_stat(tmp_path: Path) -> None:
    from archbench.measure.cpustat import busy_fraction, read_cpu_times

    stat = tmp_path / "stat"
    stat.write_text("cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 100 0 100 700 100 0 0 0 0 0\ncpu1 10 0 10 80 0 0 0 0 0 0\nintr 1\n")
    before = read_cpu_times(stat)
    assert before == {0: (200, 1000), 1: (20, 100)}
    # CPU 0: 60 of 100 ticks busy (user, system, softirq); idle and iowait are not busy.
    after = {0: (260, 1100), 1: (20, 200)}
    assert busy_fraction(before, after, [0]) == 0.6
    assert busy_fraction(before, after, [0, 1]) == 0.3
    assert busy_fraction(before, after, [2]) is None and busy_fraction(None, after, [0]) is None
    assert read_cpu_times(tmp_path / "missing") is None
