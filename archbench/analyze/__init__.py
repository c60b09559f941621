"""Analyse: stored campaigns into tidy trials and per-configuration summaries, outliers and cross-OS/host comparisons."""
