"""The server variants the abuse suite runs: every `ServerVariant` of the registry
(archbench/config/servers.py), the same ones CTest's conformance suites run
(servers_c/tests/CMakeLists.txt registers them from archbench.config.server_variants)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from archbench.config.server_spec import ServerSpec
from archbench.config.server_variants import tested_variants


@dataclass(frozen=True)
class Variant:
    name: str
    binary: str
    args: tuple[str, ...] = ()
    # Connections served at once when a thread or worker owns each connection
    # until it closes (None: any number, events or a thread per connection).
    slots: int | None = None
    # The slot hand-off is a LIFO stack: the newest waiting connection goes first.
    lifo: bool = False
    may_be_unsupported: bool = False
    architecture: str = ""


def registry_variants(specs: Mapping[str, ServerSpec] | None = None) -> tuple[Variant, ...]:
    """The abuse suite's variants, read from the registry (`specs`, or the registry itself) in its order."""
    return tuple(
        Variant(v.name, spec.binary, v.args, v.slots, v.lifo, v.may_be_unsupported, spec.name)
        for spec, v in tested_variants(specs)
    )


VARIANTS: tuple[Variant, ...] = registry_variants()
