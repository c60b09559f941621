"""nginx as an architecture of the registry: found on PATH, launched through `python -m archbench.measure.nginx`.

The launcher itself (configuration, start, counters, shutdown line) is `archbench.measure.nginx`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archbench.config.server_spec import CPU_SOURCE_STATS, ServerSpec

INSTALL_HINT = "apt-get install nginx-light"
SBIN_DIRECTORIES = "/usr/sbin:/usr/local/sbin:/sbin"


def find_nginx() -> str | None:
    """nginx's path: on PATH, else in the sbin directories."""
    return shutil.which("nginx") or shutil.which("nginx", path=SBIN_DIRECTORIES)


def nginx_build_options(nginx: str) -> str:
    """`nginx -V` (configure arguments), '' if it cannot be run."""
    try:
        done = subprocess.run([nginx, "-V"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


@dataclass(frozen=True)
class NginxSpec(ServerSpec):
    """nginx: a master and `threads` worker processes (`worker_processes`), through the launcher."""

    name: str = "nginx"
    binary: str = "nginx"
    summary: str = "the reference: nginx, a master and N worker processes, from a generated configuration"
    threads_flag: str | None = "worker_processes"
    cpu_source: str = CPU_SOURCE_STATS
    takes_work: bool = False  # no per-request work or blocking flags: nginx serves its response as it is
    parallelism_unit: tuple[str, str] = ("worker", "workers")

    def missing_binary(self, build_dir: Path) -> Path | None:
        return None  # not built here; unavailable_reason() checks the installed nginx

    def unavailable_reason(self) -> str | None:
        nginx = find_nginx()
        if nginx is None:
            return f"nginx is not installed (not on PATH nor in {SBIN_DIRECTORIES}); install it: {INSTALL_HINT}"
        options = nginx_build_options(nginx)
        if "nginx version" in options and "http_stub_status_module" not in options:
            return f"{nginx} lacks the stub_status module the launcher reads its counters from; {INSTALL_HINT}"
        return None

    def serves(self, proto: str) -> bool:
        return proto == "http"  # nginx has no echo server here (its stream module would need a backend)

    def environment(self) -> dict[str, str]:
        # The launcher is `python -m archbench.measure.nginx`: make this checkout importable in it
        # even when archbench is not pip-installed (e.g. tests that put it on sys.path).
        package_parent = str(Path(__file__).resolve().parents[2])
        existing = os.environ.get("PYTHONPATH")
        return {"PYTHONPATH": package_parent + (os.pathsep + existing if existing else "")}

    def command(self, config: Mapping[str, Any], build_dir: Path, host: str = "127.0.0.1") -> list[str]:
        return [
            sys.executable,
            "-m",
            "archbench.measure.nginx",
            "--nginx",
            find_nginx() or "nginx",
            "--host",
            host,
            "--port",
            "0",
            "--worker-processes",
            str(config["threads"]),
            "--response",
            str(config.get("response", "test")),
        ]
