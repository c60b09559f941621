"""The environment study (an appendix): every factor of the main campaign with its levels, the factors held fixed,
and the recorded set-up of its trials (archbench.studies.environment.tables). Its words are
paper/templates/environment/ (its section, section.tex.j2, is rendered with the facts of environment_facts).
"""

from __future__ import annotations

from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.environment.tables import (
    environment_facts,
    factors_table,
    provenance_table,
)

PROVENANCE_TABLE_FILE = "table-provenance.tex"
FACTORS_TABLE_FILE = "table-factors.tex"


def write(context: StudyContext) -> StudyOutput:
    processed, prose = context.processed, context.prose
    summary, trials, meta = processed.summary, processed.trials, processed.campaign.meta
    records = list(processed.campaign.trials)
    files = {
        PROVENANCE_TABLE_FILE: provenance_table(meta, records, trials, prose),
        FACTORS_TABLE_FILE: factors_table(meta, summary, trials, records, prose),
    }
    return StudyOutput(files=files, section={"environment": environment_facts(summary, trials, records)})


STUDY = Study(name="environment", title="factors, levels and environment", part="appendix", write=write)
