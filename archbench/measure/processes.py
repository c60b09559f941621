"""Child processes with bounded waits, whole-group signalling, and rusage.

Each child runs in its own session (so its own process group): a Ctrl-C on the
terminal reaches only the runner, which then stops the children itself, and
signalling the group also reaches anything the child forked. The child is
reaped with os.wait4, whose rusage gives its CPU time including the children it
waited for; `taskset` execs the measured program, so the pid is the program.
Output is drained by a thread per pipe, so a chatty child never blocks on a
full pipe and the runner never blocks on a read. Waiting sleeps in select() on
a pidfd (Linux >= 5.3), so the runner does not wake up during a measurement;
elsewhere it falls back to polling.
"""

from __future__ import annotations

import ctypes
import os
import re
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO

POLL_INTERVAL_S = 0.01  # only without pidfd support
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(sig: signal.Signals) -> Callable[[], None]:
    """A preexec_fn: the child gets `sig` when the process that started it dies, even by SIGKILL,
    so a runner killed outright leaves no server or load generator behind. The flag survives the
    exec of taskset and taskset's exec of the program. libc is loaded here, in the parent, so the
    forked child only makes the call."""
    parent_pid = os.getpid()
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        prctl = None  # not Linux: the group signals of a live runner are all there is

    def in_child() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(sig))
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return in_child


@dataclass(frozen=True)
class Exit:
    """How a child ended: exit code (negative: killed by that signal), its CPU time, and how long it
    ran (from start to being reaped, which a pidfd wait makes prompt)."""

    exit_code: int
    cpu_user_s: float
    cpu_sys_s: float
    wall_s: float | None = None


class _Drain(threading.Thread):
    """Reads a pipe to EOF into memory; can wait for a line matching a pattern."""

    def __init__(self, pipe: IO[bytes], name: str) -> None:
        super().__init__(name=name, daemon=True)
        self._pipe = pipe
        self._data = bytearray()
        self._changed = threading.Condition()
        self._eof = False

    def run(self) -> None:
        fd = self._pipe.fileno()
        try:
            while True:
                chunk = os.read(fd, 65536)
                with self._changed:
                    if not chunk:
                        self._eof = True
                        self._changed.notify_all()
                        return
                    self._data += chunk
                    self._changed.notify_all()
        except OSError:
            with self._changed:
                self._eof = True
                self._changed.notify_all()
        finally:
            self._pipe.close()

    def data(self) -> bytes:
        with self._changed:
            return bytes(self._data)

    def wait_for_line(self, pattern: re.Pattern[str], timeout_s: float) -> re.Match[str] | None:
        """First complete line fully matching `pattern`; None at EOF or timeout."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                for line in bytes(self._data).decode("utf-8", "replace").splitlines(keepends=True):
                    if line.endswith("\n"):
                        match = pattern.fullmatch(line.rstrip("\r\n"))
                        if match:
                            return match
                left = deadline - time.monotonic()
                if self._eof or left <= 0:
                    return None
                self._changed.wait(min(left, 0.05))


class ManagedProcess:
    """A child in its own process group, its stdout (and stderr, merged or not) drained."""

    def __init__(self, argv: list[str], *, merge_stderr: bool, env: Mapping[str, str] | None = None) -> None:
        """`env`: variables added to the runner's environment (None or empty: inherit it unchanged)."""
        self.argv = list(argv)
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, **env} if env else None,
            # SIGTERM: servers stop cleanly, prefork and nginx stop their workers too.
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
        self.pid = self._proc.pid
        self.started = time.monotonic()
        self._exit: Exit | None = None
        self._pidfd: int | None = None
        if hasattr(os, "pidfd_open"):
            try:
                self._pidfd = os.pidfd_open(self.pid)
            except OSError:
                self._pidfd = None
        assert self._proc.stdout is not None
        self._stdout = _Drain(self._proc.stdout, f"stdout-{self.pid}")
        self._stdout.start()
        self._stderr: _Drain | None = None
        if not merge_stderr:
            assert self._proc.stderr is not None
            self._stderr = _Drain(self._proc.stderr, f"stderr-{self.pid}")
            self._stderr.start()

    # ---- waiting

    def poll(self) -> Exit | None:
        if self._exit is None:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid == self.pid:
                self._exit = Exit(
                    os.waitstatus_to_exitcode(status),
                    usage.ru_utime,
                    usage.ru_stime,
                    wall_s=time.monotonic() - self.started,
                )
                # Tell Popen the child is reaped so it never waits on a recycled pid.
                self._proc.returncode = self._exit.exit_code
                if self._pidfd is not None:
                    os.close(self._pidfd)
                    self._pidfd = None
        return self._exit

    def wait(self, timeout_s: float) -> Exit | None:
        deadline = time.monotonic() + timeout_s
        while True:
            ended = self.poll()
            left = deadline - time.monotonic()
            if ended is not None or left <= 0:
                return ended
            if self._pidfd is not None:
                select.select([self._pidfd], [], [], left)  # readable once the child has exited
            else:
                time.sleep(min(POLL_INTERVAL_S, left))

    def wait_for_line(self, pattern: re.Pattern[str], timeout_s: float) -> re.Match[str] | None:
        return self._stdout.wait_for_line(pattern, timeout_s)

    # ---- stopping

    def signal_group(self, sig: int) -> None:
        # The group outlives its leader while members remain, and the kernel does
        # not reuse a pid still in use as a process group id, so this is safe
        # even after the leader was reaped.
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, grace_s: float) -> tuple[Exit, str]:
        """SIGTERM the group, SIGKILL it after `grace_s`; returns the exit and the last signal sent."""
        sent = "none"
        if self.poll() is None:
            self.signal_group(signal.SIGTERM)
            sent = "SIGTERM"
            if self.wait(grace_s) is None:
                self.signal_group(signal.SIGKILL)
                sent = "SIGKILL"
        ended = self.wait(grace_s + 5.0)
        self.signal_group(signal.SIGKILL)  # stragglers the leader left behind
        if ended is None:
            raise RuntimeError(f"pid {self.pid} ({self.argv[0]}) survived SIGKILL")
        return ended, sent

    def kill(self) -> Exit | None:
        """SIGKILL the whole group at once and reap the leader (bounded)."""
        self.signal_group(signal.SIGKILL)
        return self.wait(5.0)

    # ---- output

    def output(self, join_timeout_s: float = 5.0) -> tuple[bytes, bytes]:
        """stdout (with stderr if merged) and stderr, after the pipes closed (bounded wait)."""
        self._stdout.join(join_timeout_s)
        if self._stderr is not None:
            self._stderr.join(join_timeout_s)
        return self._stdout.data(), self._stderr.data() if self._stderr is not None else b""

    def output_so_far(self) -> bytes:
        return self._stdout.data()
