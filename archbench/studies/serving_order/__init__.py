"""The serving-order study: does the order in which a thread pool serves its queued work move the tail?

The thread pool (request dispatch) with its FIFO queue and with source 003's LIFO stack, offered the same open-loop
load by the project's open_loop client at fractions of the FIFO queue's saturation (profile serving_order, `make
serving-order-study`), compared at p50, p99 and p99.9 within rounds, with one pre-declared test
(archbench.studies.serving_order.data). Every campaign it reads is one look of that test: the shipped
reference is the five-round pilot and, beside it, the twelve-round run made after the pilot was inconclusive, so the
test's error is split over both. Its words are paper/templates/serving_order/.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from archbench.render.common import StudySource
from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.render.study import CampaignStudy, ReportOptions, StudyContext
from archbench.studies.serving_order.data import COMPARISON_CSV, TRIALS_CSV, ServingOrderResults, read_looks
from archbench.studies.serving_order.facts import serving_order_macros, serving_order_sentences
from archbench.studies.serving_order.tables import comparison_table

TABLE_FILE = "serving-order-table.tex"


class ServingOrderStudy(CampaignStudy[ServingOrderResults]):
    """The open-loop serving-order campaigns, each one look of the test."""

    name = "serving_order"
    title = "serving order and the tail"
    part = "body"
    csv_frames = {TRIALS_CSV: "trials", COMPARISON_CSV: "comparison"}
    table_files = {TABLE_FILE: comparison_table}

    def chosen(self, context: StudyContext) -> Sequence[str | None]:
        """Every look that exists (the chosen campaign and the one after it), in the order they ran."""
        if not context.campaign(self.name):
            return [None]
        return list(context.campaigns.choice(self.name).read)

    def process(self, sources: Sequence[StudySource], options: ReportOptions) -> ServingOrderResults:
        return read_looks([s.campaign for s in sources if s.campaign is not None])

    def facts(self, result: ServingOrderResults, macros: MacroSet, prose: Prose, figures: Mapping[str, Any]) -> None:
        serving_order_macros(macros, result)

    def sentences(self, result: ServingOrderResults, figures: Mapping[str, Any]) -> dict[str, Any]:
        return serving_order_sentences(result)


SERVING_ORDER = ServingOrderStudy()
STUDY = SERVING_ORDER.study
