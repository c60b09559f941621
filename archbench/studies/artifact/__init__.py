"""The artifact study (an appendix, in the form of the ACM artifact-evaluation appendix): hardware, software,
the commands that measure each campaign the report reads with their expected and measured durations, and how to
cite the work (archbench.studies.artifact.facts). Its words are paper/templates/artifact/: its section
renders from the appendix's facts.
"""

from __future__ import annotations

from archbench.render.latex import MacroSet
from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.artifact.facts import APPENDIX_STUDIES, appendix_outputs, collect_appendix


def write(context: StudyContext) -> StudyOutput:
    appendix = collect_appendix(
        context.processed.campaign,
        context.raw_root,
        {key: context.campaign(key) for key in APPENDIX_STUDIES},
    )
    macros = MacroSet()
    files = appendix_outputs(appendix, macros, context.prose)
    return StudyOutput(macros, files, appendix, appendix.facts(context.prose))


STUDY = Study(name="artifact", title="artifact appendix", part="appendix", write=write)
