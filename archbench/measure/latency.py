"""Latency under a fixed offered load: saturation from closed-loop runs, open-loop campaigns.

Source 001 ran wrk2 at a fixed 200k requests/s over 2000 connections and found
single-thread epoll latencies of seconds: a closed-loop client such as wrk
sends the next request only when the previous one is answered, so a stalled
server also stalls the client's clock and the stall never shows in its
latencies (coordinated omission). An open-loop client (the project's
open_loop, oha with `--latency-correction`, wrk2) schedules every request in
advance and measures from the scheduled time.

The study, on one machine:
 1. a closed-loop wrk campaign gives each configuration's saturation throughput
    (`saturation_rates`: the median requests/s of its ok, unflagged measured
    trials, keyed by `archbench.config.plan.saturation_key`, e.g. "epoll-level-c100");
 2. an open-loop campaign offers `LATENCY_FRACTIONS` of each configuration's own
    saturation (`fraction_sweep_parameters`), over the servers `sweep_servers` keeps;
 3. source 001's set-up (`source_001_parameters`): its four architectures at 2000
    connections and ONE fixed rate for all, a fraction of the highest saturation
    among them (001's 200k req/s scaled to this machine).
Every open-loop trial's config records offered_rate, rate_fraction,
saturation_rate, saturation_of and saturation_source (`archbench.config.plan.OfferedLoad`),
so the report can compute each design's floor (the p99 at its lowest offered rate) and its
knee against that floor from the records alone (archbench.studies.latency.knee).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from archbench.config.params import parse_server_entry, resolve_parameters
from archbench.config.plan import expand_grid, saturation_key
from archbench.config.profiles import source_001_servers
from archbench.config.servers import variant_label
from archbench.data.storage import load_campaign
from archbench.measure.adaptive import trial_throughput
from archbench.parse import LoadOutputError, parse_output

# The lowest fraction is each design's floor, against which the others are tested for a rise in p99. In the shipped
# eight-design campaign (20 us of work, Poisson arrivals) p99 rose beyond twice the floor between 0.7 and 0.9 of the
# closed-loop saturation; 1.0 brackets it from above (the server falls behind there).
LATENCY_FRACTIONS = (0.50, 0.60, 0.70, 0.80, 0.90, 1.00)
# The iterative server serves one connection until it closes: offered over the sweep's connections, it answers one
# of them (pilot: 1 % of the offered rate at 100 connections) and has no knee to find. It stays in source 001's set-up.
SWEEP_LEAVES_OUT = {"blocking": "serves one connection at a time: at 100 connections it answers one of them"}
# The fraction sweep's designs by default: source 001's three concurrent ones and the other designs that take the
# per-request work (nginx and pong do not), so that each architecture gets its knee. Multi-threaded ones take the
# profile's thread_counts.
SWEEP_SERVERS: tuple[Any, ...] = (
    {"architecture": "thread_per_conn", "max_threads": 1000},
    {"architecture": "epoll", "trigger": "level"},
    {"architecture": "reactor", "threads": [2]},
    {"architecture": "thread_pool", "dispatch": "request"},
    "poll",
    "io_uring",
    "prefork",
    "reuseport",
)
SATURATION_STATISTIC = "median requests/s of the ok, unflagged measured closed-loop (wrk) trials"
# Source 001: blocking, thread-per-connection with at most 1000 threads, single-thread epoll and a
# reactor; 2000 connections; one fixed rate for every server.
SOURCE_001_CONNECTIONS = 2000
# 001's rate was beyond its single-thread epoll's capacity but within the multi-threaded
# servers': here, this fraction of the best of the four saturation throughputs.
SOURCE_001_FRACTION = 0.9


def default_open_loop_generator() -> str:
    """The project's open_loop client (built with the servers): cheaper per request than oha, Poisson arrivals,
    its whole histogram and its own CPU time in every record, and checks of each run
    (archbench.analyze.open_loop_checks). oha and wrk2 stay available by name."""
    return "open_loop"


def default_arrival(load_generator: str) -> str:
    """The schedule the study asks for: Poisson where the client draws one (open_loop), else evenly spaced."""
    return "poisson" if load_generator == "open_loop" else "fixed"


def sweep_servers(servers: Sequence[Any] | None = None) -> tuple[list[Any], dict[str, str]]:
    """The fraction sweep's server entries (`servers`, default SWEEP_SERVERS), and {architecture: why} for those
    it leaves out (SWEEP_LEAVES_OUT)."""
    if servers is None:
        return [dict(s) if isinstance(s, Mapping) else s for s in SWEEP_SERVERS], {}
    kept, left = [], {}
    for index, server in enumerate(servers):
        architecture = parse_server_entry(server, f"servers[{index}]").architecture
        if architecture in SWEEP_LEAVES_OUT:
            left[architecture] = SWEEP_LEAVES_OUT[architecture]
        else:
            kept.append(server)
    return kept, left


def saturation_rates(campaign_dir: Path | str) -> dict[str, float]:
    """Saturation key -> median requests/s of the closed-loop HTTP configurations of a campaign."""
    campaign = load_campaign(Path(campaign_dir))
    rates: dict[str, list[float]] = {}
    for record in campaign.trials:
        config = record.get("config") or {}
        if record.get("warmup") or config.get("proto", "http") != "http" or config.get("offered_rate") is not None:
            continue
        rate, flags = trial_throughput(record, campaign.path)
        if rate is not None and not flags:
            rates.setdefault(saturation_key(config), []).append(rate)
    return {key: float(statistics.median(values)) for key, values in sorted(rates.items())}


def saturation_source(campaign_dir: Path | str) -> str:
    return f"campaign {Path(campaign_dir).name}: {SATURATION_STATISTIC}"


def highest_saturation(rates: Mapping[str, float], keys: Sequence[str]) -> str:
    """The key among `keys` with the highest saturation throughput (001's fixed-rate reference)."""
    known = [key for key in keys if key in rates]
    if not known:
        raise KeyError(f"no saturation throughput for any of {', '.join(keys)}")
    return max(known, key=lambda key: rates[key])


def planned_saturation_keys(params: Any) -> list[str]:
    """The saturation keys an open-loop campaign of `params` would look up (closed-loop view of its grid)."""
    import dataclasses

    closed = dataclasses.replace(
        params, load_generator="wrk", rate_fractions=(), offered_rates=(), saturation_rates=(), rate_reference=None
    )
    return list(dict.fromkeys(saturation_key(c.as_dict()) for c in expand_grid(closed)))


# --------------------------------------------------------------------------- what ran


def _label(config: Mapping[str, Any]) -> str:
    return variant_label(config)


def latency_overview(campaign_dir: Path | str) -> list[dict[str, Any]]:
    """One row per measured open-loop trial: offered vs achieved rate, latency percentiles, timeouts."""
    campaign = load_campaign(Path(campaign_dir))
    rows = []
    for record in campaign.trials:
        config = record.get("config") or {}
        if record.get("warmup") or config.get("offered_rate") is None:
            continue
        row: dict[str, Any] = {
            "trial": record["trial_id"],
            "server": _label(config),
            "connections": config["connections"],
            "offered": config["offered_rate"],
            "fraction": config.get("rate_fraction"),
            "status": record["status"],
            "achieved": None,
            "achieved/offered": None,
            "p50_ms": None,
            "p90_ms": None,
            "p99_ms": None,
            "p99.9_ms": None,
            "max_ms": None,
            "timeouts": None,
            "flags": "",
        }
        load = record.get("load") or {}
        if record["status"] == "ok" and load.get("output_file"):
            try:
                parsed = parse_output(load["tool"], (campaign.path / load["output_file"]).read_text(encoding="utf-8"))
            except (OSError, LoadOutputError, ValueError) as error:
                row["flags"] = f"unparsed: {error}"
            else:
                latency = parsed.get("latency_s") or {}
                percentiles = latency.get("percentiles") or {}
                achieved = parsed.get("requests_per_sec")
                row.update(
                    achieved=achieved,
                    **{
                        "achieved/offered": round(achieved / config["offered_rate"], 4)
                        if achieved is not None
                        else None
                    },
                    p50_ms=_ms(percentiles.get("50")),
                    p90_ms=_ms(percentiles.get("90")),
                    p99_ms=_ms(percentiles.get("99")),
                    **{"p99.9_ms": _ms(percentiles.get("99.9"))},
                    max_ms=_ms(latency.get("max")),
                    timeouts=(parsed.get("socket_errors") or {}).get("timeout"),
                    flags=",".join(parsed.get("flags") or []),
                )
        rows.append(row)
    return rows


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


# --------------------------------------------------------------------------- the study's campaigns


def entries_at(servers: Sequence[Any], connections: int) -> list[dict[str, Any]]:
    """Server entries (names, mappings or ARCH:key=v text) pinned to one connection count."""
    out = []
    for index, server in enumerate(servers):
        entry = parse_server_entry(server, f"servers[{index}]").to_dict()
        entry["connections"] = [connections]
        out.append(entry)
    return out


def closed_loop_parameters(
    *,
    campaign: str,
    servers: Sequence[Any],
    connections: int,
    source_001: bool = True,
    source_001_connections: int = SOURCE_001_CONNECTIONS,
    **overrides: Any,
) -> Any:
    """Phase 1: wrk over the study's servers at `connections` (and 001's four at 2000 connections)."""
    entries = entries_at(servers, connections)
    if source_001:
        entries += entries_at(source_001_servers(), source_001_connections)
    return resolve_parameters("latency", campaign=campaign, servers=entries, load_generator="wrk", **overrides)


def fraction_sweep_parameters(
    *,
    campaign: str,
    servers: Sequence[Any],
    connections: int,
    fractions: Sequence[float],
    saturation: Mapping[str, float],
    source: str,
    load_generator: str,
    **overrides: Any,
) -> Any:
    """Phase 2: each server offered `fractions` of its own saturation throughput."""
    return resolve_parameters(
        "latency",
        campaign=campaign,
        servers=entries_at(servers, connections),
        load_generator=load_generator,
        rate_fractions=list(fractions),
        saturation_rates=dict(saturation),
        saturation_source=source,
        **overrides,
    )


def source_001_parameters(
    *,
    campaign: str,
    saturation: Mapping[str, float],
    source: str,
    load_generator: str,
    connections: int = SOURCE_001_CONNECTIONS,
    fraction: float = SOURCE_001_FRACTION,
    **overrides: Any,
) -> Any:
    """Phase 3: 001's four architectures at `connections`, one rate for all: `fraction` of the
    highest of their saturation throughputs (the reference is recorded as each trial's saturation_of)."""
    entries = entries_at(source_001_servers(), connections)
    probe = resolve_parameters("latency", campaign=campaign, servers=entries, load_generator="wrk", check_host=False)
    reference = highest_saturation(saturation, planned_saturation_keys(probe))
    return resolve_parameters(
        "latency",
        campaign=campaign,
        servers=entries,
        load_generator=load_generator,
        rate_fractions=[fraction],
        saturation_rates=dict(saturation),
        rate_reference=reference,
        saturation_source=source,
        **overrides,
    )
