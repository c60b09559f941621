"""The server variants the socket suites test, as CTest reads them: one `archbench_conformance(...)` argument
line per variant, in registry order.

servers_c/tests/CMakeLists.txt runs `python -m archbench.config.server_variants` when it configures and
registers conformance_<variant>, echo_conformance_<variant> and workload_conformance_<variant> from each line,
so a server's variants are written once, in its `ServerSpec` (archbench/config/servers.py). Standard library
only: CMake runs it with the system Python, without the project's virtual environment.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping

from archbench.config import servers
from archbench.config.server_spec import ServerSpec, ServerVariant


def tested_variants(specs: Mapping[str, ServerSpec] | None = None) -> Iterator[tuple[ServerSpec, ServerVariant]]:
    """Every variant of every registered server, with its server, in registry order."""
    for spec in (servers.server_specs() if specs is None else specs).values():
        for variant in spec.variants:
            yield spec, variant


def conformance_arguments(spec: ServerSpec, variant: ServerVariant) -> list[str]:
    """The arguments of archbench_conformance() (servers_c/tests/CMakeLists.txt) for one variant."""
    words = ["NAME", variant.name, "BINARY", spec.binary, "HTTP_CONCURRENCY", str(variant.http_concurrency)]
    if variant.may_be_unsupported:
        words.append("ALLOW_UNSUPPORTED")
    if variant.threaded:
        words.append("THREADED")
    if variant.args:
        words += ["ARGS", *variant.args]
    return words


def conformance_lines(specs: Mapping[str, ServerSpec] | None = None) -> list[str]:
    """One shell-quoted line of archbench_conformance() arguments per variant (CMake's separate_arguments reads
    them with UNIX_COMMAND)."""
    return [shlex.join(conformance_arguments(spec, variant)) for spec, variant in tested_variants(specs)]


def main() -> None:
    for line in conformance_lines():
        print(line)


if __name__ == "__main__":
    main()
