"""Load generators: how a configuration becomes the load generator's command line.

wrk is the only one today; wrk2 or oha slot in as further entries of
`load_generators()` plus a parser in `archbench/parsers/`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Wrk(LoadGenerator):
    name: str = "wrk"
    executable: str = "wrk"

    def command(self, config: Mapping[str, Any], url: str, timeout_s: int) -> list[str]:
        return [
            self.executable,
            f"-t{config['load_threads']}",
            f"-c{config['connections']}",
            f"-d{config['duration_s']}s",
            "--latency",
            "--timeout",
            f"{timeout_s}s",
            url,
        ]


def load_generators() -> dict[str, LoadGenerator]:
    return {"wrk": Wrk()}


def load_generator(name: str) -> LoadGenerator:
    generators = load_generators()
    if name not in generators:
        raise KeyError(f"unknown load generator {name!r}; valid: {', '.join(generators)}")
    return generators[name]
