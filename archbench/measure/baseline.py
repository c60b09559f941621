"""The campaign's bandwidth baseline: what one TCP stream carries between the server's and the load
generator's CPUs, measured once with iperf3 when a campaign is created (source 003 measured one too).

    taskset -c SERVER_CPUS iperf3 -s -1 -B ADDRESS -p PORT --forceflush        (one test, then it exits)
    taskset -c LOAD_CPUS   iperf3 -c ADDRESS -p PORT -J -t SECONDS

on loopback (127.0.0.1, an ephemeral port found free), or through the placement: with netns the server
runs in the server's namespace on its address and the client in the load generator's, so the baseline is
the veth link (shaped by the link model, if any). The runner stores the result in the provenance of
campaign.json and of every trial record as `bandwidth_baseline` (`BASELINE_KEY`): status, the bits per second the client sent and
the server received (iperf3's own end-of-test sums), bytes, retransmits, the commands and iperf3's
version. The report sets the servers' throughput in bytes per second beside it.

Nothing here may stop a campaign: a missing iperf3, a server that does not start, a client that fails
or prints something else, all become a record with status `missing` or `failed` and the reason; ssh
placement (hosts elsewhere) and a `baseline_s` of 0 are recorded as `not_measured`.
"""

from __future__ import annotations

import re
import shutil
import socket
from datetime import datetime, timezone
from typing import Any

from archbench.config.params import Parameters
from archbench.measure.placement import Placement
from archbench.measure.processes import ManagedProcess
from archbench.parse.common import LoadOutputError
from archbench.parse.iperf3 import parse as parse_iperf3

BASELINE_KEY = "bandwidth_baseline"
IPERF3 = "iperf3"
SERVER_READY = re.compile(r"Server listening on (?P<port>\d+).*")
SERVER_READY_TIMEOUT_S = 5.0
CLIENT_SLACK_S = 15.0  # beyond the test's length: connecting, the final exchange of results
STOP_GRACE_S = 2.0
OUTPUT_TAIL_CHARS = 500


def free_port(address: str = "127.0.0.1") -> int:
    """A TCP port the kernel calls free now (another program may take it before iperf3 does: then the
    server fails to bind and the baseline says so)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


def commands(params: Parameters, placement: Placement, port: int, seconds: int) -> tuple[list[str], list[str]]:
    """The pinned iperf3 server and client commands, wrapped by the placement."""
    address = placement.server_address
    server = ["taskset", "-c", params.server_cpus, IPERF3, "-s", "-1", "-B", address, "-p", str(port), "--forceflush"]
    client = ["taskset", "-c", params.load_cpus, IPERF3, "-c", address, "-p", str(port), "-J", "-t", str(seconds)]
    return placement.server_argv(server), placement.load_argv(client)


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= OUTPUT_TAIL_CHARS else "..." + text[-OUTPUT_TAIL_CHARS:]


def _record(status: str, reason: str | None, placement_kind: str, seconds: int, **fields: Any) -> dict[str, Any]:
    return {
        "status": status,  # ok | failed | missing | not_measured
        "reason": reason,
        "tool": IPERF3,
        "placement": placement_kind,
        "duration_s": seconds,
        "measured_at": datetime.now(timezone.utc).isoformat(),
        "server_argv": fields.get("server_argv"),
        "client_argv": fields.get("client_argv"),
        "version": fields.get("version"),
        "address": fields.get("address"),
        "sent_bits_per_s": fields.get("sent_bits_per_s"),
        "received_bits_per_s": fields.get("received_bits_per_s"),
        "sent_bytes": fields.get("sent_bytes"),
        "received_bytes": fields.get("received_bytes"),
        "retransmits": fields.get("retransmits"),
    }


def measure_baseline(params: Parameters, placement: Placement, seconds: int | None = None) -> dict[str, Any]:
    """Run iperf3 once as the module docstring says; never raises for a failed measurement."""
    seconds = params.baseline_s if seconds is None else seconds
    kind = placement.kind
    if seconds <= 0:
        return _record("not_measured", "baseline_s is 0", kind, seconds)
    if kind == "ssh":
        return _record(
            "not_measured", "placement ssh: the hosts are elsewhere; no iperf3 run between them", kind, seconds
        )
    if shutil.which(IPERF3) is None:
        return _record("missing", "iperf3 is not on PATH (apt-get install iperf3)", kind, seconds)
    port = free_port()
    server_argv, client_argv = commands(params, placement, port, seconds)
    base = {"server_argv": server_argv, "client_argv": client_argv, "address": placement.server_address}
    server = ManagedProcess(server_argv, merge_stderr=True)
    try:
        if server.wait_for_line(SERVER_READY, SERVER_READY_TIMEOUT_S) is None:
            return _record(
                "failed",
                f"iperf3 server not listening within {SERVER_READY_TIMEOUT_S:g} s: "
                f"{_tail(server.output_so_far()) or '(no output)'}",
                kind,
                seconds,
                **base,
            )
        return _run_client(client_argv, seconds, kind, base)
    finally:
        server.stop(STOP_GRACE_S)


def _run_client(client_argv: list[str], seconds: int, kind: str, base: dict[str, Any]) -> dict[str, Any]:
    client = ManagedProcess(client_argv, merge_stderr=False)
    limit_s = seconds + CLIENT_SLACK_S
    ended = client.wait(limit_s)
    if ended is None:
        client.kill()
        return _record("failed", f"iperf3 client still running after {limit_s:g} s; killed", kind, seconds, **base)
    stdout, stderr = client.output()
    try:
        parsed = parse_iperf3(stdout.decode("utf-8", "replace"))
    except LoadOutputError as error:
        reason = f"iperf3 client exited with status {ended.exit_code}, output not understood: {error}"
        if stderr.strip():
            reason += f"; stderr: {_tail(stderr)}"
        return _record("failed", reason, kind, seconds, **base)
    measured = {
        name: parsed[name]
        for name in ("version", "sent_bits_per_s", "received_bits_per_s", "sent_bytes", "received_bytes", "retransmits")
    }
    if parsed["error"] is not None or parsed["flags"] or ended.exit_code != 0:
        reason = parsed["error"] or f"iperf3 client exited with status {ended.exit_code}"
        return _record("failed", reason, kind, seconds, **base, **measured)
    return _record("ok", None, kind, seconds, **base, **measured)
