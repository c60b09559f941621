"""Descriptive statistics, confidence intervals, tests and corrections for benchmark trials.

The rules of Hoefler & Belli, "Scientific Benchmarking of Parallel Computing
Systems" (SC '15, doi:10.1145/2807591.2807644) that this module serves:

* nondeterministic data get confidence intervals: `mean_ci_t` (Student t),
  `median_ci` (distribution-free, from order statistics), `bootstrap_ci` and
  its wrappers (seeded percentile and BCa bootstrap);
* normality is not assumed without a diagnostic check: `shapiro_wilk` (a
  diagnostic; `compare`, kept for the cross-OS comparisons of independent
  samples, still picks Welch's t-test only when both groups pass it);
* comparisons are statistically sound: `planned_comparison`, the pre-declared
  test of a planned comparison (paired t on the per-round log ratios, Welch on
  the logs when rounds cannot be aligned, not run under `MIN_ROUNDS`) with its
  `minimum_detectable_pct`; `compare` (test, p, effect size with its CI,
  difference with its CI), `adjust_pvalues` (Holm, Benjamini-Hochberg) over a
  family, `welch_from_stats` for published mean/sd/n tables;
* rates are summarised by the harmonic mean or total / total, not the
  arithmetic mean of rates: `harmonic_mean`, `harmonic_mean_ci`, `total_rate`;
* nothing is silently dropped: `tukey_outliers` reports (never removes) points
  beyond Tukey's fences, with their positions.

Every estimator is a plain function of one-dimensional samples (or of summary
statistics) returning a frozen dataclass, in a module of one idea each (samples,
intervals, median, bootstrap, normality, welch, effect_sizes, comparison, predeclared, multiple,
rates, outliers) and re-exported here, so `from archbench import stats` and
`stats.<name>` are the way to use it; an interval is always a
`ConfidenceInterval` that names the method that produced it, and `summarize`
is the single place that decides which statistics summary.csv shows.

Degenerate samples never raise: a statistic that needs more observations than
there are is NaN, which pandas writes as an empty CSV cell and the LaTeX layer
prints as a dash, and the result's `note` says why. Benchmark campaigns
routinely end up with n = 1 (smoke runs) or n = 0 (every repetition failed)
for some configuration. Missing values (None, NaN) are not observations.
Invalid parameters (a level outside (0, 1), an unknown method) raise ValueError.
"""

from archbench.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapInterval,
    BootstrapMethod,
    Center,
    Statistic,
    bootstrap_ci,
    bootstrap_difference_ci,
    bootstrap_median_ci,
    bootstrap_ratio_ci,
)
from archbench.stats.comparison import MANN_WHITNEY_EXACT_MAX_N, ComparisonResult, compare
from archbench.stats.effect_sizes import (
    CliffCIMethod,
    EffectSize,
    HedgesCIMethod,
    cliffs_delta,
    hedges_correction,
    hedges_g,
    hedges_g_from_stats,
)
from archbench.stats.intervals import (
    MIN_TRIALS_FOR_INTERVAL,
    RANGE_METHOD,
    ConfidenceInterval,
    SampleSummary,
    mean_ci_from_stats,
    mean_ci_t,
    rate_ci,
    rate_ci_from_stats,
    summarize,
)
from archbench.stats.median import MedianInterval, median_ci, order_statistic_coverage
from archbench.stats.multiple import MultipleTestResult, adjust_pvalues, benjamini_hochberg, holm
from archbench.stats.normality import NormalityCheck, shapiro_wilk
from archbench.stats.outliers import OutlierReport, tukey_outliers
from archbench.stats.predeclared import (
    MIN_ROUNDS,
    NOT_RUN,
    PAIRED_TEST,
    UNPAIRED_TEST,
    PlannedComparison,
    minimum_detectable_pct,
    planned_comparison,
    rounds_needed,
)
from archbench.stats.rates import harmonic_mean, harmonic_mean_ci, total_rate
from archbench.stats.samples import (
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE,
    as_sample,
    ratio,
    sample_mean,
    sample_median,
    sample_sd,
)
from archbench.stats.welch import (
    WelchResult,
    ratio_ci_from_stats,
    welch_from_stats,
    welch_satterthwaite_df,
    welch_test,
)

__all__ = [
    "BootstrapInterval",
    "BootstrapMethod",
    "Center",
    "CliffCIMethod",
    "ComparisonResult",
    "ConfidenceInterval",
    "DEFAULT_ALPHA",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "EffectSize",
    "HedgesCIMethod",
    "MANN_WHITNEY_EXACT_MAX_N",
    "MedianInterval",
    "MIN_ROUNDS",
    "MultipleTestResult",
    "NOT_RUN",
    "NormalityCheck",
    "OutlierReport",
    "PAIRED_TEST",
    "PlannedComparison",
    "SampleSummary",
    "Statistic",
    "UNPAIRED_TEST",
    "WelchResult",
    "adjust_pvalues",
    "as_sample",
    "benjamini_hochberg",
    "bootstrap_ci",
    "bootstrap_difference_ci",
    "bootstrap_median_ci",
    "bootstrap_ratio_ci",
    "cliffs_delta",
    "compare",
    "harmonic_mean",
    "harmonic_mean_ci",
    "hedges_correction",
    "hedges_g",
    "hedges_g_from_stats",
    "holm",
    "mean_ci_from_stats",
    "mean_ci_t",
    "rate_ci",
    "rate_ci_from_stats",
    "MIN_TRIALS_FOR_INTERVAL",
    "RANGE_METHOD",
    "median_ci",
    "minimum_detectable_pct",
    "order_statistic_coverage",
    "planned_comparison",
    "ratio",
    "ratio_ci_from_stats",
    "rounds_needed",
    "sample_mean",
    "sample_median",
    "sample_sd",
    "shapiro_wilk",
    "summarize",
    "total_rate",
    "tukey_outliers",
    "welch_from_stats",
    "welch_satterthwaite_df",
    "welch_test",
]
