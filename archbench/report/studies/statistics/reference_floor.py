"""How the architecture and statistics studies name pong: the reference floor, never an upper bound.

pong answers every request terminator with the same bytes and parses nothing (servers_c/pong/pong.c): no correct
server, but the cheapest possible one, so its server CPU time per request is the floor of what a server costs. Its
throughput bounds the correct servers' only where the servers set the rate, and a correct server that serves more
than pong shows that they did not. The campaign-wide label (archbench.analyze.labels, summary.csv's `family`) still
carries source 002's "upper bound"; `FloorLabeller` names pong as the reference floor instead, wherever these
studies name a configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from archbench.analyze.analysis import Labeller, key_text
from archbench.config.servers import upper_bound_architectures


def is_floor(row: Mapping[str, Any]) -> bool:
    """Whether the row is the reference floor (pong) rather than a server."""
    return key_text(row.get("architecture")) in upper_bound_architectures()


def floor_family(row: Mapping[str, Any]) -> str:
    """'pong (reference floor)': the floor's name without its thread count."""
    return f"{key_text(row.get('architecture'))} (reference floor)"


def family_name(row: Mapping[str, Any]) -> str:
    """The family name a figure prints for a summary row: summary.csv's, the floor named as one."""
    return floor_family(row) if is_floor(row) else str(row.get("family"))


class FloorLabeller(Labeller):
    """The campaign's labels, with pong named the reference floor ("pong (reference floor), 1 thread")."""

    def family(self, row: Mapping[str, Any]) -> str:
        return floor_family(row) if is_floor(row) else super().family(row)
