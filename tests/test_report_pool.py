"""The pool study's sentences: request against connection dispatch decided by the planned comparison's verdict, a
significant pair ordering only where the load generator did not set the lower rate; CPU per request printed as the
tables print it."""

from __future__ import annotations

import pandas as pd

from archbench.analyze.planned_comparisons import (
    VERDICT_NOT_SIGNIFICANT,
    VERDICT_SIGNIFICANT,
    comparison_pairs,
    run_comparisons,
)
from archbench.render.formats import format_cpu_per_request
from archbench.render.prose import Prose
from archbench.studies.pool import facts
from archbench.studies.pool.tables import configurations_table

PROSE = Prose()


def pool_row(dispatch: str, threads: int, mean: float, client_bound: int, **extra: object) -> dict[str, object]:
    return {
        "config_id": f"{dispatch}-{threads}",
        "architecture": "thread_pool",
        "dispatch": dispatch,
        "handoff": "queue",
        "threads": threads,
        "connections": 100,
        "pipeline": 1,
        "n": 4,
        "n_client_bound": client_bound,
        "mean": mean,
        "starved_connections_mean": 0.0 if dispatch == "request" else 100.0 - threads,
        **extra,
    }


def dispatch_summary(connection_8_bound: int = 4) -> pd.DataFrame:
    return pd.DataFrame(
        [
            pool_row("request", 2, 300.0, 0),
            pool_row("connection", 2, 100.0, 0),
            pool_row("request", 4, 330.0, 0),
            pool_row("connection", 4, 300.0, 0),
            # The load generator bounded 3 of the 4 trials of request dispatch at N=8, whose rate is only a floor.
            pool_row("request", 8, 500.0, 3),
            pool_row("connection", 8, 400.0, connection_8_bound),
        ]
    )


# Four rounds per configuration: N=2 and N=8 far apart (significant), N=4 within the noise.
ROUND_NOISE = (1.0, 1.02, 0.98, 1.01)
ROUND_RATES = {
    "request-2": 300.0,
    "connection-2": 100.0,
    "request-4": 305.0,
    "connection-4": 300.0,
    "request-8": 500.0,
    "connection-8": 400.0,
}


def dispatch_planned(summary: pd.DataFrame) -> pd.DataFrame:
    """The family "dispatch" of the planned comparisons, run on rounds of ROUND_RATES with the summary's client-set
    sides (archbench.analyze.planned_comparisons decides `ordered`)."""
    trials = pd.DataFrame(
        [
            {"config_id": c, "repetition": r, "requests_per_sec": rate * noise, "status": "ok", "warmup": False}
            for shift, (c, rate) in enumerate(ROUND_RATES.items())
            for r, noise in enumerate(ROUND_NOISE[shift % 4 :] + ROUND_NOISE[: shift % 4], start=1)
        ]
    )
    return run_comparisons([p for p in comparison_pairs(summary) if p.family == "dispatch"], trials)


def test_a_significant_pair_orders_only_where_the_load_generator_did_not_set_the_lower_rate() -> None:
    summary = dispatch_summary()
    planned = dispatch_planned(summary)
    assert list(planned["verdict"]) == [VERDICT_SIGNIFICANT, VERDICT_NOT_SIGNIFICANT, VERDICT_SIGNIFICANT]
    # N=8: connection dispatch, the lower rate, was client-set, so its difference orders nothing.
    assert list(planned["ordered"]) == [True, False, False]
    sentence = PROSE.sentence("pool/sentences", "dispatch", facts.dispatch_comparison(summary, planned))
    assert "(3 pairs)" in sentence
    assert (
        "find request dispatch faster than connection dispatch in 1 and slower in 0 (ratio of means 3.00)" in sentence
    )
    assert "in 1 wrk's CPU was at least 95\\,\\% busy in half or more of the slower mode's trials" in sentence
    assert "1 is not distinguishable" in sentence
    # The higher side client-set only understates its lead: connection dispatch at N=8 server-set, the pair orders.
    unbound = dispatch_summary(connection_8_bound=0)
    sentence = PROSE.sentence(
        "pool/sentences", "dispatch", facts.dispatch_comparison(unbound, dispatch_planned(unbound))
    )
    assert "faster than connection dispatch in 2 and slower in 0 (ratio of means 1.25 to 3.00)" in sentence
    assert "orders nothing" not in sentence


def test_dispatch_without_a_planned_comparison_says_so() -> None:
    sentence = PROSE.sentence("pool/sentences", "dispatch", facts.dispatch_comparison(dispatch_summary()))
    assert "for 3 no planned comparison was made, so these data do not say which is faster" in sentence
    assert "ratio of means" not in sentence


def test_cpu_per_request_reads_the_same_in_the_sentence_and_the_tables() -> None:
    summary = dispatch_summary().assign(
        server_cpu_us_per_request=[0.449, 16.19, 8.6, 8.4, 6.7, 29.51], timeouts_mean=0.0
    )
    found = facts.cpu_cost_finding(summary, PROSE)
    assert (
        (found["cheapest"], found["dearest"])
        == ("0.45", "29.51")
        == (
            format_cpu_per_request(0.449),
            format_cpu_per_request(29.51),
        )
    )
    table = configurations_table(summary.assign(sd=1.0, n_flagged=0, n_failed=0), PROSE)
    assert "& 0.45 &" in table and "& 29.51 &" in table
