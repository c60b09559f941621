"""Models of the raw data's JSON files: the trial record (`<trial-id>.json`) and campaign.json.

docs/contracts.md section 2 explains what the fields mean; these pydantic models say which keys and JSON
types a file may have, and `main()` writes them as JSON Schemas to docs/schemas/:

    python -m archbench.data.records --write docs/schemas

Records are immutable, so the models must accept every record ever written (tests/test_records.py
validates all of data/raw/ and tests/fixtures/campaigns/). A field added after the first records is
optional here (`None` default), and its description says what its absence means. Values are never coerced
(strict): the code reads the files as plain dicts, so a model must not accept what that code would misread.

Closed formats (extra="forbid": an unknown key is an error) are everything the runner writes itself: the
record, `config`, `server`, `load`, `open_files` and campaign.json. Open ones (extra="allow") are the
parts that describe the outside world and grow with it: `provenance` (and its `tools` and
`python_packages`), the server's own shutdown `stats` and echo_client's `max_conns` object, both printed
by another program.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from archbench.config.parameter_model import LegacyParameters, ProfileValues, StoredParameters

SCHEMA_VERSION = 1
MISSING_IN_OLDER = "missing in older records"


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class TrialConfigRecord(_Closed):
    """A trial's `config` (`archbench.config.plan.TrialConfig.as_dict`). Closed.

    Every option of every architecture is present, null where it does not apply; records written before
    an option existed lack it (`trigger` missing means the architecture's default). The echo fields appear
    only in echo trials, the offered-load fields only in open-loop ones.
    """

    architecture: str
    threads: int | None = Field(description="worker threads or processes; null without a parallelism to set")
    max_threads: int | None = Field(None, description=f"thread_per_conn's cap (0: none); {MISSING_IN_OLDER}")
    dispatch: str | None = Field(None, description=f"thread_pool's dispatch; {MISSING_IN_OLDER}")
    handoff: str | None = Field(None, description=f"thread_pool's handoff; {MISSING_IN_OLDER}")
    trigger: Literal["level", "edge"] | None = Field(
        None, description="epoll notification; missing (older records) means the architecture's default")
    response: str
    connections: int
    load_threads: int
    duration_s: int
    load_generator: str
    pipeline: int = Field(1, description="requests (echo: messages) in flight per connection; missing means 1")
    proto: Literal["http", "echo"] | None = Field(None, description="echo trials only; missing means http")
    mode: Literal["throughput", "max_conns"] | None = Field(None, description="echo trials only")
    cap: int | None = Field(None, description="echo: the --max-conns cap, null in throughput mode")
    message_size: int | None = Field(None, description="echo trials only: --size")
    sources: int | None = Field(None, description="echo trials only: --sources")
    connect_rate: int | None = Field(None, description="echo trials only: --connect-rate, 0 = all at once")
    offered_rate: int | None = Field(None, description="open loop only: req/s over all connections; "
                                                       "missing means a closed loop")
    rate_fraction: float | None = Field(None, description="open loop only")
    saturation_rate: float | None = Field(None, description="open loop only: req/s")
    saturation_of: str | None = Field(None, description="open loop only: a saturation key")
    saturation_source: str | None = Field(None, description="open loop only: which campaign and statistic")
    arrival: Literal["fixed", "poisson"] | None = Field(None, description="open_loop trials only: its schedule "
                                                       "(--arrival); missing means fixed")
    source: str | None = Field(None, description="the write-up its profile entry reproduces (docs/sources.md); "
                                                 "missing when the entry names none")
    httperf_calls: int | None = Field(None, description="httperf trials only: --num-calls")
    httperf_rate: int | None = Field(None, description="httperf trials only: --rate, 0 = none")
    httperf_hog: bool | None = Field(None, description="httperf trials only: --hog")
    workload: str | None = Field(None, description="the workload family it came from (a label, not part of the "
                                                   "config id); missing: a campaign without workloads")
    work_us: int | None = Field(None, description="--work-us, microseconds of CPU per request; missing means 0")
    block_us: int | None = Field(None, description="--block-us, microseconds of blocking wait per request; "
                                                   "missing means 0")
    block_dist: Literal["fixed", "exp"] | None = Field(None, description="--block-dist, with block_us only; "
                                                                         "missing means fixed")
    idle_connections: int | None = Field(None, description="keep-alive connections idle_holder held idle during "
                                                           "the trial (the record's `idle`); missing means 0")
    connection_mode: Literal["keep-alive", "close"] | None = Field(
        None, description="close: one request per connection (wrk -H 'Connection: close'); missing means keep-alive")


class ServerRun(_Closed):
    """The record's `server`: how the server ran. Closed; its `stats` (the server's shutdown JSON) is open."""

    argv: list[str]
    cpus: str
    pid: int | None = Field(None, description=f"the server's pid (taskset execs it); {MISSING_IN_OLDER}")
    ready_line: str | None
    ready_fields: dict[str, int | float | str] | None = Field(
        None, description="the ready line's key=value fields (e.g. the work loop's calibration with --work-us), "
                          f"numbers where they are numbers; null without a ready line; {MISSING_IN_OLDER}")
    seed: int | None = Field(None, description="the --seed the server got (exponential waits only); missing: none")
    ready_after_s: float | None
    exit_code: int | None
    signal_sent: str | None
    stats: dict[str, Any] | None = Field(description="the server's shutdown JSON line, as printed")
    cpu_user_s: float | None
    cpu_sys_s: float | None
    cpu_source: Literal["tree", "stats", "proc"] | None = Field(
        None, description="missing (older records) means tree; proc: /proc/PID/stat on the server host (ssh)")
    cpus_busy: float | None = Field(None, description=f"busy fraction of server.cpus; {MISSING_IN_OLDER}")
    load_cpu_s: float | None = Field(
        None, description="user + sys seconds of the server's process tree over the load window alone "
                          "(/proc/PID/stat), without start-up, idle connections' set-up and shutdown; null where "
                          f"unreadable; {MISSING_IN_OLDER}")
    output_file: str
    host: str | None = Field(None, description="placement ssh: the inventory name of the server host")
    warmup_cpu_s: float | None = Field(
        None, description="trials with a warm-up only: user + sys seconds of the server's process tree over the "
                          "warm-up (/proc/PID/stat), which its whole-life CPU time includes; null where unreadable")


class LoadHostRun(_Closed):
    """One client host's wrk under placement ssh (archbench.measure.ssh_placement). Closed."""

    host: str
    address: str
    cpus: str
    argv: list[str]
    exit_code: int | None
    started_at_ns: int | None = Field(description="the host's clock when its wrk started (the barrier's end)")
    stderr: str
    requests_per_s: float | None
    requests: int | None
    errors: int | None = Field(description="socket errors plus non-2xx responses")
    latency_percentiles_s: dict[str, float | None] | None = Field(description="this host's, as wrk printed them")
    flags: list[str]
    output_file: str = Field(description="<trial-id>.<host>.wrk.txt, wrk's stdout verbatim")
    wall_s: float | None


class CombinedLoad(_Closed):
    """The client hosts together: sums only (latency percentiles stay per host). Closed."""

    clients: int
    requests_per_s: float
    requests: int
    errors: int
    start_skew_s: float | None = Field(description="spread of the hosts' start times; null if one is unknown")


class LoadRun(_Closed):
    """The record's `load`: how the load generator ran. Closed; `max_conns` (echo_client's) is open."""

    tool: str
    argv: list[str] | None
    cpus: str
    exit_code: int | None
    wall_s: float | None
    cpu_user_s: float | None
    cpu_sys_s: float | None
    cpu_utilisation: float | None = Field(None, description=f"{MISSING_IN_OLDER}: compute it from the CPU times")
    cpus_busy: float | None = Field(None, description=f"busy fraction of load.cpus; {MISSING_IN_OLDER}")
    output_file: str | None
    stderr: str | None
    flags: list[str] | None = Field(None, description=f"the parsed output's flags; null if unparsed; "
                                                      f"{MISSING_IN_OLDER}")
    max_conns: dict[str, Any] | None = Field(None, description="echo_client's max_conns object, max_conns mode only")
    hosts: list[LoadHostRun] | None = Field(None, description="placement ssh only: one entry per client host")
    combined: CombinedLoad | None = Field(None, description="placement ssh only, null unless every host measured")


class WarmupRun(_Closed):
    """The record's `load_warmup`: the load generator's run of `duration_s` seconds against the same server
    process before the measured load (archbench.measure.warmup). Closed."""

    duration_s: int = Field(description="the campaign's warmup_s")
    argv: list[str]
    exit_code: int | None
    wall_s: float | None
    cpu_user_s: float | None
    cpu_sys_s: float | None
    output_file: str = Field(description="<trial-id>.warmup.<tool>.txt, its stdout verbatim")
    stderr: str | None
    requests: int | None = Field(description="requests (echoes) it completed, as parsed; null if unparsed")
    flags: list[str] | None = Field(description="its parsed output's flags; null if unparsed")


class IdleRun(_Closed):
    """The record's `idle`: build/bin/idle_holder, which held `requested` keep-alive connections idle during the
    load (contracts.md section 9), and its summary. Closed."""

    argv: list[str]
    cpus: str
    requested: int
    sources: int = Field(description="--sources: source addresses 127.0.0.1.. the connections came from (0: one)")
    ready_after_s: float | None = Field(description="from its start to its 'holding K connections' line; null: never")
    established: int | None = Field(description="connections established and answered; null if its output was "
                                                "not understood")
    closed_by_server: int | None = Field(description="held connections the server closed before the end")
    open_at_end: int | None = Field(description="connections still open when it stopped")
    exit_code: int | None
    signal_sent: str | None
    cpu_user_s: float | None
    cpu_sys_s: float | None
    flags: list[str] | None = Field(description="the parsed output's flags (archbench.parse.idle_holder); null if "
                                                "unparsed")
    output_file: str = Field(description="<trial-id>.idle_holder.txt, its stdout verbatim")
    stderr: str | None


class OpenFiles(_Closed):
    """RLIMIT_NOFILE the server and load generator inherited, and the descriptors a trial needs."""

    soft: int
    hard: int
    needed: int = Field(description="connections + idle connections + 256")


class PlacementRecord(_Closed):
    """The record's `placement` (archbench.measure.placement): where server and load generator ran when not
    both on loopback. Closed."""

    kind: Literal["netns"]
    link: str | None = Field(description="the link model, '<rate>' or '<rate> <delay>'; null: the bare veth pair")
    server_address: str = Field(description="the server's address, the load generator's target")
    load_address: str
    namespaces: list[str] = Field(description="the network namespaces of server and load generator, in that order")
    qdisc: str | None = Field(description="the tc qdisc on each veth end (e.g. 'tbf rate 1gbit ...'); null: none")


class SshHostRecord(_Closed):
    """One host of an ssh placement, with what set-up read from it. Closed."""

    name: str
    address: str
    role: Literal["server", "client"]
    cpus: str
    kernel: str | None
    hostname: str | None
    cpu_model: str | None
    wrk_version: str | None


class SshPlacementRecord(_Closed):
    """The record's `placement` under placement ssh (archbench.measure.ssh_placement). Closed."""

    kind: Literal["ssh"]
    inventory: str = Field(description="the hosts inventory file")
    server_address: str
    hosts: list[SshHostRecord]


class Provenance(_Open):
    """Where and with what a trial or campaign ran (`archbench.measure.provenance`). Open (extra="allow"):
    new facts about a machine may be added; the known ones are typed."""

    git_commit: str | None
    git_dirty: bool | None
    compiler: str | None
    c_flags: str | None
    build_type: str | None
    build_architectures: list[str] | None = Field(None, description=MISSING_IN_OLDER)
    kernel: str
    os: str | None
    os_family: str
    hostname: str
    cpu_model: str | None
    cpu_count: int | None
    cpu_affinity: list[int] | None = Field(None, description=MISSING_IN_OLDER)
    memory_bytes: int | None
    open_files_limit: list[int]
    somaxconn: int | None = Field(None, description=MISSING_IN_OLDER)
    python: str
    python_packages: dict[str, str | None] | None = Field(None, description=f"null if not installed; "
                                                                            f"{MISSING_IN_OLDER}")
    tools: dict[str, str | None]
    bandwidth_baseline: dict[str, Any] | None = Field(
        None, description="the campaign's iperf3 baseline (archbench.measure.baseline), measured when it was "
                          "created; missing in older campaigns and their records")


class TickShares(_Closed):
    """Shares of one CPU set's ticks over the load interval, from /proc/stat (archbench.measure.cpustat). Closed."""

    ticks: int = Field(description="USER_HZ ticks elapsed over the set's CPUs (about 100 per CPU and second)")
    iowait: float
    irq: float
    softirq: float
    steal: float = Field(description="taken by the hypervisor: time the guest did not run at all")


class CpuSharesRecord(_Closed):
    """The record's `cpu_shares`: the noise diagnostics of the load interval. Closed."""

    machine: TickShares | None = Field(description="the aggregate 'cpu' line: every CPU of the machine")
    server_cpus: TickShares | None = Field(description="server.cpus; null if a CPU was missing from a reading")
    load_cpus: TickShares | None = Field(description="load.cpus; null if a CPU was missing from a reading")


class SetInterferenceRecord(_Closed):
    """One CPU set's account of the load interval in the record's `interference`: ticks expected, counted and by
    whom (archbench.measure.interference). Ticks are USER_HZ ticks summed over the set's CPUs. Closed."""

    cpus: int = Field(description="CPUs in the set")
    expected_ticks: float = Field(description="interval_s x user_hz x cpus: what the set would count running throughout")
    ticks: float = Field(description="ticks counted over the set's CPUs")
    busy_ticks: float = Field(description="ticks neither idle nor iowait (interrupt, softirq and steal included)")
    interrupt_ticks: float = Field(description="irq + softirq ticks, much of them the trial's own loopback TCP work")
    steal_ticks: float
    own_ticks: float | None = Field(description="the trial's own processes' user + sys ticks on the set (the "
                                                "server's tree over the load, the load generator's); null: unknown")
    foreign_ticks: float | None = Field(description="busy - interrupt - steal - own: other processes' work; "
                                                    "slightly negative when quiet; null without own_ticks")
    missing_ticks: float = Field(description="expected - counted: time the set was not accounted at all")
    saturated: bool = Field(description="busy at least 95 % of the counted ticks: only then do missing ticks count "
                                        "as taken (a partly idle CPU loses idle ticks on its own)")
    taken_share: float = Field(description="(max(foreign, 0) + steal + missing if saturated) / expected")


class InterferenceRecord(_Closed):
    """The record's `interference`: whether other work took the trial's CPUs during its load. Closed."""

    interval_s: float = Field(description="wall time between the two /proc/stat readings around the load")
    user_hz: int
    max_share: float = Field(description="the campaign's interference_share: the taken share that disturbs")
    server_cpus: SetInterferenceRecord | None = Field(description="null if a CPU was missing from a reading")
    load_cpus: SetInterferenceRecord | None
    disturbed: bool = Field(description="either set's taken_share reached max_share")
    reasons: list[str] = Field(description="one sentence per set that disturbed the trial; empty when not disturbed")


class TrialRecord(_Closed):
    """`<trial-id>.json`: one trial, ok, failed or unsupported (contracts.md section 2). Closed."""

    schema_: Literal[1] = Field(alias="schema")
    trial_id: str
    campaign: str
    config_id: str
    config: TrialConfigRecord
    repetition: int
    warmup: bool
    order_index: int
    adaptive: bool | None = Field(None, description="true on trials added by adaptive repetition; "
                                                    "missing means false")
    seed: int
    status: Literal["ok", "failed", "unsupported"]
    failure_reason: str | None = Field(description="text when status is not ok")
    started_at: str = Field(description="ISO 8601 UTC time")
    finished_at: str
    server: ServerRun
    load: LoadRun
    open_files: OpenFiles | None = Field(None, description=MISSING_IN_OLDER)
    idle: IdleRun | None = Field(None, description="trials with idle_connections only: the idle connections' holder")
    load_warmup: WarmupRun | None = Field(
        None, description="trials with a warm-up only (warmup_s > 0; never a --max-conns ramp); missing: none")
    placement: PlacementRecord | SshPlacementRecord | None = Field(
        None, description="netns and ssh trials only; missing means both on loopback (every older record)")
    cpu_shares: CpuSharesRecord | None = Field(
        None, description=f"null when not measured (no load ran, ssh placement, not Linux); {MISSING_IN_OLDER}")
    interference: InterferenceRecord | None = Field(
        None, description="whether other work took the trial's CPUs during the load (archbench.measure.interference); "
                          f"null when not measured (as cpu_shares); {MISSING_IN_OLDER}")
    reruns: str | None = Field(
        None, description="re-runs only: the id of the disturbed trial of the same round this one was run again "
                          "for (archbench.measure.reruns); missing: not a re-run")
    provenance: Provenance


class ExcludedConfig(_Closed):
    """A configuration a workload family's grid left out (archbench.config.plan.grid_exclusions). Closed."""

    family: str
    config_id: str
    reason: str


class CampaignMeta(_Closed):
    """campaign.json: parameters, seed, planned trial ids, written once. Closed.

    `parameters` is `Parameters.to_dict()` (parameters.schema.json); the first campaigns (only in
    tests/fixtures) have the older `LegacyParameters`.
    """

    schema_: Literal[1] = Field(alias="schema")
    campaign: str
    created_at: str
    profile: str
    parameters: StoredParameters | LegacyParameters
    seed: int
    plan: list[str] = Field(description="trial ids in execution order (adaptive trials are not in it)")
    configs: dict[str, TrialConfigRecord] | None = Field(None, description=f"config id -> config; "
                                                                           f"{MISSING_IN_OLDER}")
    excluded: list[ExcludedConfig] | None = Field(
        None, description="combinations of the workload families' grids left out, each with why; missing: none")
    provenance: Provenance


# The schemas written to docs/schemas/, file name -> model.
SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "trial-record.schema.json": TrialRecord,
    "campaign.schema.json": CampaignMeta,
    "parameters.schema.json": StoredParameters,
    "profile.schema.json": ProfileValues,
}


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema (by alias: the keys as the files have them)."""
    return model.model_json_schema(by_alias=True)


def schema_text(model: type[BaseModel]) -> str:
    return json.dumps(json_schema(model), indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SCHEMA_MODELS.items():
        path = directory / name
        path.write_text(schema_text(model), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the JSON Schemas of the raw data and parameters.")
    parser.add_argument("--write", type=Path, metavar="DIR", required=True, help="e.g. docs/schemas")
    args = parser.parse_args(argv)
    for path in write_schemas(args.write):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
