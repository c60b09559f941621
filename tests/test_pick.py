"""`python -m archbench pick` (archbench.cli.pick, archbench.config.pick, archbench.analyze.pick,
archbench.render.pick): the point composed from the flags, pools that cover the blocking, the rounds sized to the
budget, bad flags refused in one line before any campaign exists, and the answer (terminal table and page) rendered
from fixture campaigns: resolved, refused where the load generator sets the rate, said to be unreliable on a busy
machine, and placed on the report's map."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import numpy as np
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.analyze.pick import nearest_map_point, pick_answer
from archbench.cli import pick as pick_cli
from archbench.cli.main import build_parser, main
from archbench.config import pick as pick_config
from archbench.config.pick import (
    FIRST_LOOK,
    PickRequest,
    covering_pool,
    parse_budget,
    plan_pick,
    pool_sizes,
)
from archbench.config.plan import expand_grid
from archbench.config.values import ParameterError
from archbench.render.pick import render_page, render_terminal

REPO = Path(__file__).resolve().parents[1]
SHIPPED_MAP = REPO / "data" / "raw" / "reference-workloads-selection"


def test_a_pool_covers_the_blocking_and_stops_at_the_connections() -> None:
    assert covering_pool(64, work_us=0, block_us=1000) == 64
    assert covering_pool(64, work_us=1000, block_us=1000) == 32
    assert covering_pool(64, work_us=100, block_us=0) == 0
    assert pool_sizes(PickRequest(work_us=100)) == (1, "cpus")
    assert pool_sizes(PickRequest(block_us=1000, connections=64)) == (1, "cpus", 64)
    # 5 ms waits on 2,000 connections: the pool that covers them is the connections, capped by the open files
    assert pool_sizes(PickRequest(block_us=5000, work_us=200, connections=2000)) == (1, "cpus", 1924)
    assert pool_sizes(PickRequest(block_us=5000, connections=2000), open_file_limit=1000) == (1, "cpus", 744)


@pytest.mark.parametrize(("text", "seconds"), [("180", 180), ("90s", 90), ("3m", 180), ("1m30s", 90), ("1h", 3600)])
def test_budgets_read_as_durations(text: str, seconds: float) -> None:
    assert parse_budget(text) == seconds


def test_the_plan_fits_the_budget_and_the_blocking_point_sweeps_the_pools() -> None:
    plan = plan_pick(PickRequest(block_us=1000, connections=64, budget_s=180), "pick-test")
    configs = expand_grid(plan.params)
    assert 64 in {c.threads for c in configs if c.architecture == "thread_pool"}
    assert {c.workload.block_us for c in configs} == {1000} and {c.connections for c in configs} == {64}
    assert plan.first_look == FIRST_LOOK and plan.params.trials == FIRST_LOOK
    assert plan.first_look <= plan.max_rounds and plan.params.selection_max_rounds == plan.max_rounds
    assert plan.max_rounds * plan.round_s <= 180
    assert plan.params.selection_delta == pytest.approx(0.10) and plan.params.warmup is False


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--work-us", "-5"], "--work-us"),
        (["--work-us", "lots"], "--work-us"),
        (["--servers", "nosuch", "epoll"], "--servers"),
        (["--servers", "pong", "epoll"], "--servers"),
        (["--budget", "5s", "--block-us", "1000"], "--budget"),
        (["--budget", "soon"], "--budget"),
        (["--delta", "1.5"], "--delta"),
        (["--churn", "--pipeline", "4"], "--pipeline"),
        (["--response", "bytes:-1"], "--response"),
    ],
)
def test_bad_flags_are_one_line_errors_and_create_no_campaign(
    argv: list[str], flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["pick", *argv, "--raw-root", str(tmp_path), "--page-dir", str(tmp_path / "pages")])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and flag in err, err
    assert list(tmp_path.iterdir()) == []


def test_connections_beyond_the_open_file_limit_are_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pick_config.resource, "getrlimit", lambda _: (1024, 20_000))
    status = main(["pick", "--idle", "19900", "--work-us", "10", "--raw-root", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "--idle" in err and "open-file hard limit is 20000" in err and "at most 19744" in err
    assert list(tmp_path.iterdir()) == []


def test_a_budget_too_short_says_what_would_do(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match=r"--budget: .*give at least \d+ s"):
        plan_pick(PickRequest(work_us=100, budget_s=3), "pick-test")


def test_the_dry_run_prints_the_plan_and_runs_nothing(tmp_path: Path) -> None:
    stream = io.StringIO()
    args = pick_cli_args(["--work-us", "100", "--budget", "3m", "--dry-run", "--raw-root", str(tmp_path)])
    assert pick_cli.cmd_pick(args, stream) == 0
    assert "designs, rounds of about" in stream.getvalue() and "within the budget of 3:00" in stream.getvalue()
    assert list(tmp_path.iterdir()) == []


def pick_cli_args(argv: list[str]):
    return build_parser().parse_args(["pick", *argv])


def test_progress_lines_carry_the_budget_left() -> None:
    now = [100.0]
    out = io.StringIO()
    stream = pick_cli.BudgetStream(out, budget_s=60, started=100.0, clock=lambda: now[0])
    stream.write("first line\nsecond ")
    now[0] = 130.0
    stream.write("half\nthird\n")
    now[0] = 175.0
    stream.write("late\n")
    assert out.getvalue().splitlines() == [
        "[1:00 left] first line",
        "[1:00 left] second half",
        "[0:30 left] third",
        "[0:15 over] late",
    ]


# --------------------------------------------------------------------------- answers from fixture campaigns

RATES = {"epoll": 10_000.0, "poll": 9_900.0, "thread_pool": 5_000.0}


def _campaign(
    tmp_path: Path,
    *,
    rounds: int = 4,
    load_utilisation: float = 0.5,
    disturbed: bool = False,
    unsupported: str | None = None,
) -> Path:
    """A pick campaign at 100 us of work over epoll, poll and the pool, written as the runner would."""
    plan = plan_pick(
        PickRequest(work_us=100, servers=("epoll", "poll", "thread_pool"), budget_s=600, seed=3), "pick-fixture"
    )
    configs = expand_grid(plan.params)
    writer = synthetic.CampaignWriter(tmp_path, "pick-fixture")
    rng = np.random.default_rng(31)
    for repetition in range(1, rounds + 1):
        for config in configs:
            rate = RATES[config.architecture] * float(np.exp(rng.normal(0.0, 0.004)))
            trial_id = writer.trial(
                config.as_dict(),
                repetition,
                cid=config.config_id,
                status="unsupported" if config.architecture == unsupported else "ok",
                wrk=synthetic.wrk_report(rate, int(rate), 64),
                load_utilisation=load_utilisation,
            )
            if disturbed:
                record_path = writer.dir / f"{trial_id}.json"
                record = json.loads(record_path.read_text())
                record["interference"] = {"disturbed": True, "max_share": 0.1, "reasons": ["fixture"]}
                record_path.write_text(json.dumps(record))
    path = writer.finish()
    meta = json.loads((path / "campaign.json").read_text())
    meta["parameters"] = plan.params.to_dict()
    (path / "campaign.json").write_text(json.dumps(meta))
    return path


def test_a_resolved_answer_names_the_picks_and_the_slower(tmp_path: Path) -> None:
    answer = pick_answer(_campaign(tmp_path))
    assert answer.compared and answer.rankable and answer.resolved and not answer.busy
    verdicts = {row.label: row.verdict for row in answer.rows}
    assert verdicts == {"epoll": "within", "poll": "within", "thread_pool x1": "slower"}
    slower = next(row for row in answer.rows if row.verdict == "slower")
    assert slower.high <= 1.0 and slower.ratio == pytest.approx(0.5, rel=0.02)
    text = render_terminal(answer, Path("page.html"))
    assert "Resolved: 2 designs within 10 % of the best, 1 slower" in text
    assert "Pick: epoll, poll." in text and "Slower than the best: thread_pool x1." in text
    assert "Page: page.html" in text and "Not ranked" not in text
    page = render_page(answer)
    assert "<svg" in page and "<table>" in page and "thread_pool x1" in page and "Resolved" in page


def test_a_server_that_cannot_run_here_is_not_compared_and_the_others_are(tmp_path: Path) -> None:
    answer = pick_answer(_campaign(tmp_path, unsupported="poll"))
    assert answer.compared and answer.resolved
    assert {row.label: row.verdict for row in answer.rows} == {
        "epoll": "within",
        "thread_pool x1": "slower",
        "poll": "",
    }
    assert "Not compared (no usable trial here, so no verdict): poll." in render_terminal(answer)


def test_a_point_the_load_generator_bounds_is_refused_with_what_would_make_it_testable(tmp_path: Path) -> None:
    answer = pick_answer(_campaign(tmp_path, load_utilisation=0.99))
    assert not answer.rankable and answer.suggestions
    text = render_terminal(answer)
    assert "Not ranked: this machine cannot rank the designs at this point" in text
    assert "--work-us" in text and "--placement ssh" in text
    assert "Pick:" not in text and "Resolved" not in text
    assert "Not ranked" in render_page(answer)


def test_a_busy_machine_is_said_and_its_trials_are_not_counted(tmp_path: Path) -> None:
    answer = pick_answer(_campaign(tmp_path, disturbed=True))
    assert answer.busy and answer.disturbed == answer.trials and not answer.compared
    text = render_terminal(answer)
    assert "The machine was busy" in text and "Not compared" in text and "Pick:" not in text


def test_the_answer_sits_on_the_reports_map(tmp_path: Path) -> None:
    answer = pick_answer(_campaign(tmp_path))
    nearest = nearest_map_point(answer, SHIPPED_MAP)
    assert nearest is not None and nearest.label == "work 100 us"
    assert nearest.rankable and set(nearest.picks) and nearest.delta == pytest.approx(0.05)
    # epoll is the best here; the answers agree exactly where it is a pick there
    assert nearest.best_here == "epoll" and nearest.agrees == (nearest.best_here_there == "within")
    assert set(nearest.common) <= set(nearest.picks) & {"epoll", "poll"}
    text = render_terminal(dataclasses.replace(answer, nearest=nearest))
    assert "Closest point of the report's decision map: work 100 us" in text
    assert "picks within 5 % of the best there" in text
    assert ("The answers agree" in text) == nearest.agrees and ("The answers differ" in text) == nearest.differs
