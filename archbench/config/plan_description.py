"""The dry run's list of configurations: bare configuration ids, or, for entries that name the source they
reproduce (the sources profile), grouped by source with each configuration's server flags and load-generator
command, so that a reader can check them against the source's protocol (docs/sources.md); a campaign with
workloads lists them by family, with what each family left out and why (archbench.config.workloads).

The server's host and port and the CPU pinning are left out: the runner picks a free port and pins both sides
(taskset) when the trial runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from archbench.config.loadgen import load_generator
from archbench.config.params import Parameters
from archbench.config.plan import TrialConfig, grid_exclusions
from archbench.config.servers import server_spec

# What the load generator is shown aiming at; the runner fills in the server's real port.
PLACEHOLDER_URL = "http://127.0.0.1:PORT/"

# Parts of the sources' protocols that need a campaign of another kind (one protocol and one loop discipline per
# campaign), printed after the sources profile's own configurations.
ELSEWHERE = {
    "sources": {
        "001": "its open-loop part (wrk2 -R at 2000 connections) is the latency study: make latency-study",
        "004": "echo servers against an echo client (proto echo) are the echo profile: make echo-study",
    }
}


def configuration_flags(config: TrialConfig, params: Parameters) -> str:
    """`server flags | load-generator argv` of one configuration, as the runner would start them."""
    values = config.as_dict()
    server = " ".join(server_spec(config.architecture).flags(values))
    generator = load_generator(config.load_generator)
    load = generator.command(values, PLACEHOLDER_URL, params.wrk_timeout_s, build_dir=Path(params.build_dir))
    return f"{config.architecture} {server} | {' '.join([Path(load[0]).name, *load[1:]])}"


def describe_configurations(params: Parameters, configs: Sequence[TrialConfig]) -> list[str]:
    """One line per configuration: its id alone, or under its source's heading with its flags."""
    if params.workloads:
        return describe_workloads(params, configs)
    lines = [config.config_id for config in configs if config.source is None]
    sources = sorted({config.source for config in configs if config.source is not None})
    elsewhere = ELSEWHERE.get(params.profile, {})
    for source in sorted({*sources, *elsewhere}):
        members = [config for config in configs if config.source == source]
        lines.append(f"source {source}: {len(members)} configurations")
        lines += [f"  {config.config_id}: {configuration_flags(config, params)}" for config in members]
        if source in elsewhere:
            lines.append(f"  not in this campaign: {elsewhere[source]}")
    return lines


def describe_workloads(params: Parameters, configs: Sequence[TrialConfig]) -> list[str]:
    """Per workload family: its configurations, then each server it left out with the reason (a configuration
    two families reach is listed under the first, which labels it)."""
    excluded = grid_exclusions(params)
    lines = []
    for family in params.workloads:
        members = [c.config_id for c in configs if c.workload is not None and c.workload.family == family.name]
        lines.append(f"workload {family.name}: {len(members)} configurations")
        lines += [f"  {config_id}" for config_id in members]
        left: dict[tuple[str, str], int] = {}
        for exclusion in excluded:
            if exclusion.family == family.name:
                key = (exclusion.architecture, exclusion.reason)
                left[key] = left.get(key, 0) + 1
        for (architecture, reason), count in left.items():
            lines.append(f"  left out: {architecture} ({count} configuration{'s' if count > 1 else ''}): {reason}")
    return lines
