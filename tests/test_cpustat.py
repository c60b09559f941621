"""archbench.measure.cpustat on /proc/stat snapshots (tests/fixtures/procstat/) and on this machine's."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from archbench.config.params import resolve_parameters
from archbench.data.records import TrialRecord
from archbench.measure.cpustat import (
    FIELD_NAMES,
    busy_fraction,
    cpu_shares,
    parse_proc_stat,
    read_cpu_times,
    read_proc_stat,
    set_shares,
    tick_shares,
)
from archbench.measure.runner import run_campaign

FIXTURES = Path(__file__).parent / "fixtures" / "procstat"


@pytest.fixture
def readings():
    before = read_proc_stat(FIXTURES / "vm-2cpu-before.txt")
    after = read_proc_stat(FIXTURES / "vm-2cpu-after.txt")
    assert before is not None and after is not None
    return before, after


def test_parse_keeps_the_aggregate_and_each_cpu(readings) -> None:
    before, _ = readings
    assert before.machine == (1000, 0, 500, 8000, 100, 10, 200, 50)
    assert sorted(before.per_cpu) == [0, 1]
    assert before.per_cpu[1] == (500, 0, 250, 4000, 50, 5, 100, 25)


def test_machine_shares_from_the_aggregate_line(readings) -> None:
    before, after = readings
    shares = tick_shares(before.machine, after.machine)
    assert shares == {"ticks": 400, "iowait": 0.01, "irq": 0.005, "softirq": 0.09, "steal": 0.02}


def test_cpu_set_shares_sum_the_set(readings) -> None:
    before, after = readings
    assert set_shares(before, after, [0]) == {"ticks": 200, "iowait": 0.0, "irq": 0.01, "softirq": 0.15, "steal": 0.04}
    assert set_shares(before, after, [1]) == {"ticks": 200, "iowait": 0.02, "irq": 0.0, "softirq": 0.03, "steal": 0.0}
    # Both CPUs together are the machine.
    assert set_shares(before, after, [0, 1]) == tick_shares(before.machine, after.machine)
    assert set_shares(before, after, [2]) is None and set_shares(before, after, []) is None


def test_record_object(readings) -> None:
    before, after = readings
    record = cpu_shares(before, after, server_cpus=[0], load_cpus=[1])
    assert record is not None
    assert set(record) == {"machine", "server_cpus", "load_cpus"}
    assert record["server_cpus"]["steal"] == 0.04 and record["load_cpus"]["iowait"] == 0.02
    assert cpu_shares(None, after, [0], [1]) is None and cpu_shares(before, None, [0], [1]) is None


def test_no_elapsed_ticks_or_counters_going_back_is_unknown(readings) -> None:
    before, after = readings
    assert tick_shares(before.machine, before.machine) is None
    assert tick_shares(after.machine, before.machine) is None


def test_old_kernel_lines_are_padded() -> None:
    reading = read_proc_stat(FIXTURES / "old-kernel-4-fields.txt")
    assert reading is not None and reading.machine == (100, 0, 50, 850, 0, 0, 0, 0)
    assert reading.cpu_times() == {0: (150, 1000)}


def test_unreadable_or_foreign_text(tmp_path: Path) -> None:
    assert read_proc_stat(tmp_path / "missing") is None
    assert parse_proc_stat("intr 1\nctxt 2\n") is None
    garbage = tmp_path / "stat"
    garbage.write_text("cpu  1 x 3\n")
    assert read_proc_stat(garbage) is None


def test_busy_fraction_unchanged_over_the_new_reader(readings) -> None:
    before, after = readings
    # CPU 0: 200 ticks, 180 not idle (20 idle, 0 iowait); CPU 1: 66 busy of 200.
    assert busy_fraction(before.cpu_times(), after.cpu_times(), [0]) == 0.9
    assert busy_fraction(before.cpu_times(), after.cpu_times(), [0, 1]) == round(246 / 400, 4)
    assert read_cpu_times(FIXTURES / "vm-2cpu-before.txt") == before.cpu_times()


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="Linux only")
def test_this_machine() -> None:
    before = read_proc_stat()
    time.sleep(0.05)
    deadline = time.monotonic() + 2
    after = read_proc_stat()
    while after is not None and before is not None and after.machine == before.machine and time.monotonic() < deadline:
        time.sleep(0.02)
        after = read_proc_stat()
    record = cpu_shares(before, after, server_cpus=[0], load_cpus=sorted(before.per_cpu) if before else [0])
    assert record is not None and record["machine"] is not None
    for name in ("iowait", "irq", "softirq", "steal"):
        assert 0.0 <= record["machine"][name] <= 1.0


def test_real_trial_records_cpu_shares(real_build_dir: Path, load_tools, cpu_pair, tmp_path: Path) -> None:
    """One 1-s epoll trial on loopback: its record has the machine's and both CPU sets' shares, and validates."""
    server_cpus, load_cpus = cpu_pair
    params = resolve_parameters(
        "smoke",
        servers=["epoll"],
        connection_counts=[16],
        pipeline_depths=[1],
        duration_s=1,
        trials=1,
        warmup=False,
        server_cpus=server_cpus,
        load_cpus=load_cpus,
        build_dir=str(real_build_dir),
        raw_root=str(tmp_path),
        campaign="noise",
        seed=3,
        max_reruns=0,  # one record to read, whatever else this machine runs meanwhile
    )
    result = run_campaign(params, stream=io.StringIO())
    assert dict(result.statuses) == {"ok": 1}
    (path,) = (tmp_path / "noise").glob("*-r01.json")
    record = json.loads(path.read_text())
    TrialRecord.model_validate(record)
    shares = record["cpu_shares"]
    # About 100 ticks per CPU and second: the load ran for about one second on each single-CPU set.
    assert 50 <= shares["server_cpus"]["ticks"] <= 400 and 50 <= shares["load_cpus"]["ticks"] <= 400
    # The machine spans both sets, but not tick for tick: /proc/stat's "cpu" line converts each field's nanosecond
    # sum over the CPUs to ticks, each "cpuN" line its own, so one reading's lines differ by up to a tick per field
    # and CPU (and idle time moves between the kernel's two passes); the trial's two readings, that much either way.
    rounding = len(FIELD_NAMES) * 2  # two CPUs: one in each set
    assert shares["machine"]["ticks"] >= shares["server_cpus"]["ticks"] + shares["load_cpus"]["ticks"] - rounding
    for part in ("machine", "server_cpus", "load_cpus"):
        assert all(0.0 <= shares[part][name] <= 1.0 for name in ("iowait", "irq", "softirq", "steal"))
    # Loopback TCP runs in softirq context on both sides: some of it always shows.
    assert shares["machine"]["softirq"] > 0
