"""The echo study (source 004): what ran, and the benchmark targets, from a stored campaign.

Source 004 compared blocking-multithreaded, poll and epoll echo servers with
its own client at 100, 1000 and 10000 clients and kept adding connections
until epoll held 28,000 and poll 6,000. Here the campaign (profile `echo`,
`notebooks/echo_study.ipynb`) runs every server under `--proto echo` against
`build/bin/echo_client`, which verifies every echoed byte, and a `--max-conns`
trial per server measures its connection ceiling with the reason it stopped.

Targets (measured, reported; not timed tests):
 * 10,000 concurrent clients held for the whole trial with 0 verification
   errors on epoll, reactor, reuseport and io_uring: every measured trial at
   10,000 connections connected all of them, still had all of them open at the
   end, none closed early, no connect error, no verification error;
 * `--max-conns` reaches >= 19,000 server-side connections under the machine's
   20,000 open-file limit.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archbench.config.servers import variant_label
from archbench.data.storage import load_campaign
from archbench.parse import LoadOutputError, parse_output

HELD_CLIENTS_TARGET = 10_000
HELD_TARGET_ARCHITECTURES = ("epoll", "reactor", "reuseport", "io_uring")
MAX_CONNS_TARGET = 19_000


def _label(config: Mapping[str, Any]) -> str:
    return variant_label(config)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def held_all(parsed: Mapping[str, Any]) -> bool:
    """Every connection connected, none failed or was closed early, all open at the end of the window."""
    n = parsed["connections"]
    return (
        parsed["connected"] == n
        and parsed["open_at_end"] == n
        and not any(parsed["closed_early"].values())
        and not any(parsed["connect_errors"].values())
        and parsed["not_attempted"] == 0
    )


def _parsed_trials(campaign_dir: Path) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    campaign = load_campaign(campaign_dir)
    out = []
    for record in campaign.trials:
        config = record.get("config") or {}
        if record.get("warmup") or config.get("proto") != "echo":
            continue
        parsed = None
        load = record.get("load") or {}
        if record["status"] == "ok" and load.get("output_file"):
            try:
                parsed = parse_output(load["tool"], (campaign.path / load["output_file"]).read_text(encoding="utf-8"))
            except (OSError, LoadOutputError):
                parsed = None
        out.append((record, parsed))
    return out


def echo_overview(campaign_dir: Path | str) -> list[dict[str, Any]]:
    """One row per echo configuration: throughput trials (medians over ok, unflagged trials) and
    --max-conns trials (the lowest count reached, its stop reasons, memory per connection)."""
    groups: dict[str, list[tuple[dict[str, Any], dict[str, Any] | None]]] = {}
    for record, parsed in _parsed_trials(Path(campaign_dir)):
        groups.setdefault(record["config_id"], []).append((record, parsed))
    rows = []
    for trials in groups.values():
        config = trials[0][0]["config"]
        parsed_ok = [p for r, p in trials if p is not None]
        clean = [p for p in parsed_ok if not p["flags"]]
        row: dict[str, Any] = {
            "server": _label(config),
            "mode": config["mode"],
            "clients": config["connections"],
            "trials": len(trials),
            "ok": len(parsed_ok),
            "flagged": sum(1 for p in parsed_ok if p["flags"]),
            "failed": sum(1 for r, _ in trials if r["status"] != "ok"),
            "verify_errors": sum(p["verify_errors"] for p in parsed_ok),
        }
        if config["mode"] == "max_conns":
            blocks = [p["max_conns"] for p in parsed_ok]
            per_conn = [b["server_rss_per_conn_bytes"] for b in blocks if b["server_rss_per_conn_bytes"] is not None]
            row.update(
                reached_min=min((b["reached"] for b in blocks), default=None),
                reached_max=max((b["reached"] for b in blocks), default=None),
                stop_reasons=",".join(sorted({b["stop_reason"] for b in blocks})),
                rss_per_conn_bytes=_median(per_conn),
            )
        else:
            row.update(
                held_all=sum(1 for p in parsed_ok if held_all(p)),
                echoes_per_s=_median([p["echoes_per_sec"] for p in clean]),
                rtt_p50_ms=_median(
                    [
                        p["rtt_s"]["percentiles"]["50"] * 1e3
                        for p in clean
                        if p["rtt_s"]["percentiles"].get("50") is not None
                    ]
                ),
                rtt_p99_ms=_median(
                    [
                        p["rtt_s"]["percentiles"]["99"] * 1e3
                        for p in clean
                        if p["rtt_s"]["percentiles"].get("99") is not None
                    ]
                ),
                all_connected_s=_median([p["all_connected_s"] for p in parsed_ok if p["all_connected_s"] is not None]),
            )
        rows.append(row)
    return sorted(rows, key=lambda r: (r["mode"] == "max_conns", r["server"], r["clients"]))


@dataclass(frozen=True)
class TargetCheck:
    description: str
    subject: str
    passed: bool | None  # None: not measured in this campaign
    detail: str


def echo_targets(rows: Sequence[Mapping[str, Any]]) -> list[TargetCheck]:
    checks = []
    for architecture in HELD_TARGET_ARCHITECTURES:
        matching = [
            r
            for r in rows
            if r["mode"] == "throughput"
            and r["clients"] == HELD_CLIENTS_TARGET
            and r["server"].split("-")[0] == architecture
        ]
        for row in matching or [None]:
            description = f"{HELD_CLIENTS_TARGET:,} clients held for the whole trial, 0 verification errors"
            if row is None:
                checks.append(TargetCheck(description, architecture, None, "not measured"))
                continue
            passed = row["trials"] > 0 and row["held_all"] == row["trials"] and row["verify_errors"] == 0
            checks.append(
                TargetCheck(
                    description,
                    row["server"],
                    passed,
                    f"{row['held_all']}/{row['trials']} trials held all, {row['verify_errors']} verification errors",
                )
            )
    for row in rows:
        if row["mode"] != "max_conns":
            continue
        reached = row["reached_min"]
        checks.append(
            TargetCheck(
                f"--max-conns reaches >= {MAX_CONNS_TARGET:,} connections",
                row["server"],
                None if reached is None else reached >= MAX_CONNS_TARGET,
                f"reached {reached} (cap {row['clients']}), stopped by {row['stop_reasons'] or '-'}",
            )
        )
    return checks


def format_targets(checks: Sequence[TargetCheck]) -> str:
    verdicts = {True: "PASS", False: "FAIL", None: "N/A "}
    return "\n".join(f"{verdicts[c.passed]}  {c.subject}: {c.description} ({c.detail})" for c in checks)
