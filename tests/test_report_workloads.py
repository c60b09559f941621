"""The workloads section: the decision map (ratios to each point's best, paired within rounds), what to pick
where the server bounded the best, the literature's expectations checked, and the section without a campaign."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
import synthetic_workloads as sw  # tests/fixtures/campaigns/synthetic_workloads.py (pytest pythonpath)

from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.report import build as report
from archbench.stats import selection
from archbench.studies import workloads
from archbench.studies.workloads import data, facts, tables

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
PAPER = Path(__file__).resolve().parent.parent / "paper"
SENTENCES = "workloads/sentences"  # the section's sentences, rendered from facts.workloads_sentences


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    raw = tmp_path_factory.mktemp("raw")
    sw.write_workloads_campaign(raw)
    shutil.copytree(FIXTURES / "fixture-minimal", raw / "fixture-minimal")
    return raw


@pytest.fixture(scope="module")
def study(root, tmp_path_factory) -> data.WorkloadsResults:
    return workloads.WORKLOADS.read([sw.WORKLOADS], root, tmp_path_factory.mktemp("processed"))


def cell(study: data.WorkloadsResults, point: str, architecture: str) -> pd.Series:
    rows = study.map[(study.map["point"] == point) & (study.map["architecture"] == architecture)]
    assert len(rows) == 1, (point, architecture)
    return rows.iloc[0]


def test_points_are_named_by_what_differs_from_the_baseline(study):
    assert data.points(study.map) == [
        "baseline",
        "block 1000 us",
        "idle 8000",
        "work 10 us, idle 8000",
        "work 10 us",
        "work 100 us",
        "close",
    ]


def test_ratios_to_the_best_are_paired_within_rounds(study):
    # epoll is the best at the baseline; the pool's per-round ratios are 0.9 x (1 + wobbles): (0.9 x 0.998/1.003,
    # 0.9 x 1.003/0.998, 0.9 x 0.999/1.001), whose geometric mean is 0.8994.
    pool = cell(study, "baseline", "thread_pool")
    assert pool["best_config_id"].startswith("epoll-") and cell(study, "baseline", "epoll")["is_best"]
    assert pool["ratio"] == pytest.approx(0.9 * ((0.998 / 1.003) * (1.003 / 0.998) * (0.999 / 1.001)) ** (1 / 3))
    assert pool["low"] < pool["ratio"] < pool["high"] and pool["n_rounds"] == 3
    # The reference floor pong is measured beside the servers but never the best.
    pong = cell(study, "baseline", "pong")
    assert pong["reference_floor"] and not pong["is_best"] and pong["ratio"] == pytest.approx(1.5, rel=1e-2)
    # Blocking 1 ms: the 64-worker pool is the best, the event loops serve one request per wait.
    assert cell(study, "block 1000 us", "thread_pool")["is_best"]
    assert cell(study, "block 1000 us", "epoll")["ratio"] == pytest.approx(950 / 60_000, rel=1e-2)


def test_what_bounded_each_configuration_is_kept(study):
    assert cell(study, "baseline", "epoll")["bottleneck"] == "server"
    assert cell(study, "block 1000 us", "epoll")["bottleneck"] == "wait"
    assert cell(study, "close", "epoll")["bottleneck"] == "client"


def test_picks_are_the_designs_shown_within_delta_of_the_best(study):
    frame = study.map
    picked = frame[frame["pick"]]
    # Three tight rounds decide every point: within 10 % of the best (poll at 0.98) or slower (the pool at 0.90).
    assert frame.loc[~frame["reference_floor"], "point_resolved"].all()
    assert not picked["reference_floor"].any() and (picked["verdict"] == "within").all()
    assert (picked["low"] > 1 - study.settings.delta).all()
    assert set(picked.loc[picked["point"] == "baseline", "architecture"]) == {"epoll", "poll"}
    assert cell(study, "baseline", "thread_pool")["verdict"] == "slower"
    assert set(picked.loc[picked["point"] == "block 1000 us", "architecture"]) == {"thread_pool"}
    # A design shown slower is never a pick, and no pick's interval against the best lies below 1 - delta.
    assert not ((frame["verdict"] == "slower") & frame["pick"]).any()


def test_the_picks_table_and_the_findings_state_the_same_decision(study):
    outcome = tables.point_outcome(study.map[study.map["point"] == "baseline"])
    assert outcome["state"] == "resolved" and outcome["picks"] == ["epoll", "poll"] and len(outcome["slower"]) == 1
    picks = facts.pick_facts(study)
    listed = {r["point"]: r["picks"] for r in picks["ranked"]}
    assert listed["baseline"] == outcome["picks"]
    assert [g["reason"] for g in picks["unranked"]] == ["client"]


def test_a_point_whose_best_the_client_bounded_cannot_rank_the_servers(study):
    by_point = dict(tuple(study.map.groupby("point", sort=False)))
    assert data.rankable(by_point["baseline"]) and data.rankable(by_point["block 1000 us"])
    assert not data.rankable(by_point["close"])


def test_a_point_that_cannot_rank_the_servers_names_no_pick_in_any_table_or_figure(study):
    """The selection's verdicts at "close" stay in `verdict`; the map table, the figure and the picks read
    `ranked_verdict`, so none of them calls a design a pick where the picks table says "not testable here"."""
    close = study.map[study.map["point"] == "close"]
    decided = close[close["verdict"] != ""]
    assert not decided.empty and (decided["verdict"] == "within").any()
    assert (decided["ranked_verdict"] == data.UNRANKED).all() and not close["pick"].any()
    rankable = study.map[study.map["point"] == "baseline"]
    assert (rankable["ranked_verdict"] == rankable["verdict"]).all()
    table = tables.map_table(study, Prose())
    block = table[table.index(r"\textit{close}") :]
    block = block[: block.index(r"\midrule")] if r"\midrule" in block else block
    assert "unranked" in block and " pick " not in block and r"\textbf{fastest}" not in block
    assert "pick" in table[table.index(r"\textit{baseline}") : table.index(r"\textit{close}")]


def test_the_literature_checked_against_the_data(study):
    # Idle points at work 0 and at 10 us: the most work with both sides measured is the one compared (66 / 20 us
    # with 8,000 idle connections, 22 / 20 us at the same work without them).
    idle = facts.idle_facts(study)
    assert idle["verdict"] == facts.CONFIRMED and idle["work_us"] == "10"
    assert idle["with"] == "3.3" and idle["without"] == "1.1"
    blocking = facts.blocking_facts(study)
    assert blocking["verdict"] == facts.CONFIRMED and blocking["pool_threads"] == "64"
    cpu = facts.cpu_bound_facts(study)
    assert cpu["verdict"] == facts.CONFIRMED and cpu["designs"] == "3"
    # Sized to load the server (work or a wait): 4 points x 3 servers x 3 rounds, all bounded but the pool's three
    # client-bound trials at 10 us of work.
    assert facts.bound_share(study) == {
        "trials": "69",
        "bound": "51",
        "percent": "74",
        "sized": "36",
        "sized_bound": "33",
        "sized_percent": "92",
        "sized_unbound": [{"label": "thread pool", "trials": "3"}],
    }


def test_without_idle_or_blocking_points_the_expectations_are_not_testable(study):
    baseline_only = data.WorkloadsResults(
        study.campaign, study.trials, study.summary, study.map[study.map["point"] == "baseline"], study.settings
    )
    assert facts.idle_facts(baseline_only)["verdict"] == facts.NOT_TESTABLE
    assert facts.blocking_facts(baseline_only)["verdict"] == facts.NOT_TESTABLE
    assert facts.cpu_bound_facts(baseline_only)["verdict"] == facts.NOT_TESTABLE


def abstract_of(study: data.WorkloadsResults) -> str:
    """The abstract's sentence, rendered from the facts the abstract reads (studies.workloads)."""
    return Prose().sentence(SENTENCES, "abstract", facts.workloads_sentences(study, figure_present=False))


def test_the_abstract_gives_each_testable_expectation_with_its_numbers(study):
    abstract = abstract_of(study)
    blocking, idle, cpu = facts.blocking_facts(study), facts.idle_facts(study), facts.cpu_bound_facts(study)
    assert f"served {blocking['factor']} times as many requests as an epoll loop" in abstract
    assert f"poll spent {idle['with']} times epoll's CPU per request ({idle['without']} times without them)" in abstract
    assert f"each of the {cpu['designs']} server-bound event-driven and pool designs was shown within" in abstract
    assert "which settled 6 of the 6 workload points this machine can rank" in abstract

    baseline_only = data.WorkloadsResults(
        study.campaign, study.trials, study.summary, study.map[study.map["point"] == "baseline"], study.settings
    )
    untestable = abstract_of(baseline_only)
    assert untestable.startswith(r"Which design to pick depends on the workload (Section~\ref{sec:workloads})")
    assert "times as many" not in untestable and "within 18" not in untestable


def test_the_section_ranks_where_the_load_generator_did_not_set_the_rate(study):
    # The rule the picks apply: designs bound by their waits or by neither side are ranked too.
    text = " ".join(Prose().section("workloads", facts.workloads_sentences(study, figure_present=False)).split())
    assert "A server can be ranked only where the load generator did not set the rate (Section" in text
    assert "where it, not the load generator, set the rate" not in text


def test_csvs_are_written_and_removed_without_a_campaign(root, tmp_path):
    workloads.WORKLOADS.read([sw.WORKLOADS], root, tmp_path)
    written = {p.name for p in tmp_path.glob("*.csv")}
    assert written == {data.TRIALS_CSV, data.SUMMARY_CSV, data.MAP_CSV}
    empty = workloads.WORKLOADS.read([None], root, tmp_path)
    assert not empty.available and not list(tmp_path.glob("*.csv"))


def test_the_section_without_a_campaign_is_one_sentence(tmp_path):
    macros = MacroSet()
    facts.workloads_macros(macros, data.WorkloadsResults(None))
    sentences = facts.workloads_sentences(data.WorkloadsResults(None), figure_present=False)
    assert macros.macros[r"\abWorkloadsHasData"].value == "0"
    assert "no workloads campaign was found" in " ".join(Prose().section("workloads", sentences).split())
    assert abstract_of(data.WorkloadsResults(None)) == ""


@pytest.mark.integration
def test_the_report_builds_with_the_decision_map_first(root, tmp_path):
    paper = tmp_path / "paper"
    shutil.copytree(PAPER / "templates", paper / "templates")
    for name in ("report.tex", "references.bib"):
        shutil.copy(PAPER / name, paper / name)
    outputs = report.build_report(
        {"main": "fixture-minimal", "workloads": sw.WORKLOADS},
        paths=report.ReportPaths(
            raw_root=root,
            processed_dir=tmp_path / "processed",
            generated_dir=paper / "generated",
            figures_dir=paper / "figures",
            templates_dir=paper / "templates",  # the copy: the rendered sections' \input is relative to it
        ),
    )
    body = (paper / "generated" / "body.tex").read_text().splitlines()
    assert body[1] == r"\input{generated/section-workloads}"  # the first section after the introduction
    assert outputs.result("workloads").available
    assert (paper / "figures" / "workloads-map.pdf").is_file()
    if shutil.which("latexmk") is None:
        pytest.skip("latexmk is not installed (apt-get install latexmk texlive-latex-extra)")
    pdf = report.build_pdf(paper)
    log = (paper / "report.log").read_text(errors="replace")
    assert pdf.read_bytes().startswith(b"%PDF") and "undefined" not in log.lower()
    assert not math.isnan(outputs.result("workloads").map["ratio"].iloc[0])


def test_points_run_family_by_family_from_the_lightest_setting() -> None:
    measured = [  # (workload, point, settings that differ from the default), in a shuffled measuring order
        ("size", "bytes:262144", {"response": "bytes:262144"}),
        ("block", "block 1000 us", {"block_us": 1000}),
        ("size", "bytes:16384", {"response": "bytes:16384"}),
        ("idle", "idle 8000", {"idle_connections": 8000}),
        ("block", "block 100 us", {"block_us": 100}),
        ("idle", "idle 1000", {"idle_connections": 1000}),
    ]
    frame = pd.DataFrame(
        [{**data.WORKLOAD_FIELDS, **settings, "workload": w, "point": p} for w, p, settings in measured]
    )
    assert data.points(frame) == [
        "bytes:16384",
        "bytes:262144",
        "block 100 us",
        "block 1000 us",
        "idle 1000",
        "idle 8000",
    ]
    assert data.points(pd.DataFrame()) == []


@pytest.mark.slow
def test_readme_quotes_the_shipped_workloads_campaign(tmp_path) -> None:
    """The README's workloads findings are the decisions and facts the report computes from the shipped campaign."""
    root = Path(__file__).resolve().parent.parent
    campaign = workloads.STUDY.campaign.reference
    shipped = workloads.WORKLOADS.read([campaign], root / "data" / "raw", tmp_path)
    blocking, idle = facts.blocking_facts(shipped), facts.idle_facts(shipped)
    bound, chosen = facts.bound_share(shipped), facts.selection_facts(shipped)
    frame = shipped.map

    def outcome(point: str) -> dict:
        return tables.point_outcome(frame[frame["point"] == point])

    cpu_points = ["work 10 us", "work 20 us", "work 100 us", "work 50 us, bytes:16384"]
    at_cpu = frame[frame["point"].isin(cpu_points)]
    nearest = at_cpu.loc[at_cpu["verdict"] == "slower", "ratio"].max()
    churn, large = outcome("work 40 us, close"), outcome("work 50 us, bytes:262144")
    readme = " ".join((root / "README.md").read_text().split())
    quoted = [
        f"shipped campaign `{campaign}`",
        f"picked only where it is shown within {chosen['delta']} % of the best",
        f"resolved {chosen['resolved']} of the {chosen['rankable']} workload points this machine can rank",
        f"(epoll {blocking['epoll']} req/s) and is shown slower",
        f"a pool of {blocking['pool_threads']} threads served {blocking['pool']} req/s, {blocking['factor']} times as many",
        f"on top of {idle['work_us']} µs of work per request): poll's CPU per request grows to {idle['with']} times",
        f"({idle['without']} times without them) and its throughput falls to {idle['poll_ratio']} of the fastest",
        f"(the nearest at {nearest:.2f} of io_uring)",
        f"blocking and poll are the picks, after {churn['rounds']} rounds",
        f"still open after {large['rounds']} rounds; about {large['needed']} rounds would decide it",
        f"{bound['sized_percent']} % of those trials",
    ]
    assert [q for q in quoted if q not in readme] == []
    assert blocking["verdict"] == facts.CONFIRMED and idle["verdict"] == facts.CONFIRMED
    assert outcome("block 1000 us")["picks"] == ["thread-per-connection"]
    assert outcome("work 10 us, idle 8000")["picks"] == [r"io\_uring, 1 thread"]
    assert all(
        outcome(p)["state"] == "resolved" and outcome(p)["picks"] == [r"io\_uring, 1 thread"] for p in cpu_points
    )
    assert churn["picks"] == ["blocking", "poll"] and large["state"] == "open"


def test_the_bound_sentence_names_the_sized_trials_the_server_did_not_bound(study):
    sentences = facts.workloads_sentences(study, figure_present=True)
    sentence = Prose().sentence(SENTENCES, "bound", sentences["bound"])
    assert (
        "bounded 51 of the 69 measured trials (74\\,\\%), and 33 of the 36 trials sized to load the server" in sentence
    )
    assert "the rest were trials of thread pool (3)." in sentence
    idle = Prose().sentence(SENTENCES, "idle", sentences["idle"])
    assert "on top of 10\\,\\textmu s of work per request" in idle and "3.3 times with 8,000 idle" in idle


def test_the_idle_verdict_confirms_only_the_part_it_tests(study):
    # The test is the growth of poll's CPU over epoll's with idle connections and poll shown slower there; poll
    # "as fast as" epoll without them is never tested (a point estimate): the verdict confirms the second part only.
    idle = " ".join(Prose().sentence(SENTENCES, "idle", facts.idle_facts(study)).split())
    assert idle.startswith("These data confirm the second: ") and "These data confirm it" not in idle
    assert "poll's server CPU per request, a point estimate, was 1.1 times epoll's without idle connections" in idle


def test_a_within_sentence_appears_only_where_the_intervals_confirm_it(study):
    """The CPU-bound expectation (designs within 18 % of the best) is printed in the abstract and the findings only
    where every design's simultaneous interval lies above 0.82; a wide interval makes it inconclusive, an interval
    below 0.82 contradicts it."""
    work_100 = study.map["point"] == "work 100 us"
    for low, high, verdict in ((0.7, 1.0, facts.INCONCLUSIVE), (0.5, 0.8, facts.CONTRADICTED)):
        frame = study.map.copy()
        pool = work_100 & (frame["architecture"] == "thread_pool")
        frame.loc[pool, ["low", "high"]] = (low, high)
        changed = data.WorkloadsResults(study.campaign, study.trials, study.summary, frame, study.settings)
        assert facts.cpu_bound_facts(changed)["verdict"] == verdict
        abstract = abstract_of(changed)
        findings = " ".join(Prose().block("findings/findings", "picks", facts.pick_facts(changed)).split())
        assert "was shown within 18" not in abstract and "was shown within 18" not in findings
        if verdict == facts.CONTRADICTED:
            assert "were not all within 18" in abstract and "fell further behind" in findings
        else:
            assert "within 18" not in abstract and "CPU-bound work" not in findings


def test_the_stated_rule_is_the_codes_a_pick_wins_over_an_interval_ending_at_one(study):
    # Within delta and also below the best of the others (its interval ends at 1): the code calls it a pick
    # (archbench.stats.selection._verdict), so the section states "slower" only for a design that is not a pick.
    delta = 0.05
    assert selection._verdict(math.log(0.97), 0.0, delta) == selection.WITHIN
    assert selection._verdict(math.log(0.90), 0.0, delta) == selection.SLOWER
    sentences = facts.workloads_sentences(study, figure_present=True)
    section = " ".join(Prose().section("workloads", sentences).split())
    assert "a pick. Otherwise, one whose interval ends at 1 is \\emph{slower} than the best." in section
    # The bold "fastest" is the highest estimate, which the procedure shows the best only where its interval
    # starts at 1: the map's notes say so.
    table = " ".join(tables.map_table(study, Prose()).split())
    assert r"\textbf{fastest}" in table
    assert "Fastest: the highest estimate, shown the best only where its interval starts at 1." in table


def test_the_maps_bounds_do_not_land_on_a_threshold_they_do_not_reach():
    # The shipped poll at "work 40 us, close": a pick (low 0.9513 above 1 - delta) whose interval ends above 1
    # (1.007): two digits showed "0.95--1.0", on both thresholds of the verdicts.
    row = pd.Series({"ratio": 0.9788, "low": 0.9513, "high": 1.00698, "is_best": False, "ranked_verdict": "within"})
    assert tables.ratio_cell(row, 0.05) == "0.98 (0.951--1.01)"
    slower = pd.Series({"ratio": 0.957, "low": 0.926, "high": 1.0, "is_best": False, "ranked_verdict": "slower"})
    assert tables.ratio_cell(slower, 0.05) == "0.96 (0.93--1.0)"  # ends at 1 exactly: two digits say so
