"""The report as an ordered list of studies: each one line here, each a package beside this file.

A study (archbench.render.study) processes its campaign into data/processed/, adds its macros and its generated
files, and has its section in paper/templates/<name>/section.tex; its `part` says whether the section comes before
the introduction, in the body or in the appendices. The studies run in this order, so a study may
read the result of any study above it (the rules study cites the tables and figures of the ones before it); within
each part, the sections appear in this order too. To add a study: a package here, its templates under paper/templates/<name>/,
and one line below.
"""

from __future__ import annotations

from archbench.render.study import Study
from archbench.studies import (
    abstract,
    architectures,
    artifact,
    configurations,
    crossos,
    echo,
    environment,
    findings,
    latency,
    method,
    network,
    notebooks,
    pool,
    robustness,
    rules,
    serving_order,
    sources,
    statistics,
    summary,
    threats,
    workloads,
)

STUDIES: tuple[Study, ...] = (
    workloads.STUDY,
    method.STUDY,
    architectures.STUDY,
    pool.STUDY,
    echo.STUDY,
    latency.STUDY,
    serving_order.STUDY,
    threats.STUDY,
    network.STUDY,
    sources.STUDY,
    abstract.STUDY,
    findings.STUDY,
    summary.STUDY,
    statistics.STUDY,
    crossos.STUDY,
    rules.STUDY,
    configurations.STUDY,
    environment.STUDY,
    robustness.STUDY,
    notebooks.STUDY,
    artifact.STUDY,
)
