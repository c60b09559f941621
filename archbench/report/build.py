"""Raw campaigns -> processed CSVs -> generated LaTeX and figures -> (optionally) the PDF, study by study.

`build_report` chooses the campaigns (archbench.render.campaigns), processes the main campaign
(archbench.report.pipeline) and then `write_report` runs every study of the registry
(archbench.studies.STUDIES) in order: each adds its macros and its generated files. What is written:
- `paper/generated/macros.tex`: every macro, grouped by study under a comment naming it;
- `paper/generated/front.tex`, `body.tex`, `appendices.tex`: the studies' sections in registry order, which
  paper/report.tex inputs after the title, after the introduction and after \\appendix;
- each study's tables and figure blocks, and `data/processed/campaigns.json`: which campaign each part read.
Every directory is one `ReportPaths` so tests can build the whole report from fixture campaigns in a temporary
copy of paper/; its defaults are the repository's paths. From the command line:

    python -m archbench.report [MAIN] [--campaigns 'echo=echo-lab,latency=...'] [--raw-root data/raw] [--pdf]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.config.params import ParameterError
from archbench.config.paths import (
    FIGURES_DIR,
    GENERATED_DIR,
    PAPER_DIR,
    PROCESSED_DIR,
    RAW_ROOT,
    REPO_ROOT,
    TEMPLATES_DIR,
)
from archbench.report import pipeline
from archbench.render import latex
from archbench.render.campaigns import CAMPAIGNS_FILE, MAIN, Campaigns, parse_overrides, resolve
from archbench.render.plots import FigureFile
from archbench.render.plots import TablesAndFigures
from archbench.render.prose import Prose
from archbench.studies import STUDIES
from archbench.render.study import PARTS, ReportOptions, Study, StudyContext, StudyOutput

MACROS_FILE = "macros.tex"
# The file of each part of the report: the \input of every study section of that part, in registry order.
PART_FILES = {"front": "front.tex", "body": "body.tex", "appendix": "appendices.tex"}
# The \\bibliography line: paper/references.bib, then any study's own paper/templates/<study>/references.bib, so a
# study that cites a new source brings its entries in its template folder.
BIBLIOGRAPHY_FILE = "bibliography.tex"
STUDY_BIBLIOGRAPHY = "references.bib"

@dataclass(frozen=True)
class ReportPaths:
    """Where a report reads its campaigns and templates and writes its processed CSVs, LaTeX and figures."""

    raw_root: Path = RAW_ROOT
    processed_dir: Path = PROCESSED_DIR
    generated_dir: Path = GENERATED_DIR
    figures_dir: Path = FIGURES_DIR
    templates_dir: Path = TEMPLATES_DIR


@dataclass(frozen=True)
class ReportOutputs:
    campaign: str  # the main campaign
    processed: analysis.ProcessedCampaign
    generated: dict[str, Path]
    macro_names: frozenset[str]
    campaigns: Campaigns
    studies: dict[str, StudyOutput]

    @property
    def summary(self) -> pd.DataFrame:
        return self.processed.summary

    @property
    def trials(self) -> pd.DataFrame:
        return self.processed.trials

    @property
    def figures(self) -> dict[str, FigureFile | None]:
        """The main campaign's figures by key: those of every study whose result is its tables and figures."""
        made: dict[str, FigureFile | None] = {}
        for output in self.studies.values():
            if isinstance(output.result, TablesAndFigures):
                made.update(output.result.figures)
        return made

    def result(self, study: str) -> Any:
        return self.studies[study].result if study in self.studies else None


def resolve_path(value: str | Path | None, default: Path) -> Path:
    """A notebook/CLI path parameter: None means the repository default, relative means from the repo root."""
    if value is None or str(value) == "":
        return default
    path = Path(value)
    return path if path.is_absolute() else REPO_ROOT / path


def choose_campaigns(
    campaigns: Campaigns | Mapping[str, str] | str | None,
    raw_root: Path = RAW_ROOT,
    processed_dir: Path = PROCESSED_DIR,
    studies: Sequence[Study] = STUDIES,
    *,
    main: str | None = None,
    measured_main: str | None = None,
) -> Campaigns:
    """The campaigns a report reads: `campaigns` as resolved already, else resolved from overrides (a mapping, or
    text `key=name,...`; a bare name is the main campaign), with `main` as the main campaign if given."""
    if isinstance(campaigns, Campaigns):
        return campaigns
    if isinstance(campaigns, str) and campaigns.strip() and "=" not in campaigns:
        overrides = {MAIN: campaigns.strip()}
    else:
        overrides = parse_overrides(campaigns, [MAIN, *(s.name for s in studies if s.campaign is not None)])
    if main:
        overrides[MAIN] = main
    return resolve(
        studies, overrides, raw_root=Path(raw_root), processed_dir=Path(processed_dir), measured_main=measured_main
    )


def build_report(
    campaigns: Campaigns | Mapping[str, str] | str | None = None,
    paths: ReportPaths = ReportPaths(),
    *,
    options: ReportOptions | None = None,
    studies: Sequence[Study] = STUDIES,
    measured_main: str | None = None,
) -> ReportOutputs:
    """Choose the campaigns, process the main one and write every study's part of the report.

    `campaigns`: see `choose_campaigns` (None: this machine's, else the shipped ones; archbench.render.campaigns).
    A study whose campaign does not exist makes its section a sentence saying so; the main campaign must exist."""
    options = options or ReportOptions()
    chosen = choose_campaigns(campaigns, paths.raw_root, paths.processed_dir, studies, measured_main=measured_main)
    # The steps of archbench.report.pipeline, in the order notebooks/analyze.ipynb runs them one by one.
    campaign_dir = pipeline.check_parameters(chosen.main, Path(paths.raw_root), options.latency_knee_p99_ms)
    processed = pipeline.process_main_campaign(campaign_dir, Path(paths.processed_dir))
    return write_report(processed, chosen, paths, options=options, studies=studies)


def write_report(
    processed: analysis.ProcessedCampaign,
    campaigns: Campaigns,
    paths: ReportPaths = ReportPaths(),
    *,
    options: ReportOptions | None = None,
    studies: Sequence[Study] = STUDIES,
) -> ReportOutputs:
    """What build_report does once the main campaign is processed: every study in registry order, then the macros,
    the parts' outlines and every generated file. notebooks/analyze.ipynb calls it after its earlier steps."""
    generated_dir, figures_dir, processed_dir = Path(paths.generated_dir), Path(paths.figures_dir), Path(paths.processed_dir)
    templates_dir = Path(paths.templates_dir)
    generated_dir.mkdir(parents=True, exist_ok=True)
    outputs: dict[str, StudyOutput] = {}
    context = StudyContext(
        processed=processed,
        campaigns=campaigns,
        raw_root=Path(paths.raw_root),
        processed_dir=processed_dir,
        generated_dir=generated_dir,
        figures_dir=figures_dir,
        prose=Prose(templates_dir),
        options=options or ReportOptions(),
        earlier=outputs,  # filled as the studies run: each sees only those before it
    )
    for study in studies:
        outputs[study.name] = study.write(context)
    contents = {MACROS_FILE: render_macros(processed, outputs)}
    contents.update(part_outlines(studies, templates_dir, generated_dir))
    contents[BIBLIOGRAPHY_FILE] = bibliography(studies, templates_dir)
    # Every section sees every study's facts as `studies.<name>`: the abstract, the findings and the threats quote
    # other studies' sentences from the same facts their own sections render them from.
    every = {name: output.section for name, output in outputs.items()}
    for study in studies:
        if study.renders_section(templates_dir):
            facts = {**outputs[study.name].section, "studies": every}
            contents[section_file(study.name)] = context.prose.section(study.name, facts)
    for name, output in outputs.items():
        for file_name, text in output.files.items():
            if file_name in contents:
                raise ValueError(f"study {name} writes {file_name}, which another part of the report writes too")
            contents[file_name] = text
    written = {}
    for name, text in contents.items():
        path = generated_dir / name
        path.write_text(text, encoding="utf-8")
        written[name] = path
    # A file an earlier build wrote and this one did not (a study renamed its output, or lost its data) would be
    # packed by make artifact and could be \\input by nothing or by a stale outline: the directory is this build's.
    for stale in set(generated_dir.glob("*.tex")) - set(written.values()):
        stale.unlink()
    processed_dir.mkdir(parents=True, exist_ok=True)
    (processed_dir / CAMPAIGNS_FILE).write_text(campaigns.to_json(), encoding="utf-8")
    macro_names = latex.macros_used(contents[MACROS_FILE])
    return ReportOutputs(Path(processed.campaign.path).name, processed, written, frozenset(macro_names), campaigns,
                         outputs)  # fmt: skip


def render_macros(processed: analysis.ProcessedCampaign, outputs: Mapping[str, StudyOutput]) -> str:
    """macros.tex: every study's macros under a comment naming the study (a name defined twice is an error)."""
    seen: dict[str, str] = {}
    for name, output in outputs.items():
        for macro in output.macros.macros:
            if macro in seen:
                raise ValueError(f"macro {macro} defined by study {seen[macro]} and by study {name}")
            seen[macro] = name
    header = (
        f"Generated by archbench.report from campaign {Path(processed.campaign.path).name}; do not edit.\n"
        "Every number the report quotes is defined here, computed from data/raw."
    )
    return latex.render_macro_groups(header, [(name, output.macros) for name, output in outputs.items()])


def section_file(study: str) -> str:
    """The file in paper/generated/ a study's section template renders to."""
    return f"section-{study}.tex"


def part_outlines(studies: Sequence[Study], templates_dir: Path, generated_dir: Path) -> dict[str, str]:
    """front.tex, body.tex and appendices.tex: the \\input of each study's section, in registry order, relative to
    the paper directory latexmk runs in: the rendered one in generated_dir (its parent is that directory), or the
    fixed section.tex among the templates (their parent is)."""
    outlines = {}
    for part in PARTS:
        lines = [f"% The {part} of the report: one section per study, in the order of archbench.studies."]
        for study in studies:
            section = study.section_path(templates_dir)
            if study.part != part or not section.is_file():
                continue
            paper_dir = Path(templates_dir).parent
            if study.renders_section(templates_dir):
                section, paper_dir = Path(generated_dir) / section_file(study.name), Path(generated_dir).parent
            relative = Path(os.path.relpath(section.with_suffix(""), paper_dir)).as_posix()
            lines.append(f"\\input{{{relative}}}")
        outlines[PART_FILES[part]] = "\n".join(lines) + "\n"
    return outlines


def bibliography(studies: Sequence[Study], templates_dir: Path) -> str:
    """bibliography.tex: paper/references.bib and every study's own, relative to the paper directory that holds the
    templates (latexmk runs there)."""
    names = ["references"]
    for study in studies:
        own = Path(templates_dir) / study.name / STUDY_BIBLIOGRAPHY
        if own.is_file():
            names.append(Path(os.path.relpath(own.with_suffix(""), Path(templates_dir).parent)).as_posix())
    return f"% The bibliographies of the report and of its studies.\n\\bibliography{{{','.join(names)}}}\n"


def build_pdf(paper_dir: Path = PAPER_DIR, main_tex: str = "report.tex", timeout_s: float = 300) -> Path:
    """Run latexmk in paper_dir; raises CalledProcessError with the log tail on failure."""
    latexmk = shutil.which("latexmk")
    if latexmk is None:
        raise FileNotFoundError("latexmk is not installed (Debian: apt-get install latexmk texlive-latex-extra)")
    paper_dir = Path(paper_dir)
    # SOURCE_DATE_EPOCH makes pdfTeX's dates reproducible; -interaction keeps a failing build from waiting for input.
    env = dict(os.environ, SOURCE_DATE_EPOCH=os.environ.get("SOURCE_DATE_EPOCH", "0"), FORCE_SOURCE_DATE="1")
    result = subprocess.run(
        [latexmk, "-pdf", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error", main_tex],
        cwd=paper_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    if result.returncode != 0:
        raise subprocess.CalledProcessError(result.returncode, result.args, result.stdout[-4000:], result.stderr[-4000:])
    return paper_dir / (Path(main_tex).stem + ".pdf")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m archbench.report", description=__doc__.splitlines()[0])
    parser.add_argument("campaign", nargs="?", help="the main campaign (default: this machine's, else reference)")
    parser.add_argument(
        "--campaigns", default="", help="KEY=CAMPAIGN,... for main or any study (python -m archbench campaigns)"
    )
    parser.add_argument("--measured-main", help="the campaign make trials wrote (the Makefile's CAMPAIGN)")
    parser.add_argument("--raw-root", type=Path, default=RAW_ROOT)
    parser.add_argument("--processed-dir", type=Path, default=PROCESSED_DIR)
    parser.add_argument("--generated-dir", type=Path, default=GENERATED_DIR)
    parser.add_argument("--figures-dir", type=Path, default=FIGURES_DIR)
    parser.add_argument("--latency-knee-p99-ms", type=float, default=ReportOptions.latency_knee_p99_ms)
    parser.add_argument("--pdf", action="store_true", help="also run latexmk in the generated dir's parent")
    args = parser.parse_args(argv)
    options = ReportOptions(args.latency_knee_p99_ms)
    try:
        chosen = choose_campaigns(
            args.campaigns, args.raw_root, args.processed_dir, main=args.campaign, measured_main=args.measured_main
        )
        for line in chosen.explain(STUDIES):
            print(line, file=sys.stderr)
        paths = ReportPaths(args.raw_root, args.processed_dir, args.generated_dir, args.figures_dir)
        outputs = build_report(chosen, paths, options=options)
    except ParameterError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{outputs.processed.trials_csv}\n{outputs.processed.summary_csv}")
    for path in outputs.generated.values():
        print(path)
    for made in outputs.figures.values():
        if made is not None:
            print(made.path)
    if args.pdf:
        print(build_pdf(Path(args.generated_dir).parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
