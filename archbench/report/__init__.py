"""Report: facts, tables and figures for paper/report.tex, its prose rendered from paper/templates/."""
