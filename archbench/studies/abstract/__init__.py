"""The abstract, a study of its own so that it renders from the facts of the studies it quotes.

It computes nothing: paper/templates/abstract/section.tex.j2 holds its words and renders its sentences from other
studies' facts (`studies.<name>`: the method's campaigns that re-ran disturbed trials, the workloads' expectations, the
summary's verdicts, the statistics' planned comparisons and the architectures' fastest servers), and quotes the
campaign's numbers as macros. Its part is the front, first in the registry there, so it comes right after the title.
"""

from __future__ import annotations

from archbench.render.study import Study, StudyOutput

STUDY = Study(name="abstract", title="abstract", part="front", write=lambda _context: StudyOutput())
