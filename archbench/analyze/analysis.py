"""Raw campaign -> processed tables (contracts.md sections 2-4).

`data/raw/<campaign>/` is read, never written. The two outputs are regenerable:

* `trials.csv` (archbench.analyze.trials): one row per trial record, warm-ups
  and failed or unsupported trials included, so nothing that was run
  disappears between the raw record and the report.
* `summary.csv` (archbench.analyze.summary): one row per configuration.
  Statistics are over the measured (non-warm-up) trials whose status is ok.
  Flagged trials (socket errors, non-2xx responses, no requests) ARE in those
  statistics, because for the starving architectures every trial is flagged
  and dropping them would hide exactly what the study wants to show;
  `n_flagged` says how many there were and the tables mark the row. Failed
  trials are counted in `n_failed`, unsupported ones (e.g. io_uring on a
  kernel without it) in `n_unsupported`; neither is ever averaged or dropped
  silently.

This module runs that pipeline for one campaign. It also re-exports the stage's
vocabulary (fields, values, labels, series, the architecture comparison), so
`from archbench.analyze import analysis; analysis.<name>` reaches all of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

# `stats` is re-exported: report modules read `analysis.stats`.
from archbench import stats
from archbench.analyze.architecture_comparison import (
    Comparison,
    at_point,
    comparison,
    comparisons,
    family_sweeps,
    pipeline_depths,
    several_depths,
)
from archbench.analyze.fields import (
    ARCHITECTURE_ORDER,
    CLIENT_BOUND_THRESHOLD,
    CONFIG_FIELDS,
    CPU_SOURCE_STATS,
    CPU_SOURCE_TREE,
    DEFAULT_PIPELINE,
    DEFAULT_TRIGGER,
    FAMILY_FIELDS,
    FLAG_SEPARATOR,
    FLAG_UNPARSED,
    LATENCY_PERCENTILES,
    MULTI_LOOP_ARCHITECTURES,
    ORIGINAL_ARCHITECTURES,
    POINT_FIELDS,
    PROVENANCE_COLUMNS,
    REFERENCE_ARCHITECTURE,
    SERIES_FIELDS,
    SOCKET_ERROR_KINDS,
    THREAD_UNITS,
    architecture_order,
    multi_loop_architectures,
    thread_units,
)
from archbench.analyze.labels import Labeller, architecture_label, architecture_rank, family_key, sort_configurations
from archbench.analyze.series import Series, main_pool_series, series_of
from archbench.analyze.summary import distribution_columns, outcome_counts, summary_frame
from archbench.analyze.trials import (
    OK_RESPONSE_FORMAT,
    RESPONSE_BODIES,
    ParsedRecord,
    Parser,
    default_parser,
    load_cpu_utilisation,
    our_response_bytes,
    output_flags,
    parse_cpu_list,
    server_cpu_seconds,
    trial_row,
    trials_frame,
)
from archbench.analyze.values import is_nan, key_text, number
from archbench.data import storage

__all__ = [
    "ARCHITECTURE_ORDER",
    "CLIENT_BOUND_THRESHOLD",
    "CONFIG_FIELDS",
    "CPU_SOURCE_STATS",
    "CPU_SOURCE_TREE",
    "Comparison",
    "DEFAULT_PIPELINE",
    "DEFAULT_TRIGGER",
    "FAMILY_FIELDS",
    "FLAG_SEPARATOR",
    "FLAG_UNPARSED",
    "LATENCY_PERCENTILES",
    "Labeller",
    "MULTI_LOOP_ARCHITECTURES",
    "OK_RESPONSE_FORMAT",
    "ORIGINAL_ARCHITECTURES",
    "POINT_FIELDS",
    "PROVENANCE_COLUMNS",
    "ParsedRecord",
    "Parser",
    "ProcessedCampaign",
    "REFERENCE_ARCHITECTURE",
    "RESPONSE_BODIES",
    "SERIES_FIELDS",
    "SOCKET_ERROR_KINDS",
    "Series",
    "THREAD_UNITS",
    "architecture_label",
    "architecture_order",
    "architecture_rank",
    "at_point",
    "comparison",
    "comparisons",
    "default_parser",
    "distribution_columns",
    "family_key",
    "family_sweeps",
    "is_nan",
    "key_text",
    "load_cpu_utilisation",
    "load_raw_campaign",
    "main_pool_series",
    "multi_loop_architectures",
    "number",
    "our_response_bytes",
    "outcome_counts",
    "output_flags",
    "parse_cpu_list",
    "pipeline_depths",
    "process_campaign",
    "refuse_inside_raw",
    "series_of",
    "several_depths",
    "server_cpu_seconds",
    "sort_configurations",
    "stats",
    "summary_frame",
    "thread_units",
    "trial_row",
    "trials_frame",
    "write_csvs",
]


@dataclass(frozen=True)
class ProcessedCampaign:
    """One campaign processed: its raw records, both frames, and where they were written."""

    campaign: storage.Campaign
    trials: pd.DataFrame
    summary: pd.DataFrame
    trials_csv: Path
    summary_csv: Path


def load_raw_campaign(campaign_dir: Path) -> storage.Campaign:
    """The campaign as archbench.data.storage reads it (contracts.md section 5)."""
    return storage.load_campaign(Path(campaign_dir))


def process_campaign(campaign_dir: Path, processed_dir: Path, parse: Parser | None = None) -> ProcessedCampaign:
    """Read a raw campaign and (re)write trials.csv and summary.csv in processed_dir."""
    campaign_dir = Path(campaign_dir).resolve()
    processed_dir = Path(processed_dir).resolve()
    refuse_inside_raw(processed_dir, campaign_dir)
    campaign = load_raw_campaign(campaign_dir)
    trials = trials_frame(campaign, parse)
    summary = summary_frame(trials, campaign.meta.get("plan") or ())
    written = write_csvs(processed_dir, {"trials.csv": trials, "summary.csv": summary})
    return ProcessedCampaign(campaign, trials, summary, written["trials.csv"], written["summary.csv"])


def refuse_inside_raw(processed_dir: Path, campaign_dir: Path) -> None:
    """Raise ValueError when processed_dir is campaign_dir or inside it: a raw campaign is never written."""
    processed, raw = Path(processed_dir).resolve(), Path(campaign_dir).resolve()
    if processed == raw or raw in processed.parents:
        raise ValueError(f"processed_dir {processed_dir} is inside the immutable raw campaign {campaign_dir}")


def write_csvs(processed_dir: Path, frames: Mapping[str, pd.DataFrame]) -> dict[str, Path]:
    """Write each frame as processed_dir/<name>, with LF line ends whatever the OS (so regenerated files
    compare byte for byte); {name: path written}."""
    processed_dir = Path(processed_dir)
    processed_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, frame in frames.items():
        path = processed_dir / name
        frame.to_csv(path, index=False, lineterminator="\n")
        written[name] = path
    return written
