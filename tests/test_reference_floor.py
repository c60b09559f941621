"""The architecture comparison's fastest server and pong, the reference floor (archbench.studies.architectures
.fastest and .floor): no server is named the fastest where the load generator bounded half or more of the trials of
the configuration with the highest mean, and pong is never called an upper bound, least of all where a correct server
served more than it. On summary frames, then on a fixture campaign built from raw trial records."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.analyze import analysis
from archbench.analyze.client_bound import client_set_rate
from archbench.render.prose import Prose
from archbench.studies import architectures, rules
from archbench.studies.architectures.fastest import fastest_by_depth, fastest_summary


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
        "n_client_bound": more.pop("n_client_bound", 0),
        "load_busy_share_mean": 0.5,  # the busy measure the client-bound rule reads (measure.load_bound)
        "mean": mean,
        "sd": mean * 0.01,
        "ci95_low": mean * 0.99,
        "ci95_high": mean * 1.01,
        "ratio_to_nginx": mean / 40000,
        "server_cpu_us_per_request": more.pop("cpu", 10.0),
        **more,
    }


def summary(epoll_mean: float, epoll_bound: int, with_pong: bool = True) -> pd.DataFrame:
    rows = [
        row("epoll", epoll_mean, "epoll-level-c100", trigger="level", n_client_bound=epoll_bound, cpu=6.0),
        row("poll", 42000, "poll-c100", cpu=7.0),
        row("nginx", 40000, "nginx-t1-c100", threads=1, cpu=8.0),
    ]
    if with_pong:
        rows.append(row("pong", 50000, "pong-t1-c100", threads=1, cpu=5.0))
    return pd.DataFrame(rows)


def sentences(frame: pd.DataFrame) -> tuple[str, str]:
    comparisons = analysis.comparisons(frame)
    labels = analysis.Labeller(frame)
    abstract = Prose().sentence("architectures/sentences", "fastest_summary", fastest_summary(comparisons, labels))
    return by_depth(fastest_by_depth(comparisons, labels)), abstract


def by_depth(facts: dict) -> str:
    """The section's sentence of the fastest server per depth (paper/templates/architectures/sentences.tex.j2)."""
    return Prose().sentence("architectures/sentences", "fastest_by_depth", facts)


# The architecture section's sentences that depend on the data: its facts and their macros in sentences.tex.j2.
SENTENCES = {
    "fastest": "fastest_by_depth",
    "fastest_summary": "fastest_summary",  # the abstract's (studies.architectures.fastest_summary)
    "nginx": "nginx",
    "response_bytes": "response_bytes",
    "unsupported": "unsupported",
    "poll_epoll": "poll_epoll",
    "source_one": "source_one",
    "architecture_cpu": "architecture_cpu",
}


def section_sentences(facts: dict) -> list[str]:
    """Every sentence of the architecture section that depends on the data, rendered from its facts."""
    prose = Prose()
    texts = [prose.sentence("architectures/sentences", macro, facts[fact]) for fact, macro in SENTENCES.items()]
    return [*texts, prose.sentence("architectures/baseline", "finding", facts["baseline"])]


def split_sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;])\s+", text) if s]


@pytest.mark.parametrize(("bound", "client_set"), [(0, False), (2, False), (3, True), (5, True)])
def test_half_the_trials_or_more_bounded_by_the_load_generator_is_its_rate(bound: int, client_set: bool) -> None:
    assert client_set_rate({"n": 5, "n_client_bound": bound}) is client_set
    assert client_set_rate({"n": 4, "n_client_bound": 2}) and not client_set_rate({"n": 0, "n_client_bound": 0})


def test_a_server_set_rate_names_the_fastest_and_pong_the_reference_floor() -> None:
    text, abstract = sentences(summary(45000, epoll_bound=2))
    assert "the fastest correct server is epoll (level), 45,000" in text
    assert "In 2 of its 5 trials wrk's CPU was at least 95\\,\\% busy, fewer than half" in text
    assert "runner-up, poll" in text  # the runner-up is a correct server too, never pong
    assert "pong, the reference floor (1 thread), served 50,000" in text
    assert "No correct server served more than pong; the highest correct mean was 0.90 times its rate" in text
    assert (
        "floor of what a server costs; the correct server with the lowest mean here, epoll (level), spent 1.20 times"
        in text
    )
    assert abstract.startswith("At pipeline depth 1 the fastest correct server was epoll (level) (45,000")
    assert "0.90 times the rate of pong, the reference floor" in abstract
    for one in (text, abstract):
        assert "upper bound" not in one


def test_a_client_set_rate_names_no_fastest_server() -> None:
    # epoll has the highest mean, but the load generator bounded 3 of its 5 trials: it beats pong, and ranks nothing.
    text, abstract = sentences(summary(60000, epoll_bound=3))
    assert "the load generator set the rate: in 3 of the 5 trials of epoll (level)" in text
    assert "do not say which server is fastest at this depth" in text
    assert "so no server is named the fastest there" in abstract
    for one in (text, abstract):
        assert not any("epoll" in s and "fastest" in s for s in split_sentences(one)), one
        assert "upper bound" not in one
    # pong was beaten by a correct server: what that means is said, and pong bounds nothing.
    assert "1 of the 3 correct servers served more than pong (epoll (level) 1.20 times its rate" in text
    assert "the load generator or noise set it, and pong's rate bounds nothing at this depth" in text


def test_a_server_set_rate_above_pongs_says_who_set_the_difference() -> None:
    text, abstract = sentences(summary(55000, epoll_bound=0))
    assert "the fastest correct server is epoll (level), 55,000" in text
    assert "1 of the 3 correct servers served more than pong" in text
    assert "1.10 times the rate of pong, the reference floor that parses nothing: a difference the load generator" in (
        abstract
    )
    assert "upper bound" not in text + abstract


def test_without_pong_the_fastest_server_is_no_bound_either() -> None:
    text, abstract = sentences(summary(45000, epoll_bound=0, with_pong=False))
    assert "the fastest correct server is epoll (level)" in text and "pong" not in text
    assert "the server, not the load generator, set this rate" in text
    assert abstract.startswith("At pipeline depth 1 the fastest correct server was epoll (level)")
    assert "upper bound" not in text + abstract


# --------------------------------------------------------------------------- a fixture campaign, end to end

CAMPAIGN = "synthetic-reference-floor"
POLL_D1 = synthetic.config("poll", None, 100)
EPOLL_D1 = synthetic.config("epoll", None, 100, trigger="level")
NGINX_D1 = synthetic.config("nginx", 1, 100)
PONG_D1 = synthetic.config("pong", 1, 100)
EPOLL_D16 = synthetic.config("epoll", None, 100, trigger="level", pipeline=16)
REACTOR_D16 = synthetic.config("reactor", 1, 100, trigger="level", pipeline=16)
PONG_D16 = synthetic.config("pong", 1, 100, pipeline=16)
ROUNDS = (1, 2, 3, 4, 5)
FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"


def write_campaign(root: Path) -> None:
    """Depth 1: poll has the highest mean, above pong's, and the load generator (wrk's CPU at 97 %) bounded 3 of its 5
    trials. Depth 16: epoll is the fastest correct server, bounded by its own CPUs in every trial, below pong."""
    w = synthetic.CampaignWriter(root, CAMPAIGN)
    series = (
        (POLL_D1, 60_000.0, (0.97, 0.97, 0.97, 0.6, 0.6)),
        (EPOLL_D1, 45_000.0, (0.6,) * 5),
        (NGINX_D1, 40_000.0, (0.5,) * 5),
        (PONG_D1, 50_000.0, (0.9,) * 5),
        (EPOLL_D16, 500_000.0, (0.7,) * 5),
        (REACTOR_D16, 450_000.0, (0.7,) * 5),
        (PONG_D16, 600_000.0, (0.8,) * 5),
    )
    for cfg, rate, utilisations in series:
        for rep, utilisation in zip(ROUNDS, utilisations, strict=True):
            mean = rate * (1 + 0.01 * (rep - 3))
            w.trial(cfg, rep, wrk=synthetic.wrk_report(mean, int(mean), 100), served=100, load_utilisation=utilisation)
    w.finish()


@pytest.fixture(scope="module")
def floor_report(tmp_path_factory, shared_reports):
    root = tmp_path_factory.mktemp("reference-floor-raw")
    write_campaign(root)
    outputs, paper = shared_reports.build(CAMPAIGN, root)
    return outputs, paper


def test_the_fixture_campaign_names_no_fastest_client_set_server(floor_report) -> None:
    outputs, _ = floor_report
    study = outputs.studies["architectures"]
    finding = by_depth(study.section["fastest"])
    abstract = Prose().sentence("architectures/sentences", "fastest_summary", study.section["fastest_summary"])
    baseline = section_sentences(study.section)[-1]
    assert "At pipeline depth 1 (100 connections) the load generator set the rate: in 3 of the 5 trials of poll" in (
        finding
    )
    assert "the fastest correct server is epoll (level), 500,000" in finding
    assert abstract.startswith("At pipeline depth 1 the load generator set the rate")
    assert "at pipeline depth 16 the fastest correct server was epoll (level)" in abstract
    for text in (finding, abstract, baseline):
        assert not any("poll" in s.replace("epoll", "") and "fastest" in s for s in split_sentences(text)), text


def test_the_fixture_campaign_never_calls_pong_an_upper_bound(floor_report) -> None:
    outputs, paper = floor_report
    generated = paper / "generated"
    texts = [m.value for name in ("architectures", "statistics") for m in outputs.studies[name].macros.macros.values()]
    texts += section_sentences(outputs.studies["architectures"].section)
    texts += [(generated / architectures.TABLES_FILE).read_text(), (generated / "table-paired.tex").read_text()]
    finding = next(t for t in texts if "served more than pong" in t)  # a correct server beat pong at depth 1
    assert "poll 1.20 times its rate" in finding
    assert all("upper bound" not in text for text in texts)
    assert "pong (reference floor) &" in (generated / architectures.TABLES_FILE).read_text()


def rule_11(paper: Path) -> str:
    table = (paper / "generated" / rules.RULES_TABLE_FILE).read_text()
    return next(line for line in table.splitlines() if line.startswith("11 & "))


def test_rule_11_names_no_bound_and_pong_the_reference_floor(floor_report, shared_reports) -> None:
    _, paper = floor_report
    row = rule_11(paper)
    assert "No upper bound is derived, analytical or measured" in row
    assert "named only where wrk bounded fewer than half of its trials" in row
    assert "pong, which source~002 calls its upper bound, is measured beside the servers as the reference floor" in row
    assert "measured upper bounds" not in row and "serve as" not in row
    # Without pong in the campaign the rule says nothing of it.
    _, without = shared_reports.build("fixture-architectures", FIXTURES)
    row = rule_11(without)
    assert "No upper bound is derived" in row and "pong" not in row
