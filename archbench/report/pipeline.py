"""The analysis, step by step: what `build_report` does, as calls a notebook makes one at a time.

notebooks/analyze.ipynb runs these steps in this order, each under a cell that says what it does and why, and a
reader may change a step's result before the next one; `archbench.report.build.build_report` runs the same
functions in the same order, so the notebook's outputs are the report's:

1. `check_parameters`: the campaign exists, the thresholds make sense (a ParameterError naming the parameter,
   before anything is written);
2. `load_campaign`: the raw records of `data/raw/<campaign>/` (read only);
3. `tidy_trials`: one row per trial record (warm-ups, failures included; archbench.analyze.trials);
4. `summarise`: one row per configuration, means with their intervals, medians, Shapiro-Wilk, outlier counts
   (archbench.analyze.summary);
5. `write_processed`: trials.csv and summary.csv in data/processed/;
6. `statistical_tests`: the comparison families, each comparison by its pre-declared test (the paired t test on
   the per-round log ratios; not run under three rounds), Holm within each family, minimum detectable
   differences and verdicts, as the statistics section reports them;
7. `inline_figures`: the report's figures as matplotlib Figure objects, for display (the studies save them as the
   PDFs paper/generated/ includes);
8. `archbench.report.build.write_report`: the studies' campaigns, the figures' PDFs and every generated
   LaTeX file of paper/report.tex.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from archbench.analyze import analysis
from archbench.analyze.planned_comparisons import comparison_pairs, run_comparisons
from archbench.config.params import ParameterError
from archbench.data import storage
from archbench.render.study import Study
from archbench.studies import STUDIES


def resolve_campaign(campaign: str, raw_root: Path) -> Path:
    """The campaign directory, or a ParameterError that lists what exists."""
    raw_root = Path(raw_root)
    if not raw_root.is_dir():
        raise ParameterError("raw_root", f"{raw_root} is not a directory")
    available = storage.list_campaigns(raw_root)
    if not campaign or campaign not in available:
        listing = ", ".join(available) if available else "none"
        raise ParameterError("campaign", f"no campaign {campaign!r} under {raw_root}; available campaigns: {listing}")
    return raw_root / campaign


def check_parameters(campaign: str, raw_root: Path, latency_knee_p99_ms: object) -> Path:
    """Step 1: the campaign directory, once every parameter is known to be usable (the knee threshold is a
    latency in milliseconds > 0)."""
    campaign_dir = resolve_campaign(campaign, Path(raw_root))
    value = latency_knee_p99_ms
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise ParameterError("latency_knee_p99_ms", f"a latency threshold in milliseconds > 0, got {value!r}")
    return campaign_dir


def load_campaign(campaign_dir: Path, processed_dir: Path) -> storage.Campaign:
    """Step 2: the raw campaign (never written: refused when processed_dir lies inside it)."""
    analysis.refuse_inside_raw(Path(processed_dir).resolve(), Path(campaign_dir).resolve())
    return analysis.load_raw_campaign(Path(campaign_dir).resolve())


def tidy_trials(campaign: storage.Campaign) -> pd.DataFrame:
    """Step 3: one row per trial record, parsed from the load generator's kept output."""
    return analysis.trials_frame(campaign)


def summarise(trials: pd.DataFrame, campaign: storage.Campaign) -> pd.DataFrame:
    """Step 4: one row per configuration of the campaign's plan (statistics over measured, ok trials)."""
    return analysis.summary_frame(trials, campaign.meta.get("plan") or ())


def write_processed(
    campaign: storage.Campaign, trials: pd.DataFrame, summary: pd.DataFrame, processed_dir: Path
) -> analysis.ProcessedCampaign:
    """Step 5: trials.csv and summary.csv, and the processed campaign every later step takes."""
    written = analysis.write_csvs(Path(processed_dir).resolve(), {"trials.csv": trials, "summary.csv": summary})
    return analysis.ProcessedCampaign(campaign, trials, summary, written["trials.csv"], written["summary.csv"])


def process_main_campaign(campaign_dir: Path, processed_dir: Path) -> analysis.ProcessedCampaign:
    """Steps 2-5 in one call (what build_report does)."""
    campaign = load_campaign(campaign_dir, processed_dir)
    trials = tidy_trials(campaign)
    return write_processed(campaign, trials, summarise(trials, campaign), processed_dir)


def statistical_tests(processed: analysis.ProcessedCampaign) -> pd.DataFrame:
    """Step 6: one row per planned comparison, its pre-declared test Holm- and BH-adjusted within its family
    (comparisons.csv's rows)."""
    return run_comparisons(comparison_pairs(processed.summary), processed.trials)


def inline_figures(
    processed: analysis.ProcessedCampaign, studies: Sequence[Study] = STUDIES
) -> dict[str, Figure | None]:
    """Step 7: the report's main figures as Figure objects (None: too few configurations for it), study by study."""
    drawn: dict[str, Figure | None] = {}
    for study in studies:
        if study.inline_figures is not None:
            drawn.update({name: build() for name, build in study.inline_figures(processed).items()})
    return drawn
