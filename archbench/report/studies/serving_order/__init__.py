"""The serving-order study: does the order in which a thread pool serves its queued work move the tail?

The thread pool (request dispatch) with its FIFO queue and with source 003's LIFO stack, offered the same open-loop
load by the project's open_loop client at fractions of the FIFO queue's saturation (profile serving_order, `make
serving-order-study`), compared at p50, p99 and p99.9 within rounds, with one pre-declared test
(archbench.report.studies.serving_order.data). Every campaign it reads is one look of that test: the shipped
reference is the five-round pilot and, beside it, the twelve-round run made after the pilot was inconclusive, so the
test's error is split over both. Its words are paper/templates/serving_order/.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from archbench.config.catalogue import CATALOGUE
from archbench.report.common import load_campaign_or_reason, remove_stale_files, write_study_csvs
from archbench.report.latex import MacroSet
from archbench.report.studies.serving_order.data import (
    COMPARISON_CSV,
    TRIALS_CSV,
    ServingOrderResults,
    read_looks,
)
from archbench.report.studies.serving_order.facts import serving_order_macros
from archbench.report.studies.serving_order.tables import comparison_table
from archbench.report.study import Study, StudyContext, StudyOutput

STUDY_NAME = "serving_order"
TABLE_FILE = "serving-order-table.tex"


def process_serving_order_campaigns(
    requested: Sequence[str], raw_root: Path, processed_dir: Path | None
) -> ServingOrderResults:
    """Read the open-loop serving-order campaigns (each one look of the test) and write their CSVs; without one,
    stale CSVs go."""
    sources = [load_campaign_or_reason(name, raw_root, STUDY_NAME) for name in requested]
    campaigns = [s.campaign for s in sources if s.campaign is not None]
    study = read_looks(campaigns)
    if processed_dir is not None:
        if study.available:
            write_study_csvs(processed_dir, campaigns, {TRIALS_CSV: study.trials, COMPARISON_CSV: study.comparison})
        else:
            remove_stale_files(processed_dir, (TRIALS_CSV, COMPARISON_CSV))
    return study


def write(context: StudyContext) -> StudyOutput:
    chosen = context.campaign(STUDY_NAME)
    looks = context.campaigns.choice(STUDY_NAME).read if chosen else ()
    study = process_serving_order_campaigns(list(looks), context.raw_root, context.processed_dir)
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
    campaign=CATALOGUE[STUDY_NAME],
)
