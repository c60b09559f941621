"""What every study uses to become part of the report: the study base and its campaign choice (study, campaigns),
LaTeX macros and tables (latex, formats), sentences from paper/templates/ (prose), figures (plots, theme) and the
terminal answer of `archbench pick` (pick). Below the studies (archbench.studies), which the report (archbench.report)
assembles; nothing here imports a study."""
