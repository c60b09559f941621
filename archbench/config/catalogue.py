"""The campaign catalogue: every campaign the report can read, declared once.

One entry per key of CAMPAIGNS (`main`, and each study with data of its own, named as the study): which campaigns
this machine may have measured and the command that makes each (`{host}` is the short host name), the profile
behind them, the campaign shipped in git, and the campaigns read beside the chosen one (a saturation campaign, a
loopback twin, a second look). `archbench.report.campaigns.resolve` chooses among them, the same for every key:
given, else measured here, else shipped. The Makefile's study targets and docs/data.md's table are checked against
this catalogue (tests/test_catalogue.py), so a campaign name is written here, in the Makefile target that
writes it and in the docs table.
"""

from __future__ import annotations

from dataclasses import dataclass

MAIN = "main"
MAIN_REFERENCE = "reference"
# The profiles `make all PROFILE=...` accepts, the most complete first: each writes <profile>-<host>.
MAKE_ALL_PROFILES = ("default", "full", "smoke")
LOOPBACK_SUFFIX = "-loopback"  # the network study's loopback twin, read beside the network campaign
SECOND_LOOK_SUFFIX = "-12-rounds"  # the serving-order campaign after the pilot, read beside it


@dataclass(frozen=True)
class CampaignRule:
    """Where a key's campaign comes from when CAMPAIGNS does not name one.

    `measured` are this machine's campaigns, each with the command that makes it, the most complete first;
    `{host}` is the short host name. `reference` is the campaign shipped in git, read when this machine has none.
    `read_with` are the suffixes of the campaigns read beside the chosen one when they exist ("" is the chosen one
    itself), in the order a reader meets them. A key whose data are one file (`file` set) names paths instead:
    `{raw}` and `{processed}` are the raw root and the processed directory. `imported`: every campaign imported
    from another machine is read beside it too (the cross-host comparison). `also_writes` are the suffixes of the
    campaigns a measurement writes beside the chosen one that the report does not read."""

    measured: tuple[tuple[str, str], ...]
    reference: str | None
    measure_with: str
    profile: str | None = None  # the profile that measures it (its expected duration in the artifact appendix)
    read_with: tuple[str, ...] = ("",)
    file: str | None = None  # the file a campaign directory holds, for a study whose data are one file
    expected_runs: int = 1  # how many campaigns one measurement writes (the artifact appendix's count)
    imported: bool = False
    also_writes: tuple[str, ...] = ()


SHORT_STUDY = "make studies"  # the short studies `make all` runs after the main campaign (PROFILE=default)

CATALOGUE: dict[str, CampaignRule] = {
    MAIN: CampaignRule(
        measured=tuple((f"{p}-{{host}}", f"make all PROFILE={p}") for p in MAKE_ALL_PROFILES),
        reference=MAIN_REFERENCE,
        measure_with="make trials",
    ),
    "workloads": CampaignRule(
        measured=(("workloads-{host}", "make workloads-study"), ("workloads-short-{host}", SHORT_STUDY)),
        reference="reference-workloads-selection",
        measure_with="make workloads-study",
        profile="workloads",
    ),
    "echo": CampaignRule(
        measured=(("echo-{host}", "make echo-study"), ("echo-short-{host}", SHORT_STUDY)),
        reference="reference-echo",
        measure_with="make echo-study",
        profile="echo",
    ),
    "latency": CampaignRule(
        measured=(("latency-{host}", "make latency-study"), ("latency-short-{host}", "make latency-study-short")),
        reference="reference-latency-designs",
        measure_with="make latency-study",
        profile="latency",
        read_with=("-closed", "", "-001"),  # the saturation campaign, the rate sweep, source 001's set-up
    ),
    "serving_order": CampaignRule(
        measured=(("serving-order-{host}", "make serving-order-study"),),
        reference="reference-serving-order",
        measure_with="make serving-order-study",
        profile="serving_order",
        read_with=("", SECOND_LOOK_SUFFIX),
        expected_runs=2,
        also_writes=("-closed",),  # the closed-loop saturation run the open-loop rates are fractions of
    ),
    "network": CampaignRule(
        measured=(("network-{host}", "make network-study"), ("network-short-{host}", SHORT_STUDY)),
        reference="reference-network",
        measure_with="make network-study",
        profile="network",
        read_with=("", LOOPBACK_SUFFIX),
        expected_runs=2,
    ),
    "sources": CampaignRule(
        measured=(("sources-{host}", "make sources-study"),),
        reference="reference-sources",
        measure_with="make sources-study",
        profile="sources",
    ),
    # The campaign the main one is compared with, configuration by configuration: another machine's by nature,
    # so nothing measures it here; imported campaigns join the cross-host comparison.
    "crossos": CampaignRule(measured=(), reference=MAIN_REFERENCE, measure_with="make import", imported=True),
    "robustness": CampaignRule(
        measured=(("{processed}/robustness.json", "make test"),),
        reference="reference-robustness",
        measure_with="make test",
        file="robustness.json",
    ),
}


def shipped_campaigns(catalogue: dict[str, CampaignRule] = CATALOGUE) -> list[str]:
    """The campaigns under data/raw the catalogue reads when this machine has measured nothing: each key's
    reference with what it reads beside it."""
    names = []
    for rule in catalogue.values():
        if rule.reference is not None:
            names += [rule.reference + suffix for suffix in rule.read_with]
    return list(dict.fromkeys(names))
