"""`python -m archbench campaigns`: which campaign each part of the report reads, and why (archbench.report.campaigns).

    python -m archbench campaigns [--set 'echo=echo-lab,latency=lat'] [--measured-main NAME] [--json]
                                  [--makefile FILE]

`make analysis` runs it before every analysis: it prints one line per study and writes FILE, the make fragment
that names the chosen campaigns and every raw file they hold, so that the analysis is redone exactly when one of
them changed. The notebook (notebooks/analyze.ipynb) resolves the same way, so Run All in JupyterLab reads what
`make analysis` reads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from archbench.config.paths import PROCESSED_DIR, RAW_ROOT, REPO_ROOT
from archbench.report.campaigns import MAIN, Campaigns, resolve
from archbench.report.studies import STUDIES


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("campaigns", help="which campaign each part of the report reads, and why")
    parser.add_argument("--set", default="", metavar="KEY=CAMPAIGN,...", help="the Makefile's CAMPAIGNS")
    parser.add_argument("--measured-main", help="the main campaign make trials writes (the Makefile's CAMPAIGN)")
    parser.add_argument("--raw-root", type=Path, default=RAW_ROOT, help="default: data/raw")
    parser.add_argument("--processed-dir", type=Path, default=PROCESSED_DIR, help="default: data/processed")
    parser.add_argument("--json", action="store_true", help="print the choice as JSON instead of one line per study")
    parser.add_argument("--makefile", type=Path, help="write the make fragment of the analysis' inputs here")


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
