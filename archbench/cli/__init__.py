"""The command line (`python -m archbench`) and the notebook runner: the top of the stages."""
