"""The report built from the shipped campaigns reads as a paper: findings first, a main body (findings to threats
to validity) of at most MAX_BODY_PAGES pages with everything else in the appendices, and no line or page that
overruns its box. The page numbers are LaTeX's own, read from report.aux."""

from __future__ import annotations

import re

import pytest

from archbench.config.paths import RAW_ROOT
from archbench.render.campaigns import MAIN, MAIN_REFERENCE
from archbench.studies import STUDIES

MAX_BODY_PAGES = 20
FIRST, LAST = "sec:findings", "main-body-end"  # labels of paper/templates/findings/ and threats/section.tex.j2


def label_page(aux: str, label: str) -> int:
    """The page of `label` in a report.aux: \\newlabel{label}{{number}{page}...}, the number possibly braced."""
    start = aux.find(f"\\newlabel{{{label}}}{{")
    if start < 0:
        raise KeyError(f"no label {label!r} in report.aux")
    position, depth = start + len(f"\\newlabel{{{label}}}{{"), 0
    while True:  # skip the label's number, a balanced group
        character = aux[position]
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
            if depth == 0:
                break
        position += 1
    match = re.match(r"\{(\d+)\}", aux[position + 1 :])
    if match is None:
        raise ValueError(f"label {label!r} has no page number in report.aux")
    return int(match.group(1))


def test_label_pages_are_read_past_braced_numbers():
    aux = "\\newlabel{sec:findings}{{}{2}{Findings}{section*.2}{}}\n\\newlabel{x}{{{A}.1}{31}{Reproduction}{}{}}\n"
    assert label_page(aux, "sec:findings") == 2 and label_page(aux, "x") == 31
    with pytest.raises(KeyError, match="no label"):
        label_page(aux, "missing")


@pytest.mark.slow
def test_the_shipped_report_has_findings_first_and_a_short_main_body(shared_reports):
    # Every study's shipped campaign by name: a bare main campaign would let the others read this machine's own.
    shipped = {s.name: s.campaign.reference for s in STUDIES if s.campaign is not None and s.campaign.reference}
    pdf = shared_reports.pdf({**shipped, MAIN: MAIN_REFERENCE}, RAW_ROOT)
    paper = pdf.parent
    aux = (paper / "report.aux").read_text(errors="replace")
    first, last = label_page(aux, FIRST), label_page(aux, LAST)
    assert first == 2, "the findings follow the abstract's page"
    assert last - first + 1 <= MAX_BODY_PAGES, (first, last)
    # Everything after the threats to validity is an appendix: the first appendix starts after the main body.
    assert label_page(aux, "app:reproduction") > last
    log = (paper / "report.log").read_text(errors="replace")
    overfull = [line for line in log.splitlines() if line.startswith(("Overfull \\hbox", "Overfull \\vbox"))]
    assert overfull == []
