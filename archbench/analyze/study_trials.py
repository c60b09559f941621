"""What the study campaigns' trial rows share (the echo and open-loop latency trials): a record's parsed load output
and outcome, its id and placement columns, and the frame the rows make, with the sentence-ready `variant` and
`family` labels."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import Labeller, key_text, number
from archbench.parse import parse_file


def total_count(mapping: Any) -> float:
    """Sum of a {kind: count} object (echo_client's connect_errors, closed_early); NaN if absent."""
    if not isinstance(mapping, Mapping):
        return math.nan
    return float(sum(number(v) for v in mapping.values() if not math.isnan(number(v))))


def study_trial_outcome(
    record: Mapping[str, Any], campaign_dir: Path, tool: Any
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(the trial's parsed load output or None, its outcome columns: repetition, warm-up and adaptive marks,
    order, status, why it failed or has no usable output, and its flags)."""
    status = record.get("status", "failed")
    parsed, parse_error = _parse_study_output(record.get("load") or {}, Path(campaign_dir), tool, status)
    flags = analysis.output_flags(parsed, status)
    return parsed, {
        "repetition": record.get("repetition"),
        "warmup": bool(record.get("warmup", False)),
        "adaptive": bool(record.get("adaptive", False)),
        "order_index": record.get("order_index"),
        "status": status,
        "failure_reason": record.get("failure_reason"),
        "parse_error": parse_error,
        "flags": analysis.FLAG_SEPARATOR.join(flags),
        "flagged": bool(flags),
    }


def _parse_study_output(
    load: Mapping[str, Any], campaign_dir: Path, tool: Any, status: Any
) -> tuple[dict[str, Any] | None, str | None]:
    """(parsed load output, why there is none). Study records always name their output file (unlike the
    main campaign's early ones, archbench.analyze.trials._parse_load_output), so a missing name is only an error for an ok trial."""
    output = load.get("output_file")
    if not output:
        return None, "no load output file" if status == "ok" else None
    try:
        return parse_file(campaign_dir / output, tool), None
    except Exception as error:  # noqa: BLE001 - an unreadable output is a visible row, not a crash
        return None, f"{type(error).__name__}: {error}"


def study_label(row: Mapping[str, Any], labels: Labeller) -> str:
    """The server's name for sentences: "reactor (2 threads)", "prefork (level, 2 workers)", "epoll (edge)"."""
    family = labels.family(row)
    units = analysis.thread_units().get(key_text(row.get("architecture")))
    threads = number(row.get("threads"))
    if units is None or math.isnan(threads):
        return family
    count = f"{threads:.0f} {units[0] if threads == 1 else units[1]}"
    return family[:-1] + f", {count})" if family.endswith(")") else f"{family} ({count})"


def study_trial_ids(record: Mapping[str, Any], campaign: Any, **own: Any) -> dict[str, Any]:
    """A study trial row's first columns: the campaign, trial and configuration ids, the study's `own` columns,
    then the configuration fields (a record without a pipeline depth sent one request per write)."""
    config = record.get("config") or {}
    row = {"campaign": campaign, "trial_id": record.get("trial_id"), "config_id": record.get("config_id"), **own}
    row.update({name: config.get(name) for name in analysis.CONFIG_FIELDS})
    row["pipeline"] = config.get("pipeline") or analysis.DEFAULT_PIPELINE
    return row


def study_trial_placement(record: Mapping[str, Any]) -> dict[str, Any]:
    """A study trial row's last columns: the CPUs the server and the load ran on, and when the trial ran."""
    return {
        "server_cpus": (record.get("server") or {}).get("cpus"),
        "load_cpus": (record.get("load") or {}).get("cpus"),
        "started_at": record.get("started_at"),
        "finished_at": record.get("finished_at"),
    }


def study_trials_frame(rows: Sequence[Mapping[str, Any]], empty_columns: Sequence[str]) -> pd.DataFrame:
    """A study's trial rows with the sentence-ready `variant` (study_label) and `family` columns inserted after the
    three id columns; without rows, an empty frame of `empty_columns` and those two."""
    trials = pd.DataFrame(rows)
    if trials.empty:
        return pd.DataFrame(columns=[*empty_columns, "variant", "family"])
    labels = Labeller(trials)
    trials.insert(3, "variant", [study_label(r, labels) for _, r in trials.iterrows()])
    trials.insert(4, "family", [labels.family(r) for _, r in trials.iterrows()])
    return trials
