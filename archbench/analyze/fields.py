"""What the processed tables are made of: the configuration fields and columns, the flags, and the study's fixed
vocabulary (architectures in canonical order, the reference, what a thread count counts)."""

from __future__ import annotations

# The configuration fields in the order config ids are built from; fields a
# campaign adds later (e.g. max_threads) follow, sorted, after these.
CONFIG_FIELDS: tuple[str, ...] = (
    "architecture",
    "dispatch",
    "handoff",
    "trigger",
    "max_threads",
    "threads",
    "connections",
    "load_threads",
    "duration_s",
    "response",
    "load_generator",
    "pipeline",
    "proto",  # http (default) or echo (source 004's protocol): never mixed in one series or comparison
)
# Provenance fields copied from each trial record into trials.csv (contracts.md section 4).
PROVENANCE_COLUMNS: tuple[str, ...] = (
    "os",
    "os_family",
    "hostname",
    "cpu_model",
    "cpu_count",
    "memory_bytes",
    "kernel",
    "compiler",
)
# What identifies a line in a figure or a table: everything but the two swept axes.
SERIES_FIELDS: tuple[str, ...] = tuple(f for f in CONFIG_FIELDS if f not in ("threads", "connections"))
LATENCY_PERCENTILES: tuple[str, ...] = ("50", "75", "90", "99")
SOCKET_ERROR_KINDS: tuple[str, ...] = ("connect", "read", "write", "timeout")
# A flag analysis adds to the parser's: the trial says ok but its load output is unusable.
FLAG_UNPARSED = "unparsed_output"
FLAG_SEPARATOR = ";"
DEFAULT_PIPELINE = 1  # records written before pipelining existed sent one request per write
# wrk's cores at least this busy (fraction of the CPUs it was pinned to): the client set the rate.
CLIENT_BOUND_THRESHOLD = 0.95
# Canonical order of the architectures in tables and figures: the sources' designs from simplest
# to the multi-loop ones, the reference (nginx) last. Unknown architectures follow, alphabetically.
ARCHITECTURE_ORDER: tuple[str, ...] = (
    "blocking",
    "thread_per_conn",
    "thread_pool",
    "poll",
    "epoll",
    "reactor",
    "reuseport",
    "prefork",
    "io_uring",
    "nginx",
)
REFERENCE_ARCHITECTURE = "nginx"
# Architectures whose `threads` is a number of loops, workers or pool threads worth sweeping.
MULTI_LOOP_ARCHITECTURES: tuple[str, ...] = ("thread_pool", "reactor", "reuseport", "prefork", "io_uring", "nginx")
# The first three designs, whose series are labelled by the full architecture name rather than the family.
ORIGINAL_ARCHITECTURES = ("blocking", "thread_per_conn", "thread_pool")
# What `threads` counts, per architecture (singular, plural).
THREAD_UNITS: dict[str, tuple[str, str]] = {
    "thread_pool": ("thread", "threads"),
    "reactor": ("thread", "threads"),
    "reuseport": ("thread", "threads"),
    "io_uring": ("thread", "threads"),
    "prefork": ("worker", "workers"),
    "nginx": ("worker", "workers"),
}
# Default epoll notification per architecture (what the servers use without --trigger).
DEFAULT_TRIGGER = {"epoll": "level", "reactor": "edge", "reuseport": "edge", "prefork": "level"}
# Fields that identify a family: an architecture variant whatever its thread count.
FAMILY_FIELDS: tuple[str, ...] = ("architecture", "dispatch", "handoff", "trigger", "max_threads")
# Fields that identify a point of comparison between architectures (besides the pipeline depth).
POINT_FIELDS: tuple[str, ...] = ("connections", "load_threads", "duration_s", "response", "load_generator", "proto")
# Server CPU sources a record's `server.cpu_source` may name.
CPU_SOURCE_STATS = "stats"
CPU_SOURCE_TREE = "tree"
