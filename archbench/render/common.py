"""What the echo and latency studies share: which campaign a section reads, labels, row order and the sentences
every study section opens with (provenance, no campaign). Their trial records become rows in
archbench.analyze.study_trials."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.analysis import CLIENT_BOUND_THRESHOLD, Labeller, architecture_label, key_text
from archbench.data import storage
from archbench.render.latex import (
    MISSING,
    NOT_MEASURED,
    campaign_provenance,
    count_or_zero,
    escape,
    escape_command,
    format_compact,
    format_count,
    is_missing,
)
from archbench.render.plots import include_path, save_or_none
from archbench.render.prose import Prose

COMMON_TEMPLATE = "common/studies"
CONFIGURATION_TEMPLATE = "common/findings"
# Why a study section has no campaign (the sentence itself is the template's).
NOT_GIVEN = "not_given"
NOT_FOUND = "not_found"


@dataclass(frozen=True)
class StudySource:
    """Which campaign a section's numbers come from, or why there is none."""

    requested: str | None  # the parameter as given (None: not given)
    campaign: storage.Campaign | None
    missing: str | None  # NOT_GIVEN or NOT_FOUND when there is no campaign, None when there is one

    @property
    def name(self) -> str:
        return self.campaign.name if self.campaign else (self.requested or "")


def load_campaign_or_reason(requested: str | None, raw_root: Path, what: str) -> StudySource:
    """The named campaign under raw_root, or why there is none (never raises: a missing study campaign makes
    its section a sentence, not a failed report)."""
    if not requested:
        return StudySource(None, None, NOT_GIVEN)
    path = Path(raw_root) / requested
    if not (path / storage.CAMPAIGN_FILE).is_file():
        warnings.warn(f"{what} campaign {requested!r} not found under {raw_root}; its section says so", stacklevel=2)
        return StudySource(requested, None, NOT_FOUND)
    return StudySource(requested, storage.load_campaign(path), None)


def tt(text: Any) -> str:
    """A data-derived name (campaign, host, trial id) in typewriter type that may break after its hyphens,
    underscores and dots, so a long name never runs into the margin."""
    escaped = escape(text)
    return r"\texttt{" + escaped.replace("-", r"-\allowbreak{}").replace(r"\_", r"\_\allowbreak{}") + "}"


def and_list(prose: Prose, items: Sequence[str]) -> str:
    """ "a, b and c" of LaTeX-ready items (latex.format_list escapes its items; these are escaped already)."""
    return prose.sentence(COMMON_TEMPLATE, "and_list", entries=[str(i) for i in items], missing=MISSING)


def provenance_facts(campaign: storage.Campaign) -> dict[str, str]:
    """Host, CPU, kernel, commit and the first and last trial times (UTC) of a campaign, escaped."""
    provenance = campaign_provenance(campaign.meta, campaign.trials)
    started = sorted(str(r["started_at"]) for r in campaign.trials if r.get("started_at"))
    finished = sorted(str(r["finished_at"]) for r in campaign.trials if r.get("finished_at"))
    created = str(campaign.meta.get("created_at") or "")
    return {
        "campaign": escape(campaign.name),
        "campaign_tt": tt(campaign.name),
        "host": escape(provenance.get("hostname") or "an unrecorded host"),
        "host_tt": tt(provenance.get("hostname") or "unrecorded"),
        "cpu": escape(str(provenance.get("cpu_model") or "unknown CPU").strip().splitlines()[0]),
        "cpus": escape(provenance.get("cpu_count") if provenance.get("cpu_count") is not None else "?"),
        "kernel": escape(provenance.get("kernel") or "unknown"),
        "commit": escape(str(provenance.get("git_commit") or "unknown")[:12]),
        "first": escape(started[0][:16].replace("T", " ") if started else created[:16].replace("T", " ") or "unknown"),
        "last": escape(finished[-1][:16].replace("T", " ") if finished else "unknown"),
        "date": escape((started[0] if started else created)[:10] or "unknown"),
    }


def campaign_facts(
    what: str, source: StudySource | None, campaigns: Sequence[storage.Campaign], make_target: str
) -> dict[str, Any]:
    """The facts of a study section's first sentence (common/studies.tex.j2 `campaign`): where its numbers come from,
    or, without campaigns, why it has none and what measures one."""
    requested = source.requested if source else None
    return {
        "section": "section",
        "campaigns": [provenance_facts(c) for c in campaigns],
        "what": what,
        "make_target": make_target,
        "requested": escape(requested) if requested else None,
        "not_found": bool(source and source.missing == NOT_FOUND),
    }


def absent_files(prose: Prose, what: str, names: Sequence[str]) -> dict[str, str]:
    """Every generated file of a section without a campaign: a comment pointing at the section's sentence."""
    comment = prose.sentence(COMMON_TEMPLATE, "absent_file", what=what) + "\n"
    return {name: comment for name in names}


def load_command(record: Mapping[str, Any] | None) -> str:
    """A trial's exact load command with the ephemeral port and the server pid replaced by PORT and PID."""
    if not record:
        return ""
    argv = [str(a) for a in (record.get("load") or {}).get("argv") or []]
    out = []
    for index, arg in enumerate(argv):
        previous = argv[index - 1] if index else ""
        if previous == "--port":
            arg = "PORT"
        elif previous == "--server-pid":
            arg = "PID"
        arg = re.sub(r"(://[^/:]+):\d+", r"\1:PORT", arg)
        # The repository's binaries by their relative name; an absolute checkout path says nothing.
        arg = re.sub(r"^/.*/(build/bin/echo_client|\.tools/bin/oha)$", r"\1", arg)
        out.append(arg)
    return " ".join(out)


def measured_ok_including_disturbed(trials: pd.DataFrame) -> pd.DataFrame:
    """The measured (not warm-up) trials with status ok, disturbed ones included (unlike
    archbench.analyze.outliers.measured_ok_undisturbed, the rows of summary.csv's statistics)."""
    return trials[~trials["warmup"].astype(bool) & (trials["status"] == "ok")]


def per_configuration(
    trials: pd.DataFrame,
    fields: Sequence[str],
    statistics: Callable[[pd.DataFrame], Mapping[str, Any]],
    sort_by: Sequence[str],
    by: Sequence[str] = ("config_id",),
) -> pd.DataFrame:
    """One row per configuration (the trials grouped `by`): `fields` from its first trial, then the `statistics` of
    its trials; canonical architecture order (sorted_rows), then `sort_by`."""
    if trials.empty:
        return pd.DataFrame()
    rows = [
        {**{name: group.iloc[0].get(name) for name in fields}, **statistics(group)}
        for _, group in trials.groupby(list(by), sort=False)
    ]
    return sorted_rows(pd.DataFrame(rows), sort_by).reset_index(drop=True)


def sample_max(values: Any) -> float:
    """The largest number of a column; NaN when it has none."""
    sample = stats.as_sample(values)
    return float(sample.max()) if sample.size else math.nan


def sample_min(values: Any) -> float:
    """The smallest number of a column; NaN when it has none."""
    sample = stats.as_sample(values)
    return float(sample.min()) if sample.size else math.nan


def distinct_values(frame: pd.DataFrame, column: str) -> list[float]:
    """The distinct numbers of a column, ascending; none for an empty frame or a column it lacks."""
    if frame.empty or column not in frame:
        return []
    return sorted(set(stats.as_sample(frame[column]).tolist()))


def sorted_rows(frame: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Canonical architecture order (analysis.architecture_order()), then the variant fields, then `extra`."""
    if frame.empty:
        return frame
    order = analysis.architecture_order()
    ranked = frame.assign(
        _rank=[analysis.architecture_rank(a, order) for a in frame["architecture"]],
        _name=[key_text(a) for a in frame["architecture"]],
        _variant=frame["variant"].astype(str) if "variant" in frame else "",
    )
    keys = ["_rank", "_name", "_variant", *[c for c in extra if c in frame]]
    return ranked.sort_values(keys, kind="stable").drop(columns=["_rank", "_name", "_variant"])


MAX_LISTED = 6  # configurations named in one generated sentence before "and N more"


def configuration_describer(summary: pd.DataFrame, prose: Prose) -> Callable[[pd.Series], str]:
    """What names a row of `summary` in a sentence: "reactor, 2 threads, 50 connections, depth 16" (escaped), the
    depth only when the summary holds several (analysis.several_depths)."""
    labels = Labeller(summary)
    several = analysis.several_depths(summary)

    def describe(row: pd.Series) -> str:
        connections = format_count(row["connections"])
        facts = {
            "variant": escape(labels.variant(row)),
            "connections": connections,
            "one_connection": connections == "1",
            "depth": depth_of(row) if several else None,
        }
        return prose.sentence(CONFIGURATION_TEMPLATE, "configuration", facts)

    return describe


def rows_with_any(frame: pd.DataFrame, count: str) -> pd.DataFrame:
    """The rows of `frame` whose column `count` is above 0 (none when it has no such column)."""
    return frame[frame.get(count, pd.Series(0, index=frame.index)).fillna(0) > 0]


def client_bound_rule(threshold: float = CLIENT_BOUND_THRESHOLD) -> str:
    """The client-bound threshold in percent, as the sentences quote it."""
    return f"{threshold * 100:.0f}"


def depth_of(row: pd.Series) -> str:
    return key_text(row.get("pipeline")) or "1"


def short_family(row: pd.Series, labels: Labeller) -> str:
    """The family name short enough for a narrow table column."""
    architecture = key_text(row.get("architecture"))
    if architecture in ("thread_pool", "thread_per_conn") and not count_or_zero(row.get("max_threads")):
        return architecture_label(architecture, row.get("dispatch"), row.get("handoff"), short=True)
    return labels.family(row)


def starved_cell(row: pd.Series) -> str:
    """Mean starved connections; n/m where the server does not report what it answered (nginx)."""
    value = row.get("starved_connections_mean")
    if is_missing(value) and count_or_zero(row.get("n")) > 0:
        return NOT_MEASURED
    return format_compact(value)


def quoted_load_command(
    records: Iterable[Mapping[str, Any]], wanted: Callable[[Mapping[str, Any]], bool]
) -> str | None:
    """The load command (load_command) of the first completed measured trial `wanted` accepts, escaped for a
    sentence; None without such a trial."""
    for record in records:
        if wanted(record) and record.get("status") == "ok" and not record.get("warmup"):
            command = load_command(record)
            return escape_command(command) if command else None
    return None


def saved_include(figure: Any, path: Path, paper_dir: Path) -> str | None:
    """Save a figure (None: none drawn) as a PDF at `path` and return its path as \\includegraphics takes it
    (relative to paper_dir); without a figure an earlier run's PDF there is removed (save_or_none) and the answer
    is None."""
    return include_path(save_or_none(figure, path), paper_dir)
