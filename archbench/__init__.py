"""archbench: measure C network-server architectures under load and report every number from raw data.

The package is split by pipeline stage; each stage imports only the stages below it (the import-linter
contract in pyproject.toml, checked by `make lint`):

    cli       the command line and the notebook runner
    report    facts, tables and figures for paper/report.tex; its prose is in paper/templates/
    analyze   stored campaigns -> tidy trials, summaries, comparisons
    measure   run a campaign: servers, load generators, runner, provenance, studies
    data      raw data on disk (immutable), manifest, import
    parse     load-generator output -> records
    config    parameters, profiles, registries, the plan
    stats     the statistics library (intervals, tests, corrections)
"""

__version__ = "0.1.0"
