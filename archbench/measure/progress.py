"""A progress line per trial on stderr, with an ETA; no dependency beyond the standard library.

The ETA scales the time spent so far by the configured wrk seconds still to
run, so a campaign mixing 1 s and 5 s trials is estimated by work, not count.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass
class Progress:
    total: int  # trials in the plan
    already_done: int  # finished before this run (resumed campaign)
    remaining_work_s: float  # configured seconds of the trials still to run
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    clock: Callable[[], float] = time.monotonic
    _started: float = field(init=False)
    _done_now: int = field(init=False, default=0)
    _work_done_s: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self._started = self.clock()

    def start_message(self, campaign: str) -> None:
        resumed = f", {self.already_done} already done" if self.already_done else ""
        self._write(f"campaign {campaign}: {self.total} trials{resumed}")

    def trial_finished(self, trial_id: str, status: str, work_s: float, detail: str = "") -> None:
        self._done_now += 1
        self._work_done_s += work_s
        elapsed = self.clock() - self._started
        left_work = max(0.0, self.remaining_work_s - self._work_done_s)
        eta = elapsed / self._work_done_s * left_work if self._work_done_s > 0 else 0.0
        done = self.already_done + self._done_now
        width = len(str(self.total))
        percent = 100.0 * done / self.total if self.total else 100.0
        extra = f" ({detail})" if detail else ""
        self._write(
            f"[{done:>{width}}/{self.total}] {percent:5.1f}% elapsed {format_duration(elapsed)} "
            f"ETA {format_duration(eta)}  {trial_id} {status}{extra}"
        )

    def _write(self, line: str) -> None:
        print(line, file=self.stream, flush=True)
