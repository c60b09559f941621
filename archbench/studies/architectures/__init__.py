"""The architectures study: every architecture of the main campaign against nginx and pong, the reference floor, per
pipeline depth, with the sources' design comparisons (poll against epoll, source 001's four designs), the
bandwidth baseline, CPU per request and the comparison figures. Its words are paper/templates/architectures/: the
section template renders the facts `write` returns.
"""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.figure import Figure

from archbench.analyze import analysis
from archbench.analyze.planned_comparisons import comparison_pairs, run_comparisons
from archbench.render.latex import MacroSet
from archbench.render.plots import TablesAndFigures, figure_blocks
from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.architectures import figures
from archbench.studies.architectures.baseline import baseline_findings
from archbench.studies.architectures.facts import architecture_findings
from archbench.studies.architectures.figures import make_architecture_figures
from archbench.studies.architectures.tables import comparison_tables

TABLES_FILE = "tables-architectures.tex"
# generated file -> (label, figure key); the template holds <key>_caption and <key>_missing.
FIGURES = {
    "figure-architectures-throughput.tex": ("fig:architectures-throughput", "architectures_throughput"),
    "figure-architectures-connections.tex": ("fig:architectures-connections", "architectures_connections"),
    "figure-architectures-threads.tex": ("fig:architectures-threads", "architectures_threads"),
    "figure-architectures-cpu.tex": ("fig:architectures-cpu", "architectures_cpu"),
}
FIGURES_TEMPLATE = "architectures/figures"


def write(context: StudyContext) -> StudyOutput:
    processed, prose = context.processed, context.prose
    summary, trials = processed.summary, processed.trials
    macros = MacroSet()
    # The campaign's iperf3 bandwidth baseline beside the fastest configuration's bytes per second.
    baseline = baseline_findings(macros, processed.campaign.meta, summary)
    # The planned family against nginx: its verdicts (Holm within it, as in the planned comparisons' table) count the
    # servers faster and slower, and its minimum detectable differences go with those it does not separate.
    nginx = run_comparisons([pair for pair in comparison_pairs(summary) if pair.family == "nginx"], trials)
    findings = architecture_findings(macros, summary, prose, nginx)
    table_labels, tables = comparison_tables(summary, prose)
    made = make_architecture_figures(summary, trials, context.figures_dir)
    result = TablesAndFigures(table_labels, made)
    # The sentences citing the tables and figures (architectures/citations.tex.j2) cite only those that exist; without
    # a table, tables-architectures.tex itself says, per depth, why there is none.
    findings.update(baseline=baseline, citations={"labels": list(table_labels), **result.figures_present})
    files = {TABLES_FILE: tables, **figure_blocks(made, FIGURES, FIGURES_TEMPLATE, prose, context.paper_dir)}
    return StudyOutput(macros, files, result, findings)


def inline_figures(processed: analysis.ProcessedCampaign) -> dict[str, Callable[[], Figure | None]]:
    summary = processed.summary
    return {
        "throughput per architecture": lambda: figures.architectures_throughput_figure(summary),
        "architectures against connections": lambda: figures.architectures_connections_figure(summary),
        "architectures against threads/workers": lambda: figures.architectures_threads_figure(summary),
        "server CPU per request": lambda: figures.architectures_cpu_figure(summary),
    }


STUDY = Study(
    name="architectures", title="architecture comparison", part="body", write=write, inline_figures=inline_figures
)
