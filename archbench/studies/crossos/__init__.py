"""The cross-OS study: across operating systems, machines and campaigns.

Source 000's published cross-OS and separate-client/loopback comparisons (archbench.analyze.crossos), the
configurations this campaign shares with campaigns measured on other OSes or hosts (the shipped reference and
every imported campaign beside it under data/raw), and this campaign against the reference. It writes
`crossos.csv` into data/processed/ (a `table` column names each part) and gives its section template
(paper/templates/crossos/section.tex.j2) the facts of its sentences.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from archbench import stats
from archbench.analyze import crossos
from archbench.analyze.analysis import write_csvs
from archbench.config.catalogue import CATALOGUE
from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.crossos.data import (
    CrossOs,
    compared_campaigns,
    measured_cross_host,
    reference_comparison,
    source000_frames,
)
from archbench.studies.crossos.tables import (
    cross_host_facts,
    measured_table,
    reference_facts,
    source000_facts,
    source000_table,
)

STUDY_NAME = "crossos"
CROSSOS_SOURCE_TABLE_FILE = "table-crossos-source000.tex"
CROSSOS_MEASURED_TABLE_FILE = "table-crossos-measured.tex"
CROSSOS_REFERENCE_TABLE_FILE = "table-crossos-reference.tex"
CROSSOS_CSV = "crossos.csv"
TEMPLATE = "crossos/sentences"


def write(
    context: StudyContext, seed: int | None = stats.DEFAULT_SEED, resamples: int = stats.DEFAULT_RESAMPLES
) -> StudyOutput:
    processed, prose = context.processed, context.prose
    campaign_dir = Path(processed.campaign.path)
    # The other campaigns are read beside the main one (the reference, imported campaigns).
    raw_root = campaign_dir.parent
    cross = CrossOs()
    source000_frames(cross)
    # What the catalogue's crossos entry chose: the campaign compared with, and the imported ones beside it.
    compared = context.campaigns.choice(STUDY_NAME)
    others = compared_campaigns(compared.read, campaign_dir.name)
    testing = crossos.Testing(seed=seed, resamples=resamples)
    measured_cross_host(cross, processed.trials, campaign_dir.name, raw_root, others, testing)
    reference_comparison(cross, processed.trials, campaign_dir.name, raw_root, compared.name, testing)
    facts = {
        "source": source000_facts(cross),
        "cross_host": cross_host_facts(cross),
        "reference": reference_facts(cross, campaign_dir.name),
    }
    write_crossos_csv(Path(processed.summary_csv).parent, cross)
    measured_caption = prose.sentence(TEMPLATE, "measured_caption", by_os=cross.measured_group == "os")
    files = {
        CROSSOS_SOURCE_TABLE_FILE: source000_table(cross, prose),
        CROSSOS_MEASURED_TABLE_FILE: measured_table(
            cross.measured, "tab:crossos-measured", measured_caption, prose.block(TEMPLATE, "no_measured_table"), prose
        ),
        CROSSOS_REFERENCE_TABLE_FILE: measured_table(
            cross.reference,
            "tab:crossos-reference",
            prose.sentence(TEMPLATE, "reference_caption"),
            prose.block(TEMPLATE, "no_reference_table"),
            prose,
        ),
    }
    return StudyOutput(files=files, result=cross, section=facts)


def write_crossos_csv(processed_dir: Path, cross: CrossOs) -> None:
    parts = [
        frame.assign(table=name)
        for name, frame in (
            ("source000_cross_os", cross.source_os),
            ("source000_cross_os_cpu_share", cross.source_cpu_share),
            ("source000_setups", cross.source_setups),
            ("measured", cross.measured),
            ("reference", cross.reference),
        )
        if frame is not None and not frame.empty
    ]
    combined = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["table"])
    write_csvs(processed_dir, {CROSSOS_CSV: combined})


STUDY = Study(
    name=STUDY_NAME,
    title="across operating systems, machines and campaigns",
    part="appendix",
    write=write,
    campaign=CATALOGUE[STUDY_NAME],
)
