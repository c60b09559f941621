"""Load generators: how a configuration becomes the load generator's command line.

* `wrk`: closed loop, HTTP (contracts.md section 3). Every run loads
  `archbench/config/lua/pipeline.lua`: its done() appends wrk's whole latency record
  (a histogram at 1 us resolution) to the report, so that several hosts' latencies
  can be added; pipelining (config field `pipeline` > 1) goes through its init(),
  which keeps wrk's static request path so the client spends no Lua time per request.
* `oha` and `wrk2`: open loop, HTTP, at a fixed offered rate (config field
  `offered_rate`, requests per second in total over all connections). Both
  measure each request's latency from the moment it was scheduled to be sent,
  not from when the connection got round to sending it, so a server that
  stalls is charged for the requests that queued behind the stall (no
  coordinated omission): oha with `--latency-correction`, wrk2 by design (`-U`
  adds its uncorrected histogram for comparison).
* `open_loop`: the project's own open-loop HTTP client (`build/bin/open_loop`,
  contracts.md section 10): `offered_rate` in total, split evenly over the
  connections, latency from each request's scheduled send time, at most one
  request outstanding per connection; cheaper per request than oha, so the
  client is less likely than the server to be what saturates.
* `echo_client`: the verifying echo load generator of `build/bin/`
  (contracts.md section 6), for configurations with `proto` echo.
* `httperf` (Debian package httperf 0.9): closed loop, HTTP, source 002's tool. It
  opens `connections` connections in all (`--num-conns`), at `httperf_rate` per
  second (`--rate`; 0 omits it: httperf then opens each connection when the
  previous one has closed), and sends `httperf_calls` requests on each, one after
  the other (`--num-calls`). It has no duration: it ends when its connections are
  done, so `duration_s` is its time budget. It is one single-threaded process
  waiting in select(), so at most FD_SETSIZE (1024) descriptors, about 1000
  connections, can be open at once; beyond that it counts fd-unavail errors.

Where each program is found: wrk on PATH; oha in the project's `.tools/bin/`
(where `make setup` installs it with cargo) first, then PATH; wrk2 named by
the environment variable `WRK2`, else `wrk2` on PATH; echo_client in the build
directory, as open_loop; httperf on PATH. `missing_reason()` says, for preflight, what is absent and how to
get it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit

from archbench.config.paths import REPO_ROOT
from archbench.config.values import ParameterError, boolean, non_negative_int, positive_int

# Beyond duration + timeout, how long a load generator may take to connect, finish and print.
LOAD_SLACK_S = 15.0
# echo_client: its default connect timeout, the 2 s it waits for echoes in flight after the
# window, and the 1 s --max-conns lets connects in flight settle (servers_c/clients/echo_worker_state.h).
ECHO_CONNECT_TIMEOUT_S = 5.0
ECHO_DRAIN_S = 2.0
ECHO_SETTLE_S = 1.0
OHA_INSTALL_HINT = (
    "install it with `make setup` (LIBSQLITE3_SYS_USE_PKG_CONFIG=1 cargo install oha@1.16.0 --locked "
    "--no-default-features --features native-tls --root .tools; needs cargo: "
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

    def warms_up(self, config: Mapping[str, Any]) -> bool:
        """Whether a trial of `config` runs a warm-up when the campaign asks for one (archbench.measure.warmup)."""
        return True

    def warmup_config(self, config: Mapping[str, Any], warmup_s: int) -> dict[str, Any]:
        """The configuration of the warm-up: the trial's, for `warmup_s` seconds. Every generator builds its
        duration flag from `duration_s`, so the warm-up's command is `command` of this configuration."""
        return {**config, "duration_s": warmup_s}

    def output_file(self, trial_id: str) -> str:
        """`<trial-id>.<tool>.txt` (contracts.md section 2)."""
        return f"{trial_id}.{self.name}.txt"


def pipeline_script() -> Path:
    """wrk's script (pipelining and the latency histogram), shipped with the package (see its comments)."""
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
        """wrk's argv: always `-s pipeline.lua` (its done() dumps the latency histogram); a pipeline depth D > 1
        adds `URL -- D` (D requests per write); connection mode close `-H "Connection: close"`: the server closes
        after each response, wrk reconnects and sends the next request on a new connection (one request per
        connection; wrk counts each, as the servers do)."""
        depth = int(config.get("pipeline") or 1)
        script = ["-s", str(pipeline_script())]
        script_args = ["--", str(depth)] if depth > 1 else []
        close = ["-H", "Connection: close"] if config.get("connection_mode") == "close" else []
        return [
            self.program(build_dir),
            f"-t{config['load_threads']}",
            f"-c{config['connections']}",
            f"-d{config['duration_s']}s",
            "--latency",
            "--timeout",
            f"{timeout_s}s",
            *close,
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


def port_as_written(target: SplitResult) -> str:
    """The URL's port as written, not target.port: the dry run aims at a placeholder ("PORT") that is no number."""
    return target.netloc.rpartition(":")[2]


@dataclass(frozen=True)
class BuiltClient(LoadGenerator):
    """A client of this repository's own, built by `make servers` into build/bin/ beside the servers."""

    def program(self, build_dir: Path = Path("build")) -> str:
        return str(Path(build_dir) / "bin" / self.executable)

    def missing_reason(self, build_dir: Path = Path("build")) -> str | None:
        path = Path(self.program(build_dir))
        return None if path.is_file() else f"{path} is missing (make servers builds it)"


@dataclass(frozen=True)
class OpenLoopClient(BuiltClient):
    """build/bin/open_loop: `--rate` is the total rate over all connections, `--threads` its event loops;
    latency from each request's scheduled send time; one JSON object on stdout."""

    name: str = "open_loop"
    executable: str = "open_loop"
    open_loop: bool = True

    def command(
        self,
        config: Mapping[str, Any],
        url: str,
        timeout_s: int,
        *,
        build_dir: Path = Path("build"),
        server_pid: int | None = None,
    ) -> list[str]:
        """`open_loop --host H --port P --path PATH --rate R --duration D --connections C --threads T
        --timeout S --arrival A` (A: the config's `arrival`, fixed when missing); its threads are at most its
        connections."""
        target = urlsplit(url)
        connections = int(config["connections"])
        return [
            self.program(build_dir),
            "--host",
            str(target.hostname),
            "--port",
            port_as_written(target),
            "--path",
            target.path or "/",
            "--rate",
            str(config["offered_rate"]),
            "--duration",
            str(config["duration_s"]),
            "--connections",
            str(connections),
            "--threads",
            str(min(int(config["load_threads"]), connections)),
            "--timeout",
            str(timeout_s),
            "--arrival",
            str(config.get("arrival") or "fixed"),
        ]


@dataclass(frozen=True)
class EchoClient(BuiltClient):
    name: str = "echo_client"
    executable: str = "echo_client"
    protocol: str = "echo"

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

    def warms_up(self, config: Mapping[str, Any]) -> bool:
        # A --max-conns trial measures a ramp from a fresh server: how many connections it takes and the memory
        # each costs (VmRSS from before the ramp); connections opened and closed beforehand would change both.
        return config.get("mode") != "max_conns"


@dataclass(frozen=True)
class HttperfWorkload:
    """What httperf sends beyond the config's `connections` (its --num-conns): the trial config's
    httperf fields (contracts.md section 2), present in httperf configurations only."""

    calls: int = 1  # --num-calls: requests per connection, each after the previous reply
    rate: int = 0  # --rate: connections opened per second; 0: one after the other (no --rate)
    hog: bool = True  # --hog: use the whole ephemeral port range, as source 002 did

    def as_dict(self) -> dict[str, Any]:
        return {"httperf_calls": self.calls, "httperf_rate": self.rate, "httperf_hog": self.hog}

    def id_parts(self) -> list[str]:
        """After the load generator's name in a config id: k<calls>[-cr<rate>][-nohog]."""
        parts = [f"k{self.calls}"]
        if self.rate:
            parts.append(f"cr{self.rate}")
        if not self.hog:
            parts.append("nohog")
        return parts


# The campaign parameters of httperf's workload and their defaults, which a campaign without httperf keeps.
HTTPERF_DEFAULTS: dict[str, Any] = {"httperf_calls": 1, "httperf_rate": 0, "httperf_hog": True}


def httperf_values(values: Mapping[str, Any], used: bool) -> dict[str, Any]:
    """httperf_calls (>= 1), httperf_rate (>= 0, 0: no --rate) and httperf_hog, checked. `used`: some
    configuration of the campaign runs httperf; without one they must keep their defaults."""

    def given(name: str) -> Any:
        value = values.get(name)
        return HTTPERF_DEFAULTS[name] if value is None else value

    checked = {
        "httperf_calls": positive_int(given("httperf_calls"), "httperf_calls"),
        "httperf_rate": non_negative_int(given("httperf_rate"), "httperf_rate"),
        "httperf_hog": boolean(given("httperf_hog"), "httperf_hog"),
    }
    if not used:
        for name, default in HTTPERF_DEFAULTS.items():
            if checked[name] != default:
                raise ParameterError(name, "applies to load_generator httperf only (no configuration runs httperf)")
    return checked


def httperf_pipeline_depths(
    servers: Iterable[Any], campaign_generator: str, campaign_depths: Iterable[int]
) -> list[int]:
    """The pipeline depths of the configurations httperf runs (`servers`: the campaign's ServerEntry
    objects, each with its own load_generator and pipeline or None); empty when no entry runs httperf."""
    depths: list[int] = []
    for entry in servers:
        if (entry.load_generator or campaign_generator) == "httperf":
            depths += list(entry.pipeline or campaign_depths)
    return depths


def check_httperf_load(load_threads: tuple[int, ...], load_threads_auto: bool, depths: Iterable[int]) -> None:
    """httperf is one single-threaded process sending one request at a time per connection: load_threads
    must be 1 (or auto, which gives httperf configurations 1) and its configurations' pipeline depths 1."""
    if not load_threads_auto and any(threads != 1 for threads in load_threads):
        raise ParameterError(
            "load_threads", f"{list(load_threads)}: httperf is one single-threaded process; use 1 (or auto)"
        )
    deep = [depth for depth in depths if depth != 1]
    if deep:
        raise ParameterError(
            "pipeline_depths",
            f"httperf sends one request at a time per connection; pipeline depth {deep[0]} is wrk's (pipeline.lua)",
        )


@dataclass(frozen=True)
class Httperf(LoadGenerator):
    """httperf: `--num-conns` is the config's `connections`, `--num-calls`, `--rate` and `--hog` its
    httperf fields; `--timeout` the runner's load timeout (seconds, per connection)."""

    name: str = "httperf"
    executable: str = "httperf"

    def command(
        self,
        config: Mapping[str, Any],
        url: str,
        timeout_s: int,
        *,
        build_dir: Path = Path("build"),
        server_pid: int | None = None,
    ) -> list[str]:
        target = urlsplit(url)
        workload = HttperfWorkload(
            calls=int(config.get("httperf_calls") or 1),
            rate=int(config.get("httperf_rate") or 0),
            hog=bool(config.get("httperf_hog", True)),
        )
        argv = [self.program(build_dir)]
        if workload.hog:
            argv.append("--hog")
        argv += [
            "--timeout",
            str(timeout_s),
            "--server",
            str(target.hostname),
            "--port",
            port_as_written(target),
            "--uri",
            target.path or "/",
            "--num-conns",
            str(config["connections"]),
            "--num-calls",
            str(workload.calls),
        ]
        if workload.rate:
            argv += ["--rate", str(workload.rate)]
        return argv

    def warms_up(self, config: Mapping[str, Any]) -> bool:
        return False  # no duration: it ends when its connections are done (params refuses warmup_s with it)


def load_generators() -> dict[str, LoadGenerator]:
    return {
        "wrk": Wrk(),
        "wrk2": Wrk2(),
        "oha": Oha(),
        "open_loop": OpenLoopClient(),
        "echo_client": EchoClient(),
        "httperf": Httperf(),
    }


def load_generator(name: str) -> LoadGenerator:
    generators = load_generators()
    if name not in generators:
        raise KeyError(f"unknown load generator {name!r}; valid: {', '.join(generators)}")
    return generators[name]


def open_loop_generators() -> list[str]:
    return [name for name, generator in load_generators().items() if generator.open_loop]
