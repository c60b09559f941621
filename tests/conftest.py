"""Shared fixtures of the measurement-side tests: paths, skips with reasons, fake servers."""
from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# Tests import the checkout's archbench even when it is not pip-installed.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
WRK_FIXTURES = REPO_ROOT / "tests" / "fixtures" / "wrk"
REAL_BUILD_DIR = REPO_ROOT / "build"
BUILD_HINT = "cmake -S servers_c -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2"


def available_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


@pytest.fixture
def cpu_pair() -> tuple[str, str]:
    """(server CPU, load CPU): two distinct CPUs of this machine."""
    cpus = available_cpus()
    if len(cpus) < 2:
        pytest.skip(f"needs two CPUs to pin server and load apart; this process may use only {cpus}")
    return str(cpus[0]), str(cpus[1])


@pytest.fixture
def real_build_dir() -> Path:
    """The CMake build directory with the real servers (skips if not built)."""
    missing = [a for a in ("blocking", "thread_per_conn", "thread_pool") if not (REAL_BUILD_DIR / "bin" / a).is_file()]
    if missing:
        pytest.skip(f"servers not built ({', '.join(missing)} missing in build/bin); run {BUILD_HINT}")
    return REAL_BUILD_DIR


@pytest.fixture
def load_tools() -> None:
    """wrk and taskset on PATH (skips otherwise)."""
    absent = [tool for tool in ("wrk", "taskset") if shutil.which(tool) is None]
    if absent:
        pytest.skip(f"{', '.join(absent)} not installed (apt-get install wrk util-linux)")


def write_executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_build_dir(tmp_path: Path):
    """Returns make(arch, script_text) -> a build dir whose bin/<arch> is the given script."""

    def make(architecture: str, script: str) -> Path:
        build = tmp_path / "fake-build"
        write_executable(build / "bin" / architecture, script)
        return build

    return make


@pytest.fixture
def repo_env() -> dict[str, str]:
    """Environment for `python -m archbench` subprocesses run from the repository root."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


PYTHON = sys.executable
