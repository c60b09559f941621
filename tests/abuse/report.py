"""The machine-readable result of the abuse suite, for the report's robustness
appendix (schema 1):

{
  "schema": 1,
  "generated_at": "2026-11-21T10:00:00+00:00",    # UTC
  "suite": "tests/test_abuse.py",
  "build": {"dir": "build", "build_type": "Release", "compiler": "GNU 12.2.0"},   # from build-info.json
  "settings": {"header_timeout_s": 2, "idle_timeout_s": 3, "slowloris_connections": 1000,
               "rss_growth_bound_kb": 65536, "fd_settle_s": 10.0, ...},
  "variants": [{"variant": "thread_pool_connection", "architecture": "thread_pool",
                "args": ["--threads", "4", "--dispatch", "connection"],
                "connection_slots": 4,           # null: no per-connection owner (events, thread per connection)
                "lifo": false}, ...],
  "cases": ["bind_loopback", ..., "clean_shutdown"],            # in the order they run
  "results": [{"variant": ..., "architecture": ..., "args": [...], "case": ...,
               "outcome": "passed" | "failed" | "skipped",
               "expected": "what this architecture is expected to do, in words",
               "observed": "what happened (the failure message when failed)",
               "duration_s": 1.23,
               "details": {"fd_baseline": 7, "fds_after": 7, "rss_baseline_kb": 1800, "rss_after_kb": 1900,
                           "rss_growth_kb": 100, "normal_request_after_s": 0.001, ...case-specific numbers}}],
  "summary": {"passed": N, "failed": N, "skipped": N,
              "by_architecture": {"epoll": {"passed": N, "failed": N, "skipped": N}, ...}}
}
Results are sorted by variant (in VARIANTS order), then case (in run order).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import socket
from pathlib import Path

from archbench.measure.provenance import git_state

from .cases import CASE_NAMES, Result, Settings
from .variants import VARIANTS

REPO_ROOT = Path(__file__).resolve().parents[2]


def build_info(build_dir: Path) -> dict:
    info = {"dir": str(build_dir)}
    try:
        meta = json.loads((build_dir / "build-info.json").read_text())
        info["build_type"] = meta.get("build_type")
        info["compiler"] = f"{meta.get('compiler_id')} {meta.get('compiler_version')}"
    except (OSError, ValueError):
        pass
    return info


def write_report(path: Path, results: list[Result], settings: Settings, build_dir: Path) -> dict:
    order = {v.name: i for i, v in enumerate(VARIANTS)}
    case_order = {c: i for i, c in enumerate(CASE_NAMES)}
    results = sorted(results, key=lambda r: (order.get(r.variant, 99), case_order.get(r.case, 99)))
    summary: dict = {"passed": 0, "failed": 0, "skipped": 0, "by_architecture": {}}
    for r in results:
        summary[r.outcome] += 1
        arch = summary["by_architecture"].setdefault(r.architecture, {"passed": 0, "failed": 0, "skipped": 0})
        arch[r.outcome] += 1
    doc = {
        "schema": 1,
        "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "suite": "tests/test_abuse.py",
        "build": build_info(build_dir),
        # what the appendix names: which machine and which code the verdicts are about
        "provenance": {"hostname": socket.gethostname(), **git_state(REPO_ROOT)},
        "settings": dataclasses.asdict(settings),
        "variants": [
            {
                "variant": v.name,
                "architecture": v.architecture,
                "args": list(v.args),
                "connection_slots": v.slots,
                "lifo": v.lifo,
            }
            for v in VARIANTS
        ],
        "cases": list(CASE_NAMES),
        "results": [r.as_dict() for r in results],
        "summary": summary,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)
    return doc
