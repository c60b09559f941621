"""Hoefler and Belli's twelve rules: status and where each is met, citing only what this build has."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import key_text, main_pool_series
from archbench.render import latex
from archbench.render.formats import ALPHA
from archbench.render.latex import escape
from archbench.render.prose import Prose
from archbench.render.study import StudyContext
from archbench.stats import MIN_ROUNDS, MIN_TRIALS_FOR_INTERVAL, NOT_RUN

TEMPLATE = "rules/sentences"  # paper/templates/rules/sentences.tex.j2


def main_pool_table_label(main: Any, labels: Sequence[str]) -> str | None:
    """The label of the source-000 table that holds the main pool-size sweep (main_tables.pool_size_table_blocks
    names them tab:threads-<architecture>-<dispatch>-<handoff>[-p<depth>])."""
    first = main.first
    stem = "tab:threads-" + "-".join(
        k for k in ("thread_pool", key_text(first.get("dispatch")), key_text(first.get("handoff"))) if k
    ).replace("_", "-")
    depth = key_text(first.get("pipeline")) or "1"
    wanted = stem if depth == "1" else f"{stem}-p{depth}"
    return wanted if wanted in labels else None


def cpus_in_use(trials: pd.DataFrame, meta: Mapping[str, Any]) -> tuple[set[int], int]:
    """(the CPUs the server or the load generator was pinned to in any trial, the machine's logical CPUs or 0)."""
    used: set[int] = set()
    for column in ("server_cpus", "load_cpus"):
        if column in trials:
            for value in trials[column].dropna():
                used |= analysis.parse_cpu_list(value)
    count = (meta.get("provenance") or {}).get("cpu_count")
    return used, int(count) if isinstance(count, (int, float)) and not isinstance(count, bool) else 0


def rule_facts(context: StudyContext) -> list[dict[str, Any]]:
    """The facts each of the twelve rules' text needs, in rule order, each with its status (met, partly, n/a): from
    the main campaign and the results of the pool, architecture, statistics and cross-OS studies."""
    summary, trials, meta = context.processed.summary, context.processed.trials, context.processed.campaign.meta
    pool, architectures = context.result("pool"), context.result("architectures")
    statistics, cross = context.result("statistics"), context.result("crossos")
    n = pd.to_numeric(summary.get("n", pd.Series(dtype=float)), errors="coerce").fillna(0)
    has_data = bool((n > 0).any())
    architecture_tables = list(architectures.table_labels)
    compared = statistics.comparisons
    comparisons = not compared.empty

    main = main_pool_series(summary) if not summary.empty else None
    main_sweep = main is not None and bool(main.rows["mean"].notna().any())
    rule1 = {
        "status": "met" if main_sweep or architecture_tables else "n/a",
        "main_sweep": main_sweep,
        "pool_table": main_pool_table_label(main, list(pool.table_labels)) if main_sweep else None,
        "architecture_tables": architecture_tables,
    }

    missing = int(pd.to_numeric(summary.get("n_missing", pd.Series(dtype=float)), errors="coerce").fillna(0).sum())
    used, total = cpus_in_use(trials, meta)
    idle = total - len(used) if total else 0
    rule2 = {
        "status": "partly" if idle > 0 else "met",
        "profile": escape(meta.get("profile") or "unknown"),
        "missing": missing,
        "idle": idle,
        "total": total,
    }

    checkable = summary[n >= 3] if not summary.empty else summary
    failing = int((pd.to_numeric(checkable["shapiro_p"], errors="coerce") < ALPHA).sum()) if not checkable.empty else 0
    tested = compared[compared["test"] != NOT_RUN] if comparisons else compared
    ratio_p = pd.to_numeric(tested.get("shapiro_p_log", pd.Series(dtype=float)), errors="coerce")
    ratios_failing = int((ratio_p < ALPHA).sum())
    # The t tests assume the log ratios roughly normal: met when every tested comparison's log ratios pass the check.
    normality_met = bool(ratio_p.notna().any()) and ratios_failing == 0
    cross_campaigns = not cross.measured.empty or (cross.reference is not None and not cross.reference.empty)
    any_figure = any({**pool.figures_present, **architectures.figures_present}.values()) or statistics.qq_present
    return [
        rule1,
        rule2,
        {"status": "met" if has_data else "n/a", "has_data": has_data},
        {"status": "met", "comparisons": comparisons, "paired": bool(comparisons and compared["paired"].any())},
        {"status": "met" if (n >= MIN_TRIALS_FOR_INTERVAL).any() else "partly"},
        {
            "status": "met" if normality_met else "partly",
            "checkable": len(checkable),
            "failing": failing,
            "ratios_checked": int(ratio_p.notna().sum()),
            "ratios_failing": ratios_failing,
            "qq": statistics.qq_present,
            "has_summary": not summary.empty,
        },
        {
            "status": "met" if len(tested) else "partly",
            "comparisons": comparisons,
            "tested": len(tested),
            "not_run": len(compared) - len(tested),
            "minimum": MIN_ROUNDS,
            "cross_campaigns": cross_campaigns,
        },
        {
            "status": "met" if has_data else "n/a",
            "has_data": has_data,
            "has_summary": not summary.empty,
            "architecture_tables": architecture_tables,
        },
        {"status": "met", "source000": not cross.source_os.empty},
        {"status": "met"},
        {
            "status": "partly",
            "architecture_tables": architecture_tables,
            # pong at some compared depth: the same decision as the architecture sentences' reference floor.
            "floor": any(one.upper_bound is not None for one in analysis.comparisons(summary)) if has_data else False,
        },
        {"status": "met" if any_figure else "partly", "qq": statistics.qq_present},
    ]


def rule_rows(context: StudyContext) -> list[tuple[str, str]]:
    """(status, where and how) for each of the twelve rules, citing only what this build contains."""
    return [
        (facts["status"], context.prose.sentence(TEMPLATE, f"rule{number}", facts))
        for number, facts in enumerate(rule_facts(context), start=1)
    ]


def rules_table(rows: Sequence[tuple[str, str]], prose: Prose) -> str:
    body = []
    for number, (status, text) in enumerate(rows, start=1):
        rule = prose.sentence(TEMPLATE, "paraphrase", number=number)
        body.append(f"{number} & {rule} & {prose.sentence(TEMPLATE, 'status_word', status=status)} & {text} \\\\[2pt]")
    columns = [
        latex.Column("", "r"),
        latex.Column("Rule (paraphrased)", r">{\raggedright\arraybackslash}p{4.6cm}"),
        latex.Column("Status", "l"),
        latex.Column("Where and how", latex.FILL_COLUMN),
    ]
    return latex.render_longtable(
        columns, body, prose.sentence(TEMPLATE, "caption"), "tab:rules", size=r"\footnotesize"
    )


def rules_summary(rows: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """How many rules are met, and which are met only in part or do not apply (the section's summary sentence)."""
    statuses = [status for status, _ in rows]
    return {
        "met": statuses.count("met"),
        "partly": [number for number, status in enumerate(statuses, start=1) if status == "partly"],
        "na": [number for number, status in enumerate(statuses, start=1) if status == "n/a"],
    }
