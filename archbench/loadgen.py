"""Load generators: how a configuration becomes the load generator's command line.

wrk is the only one today; wrk2 or oha slot in as further entries of
`load_generators()` plus a parser in `archbench/parsers/`. Pipelining (config
field `pipeline` > 1) goes through `archbench/lua/pipeline.lua`, which keeps
wrk's static request path so the client spends no Lua time per request.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class LoadGenerator:
    name: str
    executable: str

    def command(self, config: Mapping[str, Any], url: str, timeout_s: int) -> list[str]:
        raise NotImplementedError

    def output_file(self, trial_id: str) -> str:
        """`<trial-id>.<tool>.txt` (contracts.md section 2)."""
        return f"{trial_id}.{self.name}.txt"


def pipeline_script() -> Path:
    """wrk's pipelining script, shipped with the package (see its comment for the technique)."""
    return Path(__file__).resolve().parent / "lua" / "pipeline.lua"


@dataclass(frozen=True)
class Wrk(LoadGenerator):
    name: str = "wrk"
    executable: str = "wrk"

    def command(self, config: Mapping[str, Any], url: str, timeout_s: int) -> list[str]:
        """wrk's argv; a pipeline depth D > 1 adds `-s pipeline.lua URL -- D` (D requests per write)."""
        depth = int(config.get("pipeline") or 1)
        script = ["-s", str(pipeline_script())] if depth > 1 else []
        script_args = ["--", str(depth)] if depth > 1 else []
        return [
            self.executable,
            f"-t{config['load_threads']}",
            f"-c{config['connections']}",
            f"-d{config['duration_s']}s",
            "--latency",
            "--timeout",
            f"{timeout_s}s",
            *script,
            url,
            *script_args,
        ]


def load_generators() -> dict[str, LoadGenerator]:
    return {"wrk": Wrk()}


def load_generator(name: str) -> LoadGenerator:
    generators = load_generators()
    if name not in generators:
        raise KeyError(f"unknown load generator {name!r}; valid: {', '.join(generators)}")
    return generators[name]
