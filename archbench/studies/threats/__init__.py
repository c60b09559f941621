"""The threats to validity, the last section of the main body, a study of its own so that it renders from the facts
of the studies it quotes.

It computes nothing: paper/templates/threats/section.tex.j2 holds its words, renders the pinning and client-bound
findings from the method study's facts (`studies.method`) and quotes the campaign's numbers as macros. It ends with
the label main-body-end, from which tests/test_report_pages.py counts the main body's pages.
"""

from __future__ import annotations

from archbench.render.study import Study, StudyOutput

STUDY = Study(name="threats", title="threats to validity", part="body", write=lambda _context: StudyOutput())
