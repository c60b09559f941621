"""The hosts inventory of placement ssh: which machines run the server and the load generators.

A TOML file with one table per host (tests/fixtures/hosts/*.toml are examples):

    [hosts.bench-server]
    address = "192.0.2.10"      # what ssh connects to; the server also listens on it and clients target it
    user = "bench"              # ssh user
    port = 22                   # ssh port (default 22)
    key = "keys/bench_ed25519"  # private key; relative paths are relative to the inventory file
    role = "server"             # exactly one server host, one or more client hosts
    cpus = "0-3"                # taskset list the server (or this host's wrk) is pinned to
    workdir = "/tmp/archbench"  # where the binaries are copied (WORKDIR/bin) and commands run

Everything is checked here that the file alone can tell (types, roles, CPU lists, duplicate names);
what needs the hosts themselves (reachability, CPUs that exist, overlapping CPUs of hosts that are one
machine) is checked over ssh by archbench.measure.ssh_placement before any trial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archbench.config.values import ParameterError, parse_cpu_list

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

ROLES = ("server", "client")
HOST_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")  # it becomes part of output file names
HOST_KEYS = {"address", "user", "port", "key", "role", "cpus", "workdir"}
REQUIRED_KEYS = ("address", "user", "key", "role", "cpus", "workdir")
INVENTORY_HINT = "see tests/fixtures/hosts/three-hosts.toml for the format"


class InventoryError(ValueError):
    """The hosts inventory is unusable; the message names the file, the host and the fix."""


@dataclass(frozen=True)
class Host:
    name: str
    address: str
    user: str
    port: int
    key: Path
    role: str
    cpus: str
    workdir: str

    @property
    def cpu_numbers(self) -> tuple[int, ...]:
        return parse_cpu_list(self.cpus, f"{self.name}.cpus")

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.address}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "address": self.address,
            "user": self.user,
            "port": self.port,
            "key": str(self.key),
            "role": self.role,
            "cpus": self.cpus,
            "workdir": self.workdir,
        }


@dataclass(frozen=True)
class Inventory:
    path: Path
    hosts: tuple[Host, ...]

    @property
    def server(self) -> Host:
        return next(h for h in self.hosts if h.role == "server")

    @property
    def clients(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if h.role == "client")

    def host(self, name: str) -> Host:
        for candidate in self.hosts:
            if candidate.name == name:
                return candidate
        raise InventoryError(f"{self.path}: unknown host {name!r} (known: {', '.join(h.name for h in self.hosts)})")


def load_inventory(path: Path | str) -> Inventory:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InventoryError(f"hosts inventory {path} does not exist; {INVENTORY_HINT}") from None
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise InventoryError(f"hosts inventory {path} is not readable TOML: {error}") from None
    return parse_inventory(data, path)


def parse_inventory(data: dict[str, Any], path: Path) -> Inventory:
    unknown_top = sorted(set(data) - {"hosts"})
    if unknown_top:
        raise InventoryError(f"{path}: unknown top-level key(s) {', '.join(unknown_top)}; only [hosts.NAME] tables")
    tables = data.get("hosts")
    if not isinstance(tables, dict) or not tables:
        raise InventoryError(f"{path}: no [hosts.NAME] tables; {INVENTORY_HINT}")
    hosts = tuple(_host(name, table, path) for name, table in tables.items())
    servers = [h.name for h in hosts if h.role == "server"]
    if len(servers) != 1:
        raise InventoryError(
            f'{path}: exactly one host needs role = "server" (found {len(servers)}: {", ".join(servers) or "none"})'
        )
    if not any(h.role == "client" for h in hosts):
        raise InventoryError(f'{path}: no host has role = "client"; add at least one client host')
    _check_shared_addresses(hosts, path)
    return Inventory(path=path, hosts=hosts)


def _host(name: str, table: Any, path: Path) -> Host:
    where = f"{path}: host {name!r}"
    if not HOST_NAME_PATTERN.fullmatch(name):
        raise InventoryError(f"{where}: a host name may hold only letters, digits, '-' and '_' (it names files)")
    if not isinstance(table, dict):
        raise InventoryError(f"{where} must be a table [hosts.{name}]")
    unknown = sorted(set(table) - HOST_KEYS)
    if unknown:
        raise InventoryError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(HOST_KEYS))})")
    missing = [key for key in REQUIRED_KEYS if key not in table]
    if missing:
        raise InventoryError(f"{where}: missing {', '.join(missing)}; {INVENTORY_HINT}")
    for key in ("address", "user", "key", "role", "workdir"):
        if not isinstance(table[key], str) or not table[key].strip():
            raise InventoryError(f"{where}: {key} must be a non-empty string")
    port = table.get("port", 22)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise InventoryError(f"{where}: port {port!r} is not a TCP port (1-65535)")
    if table["role"] not in ROLES:
        raise InventoryError(f"{where}: role {table['role']!r} is not one of {', '.join(ROLES)}")
    if not isinstance(table["cpus"], (str, int)):
        raise InventoryError(f'{where}: cpus must be a CPU list such as "0-3"')
    try:
        parse_cpu_list(table["cpus"], "cpus")
    except ParameterError as error:
        raise InventoryError(f"{where}: {error}") from None
    if not table["workdir"].startswith("/"):
        raise InventoryError(f"{where}: workdir {table['workdir']!r} must be an absolute path on that host")
    key = Path(table["key"]).expanduser()
    key = key if key.is_absolute() else (path.parent / key)
    if not key.is_file():
        raise InventoryError(f"{where}: ssh key {key} does not exist (create it with ssh-keygen, or fix key =)")
    return Host(
        name=name,
        address=table["address"].strip(),
        user=table["user"].strip(),
        port=port,
        key=key.resolve(),
        role=table["role"],
        cpus=str(table["cpus"]),
        workdir=table["workdir"].rstrip("/") or "/",
    )


def overlapping_cpus(hosts: list[Host] | tuple[Host, ...]) -> tuple[Host, Host, list[int]] | None:
    """A server and a client host of one machine whose CPU lists overlap (the load would take the server's
    CPUs), or None. Client hosts may share CPUs with each other: together they are the load side."""
    servers = [h for h in hosts if h.role == "server"]
    for server in servers:
        for client in (h for h in hosts if h.role == "client"):
            shared = sorted(set(server.cpu_numbers) & set(client.cpu_numbers))
            if shared:
                return server, client, shared
    return None


def _check_shared_addresses(hosts: tuple[Host, ...], path: Path) -> None:
    """Entries for one address are one machine: the server's CPUs must not be a client's."""
    by_address: dict[str, list[Host]] = {}
    for host in hosts:
        by_address.setdefault(host.address, []).append(host)
    for address, same_machine in by_address.items():
        overlap = overlapping_cpus(same_machine)
        if overlap is not None:
            server, client, shared = overlap
            raise InventoryError(
                f"{path}: hosts {server.name!r} and {client.name!r} are the same machine ({address}) and "
                f"their cpus overlap on {','.join(map(str, shared))}; give the server its own CPUs"
            )
