"""From parameters to the configuration grid and the randomised, interleaved trial order.

Grid. Each server entry contributes (its option variants) x (thread counts, if
the architecture has a parallelism flag: worker threads or worker processes) x
(its connection counts) x load threads x (its pipeline depths). Combinations
that would be meaningless are never generated: an architecture without such a
flag (blocking, thread_per_conn, poll, epoll) contributes one configuration per
connection count however many thread counts the campaign sweeps, instead of
identical runs labelled with different thread counts. Configurations reached
from two entries are kept once.

Order. Trials are interleaved across configurations so that slow drift of the
machine (thermal state, background load) spreads over all configurations
instead of biasing whichever ran last: round 0 is one warm-up per
configuration, round k is repetition k of every configuration, and each round
is shuffled with a `random.Random(seed)`; the seed is recorded in
campaign.json and every trial record, so the order can be regenerated.
"""
from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archbench.params import Parameters
from archbench.servers import all_option_names, server_spec

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")  # no dots: a trial id ends at the first dot of a file name


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
    pipeline: int = 1  # requests in flight per connection; wrk without a script sends one

    def as_dict(self) -> dict[str, Any]:
        """The `config` of a trial record; every option field of every architecture is present."""
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
        return out

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
        if self.response != "test":
            parts.append(response_id_part(self.response))
        if self.load_generator != "wrk":
            parts.append(self.load_generator)
        if self.pipeline != 1:
            parts.append(f"p{self.pipeline}")
        return "-".join(parts)


def response_id_part(response: str) -> str:
    if not response.startswith("file:"):
        return _UNSAFE.sub("_", response)
    path = response[len("file:"):]
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

    @property
    def config_id(self) -> str:
        return self.config.config_id


def expand_grid(params: Parameters) -> list[TrialConfig]:
    """The campaign's configurations, in the order the entries list them, without duplicates."""
    configs: dict[str, TrialConfig] = {}
    for entry in params.servers:
        spec = server_spec(entry.architecture)
        option_names = [name for name, _ in entry.option_values(spec)]
        option_choices = [values for _, values in entry.option_values(spec)]
        thread_counts: Sequence[int | None] = (
            (entry.threads or params.thread_counts) if spec.takes_threads else (None,)
        )
        connection_counts = entry.connections or params.connection_counts
        pipeline_depths = entry.pipeline or params.pipeline_depths
        for option_values, threads, connections, load_threads, pipeline in itertools.product(
            itertools.product(*option_choices), thread_counts, connection_counts, params.load_threads,
            pipeline_depths,
        ):
            config = TrialConfig(
                architecture=entry.architecture,
                connections=connections,
                load_threads=load_threads,
                duration_s=params.duration_s,
                threads=threads,
                options=tuple(zip(option_names, option_values)),
                response=params.response,
                load_generator=params.load_generator,
                pipeline=pipeline,
            )
            configs.setdefault(config.config_id, config)
    return list(configs.values())


def repetition_id(config_id: str, repetition: int, width: int = 2) -> str:
    return f"{config_id}-warmup" if repetition == 0 else f"{config_id}-r{repetition:0{width}d}"


def build_plan(configs: Sequence[TrialConfig], trials: int, warmup: bool, seed: int) -> list[PlannedTrial]:
    """Round 0: a warm-up per configuration; round k: repetition k of each; each round shuffled."""
    rng = random.Random(seed)
    width = max(2, len(str(trials)))
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


def estimate_duration_s(params: Parameters, overhead_s: float) -> float:
    """Expected wall time of all trials: each costs its wrk duration plus a fixed overhead."""
    runs = params.trials + (1 if params.warmup else 0)
    return len(expand_grid(params)) * runs * (params.duration_s + overhead_s)
