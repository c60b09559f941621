"""A checksum manifest of data/raw, so a modified or missing raw file cannot go unnoticed.

Every file under data/raw is listed as `<sha256>  <path relative to data/raw>`, in the format of `sha256sum`, in one
of two places:
- `data/raw/MANIFEST.sha256`, the shipped manifest: the campaigns the repository commits. It is raw data's record
  like the campaigns themselves, so nothing here ever writes it.
- `data/raw/manifests/<campaign>.sha256`: the files not in the shipped manifest, one manifest per campaign (a campaign
  measured on this machine, or new trials of a shipped one). A campaign measured here adds a file of its own and
  edits no committed one: after `make all` the working tree has new, untracked campaigns and their manifests, and a
  `git pull` that brings other campaigns cannot conflict.
The shipped campaigns are also listed, line for line, in their own committed manifests under `manifests/` (the
record some commits kept there; committed raw data is never removed). A path listed twice has one digest.
`cd data/raw && sha256sum -c MANIFEST.sha256 manifests/*.sha256` checks them without this package.

A manifest only ever grows. `update()` adds files that are not listed yet and refuses, changing nothing, when a
listed file has changed or disappeared: raw data is never overwritten, so such a difference is damage to report, not
a state to record. `verify()` reports listed files that are modified or missing (problems) and files not listed yet
(new data waiting for `update`, not a problem).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from archbench.config.paths import RAW_MANIFEST_DIR

MANIFEST_DIR = RAW_MANIFEST_DIR
MANIFEST_SUFFIX = ".sha256"
SHIPPED_MANIFEST = "MANIFEST.sha256"
CHUNK_BYTES = 1 << 20


class ManifestConflict(RuntimeError):
    """Listed raw files changed or vanished: the manifests are left as they were."""


@dataclass(frozen=True)
class Verification:
    modified: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        """Every listed file is present and unchanged (unlisted new files are fine)."""
        return not self.modified and not self.missing

    def describe(self) -> str:
        lines = [f"modified: {p}" for p in self.modified] + [f"missing: {p}" for p in self.missing]
        lines += [f"not in the manifest yet: {p}" for p in self.unlisted]
        return "\n".join(lines)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def campaign_of(relative: str) -> str:
    """The campaign a raw file belongs to: the first part of its path under data/raw."""
    return relative.split("/", 1)[0]


def manifest_path(raw_root: Path, campaign: str) -> Path:
    """data/raw/manifests/<campaign>.sha256."""
    return Path(raw_root) / MANIFEST_DIR / f"{campaign}{MANIFEST_SUFFIX}"


def manifest_files(raw_root: Path) -> list[Path]:
    """Every manifest of `raw_root`: the shipped one, then the campaigns' (sorted)."""
    raw_root = Path(raw_root)
    shipped = [raw_root / SHIPPED_MANIFEST] if (raw_root / SHIPPED_MANIFEST).is_file() else []
    return shipped + sorted((raw_root / MANIFEST_DIR).glob(f"*{MANIFEST_SUFFIX}"))


def raw_files(raw_root: Path) -> list[str]:
    """Every regular file under raw_root except the manifests, as sorted POSIX relative paths."""
    found = []
    for directory, _, names in os.walk(raw_root):
        for name in names:
            path = Path(directory) / name
            relative = path.relative_to(raw_root).as_posix()
            if campaign_of(relative) not in (MANIFEST_DIR, SHIPPED_MANIFEST) and path.is_file():
                found.append(relative)
    return sorted(found)


def read_lines(path: Path) -> dict[str, str]:
    """relative path -> sha256 of one manifest file's lines."""
    listed: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        digest, sep, relative = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ManifestConflict(f"{path}:{number}: not a sha256sum line: {line!r}")
        listed[relative] = digest
    return listed


def read_manifest(raw_root: Path) -> dict[str, str]:
    """relative path -> sha256 of the files the manifests list (empty when there is none); a path listed twice with
    two digests is damage to a record, refused."""
    listed: dict[str, str] = {}
    for path in manifest_files(raw_root):
        for relative, digest in read_lines(path).items():
            if listed.setdefault(relative, digest) != digest:
                raise ManifestConflict(f"{path}: {relative} is listed with another digest in an earlier manifest")
    return listed


def manifest_text(entries: Mapping[str, str]) -> str:
    """sha256sum's lines for `entries`, sorted by path."""
    return "".join(f"{entries[p]}  {p}\n" for p in sorted(entries))


def write_manifests(raw_root: Path, entries: Mapping[str, str], campaigns: Iterable[str]) -> None:
    """Writes the manifest of each of `campaigns` with its entries of `entries`, each replaced whole and atomically
    (an index, not raw data); the other campaigns' manifests are not touched."""
    by_campaign: dict[str, dict[str, str]] = {name: {} for name in campaigns}
    for relative, digest in entries.items():
        if campaign_of(relative) in by_campaign:
            by_campaign[campaign_of(relative)][relative] = digest
    for campaign, listed in by_campaign.items():
        path = manifest_path(raw_root, campaign)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with temporary.open("w") as f:
            f.write(manifest_text(listed))
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)


def verify(raw_root: Path) -> Verification:
    raw_root = Path(raw_root)
    listed = read_manifest(raw_root)
    present = set(raw_files(raw_root))
    modified = [p for p in sorted(listed) if p in present and sha256_of(raw_root / p) != listed[p]]
    missing = [p for p in sorted(listed) if p not in present]
    unlisted = [p for p in sorted(present) if p not in listed]
    return Verification(modified, missing, unlisted)


def update(raw_root: Path) -> list[str]:
    """Adds the files not listed yet, each to its campaign's manifest in data/raw/manifests/, and returns them;
    raises ManifestConflict on damage. Only the manifests of campaigns with new files are written; the shipped
    manifest never is."""
    raw_root = Path(raw_root)
    check = verify(raw_root)
    if not check.intact:
        raise ManifestConflict(
            f"data under {raw_root} differs from its manifest; nothing was changed:\n{check.describe()}"
        )
    if not check.unlisted:
        return []
    entries: dict[str, str] = {}
    for path in manifest_files(raw_root):
        if path.parent.name == MANIFEST_DIR:
            entries.update(read_lines(path))
    entries.update({p: sha256_of(raw_root / p) for p in check.unlisted})
    write_manifests(raw_root, entries, {campaign_of(p) for p in check.unlisted})
    return check.unlisted
