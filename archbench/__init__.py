"""archbench: measure C network-server architectures under load and report every number from raw data.

Measurement side: params, profiles, plan, servers, loadgen, runner, processes,
storage, provenance, progress, parsers, notebooks, cli. Analysis side:
analysis, stats, figures, latex. Submodules are imported on use, so
`import archbench` stays cheap.
"""

__version__ = "0.1.0"
