"""The sources campaign (profile `sources`): each source's own protocol in a campaign of its own.

The published-beside-measured section (archbench.studies.sources.facts) reads sources 000, 002 and 003 from this
campaign when it measured them, and from the main campaign otherwise: a campaign has one plan, and the sources'
protocols (source 000's 400 connections for 5 s, 002's 151-byte file at 1000 connections under wrk and httperf,
003's "Hello World!" at 32 and 64 connections) are no part of the default one. Its trials and summary are processed
the way the main campaign's are and written as sources-trials.csv and sources-summary.csv.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from archbench.render.common import StudySource

TRIALS_CSV = "sources-trials.csv"
SUMMARY_CSV = "sources-summary.csv"


@dataclass(frozen=True)
class SourcesCampaign:
    """The sources campaign's tidy trials and per-configuration summary (both empty without a campaign)."""

    source: StudySource
    trials: pd.DataFrame
    summary: pd.DataFrame

    @property
    def available(self) -> bool:
        return not self.summary.empty

    @property
    def name(self) -> str:
        return self.source.name


def no_sources_campaign() -> SourcesCampaign:
    return SourcesCampaign(StudySource(None, None, None), pd.DataFrame(), pd.DataFrame())
