"""Cross-OS, cross-host and reference comparisons: the frames behind the cross-OS section."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from archbench.analyze import crossos, outliers
from archbench.analyze.analysis import key_text
from archbench.render.latex import is_missing


@dataclass
class CrossOs:
    source_os: pd.DataFrame = field(default_factory=pd.DataFrame)
    source_setups: pd.DataFrame = field(default_factory=pd.DataFrame)
    source_cpu_share: pd.DataFrame = field(default_factory=pd.DataFrame)
    source_error: str = ""
    measured: pd.DataFrame = field(default_factory=pd.DataFrame)
    measured_group: str = ""
    measured_campaigns: list[str] = field(default_factory=list)
    measured_groups: dict[str, list[str]] = field(default_factory=dict)
    measured_unreadable: list[str] = field(default_factory=list)  # "name (error)" of campaigns left out
    reference: pd.DataFrame | None = None
    reference_status: str = ""  # "self", "missing", "error", "ran"
    reference_error: str = ""


def source000_frames(state: CrossOs, path: Path | None = None) -> None:
    try:
        table = crossos.load_source000(path or crossos.SOURCE000_CSV)
    except (OSError, ValueError) as error:
        state.source_error = f"{type(error).__name__}: {error}"
        return
    state.source_os = crossos.source000_cross_os(table)
    state.source_setups = crossos.source000_setups(table)
    state.source_cpu_share = crossos.source000_cross_os(table, match="cpu_share")


def factor_names(confounded_with: Any) -> list[str]:
    """'cpu: A vs B | compiler: X vs Y' -> ['cpu', 'compiler']."""
    text = "" if is_missing(confounded_with) else str(confounded_with)
    return [part.split(":", 1)[0].strip() for part in text.split(crossos.FACTOR_SEPARATOR) if part.strip()]


FACTOR_WORDS = {
    "machine": "machine",
    "cpu": "CPU",
    "logical_processors": "logical processors",
    "clock_ghz": "reported clock",
    "memory": "memory",
    "ethernet": "network adapter",
    "os_version": "OS version",
    "compiler": "compiler",
    "client": "client machine",
    "load_command": "load command",
    "cpu_model": "CPU model",
    "cpu_count": "logical CPUs",
    "memory_bytes": "memory",
    "kernel": "kernel",
    "os": "OS",
    "hostname": "host",
}


def compared_campaigns(read: Sequence[str], campaign: str) -> list[str]:
    """The campaigns set beside the report's for the cross-host comparison: what the catalogue's crossos entry
    reads (the campaign compared with, the shipped reference unless CAMPAIGNS names another, and every campaign
    imported from another machine), in name order, the report's own left out."""
    return sorted(name for name in set(read) if name != campaign)


def _http_only(trials: pd.DataFrame) -> pd.DataFrame:
    """Closed-loop HTTP trials: an echo rate or an open-loop achieved rate is another measure."""
    if "proto" in trials:
        trials = trials[trials["proto"].map(key_text).isin(["", "http"])]
    if "offered_rate" in trials:
        trials = trials[pd.to_numeric(trials["offered_rate"], errors="coerce").isna()]
    return trials


def _load_other(raw_root: Path, name: str) -> pd.DataFrame:
    frame = crossos.load_campaign_trials(Path(raw_root) / name)
    return frame.assign(campaign=name)


def measured_cross_host(
    state: CrossOs,
    trials: pd.DataFrame,
    campaign: str,
    raw_root: Path | None,
    others: Sequence[str],
    testing: crossos.Testing,
) -> None:
    """(b): every configuration measured on two or more OSes (else hosts) among `campaign` and `others`."""
    frames = [trials.assign(campaign=campaign)]
    names = [campaign]
    if raw_root is not None:
        for name in others:
            try:
                frames.append(_load_other(raw_root, name))
                names.append(name)
            except (OSError, ValueError, KeyError) as error:  # a broken extra campaign must not break the report
                state.measured_unreadable.append(f"{name} ({type(error).__name__})")
    state.measured_campaigns = names
    combined = _http_only(pd.concat(frames, ignore_index=True))
    rows = outliers.measured_ok_undisturbed(combined) if not combined.empty else combined
    group = next((c for c in ("os", "hostname") if c in rows and rows[c].dropna().nunique() >= 2), "")
    state.measured_group = group
    for column in ("os", "hostname"):
        if column in rows:
            state.measured_groups[column] = sorted({str(v) for v in rows[column].dropna()})
    if not group or rows.empty:
        return
    state.measured = crossos.measured_comparisons(combined, group, testing=testing, family=f"throughput by {group}")


def reference_comparison(
    state: CrossOs,
    trials: pd.DataFrame,
    campaign: str,
    raw_root: Path | None,
    reference_name: str | None,
    testing: crossos.Testing,
) -> None:
    """(c): this campaign against the one the catalogue's crossos entry chose (data/raw/reference unless
    CAMPAIGNS names another), configuration by configuration."""
    if campaign == reference_name:
        state.reference_status = "self"
        return
    if raw_root is None or reference_name is None:
        state.reference_status = "missing"
        return
    try:
        reference = _http_only(_load_other(raw_root, reference_name))
    except (OSError, ValueError, KeyError) as error:
        state.reference_status = "error"
        state.reference_error = f"{type(error).__name__}: {error}"
        return
    local = _http_only(trials.assign(campaign=campaign))
    state.reference = crossos.compare_with_reference(local, reference, testing=testing)
    state.reference_status = "ran"
