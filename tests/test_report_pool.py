"""The pool study's sentences: request against connection dispatch only where the server set the rate, decided by
the planned comparison's verdict; CPU per request printed as the tables print it."""

from __future__ import annotations

import pandas as pd

from archbench.analyze.planned_comparisons import VERDICT_NOT_SIGNIFICANT, VERDICT_SIGNIFICANT
from archbench.report.formats import format_cpu_per_request
from archbench.report.prose import Prose
from archbench.report.studies.pool import facts
from archbench.report.studies.pool.tables import configurations_table

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


def dispatch_summary() -> pd.DataFrame:
    return pd.DataFrame(
        [
            pool_row("request", 2, 300.0, 0),
            pool_row("connection", 2, 100.0, 0),
            pool_row("request", 4, 330.0, 0),
            pool_row("connection", 4, 300.0, 0),
            # The load generator bounded 3 of the 4 trials of request dispatch at N=8: its rate, not the server's.
            pool_row("request", 8, 500.0, 3),
            pool_row("connection", 8, 400.0, 4),
        ]
    )


def dispatch_planned() -> pd.DataFrame:
    """The family "dispatch" of the planned comparisons: N=2 significant, N=4 not, N=8 significant."""
    verdicts = {2: (VERDICT_SIGNIFICANT, 3.0), 4: (VERDICT_NOT_SIGNIFICANT, 1.1), 8: (VERDICT_SIGNIFICANT, 1.25)}
    return pd.DataFrame(
        [
            {"family": "dispatch", "config_a": f"request-{n}", "config_b": f"connection-{n}", "verdict": v, "ratio": r}
            for n, (v, r) in verdicts.items()
        ]
    )


def test_dispatch_counts_only_server_set_pairs_by_their_planned_verdicts() -> None:
    found = facts.dispatch_comparison(dispatch_summary(), dispatch_planned())
    sentence = PROSE.sentence("pool/sentences", "dispatch", found)
    # The ratio of means is above 1 at every N; the old sentence said "faster ... in 3 of them".
    assert "in 3 of them" not in sentence
    assert (
        "(3 pairs)" in sentence and "in 1 of them, so the load generator, not the server, set that pair's" in sentence
    )
    assert "Where the server set the rate (2 pairs; ratio of means from 1.10 to 3.00)" in sentence
    assert (
        "find request dispatch faster than connection dispatch in 1 and slower in 0; 1 is not distinguishable"
        in sentence
    )


def test_dispatch_without_a_planned_comparison_says_so() -> None:
    sentence = PROSE.sentence("pool/sentences", "dispatch", facts.dispatch_comparison(dispatch_summary()))
    assert "for 2 no planned comparison was made, so these data do not say which is faster" in sentence
    client_set_everywhere = dispatch_summary().assign(n_client_bound=4)
    sentence = PROSE.sentence("pool/sentences", "dispatch", facts.dispatch_comparison(client_set_everywhere))
    assert "no pair is left where the server set the rate, so these data do not say which dispatch mode" in sentence


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
