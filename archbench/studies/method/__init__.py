"""The method study: how the main campaign was measured, as the method section quotes it.

The environment table and the campaign's facts (machine, software, the exact load and server commands, pinning,
trial order, counts of trials), the flagged, failed and client-bound trials and the fastest configuration
(archbench.studies.method.facts), and the trials other work disturbed in the main and the workloads campaign
(archbench.studies.method.interference; the workloads study runs before this one). Its words are
paper/templates/method/: the section template renders the facts `write` returns with the sentences of trials.tex.j2
and campaign.tex.j2.
"""

from __future__ import annotations

import pandas as pd

from archbench.render.latex import MacroSet
from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.method import facts
from archbench.studies.method.interference import CampaignTrials, interference_findings

ENVIRONMENT_FILE = "environment.tex"


def write(context: StudyContext) -> StudyOutput:
    processed, prose = context.processed, context.prose
    summary, trials, campaign = processed.summary, processed.trials, processed.campaign
    macros = MacroSet()
    campaigns = [CampaignTrials("main", "", trials, campaign.meta), _workloads(context)]
    findings = {
        **facts.environment_findings(macros, campaign.meta, campaign.trials, trials, summary, prose),
        # The sentences on the campaign's trials (the threats to validity quote client_bound too).
        "client_bound": facts.client_bound_finding(summary, prose),
        "flags": facts.flag_finding(summary, prose),
        "nginx_cpu_source": facts.nginx_cpu_source_finding(summary),
        "interference": interference_findings(macros, campaigns),
    }
    # The environment table holds only macros, so it always matches macros.tex.
    return StudyOutput(macros, {ENVIRONMENT_FILE: prose.block(facts.TEMPLATE, "table")}, None, findings)


def _workloads(context: StudyContext) -> CampaignTrials:
    """The workloads study's campaign and trials, empty when it has none (or did not run)."""
    study = context.result_if_run("workloads")
    source = getattr(study, "campaign", None)
    trials = getattr(study, "trials", None) if source is not None else None
    meta = source.meta if source is not None else {}
    return CampaignTrials("workloads", "Workloads", trials if trials is not None else pd.DataFrame(), meta)


STUDY = Study(name="method", title="method: servers, load, trials and statistics", part="body", write=write)
