"""The rules study: Hoefler and Belli's twelve rules, and where this report meets each.

It cites only what this build has: the tables and figures of the pool and architecture studies, the statistics
study's comparisons and Q-Q figure and the cross-OS study's comparisons, so it runs after all of them. Its words are
paper/templates/rules/ (its section, section.tex.j2, is rendered with the summary's facts).
"""

from __future__ import annotations

from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.rules.facts import rule_rows, rules_summary, rules_table

RULES_TABLE_FILE = "table-rules.tex"


def write(context: StudyContext) -> StudyOutput:
    rows = rule_rows(context)
    return StudyOutput(
        files={RULES_TABLE_FILE: rules_table(rows, context.prose)}, section={"summary": rules_summary(rows)}
    )


# In the appendices: the body is what a reader needs to pick a design; the checklist supports it from the back.
STUDY = Study(name="rules", title="the twelve rules of Hoefler and Belli", part="appendix", write=write)
