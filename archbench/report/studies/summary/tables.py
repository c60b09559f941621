"""The one-page summary after the abstract (paper/templates/summary/section.tex): per source its question, its published
answer, this machine's answer with its interval, and whether they agree. The facts and verdicts are
archbench.report.studies.sources.facts's; every word is in paper/templates/summary/table.tex.j2, including the rules that
define agreement."""

from __future__ import annotations

from collections.abc import Mapping

from archbench.analyze.published_compare import TIE_FRACTION
from archbench.report.latex import Column, format_count, render_longtable
from archbench.report.prose import Prose
from archbench.report.studies.sources.facts import SourceFacts

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


def summary_table(sources: Mapping[str, SourceFacts], prose: Prose) -> str:
    """The summary's introduction and its table (a page of its own follows from report.tex's \\clearpage)."""
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
    intro = prose.sentence(TEMPLATE, "intro", tie=format_count(TIE_FRACTION * 100))
    table = render_longtable(list(COLUMNS), rows, prose.sentence(TEMPLATE, "caption"), "tab:summary", tabcolsep="4pt")
    return intro + "\n\n" + table


def summary_outputs(sources: Mapping[str, SourceFacts], prose: Prose) -> dict[str, str]:
    return {SUMMARY_FILE: summary_table(sources, prose)}
