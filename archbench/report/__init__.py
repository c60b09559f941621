"""Report: the studies (archbench.studies, in their registry's order) assembled into paper/generated/ and paper/figures/
for paper/report.tex (build), and the analysis notebook's steps over them (pipeline)."""
