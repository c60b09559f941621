"""The method study: how the main campaign was measured, as the method section quotes it.

The environment table and the campaign's facts (machine, software, the exact load and server commands, pinning,
trial order, counts of trials), the flagged, failed and client-bound trials and the fastest configuration
(archbench.report.studies.method.facts). Its words are paper/templates/method/ (the section) and the sentence
templates it names.
"""

from __future__ import annotations

from archbench.report.latex import MacroSet
from archbench.report.studies.method.facts import environment_macros, environment_table, trials_macros
from archbench.report.study import Study, StudyContext, StudyOutput

ENVIRONMENT_FILE = "environment.tex"


def write(context: StudyContext) -> StudyOutput:
    processed, prose = context.processed, context.prose
    summary, trials, campaign = processed.summary, processed.trials, processed.campaign
    macros = MacroSet()
    environment_macros(macros, campaign.meta, campaign.trials, trials, summary, prose)
    trials_macros(macros, summary, prose)
    return StudyOutput(macros, {ENVIRONMENT_FILE: environment_table(prose)})


STUDY = Study(name="method", title="method: servers, load, trials and statistics", part="body", write=write)
