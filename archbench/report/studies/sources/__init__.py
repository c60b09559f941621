"""The sources study: each source's published numbers (data/external/) beside this machine's.

Sources 000, 002 and 003 are read from the `sources` campaign (each source's own protocol: profile sources,
`make sources-study`) where it measured them, else from the main campaign; source 001 from the latency study's
processed CSVs and source 004 from the echo study's, so it runs after both. Its words are paper/templates/sources/;
the facts it computes are also the summary study's.
"""

from __future__ import annotations

from pathlib import Path

from archbench.config.catalogue import CATALOGUE
from archbench.report.latex import MacroSet
from archbench.report.studies.sources.data import process_sources_campaign
from archbench.report.studies.sources.facts import published_outputs
from archbench.report.study import Study, StudyContext, StudyOutput

STUDY_NAME = "sources"


def write(context: StudyContext) -> StudyOutput:
    processed = context.processed
    sources = process_sources_campaign(context.campaign(STUDY_NAME), context.raw_root, context.processed_dir)
    macros = MacroSet()
    files, facts = published_outputs(
        processed.summary,
        processed.trials,
        Path(processed.trials_csv).parent,
        macros,
        context.generated_dir,
        context.figures_dir,
        context.prose,
        sources_campaign=sources,
    )
    return StudyOutput(macros, files, facts)


STUDY = Study(
    name=STUDY_NAME,
    title="published beside measured (each source's own protocol)",
    part="appendix",
    write=write,
    campaign=CATALOGUE[STUDY_NAME],
)
