"""Load generators: how a configuration becomes the load generator's command line.

* `wrk`: closed loop, HTTP (contracts.md section 3). Pipelining (config field
  `pipeline` > 1) goes through `archbench/config/lua/pipeline.lua`, which keeps wrk's
  static request path so the client spends no Lua time per request.
* `oha` and `wrk2`: open loop, HTTP, at a fixed offered rate (config field
  `offered_rate`, requests per second in total over all connections). Both
  measure each request's latency from the moment it was scheduled to be sent,
  not from when the connection got round to sending it, so a server that
  stalls is charged for the requests that queued behind the stall (no
  coordinated omission): oha with `--latency-correction`, wrk2 by design (`-U`
  adds its uncorrected histogram for comparison).
* `echo_client`: the verifying echo load generator of `build/bin/`
  (contracts.md section 6), for configurations with `proto` echo.

Where each program is found: wrk on PATH; oha in the project's `.tools/bin/`
(where `make setup` installs it with cargo) first, then PATH; wrk2 named by
the environment variable `WRK2`, else `wrk2` on PATH; echo_client in the build
directory. `missing_reason()` says, for preflight, what is absent and how to
get it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from archbench.config.paths import REPO_ROOT

# Beyond duration + timeout, how long a load generator may take to connect, finish and print.
LOAD_SLACK_S = 15.0
# echo_client: its default connect timeout, the 2 s it waits for echoes in flight after the
# window, and the 1 s --max-conns lets connects in flight settle (servers_c/clients/echo_worker.c).
ECHO_CONNECT_TIMEOUT_S = 5.0
ECHO_DRAIN_S = 2.0
ECHO_SETTLE_S = 1.0
OHA_INSTALL_HINT = (
    "install it with `make setup` (cargo install oha --locked --root .tools; needs cargo: "
    "https://rustup.rs, `curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh`)"
)
WRK2_HINT = "build wrk2 (github.com/giltene/wrk2) and put it on PATH as wrk2, or name it with WRK2=/path/to/wrk"


def repo_root() -> Path:
    return REPO_ROOT


def project_tools_bin() -> Path:
    """`.tools/bin` of the checkout: where `make setup` installs tools built from source (oha)."""
    return repo_root() / ".tools" / "bin"


@dataclass(frozen=True)
class LoadGenerator:
    name: str
    executable: str
    protocol: str = "http"  # what it speaks: http or echo
    open_loop: bool = False  # sends at a fixed offered rate (config field offered_rate)

    def program(self, build_dir: Path = Path("build")) -> str:
        """argv[0]: the name as given (found on PATH) unless a subclass knows a path."""
        return self.executable

    def missing_reason(self, build_dir: Path = Path("build")) -> str | None:
        """Why this load generator cannot run here, or None."""
        if shutil.which(self.program(build_dir)) is None:
            return f"{self.executable} is not on PATH"
        return None

    def command(
        self,
        config: Mapping[str, Any],
        url: str,
        timeout_s: int,
        *,
        build_dir: Path = Path("build"),
        server_pid: int | None = None,
    ) -> list[str]:
        raise NotImplementedError

    def time_limit_s(self, config: Mapping[str, Any], timeout_s: int) -> float:
        """How long the runner lets it run before killing it."""
        return float(config["duration_s"]) + timeout_s + LOAD_SLACK_S

    def measured(self, exit_code: int) -> bool:
        """Whether this exit status still comes with a measurement (to parse, flag and keep)."""
        return exit_code == 0

    def output_file(self, trial_id: str) -> str:
        """`<trial-id>.<tool>.txt` (contracts.md section 2)."""
        return f"{trial_id}.{self.name}.txt"


def pipeline_script() -> Path:
    """wrk's pipelining script, shipped with the package (see its comment for the technique)."""
    return Path(__file__).resolve().parent / "lua" / "pipeline.lua"


@dataclass(frozen=True)
class Wrk(LoadGenerator):
    name: str = "wrk"
    executable: str = "wrk"

    def command(
        self,
        config: Mapping[str, Any],
        url: str,
        timeout_s: int,
        *,
        build_dir: Path = Path("build"),
        server_pid: int | None = None,
    ) -> list[str]:
        """wrk's argv; a pipeline depth D > 1 adds `-s pipeline.lua URL -- D` (D requests per write)."""
        depth = int(config.get("pipeline") or 1)
        script = ["-s", str(pipeline_script())] if depth > 1 else []
        script_args = ["--", str(depth)] if depth > 1 else []
        return [
            self.program(build_dir),
            f"-t{config['load_threads']}",
            f"-c{config['connections']}",
            f"-d{config['duration_s']}s",
            "--latency",
            "--timeout",
            f"{timeout_s}s",
            *script,
            url,
            *script_args,
        ]


@dataclass(frozen=True)
class Wrk2(LoadGenerator):
    """Gil Tene's wrk2: `-R` is the total rate over all connections; `-U` also prints the
    uncorrected latency histogram (what plain wrk would have reported)."""

    name: str = "wrk2"
    executable: str = "wrk2"
    open_loop: bool = True

    def program(self, build_dir: Path = Path("build")) -> str:
        return os.environ.get("WRK2") or shutil.which("wrk2") or self.executable

    def missing_reason(self, build_dir: Path = Path("build")) -> str | None:
        named = os.environ.get("WRK2")
        if named:
            return None if shutil.which(named) else f"WRK2={named} is not an executable"
        return None if shutil.which("wrk2") else f"wrk2 is not on PATH and WRK2 is not set ({WRK2_HINT})"

    def command(
        self,
        config: Mapping[str, Any],
        url: str,
        timeout_s: int,
        *,
        build_dir: Path = Path("build"),
        server_pid: int | None = None,
    ) -> list[str]:
        return [
            self.program(build_dir),
            f"-t{config['load_threads']}",
            f"-c{config['connections']}",
            f"-d{config['duration_s']}s",
            f"-R{config['offered_rate']}",
            "--latency",
            "-U",
            "--timeout",
            f"{timeout_s}s",
            url,
        ]


@dataclass(frozen=True)
class Oha(LoadGenerator):
    """oha (crates.io): `-q` is the total query rate over all connections; `--latency-correction`
    measures from each request's scheduled send time (wrk2's model); JSON on stdout."""

    name: str = "oha"
    executable: str = "oha"
    open_loop: bool = True

    def program(self, build_dir: Path = Path("build")) -> str:
        local = project_tools_bin() / "oha"
        if os.access(local, os.X_OK):
            return str(local)
        return shutil.which("oha") or self.executable

    def missing_reason(self, build_dir: Path = Path("build")) -> str | None:
        program = self.program(build_dir)
        if os.access(program, os.X_OK) or shutil.which(program):
            return None
        return f"oha is not installed (neither {project_tools_bin() / 'oha'} nor on PATH): {OHA_INSTALL_HINT}"

    def command(
        self,
        config: Mapping[str, Any],
        url: str,
        timeout_s: int,
        *,
        build_dir: Path = Path("build"),
        server_pid: int | None = None,
    ) -> list[str]:
        return [
            self.program(build_dir),
            "-z",
            f"{config['duration_s']}s",
            "-c",
            str(config["connections"]),
            "-q",
            str(config["offered_rate"]),
            "--latency-correction",
            # Requests still in flight at the deadline are answered and counted, not dropped:
            # under overload those are exactly the slow ones.
            "--wait-ongoing-requests-after-deadline",
            "-t",
            f"{timeout_s}s",
            "--no-tui",
            "--output-format",
            "json",
            url,
        ]


@dataclass(frozen=True)
class EchoClient(LoadGenerator):
    name: str = "echo_client"
    executable: str = "echo_client"
    protocol: str = "echo"

    def program(self, build_dir: Path = Path("build")) -> str:
        return str(Path(build_dir) / "bin" / self.executable)

    def missing_reason(self, build_dir: Path = Path("build")) -> str | None:
        path = Path(self.program(build_dir))
        return None if path.is_file() else f"{path} is missing (make servers builds it)"

    def command(
        self,
        config: Mapping[str, Any],
        url: str,
        timeout_s: int,
        *,
        build_dir: Path = Path("build"),
        server_pid: int | None = None,
    ) -> list[str]:
        """`echo_client --port P --connections N --threads T --duration D --size S --depth K --sources K --json
        [--connect-rate R] [--max-conns CAP --server-pid PID]` (the server on 127.0.0.1 unless the URL says else)."""
        target = urlsplit(url)
        argv = [self.program(build_dir)]
        if target.hostname and target.hostname != "127.0.0.1":
            argv += ["--host", target.hostname]
        argv += [
            "--port",
            str(target.port),
            "--connections",
            str(config["connections"]),
            "--threads",
            str(config["load_threads"]),
            "--duration",
            str(config["duration_s"]),
            "--size",
            str(config["message_size"]),
            "--depth",
            str(config.get("pipeline") or 1),
            "--sources",
            str(config.get("sources") or 0),
            "--json",
        ]
        if config.get("connect_rate"):
            argv += ["--connect-rate", str(config["connect_rate"])]
        if config.get("mode") == "max_conns":
            argv += ["--max-conns", str(config["cap"])]
            if server_pid is not None:
                argv += ["--server-pid", str(server_pid)]
        return argv

    def time_limit_s(self, config: Mapping[str, Any], timeout_s: int) -> float:
        # The ramp (max_conns) or window, then connects or first echoes that may take the connect
        # timeout, the drain, the --max-conns settle and final echo round.
        return float(config["duration_s"]) + ECHO_CONNECT_TIMEOUT_S + ECHO_DRAIN_S + 2 * ECHO_SETTLE_S + LOAD_SLACK_S

    def measured(self, exit_code: int) -> bool:
        # 1: the run completed and found verification errors or failures, which its JSON
        # details and the parser turns into flags: a flagged measurement, not a lost one.
        return exit_code in (0, 1)


def load_generators() -> dict[str, LoadGenerator]:
    return {"wrk": Wrk(), "wrk2": Wrk2(), "oha": Oha(), "echo_client": EchoClient()}


def load_generator(name: str) -> LoadGenerator:
    generators = load_generators()
    if name not in generators:
        raise KeyError(f"unknown load generator {name!r}; valid: {', '.join(generators)}")
    return generators[name]


def open_loop_generators() -> list[str]:
    return [name for name, generator in load_generators().items() if generator.open_loop]
