"""The statistics study: the statistical method and its diagnostics on the main campaign (Hoefler & Belli's rules).

It quotes the method's constants (seed, resamples, levels), the spread, normality, rate summaries, outliers,
adaptive repetition and interval widths (archbench.studies.statistics.diagnostics, the Q-Q figure), the
comparison families (`comparisons`: each pool size against the next smaller one, request against connection
dispatch, each architecture against nginx; the pre-declared paired t test on the per-round log ratios, not run
under three rounds, Holm and BH within each family, minimum detectable differences), the paired ratios within rounds
(`paired`, with the differences detectable with 80 % power), the families of Holm's correction stated once, and the
noise diagnostics (`noise`).
It writes `comparisons.csv`, `outliers.csv`, `paired-ratios.csv` and the noise CSVs into data/processed/; its words
are paper/templates/statistics/, its section paper/templates/statistics/section.tex.j2, rendered with the facts
`write` gives it. Everything degrades to a sentence when the campaign lacks the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from archbench import stats
from archbench.analyze.adaptive_state import AdaptiveOutcome, adaptive_outcome
from archbench.analyze.analysis import Labeller, several_depths, write_csvs
from archbench.analyze.paired import paired_ratios
from archbench.analyze.planned_comparisons import comparison_pairs, run_comparisons
from archbench.render.formats import ALPHA
from archbench.render.latex import MacroSet, escape, format_count, format_decimal
from archbench.render.study import Study, StudyContext, StudyOutput
from archbench.studies.statistics.comparisons import (
    COMPARISONS_CSV,
    comparison_abstract_facts,
    comparisons_table,
    families_facts,
    holm_families_facts,
    predeclared_test_name,
    speedup_facts,
)
from archbench.studies.statistics.diagnostics import (
    OUTLIERS_CSV,
    adaptive_facts,
    determinism_facts,
    diagnostics_table,
    half_width_facts,
    mean_median_facts,
    median_coverage_facts,
    normality_facts,
    outlier_facts,
    rate_summary_facts,
)
from archbench.studies.statistics.noise import noise_outputs
from archbench.studies.statistics.paired import paired_outputs
from archbench.studies.statistics.qq import qq_figure, qq_outputs

DIAGNOSTICS_TABLE_FILE = "table-diagnostics.tex"
QQ_FIGURE_FILE = "figure-qq.tex"
COMPARISONS_TABLE_FILE = "table-comparisons.tex"


@dataclass(frozen=True)
class StatisticsResult:
    """What the rules study cites: the comparisons, whether the Q-Q figure exists, the adaptive outcome."""

    comparisons: pd.DataFrame
    qq_present: bool
    adaptive_state: AdaptiveOutcome


def write(
    context: StudyContext, seed: int | None = stats.DEFAULT_SEED, resamples: int = stats.DEFAULT_RESAMPLES
) -> StudyOutput:
    processed, prose = context.processed, context.prose
    summary, trials, campaign = processed.summary, processed.trials, processed.campaign
    labels = Labeller(summary)
    several = several_depths(summary)
    macros = MacroSet()

    # Method constants (not measurements) that the text quotes.
    macros.add(r"\abBootstrapSeed", escape(seed if seed is not None else "none"), "seed of every bootstrap interval")
    macros.add(r"\abBootstrapResamples", format_count(resamples), "bootstrap resamples")
    macros.add(r"\abNormalityAlpha", format_decimal(ALPHA, 2), "Shapiro-Wilk level (a diagnostic)")
    macros.add(r"\abTestAlpha", format_decimal(ALPHA, 2), "significance level of the tests (after correction)")

    state = adaptive_outcome(Path(campaign.path), campaign.meta, trials)
    qq_tex, qq_present = qq_outputs(summary, trials, context.figures_dir, context.paper_dir, prose)
    outliers, outlier_frame = outlier_facts(trials, summary, prose)
    comparisons = run_comparisons(comparison_pairs(summary), trials)
    # The facts of the section's sentences (paper/templates/statistics/section.tex.j2).
    section = {
        "determinism": determinism_facts(summary),
        "median_coverage": median_coverage_facts(summary),
        "normality": normality_facts(summary, labels, several),
        "qq": {"present": qq_present},
        "rate_summary": rate_summary_facts(summary, labels, several),
        "outliers": outliers,
        "adaptive": adaptive_facts(state, labels, summary, several),
        "half_width": half_width_facts(summary, labels, several),
        "mean_median": mean_median_facts(summary),
        "families": families_facts(comparisons),
        "speedup": speedup_facts(summary, trials, seed, resamples),
    }
    macros.add(r"\abPredeclaredTest", predeclared_test_name(prose), "the test of every planned comparison")
    macros.add(r"\abMinRounds", str(stats.MIN_ROUNDS), "fewest paired rounds a planned test is run with")
    # The comparisons in one sentence: the abstract quotes it, as studies.statistics.abstract.
    section["abstract"] = comparison_abstract_facts(comparisons)
    write_csvs(Path(processed.summary_csv).parent, {COMPARISONS_CSV: comparisons, OUTLIERS_CSV: outlier_frame})

    files = {
        DIAGNOSTICS_TABLE_FILE: diagnostics_table(summary, state, prose),
        QQ_FIGURE_FILE: qq_tex,
        COMPARISONS_TABLE_FILE: comparisons_table(comparisons, prose),
    }
    # Paired ratios within rounds: paired-ratios.csv, its table, the forest plot and their macros.
    paired = paired_ratios(trials, seed=seed, resamples=resamples)
    paired_files, section["paired"] = paired_outputs(
        processed, macros, context.generated_dir, context.figures_dir, prose, frame=paired
    )
    files.update(paired_files)
    paired_family = int(paired["family_size"].iloc[0]) if not paired.empty else None
    section["holm_families"] = holm_families_facts(comparisons, paired_family)
    # Noise diagnostics: drift across rounds, autocorrelation in execution order, steal and interrupts.
    noise_files, section["noise"] = noise_outputs(processed, macros, context.generated_dir, context.figures_dir, prose)
    files.update(noise_files)
    return StudyOutput(macros, files, StatisticsResult(comparisons, qq_present, state), section)


# In the appendices: the body is what a reader needs to pick a design; the diagnostics support it from the back.
STUDY = Study(
    name="statistics",
    title="statistical method and diagnostics",
    part="appendix",
    write=write,
    inline_figures=lambda processed: {"normal Q-Q plots": lambda: qq_figure(processed.summary, processed.trials)},
)
