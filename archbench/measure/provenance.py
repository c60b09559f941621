"""What a measurement ran on: code version, build, machine, operating system, tools.

Collected once per campaign run and copied into campaign.json and every trial
record. Nothing here may stop a campaign: a tool or file that is missing is
recorded as null.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import socket
import subprocess
from pathlib import Path
from typing import Any

from archbench.config.loadgen import Oha, Wrk2
from archbench.config.paths import REPO_ROOT

TOOL_VERSION_COMMANDS: dict[str, list[str]] = {
    "wrk": ["wrk", "-v"],  # prints its version, then usage, and exits 1
    "taskset": ["taskset", "--version"],
    "cmake": ["cmake", "--version"],
    "gcc": ["gcc", "--version"],
    "nginx": ["nginx", "-v"],  # "nginx version: nginx/1.22.1" on stderr; null where nginx is absent
    "httperf": ["httperf", "--version"],  # "httperf: httperf-0.9.0 compiled ..."
    "iperf3": ["iperf3", "--version"],  # "iperf 3.12 (cJSON 1.7.15)"
}
COMPILER_NAMES = {"GNU": "gcc", "Clang": "clang", "AppleClang": "apple-clang", "IntelLLVM": "icx"}
# Data directories are excluded from the dirty check: writing data/raw must not make the code "dirty".
GIT_DIRTY_EXCLUDES = (":(exclude)data",)


def _first_line(argv: list[str], cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, cwd=cwd, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in (done.stdout + done.stderr).splitlines():
        if line.strip():
            return line.strip()
    return None


def tool_versions() -> dict[str, str | None]:
    versions = {name: _first_line(argv) for name, argv in TOOL_VERSION_COMMANDS.items()}
    # The open-loop load generators, where installed (null otherwise): the path the runner uses.
    versions["oha"] = _first_line([Oha().program(), "--version"]) if Oha().missing_reason() is None else None
    versions["wrk2"] = _first_line([Wrk2().program(), "-v"]) if Wrk2().missing_reason() is None else None
    return versions


def git_state(repo: Path) -> dict[str, Any]:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, timeout=10)
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", ".", *GIT_DIRTY_EXCLUDES],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {"git_commit": None, "git_dirty": None}
    if commit.returncode != 0:
        return {"git_commit": None, "git_dirty": None}
    return {
        "git_commit": commit.stdout.strip(),
        "git_dirty": bool(status.stdout.strip()) if status.returncode == 0 else None,
    }


def build_info(build_dir: Path) -> dict[str, Any]:
    """build/build-info.json written by CMake; nulls if there is none."""
    path = Path(build_dir) / "build-info.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"compiler": None, "c_flags": None, "build_type": None, "build_architectures": None}
    compiler_id = info.get("compiler_id") or ""
    compiler = f"{COMPILER_NAMES.get(compiler_id, compiler_id.lower())} {info.get('compiler_version', '')}".strip()
    return {
        "compiler": compiler or None,
        "c_flags": " ".join(str(info.get("c_flags", "")).split()) or None,
        "build_type": info.get("build_type"),
        "build_architectures": info.get("architectures"),
    }


def os_pretty_name() -> str | None:
    try:
        for line in Path("/etc/os-release").read_text(encoding="utf-8").splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


# Python packages whose versions the measurement and the analysis depend on (report appendix).
PYTHON_PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "statsmodels", "papermill")


def python_packages(names: tuple[str, ...] = PYTHON_PACKAGES) -> dict[str, str | None]:
    """Installed version of each package (importlib.metadata), null where it is not installed."""
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def repo_root() -> Path:
    """The checkout this package lives in (its parent directory)."""
    return REPO_ROOT


def collect_provenance(build_dir: Path | str = "build", repo: Path | None = None) -> dict[str, Any]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return {
        **git_state(repo or repo_root()),
        **build_info(Path(build_dir)),
        "kernel": platform.release(),
        "os": os_pretty_name(),
        "os_family": platform.system(),
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_bytes": memory_bytes(),
        "open_files_limit": [soft, hard],
        "somaxconn": _read_int("/proc/sys/net/core/somaxconn"),
        "python": platform.python_version(),
        "python_packages": python_packages(),
        "tools": tool_versions(),
    }
