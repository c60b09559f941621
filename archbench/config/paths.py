"""Where the repository's directories are: the defaults every stage starts from (each is also a parameter)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RAW_ROOT = REPO_ROOT / "data" / "raw"
# data/raw/manifests/: each campaign's checksum manifest (archbench.data.manifest); never a campaign's name
RAW_MANIFEST_DIR = "manifests"
PROCESSED_DIR = REPO_ROOT / "data" / "processed"
EXTERNAL_DIR = REPO_ROOT / "data" / "external"
PAPER_DIR = REPO_ROOT / "paper"
GENERATED_DIR = PAPER_DIR / "generated"
FIGURES_DIR = PAPER_DIR / "figures"
TEMPLATES_DIR = PAPER_DIR / "templates"
TOOLS_BIN = REPO_ROOT / ".tools" / "bin"
