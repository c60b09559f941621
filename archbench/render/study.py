"""What a study is: one part of the report, with everything that makes it in one place.

A study is a package under `archbench/studies/<name>/` whose `__init__.py` declares `STUDY`, its words are
under `paper/templates/<name>/` (its section in `section.tex.j2`, rendered with the facts the study gives it, or a
fixed `section.tex`; its sentences in `*.tex.j2`), and it is one line of the registry (`archbench/studies/__init__.py`). Its name is the key to grep for all of it.

A study says
- where its data come from: the main campaign (every study without a `CampaignRule`), or a campaign of its own,
  its entry in the catalogue (`archbench.config.catalogue`: its profile's `[catalogue]` table), chosen by `archbench.render.campaigns`;
- how it is measured (`CampaignRule.measure_with`: the command that makes its campaign on this machine);
- `write(context) -> StudyOutput`: its processing into data/processed/, its macros (the numbers the section
  quotes), the facts its section template renders its sentences from, its generated tables and figure blocks, and a
  result later studies and the notebook may read;
- where its section goes (`part`): before the introduction, in the body, or in the appendices.

A study with a campaign of its own subclasses `CampaignStudy`, which does what every such study did by hand: load
the chosen campaigns (or say why there are none), write its CSVs or remove an earlier run's, and write its section
or, without data, the sentence saying it was not measured.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

import pandas as pd

from archbench.analyze import analysis
from archbench.config import catalogue
from archbench.config.catalogue import CampaignRule
from archbench.config.paths import TEMPLATES_DIR
from archbench.render.common import (
    StudySource,
    absent_files,
    load_campaign_or_reason,
)
from archbench.render.latex import MacroSet
from archbench.render.plots import FigureFile, figure_environment
from archbench.render.prose import SECTION_TEMPLATE, Prose

Part = Literal["front", "body", "appendix"]
PARTS: tuple[Part, ...] = ("front", "body", "appendix")
SECTION_FILE = "section.tex"  # paper/templates/<study>/section.tex: a section without facts of its own


@dataclass(frozen=True)
class ReportOptions:
    """Analysis settings that are not campaigns (notebook parameters)."""

    latency_knee_p99_ms: float = 1.0


@dataclass
class StudyOutput:
    """What a study adds to the report: its macros, its generated files ({name in paper/generated/: LaTeX}), the
    result a later study or the notebook reads (None when there is nothing to share) and the facts its section
    template renders (`section.tex.j2`)."""

    macros: MacroSet = field(default_factory=MacroSet)
    files: dict[str, str] = field(default_factory=dict)
    result: Any = None
    section: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Paper:
    """Where a section's figures go and are included from, and its words."""

    figures_dir: Path
    paper_dir: Path  # where latexmk runs: figures are included relative to it
    prose: Prose = field(default_factory=Prose)

    def figure(self, made: FigureFile | None, label: str, template: str, keys: tuple[str, str], **facts: Any) -> str:
        """The figure's environment, its caption the template's `keys[0]`, or without it the sentence `keys[1]`."""
        return figure_environment(made, label, self.paper_dir, self.prose, template, keys, facts)


@dataclass
class StudyContext:
    """Everything a study's `write` may read."""

    processed: analysis.ProcessedCampaign  # the main campaign, processed (archbench.report.pipeline)
    campaigns: Any  # archbench.render.campaigns.Campaigns: the campaign every study reads, and why
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

    @property
    def paper(self) -> Paper:
        return Paper(self.figures_dir, self.paper_dir, self.prose)

    def campaign(self, key: str) -> str | None:
        """The campaign (or file) chosen for `key`, None when there is none."""
        return self.campaigns.get(key)

    def result(self, study: str) -> Any:
        """The result of an earlier study (a KeyError names a study that has not run before this one)."""
        if study not in self.earlier:
            raise KeyError(f"study {study!r} has not run before this one; order the registry so that it does")
        return self.earlier[study].result

    def result_if_run(self, study: str) -> Any:
        """The result of an earlier study, None when it has not run (a report built of fewer studies)."""
        return self.earlier[study].result if study in self.earlier else None

    def facts_if_run(self, study: str) -> Mapping[str, Any]:
        """The section facts of an earlier study (`StudyOutput.section`), empty when it has not run (a report built
        of fewer studies): how a study reads what another decided without importing that study's modules."""
        return self.earlier[study].section if study in self.earlier else {}


@dataclass(frozen=True)
class Study:
    name: str
    title: str  # what `make paper` calls it
    part: Part
    write: Callable[[StudyContext], StudyOutput]
    campaign: CampaignRule | None = None  # None: the study reads the main campaign
    # The main campaign's figures it draws, each a call a notebook makes to display it (archbench.report.pipeline).
    inline_figures: Callable[[analysis.ProcessedCampaign], Mapping[str, Callable[[], Any]]] | None = None

    def section_path(self, templates_dir: Path = TEMPLATES_DIR) -> Path:
        """Its section's template (`section.tex.j2`) if it has one, else its fixed `section.tex`."""
        folder = Path(templates_dir) / self.name
        template = folder / SECTION_TEMPLATE
        return template if template.is_file() else folder / SECTION_FILE

    def renders_section(self, templates_dir: Path = TEMPLATES_DIR) -> bool:
        return self.section_path(templates_dir).name == SECTION_TEMPLATE


class StudyResult(Protocol):
    @property
    def available(self) -> bool:
        """Whether the study has data: without, its section says it was not measured."""
        ...


Result = TypeVar("Result", bound=StudyResult)


class CampaignStudy(ABC, Generic[Result]):
    """A study with a campaign of its own: its rule, its CSVs and generated files, and the steps it differs in.

    A subclass says how its campaigns become a result (`process`), which frames of it are CSVs (`csv_frames`, written
    only when it has data), its tables (`table_files`), its figures (`figures`) and where their environments go
    (`figure_files`), and its macros (`facts`, with or without data); its catalogue entry is the one of its name.
    Loading, the CSVs, the generated files and the not-measured section are the same for every such study; a study
    whose CSVs or files are not so simple overrides `csvs` or `files` (and names them in `processed_files` and
    `generated_files`)."""

    name: ClassVar[str]
    title: ClassVar[str]
    part: ClassVar[Part]
    # {CSV in data/processed/: the attribute of its result holding the frame}, written only when it has data.
    csv_frames: ClassVar[Mapping[str, str]] = {}
    # {generated file: the table made of its result (and the prose)}, written only when it has data.
    table_files: ClassVar[Mapping[str, Callable[[Any, Prose], str]]] = {}
    # {generated file: (label, figure key)}: each figure's environment; its caption, and the sentence standing in
    # for a figure not drawn, are the macros of `figure_template` that `figure_keys` names (formatted with the key).
    figure_files: ClassVar[Mapping[str, tuple[str, str]]] = {}
    figure_template: ClassVar[str] = ""
    figure_keys: ClassVar[tuple[str, str]] = ("{}_caption", "no_{}_figure")

    @property
    def rule(self) -> CampaignRule:
        """Its entry in the catalogue (its profile's `[catalogue]` table), by its name."""
        return catalogue.CATALOGUE[self.name]

    @property
    def processed_files(self) -> tuple[str, ...]:
        """Its CSVs in data/processed/ (an earlier run's are removed when it has no data)."""
        return tuple(self.csv_frames)

    @property
    def generated_files(self) -> tuple[str, ...]:
        """Its files in paper/generated/: its tables, then its figures (without data, each the not-measured comment)."""
        return (*self.table_files, *self.figure_files)

    @property
    def study(self) -> Study:
        """Its line of the registry."""
        return Study(self.name, self.title, self.part, self.write, self.rule)

    def chosen(self, context: StudyContext) -> Sequence[str | None]:
        """The campaigns it reads, the chosen one first (none chosen: one None, so the section says why)."""
        return [context.campaign(self.name)]

    def load(self, names: Sequence[str | None], raw_root: Path) -> list[StudySource]:
        return [load_campaign_or_reason(name, Path(raw_root), self.name) for name in names]

    @abstractmethod
    def process(self, sources: Sequence[StudySource], options: ReportOptions) -> Result: ...

    def csvs(self, result: Result) -> Mapping[str, pd.DataFrame]:
        """Its CSVs' frames, by file name."""
        return {name: getattr(result, frame) for name, frame in self.csv_frames.items()}

    def read(
        self,
        names: Sequence[str | None],
        raw_root: Path,
        processed_dir: Path | None = None,
        options: ReportOptions | None = None,
    ) -> Result:
        """The result of these campaigns, its CSVs written into processed_dir (when given); without data an earlier
        run's CSVs are removed, so none of them can pass for this run's."""
        sources = self.load(names, raw_root)
        result = self.process(sources, options or ReportOptions())
        if processed_dir is not None and result.available:
            # processed_dir must not be inside any of its (immutable) raw campaigns.
            for source in sources:
                if source.campaign is not None:
                    analysis.refuse_inside_raw(Path(processed_dir), source.campaign.path)
            analysis.write_csvs(Path(processed_dir), self.csvs(result))
        elif processed_dir is not None:
            for name in self.processed_files:
                (Path(processed_dir) / name).unlink(missing_ok=True)
        return result

    def figures(self, result: Result, figures_dir: Path) -> Mapping[str, Any]:
        """Its figures' files by key (None: not drawn), drawn before the macros, which say which exist."""
        return {}

    def facts(self, result: Result, macros: MacroSet, prose: Prose, figures: Mapping[str, Any]) -> None:
        """Its macros, with or without data (a study that writes its section from more than its campaign, as the
        sources study does, overrides `write` instead)."""

    def sentences(self, result: Result, figures: Mapping[str, Any]) -> dict[str, Any]:
        """The facts its section template renders its sentences from, with or without data."""
        return {}

    def files(self, result: Result, paper: Paper, figures: Mapping[str, Any]) -> dict[str, str]:
        """Its generated files but the figure environments, when it has data: its tables."""
        return {name: table(result, paper.prose) for name, table in self.table_files.items()}

    def figure_facts(self, result: Result) -> Mapping[str, Mapping[str, Any]]:
        """The facts a figure's caption renders with, by figure key (none by default)."""
        return {}

    def figure_environments(self, result: Result, paper: Paper, figures: Mapping[str, Any]) -> dict[str, str]:
        """Every figure's environment in `figure_files`: the figure with its caption, or the sentence saying why
        there is none."""
        facts = self.figure_facts(result)
        return {
            name: paper.figure(
                figures[key],
                label,
                self.figure_template,
                (self.figure_keys[0].format(key), self.figure_keys[1].format(key)),
                **facts.get(key, {}),
            )
            for name, (label, key) in self.figure_files.items()
        }

    def section(
        self, result: Result, macros: MacroSet, paper: Paper, figures: Mapping[str, Any] | None = None
    ) -> dict[str, str]:
        """Its macros into `macros` and every generated file: its tables and figures, or the not-measured comment."""
        if figures is None:
            figures = self.figures(result, paper.figures_dir)
        self.facts(result, macros, paper.prose, figures)
        if not result.available:
            return absent_files(paper.prose, self.name, self.generated_files)
        return {**self.files(result, paper, figures), **self.figure_environments(result, paper, figures)}

    def write(self, context: StudyContext) -> StudyOutput:
        result = self.read(self.chosen(context), context.raw_root, context.processed_dir, context.options)
        macros = MacroSet()
        figures = self.figures(result, context.figures_dir)
        files = self.section(result, macros, context.paper, figures)
        return StudyOutput(macros, files, result, self.sentences(result, figures))
