"""The network section of the report (source 000): separate client vs loopback -> CSV, macros, table.

Source 000 ran its thread-pool server on one Linux machine and wrk on another over 1000 Mb/s Ethernet
(4 and 8 threads, n = 5), and on the server machine itself over loopback (2-12 threads, n = 10). The
network study (profile `network`, notebooks/network_study.ipynb) runs the same profile twice: campaign
NAME with placement netns and a link model (server and wrk in two network namespaces joined by a veth
pair shaped by tc tbf) and NAME-loopback with placement loopback. The section sets, per pool size, our
netns/loopback ratio beside source 000's separate-client/loopback ratio (archbench.report.studies.network.data).

This module is the section's entry point (build.py: `process_network_campaigns`, `NetworkStudy.outputs`);
its words are in paper/templates/network/. Without both campaigns the section is one sentence saying
which is missing, never a LaTeX error.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from archbench.analyze.analysis import is_nan
from archbench.config.catalogue import CATALOGUE, LOOPBACK_SUFFIX
from archbench.report.common import (
    NOT_FOUND,
    StudySource,
    absent_files,
    distinct_values,
    load_campaign_or_reason,
    provenance_sentence,
    remove_stale_files,
    tt,
    write_study_csvs,
)
from archbench.report.formats import fmt_bracket, fmt_number, fmt_p, two_lines
from archbench.report.latex import (
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
from archbench.report.prose import Prose
from archbench.report.studies.network.data import (
    FRAME_OVERHEAD_BYTES,
    LinkBound,
    NetworkResults,
    campaign_summary,
    compare_pools,
    link_bound,
    pool_rows,
    source000_pools,
)
from archbench.report.studies.statistics.comparisons import p_equation
from archbench.report.study import Study, StudyContext, StudyOutput

__all__ = ["LOOPBACK_SUFFIX", "NetworkStudy", "loopback_name", "network_outputs", "process_network_campaigns"]

TABLE_FILE = "network-table.tex"
GENERATED_FILES = (TABLE_FILE,)
COMPARISON_CSV = "network-comparison.csv"
SENTENCES_TEMPLATE = "network/sentences"
TABLES_TEMPLATE = "network/tables"
ALPHA = 0.05
STUDY_NAME = "network"


class NetworkStudy(NetworkResults):
    """The two network campaigns' comparison and what the report makes of it."""

    def outputs(
        self, macros: MacroSet, paper_dir: Path, figures_dir: Path, prose: Prose | None = None
    ) -> dict[str, str]:
        """What archbench.report.build writes for this section: macros into `macros`, {generated file: LaTeX}."""
        return network_outputs(macros, self, prose or Prose())


def loopback_name(network_campaign: str | None, loopback_campaign: str | None = None) -> str | None:
    """The loopback twin's campaign: as given, else `<network_campaign>-loopback`."""
    if loopback_campaign:
        return loopback_campaign
    return f"{network_campaign}{LOOPBACK_SUFFIX}" if network_campaign else None


def process_network_campaigns(
    requested: str | None, raw_root: Path, processed_dir: Path | None, loopback: str | None = None
) -> NetworkStudy:
    """Read the netns campaign and its loopback twin, compare them per pool size and write the CSV."""
    raw_root = Path(raw_root)
    network = load_campaign_or_reason(requested, raw_root, "network")
    twin = load_campaign_or_reason(loopback_name(requested, loopback), raw_root, "network loopback")
    summaries = {"network": campaign_summary(network), "loopback": campaign_summary(twin)}
    comparison = compare_pools(summaries["network"], summaries["loopback"], source000_pools())
    campaigns = [s.campaign for s in (network, twin) if s.campaign is not None]
    csv_files: dict[str, Path] = {}
    if processed_dir is not None and len(campaigns) < 2:
        remove_stale_files(processed_dir, (COMPARISON_CSV,))
    if processed_dir is not None and len(campaigns) == 2:
        csv_files = write_study_csvs(processed_dir, campaigns, {COMPARISON_CSV: comparison})
    bound = link_bound(network, summaries["network"])
    return NetworkStudy(network, twin, summaries, comparison, bound, csv_files)


def network_outputs(macros: MacroSet, study: NetworkResults, prose: Prose) -> dict[str, str]:
    """Add the \\abNetwork... macros to `macros` and return {generated file name: LaTeX} (every file, always)."""
    network_macros(macros, study, prose)
    if not study.available:
        return absent_files(prose, "network", GENERATED_FILES)
    return {TABLE_FILE: comparison_table(study, prose)}


# --------------------------------------------------------------------------- macros


def _missing_facts(source: StudySource) -> dict[str, Any]:
    return {
        "requested": escape(source.requested) if source.requested else None,
        "not_found": source.missing == NOT_FOUND,
    }


def network_macros(macros: MacroSet, study: NetworkResults, prose: Prose) -> None:
    """Every \\abNetwork... macro templates/network/section.tex uses, defined with or without the campaigns."""
    macros.add(
        r"\abNetworkHasData",
        "1" if study.available else "0",
        "1: both network campaigns exist (templates/network/section.tex \\ifnum)",
    )
    macros.add(r"\abNetworkCampaign", escape(study.network.requested or "none"), "netns campaign")
    macros.add(r"\abNetworkLoopbackCampaign", escape(study.loopback.requested or "none"), "loopback campaign")
    sentences = {
        "method": r"\abNetworkMethodSentence",
        "ratio": r"\abNetworkRatioSentence",
        "source": r"\abNetworkSourceSentence",
        "link bound": r"\abNetworkLinkBoundSentence",
    }
    if not study.available:
        sentence = prose.sentence(
            SENTENCES_TEMPLATE,
            "no_campaign",
            network=_missing_facts(study.network),
            loopback=_missing_facts(study.loopback),
        )
        macros.add(r"\abNetworkCampaignSentence", sentence, "why the network section has no measurements")
        for macro in sentences.values():
            macros.add(macro, "", "no network campaigns")
        return
    campaigns = [study.network.campaign, study.loopback.campaign]
    macros.add(
        r"\abNetworkCampaignSentence",
        provenance_sentence(prose, campaigns, "section"),
        "campaigns, host and dates of the network numbers",
    )
    facts = {"method": method_facts(study), "ratio": ratio_facts(study), "source": source_facts(study)}
    facts["link bound"] = link_facts(study.link, study.comparison)
    for name, macro in sentences.items():
        macros.add(
            macro,
            prose.sentence(SENTENCES_TEMPLATE, name.replace(" ", "_"), facts[name]),
            f"network section: {name}",
        )


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


def write(context: StudyContext) -> StudyOutput:
    """The network section: the netns campaign against its loopback twin."""
    study = process_network_campaigns(context.campaign(STUDY_NAME), context.raw_root, context.processed_dir)
    macros = MacroSet()
    files = study.outputs(macros, context.paper_dir, context.figures_dir, context.prose)
    return StudyOutput(macros, files, study)


STUDY = Study(
    name=STUDY_NAME,
    title="a separate client against loopback (source 000)",
    part="appendix",
    write=write,
    campaign=CATALOGUE[STUDY_NAME],
)
