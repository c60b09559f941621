"""The statistics section's noise diagnostics: facts, macros and the figure (paper/generated/figure-noise.tex).

archbench.analyze.noise computes the diagnostics (and this writes its CSVs beside trials.csv); here they become
formatted facts for the sentences of paper/templates/statistics/noise.tex.j2, which the section template renders
under its "Noise diagnostics" subsection, the macros the text may quote and the residual figure
(archbench.studies.statistics.noise_figure).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import several_depths
from archbench.analyze.noise import NoiseDiagnostics, noise_diagnostics
from archbench.render import latex
from archbench.render.common import saved_include
from archbench.render.formats import ALPHA, first_named, fmt_bracket, fmt_number, fmt_p, fmt_pct
from archbench.render.latex import MISSING, MacroSet, escape_identifier, format_decimal
from archbench.render.prose import Prose
from archbench.stats.autocorrelation import Autocorrelation
from archbench.studies.statistics.diagnostics import config_names
from archbench.studies.statistics.noise_figure import noise_figure, residual_panels, steal_recorded

TEMPLATE = "statistics/noise"
NOISE_FIGURE_FILE = "figure-noise.tex"  # paper/generated/
NOISE_FIGURE = "noise-residuals.pdf"  # paper/figures/
FIGURE_LABEL = "fig:noise"
METRIC_KEYS = {"requests_per_sec": "throughput", "server_cpu_us_per_request": "cpu"}
PANEL_NAMES = {"requests_per_sec": "throughput", "server_cpu_us_per_request": "server CPU time per request"}
SLOPE_DIGITS = 2


def p_clause(value: float) -> str:
    """'$p=0.24$', '$p<0.001$', or a dash: the whole clause, so '<' is never typeset outside math."""
    if math.isnan(value):
        return MISSING
    return "$p<0.001$" if value < 0.001 else f"$p={fmt_p(value)}$"


def pct_of(fraction: float, digits: int = 1) -> str:
    return fmt_pct(100.0 * fraction if not math.isnan(fraction) else math.nan, digits)


def _acf_facts(result: Autocorrelation, within: Autocorrelation) -> dict[str, Any]:
    return {
        "has_acf": bool(result.lags),
        "n": result.n,
        "lag1": fmt_number(result.lag1, 2),
        "band": format_decimal(result.band, 2),
        "p": p_clause(result.p_value),
        "max_lag": result.max_lag,
        "correlated": bool(result.p_value < ALPHA),
        "within_lag1": fmt_number(within.lag1, 2),
        "within_p": p_clause(within.p_value),
        "within_correlated": bool(within.p_value < ALPHA),
    }


def metric_facts(diagnostics: NoiseDiagnostics, summary: pd.DataFrame) -> list[dict[str, Any]]:
    """Per metric: drift, autocorrelation and round-effect facts, formatted for the template."""
    name = config_names(summary, analysis.Labeller(summary), several_depths(summary))
    facts = []
    for metric, key in METRIC_KEYS.items():
        drift = diagnostics.drift_summary[metric]
        rows = diagnostics.drift
        drifting = rows[(rows["metric"] == metric) & rows["drifting"].astype(bool)] if not rows.empty else rows
        named, more = first_named([name(c) for c in drifting.get("config_id", [])])
        effect = diagnostics.round_effect[metric]
        pooled = drift.pooled
        facts.append(
            {
                "key": key,
                "tested": drift.tested,
                "median": fmt_pct(drift.median_pct, SLOPE_DIGITS),
                "drifting": drift.drifting,
                "drifting_named": named,
                "drifting_more": more,
                "pooled": pct_of(pooled.relative, SLOPE_DIGITS),
                "pooled_interval": fmt_bracket(
                    100.0 * pooled.ci.low, 100.0 * pooled.ci.high, lambda v: fmt_pct(v, SLOPE_DIGITS)
                ),
                "pooled_p": p_clause(pooled.p_value),
                "round_share": None if math.isnan(effect.share) else pct_of(effect.share),
                "round_p": p_clause(effect.p_value),
                **_acf_facts(diagnostics.autocorrelation[metric], diagnostics.within_rounds[metric]),
            }
        )
    return facts


def steal_facts(diagnostics: NoiseDiagnostics) -> dict[str, Any]:
    steal = diagnostics.steal
    named, more = first_named([escape_identifier(t) for t in steal.flagged_ids])
    return {
        "recorded": steal.recorded,
        "missing": steal.trials - steal.recorded,
        "median": pct_of(steal.median_steal, 2),
        "max": pct_of(steal.max_steal, 2),
        "interrupts": pct_of(steal.median_interrupts),
        "max_interrupts": pct_of(steal.max_interrupts),
        "flagged": steal.flagged,
        "flagged_named": named,
        "flagged_more": more,
        "threshold": pct_of(steal.threshold, 0),
    }


def add_macros(macros: MacroSet, diagnostics: NoiseDiagnostics) -> None:
    """The numbers the text may quote; a dash where the campaign cannot give one (steal before it was recorded)."""
    throughput, cpu = (diagnostics.drift_summary[m] for m in METRIC_KEYS)
    macros.add(
        r"\abNoiseMedianDrift", fmt_pct(throughput.median_pct, SLOPE_DIGITS), "median throughput slope per round"
    )
    macros.add(r"\abNoiseMedianDriftCpu", fmt_pct(cpu.median_pct, SLOPE_DIGITS), "median server CPU/request slope")
    macros.add(
        r"\abNoiseDriftingConfigurations",
        str(throughput.drifting + cpu.drifting),
        "configuration-metric pairs drifting after Holm",
    )
    macros.add(r"\abNoiseLjungBoxP", fmt_p(diagnostics.autocorrelation["requests_per_sec"].p_value), "throughput")
    macros.add(
        r"\abNoiseLjungBoxPCpu", fmt_p(diagnostics.autocorrelation["server_cpu_us_per_request"].p_value), "CPU/req."
    )
    macros.add(
        r"\abNoiseRoundShare",
        pct_of(diagnostics.round_effect["requests_per_sec"].share),
        "share of throughput residual variance between rounds",
    )
    recorded = diagnostics.steal.recorded > 0
    macros.add(r"\abNoiseMedianSteal", pct_of(diagnostics.steal.median_steal, 2) if recorded else MISSING, "machine")
    macros.add(r"\abNoiseMaxSteal", pct_of(diagnostics.steal.max_steal, 2) if recorded else MISSING, "any CPU set")


def figure_tex(diagnostics: NoiseDiagnostics, figures_dir: Path, paper_dir: Path, prose: Prose) -> tuple[str, bool]:
    """The figure's LaTeX (or the sentence standing in for it) and whether it exists; a stale PDF is removed."""
    include = saved_include(noise_figure(diagnostics.trials), Path(figures_dir) / NOISE_FIGURE, paper_dir)
    if include is None:
        return prose.block(TEMPLATE, "no_figure"), False
    panels = [PANEL_NAMES[m] for m in residual_panels(diagnostics.trials)]
    caption = prose.sentence(TEMPLATE, "figure_caption", panels=panels, steal_panel=steal_recorded(diagnostics.trials))
    return latex.figure_block(include, FIGURE_LABEL, caption, ""), True


def noise_outputs(
    processed: analysis.ProcessedCampaign,
    macros: MacroSet,
    generated_dir: Path,
    figures_dir: Path,
    prose: Prose | None = None,
) -> tuple[dict[str, str], dict[str, Any]]:
    """Diagnose the campaign, write its noise CSVs beside trials.csv and the figure, add the macros, and return
    {NOISE_FIGURE_FILE: LaTeX} and the facts of the section's noise sentences."""
    prose = prose if prose is not None else Prose()
    diagnostics = noise_diagnostics(processed.trials, processed.campaign.trials)
    diagnostics.write(Path(processed.trials_csv).parent)
    add_macros(macros, diagnostics)
    figure, present = figure_tex(diagnostics, figures_dir, Path(generated_dir).parent, prose)
    facts = {
        "metrics": metric_facts(diagnostics, processed.summary),
        "steal": steal_facts(diagnostics),
        "figure_present": present,
    }
    return {NOISE_FIGURE_FILE: figure}, facts
