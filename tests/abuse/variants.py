"""The server variants the abuse suite runs: the same as CTest's conformance
suites (servers_c/tests/CMakeLists.txt, archbench_conformance NAME ...), which
tests/test_abuse.py checks."""

from __future__ import annotations

from dataclasses import dataclass


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

    @property
    def architecture(self) -> str:
        return self.binary


VARIANTS: tuple[Variant, ...] = (
    Variant("blocking", "blocking", slots=1),
    Variant("thread_per_conn", "thread_per_conn"),
    Variant("thread_per_conn_capped", "thread_per_conn", ("--max-threads", "8"), slots=8),
    Variant("thread_pool_request", "thread_pool", ("--threads", "2", "--dispatch", "request")),
    Variant(
        "thread_pool_request_stack", "thread_pool", ("--threads", "3", "--dispatch", "request", "--handoff", "stack")
    ),
    Variant("thread_pool_connection", "thread_pool", ("--threads", "4", "--dispatch", "connection"), slots=4),
    Variant(
        "thread_pool_connection_stack",
        "thread_pool",
        ("--threads", "4", "--dispatch", "connection", "--handoff", "stack"),
        slots=4,
        lifo=True,
    ),
    Variant("poll", "poll"),
    Variant("epoll_level", "epoll", ("--trigger", "level")),
    Variant("reactor_level", "reactor", ("--threads", "2", "--trigger", "level")),
    Variant("reuseport_level", "reuseport", ("--threads", "2", "--trigger", "level")),
    Variant("prefork_level", "prefork", ("--workers", "2", "--trigger", "level")),
    Variant("epoll_edge", "epoll", ("--trigger", "edge")),
    Variant("reactor_edge", "reactor", ("--threads", "2", "--trigger", "edge")),
    Variant("reuseport_edge", "reuseport", ("--threads", "2", "--trigger", "edge")),
    Variant("prefork_edge", "prefork", ("--workers", "2", "--trigger", "edge")),
    Variant("io_uring_t1", "io_uring", ("--threads", "1"), may_be_unsupported=True),
    Variant("io_uring_t2", "io_uring", ("--threads", "2"), may_be_unsupported=True),
)

BY_NAME = {v.name: v for v in VARIANTS}
