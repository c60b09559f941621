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
    lines = manifest.manifest_path(raw, "c1").read_text().splitlines()
    expected = hashlib.sha256(b'{"schema": 1}\n').hexdigest()
    assert lines[0] == f"{expected}  c1/campaign.json" and len(lines) == 4
    # sha256sum itself agrees, so the check needs nothing of this package
    done = subprocess.run(
        ["sha256sum", "--check", "--quiet", "manifests/c1.sha256"], cwd=raw, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert manifest.verify(raw).intact and manifest.verify(raw).unlisted == []


def test_a_new_campaign_writes_its_own_manifest_and_leaves_the_others_alone(tmp_path: Path) -> None:
    """A campaign measured here adds a manifest file; the shipped campaigns' files stay byte for byte as they were."""
    raw = make_raw(tmp_path / "raw")
    manifest.update(raw)
    shipped = manifest.manifest_path(raw, "c1")
    before, modified_at = shipped.read_bytes(), shipped.stat().st_mtime_ns
    (raw / "c2").mkdir()
    (raw / "c2" / "campaign.json").write_text("{}\n")
    assert manifest.update(raw) == ["c2/campaign.json"]
    assert shipped.read_bytes() == before and shipped.stat().st_mtime_ns == modified_at
    assert manifest.manifest_path(raw, "c2").read_text().endswith("  c2/campaign.json\n")
    assert sorted(p.name for p in (raw / manifest.MANIFEST_DIR).iterdir()) == ["c1.sha256", "c2.sha256"]
    assert manifest.update(raw) == []  # nothing new: nothing written


def test_the_shipped_manifest_is_read_and_never_written(tmp_path: Path) -> None:
    """data/raw/MANIFEST.sha256 is the committed record: its entries are checked, and a new trial of a shipped
    campaign goes to that campaign's own manifest."""
    raw = make_raw(tmp_path / "raw")
    manifest.update(raw)
    shipped_text = manifest.manifest_path(raw, "c1").read_text()
    manifest.manifest_path(raw, "c1").unlink()
    (raw / manifest.SHIPPED_MANIFEST).write_text(shipped_text)
    (raw / "c1" / "t-r01.json").write_text('{"status": "changed"}\n')  # damage the shipped manifest must reveal
    assert manifest.verify(raw).modified == ["c1/t-r01.json"]
    (raw / "c1" / "t-r01.json").write_text('{"status": "ok"}\n')
    assert manifest.verify(raw).intact and manifest.verify(raw).unlisted == []
    assert manifest.update(raw) == [] and not manifest.manifest_path(raw, "c1").exists()
    (raw / "c1" / "t-r02.json").write_text("{}\n")
    assert manifest.update(raw) == ["c1/t-r02.json"]
    assert (raw / manifest.SHIPPED_MANIFEST).read_text() == shipped_text
    assert manifest.manifest_path(raw, "c1").read_text().endswith("  c1/t-r02.json\n")
    assert len(manifest.manifest_path(raw, "c1").read_text().splitlines()) == 1


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
    before = manifest.manifest_path(raw, "c1").read_text()
    (raw / "c1" / "campaign.json").write_text('{"schema": 2}\n')
    (raw / "c1" / "t-r03.json").write_text("{}\n")
    with pytest.raises(manifest.ManifestConflict, match="modified: c1/campaign.json"):
        manifest.update(raw)
    assert manifest.manifest_path(raw, "c1").read_text() == before  # nothing changed, nothing added


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
    if not manifest.manifest_files(raw):
        pytest.fail("data/raw has no manifest: run `make verify` after `python -m archbench manifest --update`")
    check = manifest.verify(raw)
    assert check.intact, check.describe()
    # every raw file the repository commits is listed (a tree without git metadata has no commit to compare)
    listing = subprocess.run(["git", "ls-files", "data/raw"], cwd=REPO, capture_output=True, text=True)
    committed = [p.removeprefix("data/raw/") for p in listing.stdout.split()] if listing.returncode == 0 else []
    listed = manifest.read_manifest(raw)
    files = [p for p in committed if manifest.campaign_of(p) not in (manifest.MANIFEST_DIR, manifest.SHIPPED_MANIFEST)]
    assert [p for p in files if p not in listed] == []


def test_a_path_listed_in_two_manifests_must_have_one_digest(tmp_path: Path) -> None:
    """The shipped campaigns are listed in MANIFEST.sha256 and again in their committed per-campaign manifests."""
    raw = make_raw(tmp_path / "raw")
    manifest.update(raw)
    (own,) = manifest.manifest_files(raw)
    (raw / manifest.SHIPPED_MANIFEST).write_text(own.read_text())
    assert manifest.verify(raw).intact  # the same lines twice
    digest = "0" * 64
    (raw / manifest.SHIPPED_MANIFEST).write_text(f"{digest}  c1/campaign.json\n")
    with pytest.raises(manifest.ManifestConflict, match="another digest"):
        manifest.read_manifest(raw)
