"""`python -m archbench campaigns`: which campaign each part of the report reads, and why (archbench.render.campaigns).

    python -m archbench campaigns [--set 'echo=echo-lab,latency=lat'] [--measured-main NAME] [--json]
                                  [--makefile FILE]
    python -m archbench campaigns --catalogue [--markdown] [--profiles-dir DIR]
    python -m archbench campaigns --measures KEY [--profiles-dir DIR]

`make analysis` runs it before every analysis: it prints one line per study and writes FILE, the make fragment
that names the chosen campaigns and every raw file they hold, so that the analysis is redone exactly when one of
them changed. The notebook (notebooks/analyze.ipynb) resolves the same way, so Run All in JupyterLab reads what
`make analysis` reads.

`--catalogue` prints what it chooses among instead (`archbench.config.catalogue`, with the studies' profiles of DIR):
per key this machine's campaigns in order with the command that makes each, the shipped one and what is read beside
the chosen one; `make help` prints it, and docs/data.md sends its reader to it rather than keeping a copy.
`--markdown` prints it as a Markdown table. `--measures KEY` prints the command that measures KEY's campaign
(`make study NAME=KEY` checks it is itself before measuring).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from archbench.config.catalogue import CampaignRule, build_catalogue
from archbench.config.paths import PROCESSED_DIR, RAW_ROOT, REPO_ROOT
from archbench.config.profiles import PROFILE_DIR
from archbench.render.campaigns import MAIN, Campaigns, main_rule, resolve
from archbench.studies import STUDIES


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("campaigns", help="which campaign each part of the report reads, and why")
    parser.add_argument("--set", default="", metavar="KEY=CAMPAIGN,...", help="the Makefile's CAMPAIGNS")
    parser.add_argument("--measured-main", help="the main campaign make trials writes (the Makefile's CAMPAIGN)")
    parser.add_argument("--raw-root", type=Path, default=RAW_ROOT, help="default: data/raw")
    parser.add_argument("--processed-dir", type=Path, default=PROCESSED_DIR, help="default: data/processed")
    parser.add_argument("--json", action="store_true", help="print the choice as JSON instead of one line per study")
    parser.add_argument("--makefile", type=Path, help="write the make fragment of the analysis' inputs here")
    parser.add_argument(
        "--catalogue", action="store_true", help="print what is chosen among: each key's campaigns and commands"
    )
    parser.add_argument("--markdown", action="store_true", help="with --catalogue: as a Markdown table")
    parser.add_argument("--measures", metavar="KEY", help="print the command that measures KEY's campaign")
    parser.add_argument(
        "--profiles-dir", type=Path, default=PROFILE_DIR, help="the studies' profiles (default: profiles.d)"
    )


# `<host>` as the docs write it; a file study's paths inside the repository as a reader finds them.
SHOWN_NAMES = {"host": "<host>", "raw": "data/raw", "processed": "data/processed"}
MAIN_SECTIONS = "every section without a campaign of its own"


@dataclass(frozen=True)
class CatalogueRow:
    """One key of the catalogue as a reader is shown it: (campaign, command) in the order they are looked for."""

    key: str
    rule: CampaignRule
    measured: tuple[tuple[str, str], ...]
    sections: str

    def beside(self, quote: str = "") -> list[str]:
        """What is read beside the chosen campaign, then what a measurement writes that is not read."""
        shown = [f"{quote}{suffix}{quote}" for suffix in self.rule.read_with if suffix]
        if self.rule.imported:
            shown.append(f"every campaign {quote}{self.rule.measure_with}{quote} brought")
        return shown + [f"{quote}{suffix}{quote} (written, not read)" for suffix in self.rule.also_writes]

    def here(self, quote: str = "") -> str:
        if not self.measured:
            return f"none here ({quote}{self.rule.measure_with}{quote} brings another machine's)"
        return ", ".join(f"{quote}{name}{quote} ({quote}{command}{quote})" for name, command in self.measured)


def catalogue_rows(catalogue: dict[str, CampaignRule]) -> list[CatalogueRow]:
    titles = {study.name: study.title for study in STUDIES}
    rows = []
    for key, rule in catalogue.items():
        # main's first campaign is what `make trials` wrote (the Makefile's CAMPAIGN), as resolve looks for it.
        looked_for = main_rule("CAMPAIGN").measured if key == MAIN else rule.measured
        shown = tuple((pattern.format(**SHOWN_NAMES), command) for pattern, command in looked_for)
        rows.append(CatalogueRow(key, rule, shown, MAIN_SECTIONS if key == MAIN else titles.get(key, "-")))
    return rows


def catalogue_text(catalogue: dict[str, CampaignRule]) -> list[str]:
    """One line per key: this machine's campaigns with their commands, what is read beside, the shipped one."""
    width = max(len(key) for key in catalogue)
    lines = []
    for row in catalogue_rows(catalogue):
        beside = f"; beside: {', '.join(row.beside())}" if row.beside() else ""
        lines.append(f"{row.key:<{width}}  {row.here()}{beside}; shipped: {row.rule.reference or '-'}")
    return lines


def catalogue_markdown(catalogue: dict[str, CampaignRule]) -> list[str]:
    """The catalogue as a Markdown table, a row per key in the catalogue's order."""
    lines = [
        "| key | this machine's, in order | shipped | read beside | the report's sections |",
        "|---|---|---|---|---|",
    ]
    for row in catalogue_rows(catalogue):
        shipped = f"`{row.rule.reference}`" if row.rule.reference else "-"
        beside = ", ".join(row.beside("`")) or "-"
        lines.append(f"| `{row.key}` | {row.here('`')} | {shipped} | {beside} | {row.sections} |")
    return lines


def measures(catalogue: dict[str, CampaignRule], key: str) -> str | None:
    """The command that measures `key`'s campaign; None for a key the catalogue does not have."""
    rule = catalogue.get(key)
    return rule.measure_with if rule is not None else None


def read_files(campaigns: Campaigns, raw_root: Path) -> list[str]:
    """Every file the analysis reads: the chosen campaigns (with the ones read beside them, the cross-OS study's
    included) and a result file outside data/raw; repository-relative where possible."""
    paths = [p for name in campaigns.raw_campaigns() for p in sorted((raw_root / name).rglob("*")) if p.is_file()]
    for choice in campaigns.choices:
        if choice.name and "/" in choice.name and Path(choice.name).is_file():
            paths.append(Path(choice.name))
    return [_shown(p) for p in paths]


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def make_fragment(campaigns: Campaigns, raw_root: Path) -> str:
    files = " \\\n  ".join(read_files(campaigns, raw_root))
    return (
        "# Written by `python -m archbench campaigns --makefile`: the campaigns make analysis reads, and their files.\n"
        f"ANALYSIS_MAIN := {campaigns.main}\n"
        f"ANALYSIS_CAMPAIGNS := {campaigns.as_text()}\n"
        f"ANALYSIS_RAW := \\\n  {files}\n"
    )


def write_if_changed(path: Path, text: str) -> None:
    """Rewrite `path` only when its text changes, so make sees it as new only then."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def cmd_campaigns(args: argparse.Namespace) -> int:
    if args.catalogue or args.measures:
        return print_catalogue(args)
    campaigns = resolve(
        STUDIES, args.set, raw_root=args.raw_root, processed_dir=args.processed_dir, measured_main=args.measured_main
    )
    if args.json:
        sys.stdout.write(campaigns.to_json())
    else:
        print(f"campaigns read by the report ({MAIN}: {campaigns.main}):")
        for line in campaigns.explain(STUDIES):
            print(f"    {line}")
    if args.makefile is not None:
        write_if_changed(args.makefile, make_fragment(campaigns, Path(args.raw_root)))
    return 0


def print_catalogue(args: argparse.Namespace) -> int:
    catalogue = build_catalogue(args.profiles_dir)
    if args.measures:
        command = measures(catalogue, args.measures)
        if command is None:
            print(
                f"campaigns: no key {args.measures!r} in the catalogue (keys: {', '.join(catalogue)})", file=sys.stderr
            )
            return 2
        print(command)
        return 0
    for line in (catalogue_markdown if args.markdown else catalogue_text)(catalogue):
        print(line)
    return 0
