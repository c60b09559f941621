"""The issue's efficiency benchmark: every architecture against nginx, CPU per request and requests/s.

    python -m archbench bench [--trials 5] [--duration-s 5] [--campaign NAME] [--raw-root data/raw] ...

runs the `bench` profile (every architecture at 1 thread/worker and nginx with
1 worker, `wrk -t1 -c100`, pipeline depths 1 and 16, interleaved, a warm-up per
configuration, server on CPU 0 and wrk on CPU 1) as a real campaign in
`data/raw/<campaign>` (default name `bench-<host>-<UTC>`, so each run is kept),
then prints, per architecture and depth, the median requests/s and server CPU
microseconds per request, both as ratios to nginx at the same depth, whether
wrk's CPU was saturated (client-bound), and the errors; then the issue's
targets with PASS/FAIL:

 (a) the best architecture uses <= 0.8x nginx's CPU per request at depth 1;
 (b) at depth 16 it uses <= 0.1x nginx's CPU per request, and
 (c) serves >= 8x nginx's requests/s.

Each target names the architecture best at its own measure; a last line names
the architectures that meet all three at once. nginx's CPU is its own (the
trial record's `server.cpu_source`), without the Python launcher around it.

Client-bound: `*` marks wrk's own CPU time (`load.cpu_utilisation`) at 0.95 or
more of its CPU; `~` marks its CPU busy at 0.95 or more counting interrupt and
softirq time too (`load.cpus_busy`), which on loopback can saturate the
client's CPU while its own user + sys time stays far lower.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from archbench.config.params import default_campaign_name, resolve_parameters
from archbench.config.servers import CPU_SOURCE_STATS, variant_label
from archbench.data.storage import load_campaign
from archbench.measure.load_bound import CLIENT_BOUND_BUSY
from archbench.measure.load_bound import load_cpu_utilisation as recorded_utilisation
from archbench.measure.runner import run_campaign
from archbench.measure.warmup import without_warmup
from archbench.parse import LoadOutputError, parse_output

REFERENCE = "nginx"
CLIENT_BOUND_UTILISATION = CLIENT_BOUND_BUSY  # archbench.measure.load_bound: the one threshold
CPU_RATIO_TARGET_DEPTH_1 = 0.8
CPU_RATIO_TARGET_DEPTH_16 = 0.1
RATE_RATIO_TARGET_DEPTH_16 = 8.0


# --------------------------------------------------------------------------- one trial


@dataclass(frozen=True)
class TrialMeasure:
    """What the benchmark takes from one measured trial."""

    label: str  # architecture variant, e.g. "epoll-edge", "thread_pool-request-queue-t1", "nginx-t1"
    architecture: str
    pipeline: int
    status: str
    requests_per_sec: float | None = None
    server_cpu_us_per_request: float | None = None
    load_cpu_utilisation: float | None = None
    load_cpus_busy: float | None = None
    errors: int = 0  # wrk's socket errors and non-2xx responses


def server_cpu_seconds(server: Mapping[str, Any]) -> float | None:
    """user + sys CPU of the server: its own numbers when `cpu_source` says so (nginx), else wait4's."""
    source: Mapping[str, Any] = server
    if server.get("cpu_source") == CPU_SOURCE_STATS:
        source = server.get("stats") or {}
    user, system = source.get("cpu_user_s"), source.get("cpu_sys_s")
    if user is None or system is None:
        return None
    cpu_s = without_warmup(float(user) + float(system), server)  # the warm-up's CPU is not the measured requests'
    return None if math.isnan(cpu_s) else cpu_s


def load_cpu_utilisation(load: Mapping[str, Any]) -> float | None:
    """`load.cpu_utilisation`, or for records written before it existed computed the same way
    (archbench.measure.load_bound); None when the record cannot say."""
    utilisation = recorded_utilisation(load)
    return None if math.isnan(utilisation) else utilisation


def measure_trial(record: Mapping[str, Any], parsed_load: Mapping[str, Any] | None) -> TrialMeasure:
    """A trial record (contracts.md section 2) and its parsed wrk output (section 3; None if unusable)."""
    config = record["config"]
    base = dict(
        label=variant_label(config),
        architecture=config["architecture"],
        pipeline=int(config.get("pipeline") or 1),
        status=record["status"],
    )
    if record["status"] != "ok" or parsed_load is None:
        return TrialMeasure(**base)
    requests = parsed_load.get("total_requests") or 0
    cpu_s = server_cpu_seconds(record.get("server") or {})
    errors = sum((parsed_load.get("socket_errors") or {}).values()) + (parsed_load.get("non_2xx") or 0)
    return TrialMeasure(
        **base,
        requests_per_sec=parsed_load.get("requests_per_sec"),
        server_cpu_us_per_request=cpu_s * 1e6 / requests if cpu_s is not None and requests else None,
        load_cpu_utilisation=load_cpu_utilisation(record.get("load") or {}),
        load_cpus_busy=(record.get("load") or {}).get("cpus_busy"),
        errors=int(errors),
    )


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Row:
    """One architecture variant at one pipeline depth, over its measured trials."""

    label: str
    architecture: str
    pipeline: int
    trials: int
    ok: int
    requests_per_sec: float | None  # medians over the ok trials
    server_cpu_us_per_request: float | None
    load_cpu_utilisation: float | None
    load_cpus_busy: float | None
    errors: int
    rate_vs_reference: float | None = None  # ratio to nginx at the same depth
    cpu_vs_reference: float | None = None

    @property
    def client_bound(self) -> bool:
        """wrk's own CPU time saturated its CPU (the issue's definition)."""
        return self.load_cpu_utilisation is not None and self.load_cpu_utilisation >= CLIENT_BOUND_UTILISATION

    @property
    def client_cpu_saturated(self) -> bool:
        """wrk's CPU had no time left, interrupt and softirq time included."""
        return self.load_cpus_busy is not None and self.load_cpus_busy >= CLIENT_BOUND_UTILISATION

    @property
    def is_reference(self) -> bool:
        return self.architecture == REFERENCE


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _ratio(value: float | None, reference: float | None) -> float | None:
    return value / reference if value is not None and reference else None


def summarize(measures: Sequence[TrialMeasure]) -> list[Row]:
    """Rows by depth, then by CPU per request (most efficient first), with ratios to nginx."""
    groups: dict[tuple[str, int], list[TrialMeasure]] = {}
    for measure in measures:
        groups.setdefault((measure.label, measure.pipeline), []).append(measure)
    rows = []
    for (label, pipeline), group in groups.items():
        ok = [m for m in group if m.status == "ok" and m.requests_per_sec is not None]
        rows.append(
            Row(
                label=label,
                architecture=group[0].architecture,
                pipeline=pipeline,
                trials=len(group),
                ok=len(ok),
                requests_per_sec=_median(m.requests_per_sec for m in ok),
                server_cpu_us_per_request=_median(m.server_cpu_us_per_request for m in ok),
                load_cpu_utilisation=_median(m.load_cpu_utilisation for m in ok),
                load_cpus_busy=_median(m.load_cpus_busy for m in ok),
                errors=sum(m.errors for m in ok),
            )
        )
    references = {row.pipeline: row for row in rows if row.is_reference and row.ok}
    with_ratios = []
    for row in rows:
        reference = references.get(row.pipeline)
        if reference is not None:
            row = dataclasses.replace(
                row,
                rate_vs_reference=_ratio(row.requests_per_sec, reference.requests_per_sec),
                cpu_vs_reference=_ratio(row.server_cpu_us_per_request, reference.server_cpu_us_per_request),
            )
        with_ratios.append(row)
    unknown = float("inf")
    return sorted(with_ratios, key=lambda r: (r.pipeline, r.server_cpu_us_per_request or unknown, r.label))


def _number(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def format_table(rows: Sequence[Row]) -> str:
    header = (
        "architecture",
        "depth",
        "ok",
        "req/s",
        "x nginx",
        "CPU us/req",
        "x nginx",
        "wrk CPU",
        "load CPUs busy",
        "errors",
    )
    lines = [header]
    for row in rows:
        utilisation = _number(row.load_cpu_utilisation, 2) + (" *" if row.client_bound else "")
        busy = _number(row.load_cpus_busy, 2) + (" ~" if row.client_cpu_saturated else "")
        lines.append(
            (
                row.label,
                str(row.pipeline),
                f"{row.ok}/{row.trials}",
                _number(row.requests_per_sec),
                _number(row.rate_vs_reference, 2),
                _number(row.server_cpu_us_per_request, 2),
                _number(row.cpu_vs_reference, 3),
                utilisation,
                busy,
                str(row.errors),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = []
    for index, line in enumerate(lines):
        cells = [line[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(line[1:], widths[1:], strict=True)
        ]
        text.append("  ".join(cells).rstrip())
        if index == 0:
            text.append("  ".join("-" * w for w in widths))
    text.append(
        f"medians over the ok trials; x nginx: ratio to nginx at the same depth; "
        f"* client-bound: wrk's own CPU time >= {CLIENT_BOUND_UTILISATION:g} of its CPU; "
        f"~ its CPU >= {CLIENT_BOUND_UTILISATION:g} busy, interrupts and softirq included; "
        f"errors: wrk socket errors + non-2xx, summed"
    )
    return "\n".join(text)


# --------------------------------------------------------------------------- the targets


@dataclass(frozen=True)
class Target:
    key: str  # "a", "b", "c"
    description: str
    pipeline: int
    measure: str  # "cpu" (lower is better) or "rate" (higher is better)
    threshold: float  # on the ratio to nginx

    def ratio(self, row: Row) -> float | None:
        return row.cpu_vs_reference if self.measure == "cpu" else row.rate_vs_reference

    def met(self, ratio: float | None) -> bool | None:
        if ratio is None:
            return None
        return ratio <= self.threshold if self.measure == "cpu" else ratio >= self.threshold


def issue_targets() -> list[Target]:
    return [
        Target(
            "a",
            f"CPU per request <= {CPU_RATIO_TARGET_DEPTH_1:g}x nginx at depth 1",
            1,
            "cpu",
            CPU_RATIO_TARGET_DEPTH_1,
        ),
        Target(
            "b",
            f"CPU per request <= {CPU_RATIO_TARGET_DEPTH_16:g}x nginx at depth 16",
            16,
            "cpu",
            CPU_RATIO_TARGET_DEPTH_16,
        ),
        Target(
            "c",
            f"requests/s >= {RATE_RATIO_TARGET_DEPTH_16:g}x nginx at depth 16",
            16,
            "rate",
            RATE_RATIO_TARGET_DEPTH_16,
        ),
    ]


@dataclass(frozen=True)
class TargetResult:
    target: Target
    best: Row | None  # the architecture best at the target's measure (None: no data)
    reference: Row | None  # nginx at the target's depth
    ratio: float | None
    passed: bool | None  # None: cannot tell (nginx or the architectures have no ok trial)


def evaluate_targets(rows: Sequence[Row], targets: Sequence[Target] | None = None) -> list[TargetResult]:
    results = []
    for target in targets or issue_targets():
        reference = next((r for r in rows if r.is_reference and r.pipeline == target.pipeline and r.ok), None)
        candidates = [
            r for r in rows if not r.is_reference and r.pipeline == target.pipeline and target.ratio(r) is not None
        ]
        best = None
        if candidates:
            best = (min if target.measure == "cpu" else max)(candidates, key=lambda r: target.ratio(r))
        ratio = target.ratio(best) if best else None
        results.append(TargetResult(target, best, reference, ratio, target.met(ratio)))
    return results


def architectures_meeting_all(rows: Sequence[Row], targets: Sequence[Target] | None = None) -> list[str]:
    """Labels of the architectures that meet every target (each at its own depth)."""
    targets = list(targets or issue_targets())
    labels = dict.fromkeys(r.label for r in rows if not r.is_reference)
    meeting = []
    for label in labels:
        verdicts = []
        for target in targets:
            row = next((r for r in rows if r.label == label and r.pipeline == target.pipeline), None)
            verdicts.append(target.met(target.ratio(row)) if row else None)
        if all(v is True for v in verdicts):
            meeting.append(label)
    return meeting


def format_targets(results: Sequence[TargetResult], meeting_all: Sequence[str]) -> str:
    lines = ["targets (the issue's, against nginx):"]
    for result in results:
        target = result.target
        verdict = {True: "PASS", False: "FAIL", None: "N/A "}[result.passed]
        if result.best is None or result.reference is None:
            lines.append(f"  ({target.key}) {verdict} {target.description}: no ok trials to compare")
            continue
        best, reference = result.best, result.reference
        if target.measure == "cpu":
            numbers = (
                f"{best.server_cpu_us_per_request:.2f} us/req vs nginx {reference.server_cpu_us_per_request:.2f} us/req"
            )
        else:
            numbers = f"{best.requests_per_sec:,.0f} req/s vs nginx {reference.requests_per_sec:,.0f} req/s"
        bound = ""
        if best.client_bound or best.client_cpu_saturated:
            bound = " (client-bound: wrk's CPU was saturated, the server could do more)"
        lines.append(
            f"  ({target.key}) {verdict} {target.description}: best {best.label} {numbers} = {result.ratio:.3f}x{bound}"
        )
    lines.append(f"  all three by one architecture: {', '.join(meeting_all) if meeting_all else 'none'}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- a campaign


def campaign_measures(campaign_dir: Path | str) -> list[TrialMeasure]:
    """Every measured (non-warm-up) trial of a stored campaign."""
    campaign = load_campaign(Path(campaign_dir))
    measures = []
    for record in campaign.trials:
        if record.get("warmup"):
            continue
        load = record.get("load") or {}
        parsed = None
        if record["status"] == "ok" and load.get("output_file"):
            try:
                parsed = parse_output(load["tool"], (campaign.path / load["output_file"]).read_text(encoding="utf-8"))
            except (LoadOutputError, OSError):
                parsed = None
        measures.append(measure_trial(record, parsed))
    return measures


def bench_report(campaign_dir: Path | str) -> str:
    rows = summarize(campaign_measures(campaign_dir))
    return format_table(rows) + "\n\n" + format_targets(evaluate_targets(rows), architectures_meeting_all(rows))


def default_bench_campaign(now: datetime | None = None) -> str:
    """`bench-<host>-<UTC date-time>`: a new campaign per run, none overwritten."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    return f"{default_campaign_name('bench')}-{stamp}"


def run_bench(
    *, trials: int = 5, duration_s: int = 5, campaign: str | None = None, stream: TextIO | None = None, **overrides: Any
) -> tuple[Path, str]:
    """Run (or resume) the benchmark campaign; returns its directory and the printed report.

    `overrides` are further campaign parameters (raw_root, build_dir, server_cpus, load_cpus, seed...).
    """
    params = resolve_parameters(
        "bench", trials=trials, duration_s=duration_s, campaign=campaign or default_bench_campaign(), **overrides
    )
    result = run_campaign(params, stream=stream)
    return result.path, bench_report(result.path)
