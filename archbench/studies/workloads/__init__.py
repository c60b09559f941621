"""The workloads study: which architecture for which workload, measured where the server is the bottleneck.

Every architecture (and nginx and the reference floor pong where the workload allows it) under per-request CPU work,
blocking calls, idle keep-alive connections beside the load, one request per connection, and large responses
(profile `workloads`, `make workloads-study`; `make all` measures a short version). For each workload point the
decision map gives every server's throughput relative to the point's best (paired within rounds), its p99
latency, its CPU per request and what bounded its trials; "what to pick" lists the servers not distinguishable
from the best where the server (or its waits) bounded the best; and each expectation of the literature is checked
against the data (archbench.studies.workloads.facts). Its words are paper/templates/workloads/; its
section, section.tex.j2, renders from the facts of `workloads_sentences`, and so does the abstract's sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.measure.selection import point_selections
from archbench.render.common import StudySource
from archbench.render.latex import MacroSet, format_count
from archbench.render.plots import save_or_none
from archbench.render.prose import Prose
from archbench.render.study import CampaignStudy, ReportOptions
from archbench.studies.workloads.data import (
    MAP_CSV,
    SUMMARY_CSV,
    TRIALS_CSV,
    WorkloadsResults,
    decision_map,
    points,
    summarise,
    workload_columns,
)
from archbench.studies.workloads.facts import workloads_macros, workloads_sentences
from archbench.studies.workloads.figures import MAP_FIGURE, map_figure
from archbench.studies.workloads.tables import map_table, picks_table

MAP_TABLE_FILE = "workloads-table-map.tex"
PICKS_TABLE_FILE = "workloads-table-picks.tex"
MAP_FIGURE_FILE = "workloads-figure-map.tex"


def in_family_order(summary: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """The summary with its families in the order the campaign lists them (its profile's order: baseline, cpu,
    block, ...), not the shuffled order the trials ran in, so the map and the tables read as the profile does."""
    listed = [family.get("name") for family in (meta.get("parameters") or {}).get("workloads") or ()]
    if summary.empty or "workload" not in summary or not listed:
        return summary
    rank = {name: index for index, name in enumerate(listed)}
    order = summary["workload"].map(lambda name: rank.get(name, len(rank)))
    return summary.iloc[order.argsort(kind="stable")].reset_index(drop=True)


class WorkloadsStudy(CampaignStudy[WorkloadsResults]):
    name = "workloads"
    title = "which architecture for which workload"
    part = "body"
    csv_frames = {TRIALS_CSV: "trials", SUMMARY_CSV: "summary", MAP_CSV: "map"}
    table_files = {MAP_TABLE_FILE: map_table, PICKS_TABLE_FILE: picks_table}
    figure_files = {MAP_FIGURE_FILE: ("fig:workloads-map", "map")}
    figure_template = "workloads/figures"
    figure_keys = ("{}_caption", "no_{}")

    def process(self, sources: Sequence[StudySource], options: ReportOptions) -> WorkloadsResults:
        campaign = sources[0].campaign
        if campaign is None:
            return WorkloadsResults(None)
        trials = workload_columns(analysis.trials_frame(campaign))
        summary = in_family_order(summarise(trials, campaign.meta.get("plan") or ()), campaign.meta)
        settings, selections = point_selections(campaign.path)
        frame = decision_map(trials, summary, selections)
        return WorkloadsResults(campaign, trials, summary, frame, settings, tuple(selections))

    def figures(self, result: WorkloadsResults, figures_dir: Path) -> Mapping[str, Any]:
        return {"map": save_or_none(map_figure(result), Path(figures_dir) / MAP_FIGURE, tuple(points(result.map)))}

    def facts(self, result: WorkloadsResults, macros: MacroSet, prose: Prose, figures: Mapping[str, Any]) -> None:
        workloads_macros(macros, result)

    def sentences(self, result: WorkloadsResults, figures: Mapping[str, Any]) -> dict[str, Any]:
        return workloads_sentences(result, figures["map"] is not None)

    def figure_facts(self, result: WorkloadsResults) -> Mapping[str, Mapping[str, Any]]:
        return {"map": {"delta": format_count(100 * result.settings.delta)}}


WORKLOADS = WorkloadsStudy()
STUDY = WORKLOADS.study
