"""`python -m archbench import`: campaigns from another machine, byte for byte, never overwriting."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from archbench.cli.main import main
from archbench.data.importer import ImportRefused, import_campaigns, manifest
from archbench.data.storage import list_campaigns, load_campaign


def make_campaign(root: Path, name: str, trials: int = 2, marker: str = "") -> Path:
    """A small campaign as the runner writes it: campaign.json, records, outputs, an executed notebook."""
    path = root / name
    (path / "executed").mkdir(parents=True)
    ids = [f"epoll-c16-lt1-d1s-r{k:02d}" for k in range(1, trials + 1)]
    (path / "campaign.json").write_text(json.dumps({"schema": 1, "campaign": name, "plan": ids}) + "\n")
    for index, trial_id in enumerate(ids):
        (path / f"{trial_id}.json").write_text(
            json.dumps({"schema": 1, "trial_id": trial_id, "campaign": name, "order_index": index, "status": "ok"})
            + "\n"
        )
        (path / f"{trial_id}.wrk.txt").write_bytes(f"wrk output {trial_id}{marker}\r\n\x00binary".encode())
        (path / f"{trial_id}.server.txt").write_bytes(b"listening on 127.0.0.1:1\n")
    (path / "executed" / "run_trials-20261121T100000Z.ipynb").write_text("{}")
    os.utime(path / "campaign.json", (1_700_000_000, 1_700_000_000))
    return path


def tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_import_copies_every_campaign_byte_for_byte(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    make_campaign(theirs, "default-hostA")
    make_campaign(theirs, "echo-hostA", trials=3)
    (theirs / "not-a-campaign").mkdir()
    outcomes = import_campaigns(theirs, ours)
    assert [(o.name, o.action, o.files) for o in outcomes] == [
        ("default-hostA", "copied", 8),
        ("echo-hostA", "copied", 11),
    ]
    assert list_campaigns(ours) == ["default-hostA", "echo-hostA"]
    for name in ("default-hostA", "echo-hostA"):
        copied = tree(ours / name)
        sidecars = [k for k in copied if k.startswith("import/")]
        assert len(sidecars) == 1
        assert {k: v for k, v in copied.items() if k not in sidecars} == tree(theirs / name)
        sidecar = json.loads(copied[sidecars[0]])
        assert (sidecar["original_name"], sidecar["imported_as"]) == (name, name)
        assert sidecar["sha256"] == manifest(theirs / name)
    # Times of the measurement machine are kept; the sidecar is not a trial record.
    assert (ours / "default-hostA" / "campaign.json").stat().st_mtime == 1_700_000_000
    assert len(load_campaign(ours / "default-hostA").trials) == 2
    assert [p.name for p in ours.iterdir() if p.name.startswith(".")] == []  # no staging left


def test_importing_identical_content_again_is_a_no_op(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    make_campaign(theirs, "c1")
    import_campaigns(theirs, ours)
    before = tree(ours)
    outcomes = import_campaigns(theirs / "c1", ours)  # a campaign directory works as PATH too
    assert [(o.name, o.action) for o in outcomes] == [("c1", "identical")]
    assert "nothing done" in outcomes[0].describe()
    assert tree(ours) == before


def test_a_name_with_other_content_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    make_campaign(theirs, "aaa-new")
    make_campaign(theirs, "default-vm", marker=" from host A")
    make_campaign(ours, "default-vm", marker=" from host B")
    before = tree(ours)
    with pytest.raises(ImportRefused) as caught:
        import_campaigns(theirs, ours)
    message = str(caught.value)
    assert "campaign 'default-vm' already exists" in message and "with different content" in message
    assert "2 differ (epoll-c16-lt1-d1s-r01.wrk.txt, epoll-c16-lt1-d1s-r02.wrk.txt)" in message
    assert "--as default-vm-" in message
    assert tree(ours) == before  # not even the non-colliding campaign was copied
    assert sorted(p.name for p in ours.iterdir()) == ["default-vm"]


def test_as_imports_under_a_new_name_without_editing_any_file(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    make_campaign(theirs, "default-vm", marker=" A")
    make_campaign(ours, "default-vm", marker=" B")
    outcomes = import_campaigns(theirs / "default-vm", ours, rename="default-vm-hostA")
    assert [(o.original_name, o.name, o.action) for o in outcomes] == [("default-vm", "default-vm-hostA", "copied")]
    copied = tree(ours / "default-vm-hostA")
    assert json.loads(copied["campaign.json"])["campaign"] == "default-vm"  # unedited
    sidecar = json.loads(next(v for k, v in copied.items() if k.startswith("import/")))
    assert (sidecar["original_name"], sidecar["imported_as"]) == ("default-vm", "default-vm-hostA")
    assert b" B" in (ours / "default-vm" / "epoll-c16-lt1-d1s-r01.wrk.txt").read_bytes()  # ours untouched
    # Same again: identical (the sidecar is not part of the comparison).
    assert import_campaigns(theirs / "default-vm", ours, rename="default-vm-hostA")[0].action == "identical"


def test_as_needs_exactly_one_campaign_and_a_safe_name(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    make_campaign(theirs, "a")
    make_campaign(theirs, "b")
    with pytest.raises(ValueError, match="--as renames one campaign, but .* holds 2: a, b"):
        import_campaigns(theirs, tmp_path / "ours", rename="x")
    with pytest.raises(ValueError, match="--as: '../x' is not a file-system-safe name"):
        import_campaigns(theirs / "a", tmp_path / "ours", rename="../x")
    with pytest.raises(ValueError, match="'manifests', data/raw's directory of checksum manifests"):
        import_campaigns(theirs / "a", tmp_path / "ours", rename="manifests")
    with pytest.raises(FileNotFoundError, match="holds no campaign"):
        import_campaigns(tmp_path / "theirs" / "a" / "executed", tmp_path / "ours")


def test_import_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    make_campaign(theirs, "c1", marker=" A")
    assert main(["import", str(theirs), "--raw-root", str(ours)]) == 0
    assert "c1: copied 8 files" in capsys.readouterr().out
    make_campaign(tmp_path / "other", "c1", marker=" B")
    assert main(["import", str(tmp_path / "other"), "--raw-root", str(ours)]) == 1
    assert "error: campaign 'c1' already exists" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "other" / "c1"), "--raw-root", str(ours), "--as", "c1-B"]) == 0
    assert "c1 as c1-B: copied 8 files" in capsys.readouterr().out
