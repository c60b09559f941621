"""The workloads study's data: a workloads campaign -> per-trial and per-configuration frames, the decision map and
the picks.

A workloads campaign (profile `workloads`, `make workloads-study`) measures every architecture under several
workloads: per-request CPU work (`work_us`), blocking calls (`block_us`, `block_dist`), idle keep-alive connections
beside the active load (`idle_connections`), one request per connection (`connection_mode` "close"), large
responses (`response` bytes:N); `workload` names the family. A *workload point* is one setting of those (plus the
connections and pipeline depth): the servers measured at it are compared with each other.

Per point (`decision_map`), the selection of the best (archbench.measure.selection, over
archbench.stats.selection): multiple comparisons with the best on the log rates paired within rounds, with the
campaign's indifference zone delta, and rounds added only where the point was still open. Every configuration but
pong, the reference floor (it parses nothing and answers without doing the work), gets a verdict: *within* delta of the best (a pick), *slower*
than the best, or *open*, each with its simultaneous 95 % interval against the best of the others; the point is
*resolved* when none is open, and an open point says how many rounds it would need. Beside it the configuration's
ratio to the point's fastest design, its p99 latency and what bounded its trials (archbench.analyze.bottleneck). The
picks answer "what to pick" only where the load generator did not bound the fastest design: where it did, the point
cannot rank the servers on this machine, and says so. The selection's own verdict stays in `verdict`; what the map
table, the figure, the picks and the findings read is `ranked_verdict`, which is *unranked* at such a point, so that
no table calls a design a pick at a point whose answer is "not testable here".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from archbench.analyze import analysis, outliers
from archbench.analyze.paired import by_round
from archbench.analyze.values import key_text, number
from archbench.config.workloads import POINT_DEFAULTS, point_key, point_label
from archbench.data import storage
from archbench.measure.selection import REFERENCE_FLOOR, PointSelection, SelectionSettings
from archbench.stats.paired import paired_log_ratio
from archbench.stats.selection import Look

TRIALS_CSV = "workloads-trials.csv"
SUMMARY_CSV = "workloads-summary.csv"
MAP_CSV = "workloads-map.csv"
UNRANKED = "unranked"  # ranked_verdict at a point whose fastest design the load generator bound (rankable)
# The workload settings that make a point (with connections and pipeline); absent in a record means the default.
WORKLOAD_FIELDS: dict[str, Any] = POINT_DEFAULTS


@dataclass
class WorkloadsResults:
    """A workloads campaign's frames (all empty without a campaign) and its selection per point."""

    campaign: storage.Campaign | None
    trials: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    map: pd.DataFrame = field(default_factory=pd.DataFrame)
    settings: SelectionSettings | None = None
    selections: tuple[PointSelection, ...] = ()

    @property
    def available(self) -> bool:
        return not self.map.empty


def workload_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every WORKLOAD_FIELDS column, defaults filled, and `workload` (the family) and `point`."""
    frame = frame.copy()
    for name, default in WORKLOAD_FIELDS.items():
        if name not in frame:
            frame[name] = default
        frame[name] = frame[name].where(frame[name].notna(), default)
    if "workload" not in frame:
        frame["workload"] = ""
    frame["workload"] = frame["workload"].fillna("").astype(str)
    # A point's short name: its family and the settings that differ from the default, e.g. "block 1000 us",
    # "idle 8000", "close", "bytes:16384", "baseline".
    frame["point"] = [point_label(row) for _, row in frame.iterrows()]
    return frame


def summarise(trials: pd.DataFrame, plan: Sequence[str]) -> pd.DataFrame:
    """summary.csv's statistics per configuration, with its workload columns and point."""
    if trials.empty:
        return pd.DataFrame()
    summary = analysis.summary_frame(trials, plan)
    first = trials.drop_duplicates("config_id").set_index("config_id")
    for name in (*WORKLOAD_FIELDS, "workload"):
        if name in first and name not in summary:
            summary[name] = summary["config_id"].map(first[name])
    return workload_columns(summary)


def _deciding_look(selection: PointSelection, config_id: str) -> Look | None:
    """The look that gave a configuration its final verdict."""
    chosen = selection.selection
    if chosen is None or config_id not in chosen.decided_at:
        return None
    rounds = chosen.decided_at[config_id]
    return next(look for look in chosen.looks if look.rounds == rounds)


def decision_map(trials: pd.DataFrame, summary: pd.DataFrame, selections: Sequence[PointSelection]) -> pd.DataFrame:
    """One row per configuration: its point's selection verdict and interval, its ratio to the point's fastest
    design, p99 and the bottleneck (module docstring)."""
    if summary.empty:
        return pd.DataFrame()
    ok = outliers.measured_ok_undisturbed(trials)
    by_key = {selection.point.key: selection for selection in selections}
    by_config = {row["config_id"]: row for _, row in summary.iterrows()}
    rows: list[dict[str, Any]] = []
    for _, row in summary.iterrows():
        selection = by_key.get(point_key(row))
        fastest = None if selection is None else selection.fastest()
        best = by_config.get(fastest) if fastest is not None else None
        rows.append(_map_row(row, selection, best, ok))
    return pd.DataFrame(rows)


def _map_row(
    row: pd.Series, selection: PointSelection | None, best: pd.Series | None, ok: pd.DataFrame
) -> dict[str, Any]:
    config_id = row["config_id"]
    out: dict[str, Any] = {
        "point": row["point"],
        "workload": row.get("workload") or "",
        "config_id": config_id,
        "architecture": row["architecture"],
        "variant": row.get("variant"),
        "threads": row.get("threads"),
        "connections": row.get("connections"),
        **{name: row.get(name) for name in WORKLOAD_FIELDS},
        "n": row.get("n"),
        "mean": row.get("mean"),
        "latency_p99_s_mean": row.get("latency_p99_s_mean"),
        "server_cpu_us_per_request": _cpu_per_request(row),
        "bottleneck": row.get("bottleneck") or "",
        "best_config_id": None if best is None else best["config_id"],
        "best_bottleneck": "" if best is None else (best.get("bottleneck") or ""),
        "is_best": best is not None and config_id == best["config_id"],
        "reference_floor": row["architecture"] == REFERENCE_FLOOR,
        "point_rounds": 0 if selection is None else selection.point.rounds,
        "point_rankable": selection is not None and selection.rankable(),
        "point_client_bound_share": math.nan if selection is None else selection.client_bound_share(),
        "point_resolved": selection is not None and selection.resolved,
        "point_rounds_needed": math.nan,
        "verdict": "",
        "ratio": math.nan,
        "low": math.nan,
        "high": math.nan,
        "n_rounds": 0,
        "decided_at_round": math.nan,
    }
    chosen = None if selection is None else selection.selection
    if chosen is not None and chosen.rounds_needed is not None:
        out["point_rounds_needed"] = chosen.rounds_needed
    look = None if selection is None else _deciding_look(selection, config_id)
    if look is not None:
        design = next(d for d in look.result.designs if d.name == config_id)
        top = max(d.mean_log for d in look.result.designs)
        out.update(
            verdict=design.verdict,
            ratio=math.exp(design.mean_log - top),
            low=math.exp(design.low),
            high=math.exp(design.high),
            n_rounds=design.rounds,
            decided_at_round=look.rounds,
        )
    elif best is not None and config_id != best["config_id"]:  # pong, or a point without a look: a plain ratio
        mine = by_round(ok[ok["config_id"] == config_id], "requests_per_sec")
        theirs = by_round(ok[ok["config_id"] == best["config_id"]], "requests_per_sec")
        aligned = pd.concat([mine.rename("a"), theirs.rename("b")], axis=1)
        ratio = paired_log_ratio(aligned["a"], aligned["b"])
        out.update(ratio=ratio.ratio, n_rounds=ratio.n)
    elif best is not None:
        out["ratio"] = 1.0
    out["ranked_verdict"] = out["verdict"] if out["point_rankable"] or not out["verdict"] else UNRANKED
    out["pick"] = out["ranked_verdict"] == "within" and not out["reference_floor"]
    return out


def _cpu_per_request(row: pd.Series) -> float:
    """The server's CPU per request over the load window (without its start-up, the idle connections' set-up and
    its shutdown, which would swamp poll's figure), or over its whole life in campaigns recorded before the window."""
    window = number(row.get("server_window_cpu_us_per_request"))
    return window if not math.isnan(window) else number(row.get("server_cpu_us_per_request"))


def rankable(point_rows: pd.DataFrame) -> bool:
    """Whether a point can rank the servers here: the load generator bound its fastest design in fewer than half of
    its rounds (archbench.measure.selection.PointSelection.rankable, the rule the runner added rounds by)."""
    return bool(point_rows["point_rankable"].any()) and bool(point_rows["is_best"].any())


def points(map_frame: pd.DataFrame) -> list[str]:
    """The workload points family by family (in the order the map lists them: the campaign's), each family's
    points from the lightest setting to the heaviest, so that a reader sees a workload grow down the map."""
    if map_frame.empty:
        return []
    first = map_frame.drop_duplicates("point")
    families = list(dict.fromkeys(first["workload"]))
    ordered = sorted(
        first.itertuples(index=False),
        key=lambda row: (families.index(row.workload), *(_level(getattr(row, name)) for name in WORKLOAD_FIELDS)),
    )
    return [row.point for row in ordered]


def _level(value: Any) -> tuple[float, str]:
    """A setting's place in its family: its number (bytes:N by N), else its text."""
    text = key_text(value)
    amount = number(text.removeprefix("bytes:"))
    return (amount if not math.isnan(amount) else -1.0, text)
