"""The report's study sections (echo, latency) beside the main campaign: their data, tables, figures and text.

`archbench.report.studies.echo` and `archbench.report.studies.latency` are the entry modules build.py uses; this package holds
what they are made of. `common` and `plotting` are shared by both studies (neither imports the other's section).
"""
