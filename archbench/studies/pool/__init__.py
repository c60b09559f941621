"""The pool study: source 000's pool-size sweep of the thread pool, request against connection dispatch, and the
connection sweeps of source 000's designs with the connections they starved (main campaign). Its words are
paper/templates/pool/.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from matplotlib.figure import Figure

from archbench.analyze import analysis
from archbench.analyze.planned_comparisons import comparison_pairs, run_comparisons
from archbench.render.latex import MacroSet
from archbench.render.plots import TablesAndFigures, figure_blocks
from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.pool import figures
from archbench.studies.pool.facts import pool_findings
from archbench.studies.pool.figures import make_pool_figures
from archbench.studies.pool.tables import configurations_table, pool_size_table_blocks, pool_size_tables

POOL_TABLES_FILE = "tables-threads.tex"
CONFIGURATIONS_TABLE_FILE = "table-configurations.tex"
# generated file -> (label, figure key); the template holds <key>_caption and <key>_missing.
FIGURES = {
    "figure-pool-size.tex": ("fig:pool-size", "pool_size"),
    "figure-connections.tex": ("fig:connections", "connections"),
}
FIGURES_TEMPLATE = "pool/figures"


def write(context: StudyContext) -> StudyOutput:
    processed, prose = context.processed, context.prose
    summary, trials = processed.summary, processed.trials
    macros = MacroSet()
    # Request against connection dispatch: the planned comparisons' family "dispatch" (Holm within it) decides.
    dispatch = run_comparisons([pair for pair in comparison_pairs(summary) if pair.family == "dispatch"], trials)
    findings = pool_findings(macros, summary, prose, dispatch)
    blocks = pool_size_table_blocks(summary, prose)
    made = make_pool_figures(summary, trials, context.figures_dir)
    result = TablesAndFigures(tuple(label for label, _ in blocks), made)
    # The sentences citing the tables and figures (pool/citations.tex.j2) cite only those that exist.
    findings["citations"] = {
        "labels": list(result.table_labels),
        "split_by_depth": any(re.search(r"-p\d+$", label) for label in result.table_labels),
        "has_configurations": not summary.empty,
        **result.figures_present,
    }
    files = {
        POOL_TABLES_FILE: pool_size_tables(blocks, prose),
        CONFIGURATIONS_TABLE_FILE: configurations_table(summary, prose),
        **figure_blocks(made, FIGURES, FIGURES_TEMPLATE, prose, context.paper_dir),
    }
    return StudyOutput(macros, files, result, findings)


def inline_figures(processed: analysis.ProcessedCampaign) -> dict[str, Callable[[], Figure | None]]:
    summary, trials = processed.summary, processed.trials
    return {
        "pool size": lambda: figures.pool_size_figure(summary, trials),
        "connections and starvation": lambda: figures.connections_figure(summary, trials),
    }


STUDY = Study(name="pool", title="pool size and connections", part="body", write=write, inline_figures=inline_figures)
