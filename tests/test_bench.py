"""The benchmark's table and target logic, on synthetic records; the command's campaign naming."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import WRK_FIXTURES

from archbench.measure.bench import (
    Row,
    TrialMeasure,
    architectures_meeting_all,
    bench_report,
    default_bench_campaign,
    evaluate_targets,
    format_table,
    format_targets,
    load_cpu_utilisation,
    measure_trial,
    summarize,
    variant_label,
)


def measure(
    label: str,
    pipeline: int,
    rate: float,
    cpu_us: float,
    utilisation: float = 0.5,
    status: str = "ok",
    errors: int = 0,
    busy: float = 0.6,
) -> TrialMeasure:
    return TrialMeasure(
        label=label,
        architecture=label.split("-")[0],
        pipeline=pipeline,
        status=status,
        requests_per_sec=rate if status == "ok" else None,
        server_cpu_us_per_request=cpu_us if status == "ok" else None,
        load_cpu_utilisation=utilisation if status == "ok" else None,
        load_cpus_busy=busy if status == "ok" else None,
        errors=errors,
    )


def synthetic() -> list[TrialMeasure]:
    return [
        # nginx: 100k req/s at 10 us/req (depth 1); 150k req/s at 6 us/req (depth 16).
        measure("nginx-t1", 1, 100_000, 10.0),
        measure("nginx-t1", 1, 90_000, 11.0),
        measure("nginx-t1", 1, 110_000, 9.0),
        measure("nginx-t1", 16, 150_000, 6.0),
        measure("nginx-t1", 16, 150_000, 6.0),
        # epoll-edge: 0.7x nginx's CPU at depth 1; at depth 16 0.08x its CPU and 8.5x its rate, client-bound.
        measure("epoll-edge", 1, 140_000, 7.0),
        measure("epoll-edge", 1, 140_000, 7.0),
        measure("epoll-edge", 16, 1_275_000, 0.48, utilisation=0.97),
        measure("epoll-edge", 16, 1_275_000, 0.48, utilisation=0.99),
        # blocking: costly, with errors, and one failed trial.
        measure("blocking", 1, 20_000, 30.0, errors=5),
        measure("blocking", 1, 0, 0, status="failed"),
        measure("blocking", 16, 50_000, 12.0),
    ]


def row(rows: list[Row], label: str, pipeline: int) -> Row:
    return next(r for r in rows if r.label == label and r.pipeline == pipeline)


def test_rows_are_medians_with_ratios_to_nginx_at_the_same_depth() -> None:
    rows = summarize(synthetic())
    nginx_1, epoll_1, blocking_1 = row(rows, "nginx-t1", 1), row(rows, "epoll-edge", 1), row(rows, "blocking", 1)
    assert (nginx_1.requests_per_sec, nginx_1.server_cpu_us_per_request, nginx_1.ok, nginx_1.trials) == (
        100_000,
        10.0,
        3,
        3,
    )
    assert (nginx_1.rate_vs_reference, nginx_1.cpu_vs_reference) == (1.0, 1.0)
    assert epoll_1.rate_vs_reference == pytest.approx(1.4) and epoll_1.cpu_vs_reference == pytest.approx(0.7)
    assert (blocking_1.ok, blocking_1.trials, blocking_1.errors) == (1, 2, 5)
    epoll_16 = row(rows, "epoll-edge", 16)
    assert epoll_16.rate_vs_reference == pytest.approx(8.5) and epoll_16.cpu_vs_reference == pytest.approx(0.08)
    assert epoll_16.client_bound and not row(rows, "nginx-t1", 16).client_bound
    # Depth 1 first, most efficient first within a depth.
    assert [(r.label, r.pipeline) for r in rows] == [
        ("epoll-edge", 1),
        ("nginx-t1", 1),
        ("blocking", 1),
        ("epoll-edge", 16),
        ("nginx-t1", 16),
        ("blocking", 16),
    ]


def test_targets_pass_and_fail_on_the_issues_thresholds() -> None:
    rows = summarize(synthetic())
    results = evaluate_targets(rows)
    assert [(r.target.key, r.best.label, round(r.ratio, 3), r.passed) for r in results] == [
        ("a", "epoll-edge", 0.7, True),
        ("b", "epoll-edge", 0.08, True),
        ("c", "epoll-edge", 8.5, True),
    ]
    assert architectures_meeting_all(rows) == ["epoll-edge"]

    slower = [
        m if not (m.label == "epoll-edge" and m.pipeline == 16) else measure("epoll-edge", 16, 900_000, 0.9)
        for m in synthetic()
    ]
    rows = summarize(slower)
    results = evaluate_targets(rows)
    assert [(r.target.key, r.passed) for r in results] == [("a", True), ("b", False), ("c", False)]
    assert results[1].ratio == pytest.approx(0.15) and results[2].ratio == pytest.approx(6.0)
    assert architectures_meeting_all(rows) == []


def test_a_saturated_client_cpu_is_marked_even_when_wrks_own_time_is_low() -> None:
    rows = summarize(
        [measure("nginx-t1", 16, 100_000, 5.0), measure("epoll-edge", 16, 900_000, 0.4, utilisation=0.5, busy=0.97)]
    )
    epoll = row(rows, "epoll-edge", 16)
    assert (epoll.client_bound, epoll.client_cpu_saturated) == (False, True)
    assert "0.97 ~" in format_table(rows)
    assert "(client-bound" in format_targets(evaluate_targets(rows), [])


def test_rate_target_fails_below_eight_times() -> None:
    rows = summarize([measure("nginx-t1", 16, 100_000, 5.0), measure("reactor-edge-t1", 16, 790_000, 0.4)])
    (c,) = [r for r in evaluate_targets(rows) if r.target.key == "c"]
    assert (c.best.label, c.ratio, c.passed) == ("reactor-edge-t1", 7.9, False)


def test_targets_without_nginx_cannot_be_told() -> None:
    rows = summarize([measure("epoll-edge", 1, 1, 1.0), measure("nginx-t1", 1, 0, 0, status="failed")])
    results = evaluate_targets(rows)
    assert [r.passed for r in results] == [None, None, None]
    text = format_targets(results, architectures_meeting_all(rows))
    assert "(a) N/A" in text and "no ok trials to compare" in text and "all three by one architecture: none" in text


def test_printed_table_and_targets() -> None:
    rows = summarize(synthetic())
    table = format_table(rows)
    lines = table.splitlines()
    assert lines[0].split() == [
        "architecture",
        "depth",
        "ok",
        "req/s",
        "x",
        "nginx",
        "CPU",
        "us/req",
        "x",
        "nginx",
        "wrk",
        "CPU",
        "load",
        "CPUs",
        "busy",
        "errors",
    ]
    epoll_16 = next(line for line in lines if line.startswith("epoll-edge") and " 16 " in line)
    assert epoll_16.split() == [
        "epoll-edge",
        "16",
        "2/2",
        "1,275,000",
        "8.50",
        "0.48",
        "0.080",
        "0.98",
        "*",
        "0.60",
        "0",
    ]
    assert "* client-bound" in lines[-1] and "~ its CPU >= 0.95 busy" in lines[-1]
    targets = format_targets(evaluate_targets(rows), architectures_meeting_all(rows))
    assert (
        "(a) PASS CPU per request <= 0.8x nginx at depth 1: best epoll-edge 7.00 us/req vs nginx 10.00 us/req "
        "= 0.700x" in targets
    )
    assert (
        "(c) PASS requests/s >= 8x nginx at depth 16: best epoll-edge 1,275,000 req/s vs nginx 150,000 req/s "
        "= 8.500x (client-bound" in targets
    )
    assert targets.endswith("all three by one architecture: epoll-edge")


# --------------------------------------------------------------------------- from trial records


def record(architecture: str, status: str = "ok", **changes) -> dict:
    base = {
        "trial_id": "x-r01",
        "config_id": "x",
        "status": status,
        "warmup": False,
        "order_index": 0,
        "config": {"architecture": architecture, "threads": None, "trigger": None, "pipeline": 1},
        "server": {"cpu_user_s": 1.0, "cpu_sys_s": 1.0, "cpu_source": "tree", "stats": {}},
        "load": {
            "tool": "wrk",
            "cpus": "1",
            "wall_s": 2.0,
            "cpu_user_s": 0.5,
            "cpu_sys_s": 0.5,
            "cpu_utilisation": 0.5,
            "output_file": "x-r01.wrk.txt",
        },
    }
    for key, value in changes.items():
        base[key] = {**base[key], **value} if isinstance(value, dict) else value
    return base


def test_measure_uses_wrks_requests_and_the_recorded_cpu_source() -> None:
    parsed = {
        "total_requests": 200_000,
        "requests_per_sec": 100_000.0,
        "socket_errors": {"connect": 0, "read": 1, "write": 0, "timeout": 2},
        "non_2xx": 3,
    }
    c_server = measure_trial(record("epoll", config={"trigger": "edge"}, load={"cpus_busy": 0.9}), parsed)
    assert (c_server.label, c_server.server_cpu_us_per_request, c_server.errors) == ("epoll-edge", 10.0, 6)
    assert (c_server.load_cpu_utilisation, c_server.load_cpus_busy) == (0.5, 0.9)
    nginx = record(
        "nginx",
        config={"threads": 1, "pipeline": 16},
        server={"cpu_source": "stats", "stats": {"cpu_user_s": 0.2, "cpu_sys_s": 0.6}},
    )
    measured = measure_trial(nginx, parsed)
    # nginx alone (0.8 s), not the launcher's tree (2 s).
    assert (measured.label, measured.pipeline, measured.server_cpu_us_per_request) == ("nginx-t1", 16, 4.0)
    assert measure_trial(record("poll", status="failed"), None).requests_per_sec is None


def test_records_from_before_cpu_utilisation_are_still_read() -> None:
    old_load = {"cpus": "1-2", "wall_s": 2.0, "cpu_user_s": 1.0, "cpu_sys_s": 2.0}
    assert load_cpu_utilisation(old_load) == 0.75
    assert load_cpu_utilisation({"cpus": "1"}) is None
    no_source = record("blocking")
    del no_source["server"]["cpu_source"]
    assert (
        measure_trial(no_source, {"total_requests": 2_000_000, "requests_per_sec": 1.0}).server_cpu_us_per_request
        == 1.0
    )


def test_variant_labels() -> None:
    assert variant_label({"architecture": "thread_pool", "threads": 1, "dispatch": "request", "handoff": "queue"}) == (
        "thread_pool-request-queue-t1"
    )
    assert variant_label({"architecture": "prefork", "threads": 1, "trigger": "level"}) == "prefork-level-t1"
    assert variant_label({"architecture": "thread_per_conn", "threads": None, "max_threads": 0}) == "thread_per_conn"


def test_report_of_a_stored_campaign(tmp_path: Path) -> None:
    campaign = tmp_path / "bench-x"
    campaign.mkdir()
    (campaign / "campaign.json").write_text(json.dumps({"campaign": "bench-x"}))
    wrk_output = (WRK_FIXTURES / next(p.name for p in WRK_FIXTURES.glob("*.wrk.txt"))).read_text()
    for index, (architecture, extra) in enumerate([("nginx", {"threads": 1}), ("epoll", {"trigger": "edge"})]):
        trial = f"t{index}-r01"
        rec = record(
            architecture, trial_id=trial, order_index=index, config=extra, load={"output_file": f"{trial}.wrk.txt"}
        )
        if architecture == "nginx":
            rec["server"] = {**rec["server"], "cpu_source": "stats", "stats": {"cpu_user_s": 1.0, "cpu_sys_s": 1.0}}
        (campaign / f"{trial}.json").write_text(json.dumps(rec))
        (campaign / f"{trial}.wrk.txt").write_text(wrk_output)
    warmup = record("poll", trial_id="t9-warmup", warmup=True, order_index=9)
    (campaign / "t9-warmup.json").write_text(json.dumps(warmup))
    report = bench_report(campaign)
    labels = [line.split()[0] for line in report.split("\n\n")[0].splitlines()[2:-1]]
    assert labels == ["epoll-edge", "nginx-t1"]  # the warm-up (poll) is not measured
    assert "(a) FAIL" in report  # same CPU as nginx: 1.0x


def test_default_campaign_name_is_new_per_run() -> None:
    name = default_bench_campaign(datetime(2026, 11, 21, 10, 0, 5, tzinfo=timezone.utc))
    assert name.startswith("bench-") and name.endswith("-20261121T100005Z")
