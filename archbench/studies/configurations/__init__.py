"""The configurations appendix: the per-configuration tables of the main comparison and of the latency study, which
repeat in numbers what the body's figures show (the architecture comparison per pipeline depth, every configuration
with its starvation, the pool-size and connection series, and every offered rate of the open-loop study). The studies that make them write the tables; this
study only places them after the main body. Its words are paper/templates/configurations/.
"""

from __future__ import annotations

from archbench.render.study import Study, StudyContext, StudyOutput

TABLES_FROM = ("architectures", "pool", "latency")  # the studies whose generated tables the section inputs


def write(context: StudyContext) -> StudyOutput:
    for name in TABLES_FROM:
        context.result(name)  # a KeyError names a study that has not written its tables before this one
    return StudyOutput()


STUDY = Study(name="configurations", title="every configuration in numbers", part="appendix", write=write)
