"""The campaign's environment: machine, build, method parameters and counts as macros, and the environment table
(paper/generated/environment.tex) that quotes them; the facts of the method section's sentences (executed order,
commands, provenance, flagged and failed trials, nginx's CPU time), which paper/templates/method/section.tex.j2
renders, and the pinning and client-bound findings, which the threats to validity quote too (as `studies.method`).
\\abServerShare stays a sentence macro: the environment table quotes it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from archbench.analyze import analysis, bottleneck
from archbench.analyze.analysis import (
    CLIENT_BOUND_THRESHOLD,
    REFERENCE_ARCHITECTURE,
    Labeller,
    key_text,
    main_pool_series,
    parse_cpu_list,
)
from archbench.render.common import (
    MAX_LISTED,
    client_bound_rule,
    configuration_describer,
    distinct_values,
    load_command,
    rows_with_any,
)
from archbench.render.latex import (
    MacroSet,
    campaign_provenance,
    escape,
    escape_command,
    format_count,
    format_decimal,
    format_list,
    format_percent,
    is_missing,
    provenance_differences,
)
from archbench.render.prose import Prose

TEMPLATE = "method/campaign"


def _first_line(value: Any) -> str:
    text = "" if is_missing(value) else str(value)
    return text.strip().splitlines()[0] if text.strip() else ""


def _or_missing(text: str) -> str:
    return text if text else "unknown"


def _server_command(record: dict[str, Any]) -> str:
    return " ".join(str(a) for a in (record.get("server") or {}).get("argv") or [])


def _representative_record(trial_records: Sequence[dict[str, Any]], summary: pd.DataFrame) -> dict[str, Any] | None:
    """A measured ok trial of the main pool-size series (or any ok trial) to quote commands from."""
    main = main_pool_series(summary)
    preferred = set(main.rows["config_id"]) if main else set()
    candidates = [r for r in trial_records if r.get("status") == "ok" and not r.get("warmup")]
    for record in candidates:
        if record.get("config_id") in preferred:
            return record
    return candidates[0] if candidates else (trial_records[0] if trial_records else None)


def _pipeline_of(record: dict[str, Any] | None) -> int:
    value = ((record or {}).get("config") or {}).get("pipeline")
    try:
        return int(value) if value is not None else analysis.DEFAULT_PIPELINE
    except (TypeError, ValueError):
        return analysis.DEFAULT_PIPELINE


def _first_record(trial_records: Sequence[dict[str, Any]], wanted) -> dict[str, Any] | None:
    """The first measured ok trial matching `wanted` (any matching trial if none is ok)."""
    matching = [r for r in trial_records if wanted(r)]
    ok = [r for r in matching if r.get("status") == "ok" and not r.get("warmup")]
    return (ok or matching or [None])[0]


def _interleaving(measured: pd.DataFrame) -> tuple[int, int]:
    """(configuration changes between consecutive measured trials, possible changes)."""
    ids = list(measured.sort_values("order_index", kind="stable")["config_id"])
    return sum(1 for a, b in zip(ids, ids[1:], strict=False) if a != b), max(0, len(ids) - 1)


def environment_findings(
    macros: MacroSet,
    meta: dict[str, Any],
    trial_records: Sequence[dict[str, Any]],
    trials: pd.DataFrame,
    summary: pd.DataFrame,
    prose: Prose,
) -> dict[str, Any]:
    """Campaign, machine, build and method parameters as macros (all escaped); returns the facts of the section's
    sentences on the executed order, the pipelined and nginx commands and the provenance."""
    provenance = campaign_provenance(meta, trial_records)
    tools = provenance.get("tools") or {}
    parameters = meta.get("parameters") or {}
    measured = trials[~trials["warmup"].astype(bool)] if not trials.empty else trials
    warmups = trials[trials["warmup"].astype(bool)] if not trials.empty else trials

    macros.add(r"\abCampaign", escape(meta.get("campaign", "")), "campaign name")
    macros.add(r"\abProfile", escape(_or_missing(str(meta.get("profile") or ""))), "campaign profile")
    macros.add(r"\abSeed", escape(meta.get("seed", "unknown")), "seed of the randomised trial order")
    macros.add(r"\abCreatedDate", escape(str(meta.get("created_at") or "unknown")[:10]), "campaign creation date (UTC)")
    commit = str(provenance.get("git_commit") or "")
    macros.add(r"\abGitCommit", r"\texttt{" + escape(commit[:12] or "unknown") + "}", "git commit of the measured code")
    dirty = provenance.get("git_dirty")
    macros.add(
        r"\abGitState",
        "unknown" if dirty is None else ("with uncommitted changes" if dirty else "clean"),
        "working tree state at measurement time",
    )
    macros.add(r"\abCpuModel", escape(_or_missing(_first_line(provenance.get("cpu_model")))), "CPU model")
    macros.add(r"\abCpuCount", escape(provenance.get("cpu_count", "unknown")), "logical CPUs")
    memory = provenance.get("memory_bytes")
    macros.add(r"\abMemory", format_decimal(memory / 2**30, 1) + r"\,GiB" if memory else "unknown", "main memory")
    macros.add(r"\abKernel", escape(_or_missing(str(provenance.get("kernel") or ""))), "kernel release")
    macros.add(r"\abOs", escape(_or_missing(str(provenance.get("os") or ""))), "operating system")
    macros.add(r"\abHostname", escape(_or_missing(str(provenance.get("hostname") or ""))), "host name")
    macros.add(r"\abCompiler", escape(_or_missing(str(provenance.get("compiler") or ""))), "C compiler")
    macros.add(r"\abCFlags", r"\texttt{" + escape(_or_missing(str(provenance.get("c_flags") or ""))) + "}", "C flags")
    macros.add(r"\abBuildType", escape(_or_missing(str(provenance.get("build_type") or ""))), "CMake build type")
    macros.add(r"\abWrkVersion", escape(_or_missing(_first_line(tools.get("wrk")))), "wrk -v, first line")
    macros.add(r"\abPythonVersion", escape(_or_missing(str(provenance.get("python") or ""))), "Python")

    def unique_text(column: str) -> list[str]:
        if trials.empty or column not in trials:
            return []
        return sorted({key_text(v) for v in trials[column] if not is_missing(v) and key_text(v)})

    macros.add(
        r"\abServerCpus", escape(" / ".join(unique_text("server_cpus")) or "unknown"), "taskset CPU list of the server"
    )
    macros.add(r"\abLoadCpus", escape(" / ".join(unique_text("load_cpus")) or "unknown"), "taskset CPU list of wrk")
    # How much of the machine the server had: its CPUs, and the physical cores under them where the campaign
    # recorded its CPU topology (campaigns before archbench.config.topology did not).
    server_lists = {frozenset(parse_cpu_list(text)) for text in unique_text("server_cpus")}
    topology = parameters.get("cpu_topology") or {}
    macros.add(
        r"\abServerShare",
        prose.sentence(
            TEMPLATE,
            "server_share",
            cpus=len(next(iter(server_lists))) if len(server_lists) == 1 else None,
            cores=topology.get("server_cores"),
        ),
        "the server's CPUs and physical cores",
    )

    macros.add(r"\abDurations", format_list(distinct_values(trials, "duration_s")), "configured wrk durations, s")
    macros.add(r"\abLoadThreads", format_list(distinct_values(trials, "load_threads")), "wrk -t values")
    macros.add(r"\abConnectionCounts", format_list(distinct_values(trials, "connections")), "wrk -c values")
    pool = summary[summary["architecture"] == "thread_pool"] if not summary.empty else summary
    macros.add(r"\abPoolSizes", format_list(distinct_values(pool, "threads")), "worker threads N of the thread pool")
    labels = Labeller(summary) if not summary.empty else None
    families = [] if summary.empty else list(dict.fromkeys(labels.family(r) for _, r in summary.iterrows()))
    macros.add(r"\abArchitectures", format_list(families), "architecture variants measured")
    macros.add(
        r"\abArchitectureCount",
        format_count(0 if summary.empty else summary["architecture"].nunique()),
        "architectures measured (nginx included)",
    )
    macros.add(
        r"\abPipelineDepths",
        format_list(analysis.pipeline_depths(summary)),
        "wrk pipeline depths D (requests per write)",
    )
    repetitions = parameters.get("repetitions")
    if repetitions is None and not measured.empty:
        repetitions = int(pd.to_numeric(measured["repetition"], errors="coerce").max())
    macros.add(
        r"\abRepetitions",
        escape(repetitions if repetitions is not None else "unknown"),
        "measured trials per configuration",
    )
    macros.add(
        r"\abWarmupsPerConfiguration",
        format_list(sorted(set(warmups.groupby("config_id").size()))) if not warmups.empty else "0",
        "warm-up trials per configuration",
    )

    plan = list(meta.get("plan") or [])
    status = measured["status"] if not measured.empty else pd.Series(dtype=str)
    counts = {
        r"\abConfigurationCount": (len(summary), "configurations"),
        r"\abPlannedTrialCount": (len(plan), "trials in the plan, warm-ups included"),
        r"\abTrialCount": (len(trials), "trial records, warm-ups included"),
        r"\abMeasuredTrialCount": (len(measured), "measured (non-warm-up) trial records"),
        r"\abWarmupTrialCount": (len(warmups), "warm-up trial records"),
        r"\abOkTrialCount": (int((status == "ok").sum()), "measured trials with status ok"),
        r"\abFailedTrialCount": (int((status == "failed").sum()), "measured trials that failed"),
        r"\abUnsupportedTrialCount": (int((status == "unsupported").sum()), "measured trials unsupported"),
        r"\abFlaggedTrialCount": (
            int((measured["flagged"].astype(bool) & (status == "ok")).sum()) if not measured.empty else 0,
            "measured ok trials flagged by wrk output",
        ),
        r"\abMissingTrialCount": (max(0, len(plan) - len(trials)) if plan else 0, "planned trials without a record"),
    }
    for name, (value, comment) in counts.items():
        macros.add(name, format_count(value), comment)

    changes, possible = _interleaving(measured) if not measured.empty else (0, 0)
    record = _representative_record(trial_records, summary)
    server_command = _server_command(record) if record else ""
    macros.add(r"\abLoadCommand", escape_command(load_command(record) or "unknown"), "exact load command of one trial")
    macros.add(r"\abServerCommand", escape_command(server_command or "unknown"), "exact server command of one trial")
    pipelined = _first_record(trial_records, lambda r: _pipeline_of(r) > 1)
    nginx = _first_record(trial_records, lambda r: (r.get("config") or {}).get("architecture") == "nginx")
    started = sorted(str(r.get("started_at")) for r in trial_records if r.get("started_at"))
    finished = sorted(str(r.get("finished_at")) for r in trial_records if r.get("finished_at"))
    macros.add(r"\abFirstTrialAt", escape(started[0][:19].replace("T", " ") if started else "unknown"), "UTC")
    macros.add(r"\abLastTrialAt", escape(finished[-1][:19].replace("T", " ") if finished else "unknown"), "UTC")
    differences = provenance_differences(trial_records)
    macros.add(r"\abConfidenceLevel", "95", "level of every confidence interval")
    macros.add(
        r"\abClientBoundThreshold",
        f"{CLIENT_BOUND_THRESHOLD * 100:.0f}",
        "wrk CPU busy fraction (percent) from which a trial counts as client-bound",
    )
    macros.add(
        r"\abServerBoundThreshold",
        f"{bottleneck.SERVER_BOUND_THRESHOLD * 100:.0f}",
        "server CPU busy fraction (percent) from which a trial counts as server-bound",
    )
    macros.add(
        r"\abWaitBoundShare",
        f"{bottleneck.WAIT_BOUND_SHARE * 100:.0f}",
        "share (percent) of the rate its waits allow from which a blocking trial counts as wait-bound",
    )
    return {
        "pinning": pinning_finding(trials),
        "order": {"changes": format_count(changes), "possible": format_count(possible)},
        "pipeline_command": {
            "command": escape_command(load_command(pipelined)) if pipelined else None,
            "depth": _pipeline_of(pipelined),
        },
        "nginx_command": {"command": escape_command(_server_command(nginx)) if nginx else None},
        # Provenance keys whose values differ between trials, typeset as one list ("": none).
        "provenance": {
            "differences": format_list(r"\texttt{" + escape(d) + "}" for d in differences) if differences else ""
        },
    }


def pinning_finding(trials: pd.DataFrame) -> dict[str, Any]:
    """Whether server and wrk were on disjoint CPUs, and how many CPUs the server's threads shared (`pinning` of
    campaign.tex.j2: the method section and the threats to validity render it)."""
    pairs: set[tuple[str, str]] = set()
    if not trials.empty and "server_cpus" in trials and "load_cpus" in trials:
        pairs = {(key_text(a), key_text(b)) for a, b in zip(trials["server_cpus"], trials["load_cpus"], strict=True)}
        pairs = {p for p in pairs if p[0] and p[1]}
    server_sizes = sorted({len(parse_cpu_list(a)) for a, _ in pairs})
    return {
        "recorded": bool(pairs),
        "disjoint": all(not (parse_cpu_list(a) & parse_cpu_list(b)) for a, b in pairs),
        "server_cpus": format_list(server_sizes),
        "plural": server_sizes != [1],
    }


def flag_finding(summary: pd.DataFrame, prose: Prose) -> dict[str, Any] | None:
    """The configurations with flagged, failed and unsupported trials (None: the campaign has no configuration)."""
    if summary.empty:
        return None
    flagged = rows_with_any(summary, "n_flagged")
    failed = rows_with_any(summary, "n_failed")
    unsupported = rows_with_any(summary, "n_unsupported")
    describe = configuration_describer(summary, prose)
    return {
        "flagged": None if flagged.empty else format_count(len(flagged)),
        "flagged_trials": format_count(summary["n_flagged"].fillna(0).sum()),
        "flagged_names": [describe(r) for _, r in flagged.iterrows()],
        "failed": None if failed.empty else format_count(len(failed)),
        "failed_trials": format_count(summary["n_failed"].fillna(0).sum()),
        "unsupported": None if unsupported.empty else format_count(unsupported["n_unsupported"].sum()),
    }


def client_bound_finding(
    summary: pd.DataFrame, prose: Prose, threshold: float = CLIENT_BOUND_THRESHOLD
) -> dict[str, Any]:
    """How many trials were client-bound (wrk's CPU at least `threshold` busy), and where (`client_bound` of
    trials.tex.j2: the threats to validity render it)."""
    rows = summary.dropna(subset=["mean"]) if not summary.empty else summary
    if rows.empty or "load_busy_share_mean" not in rows or rows["load_busy_share_mean"].isna().all():
        return {"no_data": True}
    highest = rows.loc[rows["load_busy_share_mean"].idxmax()]
    bound = rows_with_any(rows, "n_client_bound")
    describe = configuration_describer(summary, prose)
    # The most client-bound configurations first; a long list is cut, the tables mark every one.
    ranked = bound.assign(_share=bound["n_client_bound"] / bound["n"].where(bound["n"] > 0)).sort_values(
        ["_share", "load_busy_share_mean"], ascending=False, kind="stable"
    )
    return {
        "no_data": False,
        "rule": client_bound_rule(threshold),
        "highest": format_percent(highest["load_busy_share_mean"]),
        "highest_configuration": describe(highest),
        "trials": format_count(int(bound["n_client_bound"].sum()) if not bound.empty else 0),
        "total": format_count(int(rows["n"].fillna(0).sum())),
        "configurations": format_count(len(bound)),
        "one_configuration": len(bound) == 1,
        "names": [
            {
                "configuration": describe(r),
                "bound": format_count(r["n_client_bound"]),
                "trials": format_count(r["n"]),
            }
            for _, r in ranked.head(MAX_LISTED).iterrows()
        ],
        "more": format_count(len(ranked) - MAX_LISTED) if len(ranked) > MAX_LISTED else None,
    }


def nginx_cpu_source_finding(summary: pd.DataFrame) -> dict[str, str]:
    """Whose CPU time nginx's is: its own processes', the launched process tree's, or neither recorded."""
    nginx = summary[summary["architecture"] == REFERENCE_ARCHITECTURE] if not summary.empty else summary
    if nginx.empty:
        return {"kind": "no_nginx"}
    values = nginx.get("server_cpu_source", pd.Series(dtype=str)).fillna("")
    sources = {s for value in values for s in str(value).split(";") if s}
    if sources == {analysis.CPU_SOURCE_STATS}:
        kind = "own_processes"
    elif sources == {analysis.CPU_SOURCE_TREE}:
        kind = "process_tree"
    elif not sources:
        kind = "unrecorded"
    else:
        kind = "mixed"
    return {"kind": kind}
