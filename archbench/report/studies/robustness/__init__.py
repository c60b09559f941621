"""The robustness appendix: the abuse suite's result as a matrix of server variants x abuse cases.

Which result is shown, and how it is read, is archbench.report.studies.robustness.data (a missing or unreadable file
makes every part of the appendix a sentence saying so; the report still builds). What is written
(`RobustnessResult.outputs`, archbench.report.studies.robustness.facts): macros (`\\abRobustness...`, every number the
appendix quotes), `generated/table-robustness.tex` (the matrix: a mark per variant and case, passed/total per
variant and per architecture) and `generated/robustness-notes.tex` (every failed cell with what was expected and
observed, the skipped and not-run cells, and the cases with what is expected of each architecture, grouped where
the expectation differs between architectures, as for slowloris: event loops against one connection per slot).
The words are in paper/templates/robustness/.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from archbench.config.catalogue import CATALOGUE
from archbench.config.paths import REPO_ROOT
from archbench.report.campaigns import file_path
from archbench.report.latex import MacroSet
from archbench.report.prose import Prose
from archbench.report.studies.robustness import data as robustness_result
from archbench.report.studies.robustness import facts as robustness_text
from archbench.report.study import Study, StudyContext, StudyOutput

STUDY_NAME = "robustness"


@dataclass(frozen=True)
class RobustnessResult(robustness_result.RobustnessResult):
    """The result as the report's studies see it: data that can write its own part of the report."""

    def outputs(
        self, macros: MacroSet, paper_dir: Path, figures_dir: Path | None = None, prose: Prose | None = None
    ) -> dict[str, str]:
        """What archbench.report.build writes for the appendix: macros into `macros`, {generated file: LaTeX}."""
        prose = prose or Prose()
        robustness_text.robustness_macros(macros, self, prose)
        return robustness_text.appendix_files(self, prose)


def load_robustness(
    requested: str | Path | None, processed_dir: Path, raw_root: Path, repo_root: Path = REPO_ROOT
) -> RobustnessResult:
    """The abuse-suite result the appendix shows (see archbench.report.studies.robustness.data), never raising for data."""
    return robustness_result.read_robustness(requested, processed_dir, raw_root, repo_root, RobustnessResult)


def write(context: StudyContext) -> StudyOutput:
    """The robustness appendix: the chosen abuse-suite result as a matrix of server variants x abuse cases."""
    name = context.campaign(STUDY_NAME)
    path = file_path(RULE, name, context.raw_root) if name else None
    result = load_robustness(path, context.processed_dir, context.raw_root)
    macros = MacroSet()
    return StudyOutput(macros, result.outputs(macros, context.paper_dir, context.figures_dir, context.prose), result)


RULE = CATALOGUE[STUDY_NAME]
STUDY = Study(
    name=STUDY_NAME,
    title="every architecture under abusive clients (the abuse suite)",
    part="appendix",
    write=write,
    campaign=RULE,
)
