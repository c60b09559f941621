"""The campaign catalogue: every campaign the report can read, declared once.

One entry per key of CAMPAIGNS (`main`, and each study with data of its own, named as the study): which campaigns
this machine may have measured and the command that makes each (`{host}` is the short host name), the profile
behind them, the campaign shipped in git, and the campaigns read beside the chosen one (a saturation campaign, a
loopback twin, a second look). `archbench.render.campaigns.resolve` chooses among them, the same for every key:
given, else measured here, else shipped.

A study that measures with a profile of its own declares its entry in that profile, as its `[catalogue]` table
(archbench/config/profiles.d/<study>.toml, `archbench.config.parameter_model.ProfileCatalogue`): the key is the
profile's name, and without a command of its own a campaign is made by `make study NAME=<study>`, so a new study
needs no edit here nor in the Makefile. What no profile measures stays here: `main` (the profiles `make all`
takes) and the entries without a profile (the cross-OS comparison, the robustness results). `build_catalogue`
reads another profiles directory too, which is how the toy study of the tests gets its entry.

`python -m archbench campaigns --catalogue` prints the catalogue (docs/data.md sends the reader there), `make help`
prints it too, and tests/test_catalogue.py checks the Makefile's study targets and the shipped data against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from archbench.config.parameter_model import ProfileCatalogue
from archbench.config.profiles import PROFILE_DIR, ProfileError, profile_catalogue, profile_names, profile_path

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


# The command that measures a study's campaign when its profile names no other: the Makefile's generic target.
STUDY_COMMAND = "make study NAME={name}"

MAIN_RULE = CampaignRule(
    measured=tuple((f"{p}-{{host}}", f"make all PROFILE={p}") for p in MAKE_ALL_PROFILES),
    reference=MAIN_REFERENCE,
    measure_with="make trials",
)

# The entries no profile measures, each with its place among the profiles' `order`s (main is always first).
WITHOUT_PROFILE: dict[str, tuple[int, CampaignRule]] = {
    # The campaign the main one is compared with, configuration by configuration: another machine's by nature,
    # so nothing measures it here; imported campaigns join the cross-host comparison.
    "crossos": (70, CampaignRule(measured=(), reference=MAIN_REFERENCE, measure_with="make import", imported=True)),
    "robustness": (
        80,
        CampaignRule(
            measured=(("{processed}/robustness.json", "make test"),),
            reference="reference-robustness",
            measure_with="make test",
            file="robustness.json",
        ),
    ),
}


def profile_rule(name: str, table: ProfileCatalogue) -> CampaignRule:
    """The catalogue entry a profile's `[catalogue]` table declares for the study of the profile's name."""
    default = STUDY_COMMAND.format(name=name)
    if table.measured is None:
        measured: tuple[tuple[str, str], ...] = ((f"{name}-{{host}}", default),)
    else:
        measured = tuple((m.campaign, m.command or default) for m in table.measured)
    return CampaignRule(
        measured=measured,
        reference=table.reference,
        measure_with=table.measure_with or (measured[0][1] if measured else default),
        profile=name,
        read_with=tuple(table.read_with),
        expected_runs=table.expected_runs,
        also_writes=tuple(table.also_writes),
    )


def build_catalogue(profiles_dir: Path = PROFILE_DIR) -> dict[str, CampaignRule]:
    """main, then the entries of the profiles in `profiles_dir` with a `[catalogue]` table and those without a
    profile, by their order (an entry without one after every entry with one, by name)."""
    placed: dict[str, tuple[int | None, CampaignRule]] = dict(WITHOUT_PROFILE)
    for name in profile_names(profiles_dir):
        table = profile_catalogue(profile_path(name, profiles_dir))
        if table is None:
            continue
        if name in placed or name == MAIN:
            raise ProfileError(f"profile {name}: its [catalogue] entry {name!r} is declared in code already")
        placed[name] = (table.order, profile_rule(name, table))
    ordered = sorted(placed.items(), key=lambda item: (item[1][0] is None, item[1][0] or 0, item[0]))
    return {MAIN: MAIN_RULE, **{key: rule for key, (_, rule) in ordered}}


CATALOGUE: dict[str, CampaignRule] = build_catalogue()


def shipped_campaigns(catalogue: dict[str, CampaignRule] = CATALOGUE) -> list[str]:
    """The campaigns under data/raw the catalogue reads when this machine has measured nothing: each key's
    reference with what it reads beside it."""
    names = []
    for rule in catalogue.values():
        if rule.reference is not None:
            names += [rule.reference + suffix for suffix in rule.read_with]
    return list(dict.fromkeys(names))
