"""What a pick campaign decided, as facts the terminal table and the page render: every design's verdict with its
simultaneous interval, rate and CPU per request, what bounded the best, why the point could not be ranked (and what
would make it testable), and the closest point of the report's decision map with whether the two answers agree.

The verdicts are the selection's own (archbench.measure.selection.point_selections replays the looks that decided
the campaign's rounds), so what the answer says is what the runner decided on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from archbench.analyze.bottleneck import BOTH, CLIENT, NEITHER, SERVER, WAIT, dominant
from archbench.analyze.labels import architecture_rank
from archbench.analyze.trials import trials_frame
from archbench.config.servers import server_specs
from archbench.config.workloads import POINT_DEFAULTS, POINT_FIELDS
from archbench.data import storage
from archbench.measure.interference import campaign_share, judged_disturbed
from archbench.measure.selection import PointSelection, point_selections
from archbench.stats.selection import OPEN, SLOWER, WITHIN

VERDICT_ORDER = {WITHIN: 0, OPEN: 1, SLOWER: 2}
BOUND_WORDS = {
    SERVER: "the server's CPUs",
    CLIENT: "the load generator",
    BOTH: "the server's CPUs and the load generator together",
    WAIT: "its blocking waits",
    NEITHER: "nothing measured (neither side's CPUs nor the waits)",
}
SUMMARY_CRITERION = "selection"
BUSY_SHARE = 0.25  # of a pick's trials disturbed by other work: the answer says the machine was busy


@dataclass(frozen=True)
class DesignRow:
    """One design at the point: its verdict and interval against the best of the others, as ratios."""

    config_id: str
    label: str
    architecture: str
    verdict: str  # within, slower, open; "" where no look compared it
    ratio: float  # its rate over the best other design's (the additive model's estimate)
    low: float
    high: float
    decided_at: int  # the rounds of the look that gave its verdict
    rounds: int  # rounds with a usable value
    rate: float  # median requests/s over its usable rounds
    cpu_us: float  # median server CPU microseconds per request
    bound: str  # the dominant bottleneck class of its usable trials


@dataclass(frozen=True)
class MapComparison:
    """The report's closest decision-map point and whether its answer agrees with this one's.

    The verdicts compare by architecture (a pool size within delta makes the architecture a pick). Within delta and
    slower are not opposites (a design can be both within delta of the best and not the best), so the answers agree
    where the design best here is a pick there too, and differ where it was shown slower than the best there."""

    campaign: str
    label: str
    delta: float  # the map campaign's indifference zone
    picks: tuple[str, ...]  # architectures within delta there
    slower: tuple[str, ...]
    rankable: bool
    resolved: bool
    best_here: str  # the architecture of the design best here
    best_here_there: str | None  # its verdict there (None: not measured or not compared there)
    common: tuple[str, ...]  # architectures that are picks in both

    @property
    def agrees(self) -> bool:
        return self.rankable and self.best_here_there == WITHIN

    @property
    def differs(self) -> bool:
        return self.rankable and self.best_here_there == SLOWER


@dataclass(frozen=True)
class PickAnswer:
    """A pick campaign's answer (module docstring)."""

    campaign: str
    point: str
    settings: Mapping[str, Any]  # the point's workload settings, connections and pipeline depth
    delta: float
    alpha: float
    first_look: int
    max_rounds: int
    rounds: int
    rows: tuple[DesignRow, ...]
    compared: bool  # at least one look compared the designs (enough usable rounds)
    resolved: bool
    rankable: bool
    client_bound_share: float  # of the fastest design's usable rounds
    rounds_needed: int | None
    stopped_by: str | None
    best: str | None
    best_bound: str
    best_bound_share: float
    environment: Mapping[str, str]
    trials: int
    disturbed: int
    failed: int
    suggestions: tuple[str, ...] = ()
    nearest: MapComparison | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def busy(self) -> bool:
        """Other work disturbed at least BUSY_SHARE of the trials: the machine was not quiet enough to answer."""
        return self.trials > 0 and self.disturbed >= BUSY_SHARE * self.trials

    def rows_with(self, verdict: str) -> tuple[DesignRow, ...]:
        return tuple(row for row in self.rows if row.verdict == verdict)


def design_label(config: Mapping[str, Any]) -> str:
    """A design as the user chose between them: the architecture, and its pool where it has one ("reactor x64")."""
    spec = server_specs().get(str(config.get("architecture")))
    threads = config.get("threads")
    if spec is not None and spec.threads_flag and threads is not None and not _missing(threads):
        return f"{config['architecture']} x{int(threads)}"
    return str(config.get("architecture"))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _usable(frame: pd.DataFrame, max_share: float, records: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    if frame.empty:
        return frame
    keep = [
        row.status == "ok" and not bool(row.warmup) and not judged_disturbed(records.get(row.trial_id, {}), max_share)
        for row in frame.itertuples()
    ]
    return frame[keep]


def _median(values: pd.Series) -> float:
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    return float(numbers.median()) if not numbers.empty else math.nan


def _stopped_by(campaign_dir: Path, label: str) -> str | None:
    """Why the selection phase stopped adding rounds to the point: its summary's word, from the newest summary."""
    for path in sorted((campaign_dir / "adaptive").glob("adaptive-*.json"), reverse=True):
        content = json.loads(path.read_text())
        if content.get("criterion") == SUMMARY_CRITERION:
            return ((content.get("points") or {}).get(label) or {}).get("stopped_by")
    return None


def _environment(meta: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    provenance = meta.get("provenance") or {}
    parameters = meta.get("parameters") or {}
    first = records[0] if records else {}
    tools = provenance.get("tools") or {}
    load = (first.get("load") or {}).get("tool") or parameters.get("load_generator") or ""
    return {
        "host": str(provenance.get("hostname", "")),
        "cpu": f"{provenance.get('cpu_model', '')}, {provenance.get('cpu_count', '')} CPUs",
        "server CPUs": str(parameters.get("server_cpus", "")),
        "load CPUs": str(parameters.get("load_cpus", "")),
        "load generator": str(tools.get(load) or load),
        "kernel": str(provenance.get("kernel", "")),
        "os": str(provenance.get("os", "")),
        "commit": str(provenance.get("git_commit", ""))[:12] + (" (dirty)" if provenance.get("git_dirty") else ""),
        "open-file limit": "/".join(str(v) for v in provenance.get("open_files_limit") or ()),
        "created": str(meta.get("created_at", "")),
    }


def suggestions_for(settings: Mapping[str, Any], bound: str, server_cpus: str, load_cpus: str) -> tuple[str, ...]:
    """What would let this machine rank the designs at a point whose fastest design the load generator bound."""
    if bound not in (CLIENT, BOTH):
        return ()
    work = float(settings.get("work_us") or 0)
    hints = [
        f"more per-request work (--work-us {max(20, int(2 * work) or 20)}): the servers then need more CPU per "
        "request than the load generator does",
        "a second host for the load generator (--placement ssh with --hosts FILE, docs/running.md), so that "
        "it has CPUs of its own",
    ]
    if server_cpus and load_cpus:
        hints.append(
            f"more CPUs for the load generator than the server's (now server {server_cpus}, load {load_cpus}: "
            "--server-cpus and --load-cpus)"
        )
    return tuple(hints)


def pick_answer(campaign_dir: Path) -> PickAnswer:
    """The answer of a pick campaign (its one workload point); ValueError if it holds no selection to report."""
    campaign = storage.load_campaign(campaign_dir)
    settings, selections = point_selections(campaign.path)
    if not selections:
        raise ValueError(f"{campaign.name}: no workload point with two designs measured; nothing was decided")
    if len(selections) > 1:
        raise ValueError(f"{campaign.name}: {len(selections)} workload points; a pick campaign has one")
    chosen = selections[0]
    max_share = campaign_share(campaign.meta)
    records = {str(r.get("trial_id")): r for r in campaign.trials}
    frame = _usable(trials_frame(campaign), max_share, records)
    rows = _rows(chosen, frame, records)
    best = chosen.fastest()
    best_trials = frame[frame["config_id"] == best] if best is not None and not frame.empty else frame.iloc[0:0]
    best_bound = dominant([str(b) for b in best_trials.get("bottleneck", pd.Series(dtype=str)) if b])
    share = (
        float((best_trials["bottleneck"] == best_bound).mean()) if best_bound and not best_trials.empty else math.nan
    )
    point_settings = dict(zip(POINT_FIELDS, chosen.point.key, strict=True))
    parameters = campaign.meta.get("parameters") or {}
    measured = [r for r in campaign.trials if not r.get("warmup")]
    rankable = chosen.rankable()
    return PickAnswer(
        campaign=campaign.name,
        point=chosen.point.label,
        settings=point_settings,
        delta=settings.delta,
        alpha=settings.alpha,
        first_look=settings.first_look,
        max_rounds=settings.max_rounds,
        rounds=chosen.point.rounds,
        rows=rows,
        compared=chosen.selection is not None and chosen.selection.decided,
        resolved=chosen.resolved,
        rankable=rankable,
        client_bound_share=chosen.client_bound_share(),
        rounds_needed=None if chosen.selection is None else chosen.selection.rounds_needed,
        stopped_by=_stopped_by(campaign.path, chosen.point.label),
        best=next((row.label for row in rows if row.config_id == best), None),
        best_bound=best_bound,
        best_bound_share=share,
        environment=_environment(campaign.meta, campaign.trials),
        trials=len(measured),
        disturbed=sum(1 for r in measured if judged_disturbed(r, max_share)),
        failed=sum(1 for r in measured if r.get("status") != "ok"),
        suggestions=()
        if rankable
        else suggestions_for(
            point_settings, CLIENT, str(parameters.get("server_cpus", "")), str(parameters.get("load_cpus", ""))
        ),
    )


def _rows(
    chosen: PointSelection, frame: pd.DataFrame, records: Mapping[str, Mapping[str, Any]]
) -> tuple[DesignRow, ...]:
    configs = {str(r.get("config_id")): r.get("config") or {} for r in records.values()}
    final = chosen.selection.final if chosen.selection is not None else {}
    decided = chosen.selection.decided_at if chosen.selection is not None else {}
    rows = []
    for column, config_id in enumerate(chosen.point.config_ids):
        config = configs.get(config_id, {})
        mine = frame[frame["config_id"] == config_id] if not frame.empty else frame
        comparison = final.get(config_id)
        rates = chosen.point.rates[:, column]
        cpu = _median(mine.get("server_window_cpu_us_per_request", pd.Series(dtype=float)))
        if math.isnan(cpu):
            cpu = _median(mine.get("server_cpu_us_per_request", pd.Series(dtype=float)))
        rows.append(
            DesignRow(
                config_id=config_id,
                label=design_label(config),
                architecture=str(config.get("architecture", "")),
                verdict=comparison.verdict if comparison is not None else "",
                ratio=comparison.ratio if comparison is not None else math.nan,
                low=math.exp(comparison.low) if comparison is not None else math.nan,
                high=math.exp(comparison.high) if comparison is not None else math.nan,
                decided_at=int(decided.get(config_id, 0)),
                rounds=int(np.sum(np.isfinite(rates))),
                rate=float(np.nanmedian(rates)) if np.any(np.isfinite(rates)) else math.nan,
                cpu_us=cpu,
                bound=dominant([str(b) for b in mine.get("bottleneck", pd.Series(dtype=str)) if b]),
            )
        )
    return tuple(
        sorted(
            rows,
            key=lambda r: (VERDICT_ORDER.get(r.verdict, 3), -(r.ratio if not math.isnan(r.ratio) else -math.inf)),
        )
    )


# --------------------------------------------------------------------------- the report's decision map


def _distance(mine: Mapping[str, Any], theirs: Mapping[str, Any]) -> float:
    """How far two points are apart: per axis on a log scale (a factor of 10 in work, wait, idle connections or
    response size counts 1), churn and pipelining as a whole step each."""

    def number(settings: Mapping[str, Any], name: str) -> float:
        try:
            return float(settings.get(name) or POINT_DEFAULTS.get(name) or 0)
        except (TypeError, ValueError):
            return 0.0

    def size(settings: Mapping[str, Any]) -> float:
        response = str(settings.get("response") or "test")
        return float(response.split(":", 1)[1]) if response.startswith("bytes:") else 0.0

    total = 0.0
    for name, scale in (("work_us", 10.0), ("block_us", 10.0), ("idle_connections", 100.0)):
        total += (math.log10(1 + number(mine, name) / scale) - math.log10(1 + number(theirs, name) / scale)) ** 2
    total += (math.log10(1 + size(mine) / 1024) - math.log10(1 + size(theirs) / 1024)) ** 2
    total += (
        math.log10(max(1.0, number(mine, "connections"))) - math.log10(max(1.0, number(theirs, "connections")))
    ) ** 2
    total += float(str(mine.get("connection_mode")) != str(theirs.get("connection_mode")))
    total += float(number(mine, "pipeline") > 1) != float(number(theirs, "pipeline") > 1)
    return math.sqrt(total)


def architecture_verdicts(selection: PointSelection) -> dict[str, str]:
    """Each architecture's best verdict over its variants (a pool size within delta makes the architecture a pick)."""
    if selection.selection is None:
        return {}
    records = {}
    for config_id, comparison in selection.selection.final.items():
        architecture = config_id.split("-", 1)[0]
        known = records.get(architecture)
        if known is None or VERDICT_ORDER[comparison.verdict] < VERDICT_ORDER[known]:
            records[architecture] = comparison.verdict
    return records


def nearest_map_point(answer: PickAnswer, map_dir: Path) -> MapComparison | None:
    """The decision-map point of campaign `map_dir` closest to the answer's, and how their verdicts compare by
    architecture; None without a map point."""
    settings, selections = point_selections(map_dir)
    candidates = [s for s in selections if s.selection is not None]
    if not candidates:
        return None
    closest = min(
        candidates, key=lambda s: _distance(answer.settings, dict(zip(POINT_FIELDS, s.point.key, strict=True)))
    )
    theirs = architecture_verdicts(closest)
    here: dict[str, str] = {}
    for row in answer.rows:
        if row.verdict and (
            row.architecture not in here or VERDICT_ORDER[row.verdict] < VERDICT_ORDER[here[row.architecture]]
        ):
            here[row.architecture] = row.verdict
    best_row = next((row for row in answer.rows if row.label == answer.best), None)
    best_here = best_row.architecture if best_row is not None else ""
    picks_here = {a for a, verdict in here.items() if verdict == WITHIN}
    return MapComparison(
        campaign=map_dir.name,
        label=closest.point.label,
        delta=settings.delta,
        picks=tuple(sorted((a for a, v in theirs.items() if v == WITHIN), key=architecture_rank)),
        slower=tuple(sorted((a for a, v in theirs.items() if v == SLOWER), key=architecture_rank)),
        rankable=closest.rankable(),
        resolved=closest.resolved,
        best_here=best_here,
        best_here_there=theirs.get(best_here),
        common=tuple(sorted((a for a, v in theirs.items() if v == WITHIN and a in picks_here), key=architecture_rank)),
    )


__all__ = [
    "BOUND_WORDS",
    "DesignRow",
    "MapComparison",
    "PickAnswer",
    "architecture_verdicts",
    "design_label",
    "nearest_map_point",
    "pick_answer",
    "suggestions_for",
]
