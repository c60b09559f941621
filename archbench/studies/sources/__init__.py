"""The sources study: each source's published numbers (data/external/) beside this machine's.

Sources 000, 002 and 003 are read from the `sources` campaign (each source's own protocol: profile sources,
`make sources-study`) where it measured them, else from the main campaign; source 001 from the latency study's
processed CSVs and source 004 from the echo study's, so it runs after both. Its words are paper/templates/sources/;
the facts it computes are also the summary study's, and those of the method section's sentence on wrk -t.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from archbench.analyze import analysis
from archbench.render.common import StudySource
from archbench.render.study import CampaignStudy, ReportOptions, StudyContext, StudyOutput
from archbench.studies.sources.data import SUMMARY_CSV, TRIALS_CSV, SourcesCampaign
from archbench.studies.sources.facts import load_threads_facts, published_outputs


class SourcesStudy(CampaignStudy[SourcesCampaign]):
    """Its campaign's CSVs as every campaign study writes them; its section's facts (each source's, by `s<number>`),
    with or without that campaign, from the main campaign and the latency and echo studies' CSVs too."""

    name = "sources"
    title = "published beside measured (each source's own protocol)"
    part = "appendix"
    csv_frames = {TRIALS_CSV: "trials", SUMMARY_CSV: "summary"}

    def process(self, sources: Sequence[StudySource], options: ReportOptions) -> SourcesCampaign:
        source = sources[0]
        if source.campaign is None:
            return SourcesCampaign(source, pd.DataFrame(), pd.DataFrame())
        trials = analysis.trials_frame(source.campaign)
        return SourcesCampaign(source, trials, analysis.summary_frame(trials, source.campaign.meta.get("plan") or ()))

    def write(self, context: StudyContext) -> StudyOutput:
        processed = context.processed
        campaign = self.read(self.chosen(context), context.raw_root, context.processed_dir, context.options)
        files, facts = published_outputs(
            processed.summary,
            processed.trials,
            Path(processed.trials_csv).parent,
            context.paper,
            sources_campaign=campaign,
        )
        section = {f"s{number}": found.facts for number, found in facts.items()}
        # The method section's sentence on wrk -t renders from these (studies.sources.load_threads).
        section["load_threads"] = load_threads_facts(processed.trials)
        return StudyOutput(files=files, result=facts, section=section)


SOURCES = SourcesStudy()
STUDY = SOURCES.study
