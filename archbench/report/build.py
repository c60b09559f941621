"""Raw campaign -> processed CSVs -> generated LaTeX and figures -> (optionally) the PDF.

`build_report` is the one function the analysis notebook calls. Every output
directory is a parameter so tests can build the whole report from a fixture
campaign in a temporary copy of paper/; the defaults are the repository's
paths. Run from the command line:

    python -m archbench.report.build CAMPAIGN [--raw-root data/raw] [--pdf]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from archbench.analyze import analysis
from archbench.config.params import ParameterError
from archbench.config.paths import FIGURES_DIR, GENERATED_DIR, PAPER_DIR, PROCESSED_DIR, RAW_ROOT, REPO_ROOT
from archbench.report import latex, pipeline
from archbench.report.studies import echo as report_echo
from archbench.report.studies import latency as report_latency
from archbench.report.studies import network as report_network
from archbench.report.studies import robustness as report_robustness
from archbench.report.studies import statistics as report_stats
from archbench.report.studies.artifact import facts as artifact_appendix
from archbench.report.studies.method import facts as environment
from archbench.report.studies.notebooks import index as notebook_index
from archbench.report.studies.pool import facts as findings
from archbench.report.studies.pool import figures
from archbench.report.studies.pool import tables as main_tables
from archbench.report.studies.architectures.baseline import baseline_macros
from archbench.report.pipeline import resolve_campaign
from archbench.report.prose import Prose
from archbench.report.studies.sources.facts import published_outputs
from archbench.report.studies.statistics.noise import noise_outputs
from archbench.report.studies.statistics.paired import paired_outputs
from archbench.report.studies.sources.data import SourcesCampaign, process_sources_campaign
from archbench.report.studies.summary.tables import summary_outputs

# The files report.tex inputs; each is always written, so a stale one from an
# earlier campaign can never be picked up.
MACROS_FILE = "macros.tex"
ENVIRONMENT_FILE = "environment.tex"
POOL_TABLES_FILE = "tables-threads.tex"
CONFIGURATIONS_TABLE_FILE = "table-configurations.tex"
POOL_FIGURE_FILE = "figure-pool-size.tex"
CONNECTIONS_FIGURE_FILE = "figure-connections.tex"
ARCHITECTURE_TABLES_FILE = "tables-architectures.tex"
ARCHITECTURE_THROUGHPUT_FIGURE_FILE = "figure-architectures-throughput.tex"
ARCHITECTURE_CONNECTIONS_FIGURE_FILE = "figure-architectures-connections.tex"
ARCHITECTURE_THREADS_FIGURE_FILE = "figure-architectures-threads.tex"
ARCHITECTURE_CPU_FIGURE_FILE = "figure-architectures-cpu.tex"
# (label, key in make_figures' result, macro of paper/templates/main/figures.tex.j2) per figure file; the
# template holds the caption (<macro>_caption) and the sentence standing in for a missing figure (<macro>_missing).
MAIN_FIGURES = {
    POOL_FIGURE_FILE: ("fig:pool-size", "pool_size"),
    CONNECTIONS_FIGURE_FILE: ("fig:connections", "connections"),
    ARCHITECTURE_THROUGHPUT_FIGURE_FILE: ("fig:architectures-throughput", "architectures_throughput"),
    ARCHITECTURE_CONNECTIONS_FIGURE_FILE: ("fig:architectures-connections", "architectures_connections"),
    ARCHITECTURE_THREADS_FIGURE_FILE: ("fig:architectures-threads", "architectures_threads"),
    ARCHITECTURE_CPU_FIGURE_FILE: ("fig:architectures-cpu", "architectures_cpu"),
}
FIGURES_TEMPLATE = "main/figures"

__all__ = [
    "ParameterError",
    "ReportOutputs",
    "build_pdf",
    "build_report",
    "main",
    "resolve_campaign",
    "write_generated_tex",
    "write_report",
]


@dataclass(frozen=True)
class ReportOutputs:
    campaign: str
    processed: analysis.ProcessedCampaign
    generated: dict[str, Path]
    figures: dict[str, figures.FigureFile | None]
    macro_names: frozenset[str]
    # The separate study campaigns (None: not processed; a study without a campaign says why in its section).
    echo: report_echo.EchoStudy | None = None
    latency: report_latency.LatencyStudy | None = None
    robustness: report_robustness.RobustnessResult | None = None  # the abuse-suite result the appendix shows
    network: report_network.NetworkStudy | None = None  # the netns campaign and its loopback twin

    @property
    def summary(self) -> pd.DataFrame:
        return self.processed.summary

    @property
    def trials(self) -> pd.DataFrame:
        return self.processed.trials


def resolve_path(value: str | Path | None, default: Path) -> Path:
    """A notebook/CLI path parameter: None means the repository default, relative means from the repo root."""
    if value is None or str(value) == "":
        return default
    path = Path(value)
    return path if path.is_absolute() else REPO_ROOT / path


def build_report(
    campaign: str,
    raw_root: Path = RAW_ROOT,
    processed_dir: Path = PROCESSED_DIR,
    generated_dir: Path = GENERATED_DIR,
    figures_dir: Path = FIGURES_DIR,
    echo_campaign: str | None = None,
    latency_campaign: str | None = None,
    latency_001_campaign: str | None = None,
    latency_knee_p99_ms: float = report_latency.KNEE_P99_S * 1000,
    latency_knee_p99_alt_ms: float = report_latency.KNEE_P99_ALT_S * 1000,
    robustness: str | Path | None = None,
    network_campaign: str | None = None,
    network_loopback_campaign: str | None = None,
    sources_campaign: str | None = None,
) -> ReportOutputs:
    """Process one raw campaign and regenerate every generated input of paper/report.tex.

    `echo_campaign` and `latency_campaign` name the separate study campaigns under the same raw root
    (sections/echo.tex, sections/latency.tex); `latency_001_campaign` defaults to `<latency_campaign>-001`
    when it exists. A study campaign that is None or missing makes its section a sentence saying so. The
    latency knee's two p99 thresholds are in milliseconds.
    `robustness` is the abuse-suite result of the robustness appendix (a path, relative to the repository root);
    None: `<processed_dir>/robustness.json` when it exists, else `<raw_root>/reference-robustness/robustness.json`,
    else the appendix says there is none (archbench.report.studies.robustness).
    `network_campaign` is the netns campaign of sections/network.tex and `network_loopback_campaign` its loopback
    twin (default `<network_campaign>-loopback`); without both the section is a sentence saying which is missing.
    `sources_campaign` is the `sources` profile's campaign (each source's own protocol): the published-beside-measured
    section reads sources 000, 002 and 003 from it where it measured them, else from the main campaign.
    """
    # The steps of archbench.report.pipeline, in the order notebooks/analyze.ipynb runs them one by one.
    campaign_dir = pipeline.check_parameters(campaign, Path(raw_root), latency_knee_p99_ms, latency_knee_p99_alt_ms)
    processed = pipeline.process_main_campaign(campaign_dir, Path(processed_dir))
    return write_report(
        processed, raw_root, processed_dir, generated_dir, figures_dir, echo_campaign=echo_campaign,
        latency_campaign=latency_campaign, latency_001_campaign=latency_001_campaign,
        latency_knee_p99_ms=latency_knee_p99_ms, latency_knee_p99_alt_ms=latency_knee_p99_alt_ms,
        robustness=robustness, network_campaign=network_campaign, network_loopback_campaign=network_loopback_campaign,
        sources_campaign=sources_campaign,
    )


def write_report(
    processed: analysis.ProcessedCampaign,
    raw_root: Path = RAW_ROOT,
    processed_dir: Path = PROCESSED_DIR,
    generated_dir: Path = GENERATED_DIR,
    figures_dir: Path = FIGURES_DIR,
    echo_campaign: str | None = None,
    latency_campaign: str | None = None,
    latency_001_campaign: str | None = None,
    latency_knee_p99_ms: float = report_latency.KNEE_P99_S * 1000,
    latency_knee_p99_alt_ms: float = report_latency.KNEE_P99_ALT_S * 1000,
    robustness: str | Path | None = None,
    network_campaign: str | None = None,
    network_loopback_campaign: str | None = None,
    sources_campaign: str | None = None,
) -> ReportOutputs:
    """What build_report does once the main campaign is processed (its parameters as there): the studies'
    campaigns, the figures and every generated file. notebooks/analyze.ipynb calls it with the campaign its
    earlier steps processed."""
    campaign = Path(processed.campaign.path).name
    echo = report_echo.process_echo_campaign(echo_campaign, Path(raw_root), Path(processed_dir))
    latency = report_latency.process_latency_campaigns(
        latency_campaign, Path(raw_root), Path(processed_dir), source_001=latency_001_campaign,
        criteria=report_latency.Criteria(p99_s=latency_knee_p99_ms / 1000, p99_alt_s=latency_knee_p99_alt_ms / 1000),
    )
    network = report_network.process_network_campaigns(
        network_campaign, Path(raw_root), Path(processed_dir), loopback=network_loopback_campaign
    )
    sources = process_sources_campaign(sources_campaign, Path(raw_root), Path(processed_dir))
    # The abuse suite's result (robustness appendix): the given file, else this machine's, else the shipped reference.
    robustness_result = report_robustness.load_robustness(robustness, Path(processed_dir), Path(raw_root))
    # The artifact appendix and the title page's citation line: commands, durations and requirements of the campaigns.
    artifact = artifact_appendix.collect_appendix(processed.campaign, Path(raw_root), echo_campaign, latency_campaign,
                                                  latency_001_campaign, network_campaign, network_loopback_campaign,
                                                  sources=sources_campaign)
    generated_dir = Path(generated_dir)
    figures_dir = Path(figures_dir)
    generated_dir.mkdir(parents=True, exist_ok=True)
    made_figures = pipeline.draw_figures(processed, figures_dir)
    generated = write_generated_tex(processed, generated_dir, figures_dir, made_figures,
                                    studies=(echo, latency, robustness_result, network, artifact), sources=sources)
    # The executed notebooks' HTML exports beside the report (paper/notebooks/): the appendix listing them.
    generated.update(notebook_index.write_notebook_index(generated_dir))
    macro_names = latex.macros_used((generated_dir / MACROS_FILE).read_text(encoding="utf-8"))
    return ReportOutputs(campaign, processed, generated, made_figures, frozenset(macro_names), echo, latency,
                         robustness_result, network)


def write_generated_tex(
    processed: analysis.ProcessedCampaign,
    generated_dir: Path,
    figures_dir: Path,
    made_figures: dict[str, figures.FigureFile | None],
    studies: tuple = (),
    sources: SourcesCampaign | None = None,
) -> dict[str, Path]:
    summary, trials, campaign = processed.summary, processed.trials, processed.campaign
    prose = Prose()
    macros = latex.MacroSet()
    environment.environment_macros(macros, campaign.meta, campaign.trials, trials, summary, prose)
    # The campaign's iperf3 bandwidth baseline beside the fastest configuration's bytes per second.
    baseline_macros(macros, campaign.meta, summary, prose)
    findings.finding_macros(macros, summary, prose)
    table_blocks = main_tables.pool_size_table_blocks(summary, prose)
    present = {k: v is not None for k, v in made_figures.items()}
    main_tables.reference_macros(
        macros, [label for label, _ in table_blocks], present, prose, has_configurations=not summary.empty
    )
    main_tables.architecture_reference_macros(
        macros, [label for label, _ in main_tables.comparison_table_blocks(summary, prose)], present, prose
    )
    # Statistics, cross-OS, rules and environment sections (paper/sections/): their macros join the set
    # before it is rendered; their tables and the Q-Q figure are written below with the others.
    statistics_files = report_stats.generate(processed, macros, generated_dir, figures_dir, present)
    # Paired ratios within rounds (issue 15): paired-ratios.csv, its table, the forest plot and their macros.
    statistics_files.update(paired_outputs(processed, macros, generated_dir, figures_dir, prose))
    # Noise diagnostics (issue 15): drift across rounds, autocorrelation in execution order, steal and interrupts.
    statistics_files.update(noise_outputs(processed, macros, generated_dir, figures_dir, prose))
    # Published beside measured (sections/published.tex) and the one-page summary of the sources (sections/summary.tex).
    published_files, source_facts = published_outputs(
        summary, trials, processed.trials_csv.parent, macros, generated_dir, figures_dir, prose, sources_campaign=sources
    )
    statistics_files.update({**published_files, **summary_outputs(source_facts, prose)})
    # The studies (sections/echo.tex, latency.tex, robustness.tex, network.tex): macros, tables, figures.
    study_files = {}
    for study in studies:
        study_files.update(study.outputs(macros, generated_dir.parent, figures_dir, prose))
    header = (
        f"Generated by archbench.report from campaign {campaign.name}; do not edit.\n"
        "Every number the report quotes is defined here, computed from data/raw."
    )
    # Figures are included relative to the paper directory (generated_dir's parent), where latexmk runs.
    paper_dir = generated_dir.parent

    def include_path(key: str) -> str | None:
        made = made_figures.get(key)
        if made is None:
            return None
        return Path(os.path.relpath(made.path, paper_dir)).as_posix()

    contents = {
        MACROS_FILE: macros.render(header),
        ENVIRONMENT_FILE: environment.environment_table(prose),
        POOL_TABLES_FILE: main_tables.pool_size_tables(summary, prose),
        CONFIGURATIONS_TABLE_FILE: main_tables.configurations_table(summary, prose),
        ARCHITECTURE_TABLES_FILE: main_tables.comparison_tables(summary, prose),
    }
    for name, (label, key) in MAIN_FIGURES.items():
        contents[name] = latex.figure_block(
            include_path(key),
            label,
            prose.sentence(FIGURES_TEMPLATE, f"{key}_caption"),
            prose.sentence(FIGURES_TEMPLATE, f"{key}_missing"),
        )
    contents.update(statistics_files)
    contents.update(study_files)
    written = {}
    for name, text in contents.items():
        path = generated_dir / name
        path.write_text(text, encoding="utf-8")
        written[name] = path
    return written


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
    parser = argparse.ArgumentParser(prog="python -m archbench.report.build", description=__doc__.splitlines()[0])
    parser.add_argument("campaign", help="campaign name under --raw-root")
    parser.add_argument("--raw-root", type=Path, default=RAW_ROOT)
    parser.add_argument("--processed-dir", type=Path, default=PROCESSED_DIR)
    parser.add_argument("--generated-dir", type=Path, default=GENERATED_DIR)
    parser.add_argument("--figures-dir", type=Path, default=FIGURES_DIR)
    parser.add_argument("--pdf", action="store_true", help="also run latexmk in the generated dir's parent")
    parser.add_argument("--echo-campaign", help="echo study campaign under --raw-root (sections/echo.tex)")
    parser.add_argument("--latency-campaign", help="latency study campaign under --raw-root (sections/latency.tex); "
                        "its source-001 campaign is <name>-001 unless --latency-001-campaign names it")
    parser.add_argument("--latency-001-campaign")
    parser.add_argument("--robustness", help="abuse-suite result for the robustness appendix (default: "
                        "<processed-dir>/robustness.json, else <raw-root>/reference-robustness/robustness.json)")
    parser.add_argument("--network-campaign", help="netns campaign of sections/network.tex under --raw-root; its "
                        "loopback twin is <name>-loopback unless --network-loopback-campaign names it")
    parser.add_argument("--network-loopback-campaign")
    parser.add_argument("--sources-campaign", help="the sources profile's campaign under --raw-root (each source's own "
                        "protocol; the published-beside-measured section)")
    args = parser.parse_args(argv)
    try:
        outputs = build_report(args.campaign, args.raw_root, args.processed_dir, args.generated_dir, args.figures_dir,
                               echo_campaign=args.echo_campaign, latency_campaign=args.latency_campaign,
                               latency_001_campaign=args.latency_001_campaign, robustness=args.robustness,
                               network_campaign=args.network_campaign,
                               network_loopback_campaign=args.network_loopback_campaign,
                               sources_campaign=args.sources_campaign)
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
