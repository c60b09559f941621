"""What a study is: one part of the report, with everything that makes it in one place.

A study is a package under `archbench/report/studies/<name>/` whose `__init__.py` declares `STUDY`, its words are
under `paper/templates/<name>/` (the section's fixed text in `section.tex`, its sentences in `*.tex.j2`), and it is
one line of the registry (`archbench/report/studies/__init__.py`). Its name is the key to grep for all of it.

A study says
- where its data come from: the main campaign (every study without a `CampaignRule`), or a campaign of its own,
  its entry in the catalogue (`archbench.config.catalogue`), chosen by `archbench.report.campaigns`;
- how it is measured (`CampaignRule.measure_with`: the command that makes its campaign on this machine);
- `write(context) -> StudyOutput`: its processing into data/processed/, its macros (facts the templates and the
  section quote), its generated tables and figure blocks, and a result later studies and the notebook may read;
- where its section goes (`part`): before the introduction, in the body, or in the appendices.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from archbench.analyze import analysis
from archbench.config.catalogue import CampaignRule
from archbench.config.paths import TEMPLATES_DIR
from archbench.report.latex import MacroSet
from archbench.report.prose import Prose

Part = Literal["front", "body", "appendix"]
PARTS: tuple[Part, ...] = ("front", "body", "appendix")
SECTION_FILE = "section.tex"  # paper/templates/<study>/section.tex: the section's fixed text


@dataclass(frozen=True)
class ReportOptions:
    """Analysis settings that are not campaigns (notebook parameters)."""

    latency_knee_p99_ms: float = 1.0


@dataclass
class StudyOutput:
    """What a study adds to the report: its macros, its generated files ({name in paper/generated/: LaTeX}) and the
    result a later study or the notebook reads (None when there is nothing to share)."""

    macros: MacroSet = field(default_factory=MacroSet)
    files: dict[str, str] = field(default_factory=dict)
    result: Any = None


@dataclass
class StudyContext:
    """Everything a study's `write` may read."""

    processed: analysis.ProcessedCampaign  # the main campaign, processed (archbench.report.pipeline)
    campaigns: Any  # archbench.report.campaigns.Campaigns: the campaign every study reads, and why
    raw_root: Path
    processed_dir: Path
    generated_dir: Path
    figures_dir: Path
    prose: Prose
    options: ReportOptions = field(default_factory=ReportOptions)
    earlier: Mapping[str, StudyOutput] = field(default_factory=dict)  # the studies before this one, by name

    @property
    def paper_dir(self) -> Path:
        """Where latexmk runs: figures are included relative to it."""
        return self.generated_dir.parent

    def campaign(self, key: str) -> str | None:
        """The campaign (or file) chosen for `key`, None when there is none."""
        return self.campaigns.name(key)

    def result(self, study: str) -> Any:
        """The result of an earlier study (a KeyError names a study that has not run before this one)."""
        if study not in self.earlier:
            raise KeyError(f"study {study!r} has not run before this one; order the registry so that it does")
        return self.earlier[study].result


@dataclass(frozen=True)
class Study:
    name: str
    title: str  # what `make paper` calls it
    part: Part
    write: Callable[[StudyContext], StudyOutput]
    campaign: CampaignRule | None = None  # None: the study reads the main campaign

    def section_path(self, templates_dir: Path = TEMPLATES_DIR) -> Path:
        return Path(templates_dir) / self.name / SECTION_FILE
