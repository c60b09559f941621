"""The findings study: the report's answers first, right after the abstract, each computed from the studies that ran
before it and each pointing to the section, table or figure that supports it: what to pick for which workload (the
workloads study's decision, its section fact `picks`, read through the study context: no study imports another),
server CPU per request ranked and the designs that starved connections (the main campaign), and what this machine
could not test (its campaigns' records). Its words are paper/templates/findings/: its section, section.tex.j2,
renders from the facts `write` gathers (also its result).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from archbench.render.latex import Column, adjusted_table, render_tabular
from archbench.render.prose import Prose
from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.findings.facts import cpu_facts, limit_facts, starvation_facts

TEMPLATE = "findings/findings"


def cpu_table(depths: Sequence[dict[str, Any]], prose: Prose) -> str:
    """The servers ranked by CPU per request, one pair of columns per pipeline depth (empty without a ranking)."""
    if not depths:
        return ""
    columns = [Column(prose.sentence(TEMPLATE, "rank_heading"), "r")]
    for depth in depths:
        columns += [
            Column(prose.sentence(TEMPLATE, "cpu_heading", depth), "l"),
            Column(prose.sentence(TEMPLATE, "cpu_unit"), "r"),
        ]
    rows = []
    for rank in range(max(len(d["ranked"]) for d in depths)):
        row = [str(rank + 1)]
        for depth in depths:
            entry = depth["ranked"][rank] if rank < len(depth["ranked"]) else None
            row += [entry["name"], f"{entry['cpu']} ({entry['interval']})"] if entry else ["", ""]
        rows.append(row)
    caption = prose.sentence(
        TEMPLATE, "cpu_caption", connections=" / ".join(sorted({d["connections"] for d in depths}))
    )
    return adjusted_table(caption, "tab:findings-cpu", render_tabular(columns, rows))


def _campaign_metas(context: StudyContext) -> list[dict]:
    """The recorded parameters of the main campaign and of the network study's campaigns (where they ran)."""
    metas = [context.processed.campaign.meta]
    study = context.result_if_run("network")
    for source in (getattr(study, "network", None), getattr(study, "loopback", None)):
        if source is not None and source.campaign is not None:
            metas.append(source.campaign.meta)
    return metas


def write(context: StudyContext) -> StudyOutput:
    processed = context.processed
    picks = context.facts_if_run("workloads").get("picks", {"available": False})
    verdicts = [facts.verdict for facts in (context.result_if_run("sources") or {}).values()]
    architectures, pool = context.result_if_run("architectures"), context.result_if_run("pool")
    depths = cpu_facts(processed.summary)
    facts = {
        "picks": picks,
        "cpu": {
            "depths": depths,
            "figure": bool(architectures and architectures.figures_present.get("architectures_cpu")),
        },
        "cpu_table": cpu_table(depths, context.prose),
        "starvation": {
            **starvation_facts(processed.summary),
            "figure": bool(pool and pool.figures_present.get("connections")),
        },
        "limits": limit_facts(processed.trials, _campaign_metas(context), picks, verdicts),
    }
    return StudyOutput(result=facts, section=facts)


STUDY = Study(name="findings", title="findings first", part="front", write=write)
