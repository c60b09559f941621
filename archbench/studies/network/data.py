"""The network study's numbers: per pool size, our netns/loopback throughput ratio beside source 000's
separate-client/loopback ratio, each with its interval and Welch test, and what the link rate bounds.

Both ratios are computed the same way from summary statistics (mean, sample sd, n per side), because
source 000 published only those: the ratio's 95 % interval by the delta method on the log ratio with
Welch-Satterthwaite degrees of freedom (stats.ratio_ci_from_stats), the difference of the means by Welch's
t-test (stats.welch_from_stats), and Holm's adjustment over each family of pool sizes (ours; the source's).
Our per-configuration statistics are summary.csv's (archbench.analyze.summary): measured trials with
status ok, flagged ones included and counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.crossos import load_source000
from archbench.measure.placement import LinkModel, PlacementError
from archbench.render.common import StudySource

ARCHITECTURE = "thread_pool"  # source 000's server
SOURCE_OS = "Linux"  # the machine both of source 000's set-ups were measured on
SOURCE_SEPARATE = "separate-client"
SOURCE_LOOPBACK = "loopback"
# Ethernet (14), IPv4 (20) and TCP with timestamps (32) headers: what a tbf on a veth end counts per
# segment beyond its payload. With one request in flight per connection, each response is one segment.
FRAME_OVERHEAD_BYTES = 66
KEYS = ("threads", "connections")
SIDES = ("loopback", "network")
SIDE_COLUMNS = ("n", "mean", "sd", "n_flagged", "n_failed")  # summary.csv's, per side
COMPARISON_COLUMNS = [
    "threads",
    "connections",
    *(f"{side}_{name}" for side in SIDES for name in SIDE_COLUMNS),
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "p_holm",
    "source_loopback_mean",
    "source_loopback_n",
    "source_network_mean",
    "source_network_n",
    "source_ratio",
    "source_ratio_ci_low",
    "source_ratio_ci_high",
    "source_p_value",
    "source_p_holm",
]


@dataclass(frozen=True)
class LinkBound:
    """The link's rate and the response rate it allows: payload only, and with one frame per response."""

    link: str | None  # the campaign's link model as given ("1gbit"); None: an unshaped veth pair
    rate_bits_per_s: float
    bytes_per_response: float  # wrk's bytes read / requests (HTTP status line, headers and body); NaN: unknown

    def _responses_per_s(self, overhead_bytes: float) -> float:
        if math.isnan(self.rate_bits_per_s) or not self.bytes_per_response > 0:
            return math.nan
        return self.rate_bits_per_s / (8.0 * (self.bytes_per_response + overhead_bytes))

    @property
    def payload_bound(self) -> float:
        """Responses per second the link carries if only the HTTP bytes counted."""
        return self._responses_per_s(0.0)

    @property
    def framed_bound(self) -> float:
        """Responses per second with the Ethernet, IP and TCP headers of one segment per response."""
        return self._responses_per_s(FRAME_OVERHEAD_BYTES)


@dataclass(frozen=True)
class NetworkResults:
    """Both campaigns (or why one is missing), their summaries and the per-pool-size comparison."""

    network: StudySource
    loopback: StudySource
    summaries: Mapping[str, pd.DataFrame]  # "network", "loopback" -> summary frame (empty without a campaign)
    comparison: pd.DataFrame
    link: LinkBound | None

    @property
    def available(self) -> bool:
        return self.network.campaign is not None and self.loopback.campaign is not None


def campaign_summary(source: StudySource) -> pd.DataFrame:
    """summary.csv's rows of one campaign (empty without one)."""
    if source.campaign is None:
        return pd.DataFrame()
    trials = analysis.trials_frame(source.campaign)
    return analysis.summary_frame(trials, source.campaign.meta.get("plan") or ())


def pool_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Source 000's server's configurations, one per (pool size, connections)."""
    if summary.empty:
        return summary
    rows = summary[summary["architecture"] == ARCHITECTURE]
    return rows.drop_duplicates(subset=list(KEYS))


def source000_pools(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Source 000's Linux machine per pool size: its separate-client and loopback mean, sd and n."""
    table = load_source000() if table is None else table
    linux = table[table["os"] == SOURCE_OS]
    sides = {
        "network": linux[linux["setup"] == SOURCE_SEPARATE],
        "loopback": linux[linux["setup"] == SOURCE_LOOPBACK],
    }
    frames = [
        rows.set_index("thread_pool_size")[["mean_rps", "sd_rps", "n"]].add_prefix(f"{side}_")
        for side, rows in sides.items()
    ]
    return frames[0].join(frames[1], how="inner").sort_index()


def _count(value: Any) -> int:
    return 0 if analysis.is_nan(value) else int(value)


def compare_pools(network: pd.DataFrame, loopback: pd.DataFrame, source: pd.DataFrame) -> pd.DataFrame:
    """One row per pool size (and connection count) either campaign measured, with both ratios and tests."""
    network, loopback = pool_rows(network), pool_rows(loopback)
    keys = sorted(
        {
            tuple(int(v) for v in key)
            for frame in (network, loopback)
            if not frame.empty
            for key in frame[list(KEYS)].values
        }
    )
    rows = []
    for threads, connections in keys:
        row: dict[str, Any] = {"threads": threads, "connections": connections}
        for side, frame in (("network", network), ("loopback", loopback)):
            match = (
                frame[(frame["threads"] == threads) & (frame["connections"] == connections)]
                if not frame.empty
                else frame
            )
            found = None if match.empty else match.iloc[0]
            row.update(
                {f"{side}_{name}": math.nan if found is None else found.get(name, math.nan) for name in SIDE_COLUMNS}
            )
        net = (row["network_mean"], row["network_sd"], _count(row["network_n"]))
        loop = (row["loopback_mean"], row["loopback_sd"], _count(row["loopback_n"]))
        estimate, interval = stats.ratio_ci_from_stats(*net, *loop)
        row.update(ratio=estimate, ratio_ci_low=interval.low, ratio_ci_high=interval.high)
        row["p_value"] = stats.welch_from_stats(*net, *loop).p_value
        row.update(_source_columns(source, threads))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    if frame.empty:
        return frame
    frame["p_holm"] = stats.holm(frame["p_value"].tolist()).adjusted
    # The source's family is its own pool sizes, each once, whatever our connection counts.
    first = ~frame.duplicated(subset=["threads"])
    family = frame.loc[first]
    adjusted = dict(zip(family["threads"], stats.holm(family["source_p_value"].tolist()).adjusted, strict=True))
    frame["source_p_holm"] = [adjusted.get(t, math.nan) for t in frame["threads"]]
    return frame


def _source_columns(source: pd.DataFrame, threads: int) -> dict[str, Any]:
    if threads not in source.index:
        return {name: math.nan for name in COMPARISON_COLUMNS if name.startswith("source_")}
    row = source.loc[threads]
    net = (float(row["network_mean_rps"]), float(row["network_sd_rps"]), int(row["network_n"]))
    loop = (float(row["loopback_mean_rps"]), float(row["loopback_sd_rps"]), int(row["loopback_n"]))
    estimate, interval = stats.ratio_ci_from_stats(*net, *loop)
    return {
        "source_loopback_mean": loop[0],
        "source_loopback_n": loop[2],
        "source_network_mean": net[0],
        "source_network_n": net[2],
        "source_ratio": estimate,
        "source_ratio_ci_low": interval.low,
        "source_ratio_ci_high": interval.high,
        "source_p_value": stats.welch_from_stats(*net, *loop).p_value,
        "source_p_holm": math.nan,
    }


def link_bound(source: StudySource, summary: pd.DataFrame) -> LinkBound | None:
    """The netns campaign's link model and its response-rate bound (None without that campaign)."""
    if source.campaign is None:
        return None
    parameters = source.campaign.meta.get("parameters") or {}
    link = parameters.get("link")
    if not link:
        link = next(
            (((r.get("placement") or {}).get("link")) for r in source.campaign.trials if r.get("placement")), None
        )
    rate = math.nan
    if link:
        try:
            rate = LinkModel.parse(str(link)).rate_bits_per_s
        except PlacementError:
            rate = math.nan
    size = stats.sample_median(pool_rows(summary)["bytes_per_response_mean"]) if not summary.empty else math.nan
    return LinkBound(str(link) if link else None, rate, size)
