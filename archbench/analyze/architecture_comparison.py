"""The architecture comparison: one table per pipeline depth, every architecture family once at one point
(connections, wrk threads, duration, response), nginx as the reference."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench.analyze.fields import DEFAULT_PIPELINE, FAMILY_FIELDS, POINT_FIELDS, REFERENCE_ARCHITECTURE
from archbench.analyze.labels import Labeller, family_key, sort_configurations
from archbench.analyze.values import key_text, number
from archbench.config.servers import upper_bound_architectures


@dataclass(frozen=True)
class Comparison:
    pipeline: int
    point: dict[str, Any]  # the POINT_FIELDS values every row shares
    rows: pd.DataFrame  # our architectures: one summary row per family, canonical order
    reference: pd.Series | None  # the fastest nginx configuration at the point, if measured

    @property
    def all_rows(self) -> pd.DataFrame:
        """Our rows, then the reference."""
        if self.reference is None:
            return self.rows
        return pd.concat([self.rows, self.reference.to_frame().T], ignore_index=True)

    @property
    def connections(self) -> int:
        return int(float(self.point["connections"]))

    @property
    def correct_rows(self) -> pd.DataFrame:
        """Our rows without the reference floor (source 002's pong answers without parsing: no correct server)."""
        return self.rows[~self.rows["architecture"].isin(upper_bound_architectures())]

    @property
    def ranked_rows(self) -> pd.DataFrame:
        """Every row the comparison ranks: our correct rows and the reference (the reference floor pong, else nginx)."""
        rows = self.all_rows
        return rows[~rows["architecture"].isin(upper_bound_architectures())]

    @property
    def upper_bound(self) -> pd.Series | None:
        """The reference floor's row when it was measured at this point."""
        bound = self.rows[self.rows["architecture"].isin(upper_bound_architectures())]
        bound = bound[pd.to_numeric(bound["mean"], errors="coerce").notna()]
        return bound.iloc[0] if not bound.empty else None

    def fastest(self) -> pd.Series | None:
        """The correct configuration with the highest mean throughput, nginx included, the reference floor not."""
        rows = self.ranked_rows
        rows = rows[pd.to_numeric(rows["mean"], errors="coerce").notna()]
        if rows.empty:
            return None
        return rows.loc[pd.to_numeric(rows["mean"]).idxmax()]


def pipeline_depths(summary: pd.DataFrame) -> list[int]:
    if summary.empty or "pipeline" not in summary:
        return []
    depths = pd.to_numeric(summary["pipeline"], errors="coerce").fillna(DEFAULT_PIPELINE)
    return sorted({int(d) for d in depths})


def several_depths(summary: pd.DataFrame) -> bool:
    """Whether the summary holds more than one pipeline depth (then a configuration's name says its depth)."""
    return len(pipeline_depths(summary)) > 1


def _has_data(row: Mapping[str, Any]) -> bool:
    """A configuration the comparison can show: measured (n > 0) or at least tried and unsupported."""
    return number(row.get("n")) > 0 or number(row.get("n_unsupported")) > 0


def comparison(summary: pd.DataFrame, pipeline: int) -> Comparison | None:
    """The architecture comparison at one pipeline depth, or None when nothing was measured at it.

    The point is the (connections, wrk threads, duration, response) combination at which the most
    architecture families were measured; ties go to the one with nginx, then to more connections.
    A family measured at several thread counts there is represented by its fastest count (the
    thread-count figure shows the others).
    """
    if summary.empty:
        return None
    depth = pd.to_numeric(summary["pipeline"], errors="coerce").fillna(DEFAULT_PIPELINE)
    has_data = pd.Series([_has_data(r) for _, r in summary.iterrows()], index=summary.index, dtype=bool)
    at_depth = summary[(depth == pipeline) & has_data]
    if at_depth.empty:
        return None
    fields = [f for f in POINT_FIELDS if f in at_depth]
    points = at_depth.assign(_point=[tuple(key_text(r[f]) for f in fields) for _, r in at_depth.iterrows()])

    def score(item: tuple[tuple[str, ...], pd.DataFrame]) -> tuple[int, int, float]:
        _, rows = item
        families = {family_key(r) for _, r in rows.iterrows()}
        return (
            len(families),
            int((rows["architecture"] == REFERENCE_ARCHITECTURE).any()),
            float(pd.to_numeric(rows["connections"], errors="coerce").max()),
        )

    _, chosen = max(points.groupby("_point", sort=False), key=score)
    chosen = chosen.drop(columns="_point")
    picked = []
    for _, rows in chosen.groupby([chosen[f].map(key_text) for f in FAMILY_FIELDS if f in chosen], sort=False):
        means = pd.to_numeric(rows["mean"], errors="coerce")
        picked.append(rows.loc[means.idxmax()] if means.notna().any() else rows.iloc[0])
    picked_frame = sort_configurations(pd.DataFrame(picked)).reset_index(drop=True)
    is_reference = picked_frame["architecture"] == REFERENCE_ARCHITECTURE
    ours = picked_frame[~is_reference].reset_index(drop=True)
    references = picked_frame[is_reference]
    reference = None
    if not references.empty:
        means = pd.to_numeric(references["mean"], errors="coerce")
        reference = references.loc[means.idxmax()] if means.notna().any() else references.iloc[0]
    point = {f: chosen.iloc[0][f] for f in fields}
    return Comparison(pipeline=pipeline, point=point, rows=ours, reference=reference)


def comparisons(summary: pd.DataFrame) -> list[Comparison]:
    """One comparison per pipeline depth with data, shallowest first."""
    made = [comparison(summary, depth) for depth in pipeline_depths(summary)]
    return [c for c in made if c is not None]


def at_point(summary: pd.DataFrame, one: Comparison, vary: str) -> pd.DataFrame:
    """Configurations at the comparison's depth and point, except that `vary` may differ."""
    depth = pd.to_numeric(summary["pipeline"], errors="coerce").fillna(DEFAULT_PIPELINE)
    mask = depth == one.pipeline
    for field_name, value in one.point.items():
        if field_name != vary:
            mask &= summary[field_name].map(key_text) == key_text(value)
    return summary[mask]


def family_sweeps(
    summary: pd.DataFrame, one: Comparison, swept: str, architectures: Iterable[str] | None = None, min_points: int = 2
) -> list[tuple[str, pd.DataFrame]]:
    """(family label, rows sorted by `swept`) for each family of the comparison measured at two or more values.

    Sweeping connections keeps each family's thread count from the comparison table; sweeping threads
    keeps the comparison's connection count. Only configurations with a measured mean are plotted.
    """
    allowed = set(architectures) if architectures is not None else None
    candidates = at_point(summary, one, "connections" if swept == "connections" else "")
    labels = Labeller(summary)
    sweeps = []
    for _, row in one.all_rows.iterrows():
        if allowed is not None and row["architecture"] not in allowed:
            continue
        same = candidates[[family_key(r) == family_key(row) for _, r in candidates.iterrows()]]
        if swept == "connections":
            same = same[same["threads"].map(key_text) == key_text(row["threads"])]
            label = labels.variant(row)
        else:
            label = labels.family(row)
        same = same[pd.to_numeric(same["mean"], errors="coerce").notna()].sort_values(swept, kind="stable")
        if same[swept].nunique() >= min_points:
            sweeps.append((label, same))
    return sweeps
