#!/usr/bin/env python3
"""echo_client against servers that misbehave on purpose, and against a real one.

Usage: echo_client_checks.py --client BIN --faulty BIN --server BIN

The client must catch a flipped byte (verify_errors, with the offset), a
connection dropped or reset mid-stream (closed_early by reason), echoes that
never come (unanswered_messages), refused connects (by errno), exit non-zero
for all of them and 0 against a correct server; its rate, --max-conns
(cap, a server out of descriptors, the client out of descriptors), SIGTERM
and usage errors behave as documented. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

from server_harness import print_results

from archbench.measure.server_protocol import parse_ready_line, sanitizer_report, shutdown_stats
from archbench.parse.echo_client import FIELDS, MAX_CONNS_FIELDS  # the keys of echo_client's JSON report

READY_TIMEOUT_S = 10.0
RUN_TIMEOUT_S = 60.0


class CheckFailure(AssertionError):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailure(message)


def limit_files(n: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


class Server:
    def __init__(self, argv: list[str], nofile: int | None = None):
        self.process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=limit_files(nofile) if nofile else None,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode(errors="replace").strip()
        ready = parse_ready_line(line)
        if ready is None:
            self.kill()
            raise CheckFailure(f"{argv[0]}: no ready line, got {line!r}")
        self.port = ready.port

    def stop(self) -> dict | None:
        self.process.send_signal(signal.SIGTERM)
        out, err = self.process.communicate(timeout=20)
        report = sanitizer_report(err)
        if report is not None:
            raise CheckFailure(f"server: sanitizer report on stderr:\n{report}")
        return shutdown_stats(out)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            _, err = self.process.communicate()
        else:
            stream = self.process.stderr
            err = stream.read() if stream is not None and not stream.closed else b""
        report = sanitizer_report(err)
        if report is not None:
            raise CheckFailure(f"server: sanitizer report on stderr:\n{report}")


class Checks:
    def __init__(self, client: str, faulty: str, server: str):
        self.client, self.faulty, self.server = client, faulty, server
        self.results: list[tuple[str, str]] = []

    def run_client(self, port: int, *args: str, nofile: int | None = None) -> tuple[int, dict, str]:
        proc = subprocess.run(
            [self.client, "--port", str(port), "--json", *args],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            preexec_fn=limit_files(nofile) if nofile else None,
        )
        sanitizer = sanitizer_report(proc.stderr)
        if sanitizer is not None:
            raise CheckFailure(f"echo_client: sanitizer report on stderr:\n{sanitizer}")
        try:
            report = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise CheckFailure(
                f"stdout is not one JSON object: {proc.stdout[:300]!r}; stderr {proc.stderr[-500:]!r}"
            ) from None
        expect(
            report.get("exit_status") == proc.returncode,
            f"exit_status {report.get('exit_status')} but the process exited {proc.returncode}",
        )
        return proc.returncode, report, proc.stderr

    def against_faulty(self, faulty_args: list[str], *client_args: str) -> tuple[int, dict]:
        server = Server([self.faulty, *faulty_args])
        try:
            code, report, _ = self.run_client(server.port, *client_args)
        finally:
            server.kill()
        return code, report

    # ---- checks --------------------------------------------------------------
    def correct_server(self) -> None:
        server = Server([self.server, "--port", "0", "--proto", "echo"])
        try:
            code, r, _ = self.run_client(
                server.port,
                "--connections",
                "200",
                "--threads",
                "2",
                "--sources",
                "2",
                "--duration",
                "1",
                "--depth",
                "4",
                "--size",
                "700",
            )
        finally:
            stats = server.stop()
            server.kill()
        missing = [k for k in FIELDS if k not in r]
        expect(not missing, f"JSON lacks {missing}")
        expect(code == 0, f"exit {code} against a correct server: {r}")
        expect(r["verify_errors"] == 0 and r["first_verify_error"] is None, "verification errors")
        expect(
            r["connected"] == 200 and r["open_at_end"] == 200, f"connected {r['connected']}, open {r['open_at_end']}"
        )
        expect(r["connect_errors"] == {} and r["closed_early"] == {}, "failures")
        expect(r["echoes"] > 0 and r["rtt_ns"]["count"] == r["echoes"], "every echo has an RTT")
        expect(r["bytes_received"] == r["bytes_sent"] == r["echoes"] * 700, "bytes sent, received and echoes agree")
        expect(r["unanswered_messages"] == 0, "unanswered messages")
        pct = r["rtt_ns"]["percentiles"]
        expect(
            r["rtt_ns"]["min"]
            <= pct["50"]
            <= pct["90"]
            <= pct["99"]
            <= pct["99.9"]
            <= pct["99.99"]
            <= r["rtt_ns"]["max"],
            f"percentiles out of order: {r['rtt_ns']}",
        )
        expect(
            len(r["series"]) >= 1 and sum(s["echoes"] for s in r["series"]) == r["window_echoes"],
            "the series adds up to the window",
        )
        expect(
            stats is not None and stats["bytes_echoed"] == r["bytes_received"],
            f"server bytes_echoed {stats and stats['bytes_echoed']} != client bytes_received {r['bytes_received']}",
        )

    def open_loop_rate(self) -> None:
        server = Server([self.server, "--port", "0", "--proto", "echo"])
        try:
            code, r, _ = self.run_client(server.port, "--connections", "20", "--rate", "200", "--duration", "1")
            # 10 connections at 4/s cannot all be opened within 1 s: the tally says so, and it fails
            code2, r2, _ = self.run_client(server.port, "--connections", "10", "--connect-rate", "4", "--duration", "1")
        finally:
            server.kill()
        expect(code == 0, f"exit {code}")
        expect(3600 <= r["window_echoes"] <= 4400, f"20 connections x 200/s x 1 s: {r['window_echoes']} echoes")
        expect(
            code2 == 1 and r2["connected"] == 4 and r2["not_attempted"] == 6 and r2["connect_errors"] == {},
            f"connect-rate: exit {code2}, connected {r2['connected']}, not attempted {r2['not_attempted']}",
        )

    def flipped_byte(self) -> None:
        code, r = self.against_faulty(
            ["--corrupt-every", "5000"], "--connections", "4", "--duration", "1", "--size", "1000"
        )
        expect(code == 1, f"exit {code}")
        expect(r["verify_errors"] == 4, f"verify_errors {r['verify_errors']} (one per connection)")
        first = r["first_verify_error"]
        expect(
            first is not None and first["offset"] == 4999 and first["expected"] == first["got"] ^ 0xFF,
            f"first_verify_error {first}",
        )

    def dropped_connection(self) -> None:
        code, r = self.against_faulty(["--drop-after", "3000"], "--connections", "5", "--duration", "1")
        expect(code == 1, f"exit {code}")
        expect(r["closed_early"] == {"eof": 5} and r["verify_errors"] == 0, f"closed_early {r['closed_early']}")

    def reset_connection(self) -> None:
        code, r = self.against_faulty(["--drop-after", "3000", "--reset"], "--connections", "5", "--duration", "1")
        expect(code == 1, f"exit {code}")
        expect(r["closed_early"] == {"ECONNRESET": 5}, f"closed_early {r['closed_early']}")

    def stalled_echo(self) -> None:
        code, r = self.against_faulty(["--stall-after", "3000"], "--connections", "3", "--duration", "0.5")
        expect(code == 1, f"exit {code}")
        expect(r["unanswered_messages"] == 3 and r["verify_errors"] == 0, f"unanswered {r['unanswered_messages']}")
        # open loop: 100 messages of 64 bytes each go through, then 4 stay in flight
        # (depth) and the other 96 of the 200 due in 2 s are counted as never sent
        code, r = self.against_faulty(
            ["--stall-after", "6400"], "--connections", "2", "--rate", "100", "--depth", "4", "--duration", "2"
        )
        expect(
            code == 1 and r["echoes"] == 200 and r["unanswered_messages"] == 8 and r["due_unsent_messages"] == 192,
            f"exit {code}, echoes {r['echoes']}, unanswered {r['unanswered_messages']}, "
            f"due unsent {r['due_unsent_messages']}",
        )

    def refused(self) -> None:
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        code, r, _ = self.run_client(port, "--connections", "7", "--duration", "0.3")
        expect(code == 1 and r["connect_errors"] == {"ECONNREFUSED": 7}, f"exit {code}, {r['connect_errors']}")
        code, r, _ = self.run_client(port, "--max-conns", "5")
        expect(
            r["max_conns"]["stop_reason"] == "connect_ECONNREFUSED" and r["max_conns"]["reached"] == 0,
            f"max_conns {r['max_conns']}",
        )

    def max_conns_cap(self) -> None:
        server = Server([self.server, "--port", "0", "--proto", "echo"])
        try:
            code, r, _ = self.run_client(
                server.port,
                "--max-conns",
                "300",
                "--sources",
                "3",
                "--connect-rate",
                "3000",
                "--server-pid",
                str(server.process.pid),
            )
        finally:
            server.kill()
        m = r["max_conns"]
        missing = [k for k in MAX_CONNS_FIELDS if k not in m]
        expect(not missing, f"max_conns lacks {missing}")
        expect(code == 0 and r["mode"] == "max_conns", f"exit {code}")
        expect(m["stop_reason"] == "cap_reached" and m["reached"] == 300 and m["alive_at_end"] == 300, f"{m}")
        expect(m["server_rss_per_conn_bytes"] > 0, f"server memory per connection {m['server_rss_per_conn_bytes']}")
        expect(0.05 <= m["stop_s"] <= 2, f"300 connections at 3000/s took {m['stop_s']} s")

    def max_conns_server_out_of_files(self) -> None:
        """A server at its open-file limit leaves connections in its backlog:
        they connect but are never served (echo_timeout)."""
        server = Server([self.server, "--port", "0", "--proto", "echo"], nofile=64)
        try:
            code, r, _ = self.run_client(server.port, "--max-conns", "500", "--connect-timeout", "1")
        finally:
            server.kill()
        m = r["max_conns"]
        expect(code == 0, f"exit {code}: reaching a limit is a result, not a failure")
        expect(m["stop_reason"] == "echo_timeout" and 40 <= m["reached"] < 64, f"{m}")

    def max_conns_client_out_of_files(self) -> None:
        server = Server([self.server, "--port", "0", "--proto", "echo"])
        try:
            code, r, _ = self.run_client(server.port, "--max-conns", "500", nofile=100)
        finally:
            server.kill()
        m = r["max_conns"]
        expect(r["nofile_hard"] == 100 and r["nofile_soft"] == 100, f"limits {r['nofile_soft']}/{r['nofile_hard']}")
        expect(m["stop_reason"] == "client_EMFILE" and 80 <= m["reached"] < 100, f"{m}")

    def sigterm(self) -> None:
        server = Server([self.server, "--port", "0", "--proto", "echo"])
        try:
            proc = subprocess.Popen(
                [self.client, "--port", str(server.port), "--json", "--duration", "60", "--connections", "10"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            time.sleep(1.0)
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=10)
            took = time.monotonic() - started
        finally:
            server.kill()
        r = json.loads(out)
        expect(
            proc.returncode == 0 and r["interrupted"] is True, f"exit {proc.returncode}, interrupted {r['interrupted']}"
        )
        expect(
            took < 2 and r["echoes"] > 0 and r["verify_errors"] == 0,
            f"stopped after {took:.2f} s, {r['echoes']} echoes",
        )

    def usage_errors(self) -> None:
        for args, flag in (
            [["--connections", "5"], "--port"],
            [["--port", "1", "--depth", "0"], "--depth"],
            [["--port", "1", "--bogus"], "--bogus"],
            [["--port", "1", "--server-pid", "1"], "--server-pid"],
            [["--port", "1", "--host", "localhost"], "--host"],
        ):
            proc = subprocess.run([self.client, *args], capture_output=True, text=True, timeout=10)
            expect(proc.returncode == 2 and flag in proc.stderr, f"{args}: exit {proc.returncode}, {proc.stderr!r}")
        help_text = subprocess.run([self.client, "--help"], capture_output=True, text=True, timeout=10)
        expect(help_text.returncode == 0 and "--max-conns" in help_text.stdout, "--help")

    def run(self) -> int:
        for name in [
            "correct_server",
            "open_loop_rate",
            "flipped_byte",
            "dropped_connection",
            "reset_connection",
            "stalled_echo",
            "refused",
            "max_conns_cap",
            "max_conns_server_out_of_files",
            "max_conns_client_out_of_files",
            "sigterm",
            "usage_errors",
        ]:
            try:
                getattr(self, name)()
                self.results.append((name, "PASS"))
            except (CheckFailure, OSError, subprocess.TimeoutExpired, KeyError, json.JSONDecodeError) as e:
                self.results.append((name, f"FAIL: {type(e).__name__}: {e}"))
        return print_results(self.results, "echo_client checks")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", required=True)
    parser.add_argument("--faulty", required=True)
    parser.add_argument("--server", required=True, help="a real architecture, run with --proto echo")
    opts = parser.parse_args()
    return Checks(opts.client, opts.faulty, opts.server).run()


if __name__ == "__main__":
    sys.exit(main())
