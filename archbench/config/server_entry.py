"""One architecture of a campaign as a profile or the command line gives it: options, own sweeps and labels.

The text form is "thread_pool:dispatch=connection/request,threads=2/8" (values separated by "/"); the mapping
form is a profile's inline table. Both become a `ServerEntry`, validated against the server registry.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from archbench.config.loadgen import load_generators
from archbench.config.servers import ServerSpec, check_response, server_specs
from archbench.config.topology import auto_sweep, with_cpu_count
from archbench.config.values import ParameterError, as_tuple, positive_ints

ENTRY_SWEEP_KEYS = ("threads", "connections", "pipeline")
# Keys an entry may carry beside its options and sweeps: which write-up it reproduces (docs/sources.md), and its own
# --response and closed-loop load generator where that write-up's differ from the campaign's.
ENTRY_LABEL_KEYS = ("source", "response", "load_generator")
SOURCE_PATTERN = re.compile(r"\d{3}")


@dataclass(frozen=True)
class ServerEntry:
    """One architecture in the campaign, with its option values and optional own sweeps."""

    architecture: str
    options: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # option name -> values to run
    threads: tuple[int, ...] | None = None  # worker threads or worker processes, per architecture
    connections: tuple[int, ...] | None = None
    pipeline: tuple[int, ...] | None = None  # wrk pipeline depths
    source: str | None = None  # the write-up it reproduces ("000".."004"), a label recorded per configuration
    response: str | None = None  # its --response; None: the campaign's
    load_generator: str | None = None  # its closed-loop load generator; None: the campaign's

    def option_values(self, spec: ServerSpec) -> list[tuple[str, tuple[Any, ...]]]:
        """Every option of the architecture with the values to run (default if not given)."""
        given = dict(self.options)
        return [(o.name, given.get(o.name, (o.default,))) for o in spec.options]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"architecture": self.architecture}
        for name, values in self.options:
            out[name] = list(values)
        if self.threads is not None:
            out["threads"] = list(self.threads)
        if self.connections is not None:
            out["connections"] = list(self.connections)
        if self.pipeline is not None:
            out["pipeline"] = list(self.pipeline)
        out.update({key: getattr(self, key) for key in ENTRY_LABEL_KEYS if getattr(self, key) is not None})
        return out

    def without_sweeps(self, threads: bool, connections: bool, pipeline: bool = False) -> ServerEntry:
        return dataclasses.replace(
            self,
            threads=None if threads else self.threads,
            connections=None if connections else self.connections,
            pipeline=None if pipeline else self.pipeline,
        )


def _scalar(text: str) -> Any:
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def entry_mapping_from_text(text: str, parameter: str) -> dict[str, Any]:
    """ "thread_pool:dispatch=connection/request,threads=2/8" -> mapping form."""
    architecture, _, rest = text.partition(":")
    mapping: dict[str, Any] = {"architecture": architecture.strip()}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise ParameterError(parameter, f"{item!r} in {text!r} is not key=value (values separated by /)")
        mapping[key.strip()] = [_scalar(v.strip()) for v in value.split("/")]
    return mapping


def parse_server_entry(spec: str | Mapping[str, Any] | ServerEntry, parameter: str) -> ServerEntry:
    if isinstance(spec, ServerEntry):
        mapping: Mapping[str, Any] = spec.to_dict()
    elif isinstance(spec, str):
        mapping = entry_mapping_from_text(spec, parameter)
    elif isinstance(spec, Mapping):
        mapping = spec
    else:
        raise ParameterError(parameter, f"{spec!r} is neither an architecture name nor a mapping")

    specs = server_specs()
    architecture = mapping.get("architecture")
    if architecture not in specs:
        raise ParameterError(parameter, f"unknown architecture {architecture!r}; valid: {', '.join(specs)}")
    server = specs[architecture]
    valid_keys = ["architecture", *(o.name for o in server.options), "connections", "pipeline"]
    if server.takes_threads:
        valid_keys.append("threads")

    options: list[tuple[str, tuple[Any, ...]]] = []
    sweeps: dict[str, tuple[int, ...]] = {}
    labels: dict[str, str] = {}
    for key, raw in mapping.items():
        if key == "architecture":
            continue
        if key in ENTRY_LABEL_KEYS:
            labels[key] = _entry_label(key, raw, f"{parameter}.{key}")
            continue
        if key not in valid_keys:
            raise ParameterError(
                parameter, f"{architecture} does not take {key!r} (it takes: {', '.join(valid_keys[1:])})"
            )
        values = as_tuple(raw, f"{parameter}.{key}")
        if not values:
            raise ParameterError(parameter, f"{key} of {architecture} is empty")
        if key in ENTRY_SWEEP_KEYS:
            sweeps[key] = positive_ints(values, f"{parameter}.{key}")
            continue
        option = server.option(key)
        assert option is not None
        for value in values:
            problem = option.check(value)
            if problem:
                raise ParameterError(f"{parameter}.{key}", f"{architecture}: {problem}")
        options.append((key, tuple(dict.fromkeys(values))))
    order = [o.name for o in server.options]
    options.sort(key=lambda item: order.index(item[0]))
    return ServerEntry(
        architecture,
        tuple(options),
        sweeps.get("threads"),
        sweeps.get("connections"),
        sweeps.get("pipeline"),
        **labels,
    )


def _entry_label(key: str, raw: Any, parameter: str) -> str:
    """One value of source, response or load_generator (a one-element list, as the text form gives it, too)."""
    if key == "response" and isinstance(raw, (list, tuple)):
        raw = ["/".join(map(str, raw))]  # the text form splits values at "/", a file path's separator
    value = raw[0] if isinstance(raw, (list, tuple)) and len(raw) == 1 else raw
    if key == "source" and isinstance(value, int) and not isinstance(value, bool):
        value = f"{value:03d}"  # the text form's "source=000" reads as a number
    if not isinstance(value, str):
        raise ParameterError(parameter, f"{raw!r} is not one string")
    if key == "source" and not SOURCE_PATTERN.fullmatch(value):
        raise ParameterError(parameter, f"{value!r} is not a source number such as 000 (docs/sources.md)")
    if key == "response" and (problem := check_response(value)):
        raise ParameterError(parameter, problem)
    if key == "load_generator" and value not in load_generators():
        raise ParameterError(parameter, f"{value!r}; valid: {', '.join(load_generators())}")
    return value


def parse_servers(raw: Any, server_cpu_count: int, parameter: str) -> tuple[ServerEntry, ...]:
    """A list of entries (one entry, a list, or a JSON list): duplicates kept once, order kept, "auto" and "cpus"
    threads resolved on `server_cpu_count` server CPUs. Errors name `parameter`, e.g. servers[2]."""
    raw_servers = raw or ()
    if isinstance(raw_servers, str) and raw_servers.strip().startswith("["):
        try:
            raw_servers = json.loads(raw_servers)
        except ValueError:
            raise ParameterError(parameter, f"{raw_servers!r} is not a JSON list") from None
    if isinstance(raw_servers, (str, Mapping)):
        raw_servers = [raw_servers]
    if not isinstance(raw_servers, (list, tuple)):
        raise ParameterError(parameter, f"{raw_servers!r} is not a list of server entries")
    servers = tuple(
        parse_server_entry(_with_resolved_threads(s, server_cpu_count, parameter), f"{parameter}[{i}]")
        for i, s in enumerate(raw_servers)
    )
    if not servers:
        raise ParameterError(parameter, f"no server given; valid: {', '.join(server_specs())}")
    return tuple(dict.fromkeys(servers))


def _with_resolved_threads(spec: Any, server_cpu_count: int, parameter: str) -> Any:
    """An entry whose `threads` is "auto" (or "auto:N") or lists "cpus", with its sweep spelled out."""
    mapping = entry_mapping_from_text(spec, parameter) if isinstance(spec, str) else spec
    if not isinstance(mapping, Mapping) or mapping.get("threads") is None:
        return spec
    threads = with_cpu_count(mapping["threads"], server_cpu_count, f"{parameter}.threads")
    sweep = auto_sweep(threads, server_cpu_count)
    resolved = threads if sweep is None else list(sweep)
    return spec if resolved is mapping["threads"] else {**mapping, "threads": resolved}
