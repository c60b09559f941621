"""The summary study: the five sources in one page, an appendix after each source's numbers (per source its question,
its published answer, this machine's with its interval, and whether they agree), from the sources study's facts;
the findings after the abstract cite it, and the abstract quotes its verdicts (the section fact `reproduced`). Its
words are paper/templates/summary/: its section, section.tex.j2, renders its introduction from INTRO and inputs the
table.
"""

from __future__ import annotations

from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.summary.tables import INTRO, reproduced_facts, summary_outputs


def write(context: StudyContext) -> StudyOutput:
    sources = context.result("sources")
    section = {"intro": INTRO, "reproduced": reproduced_facts(sources)}
    return StudyOutput(files=summary_outputs(sources, context.prose), section=section)


STUDY = Study(name="summary", title="the five sources in one page", part="appendix", write=write)
