"""The paired ratios in the report: data/processed/paired-ratios.csv, its table, the forest plot, the macros.

`paired_outputs` is what the statistics study calls after its own diagnostics: it computes `archbench.analyze.paired.paired_ratios` from trials.csv's frame, writes the CSV
beside the other processed tables, adds the numbers the report quotes (the median half-widths of the paired and
unpaired ratios per metric) and returns the generated LaTeX files (table and figure) and the facts of the section's
sentence about them. The half-widths are compared with a target only where the campaign set one (its `ci_target`
with a paired adaptive criterion, `adaptive_facts`, whose recorded outcome says whether it was reached); a campaign
without one is held to no target. Every word is in paper/templates/statistics/paired.tex.j2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.analysis import several_depths
from archbench.analyze.paired import (
    CPU_PER_REQUEST,
    PAIRED_CSV,
    THROUGHPUT,
    UPPER_BOUND_ARCHITECTURE,
    compared_half_widths,
    paired_ratios,
)
from archbench.measure import adaptive
from archbench.render import latex
from archbench.render.common import saved_include
from archbench.render.formats import (
    COMPARISONS_SIZE,
    detectable_number,
    family_row,
    fill_first,
    first_named,
    fmt_bracket,
    fmt_number,
    fmt_pct,
    notes_after,
    two_lines,
)
from archbench.render.latex import MISSING, MacroSet, escape, format_count, format_decimal
from archbench.render.prose import Prose
from archbench.stats.power import COMPUTED, DEFAULT_POWER, NOT_COMPUTABLE
from archbench.studies.statistics.diagnostics import numbers
from archbench.studies.statistics.paired_figure import forest_figure, forest_rows

TEMPLATE = "statistics/paired"  # paper/templates/statistics/paired.tex.j2
PAIRED_TABLE_FILE = "table-paired.tex"
PAIRED_FIGURE_FILE = "figure-paired.tex"
PAIRED_FIGURE = "paired-ratios.pdf"


def _ratio_cell(ratio: Any, low: Any, high: Any) -> str:
    if latex.is_missing(ratio):
        return MISSING
    return two_lines(fmt_number(ratio, 3), fmt_bracket(low, high, lambda v: fmt_number(v, 3)))


def _detectable_cell(value: Any, status: Any, prose: Prose) -> str:
    """A difference detectable with 80 % power, or the mark of one whose solved power did not check."""
    if status == NOT_COMPUTABLE:
        return prose.sentence(TEMPLATE, "not_computable_mark")
    return detectable_number(value, 1)


def paired_table(frame: pd.DataFrame, several_depths: bool, prose: Prose) -> str:
    """The compared row of every configuration, one block per pipeline depth."""
    rows = forest_rows(frame)
    if rows.empty:
        return prose.block(TEMPLATE, "no_table")
    columns = [
        ("Configuration", "l"),
        (latex.stacked("Com-", "pared"), "l"),
        (latex.stacked("$n$", "(drop.)"), "r"),
        (latex.stacked("Paired ratio", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked(r"$\pm$", r"(\%)"), "r"),
        (latex.stacked("Det.", r"(\%)"), "r"),
        (latex.stacked("Unpaired ratio", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked(r"$\pm$", r"(\%)"), "r"),
        (latex.stacked("Det.", r"(\%)"), "r"),
    ]
    body: list[str] = []
    for depth, block in rows.groupby("pipeline", sort=True):
        if body:
            body.append(r"\midrule")
        first = block.iloc[0]
        title = prose.sentence(
            TEMPLATE,
            "block_title",
            several=several_depths,
            depth=int(depth),
            reference=escape(_reference_name(first)),
            floor=first["reference_architecture"] == UPPER_BOUND_ARCHITECTURE,
        )
        body.append(family_row(len(columns), title))
        for _, row in block.iterrows():
            dropped = int(row["n_dropped"])
            cells = [
                escape(row["variant"]) + (r"$^{\dagger}$" if bool(row["client_bound"]) else ""),
                prose.sentence(TEMPLATE, "metric_short", metric=row["metric"]),
                format_count(row["n_rounds"]) + (f" ({dropped})" if dropped else ""),
                _ratio_cell(row["ratio"], row["low"], row["high"]),
                format_decimal(row["half_width_pct"], 1),
                _detectable_cell(row["detectable_pct"], row.get("detectable_status"), prose),
                _ratio_cell(row["unpaired_ratio"], row["unpaired_low"], row["unpaired_high"]),
                format_decimal(row["unpaired_half_width_pct"], 1),
                _detectable_cell(row["unpaired_detectable_pct"], row.get("unpaired_detectable_status"), prose),
            ]
            body.append(" & ".join(cells) + r" \\[2pt]")
    caption = prose.sentence(TEMPLATE, "table_caption", power_pct=round(100 * DEFAULT_POWER))
    notes = prose.sentence(
        TEMPLATE,
        "table_notes",
        power_pct=round(100 * DEFAULT_POWER),
        family=int(rows["family_size"].iloc[0]),
        csv=PAIRED_CSV,
        client_bound=bool(rows["client_bound"].astype(bool).any()),
        not_computable=bool(
            (rows[["detectable_status", "unpaired_detectable_status"]] == NOT_COMPUTABLE).to_numpy().any()
        ),
    )
    return latex.render_longtable(
        fill_first(columns),
        body,
        caption,
        "tab:paired",
        tabcolsep="2pt",
        notes=notes_after(notes),
        size=COMPARISONS_SIZE,
    )


def _detectable_pct(value: float) -> str:
    return detectable_number(value, 0) + r"\,\%"


def _reference_name(row: Any) -> str:
    """The reference as the table names it: pong by its family name, without its loop count."""
    if row["reference_architecture"] == UPPER_BOUND_ARCHITECTURE:
        return analysis.Labeller(pd.DataFrame()).family({"architecture": UPPER_BOUND_ARCHITECTURE})
    return str(row["reference_variant"])


def _median_pct(frame: pd.DataFrame, metric: str, paired: bool) -> str:
    values = compared_half_widths(frame, metric, paired)
    return fmt_pct(values.median()) if not values.empty else MISSING


def paired_facts(frame: pd.DataFrame, several_depths: bool) -> dict[str, Any]:
    """What the paired sentence says: counts, references, half-widths paired against unpaired, the tests."""
    compared = forest_rows(frame)
    if compared.empty:
        return {"count": 0}
    references = sorted({_reference_name(row) for _, row in compared.iterrows()})
    bound = compared[compared["client_bound"].astype(bool)]
    rejected = compared[compared["reject_holm"].astype(bool)]
    kept = compared[~compared["reject_holm"].astype(bool)]
    detectable = numbers(kept, "detectable_pct")[kept["detectable_status"] == COMPUTED]
    boot_inside = compared[
        (numbers(compared, "bootstrap_low") >= compared["low"])
        & (numbers(compared, "bootstrap_high") <= compared["high"])
    ]
    narrower = (numbers(compared, "half_width_pct") < numbers(compared, "unpaired_half_width_pct")).sum()
    named, more = first_named(
        [escape(r["variant"]) + (f", $D={int(r['pipeline'])}$" if several_depths else "") for _, r in kept.iterrows()]
    )
    return {
        "count": len(compared),
        "references": [escape(r) for r in references],
        "floor": bool((compared["reference_architecture"] == UPPER_BOUND_ARCHITECTURE).any()),
        "rounds_min": int(compared["n_rounds"].min()),
        "rounds_max": int(compared["n_rounds"].max()),
        "dropped": int(compared["n_dropped"].sum()),
        "client_bound": len(bound),
        "cpu_paired": _median_pct(frame, CPU_PER_REQUEST, True),
        "cpu_unpaired": _median_pct(frame, CPU_PER_REQUEST, False),
        "throughput_paired": _median_pct(frame, THROUGHPUT, True),
        "throughput_unpaired": _median_pct(frame, THROUGHPUT, False),
        "narrower": int(narrower),
        "bootstrap_inside": len(boot_inside),
        "rejected": len(rejected),
        "family": int(compared["family_size"].iloc[0]),
        "alpha": format_decimal(stats.DEFAULT_ALPHA, 2),
        "undistinguished": named,
        "undistinguished_more": more,
        "undistinguished_count": len(kept),
        "detectable_median": _detectable_pct(detectable.median()) if not detectable.empty else None,
        "detectable_min": _detectable_pct(detectable.min()) if not detectable.empty else None,
        "detectable_max": _detectable_pct(detectable.max()) if not detectable.empty else None,
        "not_computable": int((kept["detectable_status"] == NOT_COMPUTABLE).sum()),
        "power_pct": round(100 * DEFAULT_POWER),
        "csv": PAIRED_CSV,
    }


def adaptive_facts(processed: analysis.ProcessedCampaign) -> dict[str, Any]:
    """Whether the campaign stopped adaptively on the paired ratios, and how (its recorded outcome)."""
    campaign = processed.campaign
    parameters = (getattr(campaign, "meta", None) or {}).get("parameters") or {}
    criterion = parameters.get("adaptive_criterion") or adaptive.MEAN_CRITERION
    if parameters.get("ci_target") is None or criterion == adaptive.MEAN_CRITERION:
        return {"adaptive": None}
    recorded = adaptive.latest_summary(Path(campaign.path)) or {}
    return {
        "adaptive": criterion,
        "adaptive_target": fmt_pct(parameters["ci_target"]),
        "adaptive_max": parameters.get("max_trials"),
        "adaptive_budget": format_count(parameters.get("adaptive_budget_s")),
        "adaptive_stopped": recorded.get("stopped_by"),
    }


def paired_outputs(
    processed: analysis.ProcessedCampaign,
    macros: MacroSet,
    generated_dir: Path,
    figures_dir: Path,
    prose: Prose,
    *,
    seed: int | None = stats.DEFAULT_SEED,
    resamples: int = stats.DEFAULT_RESAMPLES,
    frame: pd.DataFrame | None = None,
) -> tuple[dict[str, str], dict[str, Any]]:
    """Write paired-ratios.csv (`frame` when already computed from the processed trials) and the forest plot, add
    the paired macros, return the generated files and the facts of the sentence (paired.tex.j2's `sentence`)."""
    if frame is None:
        frame = paired_ratios(processed.trials, seed=seed, resamples=resamples)
    analysis.write_csvs(Path(processed.summary_csv).parent, {PAIRED_CSV: frame})
    several = several_depths(processed.summary)
    facts = {**paired_facts(frame, several), **adaptive_facts(processed)}
    macros.add(
        r"\abPowerPercent", str(round(100 * DEFAULT_POWER)), "the power of every difference 'detectable with' it"
    )
    for name, metric, paired in (
        (r"\abPairedCpuMedianHalfWidth", CPU_PER_REQUEST, True),
        (r"\abUnpairedCpuMedianHalfWidth", CPU_PER_REQUEST, False),
        (r"\abPairedThroughputMedianHalfWidth", THROUGHPUT, True),
        (r"\abUnpairedThroughputMedianHalfWidth", THROUGHPUT, False),
    ):
        kind = "paired" if paired else "unpaired"
        macros.add(
            name,
            _median_pct(frame, metric, paired),
            f"median 95% CI half-width of the {kind} {metric} ratios to the reference",
        )
    include = saved_include(
        forest_figure(frame, several), Path(figures_dir) / PAIRED_FIGURE, Path(generated_dir).parent
    )
    if include is None:
        figure_tex = prose.block(TEMPLATE, "no_figure")
    else:
        figure_tex = latex.figure_block(include, "fig:paired", prose.sentence(TEMPLATE, "figure_caption"), "")
    return {PAIRED_TABLE_FILE: paired_table(frame, several, prose), PAIRED_FIGURE_FILE: figure_tex}, facts
