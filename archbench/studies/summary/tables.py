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
from archbench.render.latex import Column, escape, format_count, format_list, render_longtable
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


def open_pairs(source: SourceFacts) -> dict[str, Any] | None:
    """For an ordering that agrees although our intervals leave some of its pairs unseparated, how many of the pairs
    it separates ours confirm and which ones they leave open: "agree" needs one pair confirmed and none reversed,
    so the abstract says how far it goes. None for any other verdict or rule, or when every pair is confirmed."""
    if source.verdict != compare.AGREE:
        return None
    parts = [part for part in source.facts.get("orderings", [source.facts]) if "pair_count" in part]
    pairs = [pair for part in parts for pair in part["pairs"]]
    left_open = [pair for pair in pairs if pair["outcome"] != compare.SAME_WAY]
    if not left_open:
        return None
    return {
        "source": source.source,
        "confirmed": len(pairs) - len(left_open),
        "pair_count": len(pairs),
        "open": [{"higher": escape(pair["higher"]), "lower": escape(pair["lower"])} for pair in left_open],
    }


def reproduced_facts(sources: Mapping[str, SourceFacts]) -> dict[str, Any]:
    """The table's verdicts grouped for the abstract's sentence (`reproduced` of table.tex.j2, which the abstract
    renders from `studies.summary.reproduced`): per verdict (VERDICT_ORDER) how many sources and which, and for
    orderings that agree, the pairs our intervals leave open (`open_pairs`)."""
    groups = []
    for verdict in VERDICT_ORDER:
        numbers = sorted(n for n, facts in sources.items() if facts.verdict == verdict)
        if numbers:
            partly = [found for n in numbers if (found := open_pairs(sources[n])) is not None]
            groups.append(
                {"verdict": verdict, "count": len(numbers), "sources": format_list(numbers), "partly": partly}
            )
    return {"total": len(sources), "groups": groups}


def summary_outputs(sources: Mapping[str, SourceFacts], prose: Prose) -> dict[str, str]:
    return {SUMMARY_FILE: summary_table(sources, prose)}
