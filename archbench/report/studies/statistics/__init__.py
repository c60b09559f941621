"""The report's statistics, cross-OS, rules and environment sections (Hoefler & Belli's twelve rules).

`generate` is called by `archbench.report.build.write_generated_tex` with the campaign's
MacroSet before it is rendered; it adds the macros that paper/sections/statistics.tex,
crossos.tex, rules.tex and environment.tex quote, and returns the generated files
those sections input (name -> LaTeX). It also writes three regenerable tables beside
trials.csv and summary.csv (docs/contracts.md section 4):

* `comparisons.csv`: the family of comparisons within the campaign (each pool size
  against the next smaller one; request against connection dispatch at equal N,
  connections and depth; each architecture against nginx at each depth), one row per
  pair: `archbench.stats.compare` (Welch's t when both groups pass Shapiro-Wilk, else
  Mann-Whitney U; effect size and difference with intervals), Holm- and BH-adjusted
  within each family (`p_holm`, `reject_holm`, `p_bh`, `reject_bh`).
* `crossos.csv`: source 000's published cross-OS and separate-client/loopback comparisons
  (`archbench.analyze.crossos.source000_cross_os`, `source000_setups`), the comparisons of
  configurations measured on two or more OSes or hosts (`crossos.measured_comparisons`)
  and of this campaign against the reference campaign (`crossos.compare_with_reference`),
  with a `table` column naming which.
* `outliers.csv`: every measured trial beyond Tukey's fences (`archbench.analyze.outliers.outlier_rows`).

The rules' statuses and where each is met are generated here too, so a reference is
only ever made to a table or figure that this campaign produced. Everything degrades to
a sentence when the campaign lacks the data: a minimal campaign (one trial) still gets
every section, with the reason each analysis is missing.
"""

from archbench.report.studies.statistics.files import (
    COMPARISONS_CSV,
    COMPARISONS_TABLE_FILE,
    CROSSOS_CSV,
    CROSSOS_MEASURED_TABLE_FILE,
    CROSSOS_REFERENCE_TABLE_FILE,
    CROSSOS_SOURCE_TABLE_FILE,
    DIAGNOSTICS_TABLE_FILE,
    FACTORS_TABLE_FILE,
    GENERATED_FILES,
    IMPORT_DIR,
    OUTLIERS_CSV,
    PROVENANCE_TABLE_FILE,
    QQ_FIGURE,
    QQ_FIGURE_FILE,
    REFERENCE_CAMPAIGN,
    RULES_TABLE_FILE,
)
from archbench.report.studies.statistics.generate import generate

__all__ = [
    "COMPARISONS_CSV",
    "COMPARISONS_TABLE_FILE",
    "CROSSOS_CSV",
    "CROSSOS_MEASURED_TABLE_FILE",
    "CROSSOS_REFERENCE_TABLE_FILE",
    "CROSSOS_SOURCE_TABLE_FILE",
    "DIAGNOSTICS_TABLE_FILE",
    "FACTORS_TABLE_FILE",
    "GENERATED_FILES",
    "IMPORT_DIR",
    "OUTLIERS_CSV",
    "PROVENANCE_TABLE_FILE",
    "QQ_FIGURE",
    "QQ_FIGURE_FILE",
    "REFERENCE_CAMPAIGN",
    "RULES_TABLE_FILE",
    "generate",
]
