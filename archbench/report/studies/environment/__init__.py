"""The environment study (an appendix): every factor of the main campaign with its levels, the factors held fixed,
and the recorded set-up of its trials (archbench.report.studies.environment.tables). Its words are
paper/templates/environment/.
"""

from __future__ import annotations

from archbench.report.latex import MacroSet
from archbench.report.studies.environment.tables import (
    environment_sentence,
    factors_table,
    provenance_table,
    trial_records,
)
from archbench.report.study import Study, StudyContext, StudyOutput

PROVENANCE_TABLE_FILE = "table-provenance.tex"
FACTORS_TABLE_FILE = "table-factors.tex"


def write(context: StudyContext) -> StudyOutput:
    processed, prose = context.processed, context.prose
    summary, trials, meta = processed.summary, processed.trials, processed.campaign.meta
    records = trial_records(processed.campaign)
    macros = MacroSet()
    macros.add(
        r"\abEnvironmentSentence", environment_sentence(summary, trials, records, prose), "factors and provenance"
    )
    files = {
        PROVENANCE_TABLE_FILE: provenance_table(meta, records, trials, prose),
        FACTORS_TABLE_FILE: factors_table(meta, summary, trials, records, prose),
    }
    return StudyOutput(macros, files)


STUDY = Study(name="environment", title="factors, levels and environment", part="appendix", write=write)
