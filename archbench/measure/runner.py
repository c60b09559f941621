"""Runs trials and campaigns: a fresh pinned server per trial, wrk against it, everything recorded.

One trial:
 1. start `taskset -c SERVER_CPUS build/bin/<arch> --host 127.0.0.1 --port 0 ...` in its own session
    (nginx: `taskset -c SERVER_CPUS python -m archbench.measure.nginx ...`, a launcher that behaves the same);
 2. wait for `listening on HOST:PORT` (bounded; a server that exits first, or never says it, fails the trial;
    one listening elsewhere than the placement's address is not loaded);
 3. run `taskset -c LOAD_CPUS wrk ... --latency --timeout Ts http://127.0.0.1:PORT/` (bounded; with
    `-H "Connection: close"` for connection mode close), keep stdout;
 4. stop the server's process group (SIGTERM, SIGKILL after a grace period), reap it with wait4 for
    its CPU time, read its shutdown JSON line (contracts.md section 1);
 5. the record says ok, failed (with the reason) or unsupported (the server exited with status 3
    before its ready line: this kernel lacks what it needs); it is never dropped.

With `idle_connections` K, idle_holder holds K idle keep-alive connections to the server from before the load to
after it (archbench.measure.idle); the record's `idle` says how that went, and a hold that fails fails the trial.
`server.load_cpu_s` is the server's CPU time over the load window alone (archbench.measure.proctree), without its
start-up, the idle connections' set-up and its shutdown. With `warmup_s` > 0 the same load runs that long against
the same server before step 3 (archbench.measure.warmup): its output is `<trial-id>.warmup.<tool>.txt`, its run the
record's `load_warmup`, and a failed warm-up fails the trial before the measured load.

The record also says which server CPU numbers measure the server (`server.cpu_source`: "tree", the
wait4 numbers, or "stats", the server's own, for nginx without its launcher) and how busy the load
generator was (`load.cpu_utilisation`, its own user + sys time per wall second and CPU), so downstream
can mark client-bound trials. Because rusage leaves out interrupt and softirq time, where loopback
TCP does much of its work, `server.cpus_busy` and `load.cpus_busy` also give the busy fraction of each
CPU set during the load, from /proc/stat (archbench.measure.cpustat), and `cpu_shares` the same interval's
steal, irq, softirq and iowait shares, for the machine and each CPU set (the noise diagnostics). From the same
readings and the trial's own CPU time, `interference` says whether other work took either CPU set during the load
(archbench.measure.interference); a disturbed ok trial is kept and run again right away in its round, up to
`max_reruns` times (archbench.measure.reruns), also when a campaign resumes.

With placement netns (archbench.measure.placement) the server's address is its namespace's
(10.213.<k>.1) and both commands are prefixed with `ip netns exec <namespace>`; the record then has a
`placement` object naming the namespaces, the addresses and the link model. Loopback records have none.

A campaign runs the plan of `archbench.config.plan` in order, skipping trials already
committed, and commits each trial's files with `archbench.data.storage` as soon as
it ends, so an interrupted campaign loses at most the trial in flight. The placement is set up once,
before the first trial, and removed after the last (also on an interrupt or an error). A new campaign first
measures its iperf3 bandwidth baseline through that placement (archbench.measure.baseline), kept in the
provenance of campaign.json and of every trial record.
"""

from __future__ import annotations

import resource
import secrets
import shutil
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from archbench.config.loadgen import LoadGenerator, load_generator, pipeline_script
from archbench.config.params import FD_HEADROOM, Parameters, differing_parameters, parse_cpu_list
from archbench.config.plan import PlannedTrial, grid_exclusions, plan_campaign, warmup_duration_s
from archbench.config.servers import server_spec, server_specs
from archbench.config.workloads import command_config
from archbench.data.storage import Campaign, CampaignMismatchError, CampaignStore, load_campaign, signals_deferred
from archbench.measure import adaptive, selection
from archbench.measure.baseline import BASELINE_KEY, measure_baseline
from archbench.measure.cpustat import busy_fraction, cpu_shares, cpu_times, read_proc_stat
from archbench.measure.idle import TOOL as IDLE_TOOL
from archbench.measure.idle import IdleHold, holder_command, idle_sources
from archbench.measure.interference import CPU_SETS, CpuSetUse, is_disturbed, trial_interference
from archbench.measure.placement import Loopback, Placement, PlacementError, network_placement, preflight_problems
from archbench.measure.processes import ManagedProcess
from archbench.measure.proctree import tree_cpu_s
from archbench.measure.progress import Progress
from archbench.measure.provenance import collect_provenance
from archbench.measure.reruns import (
    RERUN_KEY,
    RunOne,
    due_reruns,
    is_rerun,
    progress_detail,
    rerun_until_undisturbed,
    run_with_reruns,
)
from archbench.measure.server_protocol import EXIT_UNSUPPORTED, READY_LINE, ready_fields, shutdown_stats, typed_fields
from archbench.measure.ssh_placement import SshPlacement, local_problems, run_ssh_trial
from archbench.measure.warmup import SERVER_WARMUP_CPU_KEY, WARMUP_KEY, LoadTarget, run_warmup
from archbench.parse import LoadOutputError, known_tools, parse_output

SCHEMA = 1
OUTPUT_TAIL_CHARS = 2000
BUILD_HINT = "build the servers: cmake -S servers_c -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2"


class PreflightError(RuntimeError):
    """Something the campaign needs is missing; nothing was run."""


class CampaignInterrupted(KeyboardInterrupt):
    """SIGINT/SIGTERM during a campaign: children were stopped, finished trials are kept."""


@dataclass
class TrialOutcome:
    record: dict[str, Any]
    outputs: dict[str, bytes]  # file name -> verbatim content


@dataclass
class CampaignResult:
    path: Path
    planned: int
    skipped: int  # already finished before this run
    # Of the trials run now, each counted once with the status of its last record (its re-runs' if it had any).
    statuses: Counter[str] = field(default_factory=Counter)
    disturbed: int = 0  # trials run now that were judged disturbed (archbench.measure.interference)
    reruns: int = 0  # re-runs of disturbed trials run now (archbench.measure.reruns)

    @property
    def ran(self) -> int:
        return sum(self.statuses.values())


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat()


def tail(data: bytes, chars: int = OUTPUT_TAIL_CHARS) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= chars else "..." + text[-chars:]


# --------------------------------------------------------------------------- one trial


def run_trial(
    planned: PlannedTrial, params: Parameters, provenance: dict[str, Any], placement: Placement | None = None
) -> TrialOutcome:
    """Run one trial end to end (on loopback unless `placement` says else, already set up).
    Raises only on interruption (after stopping its children)."""
    placement = placement if placement is not None else Loopback()
    config = planned.config.as_dict()
    spec = server_spec(planned.config.architecture)
    generator = load_generator(planned.config.load_generator)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    trial_id = planned.trial_id
    started_at = utc_now()
    server_file = f"{trial_id}.server.txt"
    server_config = command_config(config, params.seed, trial_id)  # with the --seed of its waits, if it draws any
    server_argv = placement.server_argv(
        [
            "taskset",
            "-c",
            params.server_cpus,
            *spec.command(server_config, Path(params.build_dir), placement.server_address),
        ]
    )
    idle_connections = int(config.get("idle_connections") or 0)
    server_info: dict[str, Any] = {
        "argv": server_argv,
        "cpus": params.server_cpus,
        "ready_line": None,
        "ready_fields": None,
        **({"seed": server_config["seed"]} if "seed" in server_config else {}),
        "ready_after_s": None,
        "exit_code": None,
        "signal_sent": None,
        "stats": None,
        "cpu_user_s": None,
        "cpu_sys_s": None,
        "cpu_source": spec.cpu_source,
        "cpus_busy": None,
        "load_cpu_s": None,
        "output_file": server_file,
    }
    load_info: dict[str, Any] = {
        "tool": generator.name,
        "argv": None,
        "cpus": params.load_cpus,
        "exit_code": None,
        "wall_s": None,
        "cpu_user_s": None,
        "cpu_sys_s": None,
        "cpu_utilisation": None,
        "cpus_busy": None,
        "output_file": None,
        "stderr": None,
        "flags": None,
    }
    problems: list[str] = []
    unsupported = False
    outputs: dict[str, bytes] = {}
    shares: dict[str, Any] = {}  # _run_load fills it: the load interval's cpu_shares (cpustat) and interference
    hold: IdleHold | None = None  # idle connections beside the load (archbench.measure.idle)
    warmup_info: dict[str, Any] | None = None  # the warm-up before the measured load (archbench.measure.warmup)

    children: list[ManagedProcess] = []  # everything started, so an interrupt can stop it all
    try:
        if isinstance(placement, SshPlacement):
            ssh_trial = run_ssh_trial(planned, params, placement, children)
            server_info, load_info, outputs = ssh_trial.server, ssh_trial.load, ssh_trial.outputs
            problems, unsupported = ssh_trial.problems, ssh_trial.unsupported
        else:
            server = spawn(server_argv, merge_stderr=True, children=children, env=spec.environment())
            server_info["pid"] = server.pid  # ip netns exec and taskset exec the server: this is the server's own pid
            ran_load = False
            ready = server.wait_for_line(READY_LINE, params.ready_timeout_s)
            if ready is None:
                early_exit = server.wait(0.5)
                if early_exit is None:
                    problems.append(f"no ready line ('listening on HOST:PORT') within {params.ready_timeout_s:g} s")
                elif early_exit.exit_code == EXIT_UNSUPPORTED:
                    unsupported = True
                    problems.append(
                        f"server reports an unsupported feature (exit status 3): {tail(server.output_so_far())}"
                    )
                else:
                    problems.append(
                        f"server exited with status {early_exit.exit_code} before its ready line; "
                        f"output tail: {tail(server.output_so_far()) or '(none)'}"
                    )
            else:
                server_info["ready_line"] = ready.group(0)
                server_info["ready_fields"] = typed_fields(ready_fields(ready))
                server_info["ready_after_s"] = round(time.monotonic() - server.started, 6)
                host, port = ready.group("host"), int(ready.group("port"))
                wrong_host = placement.unexpected_host(host)
                if idle_connections and wrong_host is None:
                    hold = _start_idle_hold(idle_connections, host, port, placement, params, trial_id, children)
                if wrong_host is not None:
                    problems.append(wrong_host)
                elif hold is None or hold.held:
                    ran_load = True
                    load_problem = None
                    warm_s = warmup_duration_s(params, planned.config)
                    target = LoadTarget(
                        generator,
                        config,
                        _load_url(generator, host, port),
                        server.pid,
                        placement,
                        params,
                        trial_id,
                        lambda argv: spawn(argv, merge_stderr=False, children=children),
                    )
                    if warm_s:
                        warmup_info, server_info[SERVER_WARMUP_CPU_KEY], load_problem = run_warmup(
                            target, warm_s, outputs
                        )
                    if load_problem is None:
                        load_problem = _run_load(target, TrialOutputs(load_info, server_info, outputs, shares))
                    if load_problem:
                        problems.append(load_problem)
                if hold is not None:
                    problems += hold.stop(outputs)
            problems += _stop_server(server, params, server_info, outputs, server_file, ran_load=ran_load)
    except BaseException:
        # Interrupted (or a bug): leave no process behind, record nothing for this trial.
        for child in reversed(children):
            child.kill()
        raise

    status = "unsupported" if unsupported else ("failed" if problems else "ok")
    extra = {"adaptive": True} if planned.adaptive else {}
    record = {
        "schema": SCHEMA,
        "trial_id": trial_id,
        "campaign": params.campaign,
        "config_id": planned.config_id,
        "config": config,
        "repetition": planned.repetition,
        "warmup": planned.warmup,
        "order_index": planned.order_index,
        **extra,
        "seed": params.seed,
        "status": status,
        "failure_reason": "; ".join(problems) if problems else None,
        "started_at": started_at,
        "finished_at": utc_now(),
        "server": server_info,
        "load": load_info,
        # Server and load generator each need one descriptor per connection, within these limits
        # (both inherit the soft limit the preflight raised; echo_client raises its own to the hard one).
        "open_files": {
            "soft": soft,
            "hard": hard,
            "needed": planned.config.connections + idle_connections + FD_HEADROOM,
        },
        **({"idle": hold.info} if hold is not None else {}),
        **({WARMUP_KEY: warmup_info} if warmup_info is not None else {}),
        "provenance": provenance,
    }
    placement_record = placement.record()
    if placement_record is not None:
        record["placement"] = placement_record
    record["cpu_shares"] = shares.get("cpu_shares")
    record["interference"] = shares.get("interference")  # archbench.measure.interference
    return TrialOutcome(record=record, outputs=outputs)


def spawn(
    argv: list[str], *, merge_stderr: bool, children: list[ManagedProcess], env: dict[str, str] | None = None
) -> ManagedProcess:
    """Start a child and register it, with SIGINT/SIGTERM held meanwhile.

    An interrupt landing inside Popen (after fork, before the object exists)
    would leave a child nobody knows about; held, it arrives once the child is
    in `children`, where the interrupt handler finds and kills it.
    """
    with signals_deferred():
        child = ManagedProcess(argv, merge_stderr=merge_stderr, env=env)
        children.append(child)
    return child


def _start_idle_hold(
    connections: int,
    host: str,
    port: int,
    placement: Placement,
    params: Parameters,
    trial_id: str,
    children: list[ManagedProcess],
) -> IdleHold:
    """Start idle_holder on the load CPUs (as the load generator runs) and wait until it holds every connection."""
    sources = idle_sources(connections, loopback=isinstance(placement, Loopback))
    command = holder_command(Path(params.build_dir), host, port, connections, sources)
    argv = placement.load_argv(["taskset", "-c", params.load_cpus, *command])
    hold = IdleHold(argv, params.load_cpus, connections, sources, output_file=f"{trial_id}.{IDLE_TOOL}.txt")
    hold.process = spawn(argv, merge_stderr=False, children=children)
    hold.wait_until_holding()
    return hold


def _load_url(generator: LoadGenerator, host: str, port: int) -> str:
    scheme = "tcp" if generator.protocol == "echo" else "http"
    return f"{scheme}://{host}:{port}/"


@dataclass(frozen=True)
class TrialOutputs:
    """What a trial's measured load fills in: the record's `load` and `server` parts, the files to write, and the
    load interval's cpu_shares and interference."""

    load: dict[str, Any]
    server: dict[str, Any]
    files: dict[str, bytes]
    shares: dict[str, Any]


def _run_load(target: LoadTarget, filled: TrialOutputs) -> str | None:
    """The measured load: run it to its end, fill `filled`, and return the problem that fails the trial or None."""
    generator, params, trial_id = target.generator, target.params, target.trial_id
    load_info, server_info, outputs, shares = filled.load, filled.server, filled.files, filled.shares
    # taskset execs the server, so the pid the runner started is the server's (echo_client reads its VmRSS).
    argv = target.argv(target.config)
    load_info["argv"] = argv
    server_cpu_before = tree_cpu_s(target.server_pid)
    stat_before = read_proc_stat()
    window_started = time.monotonic()
    load = target.spawn(argv)
    limit_s = generator.time_limit_s(target.config, params.wrk_timeout_s)
    ended = load.wait(limit_s)
    stat_after = read_proc_stat()
    window_s = time.monotonic() - window_started
    server_cpu_after = tree_cpu_s(target.server_pid)
    if server_cpu_before is not None and server_cpu_after is not None:
        server_info["load_cpu_s"] = round(server_cpu_after - server_cpu_before, 6)
    load_cpus = parse_cpu_list(params.load_cpus, "load_cpus")
    server_cpus = parse_cpu_list(params.server_cpus, "server_cpus")
    load_info["cpus_busy"] = busy_fraction(cpu_times(stat_before), cpu_times(stat_after), load_cpus)
    server_info["cpus_busy"] = busy_fraction(cpu_times(stat_before), cpu_times(stat_after), server_cpus)
    shares["cpu_shares"] = cpu_shares(stat_before, stat_after, server_cpus=server_cpus, load_cpus=load_cpus)
    problem = None
    if ended is None:
        ended = load.kill()
        problem = f"{generator.name} still running after {limit_s:g} s; killed"
    stdout, stderr = load.output()
    output_file = generator.output_file(trial_id)
    outputs[output_file] = stdout
    wall_s = ended.wall_s if ended is not None and ended.wall_s is not None else time.monotonic() - load.started
    load_info.update(output_file=output_file, wall_s=round(wall_s, 6), stderr=stderr.decode("utf-8", "replace"))
    if ended is not None:
        load_info.update(
            exit_code=ended.exit_code,
            cpu_user_s=ended.cpu_user_s,
            cpu_sys_s=ended.cpu_sys_s,
            cpu_utilisation=cpu_utilisation(ended.cpu_user_s + ended.cpu_sys_s, wall_s, params.load_cpus),
        )
    own_load_s = ended.cpu_user_s + ended.cpu_sys_s if ended is not None else None
    uses = (CpuSetUse(server_cpus, server_info["load_cpu_s"]), CpuSetUse(load_cpus, own_load_s))
    shares["interference"] = trial_interference(
        stat_before, stat_after, window_s, dict(zip(CPU_SETS, uses, strict=True)), params.interference_share
    )
    if problem is None and ended is not None and not generator.measured(ended.exit_code):
        problem = f"{generator.name} exited with status {ended.exit_code}: {tail(stderr) or '(no stderr)'}"
    if problem is None:
        try:
            parsed = parse_output(generator.name, stdout.decode("utf-8", "replace"))
        except LoadOutputError as error:
            problem = f"{generator.name} output not understood: {error}"
        else:
            # Why the measurement must not be averaged silently (e.g. echo verify_errors); the trial
            # stays ok, its output is the evidence.
            load_info["flags"] = list(parsed.get("flags") or [])
            if parsed.get("max_conns") is not None:
                load_info["max_conns"] = parsed["max_conns"]  # count reached, why it stopped, memory per connection
    return problem


def cpu_utilisation(cpu_s: float, wall_s: float, cpus: str) -> float | None:
    """Busy fraction of the CPUs a process was pinned to: (user + sys) / (wall x CPUs).

    At 0.95 or more the load generator, not the server, set the rate (a client-bound trial).
    """
    count = len(parse_cpu_list(cpus, "cpus"))
    if wall_s <= 0 or count == 0:
        return None
    return round(cpu_s / (wall_s * count), 6)


def _stop_server(
    server: ManagedProcess,
    params: Parameters,
    server_info: dict[str, Any],
    outputs: dict[str, bytes],
    server_file: str,
    ran_load: bool,
) -> list[str]:
    ended_before_stop = server.poll()
    ended, sent = server.stop(params.stop_grace_s)
    output, _ = server.output()
    outputs[server_file] = output
    stats = shutdown_stats(output)
    server_info.update(
        exit_code=ended.exit_code,
        signal_sent=None if sent == "none" else sent,
        stats=stats,
        cpu_user_s=ended.cpu_user_s,
        cpu_sys_s=ended.cpu_sys_s,
    )
    if not ran_load:
        return []  # the trial already failed before the load; its reason says why
    problems = []
    if ended_before_stop is not None or sent == "none":
        problems.append(
            f"server exited on its own during the load with status {ended.exit_code}; "
            f"output tail: {tail(output) or '(none)'}"
        )
    elif sent == "SIGKILL":
        problems.append(f"server did not stop within {params.stop_grace_s:g} s of SIGTERM; killed")
    elif ended.exit_code != 0:
        problems.append(f"server exited with status {ended.exit_code} after SIGTERM")
    if stats is None:
        problems.append("no shutdown JSON line in the server's output")
    return problems


# --------------------------------------------------------------------------- a campaign


def preflight(params: Parameters, plan: list[PlannedTrial]) -> None:
    """Fail before anything runs if a binary, tool or script is missing or file descriptors would run out."""
    specs = server_specs()
    architectures = [specs[name] for name in dict.fromkeys(t.config.architecture for t in plan)]
    missing = [str(path) for spec in architectures if (path := spec.missing_binary(Path(params.build_dir)))]
    if missing:
        raise PreflightError(f"server binaries missing: {', '.join(missing)}; {BUILD_HINT}")
    unavailable = [reason for spec in architectures if (reason := spec.unavailable_reason())]
    if unavailable:
        raise PreflightError("; ".join(unavailable))
    if shutil.which("taskset") is None:
        raise PreflightError("not on PATH: taskset (apt-get install util-linux)")
    generators = [load_generator(name) for name in dict.fromkeys(t.config.load_generator for t in plan)]
    absent = [reason for g in generators if (reason := g.missing_reason(Path(params.build_dir)))]
    if absent:
        raise PreflightError(f"load generator missing: {'; '.join(absent)}")
    unparsed = [g.name for g in generators if g.name not in known_tools()]
    if unparsed:
        raise PreflightError(
            f"no parser for {', '.join(unparsed)} in archbench/parsers (known: "
            f"{', '.join(known_tools())}); its trials could not be checked"
        )
    holder = Path(params.build_dir) / "bin" / IDLE_TOOL
    if any(_idle_connections(t) for t in plan) and not holder.is_file():
        raise PreflightError(f"idle connections need {holder}, which is missing; {BUILD_HINT}")
    if any(t.config.pipeline > 1 for t in plan) and not pipeline_script().is_file():
        raise PreflightError(f"pipelining needs {pipeline_script()}, which is missing")
    placement_problems = preflight_problems(params.placement, params.link)
    if params.placement == "ssh":
        placement_problems += local_problems(params)
        # local_problems checks the campaign's load generator; entries may name their own (e.g. httperf).
        own = sorted({t.config.load_generator for t in plan} - {"wrk", params.load_generator})
        if own:
            placement_problems.append(f"placement ssh runs wrk on the client hosts, not {', '.join(own)}")
    if params.placement != "loopback" and params.proto == "echo" and params.sources:
        placement_problems.append(
            f"echo sources bind the load generator to 127.0.0.x, which placement {params.placement} cannot reach: "
            "set sources to 0 or use placement loopback"
        )
    if placement_problems:
        raise PreflightError("; ".join(placement_problems))
    # The server holds a trial's idle connections beside its active ones.
    needed = max((t.config.connections + _idle_connections(t) for t in plan), default=0) + FD_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise PreflightError(
                f"connection_counts: {needed - FD_HEADROOM} connections (idle ones included) need {needed} open "
                f"files, but the hard limit is {hard} (raise it with ulimit -Hn)"
            )
        # Children (server, wrk) inherit the raised soft limit.
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def _idle_connections(planned: PlannedTrial) -> int:
    workload = planned.config.workload
    return workload.idle_connections if workload is not None else 0


def _campaign_meta(params: Parameters, plan: list[PlannedTrial], provenance: dict[str, Any]) -> dict[str, Any]:
    configs = {t.config_id: t.config.as_dict() for t in plan}
    # What the workload families left out, and why (only campaigns with workloads have the key).
    excluded = {"excluded": [e.as_dict() for e in grid_exclusions(params)]} if params.workloads else {}
    return {
        "schema": SCHEMA,
        "campaign": params.campaign,
        "created_at": utc_now(),
        "profile": params.profile,
        "parameters": params.to_dict(),
        "seed": params.seed,
        "plan": [t.trial_id for t in plan],
        "configs": configs,
        **excluded,
        "provenance": provenance,
    }


def prepare_campaign(params: Parameters) -> tuple[Parameters, list[PlannedTrial], CampaignStore, dict[str, Any] | None]:
    """Settle the seed and the plan, checking an existing campaign.json agrees with `params`."""
    store = CampaignStore(Path(params.raw_root) / params.campaign)
    existing = store.read_meta()
    if existing is None:
        seed = params.seed if params.seed is not None else secrets.randbelow(2**31)
        params = params.with_seed(seed)
        return params, plan_campaign(params), store, None
    differences = differing_parameters(existing.get("parameters", {}), params)
    if differences:
        raise CampaignMismatchError(
            f"campaign {params.campaign!r} ({store.path}) was created with different parameters: "
            f"{'; '.join(differences)}. Re-run with its parameters, or choose another --campaign."
        )
    params = params.with_seed(int(existing["seed"]))
    plan = plan_campaign(params)
    if [t.trial_id for t in plan] != list(existing.get("plan", [])):
        raise CampaignMismatchError(
            f"campaign {params.campaign!r}: the plan computed now differs from the one in {store.meta_path} "
            f"although the parameters match (the planning code changed?); not mixing the two"
        )
    return params, plan, store, existing


def run_campaign(params: Parameters, *, stream: TextIO | None = None, deadline: float | None = None) -> CampaignResult:
    """Run (or resume) the campaign `params` describes; returns what ran now. `deadline` (time.monotonic()) is when
    the selection phase's last round must end, beside its selection_budget_s (a user's time budget: `pick`)."""
    stream = stream or sys.stderr
    params, plan, store, existing = prepare_campaign(params)
    preflight(params, plan)
    store.check_no_incomplete_trials()
    try:
        with network_placement(params) as placement:
            return _run_placed_campaign(params, plan, store, existing, placement, stream, deadline)
    except PlacementError as error:
        raise PreflightError(str(error)) from None


def _run_placed_campaign(
    params: Parameters,
    plan: list[PlannedTrial],
    store: CampaignStore,
    existing: dict[str, Any] | None,
    placement: Placement,
    stream: TextIO,
    deadline: float | None,
) -> CampaignResult:
    provenance = collect_provenance(params.build_dir)
    # The bandwidth baseline: measured once, before the campaign's first trial; a resumed run carries it on.
    if existing is None:
        provenance[BASELINE_KEY] = measure_baseline(params, placement)
        store.create(_campaign_meta(params, plan, provenance))
    elif BASELINE_KEY in (existing.get("provenance") or {}):
        provenance[BASELINE_KEY] = existing["provenance"][BASELINE_KEY]

    finished = store.finished_trial_ids()
    todo = [t for t in plan if t.trial_id not in finished]
    result = CampaignResult(path=store.path, planned=len(plan), skipped=len(plan) - len(todo))
    progress = Progress(
        total=len(plan),
        already_done=result.skipped,
        remaining_work_s=float(sum(_load_s(params, t) for t in todo)),
        stream=stream,
    )
    run_one = _committer(params, provenance, placement, store, result, len(plan))
    _run_due_reruns(plan, store, run_one, params, stream)
    progress.start_message(params.campaign)
    _run_trials(todo, params, provenance, placement, store, result, progress, planned_total=len(plan))
    if params.ci_target is not None:
        _run_adaptive_phase(params, plan, provenance, placement, store, result, stream)
    if params.selection_delta is not None:
        _run_selection_phase(params, plan, provenance, placement, store, result, stream, deadline)
    return result


def _load_s(params: Parameters, planned: PlannedTrial) -> int:
    """Seconds a trial loads its server: the measured window and the warm-up before it (the progress estimate)."""
    return planned.config.duration_s + warmup_duration_s(params, planned.config)


def _run_trials(
    trials: list[PlannedTrial],
    params: Parameters,
    provenance: dict[str, Any],
    placement: Placement,
    store: CampaignStore,
    result: CampaignResult,
    progress: Progress,
    planned_total: int,
) -> None:
    """Run and commit each trial, and right after a disturbed one its re-runs (archbench.measure.reruns)."""
    run_one = _committer(params, provenance, placement, store, result, planned_total)
    for planned in trials:
        records = run_with_reruns(planned, run_one, params.max_reruns)
        result.statuses[records[-1]["status"]] += 1
        status, detail = records[0]["status"], progress_detail(records)
        progress.trial_finished(planned.trial_id, status, _load_s(params, planned), detail)


def _committer(
    params: Parameters,
    provenance: dict[str, Any],
    placement: Placement,
    store: CampaignStore,
    result: CampaignResult,
    planned_total: int,
) -> RunOne:
    """A function that runs one trial (the re-run of `reruns`, if given) and commits it; an interrupt becomes
    CampaignInterrupted, which says how many trials are kept."""

    def run_one(planned: PlannedTrial, reruns: str | None) -> dict[str, Any]:
        try:
            outcome = run_trial(planned, params, provenance, placement)
            if reruns is not None:
                outcome.record[RERUN_KEY] = reruns
            store.commit_trial(planned.trial_id, outcome.outputs, outcome.record)
        except KeyboardInterrupt:
            # Counted on disk: an interrupt held during a commit arrives after the trial is finished.
            done = sum(1 for trial_id in store.finished_trial_ids() if not is_rerun(trial_id))
            raise CampaignInterrupted(
                f"campaign {params.campaign!r} interrupted: {done} of {max(done, planned_total)} trials are finished "
                f"and kept in {store.path}; run the same command again to resume"
            ) from None
        result.disturbed += is_disturbed(outcome.record)
        result.reruns += reruns is not None
        return outcome.record

    return run_one


def _run_due_reruns(
    plan: list[PlannedTrial], store: CampaignStore, run_one: RunOne, params: Parameters, stream: TextIO
) -> None:
    """The re-runs a resumed campaign owes: disturbed trials on disk whose re-run an interrupt prevented."""
    configs = {t.config_id: t.config for t in plan}
    for original, last in due_reruns(load_campaign(store.path).trials, configs, params.max_reruns):
        again = rerun_until_undisturbed(original, last, run_one, params.max_reruns)
        print(f"{last['trial_id']}: {progress_detail([last, *again])}", file=stream, flush=True)


def _run_adaptive_phase(
    params: Parameters,
    plan: list[PlannedTrial],
    provenance: dict[str, Any],
    placement: Placement,
    store: CampaignStore,
    result: CampaignResult,
    stream: TextIO,
) -> None:
    """Rounds of extra trials until every configuration meets ci_target or has max_trials (archbench.measure.adaptive)."""
    configs = list({t.config_id: t.config for t in plan}.values())
    run_round = _round_runner(params, len(plan), provenance, placement, store, result, stream)
    if params.adaptive_criterion != adaptive.MEAN_CRITERION:  # whole rounds on the paired ratios
        adaptive.run_paired_phase(params, configs, store.path, len(plan), run_round, stream)
    else:
        adaptive.run_mean_phase(params, configs, store.path, len(plan), run_round, stream)


def _run_selection_phase(
    params: Parameters,
    plan: list[PlannedTrial],
    provenance: dict[str, Any],
    placement: Placement,
    store: CampaignStore,
    result: CampaignResult,
    stream: TextIO,
    deadline: float | None,
) -> None:
    """Rounds only where a workload point is still open (archbench.measure.selection), none past the deadline."""
    configs = list({t.config_id: t.config for t in plan}.values())
    run_round = _round_runner(params, len(plan), provenance, placement, store, result, stream)
    selection.run_selection_phase(params, configs, store.path, len(plan), run_round, stream, deadline=deadline)


def _round_runner(
    params: Parameters,
    planned_total: int,
    provenance: dict[str, Any],
    placement: Placement,
    store: CampaignStore,
    result: CampaignResult,
    stream: TextIO,
) -> Callable[[list[PlannedTrial]], None]:
    """What an added phase calls to run one of its rounds: the trials with their progress lines and re-runs."""

    def run_round(extra: list[PlannedTrial]) -> None:
        work_s = float(sum(_load_s(params, t) for t in extra))
        progress = Progress(total=len(extra), already_done=0, remaining_work_s=work_s, stream=stream)
        _run_trials(extra, params, provenance, placement, store, result, progress, planned_total=planned_total)

    return run_round


# --------------------------------------------------------------------------- what ran


def campaign_overview(campaign: Campaign | Path | str) -> list[dict[str, Any]]:
    """Per configuration: status counts of the measured trials, flagged and disturbed counts, median throughput
    (`median_req_per_s`, or `median_echoes_per_s` for echo) over the ok, unflagged, undisturbed ones."""
    if not isinstance(campaign, Campaign):
        campaign = load_campaign(Path(campaign))
    rows: dict[str, dict[str, Any]] = {}
    rates: dict[str, list[float]] = {}
    for record in campaign.trials:
        config_id = record["config_id"]
        row = rows.setdefault(
            config_id,
            {"config": config_id, "ok": 0, "failed": 0, "unsupported": 0, "flagged": 0, "disturbed": 0, "warmups": 0},
        )
        if record.get("warmup"):
            row["warmups"] += 1
            continue
        row[record["status"]] = row.get(record["status"], 0) + 1
        rate, flags = adaptive.trial_throughput(record, campaign.path)
        row["disturbed"] += is_disturbed(record)
        if flags:
            row["flagged"] += 1
        elif rate is not None and not is_disturbed(record):
            rates.setdefault(config_id, []).append(rate)
    echo_configs = {r["config_id"] for r in campaign.trials if (r.get("config") or {}).get("proto") == "echo"}
    for config_id, row in rows.items():
        values = rates.get(config_id)
        key = "median_echoes_per_s" if config_id in echo_configs else "median_req_per_s"
        row[key] = statistics.median(values) if values else None
    return list(rows.values())
