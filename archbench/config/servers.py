"""The server architectures a campaign can run, and how a configuration becomes a command line.

Each architecture is one `ServerSpec`: the binary in `build/bin/`, the flag its
parallelism takes (if any) and its own options (contracts.md section 1). The
configuration field `threads` holds that parallelism whatever it is called:
worker threads (`--threads`), worker processes (prefork `--workers`) or nginx's
`worker_processes`. An architecture that is not a `build/bin/` executable
(nginx, see `archbench.measure.nginx`) subclasses `ServerSpec` and overrides
`command()` and the preflight checks. pong is in the registry too, marked
`upper_bound`: pong, which source 002 calls its upper bound and the report its reference floor: it answers requests without parsing
them and so is not a correct server (`ServerSpec.label` says so).

An entry here is all the harness needs of a new server beside its C file and
its line in servers_c/CMakeLists.txt (docs/extending.md): the conformance
suites (`archbench.config.server_variants`), the abuse suite, the analysis'
order and the figures' colours read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from archbench.config.nginx_spec import NginxSpec
from archbench.config.server_spec import (  # re-exported: the registry is where callers look architectures up
    CPU_SOURCE_STATS,
    CPU_SOURCE_TREE,
    PROTOCOLS,
    RESPONSES_BUILT_IN,
    ServerOption,
    ServerSpec,
    ServerVariant,
    check_response,
    response_body_bytes,
    trigger_option,
)

__all__ = [
    "CPU_SOURCE_STATS",
    "CPU_SOURCE_TREE",
    "PROTOCOLS",
    "RESPONSES_BUILT_IN",
    "ServerOption",
    "ServerSpec",
    "ServerVariant",
    "all_option_names",
    "check_response",
    "response_body_bytes",
    "server_spec",
    "server_specs",
    "trigger_option",
    "trigger_variants",
    "upper_bound_architectures",
    "variant_label",
]


def server_specs() -> dict[str, ServerSpec]:
    """The registry, built fresh on each call (no module-level mutable state)."""
    specs = [
        ServerSpec(
            name="blocking",
            binary="blocking",
            summary="one thread accepts and serves one connection at a time",
            hue=0,
            variants=(ServerVariant("blocking", http_concurrency=0, slots=1),),
        ),
        ServerSpec(
            name="thread_per_conn",
            binary="thread_per_conn",
            summary="a thread per connection, optionally capped",
            options=(ServerOption("max_threads", "--max-threads", default=0, minimum=0, omit_when=0, id_prefix="max"),),
            hue=1,
            variants=(
                ServerVariant("thread_per_conn", threaded=True),
                ServerVariant(
                    "thread_per_conn_capped", ("--max-threads", "8"), http_concurrency=8, threaded=True, slots=8
                ),
            ),
        ),
        ServerSpec(
            name="thread_pool",
            binary="thread_pool",
            summary="N workers fed through a queue or stack by one accepting thread",
            threads_flag="--threads",
            options=(
                ServerOption("dispatch", "--dispatch", default="request", choices=("connection", "request")),
                ServerOption("handoff", "--handoff", default="queue", choices=("queue", "stack")),
            ),
            hue=2,
            variants=(
                ServerVariant("thread_pool_request", ("--threads", "2", "--dispatch", "request"), threaded=True),
                ServerVariant(
                    "thread_pool_request_stack",
                    ("--threads", "3", "--dispatch", "request", "--handoff", "stack"),
                    threaded=True,
                ),
                # A worker owns each connection: the HTTP suite holds no more clients than there are workers.
                ServerVariant(
                    "thread_pool_connection",
                    ("--threads", "4", "--dispatch", "connection"),
                    http_concurrency=4,
                    threaded=True,
                    slots=4,
                ),
                ServerVariant(
                    "thread_pool_connection_stack",
                    ("--threads", "4", "--dispatch", "connection", "--handoff", "stack"),
                    http_concurrency=4,
                    threaded=True,
                    slots=4,
                    lifo=True,
                ),
            ),
        ),
        # poll and epoll accept only `--threads 1`: one loop, so no thread sweep.
        ServerSpec(
            name="poll",
            binary="poll",
            summary="one thread, poll() over the listener and every connection",
            hue=3,
            variants=(ServerVariant("poll"),),
        ),
        ServerSpec(
            name="epoll",
            binary="epoll",
            summary="one thread, one epoll instance for the listener and every connection",
            options=(trigger_option("level"),),
            hue=4,
            variants=trigger_variants("epoll"),
        ),
        ServerSpec(
            name="reactor",
            binary="reactor",
            summary="an acceptor thread hands connections round-robin to N epoll loops",
            threads_flag="--threads",
            options=(trigger_option("edge"),),
            hue=5,
            variants=trigger_variants("reactor", "--threads"),
        ),
        ServerSpec(
            name="reuseport",
            binary="reuseport",
            summary="N epoll loops, each accepting on its own SO_REUSEPORT listener",
            threads_flag="--threads",
            options=(trigger_option("edge"),),
            hue=6,
            variants=trigger_variants("reuseport", "--threads"),
        ),
        ServerSpec(
            name="prefork",
            binary="prefork",
            summary="N single-threaded worker processes sharing one listener (EPOLLEXCLUSIVE)",
            threads_flag="--workers",  # its --threads must stay 1 (one thread per worker process)
            options=(trigger_option("level"),),
            hue=7,
            parallelism_unit=("worker", "workers"),
            # Processes, each with a loop thread and a signal watcher: threaded.
            variants=trigger_variants("prefork", "--workers"),
        ),
        ServerSpec(
            name="io_uring",
            binary="io_uring",
            summary="N completion-driven io_uring loops, each with its own SO_REUSEPORT listener",
            threads_flag="--threads",
            hue=8,
            # Built without liburing >= 2.3 it says it cannot run: the suites skip it rather than fail.
            variants=(
                ServerVariant("io_uring_t1", ("--threads", "1"), may_be_unsupported=True),
                ServerVariant("io_uring_t2", ("--threads", "2"), threaded=True, may_be_unsupported=True),
            ),
        ),
        # Not a build/bin server: tests/test_nginx.py tests it, not the socket suites.
        NginxSpec(),
        # Not a server: source 002's upper bound, the report's reference floor, beside the others (servers_c/pong/pong.c).
        # It parses nothing, so it has no variants here: servers_c/pong/CMakeLists.txt runs the cases that apply.
        ServerSpec(
            name="pong",
            binary="pong",
            summary="the reference floor, not a correct server: N epoll loops (SO_REUSEPORT) answer each "
            "request terminator with the same response, parsing nothing",
            threads_flag="--threads",
            upper_bound=True,
            protocols=("http",),
            takes_work=False,
            closes_on_request=False,
            hue=9,
        ),
    ]
    return {spec.name: spec for spec in specs}


def trigger_variants(binary: str, parallelism_flag: str | None = None) -> tuple[ServerVariant, ...]:
    """An epoll server in each notification mode; with a parallelism flag, two loops or workers of it, so that
    connections are shared between them."""
    parallel = (parallelism_flag, "2") if parallelism_flag else ()
    return tuple(
        ServerVariant(f"{binary}_{trigger}", (*parallel, "--trigger", trigger), threaded=bool(parallel))
        for trigger in ("level", "edge")
    )


def server_spec(name: str) -> ServerSpec:
    specs = server_specs()
    if name not in specs:
        raise KeyError(f"unknown architecture {name!r}; valid: {', '.join(specs)}")
    return specs[name]


def upper_bound_architectures() -> tuple[str, ...]:
    """The registry's reference floors (pong, source 002's upper bound): measured beside the servers, never counted as one."""
    return tuple(name for name, spec in server_specs().items() if spec.upper_bound)


def all_option_names() -> list[str]:
    """Every architecture option field, in registry order (for config dicts and ids)."""
    names: list[str] = []
    for spec in server_specs().values():
        names += [o.name for o in spec.options if o.name not in names]
    return names


def variant_label(config: Mapping[str, Any]) -> str:
    """The configuration without its load, pipeline and duration: what is being compared."""
    spec = server_specs().get(config["architecture"])
    parts = [str(config["architecture"])]
    if spec is not None:
        parts += [part for o in spec.options if (part := o.id_part(config.get(o.name))) is not None]
    if config.get("threads") is not None:
        parts.append(f"t{config['threads']}")
    return "-".join(parts)
