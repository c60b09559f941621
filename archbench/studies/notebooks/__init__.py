"""The notebooks study (an appendix): the executed notebooks exported as HTML beside the report (paper/notebooks/),
listed with what each ran on (archbench.studies.notebooks.index). Its words are paper/templates/notebooks/.
"""

from __future__ import annotations

from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.notebooks.index import NOTEBOOKS_DIR, NOTEBOOKS_FILE, notebook_index_tex


def write(context: StudyContext) -> StudyOutput:
    text = notebook_index_tex(context.paper_dir / NOTEBOOKS_DIR, context.prose)
    return StudyOutput(files={NOTEBOOKS_FILE: text})


STUDY = Study(name="notebooks", title="the executed notebooks", part="appendix", write=write)
