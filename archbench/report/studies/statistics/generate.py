"""The entry point: macros, processed tables, the Q-Q figure and the generated LaTeX files."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.analysis import Labeller
from archbench.report.formats import ALPHA, several_depths
from archbench.report.latex import (
    MacroSet,
    escape,
    format_count,
    format_decimal,
)
from archbench.report.prose import Prose
from archbench.report.studies.crossos.data import (
    CrossOs,
    measured_cross_host,
    reference_comparison,
    source000_frames,
)
from archbench.report.studies.crossos.tables import (
    cross_host_sentence,
    measured_table,
    reference_sentence,
    source000_sentences,
    source000_table,
)
from archbench.report.studies.environment.tables import (
    environment_sentence,
    factors_table,
    provenance_table,
    trial_records,
)
from archbench.report.studies.pool import tables as main_tables
from archbench.report.studies.rules.facts import ReportContext, rule_rows, rules_summary_sentence, rules_table
from archbench.report.studies.statistics.adaptive_state import adaptive_outcome
from archbench.report.studies.statistics.comparisons import (
    comparison_abstract_sentence,
    comparison_pairs,
    comparison_sentence,
    comparisons_table,
    run_comparisons,
    speedup_sentence,
)
from archbench.report.studies.statistics.diagnostics import (
    adaptive_sentence,
    determinism_sentence,
    diagnostics_table,
    half_width_sentence,
    mean_median_sentence,
    median_coverage_sentence,
    normality_sentence,
    outlier_sentence,
    rate_summary_sentence,
)
from archbench.report.studies.statistics.files import (
    COMPARISONS_CSV,
    COMPARISONS_TABLE_FILE,
    CROSSOS_CSV,
    CROSSOS_MEASURED_TABLE_FILE,
    CROSSOS_REFERENCE_TABLE_FILE,
    CROSSOS_SOURCE_TABLE_FILE,
    DIAGNOSTICS_TABLE_FILE,
    FACTORS_TABLE_FILE,
    OUTLIERS_CSV,
    PROVENANCE_TABLE_FILE,
    QQ_FIGURE_FILE,
    RULES_TABLE_FILE,
)
from archbench.report.studies.statistics.qq import qq_outputs

# =========================================================================== entry point


def generate(
    processed: analysis.ProcessedCampaign,
    macros: MacroSet,
    generated_dir: Path,
    figures_dir: Path,
    figures_present: Mapping[str, bool] | None = None,
    *,
    raw_root: Path | None = None,
    seed: int | None = stats.DEFAULT_SEED,
    resamples: int = stats.DEFAULT_RESAMPLES,
    source000_csv: Path | None = None,
    prose: Prose | None = None,
) -> dict[str, str]:
    """Add the sections' macros to `macros`, write the processed tables and the Q-Q figure, and return the
    generated LaTeX files (name -> text). `raw_root` defaults to the campaign directory's parent (where the
    reference and imported campaigns are). `prose` defaults to paper/templates/."""
    prose = prose if prose is not None else Prose()
    summary, trials, campaign = processed.summary, processed.trials, processed.campaign
    campaign_dir = Path(campaign.path)
    campaign_name = campaign_dir.name
    raw_root = Path(raw_root) if raw_root is not None else campaign_dir.parent
    generated_dir, figures_dir = Path(generated_dir), Path(figures_dir)
    processed_dir = Path(processed.summary_csv).parent
    labels = Labeller(summary) if not summary.empty else Labeller(pd.DataFrame(columns=["architecture"]))
    several = several_depths(summary)
    meta = campaign.meta
    records = trial_records(campaign)

    # Method constants (not measurements) that the text quotes.
    macros.add("bootstrap seed", escape(seed if seed is not None else "none"), "seed of every bootstrap interval")
    macros.add("bootstrap resamples", format_count(resamples), "bootstrap resamples")
    macros.add("normality alpha", format_decimal(ALPHA, 2), "Shapiro-Wilk level for choosing Welch's t")
    macros.add("test alpha", format_decimal(ALPHA, 2), "significance level of the tests (after correction)")

    # Statistics section.
    state = adaptive_outcome(campaign_dir, meta, trials)
    macros.add("determinism sentence", determinism_sentence(summary, prose), "spread of the trials (rule 5)")
    macros.add("median coverage sentence", median_coverage_sentence(summary, prose), "order-statistic coverage per n")
    macros.add("normality sentence", normality_sentence(summary, labels, several, prose), "Shapiro-Wilk outcomes")
    qq_tex, qq_present = qq_outputs(summary, trials, figures_dir, generated_dir.parent, prose)
    macros.add(
        "qq figure sentence",
        prose.sentence("statistics/diagnostics", "qq_figure_sentence", present=qq_present),
        "cites the Q-Q figure (empty without one)",
    )
    macros.add("rate summary sentence", rate_summary_sentence(summary, labels, several, prose), "rule 3 in numbers")
    outlier_text, outlier_frame = outlier_sentence(trials, summary, prose)
    macros.add("outlier sentence", outlier_text, "Tukey outliers, named")
    macros.add("adaptive sentence", adaptive_sentence(state, labels, summary, several, prose), "adaptive repetition")
    macros.add("half width sentence", half_width_sentence(summary, labels, several, prose), "achieved CI half-widths")
    macros.add("mean median sentence", mean_median_sentence(summary, prose), "mean against median")

    pairs = comparison_pairs(summary)
    comparisons = run_comparisons(pairs, trials, seed=seed, resamples=resamples)
    macros.add(
        "comparison sentence", comparison_sentence(comparisons, seed, resamples, prose), "the comparison families"
    )
    macros.add("speedup sentence", speedup_sentence(summary, trials, seed, resamples, prose), "rule 1: base case")
    macros.add(
        "comparison abstract sentence",
        comparison_abstract_sentence(comparisons, prose),
        "the comparisons in one sentence",
    )

    # Cross-OS section.
    cross = CrossOs()
    source000_frames(cross, source000_csv)
    sentences = source000_sentences(cross, prose)
    macros.add("cross os source sentence", sentences["source"], "source 000's OS comparison")
    macros.add("cross os confounding sentence", sentences["confounding"], "what the OS effect is confounded with")
    macros.add("cross os setup sentence", sentences["setup"], "separate client against loopback")
    macros.add("cross os cpu share sentence", sentences["share"], "matched by threads per logical processor")
    measured_cross_host(cross, trials, campaign_name, raw_root, seed=seed, resamples=resamples)
    macros.add(
        "cross host sentence", cross_host_sentence(cross, prose), "configurations measured on several OSes/hosts"
    )
    reference_comparison(cross, trials, campaign_name, raw_root, seed=seed, resamples=resamples)
    macros.add(
        "reference sentence", reference_sentence(cross, campaign_name, prose), "this campaign against the reference"
    )

    # Environment appendix.
    macros.add("environment sentence", environment_sentence(summary, trials, records, prose), "factors and provenance")

    # Rules.
    context = ReportContext(
        summary=summary,
        trials=trials,
        meta=meta,
        pool_table_labels=[label for label, _ in main_tables.pool_size_table_blocks(summary)],
        architecture_table_labels=[label for label, _ in main_tables.comparison_table_blocks(summary)],
        figures_present=dict(figures_present or {}),
        qq_present=qq_present,
        comparisons=comparisons,
        cross=cross,
        adaptive_state=state,
    )
    rows = rule_rows(context, prose)
    macros.add("rules summary sentence", rules_summary_sentence(rows, prose), "how many rules are met")

    _write_processed(processed_dir, comparisons, cross, outlier_frame)
    crossos = "statistics/crossos"
    measured_caption = prose.sentence(crossos, "measured_caption", by_os=cross.measured_group == "os")
    reference_caption = prose.sentence(crossos, "reference_caption")
    return {
        DIAGNOSTICS_TABLE_FILE: diagnostics_table(summary, state, prose),
        QQ_FIGURE_FILE: qq_tex,
        COMPARISONS_TABLE_FILE: comparisons_table(comparisons, prose),
        CROSSOS_SOURCE_TABLE_FILE: source000_table(cross, prose),
        CROSSOS_MEASURED_TABLE_FILE: measured_table(
            cross.measured, "tab:crossos-measured", measured_caption, prose.block(crossos, "no_measured_table"), prose
        ),
        CROSSOS_REFERENCE_TABLE_FILE: measured_table(
            cross.reference,
            "tab:crossos-reference",
            reference_caption,
            prose.block(crossos, "no_reference_table"),
            prose,
        ),
        PROVENANCE_TABLE_FILE: provenance_table(meta, records, trials, prose),
        FACTORS_TABLE_FILE: factors_table(meta, summary, trials, records, prose),
        RULES_TABLE_FILE: rules_table(rows, prose),
    }


def _write_processed(
    processed_dir: Path, comparisons: pd.DataFrame, cross: CrossOs, outlier_frame: pd.DataFrame
) -> None:
    processed_dir.mkdir(parents=True, exist_ok=True)
    comparisons.to_csv(processed_dir / COMPARISONS_CSV, index=False, lineterminator="\n")
    parts = [
        frame.assign(table=name)
        for name, frame in (
            ("source000_cross_os", cross.source_os),
            ("source000_cross_os_cpu_share", cross.source_cpu_share),
            ("source000_setups", cross.source_setups),
            ("measured", cross.measured),
            ("reference", cross.reference if cross.reference is not None else pd.DataFrame()),
        )
        if frame is not None and not frame.empty
    ]
    combined = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["table"])
    combined.to_csv(processed_dir / CROSSOS_CSV, index=False, lineterminator="\n")
    outlier_frame.to_csv(processed_dir / OUTLIERS_CSV, index=False, lineterminator="\n")
