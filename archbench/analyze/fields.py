"""What the processed tables are made of: the configuration fields and columns, the flags, and the study's
vocabulary: the architectures in canonical order, the reference and what a thread count counts, read from the
server registry (archbench/config/servers.py) so that a new server needs no edit here."""

from __future__ import annotations

from archbench.config import servers
from archbench.measure.load_bound import CLIENT_BOUND_BUSY

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
# The load generator's CPUs at least this busy: it, not the server, may have set the rate.
CLIENT_BOUND_THRESHOLD = CLIENT_BOUND_BUSY
REFERENCE_ARCHITECTURE = "nginx"


def architecture_order() -> tuple[str, ...]:
    """Canonical order of the architectures in tables and figures: the registry's (the sources' designs from
    simplest to the multi-loop ones), the reference (nginx) last. The reference floor (pong) is not among them:
    like an unknown architecture, it follows them."""
    specs = servers.server_specs()
    names = [name for name, spec in specs.items() if not spec.upper_bound and name != REFERENCE_ARCHITECTURE]
    return (*names, REFERENCE_ARCHITECTURE) if REFERENCE_ARCHITECTURE in specs else tuple(names)


def multi_loop_architectures() -> tuple[str, ...]:
    """Architectures whose `threads` is a number of loops, workers or pool threads worth sweeping, in canonical
    order: every one with a parallelism flag but the reference floor."""
    specs = servers.server_specs()
    return tuple(name for name in architecture_order() if specs[name].takes_threads)


def thread_units() -> dict[str, tuple[str, str]]:
    """What `threads` counts, per multi-loop architecture (singular, plural)."""
    specs = servers.server_specs()
    return {name: specs[name].parallelism_unit for name in multi_loop_architectures()}


def default_triggers() -> dict[str, str]:
    """Default epoll notification per architecture (what the servers use without --trigger)."""
    return {
        name: str(option.default) for name, spec in servers.server_specs().items() if (option := spec.option("trigger"))
    }


# The registry as this module was imported, for code that wants a constant; the functions read it at each call.
ARCHITECTURE_ORDER: tuple[str, ...] = architecture_order()
MULTI_LOOP_ARCHITECTURES: tuple[str, ...] = multi_loop_architectures()
THREAD_UNITS: dict[str, tuple[str, str]] = thread_units()
DEFAULT_TRIGGER: dict[str, str] = default_triggers()
# The first three designs, whose series are labelled by the full architecture name rather than the family.
ORIGINAL_ARCHITECTURES = ("blocking", "thread_per_conn", "thread_pool")
# Fields that identify a family: an architecture variant whatever its thread count.
FAMILY_FIELDS: tuple[str, ...] = ("architecture", "dispatch", "handoff", "trigger", "max_threads")
# Fields that identify a point of comparison between architectures (besides the pipeline depth).
POINT_FIELDS: tuple[str, ...] = ("connections", "load_threads", "duration_s", "response", "load_generator", "proto")
# Server CPU sources a record's `server.cpu_source` may name.
CPU_SOURCE_STATS = "stats"
CPU_SOURCE_TREE = "tree"
