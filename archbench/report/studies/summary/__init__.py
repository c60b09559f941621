"""The summary study: the five sources in one page, right after the abstract (per source its question, its
published answer, this machine's with its interval, and whether they agree), from the sources study's facts. Its
words are paper/templates/summary/.
"""

from __future__ import annotations

from archbench.report.studies.summary.tables import summary_outputs
from archbench.report.study import Study, StudyContext, StudyOutput


def write(context: StudyContext) -> StudyOutput:
    return StudyOutput(files=summary_outputs(context.result("sources"), context.prose))


STUDY = Study(name="summary", title="the five sources in one page", part="front", write=write)
