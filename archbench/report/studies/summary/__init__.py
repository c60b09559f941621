"""The summary study: the five sources in one page, an appendix after each source's numbers (per source its question,
its published answer, this machine's with its interval, and whether they agree), from the sources study's facts;
the findings after the abstract cite it, and the abstract quotes its verdicts (\\abSourcesReproducedSentence). Its
words are paper/templates/summary/: its section, section.tex.j2, renders its introduction from INTRO and inputs the
table.
"""

from __future__ import annotations

from archbench.report.latex import MacroSet
from archbench.report.studies.summary.tables import INTRO, summary_macros, summary_outputs
from archbench.report.study import Study, StudyContext, StudyOutput


def write(context: StudyContext) -> StudyOutput:
    sources = context.result("sources")
    macros = MacroSet()
    summary_macros(macros, sources, context.prose)
    return StudyOutput(macros, summary_outputs(sources, context.prose), section={"intro": INTRO})


STUDY = Study(name="summary", title="the five sources in one page", part="appendix", write=write)
