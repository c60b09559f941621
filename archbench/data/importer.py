"""Merging campaigns measured on another machine into this machine's `data/raw`, without collisions or edits.

    python -m archbench import PATH [--raw-root data/raw] [--as NEWNAME]   (make import RAW=PATH [IMPORT_AS=NEWNAME])

PATH is another machine's raw root (every campaign directory in it, i.e. every
subdirectory holding a campaign.json) or one campaign directory. Each campaign
is copied byte for byte, every file checked against the SHA-256 of its source
after the copy, into a hidden staging directory that is renamed into place
only when complete, so an interrupted import leaves no half campaign under a
campaign name.

Collisions. A campaign whose name already exists here:
 * with the same files and the same content: nothing to do (importing twice is harmless);
 * with anything different: refused, nothing copied, nothing touched. `--as NEWNAME`
   imports it under another name instead.

Nothing is edited, renamed campaigns included: their campaign.json and trial
records keep the name they were measured under. Every import writes a sidecar,
`<campaign>/import/import-<UTC>.json`, with the original name, the name here,
where it came from and each file's SHA-256; the `import/` subdirectory is not a
trial record (storage reads only top-level JSON files) and is left out when two
campaigns are compared.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from archbench.config.params import SAFE_NAME
from archbench.config.paths import RAW_MANIFEST_DIR
from archbench.data.storage import CAMPAIGN_FILE, TEMP_PREFIX, StorageError, write_new_json

IMPORT_DIR = "import"
STAGING_PREFIX = ".import-"
CHUNK = 1 << 20


class ImportRefused(StorageError):
    """The import would overwrite or mix with something: nothing was copied."""


@dataclass(frozen=True)
class ImportOutcome:
    source: Path
    original_name: str
    name: str  # the campaign's name here
    action: str  # "copied" or "identical" (already here, byte for byte)
    files: int

    def describe(self) -> str:
        renamed = f" as {self.name}" if self.name != self.original_name else ""
        if self.action == "identical":
            return f"{self.original_name}{renamed}: already here with identical content ({self.files} files); nothing done"
        return f"{self.original_name}{renamed}: copied {self.files} files from {self.source}, checksums verified"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _campaign_files(campaign_dir: Path) -> Iterator[Path]:
    """Every file of a campaign, sidecars of earlier imports and temporary files left out."""
    for path in sorted(campaign_dir.rglob("*")):
        relative = path.relative_to(campaign_dir)
        if relative.parts[0] == IMPORT_DIR or path.name.startswith(TEMP_PREFIX):
            continue
        if path.is_symlink():
            raise ImportRefused(f"{path} is a symbolic link; a campaign holds only regular files")
        if path.is_file():
            yield path


def manifest(campaign_dir: Path) -> dict[str, str]:
    """Relative path (POSIX) -> SHA-256 of every file of the campaign (see `_campaign_files`)."""
    campaign_dir = Path(campaign_dir)
    return {path.relative_to(campaign_dir).as_posix(): sha256_of(path) for path in _campaign_files(campaign_dir)}


def source_campaigns(source: Path) -> list[Path]:
    """The campaign directories of `source`: itself if it is one, else its subdirectories that are."""
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(f"{source} is not a directory")
    if (source / CAMPAIGN_FILE).is_file():
        return [source]
    campaigns = sorted(p for p in source.iterdir() if p.is_dir() and (p / CAMPAIGN_FILE).is_file())
    if not campaigns:
        raise FileNotFoundError(f"{source} holds no campaign (no {CAMPAIGN_FILE} in it or in its subdirectories)")
    return campaigns


def _differences(ours: dict[str, str], theirs: dict[str, str]) -> str:
    only_ours = sorted(set(ours) - set(theirs))
    only_theirs = sorted(set(theirs) - set(ours))
    changed = sorted(name for name in set(ours) & set(theirs) if ours[name] != theirs[name])
    parts = []
    for label, names in (("differ", changed), ("only here", only_ours), ("only in the import", only_theirs)):
        if names:
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            parts.append(f"{len(names)} {label} ({shown})")
    return "; ".join(parts)


def _host_suffix() -> str:
    return socket.gethostname().split(".")[0] or "host"


def import_campaigns(source: Path | str, raw_root: Path | str, *, rename: str | None = None,
                     now: datetime | None = None) -> list[ImportOutcome]:
    """Copy the campaigns of `source` into `raw_root` (see the module docstring); all are checked first,
    so a refusal copies nothing."""
    campaigns = source_campaigns(Path(source))
    raw_root = Path(raw_root)
    if rename is not None:
        if len(campaigns) != 1:
            raise ValueError(f"--as renames one campaign, but {source} holds {len(campaigns)}: "
                             f"{', '.join(c.name for c in campaigns)}; import that campaign's directory")
        if not SAFE_NAME.fullmatch(rename) or rename == RAW_MANIFEST_DIR:
            raise ValueError(
                f"--as: {rename!r} is not a file-system-safe name ([A-Za-z0-9._-], no leading dot) "
                f"or is {RAW_MANIFEST_DIR!r}, data/raw's directory of checksum manifests"
            )

    todo: list[tuple[Path, str, dict[str, str]]] = []
    outcomes: list[ImportOutcome] = []
    for campaign_dir in campaigns:
        name = rename or campaign_dir.name
        theirs = manifest(campaign_dir)
        target = raw_root / name
        if target.exists() or target.is_symlink():
            if not (target / CAMPAIGN_FILE).is_file():
                raise ImportRefused(f"{target} exists and is not a campaign; not importing {campaign_dir} over it")
            ours = manifest(target)
            if ours == theirs:
                outcomes.append(ImportOutcome(campaign_dir, campaign_dir.name, name, "identical", len(theirs)))
                continue
            raise ImportRefused(
                f"campaign {name!r} already exists in {raw_root} with different content "
                f"({_differences(ours, theirs)}); nothing was imported and nothing changed. Import it under "
                f"another name: python -m archbench import {campaign_dir} --as {campaign_dir.name}-"
                f"{_host_suffix()}-imported (make import RAW={campaign_dir} IMPORT_AS=...)"
            )
        todo.append((campaign_dir, name, theirs))

    for campaign_dir, name, theirs in todo:
        _copy_campaign(campaign_dir, raw_root, name, theirs, now or datetime.now(timezone.utc))
        outcomes.append(ImportOutcome(campaign_dir, campaign_dir.name, name, "copied", len(theirs)))
    order = {c: i for i, c in enumerate(campaigns)}
    return sorted(outcomes, key=lambda o: order[o.source])


def _copy_campaign(source: Path, raw_root: Path, name: str, files: dict[str, str], now: datetime) -> None:
    raw_root.mkdir(parents=True, exist_ok=True)
    staging = raw_root / f"{STAGING_PREFIX}{name}-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        for relative, checksum in files.items():
            destination = staging / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / relative, destination)
            shutil.copystat(source / relative, destination)  # keep the measurement machine's times
            with open(destination, "rb") as handle:
                os.fsync(handle.fileno())
            if sha256_of(destination) != checksum:
                raise ImportRefused(f"{source / relative} changed while it was copied (checksum mismatch); "
                                    f"nothing was imported")
        sidecar = staging / IMPORT_DIR / f"import-{now.strftime('%Y%m%dT%H%M%S%fZ')}.json"
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        write_new_json(sidecar, {
            "schema": 1, "original_name": source.name, "imported_as": name, "source": str(source.resolve()),
            "imported_at": now.isoformat(), "imported_on": socket.gethostname(), "sha256": files,
        })
        target = raw_root / name
        if target.exists():
            raise ImportRefused(f"{target} appeared while importing; nothing was imported")
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
