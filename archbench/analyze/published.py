"""The sources' published numbers (data/external/, provenance in its README.md) as frames, and the quantities the
report sets beside ours.

Sources 001-004 are kept in one long format, one row per published number: which table and passage of the source
it comes from, the server as the source names it and the architecture here that reproduces it
(`our_architecture`), the set-up (connections, load threads, duration), `quantity`, `value` in `unit`, `n`
(trials behind it; 1 for a single run, empty where the text does not say), and `as_written` / `written_value`,
the text as the source printed it, which tests/test_external_sources.py checks against excerpts of the texts.
Source 000's tables keep their wide format (`archbench.analyze.crossos.load_source000`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from archbench.config.paths import EXTERNAL_DIR

# One file per source (000's is read by archbench.analyze.crossos).
PUBLISHED_FILES = {
    "001": "source001_wrk2.csv",
    "002": "source002_protocol.csv",
    "003": "source003_results.csv",
    "004": "source004_echo.csv",
}
LONG_COLUMNS = (
    "source",
    "table",
    "server",
    "our_architecture",
    "machine",
    "connections",
    "load_threads",
    "duration_s",
    "quantity",
    "value",
    "unit",
    "n",
    "passage",
    "as_written",
    "written_value",
    "note",
)
TEXT_COLUMNS = ("source", "table", "server", "our_architecture", "machine", "passage", "as_written", "written_value")


def published_table(source: str, root: Path = EXTERNAL_DIR) -> pd.DataFrame:
    """One source's published numbers (001-004) in the long format; `value` as floats."""
    if source not in PUBLISHED_FILES:
        raise KeyError(f"no long-format table for source {source!r}; valid: {', '.join(PUBLISHED_FILES)}")
    frame = pd.read_csv(root / PUBLISHED_FILES[source], dtype={column: str for column in TEXT_COLUMNS})
    missing = [column for column in LONG_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{PUBLISHED_FILES[source]}: missing columns {', '.join(missing)}")
    frame["value"] = frame["value"].astype(float)
    frame["note"] = frame["note"].fillna("")
    return frame


def published_value(frame: pd.DataFrame, quantity: str, **match: object) -> float | None:
    """The one published value of `quantity` among the rows matching `match` (column -> value), or None."""
    rows = frame[frame["quantity"] == quantity]
    for column, value in match.items():
        rows = rows[rows[column] == value]
    if len(rows) > 1:
        raise ValueError(f"{len(rows)} published values of {quantity} for {match}")
    return None if rows.empty else float(rows["value"].iloc[0])


def source_001_throughput(root: Path = EXTERNAL_DIR) -> pd.DataFrame:
    """Source 001's four architectures: requests per second and timeouts under wrk2 at 2000 connections."""
    frame = published_table("001", root)
    frame = frame[frame["table"] == "wrk2"].dropna(subset=["our_architecture"])
    wide = frame.pivot_table(index="our_architecture", columns="quantity", values="value", aggfunc="first")
    return wide[["requests_per_s", "timeouts", "latency_mean_ms", "latency_max_ms"]].reset_index()


def source_004_echo(root: Path = EXTERNAL_DIR) -> pd.DataFrame:
    """Source 004's listings per server and client count: bytes echoed per second (received by the client over
    the run: `bytes_received` / `duration_s`) and the mean delay."""
    frame = published_table("004", root)
    # The listing's own "connections" line is the row's connections column already.
    frame = frame[(frame["table"] == "echo client listing") & (frame["quantity"] != "connections")]
    wide = frame.pivot_table(
        index=["our_architecture", "connections", "duration_s"], columns="quantity", values="value", aggfunc="first"
    ).reset_index()
    wide["bytes_per_s"] = wide["bytes_received"] / wide["duration_s"]
    return wide[["our_architecture", "connections", "duration_s", "bytes_per_s", "mean_delay_ms"]]
