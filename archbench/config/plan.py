"""From parameters to the configuration grid and the randomised, interleaved trial order.

Grid. Each server entry contributes (its option variants) x (thread counts, if
the architecture has a parallelism flag: worker threads or worker processes) x
(its connection counts) x load threads x (its pipeline depths). Combinations
that would be meaningless are never generated: an architecture without such a
flag (blocking, thread_per_conn, poll, epoll) contributes one configuration per
connection count however many thread counts the campaign sweeps, instead of
identical runs labelled with different thread counts. Configurations reached
from two entries are kept once. With load_threads "auto", each configuration runs
the most wrk threads (up to the load CPU count) that divide its connections.

Order. Trials are interleaved across configurations so that slow drift of the
machine (thermal state, background load) spreads over all configurations
instead of biasing whichever ran last: round 0 is one warm-up per
configuration, round k is repetition k of every configuration, and each round
is shuffled with a `random.Random(seed)`; the seed is recorded in
campaign.json and every trial record, so the order can be regenerated.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archbench.config.loadgen import HttperfWorkload, load_generator
from archbench.config.params import ParameterError, Parameters, resolve_parameters
from archbench.config.profiles import TRIAL_OVERHEAD_S
from archbench.config.server_entry import ServerEntry
from archbench.config.servers import all_option_names, response_body_bytes, server_spec
from archbench.config.topology import fitting_load_threads
from archbench.config.workloads import Workload, WorkloadFamily, exclusion_reason

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")  # no dots: a trial id ends at the first dot of a file name
# Wall time per idle connection beyond the trial's overhead: idle_holder opens it (connect and a first request,
# 64 at a time) before the load and closes it after. On the reference machine 8000 took about 1.2 s in all.
IDLE_S_PER_CONNECTION = 0.00015


@dataclass(frozen=True)
class TrialConfig:
    """One point of the grid: what server runs how, under what load."""

    architecture: str
    connections: int
    load_threads: int
    duration_s: int
    threads: int | None = None  # worker threads or processes; only for architectures with such a flag
    options: tuple[tuple[str, Any], ...] = ()  # architecture options, registry order
    response: str = "test"
    load_generator: str = "wrk"
    pipeline: int = 1  # requests (echo: messages) in flight per connection; wrk without a script sends one
    echo: EchoWorkload | None = None  # proto echo: echo_client's workload; None: HTTP
    offered: OfferedLoad | None = None  # open loop (oha, wrk2): the rate offered; None: closed loop
    httperf: HttperfWorkload | None = None  # httperf's calls, rate and hog; None: another load generator
    source: str | None = None  # the write-up its entry reproduces (docs/sources.md); not part of its identity
    workload: Workload | None = None  # a workload family's settings (archbench.config.workloads); None: none

    def as_dict(self) -> dict[str, Any]:
        """The `config` of a trial record; every option field of every architecture is present.

        The echo fields appear only in echo configurations and the offered-load fields only in
        open-loop ones (contracts.md section 2: `proto` missing means http, `offered_rate`
        missing means a closed loop), so HTTP closed-loop records keep their shape."""
        values = dict(self.options)
        out: dict[str, Any] = {"architecture": self.architecture, "threads": self.threads}
        for name in all_option_names():
            out[name] = values.get(name)
        out.update(
            response=self.response,
            connections=self.connections,
            load_threads=self.load_threads,
            duration_s=self.duration_s,
            load_generator=self.load_generator,
            pipeline=self.pipeline,
        )
        if self.echo is not None:
            out.update(self.echo.as_dict())
        if self.offered is not None:
            out.update(self.offered.as_dict())
        if self.httperf is not None:
            out.update(self.httperf.as_dict())
        if self.source is not None:
            out["source"] = self.source
        if self.workload is not None:
            out.update(self.workload.as_dict())
        return out

    @property
    def proto(self) -> str:
        return "echo" if self.echo is not None else "http"

    @property
    def config_id(self) -> str:
        """Fixed field order, human-readable, file-system-safe: thread_pool-request-queue-t4-c100-lt1-d5s."""
        spec = server_spec(self.architecture)
        values = dict(self.options)
        parts = [self.architecture]
        for option in spec.options:
            part = option.id_part(values.get(option.name))
            if part is not None:
                parts.append(part)
        if self.threads is not None:
            parts.append(f"t{self.threads}")
        parts += [f"c{self.connections}", f"lt{self.load_threads}", f"d{self.duration_s}s"]
        if self.echo is not None:
            # echo_client is the only echo load generator, and echo ignores --response.
            parts += self.echo.id_parts()
        else:
            if self.response != "test":
                parts.append(response_id_part(self.response))
            if self.load_generator != "wrk":
                parts.append(self.load_generator)
            if self.httperf is not None:
                parts += self.httperf.id_parts()
            if self.workload is not None:
                parts += self.workload.id_parts()
        if self.offered is not None:
            parts.append(f"rate{self.offered.offered_rate}")
        if self.pipeline != 1:
            parts.append(f"p{self.pipeline}")
        if self.echo is not None and self.echo.mode == "max_conns":
            parts.append("maxconns")
        return "-".join(parts)


@dataclass(frozen=True)
class EchoWorkload:
    """What echo_client sends (contracts.md section 6); `pipeline` of the config is its --depth."""

    message_size: int = 64
    sources: int = 0  # bind connection i to 127.0.0.(1 + i mod K); 0: no bind
    connect_rate: int = 0  # connections opened per second; 0: all at once
    mode: str = "throughput"  # or "max_conns": open connections until one fails or `cap` are held
    cap: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "proto": "echo",
            "mode": self.mode,
            "cap": self.cap,
            "message_size": self.message_size,
            "sources": self.sources,
            "connect_rate": self.connect_rate,
        }

    def id_parts(self) -> list[str]:
        parts = ["echo", f"s{self.message_size}"]
        if self.sources:
            parts.append(f"src{self.sources}")
        if self.connect_rate:
            parts.append(f"cr{self.connect_rate}")
        return parts


@dataclass(frozen=True)
class OfferedLoad:
    """An open-loop configuration's rate and where it came from (for the report's knees).

    `offered_rate` is requests per second in total over all connections. When it was derived
    from a closed-loop saturation throughput, `saturation_rate` is that throughput (req/s),
    `saturation_of` the saturation key (`saturation_key()`) of the configuration it was measured
    on, and `rate_fraction` the fraction asked for; `saturation_source` says which campaign and
    statistic gave it. All but the rate are None for an absolute rate without a known saturation.
    """

    offered_rate: int
    rate_fraction: float | None = None
    saturation_rate: float | None = None
    saturation_of: str | None = None
    saturation_source: str | None = None
    arrival: str | None = None  # open_loop's schedule ("fixed", "poisson"); None for oha and wrk2

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "offered_rate": self.offered_rate,
            "rate_fraction": self.rate_fraction,
            "saturation_rate": self.saturation_rate,
            "saturation_of": self.saturation_of,
            "saturation_source": self.saturation_source,
        }
        if self.arrival is not None:
            out["arrival"] = self.arrival
        return out


def saturation_key(config: Mapping[str, Any]) -> str:
    """What a saturation throughput belongs to: the server variant at a connection count (and
    pipeline depth), without load generator, duration or rate, e.g. "epoll-level-c2000" or
    "reactor-edge-t2-c100". A closed-loop record's config and an open-loop plan's config of the
    same server and connections give the same key."""
    spec = server_spec(config["architecture"])
    parts = [str(config["architecture"])]
    parts += [part for o in spec.options if (part := o.id_part(config.get(o.name))) is not None]
    if config.get("threads") is not None:
        parts.append(f"t{config['threads']}")
    parts.append(f"c{config['connections']}")
    if (config.get("pipeline") or 1) != 1:
        parts.append(f"p{config['pipeline']}")
    return "-".join(parts)


def response_id_part(response: str) -> str:
    size = response_body_bytes(response)
    if size is not None:
        return f"bytes{size}"
    if not response.startswith("file:"):
        return _UNSAFE.sub("_", response)
    path = response[len("file:") :]
    # The stem says which file; the hash keeps two files of the same name apart.
    digest = hashlib.sha1(path.encode()).hexdigest()[:6]
    return f"file_{_UNSAFE.sub('_', Path(path).stem)}_{digest}"


@dataclass(frozen=True)
class PlannedTrial:
    trial_id: str
    config: TrialConfig
    repetition: int  # 1..trials; 0 for the warm-up
    warmup: bool
    order_index: int  # position in the campaign's execution order
    adaptive: bool = False  # an extra trial of adaptive repetition (archbench.measure.adaptive), beyond the plan

    @property
    def config_id(self) -> str:
        return self.config.config_id


@dataclass(frozen=True)
class Exclusion:
    """A combination of a workload family's grid left out, and why (`archbench.config.workloads.exclusion_reason`)."""

    family: str
    config_id: str
    architecture: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"family": self.family, "config_id": self.config_id, "reason": self.reason}


def expand_grid(params: Parameters) -> list[TrialConfig]:
    """The campaign's configurations, in the order the entries list them, without duplicates.

    Echo campaigns (`proto` echo) with a `max_conns_cap` also get, per server variant, one
    `--max-conns` configuration after its throughput ones. Open-loop campaigns (oha, wrk2) turn
    each closed configuration into one per offered rate (`offered_loads`). A campaign with `workloads`
    expands each family in turn (archbench.config.workloads), leaving out what does not apply to a server
    (`grid_exclusions` says what and why); a configuration two families reach is kept once, with the first's label.
    """
    return list(_grid(params)[0].values())


def grid_exclusions(params: Parameters) -> list[Exclusion]:
    """The combinations of the workload families' grids that were left out, each with its reason."""
    return _grid(params)[1]


def _grid(params: Parameters) -> tuple[dict[str, TrialConfig], list[Exclusion]]:
    configs: dict[str, TrialConfig] = {}
    excluded: dict[str, Exclusion] = {}
    for family in params.workloads or (None,):
        for entry in _family_entries(params, family):
            _expand_entry(params, entry, family, configs, excluded)
    return configs, [e for e in excluded.values() if e.config_id not in configs]


def _family_entries(params: Parameters, family: WorkloadFamily | None) -> tuple[ServerEntry, ...]:
    """A family's entries: its own, or the campaign's without the sweeps the family replaces."""
    if family is None:
        return params.servers
    if family.servers is not None:
        return family.servers
    return tuple(
        entry.without_sweeps(threads=family.thread_counts is not None, connections=family.connection_counts is not None)
        for entry in params.servers
    )


def _expand_entry(
    params: Parameters,
    entry: ServerEntry,
    family: WorkloadFamily | None,
    configs: dict[str, TrialConfig],
    excluded: dict[str, Exclusion],
) -> None:
    spec = server_spec(entry.architecture)
    option_names = [name for name, _ in entry.option_values(spec)]
    option_choices = [values for _, values in entry.option_values(spec)]
    family_threads = family.thread_counts if family is not None else None
    family_connections = family.connection_counts if family is not None else None
    thread_counts: Sequence[int | None] = (
        (entry.threads or family_threads or params.thread_counts) if spec.takes_threads else (None,)
    )
    connection_counts = entry.connections or family_connections or params.connection_counts
    pipeline_depths = entry.pipeline or params.pipeline_depths
    responses = (family.response if family is not None else None) or (entry.response or params.response,)
    workloads: Sequence[Workload | None] = family.workloads() if family is not None else (None,)
    echo = _echo_workload(params)
    httperf = _httperf_workload(params, entry.load_generator or params.load_generator)
    for option_values, threads in itertools.product(itertools.product(*option_choices), thread_counts):
        options = tuple(zip(option_names, option_values, strict=True))
        for connections, load_threads, pipeline, workload, response in itertools.product(
            connection_counts, params.load_threads, pipeline_depths, workloads, responses
        ):
            config = TrialConfig(
                architecture=entry.architecture,
                connections=connections,
                load_threads=(
                    1  # httperf is one single-threaded process (params checks an explicit count is 1)
                    if httperf is not None
                    else fitting_load_threads(load_threads, connections)
                    if params.load_threads_auto
                    else load_threads
                ),
                duration_s=params.duration_s,
                threads=threads,
                options=options,
                response=response,
                load_generator=entry.load_generator or params.load_generator,
                pipeline=pipeline,
                echo=echo,
                source=entry.source,
                httperf=httperf,
                workload=workload,
            )
            reason = exclusion_reason(spec, config.as_dict()) if family is not None else None
            if reason is not None:
                excluded.setdefault(
                    config.config_id, Exclusion(family.name, config.config_id, entry.architecture, reason)
                )
                continue
            for variant in offered_loads(config, params):
                configs.setdefault(variant.config_id, variant)
        if echo is not None and params.max_conns_cap is not None:
            ramp = TrialConfig(
                architecture=entry.architecture,
                connections=params.max_conns_cap,
                load_threads=1,
                duration_s=params.max_conns_duration_s,
                threads=threads,
                options=options,
                response=params.response,
                load_generator=params.load_generator,
                echo=dataclasses.replace(echo, mode="max_conns", cap=params.max_conns_cap),
            )
            configs.setdefault(ramp.config_id, ramp)


def _echo_workload(params: Parameters) -> EchoWorkload | None:
    if params.proto != "echo":
        return None
    return EchoWorkload(message_size=params.message_size, sources=params.sources, connect_rate=params.connect_rate)


def _httperf_workload(params: Parameters, load_generator: str) -> HttperfWorkload | None:
    if load_generator != "httperf":
        return None
    return HttperfWorkload(calls=params.httperf_calls, rate=params.httperf_rate, hog=params.httperf_hog)


def offered_loads(config: TrialConfig, params: Parameters) -> Iterator[TrialConfig]:
    """The configuration itself (closed loop), or one per offered rate (open loop).

    Rates are `offered_rates` (absolute) and `rate_fractions` of a saturation throughput from
    `saturation_rates`: the configuration's own (its `saturation_key`), or, with
    `rate_reference`, that configuration's for all (source 001's one fixed rate for every server).
    """
    if not params.rate_fractions and not params.offered_rates:
        yield config
        return
    saturations = dict(params.saturation_rates)
    arrival = params.arrival if config.load_generator == "open_loop" else None
    own_key = saturation_key(config.as_dict())
    basis = params.rate_reference or own_key
    if params.rate_fractions and basis not in saturations:
        raise ParameterError(
            "saturation_rates",
            f"no saturation throughput for {basis} (needed by rate_fractions for {config.config_id}); "
            f"known: {', '.join(saturations) or 'none'}",
        )
    for fraction in params.rate_fractions:
        rate = max(1, round(fraction * saturations[basis]))
        yield dataclasses.replace(
            config,
            offered=OfferedLoad(
                offered_rate=rate,
                rate_fraction=fraction,
                saturation_rate=saturations[basis],
                saturation_of=basis,
                saturation_source=params.saturation_source,
                arrival=arrival,
            ),
        )
    known = saturations.get(basis)
    for rate in params.offered_rates:
        yield dataclasses.replace(
            config,
            offered=OfferedLoad(
                offered_rate=rate,
                rate_fraction=round(rate / known, 6) if known else None,
                saturation_rate=known,
                saturation_of=basis if known else None,
                saturation_source=params.saturation_source if known else None,
                arrival=arrival,
            ),
        )


def repetition_width(trials: int) -> int:
    """Digits of the repetition number in trial ids (at least 2: r01)."""
    return max(2, len(str(trials)))


def repetition_id(config_id: str, repetition: int, width: int = 2) -> str:
    return f"{config_id}-warmup" if repetition == 0 else f"{config_id}-r{repetition:0{width}d}"


def build_plan(configs: Sequence[TrialConfig], trials: int, warmup: bool, seed: int) -> list[PlannedTrial]:
    """Round 0: a warm-up per configuration; round k: repetition k of each; each round shuffled."""
    rng = random.Random(seed)
    width = repetition_width(trials)
    rounds = ([0] if warmup else []) + list(range(1, trials + 1))
    plan: list[PlannedTrial] = []
    for repetition in rounds:
        order = list(configs)
        rng.shuffle(order)
        for config in order:
            plan.append(
                PlannedTrial(
                    trial_id=repetition_id(config.config_id, repetition, width),
                    config=config,
                    repetition=repetition,
                    warmup=repetition == 0,
                    order_index=len(plan),
                )
            )
    return plan


def plan_campaign(params: Parameters) -> list[PlannedTrial]:
    if params.seed is None:
        raise ValueError("seed: a plan needs a seed (the runner picks and records one for a new campaign)")
    return build_plan(expand_grid(params), params.trials, params.warmup, params.seed)


def warmup_duration_s(params: Parameters, config: TrialConfig) -> int:
    """Seconds of warm-up before the measured window of a trial of `config`: the campaign's warmup_s where its
    load generator warms up (not a --max-conns ramp, not httperf), else 0."""
    if not params.warmup_s:
        return 0
    return params.warmup_s if load_generator(config.load_generator).warms_up(config.as_dict()) else 0


def estimate_duration_s(params: Parameters, overhead_s: float) -> float:
    """Expected wall time of all trials: each costs its wrk duration and warm-up plus a fixed overhead, plus the
    time idle_holder takes to open and close its idle connections (IDLE_S_PER_CONNECTION each)."""
    runs = params.trials + (1 if params.warmup else 0)
    configs = expand_grid(params)
    # --max-conns ramps differ in duration and run no warm-up
    per_duration = Counter(config.duration_s + warmup_duration_s(params, config) for config in configs)
    base = sum(count * runs * (duration + overhead_s) for duration, count in per_duration.items())
    idle = sum(config.workload.idle_connections for config in configs if config.workload is not None)
    return base + runs * idle * IDLE_S_PER_CONNECTION


def expected_duration_s(profile: str, overhead_s: float = TRIAL_OVERHEAD_S, **overrides: Any) -> float:
    """Expected wall time in seconds of a whole campaign of `profile` (trials only, no build)."""
    return estimate_duration_s(resolve_parameters(profile, **overrides), overhead_s=overhead_s)
