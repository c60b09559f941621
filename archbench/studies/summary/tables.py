"""The one-page summary (paper/templates/summary/section.tex.j2): per source its question, its published answer,
this machine's answer with its interval, and whether they agree; and the facts of the abstract's sentence on how far
the reproduction goes, from the same verdicts (`reproduced_facts`). The facts and verdicts are
archbench.studies.sources.facts's (each source's `SourceFacts`, archbench.analyze.published_compare's, read from the
sources study's result, never by importing that study); every word is in paper/templates/summary/table.tex.j2,
including the rules that define agreement (the section's introduction, rendered with INTRO)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from archbench.analyze import published_compare as compare
from archbench.analyze.published_compare import SourceFacts
from archbench.render.latex import Column, format_count, format_list, render_longtable
from archbench.render.prose import Prose
from archbench.stats.intervals import MIN_TRIALS_FOR_INTERVAL

TEMPLATE = "summary/table"
SUMMARY_FILE = "summary-table.tex"
# Cell widths that fit the table on a page of the report's text width, the answers taking what is left.
COLUMNS = (
    Column("source", "l"),
    Column("question", r">{\raggedright\arraybackslash}p{3.4cm}"),
    Column("published answer", r">{\raggedright\arraybackslash}p{3.6cm}"),
    Column("this machine (95\\,\\% CI)", r">{\raggedright\arraybackslash}X"),
    Column("verdict", "l"),
)
# The order in which the abstract's sentence names the verdicts: what holds first, what was not measured last.
VERDICT_ORDER = (compare.AGREE, compare.DISAGREE, compare.INCONCLUSIVE, compare.NOT_TESTABLE, compare.NOT_MEASURED)
# The numbers the introduction's rules of agreement state (the section's facts).
INTRO = {"tie": format_count(compare.TIE_FRACTION * 100), "min_trials": MIN_TRIALS_FOR_INTERVAL}


def summary_table(sources: Mapping[str, SourceFacts], prose: Prose) -> str:
    """The summary's table (a page of its own follows from report.tex's \\clearpage)."""
    rows = []
    for number in sorted(sources):
        source = sources[number]
        rows.append(
            [
                number,
                prose.sentence(TEMPLATE, f"q{number}", source.facts),
                prose.sentence(TEMPLATE, f"p{number}", source.facts),
                prose.sentence(TEMPLATE, f"m{number}", source.facts),
                prose.sentence(TEMPLATE, "verdict", v=source.verdict),
            ]
        )
    return render_longtable(list(COLUMNS), rows, prose.sentence(TEMPLATE, "caption"), "tab:summary", tabcolsep="4pt")


def reproduced_facts(sources: Mapping[str, SourceFacts]) -> dict[str, Any]:
    """The table's verdicts grouped for the abstract's sentence (`reproduced` of table.tex.j2, which the abstract
    renders from `studies.summary.reproduced`): per verdict (VERDICT_ORDER) how many sources and which."""
    groups = []
    for verdict in VERDICT_ORDER:
        numbers = sorted(n for n, facts in sources.items() if facts.verdict == verdict)
        if numbers:
            groups.append({"verdict": verdict, "count": len(numbers), "sources": format_list(numbers)})
    return {"total": len(sources), "groups": groups}


def summary_outputs(sources: Mapping[str, SourceFacts], prose: Prose) -> dict[str, str]:
    return {SUMMARY_FILE: summary_table(sources, prose)}
