"""The workloads study: which architecture for which workload, measured where the server is the bottleneck.

Every architecture (and nginx and the reference floor pong where the workload allows it) under per-request CPU work,
blocking calls, idle keep-alive connections beside the load, one request per connection, and large responses
(profile `workloads`, `make workloads-study`; `make all` measures a short version). For each workload point the
decision map gives every server's throughput relative to the point's best (paired within rounds), its p99
latency, its CPU per request and what bounded its trials; "what to pick" lists the servers not distinguishable
from the best where the server (or its waits) bounded the best; and each expectation of the literature is checked
against the data (archbench.report.studies.workloads.facts). Its words are paper/templates/workloads/.
"""

from __future__ import annotations

import pandas as pd

from archbench.analyze import analysis
from archbench.config.catalogue import CATALOGUE
from archbench.measure.selection import point_selections
from archbench.report.common import load_campaign_or_reason, remove_stale_files, write_study_csvs
from archbench.report.latex import MacroSet, figure_block, format_count
from archbench.report.plotting import include_path
from archbench.report.studies.workloads.data import (
    MAP_CSV,
    SUMMARY_CSV,
    TRIALS_CSV,
    WorkloadsResults,
    decision_map,
    summarise,
    workload_columns,
)
from archbench.report.studies.workloads.facts import workloads_macros
from archbench.report.studies.workloads.figures import make_workloads_figures
from archbench.report.studies.workloads.tables import map_table, picks_table
from archbench.report.study import Study, StudyContext, StudyOutput

STUDY_NAME = "workloads"
MAP_TABLE_FILE = "workloads-table-map.tex"
PICKS_TABLE_FILE = "workloads-table-picks.tex"
MAP_FIGURE_FILE = "workloads-figure-map.tex"
FIGURES_TEMPLATE = "workloads/figures"


def in_family_order(summary: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """The summary with its families in the order the campaign lists them (its profile's order: baseline, cpu,
    block, ...), not the shuffled order the trials ran in, so the map and the tables read as the profile does."""
    listed = [family.get("name") for family in (meta.get("parameters") or {}).get("workloads") or ()]
    if summary.empty or "workload" not in summary or not listed:
        return summary
    rank = {name: index for index, name in enumerate(listed)}
    order = summary["workload"].map(lambda name: rank.get(name, len(rank)))
    return summary.iloc[order.argsort(kind="stable")].reset_index(drop=True)


def process_workloads_campaign(requested: str | None, raw_root, processed_dir) -> WorkloadsResults:
    """Read the workloads campaign (if any) and write its CSVs; without one, an earlier run's CSVs are removed."""
    source = load_campaign_or_reason(requested, raw_root, STUDY_NAME)
    if source.campaign is None:
        if processed_dir is not None:
            remove_stale_files(processed_dir, (TRIALS_CSV, SUMMARY_CSV, MAP_CSV))
        return WorkloadsResults(None)
    campaign = source.campaign
    trials = workload_columns(analysis.trials_frame(campaign))
    summary = in_family_order(summarise(trials, campaign.meta.get("plan") or ()), campaign.meta)
    settings, selections = point_selections(campaign.path)
    frame = decision_map(trials, summary, selections)
    if processed_dir is not None:
        write_study_csvs(processed_dir, [campaign], {TRIALS_CSV: trials, SUMMARY_CSV: summary, MAP_CSV: frame})
    return WorkloadsResults(campaign, trials, summary, frame, settings, tuple(selections))


def write(context: StudyContext) -> StudyOutput:
    study = process_workloads_campaign(context.campaign(STUDY_NAME), context.raw_root, context.processed_dir)
    prose = context.prose
    made = make_workloads_figures(study, context.figures_dir)
    macros = MacroSet()
    workloads_macros(macros, study, prose, made["map"] is not None)
    if not study.available:
        comment = prose.sentence("common/studies", "absent_file", what=STUDY_NAME) + "\n"
        return StudyOutput(macros, dict.fromkeys((MAP_TABLE_FILE, PICKS_TABLE_FILE, MAP_FIGURE_FILE), comment), study)
    figure = figure_block(
        include_path(made["map"], context.paper_dir),
        "fig:workloads-map",
        prose.sentence(FIGURES_TEMPLATE, "map_caption", {"delta": format_count(100 * study.settings.delta)}),
        prose.sentence(FIGURES_TEMPLATE, "no_map"),
    )
    files = {
        MAP_TABLE_FILE: map_table(study, prose),
        PICKS_TABLE_FILE: picks_table(study, prose),
        MAP_FIGURE_FILE: figure,
    }
    return StudyOutput(macros, files, study)


STUDY = Study(
    name=STUDY_NAME,
    title="which architecture for which workload",
    part="body",
    write=write,
    campaign=CATALOGUE[STUDY_NAME],
)
