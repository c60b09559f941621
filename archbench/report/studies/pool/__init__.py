"""The pool study: source 000's pool-size sweep of the thread pool, request against connection dispatch, and the
connection sweeps of source 000's designs with the connections they starved (main campaign). Its words are
paper/templates/pool/.
"""

from __future__ import annotations

from dataclasses import dataclass

from archbench.report.latex import MacroSet, figure_block
from archbench.report.plots import FigureFile
from archbench.report.plotting import include_path
from archbench.report.studies.pool.facts import finding_macros
from archbench.report.studies.pool.figures import make_pool_figures
from archbench.report.studies.pool.tables import (
    configurations_table,
    pool_size_table_blocks,
    pool_size_tables,
    reference_macros,
)
from archbench.report.study import Study, StudyContext, StudyOutput

POOL_TABLES_FILE = "tables-threads.tex"
CONFIGURATIONS_TABLE_FILE = "table-configurations.tex"
# generated file -> (label, figure key); the template holds <key>_caption and <key>_missing.
FIGURES = {
    "figure-pool-size.tex": ("fig:pool-size", "pool_size"),
    "figure-connections.tex": ("fig:connections", "connections"),
}
FIGURES_TEMPLATE = "pool/figures"


@dataclass(frozen=True)
class PoolResult:
    """What later studies cite: the pool-size tables' labels and which figures exist."""

    table_labels: tuple[str, ...]
    figures: dict[str, FigureFile | None]

    @property
    def figures_present(self) -> dict[str, bool]:
        return {key: made is not None for key, made in self.figures.items()}


def write(context: StudyContext) -> StudyOutput:
    processed, prose = context.processed, context.prose
    summary, trials = processed.summary, processed.trials
    macros = MacroSet()
    finding_macros(macros, summary, prose)
    made = make_pool_figures(summary, trials, context.figures_dir)
    result = PoolResult(tuple(label for label, _ in pool_size_table_blocks(summary, prose)), made)
    reference_macros(
        macros, list(result.table_labels), result.figures_present, prose, has_configurations=not summary.empty
    )
    files = {
        POOL_TABLES_FILE: pool_size_tables(summary, prose),
        CONFIGURATIONS_TABLE_FILE: configurations_table(summary, prose),
    }
    for name, (label, key) in FIGURES.items():
        files[name] = figure_block(
            include_path(made[key], context.paper_dir),
            label,
            prose.sentence(FIGURES_TEMPLATE, f"{key}_caption"),
            prose.sentence(FIGURES_TEMPLATE, f"{key}_missing"),
        )
    return StudyOutput(macros, files, result)


STUDY = Study(name="pool", title="pool size and connections", part="body", write=write)
