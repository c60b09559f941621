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

This module is the section's entry point (`LatencyStudy`, a CampaignStudy, and `Criteria`); it reads the
trials through archbench.analyze.open_loop_trials, and its parts are `knee` (the floor and the knee: the rule and
its test), `data` (summary, knees), `tables`, `figures` and `facts` (the numbers as macros, the sentences' facts),
with their words in paper/templates/latency/ (the section is section.tex.j2, rendered with those facts).

CSV outputs in processed/: `latency-trials.csv` (one row per trial record of the campaigns),
`latency-summary.csv` (one row per configuration: server x offered rate, with a sweep rate's verdict against
its design's floor) and `latency-knees.csv` (one row per server of the fraction sweep: floor and knee).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from archbench.analyze.open_loop_trials import latency_trials
from archbench.data import storage
from archbench.render.common import StudySource, load_campaign_or_reason
from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.render.study import CampaignStudy, ReportOptions
from archbench.studies.latency.data import (
    LatencyResults,
    knee_decisions,
    knees,
    ms_text,
    number_text,
    rate_summary,
)
from archbench.studies.latency.facts import latency_macros, latency_sentences
from archbench.studies.latency.figures import make_latency_figures
from archbench.studies.latency.knee import KNEE_P99_S, Criteria
from archbench.studies.latency.tables import knees_table, rates_table, source_001_table

__all__ = ["KNEE_P99_S", "LATENCY", "Criteria", "LatencyStudy"]

RATES_TABLE_FILE = "latency-table-rates.tex"
KNEES_TABLE_FILE = "latency-table-knees.tex"
SOURCE_001_TABLE_FILE = "latency-table-001.tex"
ACHIEVED_FIGURE_FILE = "latency-figure-achieved.tex"
PERCENTILES_FIGURE_FILE = "latency-figure-percentiles.tex"
TRIALS_CSV = "latency-trials.csv"
SUMMARY_CSV = "latency-summary.csv"
KNEES_CSV = "latency-knees.csv"
SOURCE_001_SUFFIX = "-001"


class LatencyStudy(CampaignStudy[LatencyResults]):
    """The open-loop campaigns' CSVs (the chosen one and its source-001 sibling), macros, tables and figures, with
    the latency threshold the floors must be well under from the report options."""

    name = "latency"
    title = "latency under a fixed offered load (source 001)"
    part = "body"
    csv_frames = {TRIALS_CSV: "trials", SUMMARY_CSV: "summary", KNEES_CSV: "knees"}
    table_files = {
        RATES_TABLE_FILE: rates_table,
        KNEES_TABLE_FILE: knees_table,
        SOURCE_001_TABLE_FILE: source_001_table,
    }
    figure_files = {
        ACHIEVED_FIGURE_FILE: ("fig:latency-achieved", "achieved"),
        PERCENTILES_FIGURE_FILE: ("fig:latency-percentiles", "percentiles"),
    }
    figure_template = "latency/figures"

    def load(self, names: Sequence[str | None], raw_root: Path) -> list[StudySource]:
        """The chosen campaign, then source 001's: the second name if given, else `<chosen>-001` when it exists."""
        requested = names[0]
        sources = [load_campaign_or_reason(requested, Path(raw_root), "latency")]
        given = names[1] if len(names) > 1 else None
        sibling = given or (f"{requested}{SOURCE_001_SUFFIX}" if requested else None)
        if sibling and sibling != requested and (given or (Path(raw_root) / sibling / storage.CAMPAIGN_FILE).is_file()):
            sources.append(load_campaign_or_reason(sibling, Path(raw_root), "source-001"))
        return sources

    def process(self, sources: Sequence[StudySource], options: ReportOptions) -> LatencyResults:
        criteria = Criteria(p99_s=options.latency_knee_p99_ms / 1000)
        campaigns = [s.campaign for s in sources if s.campaign is not None]
        trials = latency_trials(campaigns, criteria)
        decisions = knee_decisions(trials, criteria)
        summary = rate_summary(trials, decisions)
        return LatencyResults(tuple(sources), criteria, trials, summary, knees(summary, trials, decisions))

    def figures(self, result: LatencyResults, figures_dir: Path) -> Mapping[str, Any]:
        return make_latency_figures(result, figures_dir)

    def facts(self, result: LatencyResults, macros: MacroSet, prose: Prose, figures: Mapping[str, Any]) -> None:
        latency_macros(macros, result, prose)

    def sentences(self, result: LatencyResults, figures: Mapping[str, Any]) -> dict[str, Any]:
        return latency_sentences(result, {key: value is not None for key, value in figures.items()})

    def figure_facts(self, result: LatencyResults) -> Mapping[str, Mapping[str, Any]]:
        criteria = result.criteria
        return {"percentiles": {"rise": number_text(criteria.rise_multiple), "threshold": ms_text(criteria.p99_s)}}


LATENCY = LatencyStudy()
STUDY = LATENCY.study
