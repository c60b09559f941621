"""A checksum manifest of data/raw, so a modified or missing raw file cannot go unnoticed.

`data/raw/MANIFEST.sha256` lists every file under data/raw (the manifest
itself excepted) as `<sha256>  <path relative to data/raw>`, sorted, in the
format of `sha256sum`, so `cd data/raw && sha256sum -c MANIFEST.sha256` checks
it without this package.

The manifest only ever grows. `update()` adds files that are not listed yet
(a new campaign, new trials of a resumed one) and refuses, changing nothing,
when a listed file has changed or disappeared: raw data is never overwritten,
so such a difference is damage to report, not a state to record. `verify()`
reports listed files that are modified or missing (problems) and files not
listed yet (new data waiting for `update`, not a problem).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST_NAME = "MANIFEST.sha256"
CHUNK_BYTES = 1 << 20


class ManifestConflict(RuntimeError):
    """Listed raw files changed or vanished: the manifest is left as it was."""


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


def raw_files(raw_root: Path) -> list[str]:
    """Every regular file under raw_root except the manifest, as sorted POSIX relative paths."""
    found = []
    for directory, _, names in os.walk(raw_root):
        for name in names:
            path = Path(directory) / name
            relative = path.relative_to(raw_root).as_posix()
            if relative != MANIFEST_NAME and path.is_file():
                found.append(relative)
    return sorted(found)


def read_manifest(raw_root: Path) -> dict[str, str]:
    """relative path -> sha256 of the files the manifest lists (empty when there is none)."""
    path = Path(raw_root) / MANIFEST_NAME
    if not path.exists():
        return {}
    listed: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        digest, sep, relative = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ManifestConflict(f"{path}:{number}: not a sha256sum line: {line!r}")
        listed[relative] = digest
    return listed


def verify(raw_root: Path) -> Verification:
    raw_root = Path(raw_root)
    listed = read_manifest(raw_root)
    present = set(raw_files(raw_root))
    modified = [p for p in sorted(listed) if p in present and sha256_of(raw_root / p) != listed[p]]
    missing = [p for p in sorted(listed) if p not in present]
    unlisted = [p for p in sorted(present) if p not in listed]
    return Verification(modified, missing, unlisted)


def update(raw_root: Path) -> list[str]:
    """Adds the files not listed yet and returns them; raises ManifestConflict on damage."""
    raw_root = Path(raw_root)
    check = verify(raw_root)
    if not check.intact:
        raise ManifestConflict(f"data under {raw_root} differs from its manifest; nothing was changed:\n"
                               f"{check.describe()}")
    if not check.unlisted:
        return []
    entries = read_manifest(raw_root)
    entries.update({p: sha256_of(raw_root / p) for p in check.unlisted})
    path = raw_root / MANIFEST_NAME
    temporary = path.with_name(f".{MANIFEST_NAME}.{os.getpid()}.tmp")
    with temporary.open("w") as f:
        f.writelines(f"{entries[p]}  {p}\n" for p in sorted(entries))
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)  # the index, not raw data: it is replaced whole, only ever growing
    return check.unlisted
