"""The files the statistics part writes: generated LaTeX, the Q-Q figure and the processed CSVs."""

from __future__ import annotations

# Files written into paper/generated/ (each always written, so a stale one is never picked up).
DIAGNOSTICS_TABLE_FILE = "table-diagnostics.tex"
QQ_FIGURE_FILE = "figure-qq.tex"
COMPARISONS_TABLE_FILE = "table-comparisons.tex"
CROSSOS_SOURCE_TABLE_FILE = "table-crossos-source000.tex"
CROSSOS_MEASURED_TABLE_FILE = "table-crossos-measured.tex"
CROSSOS_REFERENCE_TABLE_FILE = "table-crossos-reference.tex"
PROVENANCE_TABLE_FILE = "table-provenance.tex"
FACTORS_TABLE_FILE = "table-factors.tex"
RULES_TABLE_FILE = "table-rules.tex"
GENERATED_FILES = (
    DIAGNOSTICS_TABLE_FILE,
    QQ_FIGURE_FILE,
    COMPARISONS_TABLE_FILE,
    CROSSOS_SOURCE_TABLE_FILE,
    CROSSOS_MEASURED_TABLE_FILE,
    CROSSOS_REFERENCE_TABLE_FILE,
    PROVENANCE_TABLE_FILE,
    FACTORS_TABLE_FILE,
    RULES_TABLE_FILE,
)
# Figure written into paper/figures/, and the processed tables beside trials.csv.
QQ_FIGURE = "qq-throughput.pdf"
COMPARISONS_CSV = "comparisons.csv"
CROSSOS_CSV = "crossos.csv"
OUTLIERS_CSV = "outliers.csv"

from archbench.report.studies.crossos.data import IMPORT_DIR, REFERENCE_CAMPAIGN  # noqa: E402,F401
