"""The latency section of the report (source 001): open-loop campaigns -> CSVs, macros, tables, figures.

Source 001 ran wrk2 (`-t16 -c2000 -d30s -R200000`) against a single-threaded server, a thread per
connection capped at 1000 threads, a single-threaded epoll server and a reactor, and found epoll
latencies of seconds. A closed-loop client (wrk) waits for each answer before it sends again, so a
stalled server stalls the client's clock and the stall never shows in its latencies (coordinated
omission); an open-loop client schedules every request at a fixed rate and measures from the
scheduled time: wrk2 with its corrected histogram, or oha with `--latency-correction`.

`make latency-study` (notebooks/latency_study.ipynb, archbench/latency.py) writes three campaigns:
`NAME-closed` (wrk, each server's saturation throughput), `NAME` (each server offered fractions of
its own saturation) and `NAME-001` (source 001's set-up: its four architectures at 2000 connections
and one fixed rate for all, a fraction of the highest of their saturations). The report takes `NAME`
(`latency_campaign`) and, when it exists, `NAME-001` (or `latency_001_campaign`). Which set-up a trial
belongs to is read from the data: a campaign with a `rate_reference` parameter, or a trial whose
`saturation_of` is not its own saturation key, offered one rate to every server (source 001's
set-up); the other open-loop trials are the fraction sweep.

This module is the section's entry point (`process_latency_campaigns`, `Criteria`, `LatencyStudy.outputs`);
its parts are `knee` (the floor and the knee: the rule and its test), `data` (trials, summary, knees),
`tables`, `figures` and `facts` (the macros), with their words in paper/templates/latency/.

CSV outputs in processed/: `latency-trials.csv` (one row per trial record of the campaigns),
`latency-summary.csv` (one row per configuration: server x offered rate, with a sweep rate's verdict against
its design's floor) and `latency-knees.csv` (one row per server of the fraction sweep: floor and knee).
"""

from __future__ import annotations

from pathlib import Path

from archbench.config.catalogue import CATALOGUE
from archbench.data import storage
from archbench.report.common import absent_files, load_campaign_or_reason, remove_stale_files, write_study_csvs
from archbench.report.latex import MacroSet, figure_block
from archbench.report.plotting import include_path
from archbench.report.prose import Prose
from archbench.report.studies.latency.data import (
    LatencyResults,
    knee_decisions,
    knees,
    latency_trials,
    ms_text,
    number_text,
    rate_summary,
)
from archbench.report.studies.latency.facts import latency_macros
from archbench.report.studies.latency.figures import make_latency_figures
from archbench.report.studies.latency.knee import KNEE_P99_S, Criteria
from archbench.report.studies.latency.tables import knees_table, rates_table, source_001_table
from archbench.report.study import ReportOptions, Study, StudyContext, StudyOutput

__all__ = ["KNEE_P99_S", "Criteria", "LatencyStudy", "latency_outputs", "process_latency_campaigns"]

RATES_TABLE_FILE = "latency-table-rates.tex"
KNEES_TABLE_FILE = "latency-table-knees.tex"
SOURCE_001_TABLE_FILE = "latency-table-001.tex"
ACHIEVED_FIGURE_FILE = "latency-figure-achieved.tex"
PERCENTILES_FIGURE_FILE = "latency-figure-percentiles.tex"
GENERATED_FILES = (
    RATES_TABLE_FILE,
    KNEES_TABLE_FILE,
    SOURCE_001_TABLE_FILE,
    ACHIEVED_FIGURE_FILE,
    PERCENTILES_FIGURE_FILE,
)
TRIALS_CSV = "latency-trials.csv"
SUMMARY_CSV = "latency-summary.csv"
KNEES_CSV = "latency-knees.csv"
FIGURES_TEMPLATE = "latency/figures"
STUDY_NAME = "latency"


class LatencyStudy(LatencyResults):
    """The latency campaigns' frames and what the report makes of them."""

    def outputs(
        self, macros: MacroSet, paper_dir: Path, figures_dir: Path, prose: Prose | None = None
    ) -> dict[str, str]:
        """What archbench.report.build writes for this section: macros into `macros`, {generated file: LaTeX}."""
        return latency_outputs(macros, self, paper_dir, figures_dir, prose or Prose())


def process_latency_campaigns(
    requested: str | None,
    raw_root: Path,
    processed_dir: Path | None,
    source_001: str | None = None,
    criteria: Criteria | None = None,
) -> LatencyStudy:
    """Read the latency campaign and its source-001 sibling (`<requested>-001` unless named) and write the CSVs."""
    criteria = criteria or Criteria()
    raw_root = Path(raw_root)
    main = load_campaign_or_reason(requested, raw_root, "latency")
    sources = [main]
    sibling = source_001 or (f"{requested}-001" if requested else None)
    if sibling and sibling != requested:
        if (raw_root / sibling / storage.CAMPAIGN_FILE).is_file():
            sources.append(load_campaign_or_reason(sibling, raw_root, "source-001"))
        elif source_001:
            sources.append(load_campaign_or_reason(source_001, raw_root, "source-001"))
    campaigns = [s.campaign for s in sources if s.campaign is not None]
    trials = latency_trials(campaigns, criteria)
    decisions = knee_decisions(trials, criteria)
    summary = rate_summary(trials, decisions)
    knee_table = knees(summary, trials, decisions)
    csv_files: dict[str, Path] = {}
    if processed_dir is not None and not campaigns:
        remove_stale_files(processed_dir, (TRIALS_CSV, SUMMARY_CSV, KNEES_CSV))
    if processed_dir is not None and campaigns:
        csv_files = write_study_csvs(
            processed_dir, campaigns, {TRIALS_CSV: trials, SUMMARY_CSV: summary, KNEES_CSV: knee_table}
        )
    return LatencyStudy(tuple(sources), criteria, trials, summary, knee_table, csv_files)


def latency_outputs(
    macros: MacroSet, study: LatencyResults, paper_dir: Path, figures_dir: Path, prose: Prose
) -> dict[str, str]:
    """Add the latency macros to `macros` and return {generated file name: LaTeX} (every file, always)."""
    made = make_latency_figures(study, figures_dir)
    present = {key: value is not None for key, value in made.items()}
    latency_macros(macros, study, prose, present)
    if not study.available:
        return absent_files(prose, "latency", GENERATED_FILES)
    achieved = figure_block(
        include_path(made["achieved"], paper_dir),
        "fig:latency-achieved",
        prose.sentence(FIGURES_TEMPLATE, "achieved_caption"),
        prose.sentence(FIGURES_TEMPLATE, "no_achieved_figure"),
    )
    percentiles = figure_block(
        include_path(made["percentiles"], paper_dir),
        "fig:latency-percentiles",
        prose.sentence(
            FIGURES_TEMPLATE,
            "percentiles_caption",
            rise=number_text(study.criteria.rise_multiple),
            threshold=ms_text(study.criteria.p99_s),
        ),
        prose.sentence(FIGURES_TEMPLATE, "no_percentiles_figure"),
    )
    return {
        RATES_TABLE_FILE: rates_table(study, prose),
        KNEES_TABLE_FILE: knees_table(study, prose),
        SOURCE_001_TABLE_FILE: source_001_table(study, prose),
        ACHIEVED_FIGURE_FILE: achieved,
        PERCENTILES_FIGURE_FILE: percentiles,
    }


def write(context: StudyContext) -> StudyOutput:
    """The latency section: the open-loop campaigns' CSVs (the chosen one and its source-001 sibling), macros,
    tables and figures, with the latency threshold the floors must be well under from the report options."""
    options: ReportOptions = context.options
    criteria = Criteria(p99_s=options.latency_knee_p99_ms / 1000)
    study = process_latency_campaigns(
        context.campaign(STUDY_NAME), context.raw_root, context.processed_dir, criteria=criteria
    )
    macros = MacroSet()
    files = study.outputs(macros, context.paper_dir, context.figures_dir, context.prose)
    return StudyOutput(macros, files, study)


STUDY = Study(
    name=STUDY_NAME,
    title="latency under a fixed offered load (source 001)",
    part="body",
    write=write,
    campaign=CATALOGUE[STUDY_NAME],
)
