"""archbench.measure.interference on synthetic /proc/stat readings, on shipped records, and its parameters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archbench.config.params import ParameterError, resolve_parameters
from archbench.data.records import InterferenceRecord
from archbench.measure.cpustat import FIELD_NAMES, ProcStat
from archbench.measure.interference import (
    DERIVED,
    RECORDED,
    CpuSetUse,
    derived_interference,
    record_interference,
    trial_interference,
    user_hz,
)

RAW = Path(__file__).resolve().parent.parent / "data" / "raw"
MAX_SHARE = 0.10
START = {0: (1000, 0, 500, 8000, 0, 0, 100, 0), 1: (1000, 0, 500, 8000, 0, 0, 100, 0)}


def ticks(**fields: int) -> tuple[int, ...]:
    """A CPU's ticks over the interval, by /proc/stat field name (the rest 0)."""
    return tuple(fields.get(name, 0) for name in FIELD_NAMES)


def readings(server: tuple[int, ...], load: tuple[int, ...]) -> tuple[ProcStat, ProcStat]:
    """Two readings whose difference is `server` on CPU 0 and `load` on CPU 1."""
    after = {
        cpu: tuple(a + b for a, b in zip(START[cpu], elapsed, strict=True)) for cpu, elapsed in ((0, server), (1, load))
    }
    machine_before = tuple(map(sum, zip(*START.values(), strict=True)))
    machine_after = tuple(map(sum, zip(*after.values(), strict=True)))
    return ProcStat(machine_before, dict(START)), ProcStat(machine_after, after)


def judge(server: tuple[int, ...], load: tuple[int, ...], own_server_s: float | None, own_load_s: float | None):
    """The verdict over one second on 1 + 1 CPUs, at USER_HZ 100 (the seconds scaled to this machine's USER_HZ)."""
    scale = user_hz() / 100
    before, after = readings(tuple(round(t * scale) for t in server), tuple(round(t * scale) for t in load))
    uses = {
        "server_cpus": CpuSetUse((0,), own_server_s),
        "load_cpus": CpuSetUse((1,), own_load_s),
    }
    result = trial_interference(before, after, 1.0, uses, MAX_SHARE)
    assert result is not None
    InterferenceRecord.model_validate(result)
    return result


QUIET_LOAD = ticks(user=20, system=50, softirq=10, idle=20)


def test_quiet_trial_passes() -> None:
    result = judge(ticks(user=60, system=30, softirq=8, idle=2), QUIET_LOAD, 0.90, 0.70)
    server = result["server_cpus"]
    assert (server["expected_ticks"], server["ticks"], server["foreign_ticks"], server["missing_ticks"]) == (
        pytest.approx(100 * user_hz() / 100),
        pytest.approx(100 * user_hz() / 100),
        pytest.approx(0, abs=1),
        pytest.approx(0, abs=1),
    )
    assert server["taken_share"] < 0.02 and result["load_cpus"]["taken_share"] < 0.02
    assert result["disturbed"] is False and result["reasons"] == []
    assert result["max_share"] == MAX_SHARE and result["interval_s"] == 1.0


def test_foreign_work_on_the_server_cpu_disturbs() -> None:
    # A busy loop beside the server: the CPU is all busy, the server's own tree ran 55 of its 100 ticks.
    result = judge(ticks(user=95, system=5), QUIET_LOAD, 0.55, 0.70)
    assert result["server_cpus"]["foreign_ticks"] == pytest.approx(45 * user_hz() / 100, abs=1)
    assert result["disturbed"] is True
    (reason,) = result["reasons"]
    assert reason.startswith("server CPUs: 45 %") and "foreign 45 %" in reason


def test_steal_disturbs() -> None:
    result = judge(ticks(user=60, system=20, steal=15, idle=5), QUIET_LOAD, 0.80, 0.70)
    assert result["server_cpus"]["steal_ticks"] == pytest.approx(15 * user_hz() / 100, abs=1)
    assert result["disturbed"] and "steal 15 %" in result["reasons"][0]


def test_missing_ticks_on_a_saturated_set_disturb() -> None:
    # The server's CPU counted 85 ticks in a second, all busy and all its own: the vCPU was away for 15.
    result = judge(ticks(user=55, system=30), QUIET_LOAD, 0.85, 0.70)
    server = result["server_cpus"]
    assert server["saturated"] and server["missing_ticks"] == pytest.approx(15 * user_hz() / 100, abs=1)
    assert result["disturbed"] and "missing 15 %" in result["reasons"][0]


def test_missing_ticks_on_a_partly_idle_set_are_not_taken() -> None:
    # A partly idle CPU loses idle ticks in the kernel's accounting without anyone taking it.
    result = judge(ticks(user=20, system=20, idle=45), QUIET_LOAD, 0.40, 0.70)
    server = result["server_cpus"]
    assert not server["saturated"] and server["missing_ticks"] == pytest.approx(15 * user_hz() / 100, abs=1)
    assert server["taken_share"] < 0.02 and not result["disturbed"]


def test_own_softirq_is_not_foreign() -> None:
    # Loopback TCP: 40 of the server CPU's ticks in softirq, in nobody's rusage; the server's own 55 are the rest.
    result = judge(ticks(user=30, system=25, softirq=40, idle=5), QUIET_LOAD, 0.55, 0.70)
    server = result["server_cpus"]
    assert server["interrupt_ticks"] == pytest.approx(40 * user_hz() / 100, abs=1)
    assert server["foreign_ticks"] == pytest.approx(0, abs=1) and not result["disturbed"]


def test_rusage_with_interrupt_time_makes_foreign_negative_not_taken() -> None:
    # A process's rusage holds interrupt time that struck while it ran: it can exceed user + system ticks.
    result = judge(ticks(user=40, system=30, softirq=25, idle=5), QUIET_LOAD, 0.85, 0.70)
    assert result["server_cpus"]["foreign_ticks"] < -10 and result["server_cpus"]["taken_share"] == 0.0


def test_foreign_work_on_the_load_cpu_disturbs() -> None:
    result = judge(ticks(user=60, system=30, softirq=8, idle=2), ticks(user=70, system=30), 0.90, 0.45)
    assert result["disturbed"] and result["reasons"][0].startswith("load CPUs: 55 %")


def test_unknown_own_cpu_judges_the_rest() -> None:
    result = judge(ticks(user=60, system=20, steal=20), QUIET_LOAD, None, 0.70)
    assert result["server_cpus"]["foreign_ticks"] is None and result["server_cpus"]["own_ticks"] is None
    assert result["disturbed"] and "steal 20 %" in result["reasons"][0]


def test_without_readings_nothing_is_judged() -> None:
    before, after = readings(ticks(user=1), ticks(user=1))
    uses = {"server_cpus": CpuSetUse((5,), 0.0), "load_cpus": CpuSetUse((6,), 0.0)}  # CPUs the readings lack
    assert trial_interference(before, after, 1.0, uses, MAX_SHARE) is None
    assert trial_interference(None, after, 1.0, uses, MAX_SHARE) is None


def test_a_record_derives_what_the_runner_records() -> None:
    """A record written before `interference` gets the verdict its cpu_shares, busy fractions and CPU times give."""
    record = {
        "cpu_shares": {
            "server_cpus": {"ticks": 100, "iowait": 0.0, "irq": 0.0, "softirq": 0.08, "steal": 0.0},
            "load_cpus": {"ticks": 100, "iowait": 0.0, "irq": 0.0, "softirq": 0.1, "steal": 0.0},
        },
        "server": {"cpus": "0", "cpus_busy": 1.0, "load_cpu_s": 0.45},
        "load": {"cpus": "1", "cpus_busy": 0.8, "cpu_user_s": 0.2, "cpu_sys_s": 0.5, "wall_s": 1.0},
    }
    derived = derived_interference(record, MAX_SHARE)
    assert derived is not None and derived["disturbed"]
    assert derived["server_cpus"]["foreign_ticks"] == pytest.approx(47)  # 100 busy - 8 softirq - 45 own
    assert derived["load_cpus"]["foreign_ticks"] == pytest.approx(0)
    assert record_interference(record, MAX_SHARE)[1] == DERIVED
    assert record_interference({**record, "interference": derived}, MAX_SHARE) == (derived, RECORDED)
    assert record_interference({"cpu_shares": None, "load": {}}, MAX_SHARE) == (None, "")


def _shipped(campaign: str, trial_id: str) -> dict:
    path = RAW / campaign / f"{trial_id}.json"
    if not path.is_file():
        pytest.skip(f"{path} is not in this checkout")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "trial_id",
    [
        "poll-c64-lt1-d1s-w10-r05",
        "prefork-level-t1-c64-lt1-d1s-w10-r05",
        "reuseport-edge-t1-c64-lt1-d1s-w10-r05",
        "reactor-edge-t1-c64-lt1-d1s-w10-r04",
    ],
)
def test_the_shipped_outliers_are_disturbed_by_work_on_the_load_cpu(trial_id: str) -> None:
    """The work-10-us outliers of the sized workloads campaign (half the rate, bottleneck "neither"): other
    processes took about 40 % of the load generator's CPU; the server's missing ticks come with its idle time."""
    verdict, source = record_interference(_shipped("reference-workloads-sized", trial_id), MAX_SHARE)
    assert source == DERIVED and verdict is not None and verdict["disturbed"]
    assert verdict["load_cpus"]["foreign_ticks"] > 30 and verdict["reasons"][0].startswith("load CPUs")
    assert not verdict["server_cpus"]["saturated"]


def test_a_quiet_shipped_trial_passes() -> None:
    verdict, _ = record_interference(_shipped("reference-workloads-sized", "poll-c64-lt1-d1s-w10-r01"), MAX_SHARE)
    assert verdict is not None and not verdict["disturbed"]


def test_parameters_default_and_fail_fast() -> None:
    params = resolve_parameters("default", check_host=False)
    assert (params.interference_share, params.max_reruns) == (0.10, 2)
    assert params.to_dict()["interference_share"] == 0.10 and params.to_dict()["max_reruns"] == 2
    assert resolve_parameters("smoke", check_host=False).max_reruns == 0  # tests re-run nothing
    chosen = resolve_parameters("smoke", check_host=False, interference_share="0.2", max_reruns=1)
    assert (chosen.interference_share, chosen.max_reruns) == (0.2, 1)
    for value in (0, -0.1, 1, 1.5, "a tenth", True):
        with pytest.raises(ParameterError, match="^interference_share: "):
            resolve_parameters("smoke", check_host=False, interference_share=value)
    for value in (-1, 1.5, "two"):
        with pytest.raises(ParameterError, match="^max_reruns: "):
            resolve_parameters("smoke", check_host=False, max_reruns=value)
