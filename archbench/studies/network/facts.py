"""The network study's macros, the facts of its section's sentences and its table: per pool size, our
netns/loopback ratio beside source 000's separate-client/loopback ratio, with the link's bound on the rate
(archbench.studies.network.data). The sentences are macros of paper/templates/network/sentences.tex.j2,
called by its section.tex.j2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from archbench.analyze.analysis import is_nan
from archbench.render.common import campaign_facts, distinct_values, provenance_facts, tt
from archbench.render.formats import fmt_bracket, fmt_number, fmt_p, p_equation, two_lines
from archbench.render.latex import (
    FLAGGED_MARK,
    MISSING,
    Column,
    MacroSet,
    adjusted_table,
    escape,
    format_count,
    format_decimal,
    format_list,
    notes_block,
    render_tabular,
)
from archbench.render.prose import Prose
from archbench.studies.network.data import (
    FRAME_OVERHEAD_BYTES,
    LinkBound,
    NetworkResults,
    pool_rows,
)

TABLES_TEMPLATE = "network/tables"
ALPHA = 0.05
MAKE_TARGET = "network-study"  # what measures both campaigns


# --------------------------------------------------------------------------- macros


def network_macros(macros: MacroSet, study: NetworkResults) -> None:
    """Every \\abNetwork... macro templates/network/section.tex.j2 uses, defined with or without the campaigns."""
    macros.add(
        r"\abNetworkHasData",
        "1" if study.available else "0",
        "1: both network campaigns exist (templates/network/section.tex.j2 \\ifnum)",
    )
    macros.add(r"\abNetworkCampaign", escape(study.network.requested or "none"), "netns campaign")
    macros.add(r"\abNetworkLoopbackCampaign", escape(study.loopback.requested or "none"), "loopback campaign")


def network_sentences(study: NetworkResults) -> dict[str, Any]:
    """The facts of the section's sentences: without both campaigns, which is missing (the others None: empty)."""
    if not study.available:
        # Which campaign is missing, and why (`requested`, `not_found`: network/sentences.tex.j2 `no_campaign`).
        campaign = {
            "available": False,
            "network": campaign_facts("network", study.network, (), MAKE_TARGET),
            "loopback": campaign_facts("loopback", study.loopback, (), MAKE_TARGET),
        }
        return {"campaign": campaign, "method": None, "ratio": None, "source": None, "link_bound": None}
    campaigns = [study.network.campaign, study.loopback.campaign]
    return {
        "campaign": {"available": True, "section": "section", "campaigns": [provenance_facts(c) for c in campaigns]},
        "method": method_facts(study),
        "ratio": ratio_facts(study),
        "source": source_facts(study),
        "link_bound": link_facts(study.link, study.comparison),
    }


def method_facts(study: NetworkResults) -> dict[str, Any]:
    measured = pool_rows(study.summaries["network"])
    meta = study.network.campaign.meta if study.network.campaign else {}
    parameters = meta.get("parameters") or {}
    return {
        "network_tt": tt(study.network.name),
        "loopback_tt": tt(study.loopback.name),
        "pool_sizes": format_list(distinct_values(study.comparison, "threads")),
        "connections": format_list(distinct_values(study.comparison, "connections")),
        "trials": format_list(distinct_values(measured, "n_measured")),
        "duration": format_list(distinct_values(measured, "duration_s")),
        "link": escape(study.link.link) if study.link and study.link.link else None,
        "placement": escape(parameters.get("placement") or "netns"),
    }


def _ratio(value: Any) -> str:
    return MISSING if is_nan(value) else fmt_number(value, 3)


def _interval(low: Any, high: Any) -> str:
    return fmt_bracket(low, high, _ratio)


def ratio_facts(study: NetworkResults) -> dict[str, Any]:
    frame = study.comparison.dropna(subset=["ratio"])
    significant = frame[frame["p_holm"] <= ALPHA]
    return {
        "count": len(frame),
        "low": _ratio(frame["ratio"].min()) if len(frame) else MISSING,
        "high": _ratio(frame["ratio"].max()) if len(frame) else MISSING,
        "significant": len(significant),
        "slower": int((significant["ratio"] < 1).sum()),
        "faster": int((significant["ratio"] > 1).sum()),
        "alpha": format_decimal(ALPHA, 2),
    }


def source_facts(study: NetworkResults) -> dict[str, Any]:
    frame = study.comparison.dropna(subset=["source_ratio"]).drop_duplicates(subset=["threads"])
    ours = study.comparison.dropna(subset=["ratio"])
    pools = []
    for _, row in frame.iterrows():
        own = ours[ours["threads"] == row["threads"]]
        pools.append(
            {
                "threads": f"{int(row['threads'])}",
                "ratio": _ratio(row["source_ratio"]),
                "interval": _interval(row["source_ratio_ci_low"], row["source_ratio_ci_high"]),
                "p": p_equation(row["source_p_holm"]),
                "faster": bool(row["source_ratio"] > 1),
                "ours": _ratio(own["ratio"].iloc[0]) if len(own) else MISSING,
            }
        )
    return {"pools": pools}


def link_facts(bound: LinkBound | None, comparison: Any) -> dict[str, Any]:
    highest = comparison["network_mean"].max() if len(comparison) else float("nan")
    recorded = bound is not None and not is_nan(bound.bytes_per_response)
    shaped = bound is not None and bound.link is not None and not is_nan(bound.rate_bits_per_s)
    framed = bound.framed_bound if bound is not None else float("nan")
    return {
        "shaped": shaped,
        "recorded": recorded,
        "link": escape(bound.link) if bound and bound.link else MISSING,
        "mbit": format_count(bound.rate_bits_per_s / 1e6) if shaped else MISSING,
        "bytes": format_decimal(bound.bytes_per_response, 0) if recorded else MISSING,
        "overhead": f"{FRAME_OVERHEAD_BYTES}",
        "payload_bound": format_count(bound.payload_bound) if shaped and recorded else MISSING,
        "framed_bound": format_count(framed) if shaped and recorded else MISSING,
        "highest": format_count(highest),
        "share": format_decimal(100.0 * highest / framed, 0) if shaped and recorded and framed > 0 else MISSING,
        "near": bool(shaped and recorded and framed > 0 and highest >= 0.8 * framed),
    }


# --------------------------------------------------------------------------- the table


def _mean_cell(row: Mapping[str, Any], side: str) -> str:
    mean = format_count(row[f"{side}_mean"])
    if mean == MISSING:
        return MISSING
    mark = FLAGGED_MARK if not is_nan(row[f"{side}_n_flagged"]) and row[f"{side}_n_flagged"] > 0 else ""
    n = "" if is_nan(row[f"{side}_n"]) else f" ({int(row[f'{side}_n'])})"
    return f"{mean}{mark}{n}"


def comparison_table(study: NetworkResults, prose: Prose) -> str:
    frame = study.comparison
    if frame.empty:
        return prose.block(TABLES_TEMPLATE, "no_table")
    several_counts = frame["connections"].nunique() > 1
    columns = [Column("$N$", "r")]
    if several_counts:
        columns.append(Column("$c$", "r"))
    columns += [
        Column(prose.sentence(TABLES_TEMPLATE, "loopback_header"), "r"),
        Column(prose.sentence(TABLES_TEMPLATE, "network_header"), "r"),
        Column(prose.sentence(TABLES_TEMPLATE, "ratio_header"), "r"),
        Column("$p_{\\mathrm{Holm}}$", "r"),
        Column(prose.sentence(TABLES_TEMPLATE, "source_ratio_header"), "r"),
        Column(prose.sentence(TABLES_TEMPLATE, "source_p_header"), "r"),
    ]
    rows = []
    for _, row in frame.iterrows():
        cells = [f"{int(row['threads'])}"]
        if several_counts:
            cells.append(f"{int(row['connections'])}")
        cells += [
            _mean_cell(row, "loopback"),
            _mean_cell(row, "network"),
            two_lines(_ratio(row["ratio"]), _interval(row["ratio_ci_low"], row["ratio_ci_high"])),
            fmt_p(row["p_holm"]),
            two_lines(_ratio(row["source_ratio"]), _interval(row["source_ratio_ci_low"], row["source_ratio_ci_high"])),
            fmt_p(row["source_p_holm"]),
        ]
        rows.append(cells)
    flagged = bool((frame[["loopback_n_flagged", "network_n_flagged"]].fillna(0) > 0).any().any())
    notes = [prose.sentence(TABLES_TEMPLATE, "flagged_note", mark=FLAGGED_MARK)] if flagged else []
    return adjusted_table(
        prose.sentence(TABLES_TEMPLATE, "caption", link=method_facts(study)["link"]),
        "tab:network",
        render_tabular(columns, rows),
        notes_block(notes) if notes else "",
    )
