"""The robustness appendix: the abuse suite's result as a matrix of server variants x abuse cases.

Which result is shown, and how it is read, is archbench.studies.robustness.data (a missing or unreadable file
makes every part of the appendix a sentence saying so; the report still builds). What is written
(archbench.studies.robustness.facts): macros (`\\abRobustness...`, every number the
appendix quotes), the facts its section template (section.tex.j2) renders its sentences from,
`generated/table-robustness.tex` (the matrix: a mark per variant and case, passed/total per
variant and per architecture) and `generated/robustness-notes.tex` (every failed cell with what was expected and
observed, the skipped and not-run cells, and the cases with what is expected of each architecture, grouped where
the expectation differs between architectures, as for slowloris: event loops against one connection per slot).
The words are in paper/templates/robustness/.
"""

from __future__ import annotations

from archbench.config.catalogue import CATALOGUE
from archbench.render.campaigns import file_path
from archbench.render.latex import MacroSet
from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.robustness.data import read_robustness
from archbench.studies.robustness.facts import appendix_files, robustness_facts

STUDY_NAME = "robustness"


def write(context: StudyContext) -> StudyOutput:
    """The robustness appendix: the chosen abuse-suite result as a matrix of server variants x abuse cases."""
    name = context.campaign(STUDY_NAME)
    path = file_path(RULE, name, context.raw_root) if name else None
    result = read_robustness(path, context.processed_dir, context.raw_root)
    macros = MacroSet()
    facts = robustness_facts(macros, result, context.prose)
    return StudyOutput(macros, appendix_files(result, context.prose), result, facts)


RULE = CATALOGUE[STUDY_NAME]
STUDY = Study(
    name=STUDY_NAME,
    title="every architecture under abusive clients (the abuse suite)",
    part="appendix",
    write=write,
    campaign=RULE,
)
