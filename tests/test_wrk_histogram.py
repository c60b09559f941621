"""wrk's latency histogram: the block archbench/config/lua/pipeline.lua appends to wrk's report, its parsing,
undoing wrk's coordinated-omission correction, adding several hosts' histograms, and a real wrk run on
loopback whose dump must be wrk's own record."""

from __future__ import annotations

import math
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from archbench.analyze.histogram import LatencyHistogram, bucket_of, lower_edge, upper_edge
from archbench.config.loadgen import load_generator
from archbench.parse import LoadOutputError
from archbench.parse.wrk import before_correction, parse

REPORT = (Path(__file__).parent / "fixtures" / "wrk" / "normal_latency.wrk.txt").read_text()
PIPELINE_LUA = Path(__file__).resolve().parents[1] / "archbench" / "config" / "lua" / "pipeline.lua"


def block(counts: list[tuple[int, int]], *, unit: str = "us", requests: int = 10, duration_us: int = 1_000_000,
          source: str = "ffi", total: int | None = None, low: int = 0, high: int = 0) -> str:  # fmt: skip
    """The script's block: lines of (step from the previous value, count)."""
    total = sum(n for _, n in counts) if total is None else total
    if unit == "us" and counts:
        low, high = counts[0][0], counts[-1][0]
    steps = [(v - (counts[i - 1][0] if i else 0), n) for i, (v, n) in enumerate(counts)]
    lines = [f"archbench-histogram 1 unit={unit} requests={requests} duration_us={duration_us} count={total} "
             f"min={low} max={high} source={source}", *(f"{d} {n}" for d, n in steps), "archbench-histogram-end"]  # fmt: skip
    return "\n".join(lines) + "\n"


def test_a_report_without_the_block_has_no_histogram() -> None:
    # Every campaign recorded before the dump: its output parses as before.
    assert "latency_histogram" not in parse(REPORT)


def test_the_block_after_the_report_is_parsed_and_the_rest_unchanged() -> None:
    text = block([(61, 3), (62, 17), (5062, 1)], requests=20, duration_us=2_004_133)
    assert "\n61 3\n1 17\n5000 1\n" in text  # what the script writes: steps, not values
    record = parse(REPORT + text)
    assert record["latency_histogram"] == {
        "unit": "us", "requests": 20, "duration_us": 2_004_133, "count": 21, "min_us": 61, "max_us": 5062,
        "source": "ffi", "counts": [[61, 3], [62, 17], [5062, 1]],
    }  # fmt: skip
    assert {k: v for k, v in record.items() if k != "latency_histogram"} == parse(REPORT)


def test_a_bucketed_block_keeps_bucket_indices_and_the_extremes() -> None:
    # 1 ms and 2.5 ms: buckets of histogram.py, the latencies themselves only as min and max.
    low, high = bucket_of(1_000_000), bucket_of(2_500_000)
    record = parse(REPORT + block([(low, 4), (high, 1)], unit="bucket10", low=1000, high=2500))
    histogram = record["latency_histogram"]
    assert (histogram["unit"], histogram["counts"], histogram["min_us"], histogram["max_us"]) == (
        "bucket10", [[low, 4], [high, 1]], 1000, 2500)  # fmt: skip
    h = LatencyHistogram.from_wrk(histogram)
    assert h.total == 5 and h.percentile(50) == upper_edge(low) and h.percentile(100) == 2_500_000
    with pytest.raises(ValueError, match="only at 1 us resolution"):
        before_correction(histogram, 1)


def test_a_record_the_script_could_not_read_is_no_histogram() -> None:
    assert "latency_histogram" not in parse(REPORT + block([], source="none"))


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        (block([(5, 1)]).replace("archbench-histogram-end\n", ""), "without its 'archbench-histogram-end' line"),
        (block([(5, 1), (5, 1)]), "histogram step 0"),
        (block([(5, 1)], total=2), "histogram lines add up to 1, header says 2"),
        (block([(5, 1)]).replace("5 1", "5 x"), "not a 'step count' histogram line"),
        (block([(5, 1)]).replace("5 1", "-5 1"), "not a 'step count' histogram line"),
        (block([(5, 1)]) + block([(5, 1)]), "a second histogram block"),
        (block([(5, 1)]).replace("unit=us", "unit=ms"), "not a histogram header"),
    ],
)
def test_malformed_blocks_fail_naming_the_problem(tail: str, message: str) -> None:
    with pytest.raises(LoadOutputError, match=message):
        parse(REPORT + tail)


def wrk_correct(data: dict[int, int], expected: int) -> dict[int, int]:
    """wrk 4.1's stats_correct (src/stats.c), transcribed: for n from 2E to the maximum, its count again at
    n - E, n - 2E, ... while above E."""
    corrected = dict(data)
    top = max(data)
    for n in range(expected * 2, top + 1):
        count = data.get(n, 0)
        m = n - expected
        while count and m > expected:
            corrected[m] = corrected.get(m, 0) + count
            m -= expected
    return corrected


def test_before_correction_undoes_wrks_correction() -> None:
    rng = random.Random(3)
    measured = {}
    for _ in range(5000):
        value = int(rng.lognormvariate(math.log(800), 0.8))
        measured[value] = measured.get(value, 0) + 1
    requests, connections, duration_us = 5000, 10, 1_000_000
    interval = duration_us // (requests // connections)  # 2000 us: values from 4000 us on are copied
    corrected = wrk_correct(measured, interval)
    assert sum(corrected.values()) > requests  # the correction did add samples
    histogram = {"unit": "us", "requests": requests, "duration_us": duration_us,
                 "counts": [[v, corrected[v]] for v in sorted(corrected)]}  # fmt: skip
    assert before_correction(histogram, connections) == [[v, measured[v]] for v in sorted(measured)]


def within_one_bucket(estimate_ns: float, true_ns: int) -> bool:
    i = bucket_of(true_ns)
    return true_ns <= estimate_ns <= true_ns + (upper_edge(i) - lower_edge(i))


def exact_percentile(samples_ns: list[int], q: float) -> int:
    ordered = sorted(samples_ns)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


# --------------------------------------------------------------------------- a real run


def wrk_percentile(counts: list[list[int]], p: float) -> int:
    """wrk 4.1's stats_percentile: rank round(p/100 * count + 0.5), C's round (halves away from zero)."""
    total = sum(n for _, n in counts)
    rank = math.floor(p / 100 * total + 0.5 + 0.5)
    seen = 0
    for value, n in counts:
        seen += n
        if seen >= rank:
            return value
    raise AssertionError("rank beyond the count")


@pytest.fixture
def loopback_server(tmp_path: Path) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "index.html").write_text("test")
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)")
def test_a_real_wrk_run_dumps_wrks_own_record(loopback_server: str) -> None:
    config = {"load_threads": 1, "connections": 4, "duration_s": 1}
    argv = load_generator("wrk").command(config, loopback_server, 2)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    record = parse(done.stdout)
    histogram = record["latency_histogram"]
    assert histogram is not None and histogram["source"] == "ffi", done.stdout[-500:]
    assert histogram["unit"] == "us"  # a light 1 s run: a few hundred distinct microseconds, kept exact
    assert histogram["requests"] == record["total_requests"] > 0
    # The dump is wrk's corrected record; undone, it counts every request (none near the 2 s timeout).
    assert sum(n for _, n in before_correction(histogram, 4)) == record["total_requests"]
    # wrk's percentile rule on the dump gives what wrk printed (2 decimals of us or ms).
    for p, printed in record["latency_s"]["percentiles"].items():
        assert wrk_percentile(histogram["counts"], float(p)) * 1e-6 == pytest.approx(printed, rel=0.005, abs=1e-8)
    assert histogram["counts"][-1][0] * 1e-6 == pytest.approx(record["latency_s"]["max"], rel=0.005)
    # The project's buckets hold it within one bucket of the exact sample.
    samples_ns = [v * 1000 for v, n in histogram["counts"] for _ in range(n)]
    buckets = LatencyHistogram.from_wrk(histogram)
    for q in (50, 90, 99, 99.9):
        assert within_one_bucket(buckets.percentile(q), exact_percentile(samples_ns, q)), q
    # What a trial adds to its .wrk.txt: one short line per distinct microsecond.
    assert len(done.stdout.split("archbench-histogram ", 1)[1]) < 20 * len(histogram["counts"]) + 200


THREAD_POOL = Path(__file__).resolve().parents[1] / "build" / "bin" / "thread_pool"


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)")
@pytest.mark.skipif(not THREAD_POOL.is_file(), reason="needs build/bin/thread_pool (make servers)")
def test_a_spread_out_run_is_dumped_in_buckets() -> None:
    # Exponential waits of 5 ms on average: thousands of distinct microseconds, so the script writes the
    # project's buckets, and their percentiles are wrk's within one bucket and wrk's print rounding.
    server = subprocess.Popen(
        [str(THREAD_POOL), "--threads", "32", "--block-us", "5000", "--block-dist", "exp", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        ready = server.stdout.readline()
        port = int(ready.rsplit(":", 1)[1].split()[0])
        config = {"load_threads": 1, "connections": 32, "duration_s": 1}
        argv = load_generator("wrk").command(config, f"http://127.0.0.1:{port}/", 2)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    finally:
        server.terminate()
        server.communicate(timeout=10)
    record = parse(done.stdout)
    histogram = record["latency_histogram"]
    assert histogram["unit"] == "bucket10" and histogram["source"] == "ffi", done.stdout[-300:]
    assert histogram["count"] >= histogram["requests"] == record["total_requests"] > 2048
    # The script's bucket_of is histogram.py's: its extremes' buckets are the first and last lines.
    assert histogram["counts"][0][0] == bucket_of(histogram["min_us"] * 1000)
    assert histogram["counts"][-1][0] == bucket_of(histogram["max_us"] * 1000)
    assert histogram["max_us"] * 1e-6 == pytest.approx(record["latency_s"]["max"], rel=0.005)
    # Under 10 bytes a line, and at most one line per bucket.
    block_text = done.stdout.split("archbench-histogram ", 1)[1]
    assert len(block_text) < 10 * len(histogram["counts"]) + 200 and len(histogram["counts"]) <= 28_672
    buckets = LatencyHistogram.from_wrk(histogram)
    for p, printed in record["latency_s"]["percentiles"].items():
        printed_ns = printed * 1e9
        i = bucket_of(int(printed_ns))
        slack = (upper_edge(i) - lower_edge(i)) + 0.005 * printed_ns
        assert printed_ns - slack <= buckets.percentile(float(p)) <= printed_ns + slack, p


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)")
def test_without_the_ffi_the_script_reads_the_same_record_through_wrks_api(
    loopback_server: str, tmp_path: Path
) -> None:
    # One run, dumped twice: through the FFI, then with the FFI made unavailable (wrk's latency(i)).
    script = tmp_path / "twice.lua"
    script.write_text(
        f"dofile({str(PIPELINE_LUA)!r})\n"
        "local dump = done\n"
        "function done(summary, latency, requests)\n"
        "   dump(summary, latency, requests)\n"
        '   package.loaded["ffi"] = nil\n'
        '   package.preload["ffi"] = function() error("ffi disabled for the test") end\n'
        "   dump(summary, latency, requests)\n"
        "end\n"
    )
    argv = ["wrk", "-t1", "-c2", "-d1s", "--latency", "--timeout", "2s", "-s", str(script), loopback_server]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    report, by_ffi, by_api = done.stdout.split("archbench-histogram ")[0:3]
    assert "source=ffi" in by_ffi and "source=api" in by_api
    assert by_ffi.replace("source=ffi", "") == by_api.replace("source=api", "")
    histogram = parse(report + "archbench-histogram " + by_api)["latency_histogram"]
    assert histogram["source"] == "api" and histogram["count"] >= histogram["requests"] > 0
