"""Placement ssh: the server on one host and one wrk per client host, all driven through OpenSSH.

The hosts come from an inventory (archbench.config.hosts). For one campaign the placement:

* set_up: opens one ssh master connection per host (ControlMaster, in a private temporary directory that
  also holds the known_hosts file, so nothing of the user's ~/.ssh is changed and later commands start in
  milliseconds); reads each host's kernel, CPU model, online CPUs, boot id and wrk version (provenance);
  refuses CPU lists that do not exist there or that overlap on hosts that turn out to be one machine (same
  boot id); copies the server binaries to WORKDIR/bin on the server host and checks they are executable,
  and wrk's script (archbench/config/lua/pipeline.lua, whose done() dumps wrk's latency histogram) to
  WORKDIR on every client host; all before the first trial, each failure naming the host and the fix;
* per trial (run_ssh_trial): starts `sh -c 'cd WORKDIR && echo archbench-pid $$ && exec taskset -c CPUS
  bin/<arch> --host ADDR --port 0 ...'` on the server host (the pid line lets the runner signal the server,
  since ssh forwards no signals), then every client's wrk at one agreed wall-clock instant (a barrier: each
  remote shell sleeps until it, so connection set-up does not skew the start; the real start times are
  recorded and their spread is `start_skew_s`), then reads the server's CPU time from /proc on its host
  and sends it SIGTERM so that it prints its shutdown line;
* tear_down: stops the master connections and removes the temporary directory.

Combining the clients: requests/s, requests and errors are summed (each host's wrk measured over its own
duration; with the start skew far below the duration that is the rate while all of them loaded); latency
percentiles are kept per host, never averaged. Each host's output ends with its latency histogram, and
histograms do add up: the trial's latency comes from their sum (archbench.analyze.trials, `latency_hosts`). Each host's wrk output is kept verbatim as
`<trial-id>.<host>.wrk.txt`. A host lost mid-trial fails that trial with the reason; the campaign goes on.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archbench.config.hosts import Host, Inventory, load_inventory, overlapping_cpus
from archbench.config.loadgen import load_generator, pipeline_script
from archbench.config.params import Parameters
from archbench.config.plan import PlannedTrial
from archbench.config.servers import server_spec
from archbench.config.values import ParameterError, parse_cpu_list
from archbench.config.workloads import command_config
from archbench.data.storage import signals_deferred
from archbench.measure.processes import ManagedProcess
from archbench.measure.server_protocol import EXIT_UNSUPPORTED, READY_LINE, shutdown_stats
from archbench.parse import LoadOutputError, parse_output

CONNECT_TIMEOUT_S = 5
COMMAND_TIMEOUT_S = 30.0
COPY_TIMEOUT_S = 120.0
START_MARGIN_S = 1.0  # from deciding the start instant to it: enough for every client's ssh to get going
PID_LINE = "archbench-pid "
START_LINE = "archbench-start "
PID_PATTERN = re.compile(r"archbench-pid (?P<pid>\d+)")
FACT_SCRIPT = r"""
echo "kernel=$(uname -r)"
echo "hostname=$(uname -n)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
echo "cpus_online=$(cat /sys/devices/system/cpu/online)"
echo "cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
echo "taskset=$(command -v taskset)"
echo "wrk=$(command -v wrk)"
echo "wrk_version=$(wrk -v 2>&1 | head -n1)"
"""
SSH_HINT = (
    "check the host's address, port, user and key in the inventory, that its sshd runs, and that the key's "
    "public half is in that user's authorized_keys"
)
SUPPORTED_TOOL = "wrk"
WRK_SCRIPT = "pipeline.lua"  # in each client host's workdir


class SshPlacementError(RuntimeError):
    """The ssh placement cannot run; nothing was measured (the runner reports it as a preflight error)."""


def tail(data: bytes, chars: int = 1000) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= chars else "..." + text[-chars:]


def local_problems(params: Parameters) -> list[str]:
    """What this machine or the parameters lack for placement ssh, each naming its fix."""
    problems = [f"placement ssh needs `{tool}` on PATH (apt-get install openssh-client)"
                for tool in ("ssh", "scp") if shutil.which(tool) is None]  # fmt: skip
    if params.load_generator != SUPPORTED_TOOL:
        problems.append(f"placement ssh runs wrk on the client hosts, not {params.load_generator}: use wrk")
    if params.proto != "http":
        problems.append("placement ssh measures http only: set proto http")
    if any(depth > 1 for depth in params.pipeline_depths):
        problems.append("placement ssh is tested at pipeline depth 1 only: use pipeline depth 1")
    if params.warmup_s:
        # Its clients start at one agreed instant per trial; a warm-up would need a second barrier round.
        problems.append("placement ssh runs no warm-up before the measured window: set warmup_s to 0")
    return problems


@dataclass
class SshPlacement:
    inventory: Inventory
    build_dir: Path
    architectures: tuple[str, ...]
    kind: str = "ssh"
    work: Path | None = None
    host_facts: dict[str, dict[str, str]] = field(default_factory=dict)
    masters: list[Host] = field(default_factory=list)

    @classmethod
    def from_params(cls, params: Parameters) -> SshPlacement:
        assert params.hosts is not None
        return cls(
            inventory=load_inventory(params.hosts),
            build_dir=Path(params.build_dir),
            architectures=tuple(dict.fromkeys(entry.architecture for entry in params.servers)),
        )

    # ---- the Placement interface

    @property
    def server_address(self) -> str:
        return self.inventory.server.address

    def server_argv(self, argv: list[str]) -> list[str]:
        return self.ssh_argv(self.inventory.server, remote_shell(argv, workdir=self.inventory.server.workdir))

    def load_argv(self, argv: list[str]) -> list[str]:
        return self.ssh_argv(self.inventory.clients[0], remote_shell(argv))

    def unexpected_host(self, host: str) -> str | None:
        if host == self.server_address:
            return None
        return f"server listens on {host}, not on {self.server_address} (its inventory address); not loading it"

    def record(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "inventory": str(self.inventory.path),
            "server_address": self.server_address,
            "hosts": [
                {
                    "name": host.name,
                    "address": host.address,
                    "role": host.role,
                    "cpus": host.cpus,
                    **{k: self.host_facts.get(host.name, {}).get(k) for k in ("kernel", "hostname", "cpu_model")},
                    "wrk_version": self.host_facts.get(host.name, {}).get("wrk_version") or None,
                }
                for host in self.inventory.hosts
            ],
        }

    # ---- ssh

    def ssh_argv(self, host: Host, remote_command: str, *, master: bool = False) -> list[str]:
        assert self.work is not None, "set_up first"
        options = [
            "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=accept-new",
            "-o", f"UserKnownHostsFile={self.work / 'known_hosts'}",
            "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            "-o", "ServerAliveInterval=2",
            "-o", "ServerAliveCountMax=3",
            "-o", "LogLevel=ERROR",
            "-o", f"ControlPath={self.work / 'cm-%C'}",
            "-o", "ControlMaster=" + ("yes" if master else "no"),
            "-i", str(host.key), "-p", str(host.port),
        ]  # fmt: skip
        if master:
            return ["ssh", *options, "-o", "ControlPersist=yes", "-N", "-f", host.destination]
        return ["ssh", *options, host.destination, remote_command]

    def run(self, host: Host, script: str, timeout_s: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        argv = self.ssh_argv(host, "sh -c " + shlex.quote(script))
        try:
            return subprocess.run(
                argv, capture_output=True, text=True, timeout=timeout_s, check=False, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(argv, 124, "", f"timed out after {timeout_s:g} s")

    def checked(self, host: Host, script: str, what: str, timeout_s: float = COMMAND_TIMEOUT_S) -> str:
        result = self.run(host, script, timeout_s)
        if result.returncode != 0:
            raise SshPlacementError(
                f"host {host.name} ({host.destination}): {what} failed with status {result.returncode}: "
                f"{result.stderr.strip() or result.stdout.strip() or '(no output)'}"
            )
        return result.stdout

    # ---- one campaign

    def set_up(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="archbench-ssh-"))
        for host in self.inventory.hosts:
            self._open_master(host)
        for host in self.inventory.hosts:
            self.host_facts[host.name] = self._facts(host)
        self._check_cpus()
        self._install_binaries()
        self._install_wrk_script()

    def _open_master(self, host: Host) -> None:
        # -f: ssh forks once authenticated; its stdio go to /dev/null so that no pipe is held open by it.
        argv = self.ssh_argv(host, "", master=True)
        try:
            result = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=CONNECT_TIMEOUT_S * 3,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise SshPlacementError(
                f"host {host.name} ({host.destination} port {host.port}) unreachable: no ssh session within "
                f"{CONNECT_TIMEOUT_S * 3} s; {SSH_HINT}"
            ) from None
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip() or f"status {result.returncode}"
            raise SshPlacementError(
                f"host {host.name}: ssh to {host.destination} port {host.port} failed ({message}); {SSH_HINT}"
            )
        self.masters.append(host)

    def _facts(self, host: Host) -> dict[str, str]:
        facts = {}
        for line in self.checked(host, FACT_SCRIPT, "reading its kernel, CPUs and tools").splitlines():
            key, _, value = line.partition("=")
            facts[key.strip()] = value.strip()
        if not facts.get("taskset"):
            raise SshPlacementError(f"host {host.name}: taskset is missing there; install util-linux on it")
        if host.role == "client" and not facts.get("wrk"):
            raise SshPlacementError(f"host {host.name}: wrk is missing there; install it (apt-get install wrk)")
        return facts

    def _check_cpus(self) -> None:
        for host in self.inventory.hosts:
            try:
                online = set(parse_cpu_list(self.host_facts[host.name].get("cpus_online", ""), "cpus_online"))
            except ParameterError:
                raise SshPlacementError(f"host {host.name}: could not read its online CPUs") from None
            absent = sorted(set(host.cpu_numbers) - online)
            if absent:
                raise SshPlacementError(
                    f"host {host.name}: cpus {host.cpus} include {','.join(map(str, absent))}, which that host does "
                    f"not have (online: {self.host_facts[host.name]['cpus_online']}); fix cpus in "
                    f"{self.inventory.path}"
                )
        by_machine: dict[str, list[Host]] = {}
        for host in self.inventory.hosts:
            by_machine.setdefault(self.host_facts[host.name].get("boot_id", host.name), []).append(host)
        for hosts in by_machine.values():
            overlap = overlapping_cpus(hosts)
            if overlap is not None:
                server, client, shared = overlap
                raise SshPlacementError(
                    f"hosts {server.name} and {client.name} are one machine (same boot id) and their cpus overlap "
                    f"on {','.join(map(str, shared))}; give the server its own CPUs in {self.inventory.path}"
                )

    def _install_binaries(self) -> None:
        server = self.inventory.server
        binaries = [server_spec(name).binary_path(self.build_dir) for name in self.architectures]
        missing = [str(path) for path in binaries if not path.is_file()]
        if missing:
            raise SshPlacementError(f"server binaries missing here, nothing to copy: {', '.join(missing)}; build them")
        bin_dir = f"{server.workdir}/bin"
        self.checked(server, f"mkdir -p {shlex.quote(bin_dir)}", f"creating {bin_dir}")
        assert self.work is not None
        scp = [
            "scp", "-q", "-B", "-p",
            "-o", "StrictHostKeyChecking=accept-new",
            "-o", f"UserKnownHostsFile={self.work / 'known_hosts'}",
            "-o", f"ControlPath={self.work / 'cm-%C'}",
            "-i", str(server.key), "-P", str(server.port),
            *map(str, binaries), f"{server.destination}:{bin_dir}/",
        ]  # fmt: skip
        try:
            copied = subprocess.run(scp, capture_output=True, text=True, timeout=COPY_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise SshPlacementError(
                f"host {server.name}: copying the binaries took over {COPY_TIMEOUT_S:g} s"
            ) from None
        if copied.returncode != 0:
            raise SshPlacementError(
                f"host {server.name}: copying the binaries to {bin_dir} failed: {copied.stderr.strip()}"
            )
        names = " ".join(shlex.quote(f"{bin_dir}/{path.name}") for path in binaries)
        absent = self.run(server, f'for f in {names}; do [ -x "$f" ] || echo "$f"; done').stdout.split()
        if absent:
            raise SshPlacementError(
                f"host {server.name}: binaries missing there after copying: {', '.join(absent)}; check that "
                f"{server.workdir} is writable and not mounted noexec"
            )

    def _install_wrk_script(self) -> None:
        """wrk's script to WORKDIR on each client host: without it there, wrk would run without its done() and
        the host's latency histogram, which the trial's latency is summed from, would be missing."""
        text = pipeline_script().read_text()
        for host in self.inventory.clients:
            target = shlex.quote(f"{host.workdir}/{WRK_SCRIPT}")
            self.checked(
                host,
                f"mkdir -p {shlex.quote(host.workdir)} && printf %s {shlex.quote(text)} > {target}",
                f"writing wrk's script to {host.workdir}/{WRK_SCRIPT}",
            )

    def tear_down(self) -> None:
        """Close the master connections and remove the temporary directory (idempotent)."""
        for host in reversed(self.masters):
            argv = self.ssh_argv(host, "")
            exit_argv = [*argv[:-2], "-O", "exit", host.destination]
            try:
                subprocess.run(exit_argv, capture_output=True, timeout=COMMAND_TIMEOUT_S, check=False)
            except subprocess.TimeoutExpired:
                pass
        self.masters.clear()
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None


def remote_shell(argv: list[str], *, workdir: str | None = None, start_ns: int | None = None) -> str:
    """`sh -c '...'` running argv on the far side (ssh hands the remote user's shell one string)."""
    steps = []
    if workdir is not None:
        steps.append(f"cd {shlex.quote(workdir)}")
    if start_ns is not None:
        # The barrier: sleep until the agreed instant (this host's clock), then say when the load started.
        steps.append(
            f"d=$(( {start_ns} - $(date +%s%N) )); if [ $d -gt 0 ]; then "
            'sleep "$((d / 1000000000)).$(printf %09d $((d % 1000000000)))"; fi'
        )
        steps.append(f'echo "{START_LINE}$(date +%s%N)" >&2')
    else:
        steps.append(f'echo "{PID_LINE}$$"')
    steps.append("exec " + " ".join(shlex.quote(arg) for arg in argv))
    return "sh -c " + shlex.quote(" && ".join(steps) if start_ns is None else "; ".join(steps))


# --------------------------------------------------------------------------- one trial


@dataclass
class SshTrial:
    """What one trial over ssh produced: the record's `server` and `load`, why it failed, its files."""

    server: dict[str, Any]
    load: dict[str, Any]
    problems: list[str]
    outputs: dict[str, bytes]
    unsupported: bool = False


def run_ssh_trial(
    planned: PlannedTrial, params: Parameters, placement: SshPlacement, started: list[ManagedProcess]
) -> SshTrial:
    """The server over ssh, then the clients together.

    `started` collects the local ssh processes so that the caller can stop them on an interrupt."""
    inventory = placement.inventory
    server_host = inventory.server
    config = planned.config.as_dict()
    spec = server_spec(planned.config.architecture)
    trial_id = planned.trial_id
    server_file = f"{trial_id}.server.txt"
    server_config = command_config(config, params.seed, trial_id)  # with the --seed of its waits, if it draws any
    command = ["taskset", "-c", server_host.cpus, *spec.command(server_config, Path("."), server_host.address)]
    server_argv = placement.ssh_argv(server_host, remote_shell(command, workdir=server_host.workdir))
    server_info: dict[str, Any] = {
        "argv": server_argv, "cpus": server_host.cpus, "ready_line": None, "ready_after_s": None,
        **({"seed": server_config["seed"]} if "seed" in server_config else {}),
        "exit_code": None, "signal_sent": None, "stats": None, "cpu_user_s": None, "cpu_sys_s": None,
        "cpu_source": "proc", "cpus_busy": None, "output_file": server_file, "host": server_host.name,
    }  # fmt: skip
    load_info: dict[str, Any] = {
        "tool": SUPPORTED_TOOL, "argv": None, "cpus": ",".join(f"{h.name}:{h.cpus}" for h in inventory.clients),
        "exit_code": None, "wall_s": None, "cpu_user_s": None, "cpu_sys_s": None, "cpu_utilisation": None,
        "cpus_busy": None, "output_file": None, "stderr": None, "flags": None, "hosts": [], "combined": None,
    }  # fmt: skip
    problems: list[str] = []
    outputs: dict[str, bytes] = {}
    with signals_deferred():
        server = ManagedProcess(server_argv, merge_stderr=True, env=spec.environment())
        started.append(server)
    pid_match = server.wait_for_line(PID_PATTERN, params.ready_timeout_s + CONNECT_TIMEOUT_S)
    remote_pid = int(pid_match.group("pid")) if pid_match else None
    server_info["pid"] = remote_pid
    try:
        ready = server.wait_for_line(READY_LINE, params.ready_timeout_s) if remote_pid is not None else None
        ran_load = False
        unsupported = False
        if ready is None:
            early = server.wait(0.5)
            if early is not None and early.exit_code == EXIT_UNSUPPORTED:
                unsupported = True
                problems.append(
                    f"server reports an unsupported feature (exit status 3): {tail(server.output_so_far())}"
                )
            elif early is not None:
                problems.append(
                    f"server on host {server_host.name} exited with status {early.exit_code} before its ready line "
                    f"(255: ssh failed); output tail: {tail(server.output_so_far()) or '(none)'}"
                )
            else:
                problems.append(f"no ready line from host {server_host.name} within {params.ready_timeout_s:g} s")
        else:
            server_info["ready_line"] = ready.group(0)
            server_info["ready_after_s"] = round(time.monotonic() - server.started, 6)
            wrong_host = placement.unexpected_host(ready.group("host"))
            if wrong_host is not None:
                problems.append(wrong_host)
            else:
                ran_load = True
                problems += _run_clients(placement, config, int(ready.group("port")), params, trial_id, load_info,
                                         outputs, started)  # fmt: skip
        problems += _stop_server(placement, server, remote_pid, params, server_info, ran_load)
        output, _ = server.output()
        outputs[server_file] = output
        server_info["stats"] = shutdown_stats(output)
        if ran_load and server_info["stats"] is None:
            problems.append("no shutdown JSON line in the server's output")
    except BaseException:
        # An interrupt (Ctrl-C, SIGTERM) or an error mid-trial: ssh forwards no signal, so the remote server
        # would outlive the local ssh the caller stops; kill it by its pid first (best effort, bounded).
        if remote_pid is not None and server.poll() is None:
            placement.run(server_host, f"kill -KILL {remote_pid}")
        raise
    return SshTrial(server=server_info, load=load_info, problems=problems, outputs=outputs, unsupported=unsupported)


def _run_clients(
    placement: SshPlacement,
    config: dict[str, Any],
    port: int,
    params: Parameters,
    trial_id: str,
    load_info: dict[str, Any],
    outputs: dict[str, bytes],
    started: list[ManagedProcess],
) -> list[str]:
    generator = load_generator(SUPPORTED_TOOL)
    url = f"http://{placement.server_address}:{port}/"
    start_ns = time.time_ns() + int(START_MARGIN_S * 1e9)
    runs = []
    local_script = str(pipeline_script())
    for host in placement.inventory.clients:
        wrk_argv = generator.command(config, url, params.wrk_timeout_s)
        # The script as set_up wrote it on that host, not this checkout's path.
        wrk_argv = [f"{host.workdir}/{WRK_SCRIPT}" if arg == local_script else arg for arg in wrk_argv]
        command = ["taskset", "-c", host.cpus, *wrk_argv]
        argv = placement.ssh_argv(host, remote_shell(command, start_ns=start_ns))
        with signals_deferred():
            process = ManagedProcess(argv, merge_stderr=False)
            started.append(process)
        runs.append((host, argv, process))
    deadline = time.monotonic() + START_MARGIN_S + generator.time_limit_s(config, params.wrk_timeout_s)
    problems: list[str] = []
    for host, argv, process in runs:
        ended = process.wait(max(deadline - time.monotonic(), 0.0))
        if ended is None:
            ended = process.kill()
            problems.append(f"client host {host.name}: wrk still running at its time limit; killed")
        stdout, stderr = process.output()
        output_file = f"{trial_id}.{host.name}.{generator.name}.txt"
        outputs[output_file] = stdout
        entry, problem = _client_result(host, argv, ended.exit_code if ended else None, stdout, stderr)
        entry["output_file"] = output_file
        entry["wall_s"] = round(ended.wall_s, 6) if ended and ended.wall_s is not None else None
        load_info["hosts"].append(entry)
        if problem:
            problems.append(problem)
    if not problems:
        load_info["combined"] = combine(load_info["hosts"])
        load_info["flags"] = sorted({flag for entry in load_info["hosts"] for flag in entry["flags"]})
    return problems


def _client_result(
    host: Host, argv: list[str], exit_code: int | None, stdout: bytes, stderr: bytes
) -> tuple[dict[str, Any], str | None]:
    text = stderr.decode("utf-8", "replace")
    start_lines = [line for line in text.splitlines() if line.startswith(START_LINE)]
    entry: dict[str, Any] = {
        "host": host.name, "address": host.address, "cpus": host.cpus, "argv": argv, "exit_code": exit_code,
        "started_at_ns": int(start_lines[0][len(START_LINE):]) if start_lines else None,
        "stderr": "\n".join(line for line in text.splitlines() if not line.startswith(START_LINE)),
        "requests_per_s": None, "requests": None, "errors": None, "latency_percentiles_s": None, "flags": [],
    }  # fmt: skip
    if exit_code != 0:
        reason = "ssh failed or the host was lost" if exit_code == 255 else "wrk failed"
        return entry, f"client host {host.name}: status {exit_code} ({reason}): {tail(stderr) or '(no stderr)'}"
    try:
        parsed = parse_output(SUPPORTED_TOOL, stdout.decode("utf-8", "replace"))
    except LoadOutputError as error:
        return entry, f"client host {host.name}: wrk output not understood: {error}"
    socket_errors = parsed.get("socket_errors") or {}
    entry.update(
        requests_per_s=parsed["requests_per_sec"],
        requests=parsed["total_requests"],
        errors=int(sum(socket_errors.values()) if isinstance(socket_errors, dict) else socket_errors or 0)
        + int(parsed.get("non_2xx") or 0),
        latency_percentiles_s=parsed["latency_s"]["percentiles"],
        flags=list(parsed.get("flags") or []),
    )
    return entry, None


def combine(hosts: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums over the client hosts; latency stays per host (percentiles of different hosts do not average)."""
    starts = [entry["started_at_ns"] for entry in hosts if entry["started_at_ns"] is not None]
    return {
        "clients": len(hosts),
        "requests_per_s": round(sum(entry["requests_per_s"] for entry in hosts), 6),
        "requests": sum(entry["requests"] for entry in hosts),
        "errors": sum(entry["errors"] for entry in hosts),
        "start_skew_s": round((max(starts) - min(starts)) / 1e9, 6) if len(starts) == len(hosts) else None,
    }


def _stop_server(
    placement: SshPlacement,
    server: ManagedProcess,
    remote_pid: int | None,
    params: Parameters,
    server_info: dict[str, Any],
    ran_load: bool,
) -> list[str]:
    host = placement.inventory.server
    ended_before_stop = server.poll()
    sent = "none"
    if remote_pid is not None and ended_before_stop is None:
        stat = placement.run(host, f"cat /proc/{remote_pid}/stat; getconf CLK_TCK")
        cpu = proc_cpu_seconds(stat.stdout) if stat.returncode == 0 else None
        if cpu is not None:
            server_info["cpu_user_s"], server_info["cpu_sys_s"] = cpu
        placement.run(host, f"kill -TERM {remote_pid}")
        sent = "SIGTERM"
        if server.wait(params.stop_grace_s) is None:
            placement.run(host, f"kill -KILL {remote_pid}")
            sent = "SIGKILL"
    ended = server.wait(params.stop_grace_s) or server.kill()
    server_info.update(exit_code=ended.exit_code if ended else None, signal_sent=None if sent == "none" else sent)
    if not ran_load:
        return []
    if ended_before_stop is not None:
        return [f"server on host {host.name} ended during the load with status {ended_before_stop.exit_code}"]
    if sent == "SIGKILL":
        return [f"server did not stop within {params.stop_grace_s:g} s of SIGTERM; killed"]
    if ended is not None and ended.exit_code != 0:
        return [f"server exited with status {ended.exit_code} after SIGTERM"]
    return []


def proc_cpu_seconds(text: str) -> tuple[float, float] | None:
    """(user, system) seconds from `cat /proc/PID/stat; getconf CLK_TCK`: the process's threads and its
    reaped children (utime + cutime, stime + cstime)."""
    lines = text.strip().splitlines()
    if len(lines) < 2 or ")" not in lines[0]:
        return None
    fields = lines[0].rsplit(")", 1)[1].split()
    try:
        ticks = float(lines[-1])
        utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    except (ValueError, IndexError):
        return None
    return round((utime + cutime) / ticks, 6), round((stime + cstime) / ticks, 6)
