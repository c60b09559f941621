"""`make artifact` / `make check-artifact`: the archive holds what the report used, and the check names
every tampered, missing or unlisted file; with a rebuild (integration) the archived macros and tables come back
byte for byte from the archived raw data.

The fast tests pack a tiny git repository (a few source files) with the fixture campaign fixture-minimal, so the
archive takes well under a second; the integration tests build the report of fixture-minimal and pack this
repository's working tree (the code that built it), then run the full check, rebuild included.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from archbench.cli import artifact_check
from archbench.cli.artifact import (
    SUMS_NAME,
    AnalysisArgs,
    ArtifactError,
    Sources,
    build_artifact,
    sha256_file,
)
from archbench.cli.main import main as cli_main
from archbench.data import manifest
from archbench.render.campaigns import CAMPAIGNS_FILE, Campaigns, Choice, resolve
from archbench.report.build import ReportPaths, build_report
from archbench.studies import STUDIES

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "campaigns" / "fixture-minimal"
CAMPAIGN = "fixture-minimal"
ROBUSTNESS = Path("data/raw/reference-robustness/robustness.json")
ARGS_TEXT = Campaigns((Choice("main", CAMPAIGN, "given", "", (CAMPAIGN,)),)).to_json()


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
        timeout=60,
    )


def raw_root_with_fixture(root: Path) -> Path:
    raw = root / "raw"
    shutil.copytree(FIXTURE, raw / CAMPAIGN)
    manifest.update(raw)
    return raw


def outputs(root: Path) -> tuple[Path, Path]:
    """A processed dir naming the campaign and a paper dir with a stand-in report (no rebuild in the fast tests)."""
    processed, paper = root / "processed", root / "paper"
    processed.mkdir()
    (processed / CAMPAIGNS_FILE).write_text(ARGS_TEXT)
    (processed / "summary.csv").write_text("config_id,mean\nx,1\n")
    (paper / "generated").mkdir(parents=True)
    (paper / "generated" / "macros.tex").write_text("\\newcommand{\\abX}{1}\n")
    (paper / "report.pdf").write_bytes(b"%PDF-1.5 stand-in\n")
    return processed, paper


@pytest.fixture
def tiny_repo(tmp_path: Path) -> Sources:
    repo = tmp_path / "repo"
    (repo / "archbench").mkdir(parents=True)
    (repo / "archbench" / "__init__.py").write_text('"""stand-in package"""\n')
    (repo / "paper" / "templates").mkdir(parents=True)
    shutil.copytree(REPO / "paper" / "templates" / "artifact", repo / "paper" / "templates" / "artifact")
    (repo / "README.md").write_text("stand-in\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "stand-in")
    processed, paper = outputs(tmp_path)
    return Sources(repo_root=repo, raw_root=raw_root_with_fixture(tmp_path), processed_dir=processed, paper_dir=paper)


def members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def repack(archive: Path, target: Path, change) -> Path:
    """A copy of the archive with `change(files)` applied to {member name: content} (no sidecar)."""
    files = members(archive)
    change(files)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size = len(files[name])
            tar.addfile(info, io.BytesIO(files[name]))
    target.write_bytes(gzip.compress(buffer.getvalue()))
    return target


# --------------------------------------------------------------------------- fast


def test_analysis_args_name_the_study_campaigns_they_imply(tmp_path: Path) -> None:
    for name in ("c", "e", "l-closed", "l", "l-001", "n", "n-loopback", "s"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "campaign.json").write_text("{}")
    (tmp_path / "rob").mkdir()
    (tmp_path / "rob" / "robustness.json").write_text("{}")
    chosen = resolve(STUDIES, "main=c,echo=e,latency=l,network=n,sources=s,robustness=rob", raw_root=tmp_path)
    args = AnalysisArgs.parse(chosen.to_json())
    assert args.raw_campaigns(tmp_path) == ["c", "e", "l-closed", "l", "l-001", "n", "n-loopback", "s", "rob"]
    assert args.report_arguments() == ["--campaigns", "main=c,echo=e,latency=l,network=n,sources=s,robustness=rob"]
    with pytest.raises(ArtifactError):
        AnalysisArgs.parse("campaign=c echo=e")  # not a record of the campaigns
    absent = Campaigns((Choice("main", "absent", "given"),)).to_json()
    with pytest.raises(ArtifactError):
        AnalysisArgs.parse(absent).raw_campaigns(tmp_path)


def test_clean_archive_holds_the_parts_with_checksums(tiny_repo: Sources, tmp_path: Path) -> None:
    built = build_artifact(tmp_path / "dist", sources=tiny_repo)
    assert not built.dirty and "-dirty" not in built.path.name
    assert built.path.name.startswith("archbench-") and built.path.name.endswith(f"-{CAMPAIGN}.tar.gz")
    sidecar = built.path.with_name(built.path.name + ".sha256")
    assert sidecar.read_text() == f"{sha256_file(built.path)}  {built.path.name}\n"
    files = members(built.path)
    top = built.path.name.removesuffix(".tar.gz")
    assert {
        f"{top}/{p}"
        for p in (
            "ARTIFACT.md",
            SUMS_NAME,
            "archbench/__init__.py",
            "paper/report.pdf",
            "paper/generated/macros.tex",
            f"data/processed/{CAMPAIGNS_FILE}",
            f"data/raw/{CAMPAIGN}/campaign.json",
            f"data/raw/manifests/{CAMPAIGN}.sha256",
        )
    } <= set(files)
    sums = artifact_check.parse_sums(files[f"{top}/{SUMS_NAME}"].decode())
    assert set(sums) == {name.removeprefix(top + "/") for name in files} - {SUMS_NAME}
    manifest_lines = files[f"{top}/data/raw/manifests/{CAMPAIGN}.sha256"].decode().splitlines()
    assert len(manifest_lines) == len(list(FIXTURE.iterdir())) and all(
        f"  {CAMPAIGN}/" in line for line in manifest_lines
    )
    text = files[f"{top}/ARTIFACT.md"].decode()
    assert "git archive" in text and "host `" in text and "make check-artifact" in text
    with tarfile.open(built.path) as tar:  # fixed owners and times: the archive does not depend on who packed it
        assert {(m.uid, m.gid, m.uname) for m in tar.getmembers()} == {(0, 0, "")}
        assert len({m.mtime for m in tar.getmembers()}) == 1
    assert not list((tmp_path / "dist").glob(".*.tmp")), "the temporary file must be renamed, not left behind"


def test_dirty_tree_is_refused_unless_allowed(tiny_repo: Sources, tmp_path: Path) -> None:
    (tiny_repo.repo_root / "archbench" / "new.py").write_text("x = 1\n")
    with pytest.raises(ArtifactError) as refused:
        build_artifact(tmp_path / "dist", sources=tiny_repo)
    assert refused.value.usage and "archbench/new.py" in str(refused.value)
    built = build_artifact(tmp_path / "dist", allow_dirty=True, sources=tiny_repo)
    assert built.dirty and "-dirty-" in built.path.name
    files = members(built.path)
    top = built.path.name.removesuffix(".tar.gz")
    assert f"{top}/archbench/new.py" in files and "dirty" in files[f"{top}/ARTIFACT.md"].decode()


def test_damaged_raw_data_is_not_packed(tiny_repo: Sources, tmp_path: Path) -> None:
    victim = next(tiny_repo.raw().glob(f"{CAMPAIGN}/*.wrk.txt"))
    victim.write_bytes(victim.read_bytes() + b"x")
    with pytest.raises(ArtifactError, match=victim.name):
        build_artifact(tmp_path / "dist", sources=tiny_repo)


@pytest.fixture
def packed(tiny_repo: Sources, tmp_path: Path) -> Path:
    return build_artifact(tmp_path / "dist", sources=tiny_repo).path


def test_one_flipped_raw_byte_is_named(packed: Path, tmp_path: Path) -> None:
    top = packed.name.removesuffix(".tar.gz")
    victim = f"data/raw/{CAMPAIGN}/thread_pool-request-queue-t1-c10-lt1-d1s-r01.wrk.txt"

    def flip(files: dict[str, bytes]) -> None:
        content = bytearray(files[f"{top}/{victim}"])
        content[10] ^= 0x01
        files[f"{top}/{victim}"] = bytes(content)

    result = artifact_check.check_artifact(repack(packed, tmp_path / "tampered.tar.gz", flip), pdf=False)
    assert not result.ok
    assert any(p.startswith("modified: " + victim) for p in result.problems), result.problems
    assert all(victim in p for p in result.problems), "only the flipped file may be named"


def test_flipped_archive_byte_fails_its_sidecar(packed: Path) -> None:
    content = bytearray(packed.read_bytes())
    content[len(content) // 2] ^= 0xFF
    packed.write_bytes(bytes(content))
    result = artifact_check.check_artifact(packed, pdf=False)
    assert f"modified: {packed.name} (its SHA-256 differs from {packed.name}.sha256)" in result.problems
    assert not result.ok


def test_missing_and_extra_files_are_errors(packed: Path, tmp_path: Path) -> None:
    top = packed.name.removesuffix(".tar.gz")

    def change(files: dict[str, bytes]) -> None:
        del files[f"{top}/paper/report.pdf"]
        files[f"{top}/data/raw/{CAMPAIGN}/extra.txt"] = b"not packed by make artifact\n"

    result = artifact_check.check_artifact(repack(packed, tmp_path / "changed.tar.gz", change), pdf=False)
    assert "missing: paper/report.pdf (listed in SHA256SUMS)" in result.problems
    assert f"not listed in SHA256SUMS: data/raw/{CAMPAIGN}/extra.txt" in result.problems


def test_cli_exit_status(packed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["check-artifact", str(tmp_path / "absent.tar.gz")]) == 2
    top = packed.name.removesuffix(".tar.gz")
    tampered = repack(packed, tmp_path / "t.tar.gz", lambda files: files.pop(f"{top}/ARTIFACT.md"))
    assert cli_main(["check-artifact", str(tampered), "--no-pdf"]) == 1
    assert "missing: ARTIFACT.md" in capsys.readouterr().err


# --------------------------------------------------------------------------- integration: the full check


@pytest.fixture(scope="module")
def real_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fixture-minimal's report built by this tree's code, packed with this tree's source (dirty or not)."""
    root = tmp_path_factory.mktemp("artifact")
    raw = raw_root_with_fixture(root)
    # The robustness appendix names the file it shows relative to the repository: give it one that is under
    # data/raw both here and in the unpacked tree (the same content), as `make analysis` does.
    shutil.copytree(REPO / ROBUSTNESS.parent, raw / ROBUSTNESS.parent.name)
    manifest.update(raw)
    processed, paper = root / "processed", root / "paper"
    # The build records the campaigns it read in processed/campaigns.json, which the archive carries.
    build_report(
        {"main": CAMPAIGN, "robustness": str(ROBUSTNESS)},
        ReportPaths(raw, processed, paper / "generated", paper / "figures"),
    )
    sources = Sources(repo_root=REPO, raw_root=raw, processed_dir=processed, paper_dir=paper)
    return build_artifact(root / "dist", allow_dirty=True, sources=sources).path


@pytest.mark.integration
def test_archive_of_a_small_campaign_passes_the_check(real_archive: Path, tmp_path: Path) -> None:
    result = artifact_check.check_artifact(real_archive, keep=tmp_path / "unpacked", pdf=False)
    assert result.ok, result.problems
    compared = [n for n in result.notes if "processed CSVs compared byte for byte" in n]
    assert compared and " and 0 processed" not in compared[0], result.notes
    assert (result.tree / "paper" / "generated" / "section-artifact.tex").is_file()


@pytest.mark.integration
def test_a_changed_macro_is_named_by_the_rebuild(real_archive: Path, tmp_path: Path) -> None:
    """Checksums made to agree with a changed number: only the rebuild can tell, and it names the file."""
    top = real_archive.name.removesuffix(".tar.gz")
    macros = f"{top}/paper/generated/macros.tex"

    def change(files: dict[str, bytes]) -> None:
        files[macros] = files[macros].replace(b"{fixture-minimal}", b"{fixture-maximal}", 1)
        sums = files[f"{top}/{SUMS_NAME}"].decode().splitlines()
        digest = hashlib.sha256(files[macros]).hexdigest()
        fixed = [
            f"{digest}  paper/generated/macros.tex" if line.endswith("  paper/generated/macros.tex") else line
            for line in sums
        ]
        files[f"{top}/{SUMS_NAME}"] = ("\n".join(fixed) + "\n").encode()

    result = artifact_check.check_artifact(repack(real_archive, tmp_path / "m.tar.gz", change), pdf=False)
    assert result.problems == ["differs from the archived one: paper/generated/macros.tex"]


def test_the_campaigns_the_cross_host_comparison_reads_are_archived_too(tmp_path: Path) -> None:
    # The report compares its campaign with the shipped reference and with every campaign imported from another
    # machine; a rebuild from the archive must find them, or its numbers differ from the archived ones.
    for name in ("c", "reference", "imported", "unrelated"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "campaign.json").write_text("{}")
    (tmp_path / "imported" / "import").mkdir()
    # The catalogue's crossos entry names them: the resolution records them, the archive follows the record.
    chosen = resolve(STUDIES, "main=c", raw_root=tmp_path, processed_dir=tmp_path / "processed", host="nohost")
    args = AnalysisArgs.parse(chosen.to_json())
    assert args.raw_campaigns(tmp_path) == ["c", "reference", "imported"]
    # A record that names no crossos choice archives its main campaign alone: nothing is guessed beside it.
    alone = AnalysisArgs.parse(Campaigns((Choice("main", "c", "given", "", ("c",)),)).to_json())
    assert alone.raw_campaigns(tmp_path) == ["c"]
