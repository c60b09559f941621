"""No fastest pool size where the load generator set the rate (the pool section's main pool-size finding and its
comparison with source 000): where it bounded half or more of the trials of the pool size with the highest mean, the
sentences say that it set the rate instead (archbench.analyze.client_bound). On fixture campaigns written as
raw trial records."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.analyze.summary import summary_frame
from archbench.analyze.trials import trials_frame
from archbench.data.storage import load_campaign
from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.studies.pool.facts import pool_findings

ROUNDS = (1, 2, 3, 4)
# The pool section's sentences these tests read (paper/templates/pool/sentences.tex.j2).
MAIN_POOL, SOURCE_COMPARISON = "main pool-size series", "comparison with source 000"
SATURATED, IDLE = 0.97, 0.5  # wrk's CPU utilisation: client-bound (>= 95 %) or not


def pool(threads: int) -> dict:
    return synthetic.config("thread_pool", threads, 100, dispatch="request")


def write_campaign(root: Path, name: str, series: list[tuple[dict, float, tuple[float, ...]]]) -> Path:
    """One trial per round for each (config, mean rate, wrk's CPU utilisation per round); rates vary by 1 % per
    round around the mean."""
    writer = synthetic.CampaignWriter(root, name)
    for cfg, rate, utilisations in series:
        for rep, utilisation in zip(ROUNDS, utilisations, strict=True):
            mean = rate * (1 + 0.01 * (rep - 2.5))
            writer.trial(
                cfg, rep, wrk=synthetic.wrk_report(mean, int(mean), 100), served=100, load_utilisation=utilisation
            )
    return writer.finish()


def macros_of(campaign_dir: Path) -> dict[str, str]:
    campaign = load_campaign(campaign_dir)
    summary = summary_frame(trials_frame(campaign), campaign.meta.get("plan") or [])
    macros, prose = MacroSet(), Prose()
    main_pool = pool_findings(macros, summary, prose)["main_pool"]
    sentences = {
        MAIN_POOL: prose.sentence("pool/sentences", "pool_series", main_pool),
        SOURCE_COMPARISON: prose.sentence("pool/sentences", "pool_source_comparison", main_pool),
    }
    return {**{name: macro.value for name, macro in macros.macros.items()}, **sentences}


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+", text) if s]


@pytest.fixture(scope="module")
def client_set(tmp_path_factory) -> dict[str, str]:
    # N = 4 has the highest mean, and wrk's CPU was saturated in 3 of its 4 trials (N = 2 in 2 of 4).
    root = tmp_path_factory.mktemp("client-set-raw")
    series = [
        (pool(1), 40_000.0, (IDLE,) * 4),
        (pool(2), 60_000.0, (SATURATED, SATURATED, IDLE, IDLE)),
        (pool(4), 62_000.0, (SATURATED, SATURATED, SATURATED, IDLE)),
        (synthetic.config("epoll", None, 100, trigger="level"), 50_000.0, (IDLE,) * 4),
    ]
    return macros_of(write_campaign(root, "synthetic-client-set", series))


@pytest.fixture(scope="module")
def server_set(tmp_path_factory) -> dict[str, str]:
    # The same pool sizes, wrk never saturated: N = 4 is fastest, its interval above N = 2's; pong beats every
    # correct server but is none.
    root = tmp_path_factory.mktemp("server-set-raw")
    series = [
        (pool(1), 40_000.0, (IDLE,) * 4),
        (pool(2), 50_000.0, (IDLE,) * 4),
        (pool(4), 62_000.0, (IDLE,) * 4),
        (synthetic.config("pong", 1, 100), 90_000.0, (IDLE,) * 4),
    ]
    return macros_of(write_campaign(root, "synthetic-server-set", series))


def test_a_client_set_pool_rate_names_no_fastest_pool_size(client_set) -> None:
    finding, comparison = client_set[MAIN_POOL], client_set[SOURCE_COMPARISON]
    assert "to 62,000\\,r/s at $N=4$ (source~000's count: 5 threads), the highest mean measured" in finding
    assert "wrk's CPU was at least 95\\,\\% busy in 3 of the 4 trials at $N=4$" in finding
    assert "(and in half or more of the trials at 2 of the 3 pool sizes)" in finding
    assert "the load generator, not the server, set that rate" in finding
    assert "these data do not say which pool size is fastest" in finding
    assert "runner-up" not in finding  # two rates the load generator set are not compared
    assert comparison.startswith("Our highest mean for the thread pool, request dispatch, FIFO queue")
    assert "is at $N=4$ (5 threads in source~000's count), but wrk's CPU" in comparison
    for text in (finding, comparison):
        assert not any("fastest" in s and "do not say" not in s for s in sentences(text)), text


def test_a_server_set_pool_rate_names_the_fastest_pool_size(server_set) -> None:
    finding, comparison = server_set[MAIN_POOL], server_set[SOURCE_COMPARISON]
    assert "to a maximum of 62,000\\,r/s at $N=4$" in finding
    assert "the largest pool measured has the highest mean" in finding
    assert "do not overlap, so the difference is larger than the trial-to-trial noise" in finding
    assert "load generator" not in finding + comparison
    assert comparison.startswith("Our fastest pool size is $N=4$ (5 threads in source~000's count) for the")


def test_overlapping_intervals_name_a_highest_mean_not_a_fastest_pool_size(tmp_path) -> None:
    series = [(pool(1), 40_000.0, (IDLE,) * 4), (pool(2), 61_500.0, (IDLE,) * 4), (pool(4), 62_000.0, (IDLE,) * 4)]
    macros = macros_of(write_campaign(tmp_path, "synthetic-overlap", series))
    comparison = macros[SOURCE_COMPARISON]
    assert "fastest" not in comparison
    assert "is at $N=4$ (5 threads in source~000's count), not separated from the runner-up $N=2$" in comparison
