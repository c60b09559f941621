"""`python -m archbench parse|run|notebook`: output, exit statuses, error messages, executed copies."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import papermill
import pytest
from conftest import REPO_ROOT, WRK_FIXTURES

from archbench.cli.main import main
from archbench.cli.notebooks import parse_parameter_value, save_executed_copy
from archbench.parse import parse_file


def test_parse_prints_the_parsed_record_as_json(repo_env: dict[str, str]) -> None:
    fixture = WRK_FIXTURES / "socket_errors.wrk.txt"
    done = subprocess.run(
        [sys.executable, "-m", "archbench", "parse", str(fixture)],
        cwd=REPO_ROOT,
        env=repo_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == parse_file(fixture)
    assert json.loads(done.stdout)["flags"] == ["socket_errors"]


def test_parse_of_something_else_fails_naming_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x-r01.wrk.txt"
    path.write_text("Segmentation fault\n")
    assert main(["parse", str(path)]) == 1
    assert capsys.readouterr().err == "error: line 1 is not wrk output: 'Segmentation fault'\n"


def test_parse_needs_a_known_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "output.txt"
    path.write_text("")
    assert main(["parse", str(path)]) == 1
    assert "expected <trial-id>.<tool>.txt" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--servers", "lighttpd"],
            "servers[0]: unknown architecture 'lighttpd'; valid: blocking, thread_per_conn, "
            "thread_pool, poll, epoll, reactor, reuseport, prefork, io_uring, nginx",
        ),
        (["--pipeline-depths", "0"], "pipeline_depths: 0 is not a positive integer"),
        (["--server-cpus", "0", "--load-cpus", "0"], "load_cpus: overlaps server_cpus on CPU 0"),
        (["--duration-s", "0"], "duration_s: 0 is not a positive integer"),
        (["--connection-counts", "2", "--load-threads", "4"], "load_threads: 4 load threads exceed 2 connections"),
        (["--campaign", "a/b"], "campaign: 'a/b' is not a file-system-safe name"),
    ],
)
def test_run_rejects_bad_parameters_by_name(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--profile", "smoke", "--raw-root", str(tmp_path), *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: invalid parameter {message}") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # failed before anything was created


def test_run_rejects_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", "--profile", "huge"])
    assert caught.value.code == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err


# The reference machine's 2 CPUs: dry runs plan for it on any test host.
REFERENCE_TREE = REPO_ROOT / "tests" / "fixtures" / "topology" / "2cpu"


def test_run_dry_run_lists_configurations(tmp_path: Path, capsys: pytest.CaptureFixture[str], cpu_pair) -> None:
    argv = ["run", "--profile", "smoke", "--dry-run", "--campaign", "dry", "--raw-root", str(tmp_path)]
    assert main([*argv, "--topology-root", str(REFERENCE_TREE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"CPU split: server CPUs 0 (1 core, NUMA node 0), load CPUs 1 (wrk -t1); from {REFERENCE_TREE}/sys "
        "(2 CPUs usable)"
    )
    assert lines[1:-1] == [
        "blocking-c16-lt1-d1s",
        "thread_per_conn-c16-lt1-d1s",
        "thread_pool-request-queue-t1-c16-lt1-d1s",
        "thread_pool-request-queue-t2-c16-lt1-d1s",
        "thread_pool-connection-queue-t1-c16-lt1-d1s",
        "thread_pool-connection-queue-t2-c16-lt1-d1s",
        "epoll-edge-c16-lt1-d1s",
        "epoll-edge-c16-lt1-d1s-p16",
        "nginx-t1-c16-lt1-d1s",
        "nginx-t1-c16-lt1-d1s-p16",
    ]
    assert lines[-1].startswith("10 configurations x 3 runs = 30 trials, about ")
    assert list(tmp_path.iterdir()) == []


def test_run_reports_missing_binaries(tmp_path: Path, capsys: pytest.CaptureFixture[str], cpu_pair) -> None:
    code = main(
        [
            "run",
            "--profile",
            "smoke",
            "--campaign",
            "nobin",
            "--raw-root",
            str(tmp_path / "raw"),
            "--build-dir",
            str(tmp_path / "nobuild"),
            "--server-cpus",
            cpu_pair[0],
            "--load-cpus",
            cpu_pair[1],
        ]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "server binaries missing" in err and "cmake -S servers_c -B build" in err
    assert not (tmp_path / "raw").exists()


def test_parameter_values_from_the_command_line() -> None:
    assert parse_parameter_value("smoke") == "smoke"
    assert parse_parameter_value("2") == 2
    assert parse_parameter_value("[1, 2]") == [1, 2]
    assert parse_parameter_value("null") is None and parse_parameter_value("None") is None
    assert parse_parameter_value("false") is False
    assert parse_parameter_value("0-1") == "0-1"
    assert parse_parameter_value("('a', 'b')") == ("a", "b")


def test_executed_copies_never_overwrite(tmp_path: Path) -> None:
    moment = datetime(2026, 11, 21, 10, 0, 0, tzinfo=timezone.utc)
    first = save_executed_copy(b"one", tmp_path / "executed", "run_trials", now=moment)
    second = save_executed_copy(b"two", tmp_path / "executed", "run_trials", now=moment)
    assert first.name == "run_trials-20261121T100000Z.ipynb"
    assert second.name == "run_trials-20261121T100000Z-2.ipynb"
    assert first.read_bytes() == b"one" and second.read_bytes() == b"two"


@pytest.mark.slow
def test_notebook_with_bad_parameter_fails_naming_it(tmp_path: Path, repo_env: dict[str, str]) -> None:
    raw = tmp_path / "raw"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "archbench",
            "notebook",
            "run_trials",
            "--campaign",
            "nb",
            "--raw-root",
            str(raw),
            "-p",
            "profile",
            "smoke",
            "-p",
            "duration_s",
            "-1",
        ],
        cwd=REPO_ROOT,
        env=repo_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "ParameterError: duration_s: -1 is not a positive integer" in done.stderr
    assert not raw.exists()  # no campaign directory for a campaign that never started


def test_notebook_refuses_a_parameter_its_parameters_cell_does_not_declare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # papermill alone would only warn and run the notebook without it.
    raw = tmp_path / "raw"
    argv = ["notebook", "run_trials", "--campaign", "nb", "--raw-root", str(raw), "-p", "adaptive_critrion", "paired"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "adaptive_critrion: not a parameter of run_trials.ipynb" in error and "adaptive_criterion" in error
    assert not raw.exists()


def test_run_trials_declares_every_adaptive_parameter() -> None:
    declared = set(papermill.inspect_notebook(str(REPO_ROOT / "notebooks" / "run_trials.ipynb")))
    assert {"ci_target", "max_trials", "adaptive_criterion", "adaptive_budget_s", "hosts"} <= declared


@pytest.mark.slow
def test_notebook_runs_a_campaign_and_keeps_each_executed_copy(
    real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path, repo_env: dict[str, str]
) -> None:
    raw = tmp_path / "raw"
    command = [
        sys.executable,
        "-m",
        "archbench",
        "notebook",
        "run_trials",
        "--campaign",
        "nb",
        "--raw-root",
        str(raw),
        "-p",
        "profile",
        "smoke",
        "-p",
        "servers",
        '["thread_pool"]',
        "-p",
        "thread_counts",
        "[1]",
        "-p",
        "trials",
        "1",
        "-p",
        "warmup",
        "false",
        "-p",
        "server_cpus",
        cpu_pair[0],
        "-p",
        "load_cpus",
        cpu_pair[1],
    ]
    first = subprocess.run(command, cwd=REPO_ROOT, env=repo_env, capture_output=True, text=True, timeout=180)
    assert first.returncode == 0, first.stderr
    second = subprocess.run(command, cwd=REPO_ROOT, env=repo_env, capture_output=True, text=True, timeout=180)
    assert second.returncode == 0, second.stderr  # resumes: nothing left to run

    copies = sorted((raw / "nb" / "executed").iterdir())
    assert len(copies) == 2
    assert sorted([Path(first.stdout.strip()), Path(second.stdout.strip())]) == copies
    assert all(c.name.startswith("run_trials-") and c.suffix == ".ipynb" for c in copies)
    executed = json.loads(copies[0].read_text())
    text = json.dumps(executed)
    assert "thread_pool-request-queue-t1-c16-lt1-d1s" in text  # the overview table
    assert (raw / "nb" / "thread_pool-request-queue-t1-c16-lt1-d1s-r01.json").is_file()
    source = (REPO_ROOT / "notebooks" / "run_trials.ipynb").read_text()
    assert "thread_pool-request-queue" not in source  # the source notebook is untouched


def test_run_dry_run_with_pipeline_depths(tmp_path: Path, capsys: pytest.CaptureFixture[str], cpu_pair) -> None:
    assert (
        main(
            [
                "run",
                "--profile",
                "smoke",
                "--dry-run",
                "--topology-root",
                str(REFERENCE_TREE),
                "--raw-root",
                str(tmp_path),
                "--servers",
                "epoll:trigger=edge",
                "prefork",
                "--thread-counts",
                "2",
                "--pipeline-depths",
                "1",
                "16",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines()[1:-1] == [
        "epoll-edge-c16-lt1-d1s",
        "epoll-edge-c16-lt1-d1s-p16",
        "prefork-level-t2-c16-lt1-d1s",
        "prefork-level-t2-c16-lt1-d1s-p16",
    ]


def test_bench_rejects_bad_values_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--trials", "0", "--raw-root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: invalid parameter trials: 0 is not a positive integer")
    assert list(tmp_path.iterdir()) == []


def test_run_dry_run_of_an_echo_campaign(tmp_path: Path, capsys: pytest.CaptureFixture[str], cpu_pair) -> None:
    assert (
        main(
            [
                "run",
                "--profile",
                "echo",
                "--dry-run",
                "--topology-root",
                str(REFERENCE_TREE),
                "--raw-root",
                str(tmp_path),
                "--servers",
                "poll",
                "--connection-counts",
                "100",
                "--max-conns-cap",
                "500",
                "--sources",
                "2",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert "(echo_client --threads 1)" in lines[0]
    assert lines[1:-1] == ["poll-c100-lt1-d10s-echo-s64-src2", "poll-c500-lt1-d30s-echo-s64-src2-maxconns"]
    assert lines[-1].startswith("2 configurations x 4 runs = 8 trials")


def test_run_takes_saturation_rates_from_a_campaign(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cpu_pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("archbench.cli.main.saturation_rates", lambda path: {"epoll-level-c100": 2000.0})
    assert (
        main(
            [
                "run",
                "--profile",
                "latency",
                "--dry-run",
                "--topology-root",
                str(REFERENCE_TREE),
                "--raw-root",
                str(tmp_path),
                "--servers",
                "epoll",
                "--load-generator",
                "oha",
                "--rate-fractions",
                "0.5",
                "1",
                "--saturation-campaign",
                "closed",
                "--ci-target",
                "5",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("CPU split: server CPUs 0 ")
    assert lines[1:-1] == [  # the latency profile's 20 us of work per request (workload cpu)
        "workload cpu: 2 configurations",
        "  epoll-level-c100-lt1-d5s-oha-w20-rate1000",
        "  epoll-level-c100-lt1-d5s-oha-w20-rate2000",
    ]
    assert "up to 9 trials per configuration if the CI needs them" in lines[-1]


@pytest.mark.parametrize(
    ("notebook", "parameter", "message"),
    [
        ("echo_study", ["-p", "message_size", "0"], "ParameterError: message_size: 0 is not a positive integer"),
        (
            "latency_study",
            ["-p", "fractions", "[0.5, -1]"],
            "ParameterError: rate_fractions: -1 is not a positive number",
        ),
    ],
)
@pytest.mark.slow
def test_study_notebooks_fail_naming_a_bad_parameter(
    notebook: str, parameter: list[str], message: str, tmp_path: Path, repo_env: dict[str, str]
) -> None:
    raw = tmp_path / "raw"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "archbench",
            "notebook",
            notebook,
            "--campaign",
            "nb",
            "--raw-root",
            str(raw),
            *parameter,
        ],
        cwd=REPO_ROOT,
        env=repo_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert message in done.stderr
    assert not raw.exists()
