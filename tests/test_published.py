"""Published beside measured and the one-page summary: the agreement rules, the normalised curves, and the
generated section and table from synthetic campaigns (with every study present, and with none)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from archbench.analyze import published_compare as compare
from archbench.analyze.crossos import load_source000
from archbench.analyze.published import published_table
from archbench.config.paths import EXTERNAL_DIR, RAW_ROOT
from archbench.render.campaigns import MAIN, MAIN_REFERENCE
from archbench.render.common import StudySource
from archbench.render.prose import Prose
from archbench.render.study import Paper
from archbench.report.build import ReportPaths, build_report
from archbench.studies import STUDIES
from archbench.studies.sources import SOURCES
from archbench.studies.sources.data import SUMMARY_CSV, TRIALS_CSV, SourcesCampaign
from archbench.studies.sources.facts import load_threads_facts, published_outputs
from archbench.studies.summary.tables import INTRO, SUMMARY_FILE, reproduced_facts, summary_outputs

# --------------------------------------------------------------------------- the rules


UP, FLAT, DOWN = compare.Ratio(1.5, 1.2, 1.8), compare.Ratio(1.0, 0.9, 1.1), compare.Ratio(0.7, 0.6, 0.8)


@pytest.mark.parametrize(
    ("published", "ours", "verdict"),
    [
        (compare.Ratio(5.6, 5.4, 5.8), UP, compare.AGREE),  # the same way, published effect outside ours
        (compare.Ratio(5.6, 5.4, 5.8), FLAT, compare.DISAGREE),  # no effect here, the published one excluded
        (compare.Ratio(5.6, 5.4, 5.8), DOWN, compare.DISAGREE),
        (compare.Ratio(1.05), FLAT, compare.INCONCLUSIVE),  # ours covers both no effect and the published effect
        (compare.Ratio(1.6), compare.Ratio(1.3, 0.95, 1.9), compare.INCONCLUSIVE),
        (compare.Ratio(1.6), compare.Ratio(1.5, 1.1, 1.9), compare.AGREE),  # contains the published ratio, not 1
        (compare.Ratio(0.9), UP, compare.DISAGREE),  # opposite ways
        # A published range (source 003: 28-82 % over three hosts): reaching its low end while covering 1 is
        # inconclusive; staying below it while covering 1 disagrees.
        (compare.Ratio(1.55, 1.28, 1.82), compare.Ratio(1.14, 0.94, 1.38), compare.INCONCLUSIVE),
        (compare.Ratio(1.55, 1.28, 1.82), compare.Ratio(1.05, 0.94, 1.2), compare.DISAGREE),
        (compare.Ratio(1.55, 1.28, 1.82), compare.Ratio(1.3, 1.1, 1.4), compare.AGREE),
        # A published ratio without an interval counts at face value; ours without one decides nothing.
        (compare.Ratio(2.0), UP, compare.AGREE),
        (compare.Ratio(2.0), compare.Ratio(1.4), compare.INCONCLUSIVE),
        (compare.Ratio(2.0), None, compare.NOT_MEASURED),
    ],
)
def test_effect_rule(published, ours, verdict) -> None:
    assert compare.direction_verdict(published, ours) == verdict


@pytest.mark.parametrize(
    ("ours", "relation"),
    [
        (compare.Ratio(1.5, 1.3, 1.7), compare.INSIDE),
        (compare.Ratio(1.05, 0.94, 1.2), compare.OUTSIDE),
        # Source 003 on this machine: 1.14 (0.94-1.38) reaches into 1.28-1.82 without lying inside it.
        (compare.Ratio(1.14, 0.94, 1.38), compare.OVERLAPS),
        (compare.Ratio(1.5, 1.1, 2.0), compare.OVERLAPS),
        (compare.Ratio(1.4), None),
    ],
)
def test_our_interval_against_a_published_range_decides_the_sentence_and_the_verdict(ours, relation) -> None:
    published = compare.Ratio(1.55, 1.28, 1.82)
    assert compare.range_relation(published, ours) == relation
    assert ours.reaches(published) is (relation in (compare.INSIDE, compare.OVERLAPS))


def test_source_003_interval_overlapping_its_range_is_not_called_outside(trials, tmp_path: Path) -> None:
    # A gain of 1.14 whose wide interval covers 1 and reaches 1.28: inconclusive, and the sentence cannot call it
    # outside the range as the point estimate alone would.
    rows = [
        summary_row("thread_per_conn", None, c, m, response="hello", sd=m * 0.2) for c, m in ((32, 50000), (64, 57000))
    ]
    files, sources = build(pd.DataFrame(rows), trials, tmp_path)
    assert sources["003"].verdict == compare.INCONCLUSIVE
    text = " ".join(files["published-003.tex"].split())
    assert "outside" not in text
    assert "overlaps source~003's range of 1.28 to 1.82 without lying inside it" in text
    assert "cannot be told" in text


def pool(
    n: int | None,
    low: tuple[float, float],
    high: tuple[float, float],
    client_set: bool = False,
    starved: tuple[float, float] = (0.0, 0.0),
):
    """Source 003's ratio at one pool size from (mean, sd) at 32 and 64 connections, five trials each."""
    ratio = compare.summary_ratio(
        pd.Series({"mean": high[0], "sd": high[1], "n": 5}), pd.Series({"mean": low[0], "sd": low[1], "n": 5})
    )
    return compare.PoolRatio(n, ratio, client_set, starved)


@pytest.mark.parametrize(
    ("pools", "verdict"),
    [
        # Every pool size where the server set the rate agrees, or none is left, or one disagrees.
        ([pool(2, (40000, 800), (58000, 1100)), pool(8, (40000, 800), (60000, 1200))], compare.AGREE),
        ([pool(2, (40000, 800), (58000, 1100)), pool(8, (40000, 800), (40400, 900))], compare.DISAGREE),
        ([pool(2, (40000, 800), (58000, 1100)), pool(8, (40000, 8000), (46000, 9000))], compare.INCONCLUSIVE),
        # Flat at N=2, up at N=8 where wrk set both rates (left out).
        ([pool(2, (38320, 5208), (37898, 5653)), pool(8, (129103, 19841), (147037, 3482), True)], compare.DISAGREE),
        # The reference sources campaign: its N=2 pool left 30 of 32 and 62 of 64 connections unanswered, so more
        # connections could not add throughput there: left out too, and nothing is left to test.
        (
            [pool(2, (38320, 5208), (37898, 5653), starved=(30, 62)), pool(8, (129103, 19841), (147037, 3482), True)],
            compare.NOT_TESTABLE,
        ),
        ([pool(8, (129103, 19841), (147037, 3482), True)], compare.NOT_TESTABLE),
        ([], compare.NOT_MEASURED),
    ],
)
def test_source_003_is_decided_at_every_pool_size_the_server_set_the_rate(pools, verdict) -> None:
    assert compare.source_003_verdict(compare.Ratio(1.55, 1.28, 1.82), pools) == verdict


def test_source_003_ratio_is_per_pool_size_and_leaves_out_client_set_ones(trials, tmp_path: Path) -> None:
    # The pool at 2 and 8 threads; at 8 wrk was client-bound in every trial at both connection counts. No pool
    # size's rows may stand in for another's (the last row listed is N=8's).
    rows = [
        summary_row("thread_pool", n, c, m, dispatch="connection", response="hello", sd=sd, n_client_bound=bound)
        for n, c, m, sd, bound in (
            (2, 32, 38320, 5208, 0), (8, 32, 129103, 19841, 5), (2, 64, 37898, 5653, 0), (8, 64, 147037, 3482, 5)
        )
    ]  # fmt: skip
    files, sources = build(pd.DataFrame(rows), trials, tmp_path)
    assert [p["n"] for p in sources["003"].facts["pools"]] == [2] and sources["003"].facts["left_out"] == [8]
    assert sources["003"].verdict == compare.DISAGREE
    text = " ".join(files["published-003.tex"].split())
    assert "goes from 32 to 64 connections with a pool of 2 threads by a factor of 0.99" in text
    assert "an interval wholly outside source~003's range" in text
    assert "1.14" not in text
    assert (
        "With a pool of 8 threads \\texttt{wrk} was client-bound (its CPUs at least 95\\,\\% busy) in half or more of "
        "the trials at 32 or 64 connections: the load generator, not the server, set the rate, so that pool size is "
        "left out." in text
    )
    row = next(line for line in summary_page(sources).splitlines() if line.startswith("003 &"))
    assert "$N=2$: 0.99$\\times$" in row and "$N=8$ left out: the client set the rate" in row
    assert row.rstrip().endswith("& \\textbf{disagree} \\\\")
    # Only the client-set pool size measured: not testable here.
    again = tmp_path / "again"
    again.mkdir()
    files, sources = build(pd.DataFrame(rows[1::2]), trials, again)
    assert sources["003"].verdict == compare.NOT_TESTABLE
    assert "connections raises the throughput is therefore not testable here" in " ".join(
        files["published-003.tex"].split()
    )


@pytest.mark.parametrize(
    ("server_cpus", "top", "limited"),
    [(1, 8, True), (2, 8, True), (8, 8, False), (16, 8, False), (1, 1, False), (None, 8, True), (4, None, False)],
)
def test_a_scaling_question_needs_as_many_server_cpus_as_the_levels_compared(server_cpus, top, limited) -> None:
    assert compare.cpu_limited(server_cpus, top) is limited


@pytest.mark.parametrize(
    ("parts", "verdict"),
    [
        ({"bytes 100": compare.AGREE, "ceiling": compare.NOT_MEASURED}, compare.NOT_TESTABLE),
        # A tested part contradicted: disagree, though the ceilings were not measured.
        ({"bytes 100": compare.DISAGREE, "ceiling": compare.NOT_MEASURED}, compare.DISAGREE),
        ({"bytes 100": compare.NOT_MEASURED, "ceiling": compare.AGREE}, compare.NOT_TESTABLE),
        ({"bytes 100": compare.AGREE, "bytes 1000": compare.NOT_MEASURED, "ceiling": compare.AGREE}, compare.AGREE),
        ({"bytes 100": compare.AGREE, "ceiling": compare.DISAGREE}, compare.DISAGREE),
        # Every ceiling stopped by our cap: the ceilings were not tested.
        ({"bytes 100": compare.AGREE, "ceiling": compare.NOT_TESTABLE}, compare.NOT_TESTABLE),
        # A client count where the source states no ordering is left out.
        ({"bytes 100": compare.AGREE, "bytes 1000": compare.NO_ORDERING, "ceiling": compare.AGREE}, compare.AGREE),
        # Every ordering the load generator's rate: untested, as a ceiling our cap stopped is; a ceiling exceeded
        # here still contradicts the source (the reference echo study: poll held 19,500 against its 6,000).
        (
            {"bytes 100": compare.NOT_TESTABLE, "bytes 1000": compare.NO_ORDERING, "ceiling": compare.DISAGREE},
            compare.DISAGREE,
        ),
        (
            {"bytes 100": compare.NOT_TESTABLE, "bytes 1000": compare.NO_ORDERING, "ceiling": compare.AGREE},
            compare.NOT_TESTABLE,
        ),
        ({"bytes 100": compare.DISAGREE, "ceiling": compare.NOT_TESTABLE}, compare.DISAGREE),
        (
            {"bytes 100": compare.NOT_TESTABLE, "bytes 1000": compare.AGREE, "ceiling": compare.DISAGREE},
            compare.DISAGREE,
        ),
    ],
)
def test_source_004_is_contradicted_by_any_tested_part_else_untested_without_one(parts, verdict) -> None:
    assert compare.source_004_verdict(parts) == verdict


def test_ordering_rule_counts_confirmed_and_contradicted_pairs() -> None:
    published = {"a": 100.0, "b": 50.0, "c": 48.0}  # b and c within 10 %: a tie, not a pair
    assert compare.ordering_verdict(published, {"a": (90, 110), "b": (40, 60), "c": (10, 20)}) == (
        compare.AGREE,
        2,
        0,
    )
    assert compare.ordering_verdict(published, {"a": (10, 20), "b": (40, 60)})[0] == compare.DISAGREE
    assert compare.ordering_verdict(published, {"a": (30, 60), "b": (40, 70)}) == (compare.INCONCLUSIVE, 0, 0)
    assert compare.ordering_verdict(published, {"d": (1, 2)})[0] == compare.NOT_MEASURED


def test_a_pair_with_a_server_whose_rate_the_client_set_is_left_out() -> None:
    published = {"a": 100.0, "b": 50.0, "c": 10.0}
    ours = {"a": (10, 20), "b": (40, 60), "c": (1, 2)}  # a below b: contradicted, unless a's rate was the client's
    assert compare.ordering_verdict(published, ours)[0] == compare.DISAGREE
    assert compare.ordering_verdict(published, ours, client_set={"a"}) == (compare.AGREE, 1, 0)
    outcomes = [p.outcome for p in compare.ordering_pairs(published, ours, client_set={"a"})]
    assert outcomes == [compare.CLIENT_SET, compare.CLIENT_SET, compare.SAME_WAY]
    # Every pair with such a server: the ordering is not testable here.
    assert compare.ordering_verdict(published, ours, client_set={"a", "b"}) == (compare.NOT_TESTABLE, 0, 0)


def test_a_pair_measured_without_an_interval_is_inconclusive_not_unmeasured() -> None:
    # Two trials per server: no interval (only the trials' range), so no pair is separated, but every pair was
    # measured: inconclusive by the rule, never "not measured" and never "agree".
    published = {"a": 100.0, "b": 50.0}
    no_interval = compare.separating_interval(90, 110, 2)
    assert all(map(math.isnan, no_interval))
    ours = {"a": no_interval, "b": compare.separating_interval(10, 20, 2)}
    assert compare.ordering_verdict(published, ours) == (compare.INCONCLUSIVE, 0, 0)
    assert [p.outcome for p in compare.ordering_pairs(published, ours)] == [compare.NO_INTERVAL]


def test_where_the_source_separates_no_pair_there_is_no_ordering_to_test() -> None:
    assert compare.ordering_verdict({"a": 100.0}, {"a": (90, 110)})[0] == compare.NO_ORDERING
    assert compare.ordering_verdict({"a": 100.0, "b": 95.0}, {"a": (90, 110), "b": (1, 2)})[0] == compare.NO_ORDERING


@pytest.mark.parametrize(
    ("held", "capped", "verdict"),
    [
        (19500.0, True, compare.DISAGREE),  # held more than the published 6,000, cap or not
        (5000.0, False, compare.AGREE),
        (5000.0, True, compare.NOT_TESTABLE),  # our cap stopped it below the published ceiling
    ],
)
def test_a_ceiling_stopped_by_our_cap_below_the_published_one_is_untested(held, capped, verdict) -> None:
    assert compare.ceiling_verdict(6000.0, held, capped) == verdict


def test_source_004_ceilings_are_read_from_its_published_table() -> None:
    from_table = compare.source_004_ceilings(published_table("004", EXTERNAL_DIR))
    assert from_table == {"epoll": 28000.0, "poll": 6000.0}


def test_combined_verdict() -> None:
    assert compare.combined([compare.AGREE, compare.NOT_MEASURED]) == compare.AGREE
    assert compare.combined([compare.AGREE, compare.DISAGREE]) == compare.DISAGREE
    assert compare.combined([compare.AGREE, compare.INCONCLUSIVE]) == compare.INCONCLUSIVE
    assert compare.combined([compare.NOT_MEASURED]) == compare.NOT_MEASURED


def test_source_000_published_curve_is_its_loopback_table_over_its_two_threads() -> None:
    curve = compare.source_000_published_curve(load_source000(EXTERNAL_DIR / "source000_throughput.csv"))
    assert list(curve["pool_size"]) == [1, 3, 5, 7, 9, 11]
    assert curve["ratio"].iloc[0] == 1.0 and math.isnan(curve["ratio_low"].iloc[0])
    assert curve["ratio"].iloc[4] == pytest.approx(621257 / 107345)
    assert (curve["ratio_low"].iloc[1:] < curve["ratio"].iloc[1:]).all()


# --------------------------------------------------------------------------- synthetic campaigns


def summary_row(architecture: str, threads: float | None, connections: int, mean: float, **more: object) -> dict:
    return {
        "architecture": architecture,
        "dispatch": more.pop("dispatch", None),
        "threads": threads,
        "connections": connections,
        "pipeline": 1,
        "response": more.pop("response", "test"),
        "mean": mean,
        "sd": mean * 0.02,
        "n": 5,
        **more,
    }


@pytest.fixture
def main_summary() -> pd.DataFrame:
    rows = [summary_row("thread_pool", n, 400, 100000 * (1 + 0.1 * n), dispatch="request") for n in (1, 3, 5)]
    hello = "hello"
    rows += [summary_row("thread_per_conn", None, c, m, response=hello) for c, m in ((32, 50000), (64, 70000))]
    rows += [
        summary_row("prefork", w, 1000, 80000 - 1000 * w, response="file:data/external/source002_index.html")
        for w in (1, 2, 4, 8)
    ]
    return pd.DataFrame(rows)


@pytest.fixture
def trials() -> pd.DataFrame:
    return pd.DataFrame({"server_cpus": ["0"], "load_cpus": ["1"], "load_threads": [1]})


def write_studies(directory: Path, trials_per_design: int = 3) -> None:
    latency = pd.DataFrame(
        {
            "setup": "source_001",
            "architecture": ["blocking", "thread_per_conn", "epoll", "reactor"],
            "connections": 2000,
            "offered_rate": 90000,
            "achieved_mean": [10000, 60000, 62000, 61000],
            "achieved_ci95_low": [9000, 50000, 55000, 52000],
            "achieved_ci95_high": [11000, 70000, 69000, 70000],
            "n": trials_per_design,
            "timeouts_mean": [4000, 2000, 0, 0],
        }
    )
    latency.to_csv(directory / "latency-summary.csv", index=False)
    echo = pd.DataFrame(
        [
            {"campaign": "echo-test", "architecture": a, "connections": c, "bytes_received_per_sec_mean": m,
             "bytes_received_per_sec_ci95_low": m * 0.9, "bytes_received_per_sec_ci95_high": m * 1.1,
             "n": trials_per_design}
            for a, c, m in [("thread_per_conn", 100, 7e6), ("poll", 100, 11e6), ("epoll", 100, 11e6),
                            ("thread_per_conn", 1000, 4e6), ("epoll", 1000, 8e6), ("epoll", 10000, 6e6)]
        ]
    )  # fmt: skip
    echo.to_csv(directory / "echo-summary.csv", index=False)
    pd.DataFrame(
        {"architecture": ["poll", "epoll"], "reached_median": [19500.0, 19500.0], "cap": [19500.0, 19500.0]}
    ).to_csv(directory / "echo-max-conns.csv", index=False)


def source_texts(files: dict[str, str], sources: dict) -> dict[str, str]:
    """Each source's part of the section as the report shows it (published-NNN.tex): its sentence, rendered from
    its facts, with the figure and table the section inputs beside it."""
    prose = Prose()
    return {
        f"published-{number}.tex": "\n".join(
            [
                files.get(f"published-{number}-figure.tex", ""),
                prose.sentence("sources/sentences", f"s{number}", found.facts),
                files.get(f"published-{number}-table.tex", ""),
            ]
        )
        for number, found in sources.items()
    }


def build(summary: pd.DataFrame, trials: pd.DataFrame, tmp_path: Path) -> tuple[dict, dict]:
    generated, figures = tmp_path / "paper" / "generated", tmp_path / "paper" / "figures"
    generated.mkdir(parents=True)
    files, sources = published_outputs(summary, trials, tmp_path, Paper(figures, generated.parent))
    return source_texts(files, sources), sources


def test_every_source_compared_when_every_study_is_there(main_summary, trials, tmp_path: Path) -> None:
    write_studies(tmp_path)
    files, sources = build(main_summary, trials, tmp_path)
    verdicts = {number: facts.verdict for number, facts in sources.items()}
    # One server CPU: 000 (1 to 5 pool threads) and 002 (1 to 8 workers) are not testable here; 001: blocking below
    # the rest in both; 003: 64 over 32 up in both; 004: poll held more than its published 6,000.
    assert verdicts == {
        "000": compare.NOT_TESTABLE,
        "001": "agree",
        "002": compare.NOT_TESTABLE,
        "003": "agree",
        "004": "disagree",
    }
    assert "not testable here" in files["published-000.tex"] and "not testable" in files["published-002.tex"]
    assert (tmp_path / "paper" / "figures" / "published-000-pool.pdf").is_file()
    assert (tmp_path / "paper" / "figures" / "published-002-workers.pdf").is_file()
    assert "figures/published-000-pool.pdf" in files["published-000.tex"]
    assert "from $N=1$ to $N=5$" in files["published-000.tex"]
    assert "60,000" in files["published-001.tex"] and "190,965" in files["published-001.tex"]
    assert "inside source~003's range" in files["published-003.tex"]
    assert "poll held 19,500 (the cap), more than source~004's 6,000" in files["published-004.tex"]
    assert "whether it reaches source~004's 28,000 is not testable here" in files["published-004.tex"]
    assert "At 10,000 clients source~004 measured epoll alone" in files["published-004.tex"]
    assert "At 1,000 clients source~004's epoll and thread-per-connection lie within 10" in files["published-004.tex"]
    # The method section's sentence on wrk -t, rendered from the sources study's facts (studies.sources.load_threads).
    load_threads = Prose().sentence("sources/sentences", "load_threads_reason", load_threads_facts(trials))
    assert "(1 here, on 1 load CPU" in load_threads
    table = summary_page(sources)
    assert table.count(r"\\") >= 5 + 2 and r"\textbf{disagree}" in table and r"\label{tab:summary}" in table
    assert "more than 10\\,\\%" in table
    assert table.lower().count("not testable here") == 1 + 2  # the rule, once, and the two verdicts
    assert "on 1 server CPU" in table


def test_two_trials_per_design_are_inconclusive_by_the_stated_rule(main_summary, trials, tmp_path: Path) -> None:
    # make all's short latency and echo studies: two trials each, so no server has an interval. Source 001 was
    # measured, so it is neither "not measured" nor "agree" (as with three trials): its pairs separate nothing.
    write_studies(tmp_path, trials_per_design=2)
    files, sources = build(main_summary, trials, tmp_path)
    assert sources["001"].verdict == compare.INCONCLUSIVE
    text = " ".join(files["published-001.tex"].split())
    assert "(the latency study's source-001 set-up, 2 trials each)" in text
    assert "separate 0 the same way and 0 the other way; 6 involve a server measured in fewer than 3 trials" in text
    assert "neither confirm nor contradict source~001's ordering: inconclusive" in text
    # Source 004: its orderings were measured without intervals; poll's ceiling is still contradicted.
    orderings = {o["clients"]: o["verdict"] for o in sources["004"].facts["orderings"]}
    assert orderings == {"100": compare.INCONCLUSIVE, "1,000": compare.NO_ORDERING, "10,000": compare.NO_ORDERING}
    assert sources["004"].verdict == compare.DISAGREE
    table = summary_page(sources)
    row = next(line for line in table.splitlines() if line.startswith("001 &"))
    assert row.rstrip().endswith("& inconclusive \\\\")
    assert "(range, $n=2$: too few trials)" in row


def summary_page(sources: dict) -> str:
    """The summary section as the reader sees it: its introduction (the section template's) and its table."""
    section = Prose().section("summary", {"intro": INTRO})
    return section.replace(r"\input{generated/summary-table}", summary_outputs(sources, Prose())[SUMMARY_FILE])


def reproduced_sentence(sources: dict) -> str:
    """The abstract's sentence on the verdicts, rendered from the summary's facts (studies.summary.reproduced)."""
    return Prose().sentence("summary/table", "reproduced", reproduced_facts(sources))


def test_the_abstract_sentence_groups_the_summary_verdicts(main_summary, trials, tmp_path: Path) -> None:
    write_studies(tmp_path)
    _, sources = build(main_summary, trials, tmp_path)
    assert reproduced_sentence(sources) == (
        "Of the five sources' findings, two hold on this machine (sources 001 and 003; source 001 in 3 of the 6 pairs "
        "of designs it separates: our intervals do not separate reactor from epoll, epoll from thread-per-connection "
        "or reactor from thread-per-connection), one is contradicted here (source 004) and two cannot be tested on "
        "this machine (sources 000 and 002)."
    )
    # With two trials per design source 001 no longer holds: the sentence follows the table.
    again = tmp_path / "two-trials"
    again.mkdir()
    write_studies(again, trials_per_design=2)
    _, fewer = build(main_summary, trials, again)
    assert (
        "one holds on this machine (source 003), one is contradicted here (source 004), one is inconclusive "
        "here (source 001)" in reproduced_sentence(fewer)
    )


def test_the_abstract_sentence_says_which_pairs_an_agreeing_ordering_leaves_open() -> None:
    """ "Agree" for an ordering needs one pair confirmed and none reversed: the abstract names the pairs left open."""

    def ordering(source: str, outcomes: dict[tuple[str, str], str]) -> compare.SourceFacts:
        pairs = [{"higher": high, "lower": low, "outcome": outcome} for (high, low), outcome in outcomes.items()]
        return compare.SourceFacts(source, compare.AGREE, {"pairs": pairs, "pair_count": len(pairs)})

    sources = {
        "001": ordering(
            "001",
            {
                ("reactor", "epoll"): compare.NOT_SEPARATED,
                ("reactor", "io_uring"): compare.NO_INTERVAL,
                ("epoll", "blocking"): compare.SAME_WAY,
            },
        ),
        "004": compare.SourceFacts(
            "004",
            compare.AGREE,
            {
                "orderings": [
                    {"pairs": [{"higher": "poll", "lower": "epoll", "outcome": compare.SAME_WAY}], "pair_count": 1}
                ]
            },
        ),
    }
    assert reproduced_sentence(sources) == (
        "Of the two sources' findings, two hold on this machine (sources 001 and 004; source 001 in 1 of the 3 pairs "
        "of designs it separates: our intervals do not separate reactor from epoll or reactor from io\\_uring)."
    )
    assert (
        "one holds on this machine (source 001, in 1 of the 3 pairs of designs it "
        "separates: our intervals do not separate reactor from epoll or reactor from io\\_uring)"
        in reproduced_sentence({"001": sources["001"]})
    )


def test_eight_server_cpus_make_the_scaling_questions_testable(main_summary, trials, tmp_path: Path) -> None:
    write_studies(tmp_path)
    files, sources = build(main_summary, trials.assign(server_cpus="0-7"), tmp_path)
    # 000: up from 1 to 5 pool threads on 8 CPUs; 002: prefork falls from 1 to 8 workers while the source's scaled.
    assert sources["000"].verdict == "agree" and sources["002"].verdict == "disagree"
    assert "not testable" not in files["published-000.tex"] + files["published-002.tex"]
    table = summary_page(sources)
    assert table.lower().count("not testable here") == 1  # the rule only


def test_source_004_ordering_leaves_out_client_bound_servers(main_summary, trials, tmp_path: Path) -> None:
    # The reference echo study: echo_client client-bound in every trial of poll and epoll at 100 clients (and in one
    # of thread-per-connection's three), where the intervals put thread-per-connection below epoll.
    write_studies(tmp_path)
    echo = pd.read_csv(tmp_path / "echo-summary.csv")
    at_100 = echo["connections"] == 100
    echo["n_ok"] = 3
    echo["n_client_bound"] = 0
    echo.loc[at_100, "n_client_bound"] = echo.loc[at_100, "architecture"].map(
        {"thread_per_conn": 1, "poll": 3, "epoll": 3}
    )
    echo.to_csv(tmp_path / "echo-summary.csv", index=False)
    files, sources = build(main_summary, trials, tmp_path)
    orderings = {o["clients"]: o for o in sources["004"].facts["orderings"]}
    assert orderings["100"]["verdict"] == compare.NOT_TESTABLE
    text = " ".join(files["published-004.tex"].split())
    assert "contradict its ordering" not in text
    assert (
        "here echo\\_client's CPU time, or the busy share of its pinned CPU, was at least 95\\,\\% of that CPU's wall "
        "time in half or more of the trials of epoll and poll, so the client, not the server, set their rates and the pairs with them are left "
        "out: the ordering is not testable here." in text
    )
    # No ordering left to test, but poll's ceiling is exceeded: a tested part contradicts the source.
    assert "poll held 19,500 (the cap), more than source~004's 6,000" in text
    assert sources["004"].verdict == compare.DISAGREE
    row = next(line for line in summary_page(sources).splitlines() if line.startswith("004 &"))
    assert "100 clients: not testable, the client set the rate of epoll and poll;" in row
    assert row.rstrip().endswith("& \\textbf{disagree} \\\\")
    assert "one is contradicted here (source 004)" in reproduced_sentence(sources)


def test_source_004_without_ceilings_is_not_testable_unless_its_ordering_is_contradicted(
    main_summary, trials, tmp_path: Path
) -> None:
    # The synthetic echo study puts thread-per-connection below poll and epoll at 100 clients: the ordering that
    # was tested is contradicted, so the question is, though its ceilings were not measured.
    write_studies(tmp_path)
    (tmp_path / "echo-max-conns.csv").unlink()
    files, sources = build(main_summary, trials, tmp_path)
    assert sources["004"].verdict == compare.DISAGREE
    text = " ".join(files["published-004.tex"].split())
    assert "were not measured here (the echo study's \\texttt{-{}-max-conns} ramp)." in text
    assert "the question as a whole is not testable here" not in text
    # Thread-per-connection above both here: the ordering agrees, and without a ceiling the whole is untested.
    echo = pd.read_csv(tmp_path / "echo-summary.csv")
    top = (echo["architecture"] == "thread_per_conn") & (echo["connections"] == 100)
    echo.loc[
        top, ["bytes_received_per_sec_mean", "bytes_received_per_sec_ci95_low", "bytes_received_per_sec_ci95_high"]
    ] = (
        20e6,
        18e6,
        22e6,
    )
    echo.to_csv(tmp_path / "echo-summary.csv", index=False)
    again = tmp_path / "again"
    again.mkdir()
    for name in ("echo-summary.csv", "latency-summary.csv"):
        (again / name).write_text((tmp_path / name).read_text())
    files, sources = build(main_summary, trials, again)
    assert sources["004"].verdict == compare.NOT_TESTABLE
    assert "so the question as a whole is not testable here" in " ".join(files["published-004.tex"].split())


def test_without_studies_each_source_says_it_was_not_measured(trials, tmp_path: Path) -> None:
    files, sources = build(pd.DataFrame(), trials, tmp_path)
    assert {facts.verdict for facts in sources.values()} == {compare.NOT_MEASURED}
    assert "stands alone" in files["published-000.tex"]
    assert "No campaign processed here ran source~001" in files["published-001.tex"]
    assert "neither claim is tested here" in files["published-002.tex"]
    assert "not tested here" in files["published-003.tex"]
    assert "No echo campaign" in files["published-004.tex"]
    # Source 000's published curve is drawn even alone.
    assert (tmp_path / "paper" / "figures" / "published-000-pool.pdf").is_file()
    table = summary_page(sources)
    assert table.count("not measured") >= 10


def sources_campaign_summary() -> pd.DataFrame:
    """A sources campaign: 000's six pool sizes at 400, 002's file under wrk (1-8 workers, pong) and httperf,
    003's "Hello World!" pool at 32 and 64 connections."""
    file = "file:data/external/source002_index.html"
    rows = [summary_row("thread_pool", n, 400, 90000 * (1 + 0.05 * n), dispatch="request") for n in (1, 3, 5, 7, 9, 11)]
    rows += [
        summary_row("prefork", w, 1000, 60000 + 2000 * w, response=file, load_generator="wrk") for w in range(1, 9)
    ]
    rows += [summary_row("nginx", w, 1000, 70000, response=file, load_generator="wrk") for w in (1, 2)]
    rows += [summary_row("pong", 1, 1000, 77000, response=file, load_generator="wrk")]
    rows += [
        summary_row(name, 1, 1000, mean, response=file, load_generator="httperf", ci95_low=mean * 0.98,
                    ci95_high=mean * 1.02)
        for name, mean in (("prefork", 30000), ("nginx", 35000), ("pong", 42000))
    ]  # fmt: skip
    rows += [
        summary_row("thread_pool", 2, c, m, dispatch="connection", response="hello")
        for c, m in ((32, 40000), (64, 58000))
    ]
    return pd.DataFrame(rows).assign(campaign="sources-x")


def test_the_sources_campaign_is_read_before_the_main_one(main_summary, trials, tmp_path: Path) -> None:
    generated, figures = tmp_path / "paper" / "generated", tmp_path / "paper" / "figures"
    generated.mkdir(parents=True)
    trials = trials.assign(hostname="vm")
    campaign = SourcesCampaign(StudySource("sources-x", None, None), trials, sources_campaign_summary())
    files, sources = published_outputs(
        main_summary, trials, tmp_path, Paper(figures, generated.parent), sources_campaign=campaign
    )
    files = source_texts(files, sources)
    # 000 from the sources campaign (N up to 11 at 400), not the main one (N up to 5).
    assert sources["000"].facts["origin"] == "sources"
    assert "sources campaign \\texttt{sources-\\allowbreak{}x}" in files["published-000.tex"]
    assert "$N=11$" in files["published-000.tex"]
    # 002: prefork rises with workers here (its wrk rows; the httperf row at one worker is not its 1-worker point),
    # but on one server CPU that is not the scaling source 002 asked about.
    assert sources["002"].verdict == compare.NOT_TESTABLE
    assert sources["002"].facts["prefork_top"] == 8
    text = files["published-002.tex"]
    assert r"\label{tab:published-002}" in text
    assert "1.10 times" in text  # pong under wrk over nginx, the correct server with the higher mean: 77,000 / 70,000
    assert "not ranked here" not in text  # no client-bound trial recorded
    assert "1.20 times" in text  # under httperf: 42,000 / 35,000
    assert "42,000" in text and "30,000" in text
    # 003 from the sources campaign's pool: 58,000 / 40,000 = 1.45, its interval inside 1.28-1.82.
    assert "campaign \\texttt{sources-\\allowbreak{}x}" in files["published-003.tex"]
    assert "inside source~003's range" in files["published-003.tex"]


def test_source_002_does_not_rank_correct_servers_whose_rate_the_load_generator_set(
    main_summary, trials, tmp_path: Path
) -> None:
    # The reference sources campaign: wrk and httperf client-bound in every trial of prefork and nginx at one
    # worker; the sentence names the higher mean without calling it the faster server.
    generated, figures = tmp_path / "paper" / "generated", tmp_path / "paper" / "figures"
    generated.mkdir(parents=True)
    summary = sources_campaign_summary()
    one_worker = summary["architecture"].isin(["prefork", "nginx"]) & (summary["threads"] == 1)
    summary["n_client_bound"] = 0
    summary.loc[one_worker, "n_client_bound"] = 5
    summary.loc[
        one_worker & (summary["load_generator"] == "httperf") & (summary["architecture"] == "nginx"), "n_client_bound"
    ] = 2
    campaign = SourcesCampaign(StudySource("sources-x", None, None), trials.assign(hostname="vm"), summary)
    files, sources = published_outputs(
        main_summary, trials.assign(hostname="vm"), tmp_path, Paper(figures, generated.parent),
        sources_campaign=campaign,
    )  # fmt: skip
    text = " ".join(source_texts(files, sources)["published-002.tex"].split())
    assert "faster" not in text
    assert "the rate of the correct server with the higher mean, nginx;" in text
    assert (
        "Under \\texttt{wrk} the load generator was client-bound in half or more of the trials of both prefork and "
        "nginx, so it, not the servers, set their rates and the two are not ranked here." in text
    )
    assert sources["002"].facts["correct_client_set"] == ["wrk"]  # under httperf nginx in 2 of 5 only


def test_without_a_sources_campaign_the_main_campaign_answers(main_summary, trials, tmp_path: Path) -> None:
    files, sources = build(main_summary, trials, tmp_path)
    assert sources["000"].facts["origin"] == "main"
    assert "tab:published-002" not in files["published-002.tex"]  # neither pong nor httperf measured


def test_sources_campaign_csvs_are_written_and_stale_ones_removed(tmp_path: Path) -> None:
    raw_root = Path(__file__).parent / "fixtures" / "campaigns"
    processed = tmp_path / "processed"
    processed.mkdir()
    campaign = SOURCES.read(["fixture-minimal"], raw_root, processed)
    assert campaign.available and campaign.name == "fixture-minimal"
    written = pd.read_csv(processed / SUMMARY_CSV)
    assert len(written) == len(campaign.summary) > 0 and set(written["campaign"]) == {"fixture-minimal"}
    assert (processed / TRIALS_CSV).is_file()
    with pytest.warns(UserWarning, match="sources campaign 'absent'"):
        missing = SOURCES.read(["absent"], raw_root, processed)
    assert not missing.available
    assert not (processed / SUMMARY_CSV).exists() and not (processed / TRIALS_CSV).exists()


def test_a_sources_campaign_from_another_host_leaves_source_000_to_this_one(
    main_summary, trials, tmp_path: Path
) -> None:
    # make all on a new machine: its own sweep answers source 000; the shipped sources campaign still gives 002.
    generated, figures = tmp_path / "paper" / "generated", tmp_path / "paper" / "figures"
    generated.mkdir(parents=True)
    shipped = SourcesCampaign(
        StudySource("reference-sources", None, None), trials.assign(hostname="vm"), sources_campaign_summary()
    )
    _, sources = published_outputs(
        main_summary, trials.assign(hostname="laptop"), tmp_path, Paper(figures, generated.parent),
        sources_campaign=shipped,
    )  # fmt: skip
    assert sources["000"].facts["origin"] == "main" and sources["000"].facts["measured_last_n"] == 5
    assert sources["002"].facts["prefork_top"] == 8


@pytest.mark.slow
def test_the_readme_summary_is_the_reports_over_the_shipped_campaigns(tmp_path: Path) -> None:
    """The README's summary table gives the verdicts the report computes from the campaigns shipped in git."""
    shipped = {s.name: s.campaign.reference for s in STUDIES if s.campaign is not None and s.campaign.reference}
    shipped[MAIN] = MAIN_REFERENCE
    paper = tmp_path / "paper"
    outputs = build_report(
        shipped, ReportPaths(RAW_ROOT, tmp_path / "processed", paper / "generated", paper / "figures")
    )
    verdicts = {number: facts.verdict for number, facts in outputs.result("sources").items()}
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    rows = [line.split(" | ") for line in readme.splitlines() if line.startswith("| 00")]
    assert {cells[0].strip("| ") for cells in rows} == set(verdicts)
    assert {cells[0].strip("| "): cells[-1].strip(" |") for cells in rows} == verdicts


def test_source_003_leaves_out_a_pool_size_that_left_connections_unanswered(trials, tmp_path: Path) -> None:
    """The reference sources campaign: with connection dispatch a pool of 2 threads answered 2 of 32 and of 64
    connections (30 and 62 starved), so its flat ratio says nothing about more connections; at 8 threads wrk set the
    rate. Nothing is left to test."""
    rows = [
        summary_row(
            "thread_pool", n, c, m, dispatch="connection", response="hello", sd=sd, n_client_bound=bound,
            starved_connections_mean=starved,
        )
        for n, c, m, sd, bound, starved in (
            (2, 32, 38320, 5208, 0, 30), (8, 32, 129103, 19841, 5, 24),
            (2, 64, 37898, 5653, 0, 62), (8, 64, 147037, 3482, 5, 56),
        )
    ]  # fmt: skip
    files, sources = build(pd.DataFrame(rows), trials, tmp_path)
    facts = sources["003"].facts
    assert facts["pools"] == [] and facts["left_out"] == [8]
    assert facts["starved_out"] == [{"n": 2, "low": "30", "high": "62"}]
    assert sources["003"].verdict == compare.NOT_TESTABLE
    text = " ".join(files["published-003.tex"].split())
    assert "was measured at 32 and 64 connections with a pool of 2 and 8 threads." in text
    assert "With a pool of 2 threads 30 of the 32 and 62 of the 64 connections were never answered" in text
    assert "connections raises the throughput is therefore not testable here" in text
    row = next(line for line in summary_page(sources).splitlines() if line.startswith("003 &"))
    assert "$N=8$ left out: the client set the rate; $N=2$ left out: connections unanswered" in row
