"""A progress line per trial, with an ETA; inside a Jupyter kernel also a tqdm bar.

The ETA scales the time spent so far by the configured wrk seconds still to
run, so a campaign mixing 1 s and 5 s trials is estimated by work, not count.

The lines go to `stream` (stderr by default; the notebooks pass their stdout).
`python -m archbench notebook` streams the kernel's output to the terminal as it
arrives, so the same lines reach `make trials` while the notebook runs. In a
kernel the bar is drawn on the same stream and each line is written above it
(`tqdm.write`), so the two never garble each other, in the notebook or in the
terminal.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from tqdm import tqdm

# The bar's own ETA counts trials; ours weighs them by duration, so the bar shows ours as its postfix.
BAR_FORMAT = "{desc}{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} trials [{elapsed}{postfix}]"


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def running_in_kernel() -> bool:
    """True inside a Jupyter (ipykernel) kernel: a notebook, or one executed by papermill."""
    kernel_app = sys.modules.get("ipykernel.kernelapp")
    return kernel_app is not None and bool(kernel_app.IPKernelApp.initialized())


@dataclass
class Progress:
    total: int  # trials in the plan
    already_done: int  # finished before this run (resumed campaign)
    remaining_work_s: float  # configured seconds of the trials still to run
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    clock: Callable[[], float] = time.monotonic
    bar: bool = field(default_factory=running_in_kernel)  # also draw a tqdm bar on `stream`
    _started: float = field(init=False)
    _done_now: int = field(init=False, default=0)
    _work_done_s: float = field(init=False, default=0.0)
    _bar: tqdm | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._started = self.clock()

    def start_message(self, campaign: str) -> None:
        resumed = f", {self.already_done} already done" if self.already_done else ""
        self._write(f"campaign {campaign}: {self.total} trials{resumed}")
        if self.bar and self.already_done < self.total:
            self._bar = tqdm(
                total=self.total,
                initial=self.already_done,
                desc=f"{campaign} ",
                file=self.stream,
                bar_format=BAR_FORMAT,
                dynamic_ncols=False,
                ncols=100,
                leave=True,
            )

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
        if self._bar is not None:
            self._bar.set_postfix_str(f"ETA {format_duration(eta)}", refresh=False)
            self._bar.update(1)
            if done >= self.total:
                self.close()

    def close(self) -> None:
        """End the bar (its last state stays on the stream); the lines need no closing."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def _write(self, line: str) -> None:
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
            self.stream.flush()
        else:
            print(line, file=self.stream, flush=True)
