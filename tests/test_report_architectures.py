"""The architecture comparison's sentences against nginx: each server is counted faster, slower or not separated by
its planned comparison against nginx (the verdict of the planned comparisons' table), never by interval overlap."""

from __future__ import annotations

import pandas as pd

from archbench.analyze.planned_comparisons import VERDICT_NOT_RUN, VERDICT_NOT_SIGNIFICANT, VERDICT_SIGNIFICANT
from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.studies.architectures.facts import architecture_findings

PROSE = Prose()


def server(config_id: str, architecture: str, mean: float, half_width: float, **extra: object) -> dict[str, object]:
    return {
        "config_id": config_id,
        "architecture": architecture,
        "pipeline": 1,
        "connections": 100,
        "n": 4,
        "mean": mean,
        "sd": half_width,
        "ci95_low": mean - half_width,
        "ci95_high": mean + half_width,
        "ratio_to_nginx": mean / 1000.0,
        "server_cpu_us_per_request": 5.0,
        "timeouts_mean": 0.0,
        **extra,
    }


def summary() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # Its interval lies above nginx's, but its planned comparison is not significant after Holm.
            server("poll", "poll", 1100.0, 10.0),
            # Its interval lies below nginx's, and the planned comparison agrees.
            server("blocking", "blocking", 500.0, 10.0),
            # Its interval overlaps nginx's, but the paired test separates it.
            server("epoll", "epoll", 1005.0, 50.0, trigger="edge"),
            server("nginx", "nginx", 1000.0, 10.0),
        ]
    )


def planned(
    verdicts: dict[str, tuple[str, float]], mdd_pct: float = 45.3, client_set: frozenset[str] = frozenset()
) -> pd.DataFrame:
    """The family "nginx" of the planned comparisons, one row per server: its verdict, ratio, minimum detectable
    difference and whether it orders the pair (significant, and not named in `client_set`: the load generator set the
    lower rate)."""
    return pd.DataFrame(
        [
            {
                "family": "nginx",
                "config_a": a,
                "config_b": "nginx",
                "verdict": verdict,
                "ratio": ratio,
                "mdd_pct": mdd_pct,
                "ordered": verdict == VERDICT_SIGNIFICANT and a not in client_set,
            }
            for a, (verdict, ratio) in verdicts.items()
        ]
    )


def nginx_sentence(comparisons: pd.DataFrame | None) -> str:
    facts = architecture_findings(MacroSet(), summary(), PROSE, comparisons)
    return PROSE.sentence("architectures/sentences", "nginx", facts["nginx"])


def test_the_servers_against_nginx_are_counted_by_the_planned_comparisons_verdicts() -> None:
    sentence = nginx_sentence(
        planned(
            {
                "poll": (VERDICT_NOT_SIGNIFICANT, 1.1),
                "blocking": (VERDICT_SIGNIFICANT, 0.5),
                "epoll": (VERDICT_SIGNIFICANT, 1.005),
            }
        )
    )
    # Interval overlap would have said 1 faster (poll) and 1 slower; the planned comparisons say epoll, not poll.
    assert "By the planned comparisons against nginx" in sentence and "non-overlapping" not in sentence
    assert "1 of the 3 are faster than nginx and 1 slower; the other is not distinguishable from it" in sentence
    # ... with the minimum detectable difference of the test that said so, not another test's power.
    assert "beyond its minimum detectable difference, here 45\\,\\%" in sentence and "power" not in sentence
    unknown = planned({"poll": (VERDICT_NOT_SIGNIFICANT, 1.1)}, mdd_pct=float("nan"))
    assert "for 1 of them the minimum detectable difference is not known" in nginx_sentence(unknown)


def test_no_rest_is_mentioned_where_every_server_is_decided() -> None:
    sentence = nginx_sentence(
        planned(
            {
                "poll": (VERDICT_SIGNIFICANT, 1.1),
                "blocking": (VERDICT_SIGNIFICANT, 0.5),
                "epoll": (VERDICT_SIGNIFICANT, 1.005),
            }
        )
    )
    assert "2 of the 3 are faster than nginx and 1 slower." in sentence
    assert "the rest" not in sentence and "the other" not in sentence and "distinguishable" not in sentence


def test_a_missing_or_unrun_planned_comparison_is_said_not_replaced_by_intervals() -> None:
    sentence = nginx_sentence(planned({"poll": (VERDICT_NOT_RUN, 1.1), "blocking": (VERDICT_SIGNIFICANT, 0.5)}))
    assert "0 of the 3 are faster than nginx and 1 slower" in sentence
    assert "for 1 the planned comparison was not run (fewer than 3 rounds paired)" in sentence
    assert "for 1 no planned comparison with nginx was made" in sentence and "the rest" not in sentence
    none = nginx_sentence(None)
    assert "0 of the 3 are faster than nginx and 0 slower; for 3 no planned comparison with nginx was made" in none


def test_a_difference_whose_lower_rate_the_load_generator_set_is_counted_apart() -> None:
    verdicts = {"poll": (VERDICT_NOT_SIGNIFICANT, 1.1), "blocking": (VERDICT_SIGNIFICANT, 0.5)}
    sentence = nginx_sentence(planned(verdicts, client_set=frozenset({"blocking"})))
    assert (
        "0 of the 3 are faster than nginx and 0 slower (1 more differs, but the load generator set the lower rate)"
        in (sentence)
    )
    assert "0 of the 3 are faster than nginx and 1 slower" in nginx_sentence(planned(verdicts))
