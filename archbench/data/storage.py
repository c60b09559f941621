"""Raw data on disk (contracts.md section 2): write-once files, campaign directories, loading.

Every file is written to a temporary file in the same directory, fsynced, then
`os.link`ed to its name: link() fails if the name exists, so nothing is ever
replaced, and a reader sees either no file or the whole file. A trial's JSON
record is written after its output files and is the commit marker: a trial is
finished exactly when `<trial-id>.json` exists. Output files without their
JSON can only come from a crash in the middle of a commit; they are reported,
never overwritten.
"""
from __future__ import annotations

import json
import os
import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CAMPAIGN_FILE = "campaign.json"
EXECUTED_DIR = "executed"
TEMP_PREFIX = ".tmp-"


class StorageError(RuntimeError):
    """The campaign directory is not in a state the runner may write to."""


class CampaignMismatchError(StorageError):
    """A campaign exists with different parameters."""


class StorageWriteError(StorageError):
    """A campaign's file could not be written (disk full, read-only file system, ...): one line naming the
    campaign and the path; the trial being committed was rolled back, so nothing partial is left."""

    def __init__(self, campaign: str, path: Path, error: OSError) -> None:
        reason = error.strerror or str(error)
        super().__init__(f"campaign {campaign}: cannot write {path}: {reason}")
        self.path = Path(path)


class IncompleteTrialError(StorageError):
    """Output files exist without the trial's JSON record (a commit was interrupted by a crash)."""


# --------------------------------------------------------------------------- write-once files


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new_file(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically; FileExistsError if `path` exists (it is never replaced)."""
    path = Path(path)
    fd, temp_name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(temp_name, path)
    finally:
        os.unlink(temp_name)
    _fsync_directory(path.parent)


def to_json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_new_json(path: Path, value: Any) -> None:
    write_new_file(path, to_json_bytes(value))


@contextmanager
def signals_deferred(signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """Hold SIGINT/SIGTERM until the block ends, then act on them as before.

    Used around a trial's commit so an interrupt cannot land between its output
    files and its JSON. Python signal handlers only exist in the main thread;
    elsewhere the block runs unprotected.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, _frame: received.append(signum)) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(received):
            handler = previous[sig]
            if callable(handler):
                handler(sig, None)
            elif handler != signal.SIG_IGN:
                raise KeyboardInterrupt


# --------------------------------------------------------------------------- a campaign directory


def trial_id_of(file_name: str) -> str:
    """Trial ids contain no dots, so the id of `<trial-id>.<anything>` ends at the first dot."""
    return file_name.split(".", 1)[0]


@dataclass
class CampaignStore:
    """Write access to `data/raw/<campaign>/`."""

    path: Path

    @property
    def meta_path(self) -> Path:
        return self.path / CAMPAIGN_FILE

    def read_meta(self) -> dict[str, Any] | None:
        if not self.meta_path.exists():
            return None
        return json.loads(self.meta_path.read_text(encoding="utf-8"))

    def create(self, meta: Mapping[str, Any]) -> None:
        """Create the directory and write campaign.json (once: FileExistsError if it exists)."""
        created = not self.path.exists()
        failed = self.path
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            failed = self.meta_path
            write_new_json(self.meta_path, dict(meta))
        except FileExistsError:
            raise
        except OSError as error:
            if created and self.path.is_dir() and not any(self.path.iterdir()):
                self.path.rmdir()  # an empty directory this call made: no campaign without its campaign.json
            raise StorageWriteError(self.path.name, failed, error) from error

    def trial_record_path(self, trial_id: str) -> Path:
        return self.path / f"{trial_id}.json"

    def _record_files(self) -> dict[str, list[str]]:
        """trial id -> the names of its files, temporary files and subdirectories left out."""
        files: dict[str, list[str]] = {}
        if not self.path.is_dir():
            return files
        for entry in sorted(self.path.iterdir()):
            if entry.name.startswith(".") or entry.name == CAMPAIGN_FILE or not entry.is_file():
                continue
            files.setdefault(trial_id_of(entry.name), []).append(entry.name)
        return files

    def finished_trial_ids(self) -> set[str]:
        return {tid for tid, names in self._record_files().items() if f"{tid}.json" in names}

    def incomplete_trials(self) -> dict[str, list[str]]:
        """Trials with output files but no JSON record: trial id -> file names."""
        return {tid: names for tid, names in self._record_files().items() if f"{tid}.json" not in names}

    def check_no_incomplete_trials(self) -> None:
        incomplete = self.incomplete_trials()
        if incomplete:
            listing = ", ".join(str(self.path / name) for names in incomplete.values() for name in names)
            raise IncompleteTrialError(
                f"{self.path} holds output files without their trial record (a run crashed while "
                f"committing): {listing}. They are never overwritten: inspect them, then move them away "
                f"to let the campaign re-run those trials."
            )

    def commit_trial(self, trial_id: str, outputs: Mapping[str, bytes], record: Mapping[str, Any]) -> None:
        """Write a trial's output files, then its JSON record last, with SIGINT/SIGTERM held meanwhile."""
        names = [*outputs, f"{trial_id}.json"]
        for name in names:
            if trial_id_of(name) != trial_id:
                raise ValueError(f"{name} is not a file of trial {trial_id}")
        existing = [name for name in names if (self.path / name).exists()]
        if existing:
            raise FileExistsError(f"trial {trial_id} already has {', '.join(existing)} in {self.path}; not overwriting")
        written: list[Path] = []
        current = self.trial_record_path(trial_id)
        with signals_deferred():
            try:
                for name, data in outputs.items():
                    current = self.path / name
                    write_new_file(current, data)
                    written.append(current)
                current = self.trial_record_path(trial_id)
                write_new_json(current, dict(record))
            except FileExistsError:
                raise
            except OSError as error:
                # The trial was never committed (its record is written last): remove what this commit wrote, so
                # the campaign holds no output without its record and resumes cleanly once there is room.
                for path in written:
                    path.unlink(missing_ok=True)
                raise StorageWriteError(self.path.name, current, error) from error


# --------------------------------------------------------------------------- reading (contracts.md section 5)


@dataclass
class Campaign:
    """A campaign as stored: campaign.json as `meta`, the trial records in execution order."""

    path: Path
    meta: dict[str, Any]
    trials: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.meta.get("campaign") or self.path.name)


def load_campaign(campaign_dir: Path | str) -> Campaign:
    campaign_dir = Path(campaign_dir)
    meta_path = campaign_dir / CAMPAIGN_FILE
    if not meta_path.is_file():
        raise FileNotFoundError(f"{campaign_dir} is not a campaign directory: no {CAMPAIGN_FILE}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    trials = []
    for path in sorted(campaign_dir.glob("*.json")):
        if path.name == CAMPAIGN_FILE or path.name.startswith("."):
            continue
        trials.append(json.loads(path.read_text(encoding="utf-8")))
    trials.sort(key=lambda r: (r.get("order_index") is None, r.get("order_index") or 0, r.get("trial_id", "")))
    return Campaign(path=campaign_dir, meta=meta, trials=trials)


def list_campaigns(raw_root: Path | str) -> list[str]:
    raw_root = Path(raw_root)
    if not raw_root.is_dir():
        return []
    return sorted(p.name for p in raw_root.iterdir() if (p / CAMPAIGN_FILE).is_file())
