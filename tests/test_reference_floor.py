"""Source 002's upper bound (pong) in the architecture comparison: named as the bound, left out of every ranking."""

from __future__ import annotations

import pandas as pd

from archbench.analyze import analysis
from archbench.report.prose import Prose
from archbench.report.studies.architectures.facts import upper_bound_sentences, upper_bound_summary


def row(architecture: str, mean: float, config_id: str, **more: object) -> dict:
    return {
        "config_id": config_id,
        "architecture": architecture,
        "dispatch": None,
        "handoff": None,
        "trigger": more.pop("trigger", None),
        "max_threads": None,
        "threads": more.pop("threads", None),
        "connections": 100,
        "load_threads": 1,
        "duration_s": 1,
        "response": "test",
        "load_generator": "wrk",
        "pipeline": 1,
        "proto": "http",
        "n": 5,
        "n_unsupported": 0,
        "n_client_bound": 0,
        "load_cpu_utilisation_mean": 0.5,
        "mean": mean,
        "sd": mean * 0.01,
        "ci95_low": mean * 0.99,
        "ci95_high": mean * 1.01,
        "ratio_to_nginx": mean / 40000,
        **more,
    }


def summary(with_pong: bool) -> pd.DataFrame:
    rows = [
        row("epoll", 45000, "epoll-level-c100", trigger="level"),
        row("poll", 42000, "poll-c100"),
        row("nginx", 40000, "nginx-t1-c100", threads=1),
    ]
    if with_pong:
        rows.append(row("pong", 50000, "pong-t1-c100", threads=1))
    return pd.DataFrame(rows)


def test_pong_bounds_the_correct_servers_and_is_ranked_with_none_of_them() -> None:
    frame = summary(with_pong=True)
    comparisons = analysis.comparisons(frame)
    [one] = comparisons
    assert one.fastest()["architecture"] == "epoll"  # the fastest correct server, not pong
    assert one.upper_bound is not None and one.upper_bound["architecture"] == "pong"
    assert set(one.correct_rows["architecture"]) == {"epoll", "poll"}
    text = upper_bound_sentences(comparisons, analysis.Labeller(frame), Prose())
    assert "the fastest correct server is epoll" in text
    assert "0.90 times" in text  # 45,000 / 50,000
    assert "the rate of pong (upper bound) at 50,000" in text and "no correct server" in text
    assert "runner-up, poll" in text  # the runner-up is a correct server too
    summary_text = upper_bound_summary(comparisons, analysis.Labeller(frame), Prose())
    assert (
        summary_text.startswith("The fastest correct servers were epoll")
        and "0.90 times the rate of pong" in summary_text
    )


def test_without_pong_the_fastest_server_is_the_measured_upper_bound() -> None:
    frame = summary(with_pong=False)
    comparisons = analysis.comparisons(frame)
    assert comparisons[0].upper_bound is None
    text = upper_bound_sentences(comparisons, analysis.Labeller(frame), Prose())
    assert "the fastest server is epoll" in text and "measured upper bound" in text
    summary_text = upper_bound_summary(comparisons, analysis.Labeller(frame), Prose())
    assert summary_text.startswith("The fastest servers, our measured upper bounds, were")
