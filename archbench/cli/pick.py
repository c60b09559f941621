"""`python -m archbench pick`: which design for the user's own workload, decided on this machine within a budget.

    python -m archbench pick [--work-us N] [--block-us N] [--block-dist fixed|exp] [--idle K] [--churn]
                             [--response SPEC] [--connections N] [--pipeline D] [--budget 3m] [--delta 0.10]
                             [--servers S ...] [--campaign NAME] [--raw-root data/raw] [--page-dir DIR]
                             [--map-campaign NAME] [--server-cpus CPUS] [--load-cpus CPUS] [--seed N] [--dry-run]

It composes the point (archbench.config.pick), runs it as an ordinary campaign under data/raw (profile `pick`,
named pick-<host>-<UTC>; `--campaign` resumes one), with the selection of the best adding rounds only where the
answer is open and the budget allows, then prints the answer (decided in archbench.analyze.pick, rendered in
archbench.render.pick) and writes the page to keep.
A bad flag is a one-line error (exit 2) before any campaign exists; a point this machine cannot rank is answered
with the reason and what would make it testable (exit 1); Ctrl-C keeps the finished trials (exit 130).
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from archbench.analyze.pick import nearest_map_point, pick_answer
from archbench.config.params import default_campaign_name
from archbench.config.paths import PROCESSED_DIR
from archbench.config.pick import (
    DEFAULT_BUDGET_S,
    DEFAULT_CONNECTIONS,
    DEFAULT_DELTA,
    PROFILE,
    PickRequest,
    parse_budget,
    plan_pick,
)
from archbench.config.values import ParameterError
from archbench.config.workloads import BLOCK_DISTS, CLOSE, KEEP_ALIVE
from archbench.measure.progress import format_duration
from archbench.measure.runner import run_campaign
from archbench.render.campaigns import resolve
from archbench.render.pick import render_terminal, write_page
from archbench.studies.workloads import STUDY as WORKLOADS_STUDY

EXIT_OK, EXIT_NOT_RANKED = 0, 1  # a bad flag exits 2 through the command line's ParameterError
PAGE_DIR = PROCESSED_DIR / "pick"


def _number(flag: str, text: str | None, default: Any, kind: type = int) -> Any:
    """A numeric flag (`kind` int or float); its error names the flag in one line (ParameterError, exit 2), never
    argparse's usage."""
    if text is None:
        return default
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number such as 0.10"
        raise ParameterError(flag, f"{text!r} is not {what}") from None


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "pick", help="which server design for your workload: measured here, decided within a time budget"
    )
    workload = parser.add_argument_group("the workload (the servers' own flags)")
    workload.add_argument("--work-us", metavar="N", help="CPU microseconds per request")
    workload.add_argument("--block-us", metavar="N", help="blocking wait per request, microseconds")
    workload.add_argument(
        "--block-dist", default="fixed", metavar="|".join(BLOCK_DISTS), help="the wait's distribution"
    )
    workload.add_argument("--idle", metavar="K", help="idle keep-alive connections held beside the load")
    workload.add_argument("--churn", action="store_true", help="one request per connection (Connection: close)")
    workload.add_argument("--response", metavar="SPEC", help="the response, e.g. bytes:8192 (default: the servers')")
    workload.add_argument("--connections", metavar="N", help=f"active connections (default: {DEFAULT_CONNECTIONS})")
    workload.add_argument("--pipeline", metavar="D", help="requests per write")
    decision = parser.add_argument_group("the decision")
    decision.add_argument(
        "--budget", default=f"{DEFAULT_BUDGET_S:g}s", metavar="TIME", help="time for the trials: 90s, 3m, 1m30s"
    )
    decision.add_argument(
        "--delta", metavar="F", help=f"within F of the best counts as as good (default: {DEFAULT_DELTA:g})"
    )
    decision.add_argument("--servers", nargs="+", metavar="S", help="the designs to choose between (default: all)")
    decision.add_argument("--seed", help="seed of the trials' order (default: random, recorded)")
    where = parser.add_argument_group("where")
    where.add_argument("--campaign", help="the campaign's name (default: pick-HOST-UTC, new); an existing one resumes")
    where.add_argument(
        "--raw-root", type=Path, default=Path("data/raw"), help="where campaigns live (default: data/raw)"
    )
    where.add_argument(
        "--page-dir", type=Path, default=PAGE_DIR, help="where the page goes (default: data/processed/pick)"
    )
    where.add_argument(
        "--map-campaign", help="the decision map to compare with (default: the report's workloads campaign)"
    )
    where.add_argument("--server-cpus", metavar="CPUS", help="taskset CPU list for the server (default: auto)")
    where.add_argument("--load-cpus", metavar="CPUS", help="taskset CPU list for the load generator (default: auto)")
    where.add_argument("--build-dir", help="CMake build directory holding bin/ (default: build)")
    where.add_argument(
        "--dry-run", action="store_true", help="print the designs and the rounds the budget buys, run nothing"
    )


class BudgetStream:
    """The runner's progress lines, each prefixed with the budget left (the lines go on to `stream`)."""

    def __init__(self, stream: TextIO, budget_s: float, started: float, clock=time.monotonic) -> None:
        self._stream, self._budget_s, self._clock = stream, budget_s, clock
        self._started = started
        self._at_line_start = True

    def write(self, text: str) -> int:
        for piece in text.splitlines(keepends=True):
            if self._at_line_start and piece.strip():
                left = self._budget_s - (self._clock() - self._started)
                mark = f"[{format_duration(left)} left] " if left >= 0 else f"[{format_duration(-left)} over] "
                self._stream.write(mark)
            self._stream.write(piece)
            self._at_line_start = piece.endswith("\n")
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False


def request_of(args: argparse.Namespace) -> PickRequest:
    extra = {
        key: value
        for key, value in (
            ("raw_root", str(args.raw_root)),
            ("server_cpus", args.server_cpus),
            ("load_cpus", args.load_cpus),
            ("build_dir", args.build_dir),
        )
        if value is not None
    }
    return PickRequest(
        work_us=_number("--work-us", args.work_us, 0),
        block_us=_number("--block-us", args.block_us, 0),
        block_dist=args.block_dist,
        idle_connections=_number("--idle", args.idle, 0),
        connection_mode=CLOSE if args.churn else KEEP_ALIVE,
        response=args.response,
        connections=_number("--connections", args.connections, DEFAULT_CONNECTIONS),
        pipeline=_number("--pipeline", args.pipeline, 1),
        budget_s=parse_budget(args.budget),
        delta=_number("--delta", args.delta, DEFAULT_DELTA, float),
        servers=tuple(args.servers) if args.servers else None,
        seed=_number("--seed", args.seed, None),
        extra=extra,
    )


def default_campaign() -> str:
    """pick-<host>-<UTC>: a new campaign per run, as `bench` makes (the host name made safe as every campaign's)."""
    return f"{default_campaign_name(PROFILE)}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"


def map_campaign(args: argparse.Namespace) -> Path | None:
    """The decision map to compare with: the one given, else the campaign the report's workloads study reads."""
    raw_root = Path(args.raw_root)
    if args.map_campaign:
        path = raw_root / args.map_campaign
        if not path.is_dir():
            raise ParameterError("--map-campaign", f"no campaign {args.map_campaign!r} under {raw_root}")
        return path
    try:
        chosen = resolve([WORKLOADS_STUDY], raw_root=raw_root).get(WORKLOADS_STUDY.name)
    except ParameterError:  # no main campaign under this raw root: the map is not needed for the answer
        return None
    return None if chosen is None else raw_root / chosen


def cmd_pick(args: argparse.Namespace, stream: TextIO | None = None) -> int:
    stream = stream or sys.stderr
    started = time.monotonic()
    request = request_of(args)
    campaign = args.campaign or default_campaign()
    plan = plan_pick(request, campaign)
    budget = format_duration(request.budget_s)
    print(
        f"pick: {plan.designs} designs, rounds of about {plan.round_s:.0f} s: the first look after {plan.first_look} "
        f"rounds, at most {plan.max_rounds} within the budget of {budget} (campaign {campaign} in {args.raw_root})",
        file=stream,
        flush=True,
    )
    if args.dry_run:
        return EXIT_OK
    # SIGTERM stops a pick as Ctrl-C does: the trials that finished are kept, the same command resumes.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    progress = BudgetStream(stream, request.budget_s, started=started)
    result = run_campaign(plan.params, stream=progress, deadline=started + request.budget_s)  # type: ignore[arg-type]
    answer = pick_answer(result.path)
    nearby = map_campaign(args)
    if nearby is not None and nearby.resolve() != result.path.resolve():
        answer = dataclasses.replace(answer, nearest=nearest_map_point(answer, nearby))
    page = write_page(answer, Path(args.page_dir))
    print(render_terminal(answer, page))
    return EXIT_OK if answer.compared and answer.rankable else EXIT_NOT_RANKED
