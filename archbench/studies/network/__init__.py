"""The network section of the report (source 000): separate client vs loopback -> CSV, macros, table.

Source 000 ran its thread-pool server on one Linux machine and wrk on another over 1000 Mb/s Ethernet
(4 and 8 threads, n = 5), and on the server machine itself over loopback (2-12 threads, n = 10). The
network study (profile `network`, notebooks/network_study.ipynb) runs the same profile twice: campaign
NAME with placement netns and a link model (server and wrk in two network namespaces joined by a veth
pair shaped by tc tbf) and NAME-loopback with placement loopback. The section sets, per pool size, our
netns/loopback ratio beside source 000's separate-client/loopback ratio (archbench.studies.network.data).

This module is the section's entry point (`NetworkStudy`, a CampaignStudy); its macros, the facts of its sentences
and its table are archbench.studies.network.facts, its words paper/templates/network/ (section.tex.j2).
Without both campaigns the section is one sentence saying which is missing, never a LaTeX error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from archbench.config.catalogue import LOOPBACK_SUFFIX
from archbench.render.common import StudySource, load_campaign_or_reason
from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.render.study import CampaignStudy, ReportOptions
from archbench.studies.network.data import (
    NetworkResults,
    campaign_summary,
    compare_pools,
    link_bound,
    source000_pools,
)
from archbench.studies.network.facts import comparison_table, network_macros, network_sentences

__all__ = ["LOOPBACK_SUFFIX", "NETWORK", "NetworkStudy", "loopback_name"]

TABLE_FILE = "network-table.tex"
COMPARISON_CSV = "network-comparison.csv"


def loopback_name(network_campaign: str | None, loopback_campaign: str | None = None) -> str | None:
    """The loopback twin's campaign: as given, else `<network_campaign>-loopback`."""
    if loopback_campaign:
        return loopback_campaign
    return f"{network_campaign}{LOOPBACK_SUFFIX}" if network_campaign else None


class NetworkStudy(CampaignStudy[NetworkResults]):
    """The netns campaign against its loopback twin, compared per pool size."""

    name = "network"
    title = "a separate client against loopback (source 000)"
    part = "appendix"
    csv_frames = {COMPARISON_CSV: "comparison"}
    table_files = {TABLE_FILE: comparison_table}

    def load(self, names: Sequence[str | None], raw_root: Path) -> list[StudySource]:
        """The netns campaign and its loopback twin: the second name if given, else `<netns>-loopback`."""
        requested = names[0]
        twin = loopback_name(requested, names[1] if len(names) > 1 else None)
        return [
            load_campaign_or_reason(requested, Path(raw_root), "network"),
            load_campaign_or_reason(twin, Path(raw_root), "network loopback"),
        ]

    def process(self, sources: Sequence[StudySource], options: ReportOptions) -> NetworkResults:
        network, twin = sources
        summaries = {"network": campaign_summary(network), "loopback": campaign_summary(twin)}
        comparison = compare_pools(summaries["network"], summaries["loopback"], source000_pools())
        return NetworkResults(network, twin, summaries, comparison, link_bound(network, summaries["network"]))

    def facts(self, result: NetworkResults, macros: MacroSet, prose: Prose, figures: Mapping[str, Any]) -> None:
        network_macros(macros, result)

    def sentences(self, result: NetworkResults, figures: Mapping[str, Any]) -> dict[str, Any]:
        return network_sentences(result)


NETWORK = NetworkStudy()
STUDY = NETWORK.study
