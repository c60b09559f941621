"""The echo section of the report (source 004): raw echo campaign -> CSVs, macros, tables, figures.

Source 004 compared a blocking multithreaded, a poll and an epoll echo server against its own epoll
client at 100, 1000 and 10,000 clients; its graphs of bytes sent and received had broken time axes,
its "delay" came from a timestamp that wrapped every second and its 28,000-connection ceiling was
probably the client's ephemeral port range. The echo campaign (profile `echo`, `make echo-study`)
runs every server under `--proto echo` against `build/bin/echo_client` (docs/contracts.md section 6),
which verifies every echoed byte, measures each round trip from the message's intended send time on
CLOCK_MONOTONIC, binds its connections to 127.0.0.1..127.0.0.K (`--sources K`) so that ports never
bound the connection count, and prints one sample per second of the window.

This module is the section's entry point (build.py: `process_echo_campaign`, `EchoStudy.outputs`); the
parts are in archbench.report.studies: `echo_data` (trials and summaries, written as `echo-trials.csv`,
`echo-summary.csv`, `echo-max-conns.csv`, `echo-series.csv`), `echo_tables`, `echo_figures` and
`echo_text` (the macros), with their words in paper/templates/echo/.

Everything degrades: no echo campaign, a campaign without trials, without --max-conns trials or with
one client count each gives sentences instead of tables and figures, never a LaTeX error.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from archbench.config.catalogue import CATALOGUE
from archbench.report.common import absent_files, load_campaign_or_reason, remove_stale_files, write_study_csvs
from archbench.report.latex import MacroSet, figure_block
from archbench.report.plotting import include_path
from archbench.report.prose import Prose
from archbench.report.studies.echo.data import (
    EchoResults,
    echo_trials,
    max_conns_summary,
    representative_trials,
    throughput_summary,
)
from archbench.report.studies.echo.facts import echo_macros
from archbench.report.studies.echo.figures import make_echo_figures
from archbench.report.studies.echo.tables import max_conns_table, throughput_table
from archbench.report.study import Study, StudyContext, StudyOutput

# Files written by `echo_outputs` (generated/) and `process_echo_campaign` (processed/).
TABLE_FILE = "echo-table.tex"
MAX_CONNS_TABLE_FILE = "echo-table-max-conns.tex"
SCALING_FIGURE_FILE = "echo-figure-scaling.tex"
TIME_SERIES_FIGURE_FILE = "echo-figure-time-series.tex"
GENERATED_FILES = (TABLE_FILE, MAX_CONNS_TABLE_FILE, SCALING_FIGURE_FILE, TIME_SERIES_FIGURE_FILE)
TRIALS_CSV = "echo-trials.csv"
SUMMARY_CSV = "echo-summary.csv"
MAX_CONNS_CSV = "echo-max-conns.csv"
SERIES_CSV = "echo-series.csv"
FIGURES_TEMPLATE = "echo/figures"
STUDY_NAME = "echo"


class EchoStudy(EchoResults):
    """An echo campaign's frames and what the report makes of them."""

    def outputs(
        self, macros: MacroSet, paper_dir: Path, figures_dir: Path, prose: Prose | None = None
    ) -> dict[str, str]:
        """What archbench.report.build writes for this section: macros into `macros`, {generated file: LaTeX}."""
        return echo_outputs(macros, self, paper_dir, figures_dir, prose or Prose())


def process_echo_campaign(requested: str | None, raw_root: Path, processed_dir: Path | None) -> EchoStudy:
    """Read the echo campaign (if any) and write its CSVs into processed_dir (when given)."""
    source = load_campaign_or_reason(requested, Path(raw_root), "echo")
    if source.campaign is None:
        if processed_dir is not None:
            remove_stale_files(processed_dir, (TRIALS_CSV, SUMMARY_CSV, MAX_CONNS_CSV, SERIES_CSV))
        empty = pd.DataFrame()
        return EchoStudy(source, empty, empty, empty, empty)
    trials, series = echo_trials(source.campaign)
    summary = throughput_summary(trials)
    max_conns = max_conns_summary(trials)
    csv_files: dict[str, Path] = {}
    if processed_dir is not None:
        csv_files = write_study_csvs(
            processed_dir,
            [source.campaign],
            {TRIALS_CSV: trials, SUMMARY_CSV: summary, MAX_CONNS_CSV: max_conns, SERIES_CSV: series},
        )
    return EchoStudy(source, trials, series, summary, max_conns, csv_files)


def echo_outputs(
    macros: MacroSet, study: EchoResults, paper_dir: Path, figures_dir: Path, prose: Prose
) -> dict[str, str]:
    """Add the echo macros to `macros` and return {generated file name: LaTeX} (every file, always)."""
    made = make_echo_figures(study, figures_dir)
    present = {key: value is not None for key, value in made.items()}
    picks = representative_trials(study.trials, study.summary) if study.available else pd.DataFrame()
    echo_macros(macros, study, prose, present, picks)
    if not study.available:
        return absent_files(prose, "echo", GENERATED_FILES)
    scaling = figure_block(
        include_path(made["scaling"], paper_dir),
        "fig:echo-scaling",
        prose.sentence(FIGURES_TEMPLATE, "scaling_caption"),
        prose.sentence(FIGURES_TEMPLATE, "no_scaling_figure"),
    )
    series = figure_block(
        include_path(made["time_series"], paper_dir),
        "fig:echo-time-series",
        prose.sentence(FIGURES_TEMPLATE, "time_series_caption"),
        prose.sentence(FIGURES_TEMPLATE, "no_time_series_figure"),
    )
    return {
        TABLE_FILE: throughput_table(study, prose),
        MAX_CONNS_TABLE_FILE: max_conns_table(study, prose),
        SCALING_FIGURE_FILE: scaling,
        TIME_SERIES_FIGURE_FILE: series,
    }


def write(context: StudyContext) -> StudyOutput:
    """The echo section: the echo campaign's CSVs, macros, tables and figures."""
    study = process_echo_campaign(context.campaign(STUDY_NAME), context.raw_root, context.processed_dir)
    macros = MacroSet()
    files = study.outputs(macros, context.paper_dir, context.figures_dir, context.prose)
    return StudyOutput(macros, files, study)


STUDY = Study(
    name=STUDY_NAME,
    title="echo servers at 100 to 10,000 clients (source 004)",
    part="appendix",
    write=write,
    campaign=CATALOGUE[STUDY_NAME],
)
