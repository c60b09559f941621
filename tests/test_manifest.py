"""The checksum manifest of data/raw: damage is reported, the index only grows."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from archbench.cli import main as cli
from archbench.data import manifest

REPO = Path(__file__).resolve().parents[1]


def make_raw(root: Path) -> Path:
    (root / "c1" / "executed").mkdir(parents=True)
    (root / "c1" / "campaign.json").write_text('{"schema": 1}\n')
    (root / "c1" / "t-r01.json").write_text('{"status": "ok"}\n')
    (root / "c1" / "t-r01.wrk.txt").write_text("Requests/sec: 1.00\n")
    (root / "c1" / "executed" / "run.ipynb").write_text("{}\n")
    return root


def test_update_lists_every_file_in_sha256sum_format(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    added = manifest.update(raw)
    assert added == ["c1/campaign.json", "c1/executed/run.ipynb", "c1/t-r01.json", "c1/t-r01.wrk.txt"]
    lines = (raw / manifest.MANIFEST_NAME).read_text().splitlines()
    expected = hashlib.sha256(b'{"schema": 1}\n').hexdigest()
    assert lines[0] == f"{expected}  c1/campaign.json"
    # sha256sum itself agrees, so the check needs nothing of this package
    done = subprocess.run(
        ["sha256sum", "--check", "--quiet", manifest.MANIFEST_NAME], cwd=raw, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert manifest.verify(raw).intact and manifest.verify(raw).unlisted == []


def test_modified_and_missing_files_are_detected(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    manifest.update(raw)
    (raw / "c1" / "t-r01.wrk.txt").write_text("Requests/sec: 2.00\n")
    (raw / "c1" / "t-r01.json").unlink()
    check = manifest.verify(raw)
    assert not check.intact
    assert check.modified == ["c1/t-r01.wrk.txt"] and check.missing == ["c1/t-r01.json"]


def test_new_files_are_added_but_damage_is_never_recorded(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    manifest.update(raw)
    (raw / "c1" / "t-r02.json").write_text('{"status": "failed"}\n')
    check = manifest.verify(raw)
    assert check.intact and check.unlisted == ["c1/t-r02.json"]  # new data is not damage
    assert manifest.update(raw) == ["c1/t-r02.json"]
    before = (raw / manifest.MANIFEST_NAME).read_text()
    (raw / "c1" / "campaign.json").write_text('{"schema": 2}\n')
    (raw / "c1" / "t-r03.json").write_text("{}\n")
    with pytest.raises(manifest.ManifestConflict, match="modified: c1/campaign.json"):
        manifest.update(raw)
    assert (raw / manifest.MANIFEST_NAME).read_text() == before  # nothing changed, nothing added


def test_cli_exit_status_says_whether_raw_data_is_intact(
    tmp_path: Path, repo_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    raw = make_raw(tmp_path / "raw")
    arguments = ["manifest", "--raw-root", str(raw)]
    # In this process where the status is all that is looked at (a `python -m archbench` takes seconds to start).
    assert cli.main([*arguments, "--update"]) == 0
    assert cli.main(arguments) == 0
    capsys.readouterr()
    (raw / "c1" / "t-r01.json").unlink()
    # The real command once: its exit status, as make verify sees it.
    run = [sys.executable, "-m", "archbench", *arguments]
    done = subprocess.run(run, cwd=REPO, env=repo_env, capture_output=True, text=True)
    assert done.returncode == 1 and "missing: c1/t-r01.json" in done.stdout


def test_the_shipped_raw_data_matches_its_manifest() -> None:
    """Every raw file committed with the repository is as it was measured."""
    raw = REPO / "data" / "raw"
    if not (raw / manifest.MANIFEST_NAME).exists():
        pytest.fail(
            "data/raw/MANIFEST.sha256 is missing: run `make verify` after `python -m archbench manifest --update`"
        )
    check = manifest.verify(raw)
    assert check.intact, check.describe()
