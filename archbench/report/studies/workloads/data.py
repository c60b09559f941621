"""The workloads study's data: a workloads campaign -> per-trial and per-configuration frames, the decision map and
the picks.

A workloads campaign (profile `workloads`, `make workloads-study`) measures every architecture under several
workloads: per-request CPU work (`work_us`), blocking calls (`block_us`, `block_dist`), idle keep-alive connections
beside the active load (`idle_connections`), one request per connection (`connection_mode` "close"), large
responses (`response` bytes:N); `workload` names the family. A *workload point* is one setting of those (plus the
connections and pipeline depth): the servers measured at it are compared with each other.

Per point (`decision_map`):
- the *best* is the configuration with the highest mean throughput, the upper bound pong left out (it answers
  without doing the work);
- every configuration's throughput relative to the best is the paired ratio within rounds (the rounds are blocks:
  each ran every configuration once, archbench.stats.paired), with its interval, p-value and the smallest
  difference it could have detected (80 % power at Holm's strictest level over every comparison of the study);
- its p99 latency and what bounded its trials (archbench.analyze.bottleneck).
The *picks* of a point are the configurations not distinguishable from the best (Holm-adjusted p at least ALPHA,
or the best itself); they answer "what to pick" only where the best was bounded by the server (or by its waits):
where the load generator bounded it, the point cannot rank the servers on this machine, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.bottleneck import SERVER, WAIT
from archbench.analyze.paired import by_round
from archbench.analyze.values import key_text, number
from archbench.data import storage
from archbench.stats.paired import paired_log_ratio
from archbench.stats.power import holm_alpha, paired_detectable_pct

TRIALS_CSV = "workloads-trials.csv"
SUMMARY_CSV = "workloads-summary.csv"
MAP_CSV = "workloads-map.csv"
ALPHA = 0.05
UPPER_BOUND = "pong"  # answers without the work: an upper bound, never the best
# The workload settings that make a point (with connections and pipeline); absent in a record means the default.
WORKLOAD_FIELDS: dict[str, Any] = {
    "work_us": 0,
    "block_us": 0,
    "block_dist": "fixed",
    "idle_connections": 0,
    "connection_mode": "keep-alive",
    "response": "test",
}
POINT_FIELDS = (*WORKLOAD_FIELDS, "connections", "pipeline")
RANKABLE = (SERVER, WAIT)  # a best bounded by these ranks the servers; by the client, both or neither it cannot


@dataclass
class WorkloadsResults:
    """A workloads campaign's frames (all empty without a campaign)."""

    campaign: storage.Campaign | None
    trials: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    map: pd.DataFrame = field(default_factory=pd.DataFrame)

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
    frame["point"] = [point_name(row) for _, row in frame.iterrows()]
    return frame


def point_name(row: Mapping[str, Any]) -> str:
    """A workload point's short name: its family and the settings that differ from the default, e.g.
    "block 1000 us", "idle 8000", "close", "bytes:16384", "baseline"."""
    parts = []
    if number(row.get("work_us")) > 0:
        parts.append(f"work {int(number(row['work_us']))} us")
    if number(row.get("block_us")) > 0:
        dist = "" if key_text(row.get("block_dist")) in ("", "fixed") else f" {row['block_dist']}"
        parts.append(f"block {int(number(row['block_us']))} us{dist}")
    if number(row.get("idle_connections")) > 0:
        parts.append(f"idle {int(number(row['idle_connections']))}")
    if key_text(row.get("connection_mode")) == "close":
        parts.append("close")
    if key_text(row.get("response")) not in ("", "test"):
        parts.append(str(row["response"]))
    return ", ".join(parts) or "baseline"


def point_key(row: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(key_text(row.get(name)) for name in POINT_FIELDS)


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


def decision_map(trials: pd.DataFrame, summary: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per configuration and workload point: relative throughput to the point's best with its paired
    interval and test, Holm over every comparison of the study, p99 and the bottleneck (module docstring)."""
    if summary.empty:
        return pd.DataFrame()
    ok = trials[(trials["status"] == "ok") & ~trials["warmup"].astype(bool)]
    rows: list[dict[str, Any]] = []
    for _, group in summary.groupby(summary.apply(point_key, axis=1), sort=False):
        candidates = group[(group["architecture"] != UPPER_BOUND) & group["mean"].notna()]
        best = candidates.loc[candidates["mean"].idxmax()] if not candidates.empty else None
        best_rounds = (
            by_round(ok[ok["config_id"] == best["config_id"]], "requests_per_sec") if best is not None else None
        )
        for _, row in group.iterrows():
            rows.append(_map_row(row, best, best_rounds, ok))
    frame = pd.DataFrame(rows)
    tested = frame["p_value"].notna()
    m = int(tested.sum())
    adjusted = stats.adjust_pvalues(frame.loc[tested, "p_value"], method="holm", alpha=alpha)
    frame["p_holm"] = math.nan
    frame.loc[tested, "p_holm"] = list(adjusted.adjusted)
    frame["detectable_pct"] = [
        paired_detectable_pct(sd, int(n), alpha=holm_alpha(alpha, m)) if n >= 2 else math.nan
        for sd, n in zip(frame["sd_log"], frame["n_rounds"], strict=True)
    ]
    frame["pick"] = [_is_pick(r, alpha) for _, r in frame.iterrows()]
    return frame


def _map_row(row: pd.Series, best: pd.Series | None, best_rounds: pd.Series | None, ok: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {
        "point": row["point"],
        "workload": row.get("workload") or "",
        "config_id": row["config_id"],
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
        "is_best": best is not None and row["config_id"] == best["config_id"],
        "upper_bound": row["architecture"] == UPPER_BOUND,
    }
    ratio = None
    if best is not None and best_rounds is not None and row["config_id"] != best["config_id"]:
        mine = by_round(ok[ok["config_id"] == row["config_id"]], "requests_per_sec")
        aligned = pd.concat([mine.rename("a"), best_rounds.rename("b")], axis=1)
        ratio = paired_log_ratio(aligned["a"], aligned["b"])
    if ratio is not None:
        out.update(
            ratio=ratio.ratio,
            low=ratio.ci.low,
            high=ratio.ci.high,
            n_rounds=ratio.n,
            sd_log=ratio.sd_log,
            p_value=ratio.p_value,
        )
    else:
        best_itself = best is not None and row["config_id"] == best["config_id"]
        out.update(
            ratio=1.0 if best_itself else math.nan,
            low=math.nan,
            high=math.nan,
            n_rounds=0,
            sd_log=math.nan,
            p_value=math.nan,
        )
    return out


def _cpu_per_request(row: pd.Series) -> float:
    """The server's CPU per request over the load window (without its start-up, the idle connections' set-up and
    its shutdown, which would swamp poll's figure), or over its whole life in campaigns recorded before the window."""
    window = number(row.get("server_window_cpu_us_per_request"))
    return window if not math.isnan(window) else number(row.get("server_cpu_us_per_request"))


def _is_pick(row: pd.Series, alpha: float) -> bool:
    """Not distinguishable from the point's best (or the best itself); never the upper bound."""
    if row["upper_bound"]:
        return False
    if row["is_best"]:
        return True
    return bool(not math.isnan(row["p_holm"]) and row["p_holm"] >= alpha)


def rankable(point_rows: pd.DataFrame) -> bool:
    """Whether a point can rank the servers here: its best was bounded by the server or its waits."""
    best = point_rows[point_rows["is_best"]]
    return not best.empty and str(best.iloc[0]["bottleneck"]) in RANKABLE


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
