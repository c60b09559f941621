"""The echo section of the report (source 004): raw echo campaign -> CSVs, macros, tables, figures.

Source 004 compared a blocking multithreaded, a poll and an epoll echo server against its own epoll
client at 100, 1000 and 10,000 clients; its graphs of bytes sent and received had broken time axes,
its "delay" came from a timestamp that wrapped every second and its 28,000-connection ceiling was
probably the client's ephemeral port range. The echo campaign (profile `echo`, `make echo-study`)
runs every server under `--proto echo` against `build/bin/echo_client` (docs/contracts.md section 6),
which verifies every echoed byte, measures each round trip from the message's intended send time on
CLOCK_MONOTONIC, binds its connections to 127.0.0.1..127.0.0.K (`--sources K`) so that ports never
bound the connection count, and prints one sample per second of the window.

This module is the section's entry point (`EchoStudy`, a CampaignStudy); its parts are `data` (trials and
summaries, written as `echo-trials.csv`, `echo-summary.csv`, `echo-max-conns.csv`, `echo-series.csv`), `tables`,
`figures` and `facts` (the numbers as macros, the sentences' facts), with their words in paper/templates/echo/ (the
section is section.tex.j2, rendered with those facts).

Everything degrades: no echo campaign, a campaign without trials, without --max-conns trials or with
one client count each gives sentences instead of tables and figures, never a LaTeX error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from archbench.render.common import StudySource
from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.render.study import CampaignStudy, ReportOptions
from archbench.studies.echo.data import (
    EchoResults,
    echo_trials,
    max_conns_summary,
    representative_trials,
    throughput_summary,
)
from archbench.studies.echo.facts import echo_macros, echo_sentences
from archbench.studies.echo.figures import make_echo_figures
from archbench.studies.echo.tables import max_conns_table, throughput_table

TABLE_FILE = "echo-table.tex"
MAX_CONNS_TABLE_FILE = "echo-table-max-conns.tex"
SCALING_FIGURE_FILE = "echo-figure-scaling.tex"
TIME_SERIES_FIGURE_FILE = "echo-figure-time-series.tex"
TRIALS_CSV = "echo-trials.csv"
SUMMARY_CSV = "echo-summary.csv"
MAX_CONNS_CSV = "echo-max-conns.csv"
SERIES_CSV = "echo-series.csv"


class EchoStudy(CampaignStudy[EchoResults]):
    name = "echo"
    title = "echo servers at 100 to 10,000 clients (source 004)"
    part = "appendix"
    csv_frames = {TRIALS_CSV: "trials", SUMMARY_CSV: "summary", MAX_CONNS_CSV: "max_conns", SERIES_CSV: "series"}
    table_files = {TABLE_FILE: throughput_table, MAX_CONNS_TABLE_FILE: max_conns_table}
    figure_files = {
        SCALING_FIGURE_FILE: ("fig:echo-scaling", "scaling"),
        TIME_SERIES_FIGURE_FILE: ("fig:echo-time-series", "time_series"),
    }
    figure_template = "echo/figures"

    def process(self, sources: Sequence[StudySource], options: ReportOptions) -> EchoResults:
        source = sources[0]
        if source.campaign is None:
            empty = pd.DataFrame()
            return EchoResults(source, empty, empty, empty, empty)
        trials, series = echo_trials(source.campaign)
        return EchoResults(source, trials, series, throughput_summary(trials), max_conns_summary(trials))

    def figures(self, result: EchoResults, figures_dir: Path) -> Mapping[str, Any]:
        return make_echo_figures(result, figures_dir)

    def facts(self, result: EchoResults, macros: MacroSet, prose: Prose, figures: Mapping[str, Any]) -> None:
        echo_macros(macros, result)

    def sentences(self, result: EchoResults, figures: Mapping[str, Any]) -> dict[str, Any]:
        present = {key: value is not None for key, value in figures.items()}
        picks = representative_trials(result.trials, result.summary) if result.available else pd.DataFrame()
        return echo_sentences(result, present, picks)


ECHO = EchoStudy()
STUDY = ECHO.study
