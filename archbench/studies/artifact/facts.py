"""The artifact appendix and the title page's "how to cite" line.

The appendix follows the form artifact evaluations ask for (ACM: abstract, check-list, description, installation,
experiment workflow, evaluation and expected results, notes). Every fact in it is computed, never typed: the
hardware, kernel and io_uring support from the campaigns' provenance and trial records, the packages from
scripts/setup.sh (Debian) and requirements.txt (pip), each experiment's expected duration from its profile
(archbench.config.plan.expected_duration_s) and its measured duration from its campaigns' trial timestamps, the
citation from CITATION.cff. The words are in paper/templates/artifact/: the appendix is section.tex.j2, rendered
with `ArtifactAppendix.facts`, its sentences and table words appendix.tex.j2.

The artifact study reads an `ArtifactAppendix` (from `collect_appendix`); `appendix_outputs` adds the
macro `\\abHowToCite` (report.tex's title page, quoted by the appendix too) and writes
generated/artifact-experiments.tex, the table the appendix inputs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from archbench.config.catalogue import CATALOGUE, MAKE_ALL_PROFILES
from archbench.config.paths import REPO_ROOT
from archbench.config.plan import expected_duration_s
from archbench.data import storage
from archbench.render.common import and_list, provenance_facts, tt
from archbench.render.latex import (
    FILL_COLUMN,
    MISSING,
    Column,
    MacroSet,
    campaign_provenance,
    escape,
    escape_command,
    notes_block,
    render_longtable,
)
from archbench.render.prose import Prose

__all__ = [
    "EXPERIMENTS_FILE",
    "ArtifactAppendix",
    "Experiment",
    "collect_appendix",
    "debian_packages",
    "format_duration",
    "python_pins",
    "read_citation",
]

EXPERIMENTS_FILE = "artifact-experiments.tex"
TEMPLATE = "artifact/appendix"
CITATION_NAME = "CITATION.cff"
REQUIREMENTS_NAME = "requirements.txt"
SETUP_SCRIPT_NAME = "scripts/setup.sh"
# The studies whose measurement the appendix lists beside the main campaign's: every catalogue entry a profile
# measures, in the catalogue's order; each one's command, profile and the campaigns it reads beside its chosen one
# are its entry's, so a new study's profile adds its row.
APPENDIX_STUDIES = tuple(key for key, rule in CATALOGUE.items() if rule.profile is not None)


@dataclass(frozen=True)
class Experiment:
    """One experiment of the workflow: its command, what its profile predicts and what its campaigns took."""

    key: str  # the template's name for it: main, smoke, default, full, bench, echo, latency, network
    command: str
    expected_s: float | None  # from the profile's grid; None when no profile predicts it
    campaigns: tuple[storage.Campaign, ...] = ()
    expected_runs: int = 1  # the study runs its profile this many times (network: netns and loopback)

    @property
    def measured_s(self) -> float | None:
        spans = [campaign_span_s(c) for c in self.campaigns]
        known = [s for s in spans if s is not None]
        return sum(known) if known else None


@dataclass(frozen=True)
class ArtifactAppendix:
    """What the appendix says, computed from the report's campaigns and the repository's set-up files."""

    main: storage.Campaign
    experiments: tuple[Experiment, ...]
    citation: Mapping[str, Any]
    pins: tuple[tuple[str, str], ...]
    system_packages: tuple[str, ...]
    raw_bytes: int  # the raw campaigns the report reads

    def facts(self, prose: Prose) -> dict[str, Any]:
        provenance = campaign_provenance(self.main.meta, self.main.trials)
        shared = provenance_facts(self.main)  # the campaign, host, CPU, kernel and commit as every section names them
        memory = provenance.get("memory_bytes")
        expected = [e.expected_s * e.expected_runs for e in self.experiments if e.expected_s is not None]
        return {
            "campaign": shared["campaign_tt"],
            "profile": escape(self.main.meta.get("profile") or "unknown"),
            "architecture_count": len(provenance.get("build_architectures") or ()) or MISSING,
            "host": shared["host_tt"],
            **{key: shared[key] for key in ("cpu", "kernel", "commit")},
            "cpus": escape(provenance.get("cpu_count") if provenance.get("cpu_count") is not None else MISSING),
            "memory_gib": escape(f"{memory / 2**30:.0f}") if isinstance(memory, (int, float)) else MISSING,
            "os": escape(provenance.get("os") or "unknown"),
            "compiler": escape(provenance.get("compiler") or "unknown"),
            "python": escape(provenance.get("python") or "unknown"),
            "io_uring": {"ok": 0, "unsupported": 0, "failed": 0, **io_uring_statuses(self.main.trials)},
            "system_packages": and_list(prose, [r"\texttt{" + escape(p) + "}" for p in self.system_packages]),
            "python_pins": and_list(prose, [escape(f"{name} {version}") for name, version in self.pins]),
            "pin_count": len(self.pins),
            "raw_mib": escape(f"{self.raw_bytes / 2**20:.1f}"),
            "all_expected": format_duration(sum(expected)) if expected else MISSING,
            "citation": citation_facts(self.citation),
        }


def appendix_outputs(appendix: ArtifactAppendix, macros: MacroSet, prose: Prose) -> dict[str, str]:
    """`\\abHowToCite` into `macros` (the title page quotes it too), and {generated file: LaTeX}: the experiments
    table the appendix inputs."""
    macros.add(
        r"\abHowToCite",
        prose.sentence(TEMPLATE, "how_to_cite", citation_facts(appendix.citation)),
        "title page: how to cite (CITATION.cff)",
    )
    return {EXPERIMENTS_FILE: experiments_table(appendix.experiments, prose)}


# --------------------------------------------------------------------------- facts from files


def read_citation(repo_root: Path = REPO_ROOT) -> dict[str, Any]:
    """CITATION.cff as a mapping ({} when the file is missing: the cite line then points at the repository)."""
    path = Path(repo_root) / CITATION_NAME
    if not path.is_file():
        return {}
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    return dict(loaded) if isinstance(loaded, Mapping) else {}


def citation_facts(citation: Mapping[str, Any]) -> dict[str, Any]:
    authors = []
    for author in citation.get("authors") or ():
        if isinstance(author, Mapping):
            name = author.get("name") or " ".join(
                str(author[k]) for k in ("given-names", "family-names") if author.get(k)
            )
            authors.append(escape(name))
    return {
        "present": bool(citation),
        "title": escape(citation.get("title") or ""),
        "authors": ", ".join(authors),
        "version": escape(citation.get("version") or ""),
        "date": escape(citation.get("date-released") or ""),
        "license": escape(citation.get("license") or ""),
        "file": r"\texttt{" + escape(CITATION_NAME) + "}",
    }


def python_pins(repo_root: Path = REPO_ROOT) -> tuple[tuple[str, str], ...]:
    """The `name==version` pins of requirements.txt, in file order."""
    path = Path(repo_root) / REQUIREMENTS_NAME
    if not path.is_file():
        return ()
    pins = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\s*([A-Za-z0-9_.\-\[\]]+)\s*==\s*([^\s#;]+).*", line)
        if match:
            pins.append((match.group(1), match.group(2)))
    return tuple(pins)


def debian_packages(repo_root: Path = REPO_ROOT) -> tuple[str, ...]:
    """The Debian packages scripts/setup.sh may install: every package its `need WHAT PACKAGE...` calls name,
    with $TEX_DEBS expanded; packages computed at run time from a LaTeX file name ($(...)) are left out."""
    path = Path(repo_root) / SETUP_SCRIPT_NAME
    if not path.is_file():
        return ()
    text = path.read_text(encoding="utf-8")
    tex_debs = re.search(r'^TEX_DEBS="([^"]*)"', text, re.MULTILINE)
    found: list[str] = []
    for line in text.splitlines():
        code = re.sub(r"(^|\s)#.*$", "", line)
        for match in re.finditer(r'\bneed\s+(?:"[^"]*"|\S+)\s+([^|&;}]*)', code):
            for token in match.group(1).split():
                if token == "$TEX_DEBS" and tex_debs:
                    found.extend(tex_debs.group(1).split())
                elif re.fullmatch(r"[a-z0-9][a-z0-9.+\-]+", token):
                    found.append(token)
    return tuple(dict.fromkeys(found))


# --------------------------------------------------------------------------- facts from campaigns


def _timestamp(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def campaign_span_s(campaign: storage.Campaign) -> float | None:
    """Seconds from the first trial's start to the last trial's end (a resumed campaign includes its pause)."""
    started = [t for t in (_timestamp(r.get("started_at")) for r in campaign.trials if r.get("started_at")) if t]
    finished = [t for t in (_timestamp(r.get("finished_at")) for r in campaign.trials if r.get("finished_at")) if t]
    if not started or not finished:
        return None
    return max(0.0, (max(finished) - min(started)).total_seconds())


def io_uring_statuses(trials: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How the io_uring server's trials ended (ok, failed, unsupported): whether this kernel had io_uring."""
    return Counter(
        str(record.get("status") or "unknown")
        for record in trials
        if (record.get("config") or {}).get("architecture") == "io_uring"
    )


def format_duration(seconds: float) -> str:
    """About how long, for a reader planning a run: 35\\,s, 6\\,min, 2\\,h\\,50\\,min."""
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{seconds:.0f}\\,s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes}\\,min"
    hours, rest = divmod(minutes, 60)
    return f"{hours}\\,h" + (f"\\,{rest}\\,min" if rest else "")


def _present(raw_root: Path, names: Sequence[str | None]) -> tuple[storage.Campaign, ...]:
    """The named campaigns that exist under raw_root."""
    paths = [Path(raw_root) / name for name in names if name]
    return tuple(storage.load_campaign(path) for path in paths if (path / storage.CAMPAIGN_FILE).is_file())


def _profile_duration(profile: str) -> float | None:
    try:
        return expected_duration_s(profile)
    except (KeyError, ValueError, FileNotFoundError):
        return None


def command_of_profile(profile: str) -> str:
    """The command that measures a campaign of `profile` (the Makefile's target where it has one)."""
    if profile in MAKE_ALL_PROFILES:
        return f"make all PROFILE={profile}"
    if profile == "bench":
        return "make bench"
    if profile == "sources":
        return "make sources-study"
    return f"python -m archbench run --profile {profile}" if profile else "make trials"


def collect_appendix(
    main: storage.Campaign,
    raw_root: Path,
    studies: Mapping[str, str | None] | None = None,
    repo_root: Path = REPO_ROOT,
) -> ArtifactAppendix:
    """The appendix of a report built from `main` and the study campaigns `studies` names (key -> the chosen
    campaign, as archbench.render.campaigns resolves it) under `raw_root`."""
    raw_root = Path(raw_root)
    main_profile = str(main.meta.get("profile") or "")
    experiments = [Experiment("main", command_of_profile(main_profile), _profile_duration(main_profile), (main,))]
    experiments += [
        Experiment(p, f"make all PROFILE={p}", _profile_duration(p)) for p in MAKE_ALL_PROFILES if p != main_profile
    ]
    for key in APPENDIX_STUDIES:
        rule, chosen = CATALOGUE[key], (studies or {}).get(key)
        read = [chosen + suffix for suffix in rule.read_with] if chosen else []
        experiments.append(
            Experiment(
                key,
                rule.measure_with,
                _profile_duration(rule.profile or key),
                _present(raw_root, read),
                expected_runs=rule.expected_runs,
            )
        )
    if main_profile != "bench":
        experiments.append(Experiment("bench", "make bench", _profile_duration("bench")))
    used = [main.path] + [c.path for e in experiments[1:] for c in e.campaigns]
    raw_bytes = sum(p.stat().st_size for d in dict.fromkeys(used) for p in Path(d).rglob("*") if p.is_file())
    return ArtifactAppendix(
        main,
        tuple(experiments),
        read_citation(repo_root),
        python_pins(repo_root),
        debian_packages(repo_root),
        raw_bytes,
    )


def experiments_table(experiments: Sequence[Experiment], prose: Prose) -> str:
    """The workflow table: each experiment's command, its expected and its measured duration, its campaigns."""
    columns = [
        Column(prose.sentence(TEMPLATE, "column", name="experiment"), "l"),
        Column(prose.sentence(TEMPLATE, "column", name="command"), "l"),
        Column(prose.sentence(TEMPLATE, "column", name="expected"), "r"),
        Column(prose.sentence(TEMPLATE, "column", name="measured"), "r"),
        Column(prose.sentence(TEMPLATE, "column", name="campaigns"), FILL_COLUMN),
    ]
    rows = []
    for experiment in experiments:
        expected = (
            format_duration(experiment.expected_s * experiment.expected_runs)
            if experiment.expected_s is not None
            else MISSING
        )
        measured = experiment.measured_s
        rows.append(
            [
                prose.sentence(TEMPLATE, "experiment_name", key=experiment.key),
                escape_command(experiment.command),
                expected,
                format_duration(measured) if measured is not None else MISSING,
                ", ".join(tt(c.name) for c in experiment.campaigns) or MISSING,
            ]
        )
    return render_longtable(
        columns,
        rows,
        prose.sentence(TEMPLATE, "table_caption"),
        "tab:artifact-experiments",
        notes=notes_block([prose.sentence(TEMPLATE, "table_note")]),
    )
