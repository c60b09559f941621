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


def block(counts: list[tuple[int, int]], *, requests: int = 10, duration_us: int = 1_000_000, source: str = "ffi",
          total: int | None = None) -> str:  # fmt: skip
    total = sum(n for _, n in counts) if total is None else total
    low, high = (counts[0][0], counts[-1][0]) if counts else (0, 0)
    lines = [f"archbench-histogram 1 unit=us requests={requests} duration_us={duration_us} count={total} "
             f"min={low} max={high} source={source}", *(f"{v} {n}" for v, n in counts), "archbench-histogram-end"]  # fmt: skip
    return "\n".join(lines) + "\n"


def test_a_report_without_the_block_has_no_histogram() -> None:
    # Every campaign recorded before the dump: its output parses as before.
    assert "latency_histogram" not in parse(REPORT)


def test_the_block_after_the_report_is_parsed_and_the_rest_unchanged() -> None:
    record = parse(REPORT + block([(61, 3), (62, 17), (5062, 1)], requests=20, duration_us=2_004_133))
    assert record["latency_histogram"] == {
        "unit": "us", "requests": 20, "duration_us": 2_004_133, "count": 21, "source": "ffi",
        "counts": [[61, 3], [62, 17], [5062, 1]],
    }  # fmt: skip
    assert {k: v for k, v in record.items() if k != "latency_histogram"} == parse(REPORT)


def test_a_record_the_script_could_not_read_is_no_histogram() -> None:
    assert "latency_histogram" not in parse(REPORT + block([], source="none"))


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        (block([(5, 1)]).replace("archbench-histogram-end\n", ""), "without its 'archbench-histogram-end' line"),
        (block([(5, 1), (4, 1)]), "histogram values not ascending at 4"),
        (block([(5, 1)], total=2), "histogram lines add up to 1, header says 2"),
        (block([(5, 1)]).replace("5 1", "5 x"), "not a 'value count' histogram line"),
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
    histogram = {"requests": requests, "duration_us": duration_us, "counts": [[v, corrected[v]] for v in sorted(corrected)]}  # fmt: skip
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
