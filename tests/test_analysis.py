"""archbench.analyze.analysis on small synthetic raw campaigns built in a temporary directory,
and on the real fixture campaigns.

The load-generator files are in wrk 4.1's exact report format (as `wrk --latency`
prints it), so the real parser reads them; the numbers are chosen so every
expected value can be computed by hand (tests/fixtures/campaigns/synthetic.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from pathlib import Path

import pandas as pd
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)
from synthetic import CampaignWriter, config, config_id, wrk_report  # noqa: E402

from archbench.analyze import analysis
from archbench.analyze import trials as analyze_trials

CAMPAIGN = "synthetic"
FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
REPO = Path(__file__).resolve().parents[1]


POOL = config("thread_pool", 2, 10, dispatch="request")
BLOCKING = config("blocking", 1, 10)


@pytest.fixture
def campaign_dir(tmp_path: Path) -> Path:
    writer = CampaignWriter(tmp_path / "raw", CAMPAIGN)
    # Warm-up with an absurd rate: it must not leak into any statistic.
    writer.trial(POOL, None, wrk=wrk_report(999_999.0, 999_999, 10), served=10)
    writer.trial(POOL, 1, wrk=wrk_report(1000.0, 5000, 10), served=10)
    writer.trial(POOL, 2, wrk=wrk_report(1200.0, 5000, 10), served=10, cpu=(0.5, 0.5))
    writer.trial(POOL, 3, status="failed")  # no wrk output at all
    writer.trial(POOL, 4, wrk=wrk_report(800.0, 4000, 10, timeouts=3, read_errors=1), served=10)
    writer.trial(BLOCKING, None, wrk=wrk_report(500.0, 500, 10), served=1)
    writer.trial(BLOCKING, 1, wrk=wrk_report(400.0, 2000, 10, timeouts=6), served=1)
    writer.trial(BLOCKING, 2, wrk=wrk_report(600.0, 2500, 10, non_2xx=2), served=3)
    writer.trial(BLOCKING, 3, wrk="wrk: connection refused\n")  # ok status, unparseable output
    writer.trial(BLOCKING, 4, write_record=False)  # planned, never run (interrupted campaign)
    return writer.finish()


def tree_digest(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        digest.update(str(path.relative_to(directory)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def processed(campaign_dir: Path, tmp_path: Path) -> analysis.ProcessedCampaign:
    return analysis.process_campaign(campaign_dir, tmp_path / "processed")


def summary_row(processed: analysis.ProcessedCampaign, cfg: dict) -> pd.Series:
    rows = processed.summary[processed.summary["config_id"] == config_id(cfg)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_trials_csv_keeps_every_record(processed):
    trials = pd.read_csv(processed.trials_csv)
    assert len(trials) == 9  # every record: 2 warm-ups, 6 measured (one failed), unparseable included
    assert trials["warmup"].sum() == 2
    failed = trials[trials["status"] == "failed"]
    assert list(failed["trial_id"]) == [config_id(POOL) + "-r03"]
    assert failed["failure_reason"].iloc[0] == "server did not print its ready line"
    for column in (
        "campaign",
        "trial_id",
        "config_id",
        "architecture",
        "threads",
        "connections",
        "repetition",
        "warmup",
        "status",
        "flags",
        "requests_per_sec",
        "total_requests",
        "latency_p99_s",
        "socket_errors_timeout",
        "non_2xx",
        "server_cpu_s",
        "server_cpu_us_per_request",
        "load_cpu_s",
        "load_cpu_utilisation",
        "server_cpus",
        "load_cpus",
    ):
        assert column in trials.columns, column


def test_statistics_exclude_warmup_and_failed_but_count_them(processed):
    row = summary_row(processed, POOL)
    assert row["n"] == 3  # r01, r02, r04; not the warm-up, not the failed r03
    assert row["n_failed"] == 1
    assert row["n_warmup"] == 1
    assert row["mean"] == pytest.approx(1000.0)
    assert row["sd"] == pytest.approx(200.0)
    assert row["median"] == 1000.0 and row["min"] == 800.0 and row["max"] == 1200.0
    # The rate interval: exp(mean(ln x) ± t(0.975, 2) · sd(ln x) / √3) over 800, 1000, 1200; never below zero.
    logs = [math.log(v) for v in (800.0, 1000.0, 1200.0)]
    centre, spread = sum(logs) / 3, statistics.stdev(logs)
    half = 4.30265273 * spread / math.sqrt(3)
    assert row["ci95_low"] == pytest.approx(math.exp(centre - half), rel=1e-6)
    assert row["ci95_high"] == pytest.approx(math.exp(centre + half), rel=1e-6)
    assert 0 < row["ci95_low"] < 800.0 and row["ci95_method"] == "log-t"


def test_flagged_trials_are_averaged_but_counted(processed):
    row = summary_row(processed, POOL)
    assert row["n_flagged"] == 1
    assert row["flags"] == "socket_errors"
    assert row["timeouts_mean"] == pytest.approx(1.0)  # (0 + 0 + 3) / 3
    trials = processed.trials.set_index("trial_id")
    assert bool(trials.loc[config_id(POOL) + "-r04", "flagged"])
    assert not bool(trials.loc[config_id(POOL) + "-r01", "flagged"])


def test_server_cpu_per_request(processed):
    trials = processed.trials.set_index("trial_id")
    # (0.3 + 0.2) s / 5000 requests = 100 µs; (0.5 + 0.5) s / 5000 = 200 µs; 0.5 s / 4000 = 125 µs.
    assert trials.loc[config_id(POOL) + "-r01", "server_cpu_us_per_request"] == pytest.approx(100.0)
    assert trials.loc[config_id(POOL) + "-r02", "server_cpu_us_per_request"] == pytest.approx(200.0)
    assert trials.loc[config_id(POOL) + "-r04", "server_cpu_us_per_request"] == pytest.approx(125.0)
    assert summary_row(processed, POOL)["server_cpu_us_per_request"] == pytest.approx((100 + 200 + 125) / 3)
    # wrk: 0.5 s of CPU over 1.0 s of wall time.
    assert trials.loc[config_id(POOL) + "-r01", "load_cpu_utilisation"] == pytest.approx(0.5)


def test_starved_connections_and_timeouts_of_a_blocking_server(processed):
    row = summary_row(processed, BLOCKING)
    trials = processed.trials.set_index("trial_id")
    assert trials.loc[config_id(BLOCKING) + "-r01", "starved_connections"] == 9  # 10 configured, 1 served
    assert trials.loc[config_id(BLOCKING) + "-r02", "starved_connections"] == 7
    # The ok trial with unparseable output is flagged and has no throughput; it counts, it is not averaged in.
    assert row["n"] == 2
    assert row["n_flagged"] == 3
    assert row["mean"] == pytest.approx(500.0)
    assert row["starved_connections_mean"] == pytest.approx((9 + 7) / 2)  # r03 has no server counters
    assert row["starved_connections_max"] == 9
    assert row["timeouts_mean"] == pytest.approx(3.0)  # (6 + 0) / 2, the unparsed trial has no count
    assert row["non_2xx_mean"] == pytest.approx(1.0)
    assert set(row["flags"].split(";")) == {"socket_errors", "non_2xx", analysis.FLAG_UNPARSED}


def test_unparseable_output_is_a_visible_row(processed):
    trial = processed.trials.set_index("trial_id").loc[config_id(BLOCKING) + "-r03"]
    assert trial["status"] == "ok"
    assert trial["flags"] == analysis.FLAG_UNPARSED
    assert isinstance(trial["parse_error"], str) and trial["parse_error"]
    assert math.isnan(trial["requests_per_sec"])


def test_planned_but_missing_trials_are_counted(processed):
    assert summary_row(processed, BLOCKING)["n_planned"] == 4
    assert summary_row(processed, BLOCKING)["n_missing"] == 1
    assert summary_row(processed, POOL)["n_missing"] == 0


def test_raw_campaign_is_never_written(campaign_dir, tmp_path):
    before = tree_digest(campaign_dir)
    analysis.process_campaign(campaign_dir, tmp_path / "processed")
    assert tree_digest(campaign_dir) == before
    with pytest.raises(ValueError, match="immutable"):
        analysis.process_campaign(campaign_dir, campaign_dir / "processed")


def test_summary_csv_round_trip(processed):
    summary = pd.read_csv(processed.summary_csv)
    expected = [
        "n",
        "n_flagged",
        "n_failed",
        "mean",
        "sd",
        "median",
        "min",
        "max",
        "ci95_low",
        "ci95_high",
        "server_cpu_us_per_request",
        "timeouts_mean",
        "starved_connections_mean",
    ]
    assert all(column in summary.columns for column in expected)
    # Sorted: blocking before thread_pool.
    assert list(summary["architecture"]) == ["blocking", "thread_pool"]


def test_series_group_the_swept_axis(tmp_path):
    writer = CampaignWriter(tmp_path / "raw", "series")
    for threads in (1, 2, 4):
        cfg = config("thread_pool", threads, 50, dispatch="request")
        for repetition in (1, 2):
            writer.trial(cfg, repetition, wrk=wrk_report(1000.0 * threads + repetition, 1000, 50), served=50)
    for connections in (1, 10):
        writer.trial(config("blocking", 1, connections), 1, wrk=wrk_report(100.0, 100, connections), served=1)
    processed = analysis.process_campaign(writer.finish(), tmp_path / "processed")
    pool = analysis.series_of(processed.summary, "threads")
    assert [s.label for s in pool] == ["thread pool, request dispatch, FIFO queue (50 connections)"]
    assert list(pool[0].rows["threads"]) == [1, 2, 4]
    by_connections = analysis.series_of(processed.summary, "connections")
    assert [s.label for s in by_connections] == ["blocking"]
    assert list(by_connections[0].rows["connections"]) == [1, 10]


def test_extra_config_fields_reach_the_summary(tmp_path):
    writer = CampaignWriter(tmp_path / "raw", "extras")
    capped = {**config("thread_per_conn", 1, 10), "max_threads": 5}
    writer.trial(capped, 1, wrk=wrk_report(100.0, 100, 10), served=5)
    processed = analysis.process_campaign(writer.finish(), tmp_path / "processed")
    assert processed.summary.loc[0, "max_threads"] == 5
    assert processed.summary.loc[0, "starved_connections_mean"] == 5


# --------------------------------------------------------------------------- architecture comparison


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> analysis.ProcessedCampaign:
    root = tmp_path_factory.mktemp("raw")
    campaign_dir = synthetic.write_comparison_campaign(root)
    return analysis.process_campaign(campaign_dir, root.parent / "processed-comparison")


def row_of(processed: analysis.ProcessedCampaign, cfg: dict) -> pd.Series:
    rows = processed.summary[processed.summary["config_id"] == config_id(cfg)]
    assert len(rows) == 1, config_id(cfg)
    return rows.iloc[0]


def trial_of(processed: analysis.ProcessedCampaign, cfg: dict, repetition: int) -> pd.Series:
    return processed.trials.set_index("trial_id").loc[f"{config_id(cfg)}-r{repetition:02d}"]


def test_records_without_pipeline_are_depth_one(comparison):
    trials = pd.read_csv(comparison.trials_csv)
    assert "pipeline" not in synthetic.EPOLL_D1  # the record predates pipelining
    assert set(trials["pipeline"]) == {1, 16}
    assert row_of(comparison, synthetic.EPOLL_D1)["pipeline"] == 1
    assert row_of(comparison, synthetic.EPOLL_D16)["pipeline"] == 16


def test_load_utilisation_from_the_cpu_list_and_client_bound(comparison):
    # No recorded utilisation: (2.0 + 0.95) s of CPU / 1.0 s wall / 3 CPUs ("1-3").
    trial = trial_of(comparison, synthetic.EPOLL_D1, 1)
    assert trial["load_cpu_count"] == 3
    assert trial["load_cpu_utilisation"] == pytest.approx(2.95 / 3)
    assert bool(trial["client_bound"])
    row = row_of(comparison, synthetic.EPOLL_D1)
    assert row["n_client_bound"] == 2 and row["n"] == 2
    # A recorded utilisation is used as is; 0.97 >= 0.95 is client-bound, 0.9 is not.
    assert trial_of(comparison, synthetic.PREFORK_D16, 1)["load_cpu_utilisation"] == pytest.approx(0.97)
    assert bool(trial_of(comparison, synthetic.PREFORK_D16, 1)["client_bound"])
    assert not bool(trial_of(comparison, synthetic.PREFORK_D16, 2)["client_bound"])
    assert row_of(comparison, synthetic.PREFORK_D16)["n_client_bound"] == 1
    assert row_of(comparison, synthetic.PREFORK_D16)["load_cpu_utilisation_mean"] == pytest.approx(0.935)
    assert row_of(comparison, synthetic.REACTOR_D16_T2)["n_client_bound"] == 0
    # The column is in trials.csv, as booleans.
    assert set(pd.read_csv(comparison.trials_csv)["client_bound"].dropna()) <= {True, False}


def test_threshold_is_inclusive():
    assert analysis.CLIENT_BOUND_THRESHOLD == 0.95
    assert analysis.load_cpu_utilisation({"cpu_utilisation": 0.95}) == 0.95
    assert analysis.load_cpu_utilisation({"cpu_user_s": 1.0, "cpu_sys_s": 0.9, "wall_s": 1.0, "cpus": "1,2"}) == 0.95
    assert math.isnan(analysis.load_cpu_utilisation({"cpu_user_s": None, "cpu_sys_s": 0.1, "wall_s": 1.0}))


def test_nginx_cpu_is_its_own_and_its_unknown_counters_stay_unknown(comparison):
    trial = trial_of(comparison, synthetic.NGINX_D1, 1)
    # cpu_source "nginx-alone": server.stats' 0.3 + 0.2 s, not the tree's 9 + 1 s.
    assert trial["server_cpu_source"] == analysis.CPU_SOURCE_STATS
    assert trial["server_cpu_s"] == pytest.approx(0.5)
    assert trial["server_cpu_us_per_request"] == pytest.approx(0.5e6 / 45_000)
    for column in (
        "connections_served",
        "starved_connections",
        "bad_requests",
        "connection_resets",
        "connections_accepted",
        "requests_served",
        "server_errors",
    ):
        assert math.isnan(trial[column]), column  # null: not measured, never 0
    assert trial["response_bytes"] == synthetic.NGINX_RESPONSE_BYTES
    row = row_of(comparison, synthetic.NGINX_D1)
    assert math.isnan(row["starved_connections_mean"])
    assert row["server_cpu_source"] == analysis.CPU_SOURCE_STATS
    assert row["response_bytes"] == synthetic.NGINX_RESPONSE_BYTES
    # Our servers keep the tree's numbers and report what they served.
    ours = trial_of(comparison, synthetic.BLOCKING_D1, 1)
    assert ours["server_cpu_source"] == analysis.CPU_SOURCE_TREE
    assert ours["starved_connections"] == 99


@pytest.mark.parametrize(
    ("cpu_source", "expected", "seconds"),
    [
        ("nginx-alone", "stats", 0.5),
        ("stats", "stats", 0.5),
        ("server.stats", "stats", 0.5),
        ("nginx", "stats", 0.5),
        ("launcher tree", "tree", 10.0),
        ("tree", "tree", 10.0),
        ("launcher tree (nginx master and workers)", "tree", 10.0),
        (None, "tree", 10.0),
    ],
)
def test_cpu_source_selects_the_numbers(cpu_source, expected, seconds):
    server = {"cpu_user_s": 9.0, "cpu_sys_s": 1.0, "stats": {"cpu_user_s": 0.3, "cpu_sys_s": 0.2}}
    if cpu_source is not None:
        server["cpu_source"] = cpu_source
    assert analysis.server_cpu_seconds(server) == (pytest.approx(seconds), expected)
    # Without tree numbers, the server's own are the only ones there are.
    assert analysis.server_cpu_seconds({"stats": {"cpu_user_s": 0.3, "cpu_sys_s": 0.2}}) == (
        pytest.approx(0.5),
        "stats",
    )


def test_unsupported_trials_are_counted_never_failed(comparison):
    row = row_of(comparison, synthetic.IO_URING_D1)
    assert row["n_unsupported"] == 2 and row["n_failed"] == 0 and row["n"] == 0 and row["n_measured"] == 2
    assert math.isnan(row["mean"])
    trials = pd.read_csv(comparison.trials_csv)
    unsupported = trials[trials["status"] == "unsupported"]
    assert len(unsupported) == 2
    assert unsupported["failure_reason"].str.contains("unsupported feature").all()
    assert (unsupported["flags"].fillna("") == "").all()  # not flagged as unparsed either


def test_variant_and_family_labels(comparison):
    labels = dict(zip(comparison.summary["config_id"], comparison.summary["variant"], strict=True))
    assert labels[config_id(synthetic.EPOLL_D1)] == "epoll (edge)"
    assert labels[config_id(synthetic.REACTOR_D16_T2)] == "reactor, 2 threads"
    assert labels[config_id(synthetic.REACTOR_D16_T1)] == "reactor, 1 thread"
    assert labels[config_id(synthetic.PREFORK_D16)] == "prefork, 2 workers"
    assert labels[config_id(synthetic.NGINX_D1)] == "nginx, 1 worker"
    assert labels[config_id(synthetic.NGINX_D16_T2)] == "nginx, 2 workers"
    assert labels[config_id(synthetic.IO_URING_D1)] == "io_uring, 1 thread"
    assert labels[config_id(synthetic.BLOCKING_D1)] == "blocking"
    families = dict(zip(comparison.summary["config_id"], comparison.summary["family"], strict=True))
    assert families[config_id(synthetic.REACTOR_D16_T2)] == "reactor"
    # The trigger of a loop other than epoll is named only when the campaign measured both.
    frame = pd.DataFrame(
        [
            {"architecture": "reactor", "trigger": "edge", "threads": 2},
            {"architecture": "reactor", "trigger": "level", "threads": 2},
        ]
    )
    assert analysis.Labeller(frame).variant(frame.iloc[1]) == "reactor (level), 2 threads"
    pool = {"architecture": "thread_pool", "dispatch": "request", "handoff": "queue", "threads": 4}
    assert analysis.Labeller(pd.DataFrame([pool])).variant(pool) == "thread pool (request, queue), 4 threads"


def test_summary_has_the_comparison_columns(comparison):
    summary = pd.read_csv(comparison.summary_csv)
    for column in (
        "variant",
        "family",
        "pipeline",
        "latency_p50_s_mean",
        "latency_p90_s_mean",
        "latency_p99_s_mean",
        "server_cpu_us_per_request",
        "server_cpu_us_per_request_ci95_low",
        "server_cpu_us_per_request_ci95_high",
        "load_cpu_utilisation_mean",
        "load_busy_share_mean",
        "n_client_bound",
        "n_unsupported",
        "timeouts_mean",
        "errors_mean",
        "starved_connections_mean",
        "ratio_to_nginx",
        "nginx_reference",
        "response_bytes",
        "bytes_per_response_mean",
        "n_latency_invalid",
    ):
        assert column in summary.columns, column
    blocking = row_of(comparison, synthetic.BLOCKING_D1)
    assert blocking["timeouts_mean"] == 50 and blocking["errors_mean"] == 0
    assert blocking["latency_p90_s_mean"] == pytest.approx(120e-6)
    # Server CPU CI: 0.5 s over 900 and 1100 requests.
    values = [0.5e6 / 900, 0.5e6 / 1100]
    assert blocking["server_cpu_us_per_request"] == pytest.approx(sum(values) / 2)
    assert blocking["server_cpu_us_per_request_ci95_low"] < blocking["server_cpu_us_per_request"]
    # Canonical order: blocking ... io_uring, nginx last.
    order = list(dict.fromkeys(comparison.summary["architecture"]))
    assert order == ["blocking", "epoll", "reactor", "prefork", "io_uring", "nginx"]


def test_ratio_to_nginx_uses_the_fastest_nginx_at_the_same_depth_and_point(comparison):
    row = row_of(comparison, synthetic.REACTOR_D16_T2)
    assert row["nginx_reference"] == config_id(synthetic.NGINX_D16_T1)
    assert row["ratio_to_nginx"] == pytest.approx(605_000 / 102_000)
    assert row_of(comparison, synthetic.EPOLL_D1)["ratio_to_nginx"] == pytest.approx(51_000 / 45_250)
    # No nginx at 10 connections: no ratio.
    assert math.isnan(row_of(comparison, synthetic.EPOLL_D1_C10)["ratio_to_nginx"])


def test_impossible_latency_percentiles_are_not_latencies(comparison):
    bad = trial_of(comparison, synthetic.EPOLL_D16, 1)  # wrk printed "99%    0.00us"
    assert math.isnan(bad["latency_p99_s"]) and bad["latency_invalid_percentiles"] == "99"
    assert bad["latency_p50_s"] == pytest.approx(100e-6)
    row = row_of(comparison, synthetic.EPOLL_D16)
    assert row["n_latency_invalid"] == 1
    assert row["latency_p99_s_mean"] == pytest.approx(300e-6)  # the other trial only
    valid, invalid = analyze_trials._checked_percentiles({"50": 2e-4, "75": 1e-4, "90": 3e-4}, 1e-3)
    assert invalid == ["75"] and set(valid) == {"50", "90"}


def test_comparison_per_depth(comparison):
    summary = comparison.summary
    one, sixteen = analysis.comparisons(summary)
    assert (one.pipeline, sixteen.pipeline) == (1, 16)
    assert one.connections == 100  # the point with the most families (and nginx), not 10
    assert list(one.rows["variant"]) == ["blocking", "epoll (edge)", "reactor, 2 threads", "io_uring, 1 thread"]
    assert one.reference["variant"] == "nginx, 1 worker"
    assert one.fastest()["variant"] == "epoll (edge)"
    # A family measured at several thread counts is represented by its fastest.
    assert list(sixteen.rows["variant"]) == ["epoll (edge)", "reactor, 2 threads", "prefork, 2 workers"]
    assert sixteen.reference["variant"] == "nginx, 1 worker"
    assert sixteen.fastest()["variant"] == "reactor, 2 threads"
    connections = analysis.family_sweeps(summary, one, "connections")
    assert [label for label, _ in connections] == ["epoll (edge)"]
    assert list(connections[0][1]["connections"]) == [10, 100]
    threads = analysis.family_sweeps(summary, sixteen, "threads", analysis.MULTI_LOOP_ARCHITECTURES)
    assert [label for label, _ in threads] == ["reactor", "nginx"]
    assert analysis.comparisons(summary.iloc[0:0]) == []


def test_response_length_is_computed_from_the_servers_format():
    expected = b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\nContent-Type: text/html\r\n\r\ntest"
    assert analysis.our_response_bytes("test") == len(expected) == 91
    assert analysis.our_response_bytes("hello") == 91 - 4 + 12 + 1 + 1  # longer body, length and type
    assert analysis.our_response_bytes("file:/x.html") is None
    # The same format string as the C servers build their response from.
    source = (REPO / "servers_c" / "core" / "responses.c").read_text()
    match = re.search(r'"(HTTP/1\.1 %s[^"]*)"', source)
    assert match, "format_response's format string not found in servers_c/core/responses.c"
    c_format = match[1].encode().decode("unicode_escape")
    python_format = analysis.OK_RESPONSE_FORMAT.replace("200 OK", "%s", 1).replace("keep-alive", "%s", 1)
    python_format = python_format.replace("{length}", "%zu").replace("{content_type}", "%s")
    assert c_format == python_format


def test_real_campaign_with_every_architecture(tmp_path):
    processed = analysis.process_campaign(FIXTURES / "fixture-architectures", tmp_path / "processed")
    summary = processed.summary
    assert set(summary["architecture"]) == {
        "blocking",
        "thread_per_conn",
        "thread_pool",
        "poll",
        "epoll",
        "reactor",
        "reuseport",
        "prefork",
        "io_uring",
        "nginx",
    }
    assert set(summary["pipeline"]) == {1, 16}
    nginx = summary[summary["architecture"] == "nginx"]
    recorded = {
        json.loads(path.read_text())["server"]["stats"]["response_bytes"]
        for path in (FIXTURES / "fixture-architectures").glob("nginx-*.json")
    }
    assert len(recorded) == 1
    nginx_bytes = recorded.pop()
    assert (nginx["response_bytes"] == nginx_bytes).all() and nginx["starved_connections_mean"].isna().all()
    assert (nginx["server_cpu_source"] == analysis.CPU_SOURCE_STATS).all()
    # wrk's own byte count per completed request agrees with both response lengths within its rounding.
    assert nginx["bytes_per_response_mean"].mean() == pytest.approx(nginx_bytes, abs=0.5)
    ours = summary[summary["architecture"] != "nginx"]
    assert ours["bytes_per_response_mean"].mean() == pytest.approx(91, abs=0.5)
    assert [c.pipeline for c in analysis.comparisons(summary)] == [1, 16]
