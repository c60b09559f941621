"""The serving-order study: does the order in which a thread pool serves its queued work move the tail?

The thread pool (request dispatch) with its FIFO queue and with source 003's LIFO stack, offered the same open-loop
load by the project's open_loop client at fractions of the FIFO queue's saturation (profile serving_order, `make
serving-order-study`), compared at p50, p99 and p99.9 within rounds, with one pre-declared test
(archbench.report.studies.serving_order.data). Its words are paper/templates/serving_order/.
"""

from __future__ import annotations

from archbench.report.common import load_campaign_or_reason, remove_stale_files, write_study_csvs
from archbench.report.latex import MacroSet
from archbench.report.studies.serving_order.data import (
    COMPARISON_CSV,
    TRIALS_CSV,
    ServingOrderResults,
    compare,
    serving_order_trials,
)
from archbench.report.studies.serving_order.facts import serving_order_macros
from archbench.report.studies.serving_order.tables import comparison_table
from archbench.report.study import CampaignRule, Study, StudyContext, StudyOutput

STUDY_NAME = "serving_order"
TABLE_FILE = "serving-order-table.tex"


def process_serving_order_campaign(requested: str | None, raw_root, processed_dir) -> ServingOrderResults:
    """Read the open-loop serving-order campaign (if any) and write its CSVs; without one, stale CSVs go."""
    source = load_campaign_or_reason(requested, raw_root, STUDY_NAME)
    if source.campaign is None:
        if processed_dir is not None:
            remove_stale_files(processed_dir, (TRIALS_CSV, COMPARISON_CSV))
        return ServingOrderResults(None)
    trials = serving_order_trials(source.campaign)
    comparison = compare(trials) if not trials.empty else trials
    if processed_dir is not None:
        write_study_csvs(processed_dir, [source.campaign], {TRIALS_CSV: trials, COMPARISON_CSV: comparison})
    return ServingOrderResults(source.campaign, trials, comparison)


def write(context: StudyContext) -> StudyOutput:
    study = process_serving_order_campaign(context.campaign(STUDY_NAME), context.raw_root, context.processed_dir)
    macros = MacroSet()
    serving_order_macros(macros, study, context.prose)
    if not study.available:
        comment = context.prose.sentence("common/studies", "absent_file", what=STUDY_NAME) + "\n"
        return StudyOutput(macros, {TABLE_FILE: comment}, study)
    return StudyOutput(macros, {TABLE_FILE: comparison_table(study, context.prose)}, study)


STUDY = Study(
    name=STUDY_NAME,
    title="serving order and the tail",
    part="body",
    write=write,
    campaign=CampaignRule(
        measured=(("serving-order-{host}", "make serving-order-study"),),
        reference="reference-serving-order-12-rounds",
        measure_with="make serving-order-study",
        profile="serving_order",
        expected_runs=2,
    ),
)
