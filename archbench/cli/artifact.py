"""`python -m archbench artifact`: the study in one checked archive (`make artifact`).

    python -m archbench artifact [--allow-dirty] [--dist dist]
    python -m archbench check-artifact ARCHIVE [--no-pdf] [--keep DIR]    (archbench.cli.artifact_check)

The archive `dist/archbench-<commit>[-dirty]-<campaign>.tar.gz` holds, under one top-level directory of the
same name: the source (`git archive HEAD` without data/raw; with --allow-dirty the working tree's tracked and
untracked-but-not-ignored files instead, since those produced the report), the campaigns the report used
under data/raw/ with their manifests (data/raw/manifests/<campaign>.sha256), data/processed/ (its executed analysis notebook
and `campaigns.json`, which names the campaigns), the executed notebooks as HTML when paper/notebooks/*.html
exists (the .ipynb copies come with data/processed/executed and data/raw/<campaign>/executed), paper/report.pdf
with paper/generated/ and paper/figures/, an ARTIFACT.md (paper/templates/artifact/ARTIFACT.md.j2) and a
SHA256SUMS of every other file. The archive is written to a temporary file and renamed, with deterministic
member order, owners and times; its SHA-256 is printed and written beside it (`<archive>.sha256`, the
sha256sum format).

The campaigns come from data/processed/campaigns.json, which every analysis writes (archbench.render.campaigns:
each study's campaign and the campaigns read beside it, such as the latency study's `-closed` and `-001` and the
network study's `-loopback`); a robustness result under data/raw/ brings its directory.
Uncommitted changes under archbench/, servers_c/, paper/ or notebooks/ are refused (exit 2) unless
--allow-dirty; the archive's name then says `-dirty` and so does ARTIFACT.md.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from archbench.config.paths import REPO_ROOT
from archbench.data import manifest, storage
from archbench.render.campaigns import CAMPAIGNS_FILE, Campaigns
from archbench.render.latex import campaign_provenance
from archbench.render.prose import environment as template_environment

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
ANALYSIS_ARGS = Path("data/processed") / CAMPAIGNS_FILE
# Where a change makes the archived source differ from what produced the report.
WATCHED_PATHS = ("archbench", "servers_c", "paper", "notebooks")
SUMS_NAME = "SHA256SUMS"
ARTIFACT_MD = "ARTIFACT.md"
ARTIFACT_TEMPLATE = "artifact/ARTIFACT.md.j2"
# Regenerable outputs the archive carries beside the source (all of them ignored by git).
OUTPUT_DIRS = (Path("data/processed"), Path("paper/generated"), Path("paper/figures"))
REPORT_PDF = Path("paper/report.pdf")
NOTEBOOK_HTML_DIR = Path("paper/notebooks")
# Not part of the record: make's timestamp of the last analysis and its list of the analysis' inputs.
SKIPPED_OUTPUTS = frozenset({".analysis.stamp", ".campaigns.mk"})


class ArtifactError(RuntimeError):
    """The archive cannot be built as asked (exit 1), or the request itself is wrong (`usage`, exit 2)."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True)
class AnalysisArgs:
    """Which campaigns the report used, as the analysis recorded them in data/processed/campaigns.json."""

    campaigns: Campaigns

    @classmethod
    def parse(cls, text: str) -> AnalysisArgs:
        try:
            return cls(Campaigns.from_json(text))
        except (ValueError, KeyError, TypeError) as error:
            raise ArtifactError(f"{ANALYSIS_ARGS} is not a record of the campaigns ({error}); run make paper") from None

    @property
    def campaign(self) -> str:
        return self.campaigns.main

    @property
    def robustness(self) -> str | None:
        """The abuse-suite result when it is a file outside data/raw (a campaign under data/raw travels as one)."""
        name = self.campaigns.get("robustness")
        return name if name and "/" in name else None

    def raw_campaigns(self, raw_root: Path) -> list[str]:
        """The directories under raw_root the report read, in the order a reader meets them."""
        # The cross-OS study's choice is among them (the reference and every imported campaign): without them the
        # rebuilt report would say there is nothing to compare.
        names = self.campaigns.raw_campaigns()
        present = [n for n in names if n and (Path(raw_root) / n).is_dir()]
        if self.campaign not in present:
            raise ArtifactError(f"the report's campaign {self.campaign!r} is not under {raw_root}")
        return present

    def report_arguments(self) -> list[str]:
        """The `python -m archbench.report` arguments that rebuild the report (paths relative to the tree)."""
        return ["--campaigns", self.campaigns.as_text()]


@dataclass(frozen=True)
class Sources:
    """Where the archive's parts are read from (the repository by default; tests point them at fixtures)."""

    repo_root: Path = REPO_ROOT
    raw_root: Path | None = None  # default repo_root/data/raw
    processed_dir: Path | None = None
    paper_dir: Path | None = None

    def raw(self) -> Path:
        return self.raw_root or self.repo_root / "data" / "raw"

    def output_dir(self, relative: Path) -> Path:
        if relative == Path("data/processed") and self.processed_dir is not None:
            return self.processed_dir
        if relative.parts[0] == "paper" and self.paper_dir is not None:
            return self.paper_dir.joinpath(*relative.parts[1:])
        return self.repo_root / relative


@dataclass
class BuiltArtifact:
    path: Path
    sha256: str
    files: int
    campaigns: list[str]
    dirty: bool
    warnings: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- git


def _git(repo_root: Path, *args: str) -> bytes:
    try:
        return subprocess.run(["git", *args], cwd=repo_root, capture_output=True, check=True, timeout=120).stdout
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        detail = getattr(error, "stderr", b"") or b""
        raise ArtifactError(f"git {' '.join(args)} failed in {repo_root}: {detail.decode(errors='replace')}") from error


def short_commit(repo_root: Path) -> str:
    return _git(repo_root, "rev-parse", "--short=12", "HEAD").decode().strip()


def dirty_paths(repo_root: Path) -> list[str]:
    """Uncommitted changes (modified, staged or untracked) under the paths that make the report."""
    status = _git(repo_root, "status", "--porcelain", "-z", "--untracked-files=all", "--", *WATCHED_PATHS)
    return sorted({entry[3:].decode(errors="replace") for entry in status.split(b"\0") if len(entry) > 3})


def stage_source(repo_root: Path, stage: Path, dirty: bool) -> None:
    """The source without data/raw: `git archive HEAD`, or (dirty) the working tree's files git would see."""
    # The notebooks' HTML exports are outputs of the runs (stage_outputs adds those of the report's paper dir).
    pathspec = ["--", ".", ":(exclude)data/raw", f":(exclude){NOTEBOOK_HTML_DIR.as_posix()}/*.html"]
    if not dirty:
        with tarfile.open(fileobj=io.BytesIO(_git(repo_root, "archive", "--format=tar", "HEAD", *pathspec))) as tar:
            tar.extractall(stage, filter="data")
        return
    listed = _git(repo_root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", *pathspec)
    for name in sorted({n.decode() for n in listed.split(b"\0") if n}):
        source = repo_root / name
        if source.is_file() and not source.is_symlink():  # a tracked file deleted in the tree is not in it
            target = stage / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


# --------------------------------------------------------------------------- the parts


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _copy_tree(source: Path, target: Path, skip: Iterable[str] = ()) -> None:
    skipped = frozenset(skip)
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name not in skipped:
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)


def stage_campaigns(raw_root: Path, campaigns: Sequence[str], stage: Path) -> list[str]:
    """Copy the campaigns and their manifest lines; refuse a listed file whose content changed. Returns warnings
    (files the manifest does not list yet)."""
    listed = manifest.read_manifest(raw_root)
    entries: dict[str, str] = {}
    warnings: list[str] = []
    for name in campaigns:
        for path in sorted(p for p in (raw_root / name).rglob("*") if p.is_file()):
            relative = path.relative_to(raw_root).as_posix()
            digest = sha256_file(path)
            if relative not in listed:
                warnings.append(f"data/raw/{relative} is not in its manifest (make verify / manifest --update)")
            elif listed[relative] != digest:
                raise ArtifactError(f"data/raw/{relative} differs from its manifest entry: raw data damaged")
            else:
                entries[relative] = digest
        _copy_tree(raw_root / name, stage / "data" / "raw" / name)
    manifest.write_manifests(stage / "data" / "raw", entries, campaigns)
    return warnings


def stage_outputs(sources: Sources, stage: Path) -> list[str]:
    """data/processed, paper/generated, paper/figures, paper/report.pdf and the notebooks' HTML (what is there)."""
    missing = []
    for relative in OUTPUT_DIRS:
        source = sources.output_dir(relative)
        if source.is_dir():
            _copy_tree(source, stage / relative, SKIPPED_OUTPUTS)
        else:
            missing.append(relative.as_posix())
    pdf = sources.output_dir(REPORT_PDF)
    if pdf.is_file():
        (stage / REPORT_PDF).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(pdf, stage / REPORT_PDF)
    else:
        missing.append(REPORT_PDF.as_posix())
    html_dir = sources.output_dir(NOTEBOOK_HTML_DIR)
    for html in sorted(html_dir.glob("*.html")) if html_dir.is_dir() else ():
        (stage / NOTEBOOK_HTML_DIR).mkdir(parents=True, exist_ok=True)
        shutil.copy2(html, stage / NOTEBOOK_HTML_DIR / html.name)
    return missing


def stage_robustness(sources: Sources, args: AnalysisArgs, stage: Path) -> None:
    """A robustness result outside data/raw and data/processed still travels, at the same relative path."""
    if not args.robustness:
        return
    relative = Path(args.robustness)
    if relative.is_absolute() or ".." in relative.parts:
        raise ArtifactError(f"robustness={args.robustness} is not inside the repository: it cannot be archived")
    if not (stage / relative).is_file() and (sources.repo_root / relative).is_file():
        (stage / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(sources.repo_root / relative, stage / relative)


def campaign_facts(raw_root: Path, name: str) -> dict[str, Any]:
    """What ARTIFACT.md says about one campaign: the machine and when (campaign.json's provenance)."""
    path = raw_root / name
    if not (path / storage.CAMPAIGN_FILE).is_file():
        return {"name": name, "kind": "files"}
    campaign = storage.load_campaign(path)
    provenance = campaign_provenance(campaign.meta, campaign.trials)
    started = sorted(str(r["started_at"]) for r in campaign.trials if r.get("started_at"))
    finished = sorted(str(r["finished_at"]) for r in campaign.trials if r.get("finished_at"))
    return {
        "name": name,
        "kind": "campaign",
        "profile": campaign.meta.get("profile"),
        "trials": len(campaign.trials),
        "created": campaign.meta.get("created_at"),
        "first": started[0] if started else None,
        "last": finished[-1] if finished else None,
        "host": provenance.get("hostname"),
        "cpu": str(provenance.get("cpu_model") or "").strip().splitlines()[0] if provenance.get("cpu_model") else None,
        "cpus": provenance.get("cpu_count"),
        "memory_gib": round(provenance["memory_bytes"] / 2**30) if provenance.get("memory_bytes") else None,
        "kernel": provenance.get("kernel"),
        "os": provenance.get("os"),
        "compiler": provenance.get("compiler"),
        "commit": provenance.get("git_commit"),
        "commit_dirty": provenance.get("git_dirty"),
        "executed": sorted(p.name for p in (path / "executed").glob("*")) if (path / "executed").is_dir() else [],
    }


def render_artifact_md(templates_dir: Path, facts: dict[str, Any]) -> str:
    return template_environment(templates_dir).get_template(ARTIFACT_TEMPLATE).render(**facts)


def write_sums(stage: Path) -> int:
    """SHA256SUMS over every file of the stage (sha256sum's format, so `sha256sum -c SHA256SUMS` checks it)."""
    files = sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*") if p.is_file() and p.name != SUMS_NAME)
    (stage / SUMS_NAME).write_text("".join(f"{sha256_file(stage / f)}  {f}\n" for f in files), encoding="utf-8")
    return len(files)


def write_tarball(stage: Path, top: str, target: Path, mtime: int) -> None:
    """A gzip'd tar of the stage under `top/`, members sorted with fixed owners and times, written atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for path in [stage, *sorted(stage.rglob("*"))]:
                    relative = path.relative_to(stage).as_posix()
                    info = tar.gettarinfo(str(path), arcname=top if relative == "." else f"{top}/{relative}")
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    info.mtime = mtime
                    info.mode = 0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644
                    if path.is_file():
                        with open(path, "rb") as content:
                            tar.addfile(info, content)
                    else:
                        tar.addfile(info)
            gz.flush()
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep the archive from whoever it is handed to
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_sidecar(archive: Path, digest: str) -> Path:
    sidecar = archive.with_name(archive.name + ".sha256")
    temporary = sidecar.with_name(f".{sidecar.name}.tmp")
    temporary.write_text(f"{digest}  {archive.name}\n", encoding="utf-8")
    os.replace(temporary, sidecar)
    return sidecar


# --------------------------------------------------------------------------- the whole


def build_artifact(dist: Path, allow_dirty: bool = False, sources: Sources | None = None) -> BuiltArtifact:
    sources = sources or Sources()
    repo_root = sources.repo_root
    args_file = sources.output_dir(Path("data/processed")) / ANALYSIS_ARGS.name
    if not args_file.is_file():
        raise ArtifactError(f"no {ANALYSIS_ARGS}: run make paper first (it records the campaigns the report used)")
    args = AnalysisArgs.parse(args_file.read_text(encoding="utf-8"))
    changed = dirty_paths(repo_root)
    if changed and not allow_dirty:
        shown = ", ".join(changed[:10]) + (f" and {len(changed) - 10} more" if len(changed) > 10 else "")
        raise ArtifactError(
            f"uncommitted changes under {', '.join(WATCHED_PATHS)}: {shown}. Commit them, or pass --allow-dirty "
            "(make artifact ALLOW_DIRTY=1) for an archive marked -dirty",
            usage=True,
        )
    dirty = bool(changed)
    commit = short_commit(repo_root)
    raw_root = sources.raw()
    campaigns = args.raw_campaigns(raw_root)
    top = f"archbench-{commit}{'-dirty' if dirty else ''}-{args.campaign}"
    commit_time = int(_git(repo_root, "log", "-1", "--format=%ct", "HEAD").decode().strip())
    with tempfile.TemporaryDirectory(prefix="archbench-artifact-") as temporary:
        stage = Path(temporary) / top
        stage.mkdir()
        stage_source(repo_root, stage, dirty)
        warnings = stage_campaigns(raw_root, campaigns, stage)
        missing = stage_outputs(sources, stage)
        stage_robustness(sources, args, stage)
        facts = {
            "name": top,
            "commit": _git(repo_root, "rev-parse", "HEAD").decode().strip(),
            "dirty": dirty,
            "changed": changed,
            "packed_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "args": args,
            "report_arguments": " ".join(args.report_arguments()),
            "campaigns": [campaign_facts(raw_root, name) for name in campaigns],
            "missing": missing,
            "unlisted": warnings,
            "html": sorted(p.name for p in (stage / NOTEBOOK_HTML_DIR).glob("*.html")),
            "executed": sorted(p.name for p in (stage / "data" / "processed" / "executed").glob("*")),
        }
        (stage / ARTIFACT_MD).write_text(render_artifact_md(repo_root / "paper" / "templates", facts), encoding="utf-8")
        files = write_sums(stage)
        target = Path(dist) / f"{top}.tar.gz"
        write_tarball(stage, top, target, commit_time)
    digest = sha256_file(target)
    write_sidecar(target, digest)
    return BuiltArtifact(target, digest, files + 1, campaigns, dirty, warnings + [f"missing: {m}" for m in missing])


# --------------------------------------------------------------------------- command line


def add_parsers(commands: Any) -> None:
    """The `artifact` and `check-artifact` subcommands (archbench.cli.main)."""
    from_here = commands.add_parser("artifact", help="pack the study (source, raw campaigns, report) into dist/")
    from_here.add_argument("--dist", type=Path, default=Path("dist"), help="default: %(default)s")
    from_here.add_argument("--allow-dirty", action="store_true", help="archive uncommitted changes (name says -dirty)")
    check = commands.add_parser("check-artifact", help="verify an archive and rebuild its report's numbers")
    check.add_argument("archive", type=Path)
    check.add_argument("--no-pdf", action="store_true", help="skip latexmk (the generated inputs are still compared)")
    check.add_argument("--keep", type=Path, help="unpack here (must not exist) and keep it, instead of a temp dir")


def cmd_artifact(args: argparse.Namespace) -> int:
    try:
        built = build_artifact(args.dist, allow_dirty=args.allow_dirty)
    except ArtifactError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE if error.usage else EXIT_ERROR
    for warning in built.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(
        f"{built.path}: {built.files} files, campaigns {', '.join(built.campaigns)}{' (dirty)' if built.dirty else ''}"
    )
    print(f"{built.sha256}  {built.path.name}")
    print(f"check it with: make check-artifact ARTIFACT={built.path}")
    return EXIT_OK
