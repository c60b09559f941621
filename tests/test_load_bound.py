"""One client-bound rule (archbench.measure.load_bound) for every place that asks whether the load generator set a
trial's rate: trials.csv and its bottleneck class, summary.csv's counts, the paired stopping rule, the selection's
rounds, and the echo and latency studies. Each reads the same two records, so a trial is client-bound in all of them
or in none."""

from __future__ import annotations

import json
import math

import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.analyze import analysis
from archbench.analyze.bottleneck import CLIENT, SERVER
from archbench.measure import load_bound
from archbench.measure.adaptive import round_measure
from archbench.measure.selection import point_rounds

EPOLL = synthetic.config("epoll", None, 100, trigger="level")
# (wrk's own CPU time over its CPUs' wall time, its pinned CPUs' busy share, client-bound)
CASES = (
    (0.90, 0.97, True),  # loopback softirq on wrk's CPUs: its own time is below the threshold, its CPUs are not
    (0.97, 0.50, True),
    (0.95, None, True),  # the threshold is inclusive; an older record has no busy share
    (0.90, 0.90, False),
    (0.50, None, False),
)


@pytest.mark.parametrize(("utilisation", "busy", "bound"), CASES)
def test_either_measure_at_the_threshold_is_client_bound(utilisation, busy, bound) -> None:
    load = {"cpu_utilisation": utilisation, "cpus_busy": busy}
    assert load_bound.client_bound(load) is bound
    assert load_bound.load_busy_share(load) == max(v for v in (utilisation, busy) if v is not None)


def test_an_older_record_is_judged_from_its_cpu_times() -> None:
    load = {"cpu_user_s": 1.0, "cpu_sys_s": 0.9, "wall_s": 1.0, "cpus": "1,2"}
    assert load_bound.load_cpu_utilisation(load) == pytest.approx(0.95)
    assert load_bound.client_bound(load)
    assert math.isnan(load_bound.load_busy_share({"cpu_user_s": None, "wall_s": 1.0}))
    assert not load_bound.client_bound({})


def test_every_consumer_applies_the_one_rule(tmp_path) -> None:
    writer = synthetic.CampaignWriter(tmp_path / "raw", "bound")
    for repetition, (utilisation, busy, _) in enumerate(CASES, start=1):
        writer.trial(
            EPOLL,
            repetition,
            wrk=synthetic.wrk_report(10_000.0, 10_000, 100),
            load_utilisation=utilisation,
            load_busy=busy,
            server_busy=0.5,  # the server had CPU to spare: the class is the client's or nobody's
        )
    campaign = writer.finish()
    expected = [bound for _, _, bound in CASES]

    trials = analysis.process_campaign(campaign, tmp_path / "processed").trials
    measured = trials[~trials["warmup"].astype(bool)].sort_values("repetition")
    assert measured["client_bound"].astype(bool).tolist() == expected
    assert [b == CLIENT for b in measured["bottleneck"]] == expected
    assert SERVER not in set(measured["bottleneck"])

    records = sorted(
        (json.loads(path.read_text()) for path in campaign.glob("*-r*.json")), key=lambda r: r["repetition"]
    )
    assert [round_measure(record, campaign).client_bound for record in records] == expected
    (point,) = point_rounds(records, campaign)
    assert point.client_bound[measured["config_id"].iloc[0]] == pytest.approx(sum(expected) / len(expected))
