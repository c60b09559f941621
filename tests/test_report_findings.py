"""The findings after the abstract: what to pick per workload point, CPU per request ranked, the designs that
starved connections and what this machine could not test, each computed from the data and each citing a label
that exists."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import synthetic_workloads as sw  # tests/fixtures/campaigns/synthetic_workloads.py (pytest pythonpath)

from archbench.render.prose import Prose
from archbench.render.study import StudyContext, StudyOutput
from archbench.report import build as report
from archbench.report import pipeline
from archbench.studies import findings, workloads
from archbench.studies.findings import facts
from archbench.studies.workloads.facts import pick_facts

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
PAPER = Path(__file__).resolve().parent.parent / "paper"
TEMPLATE = "findings/findings"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    raw = tmp_path_factory.mktemp("raw")
    sw.write_workloads_campaign(raw)
    shutil.copytree(FIXTURES / "fixture-architectures", raw / "fixture-architectures")
    return raw


@pytest.fixture(scope="module")
def workloads_study(root):
    return workloads.WORKLOADS.read([sw.WORKLOADS], root, None)


@pytest.fixture(scope="module")
def main(root, tmp_path_factory):
    return pipeline.process_main_campaign(root / "fixture-architectures", tmp_path_factory.mktemp("processed"))


def test_picks_per_point_where_the_server_bounded_the_best(workloads_study):
    found = pick_facts(workloads_study)
    ranked = {entry["point"]: entry["picks"] for entry in found["ranked"]}
    # Tight rounds decide every point of the synthetic campaign: the designs within 10 % of the best are picked
    # (fastest first), those at 0.90 of it or below are shown slower.
    pool = "thread pool (request, queue), 64 threads"
    assert ranked == {
        "baseline": ["epoll", "poll"],
        "block 1000 us": [pool],
        "idle 8000": ["epoll"],
        "work 10 us, idle 8000": ["epoll"],
        "work 10 us": ["epoll", "poll", pool],
        "work 100 us": ["epoll", "poll", pool],
    }
    assert all(entry["state"] == "resolved" and not entry["open"] for entry in found["ranked"])
    assert found["unranked"] == [{"reason": "client", "points": ["close"]}]
    assert found["points"] == "7"
    assert {found[k]["verdict"] for k in ("blocking", "idle", "cpu_bound")} == {"confirmed"}
    block = Prose().block(TEMPLATE, "picks", found)
    assert "\n\n\\emph{Requests that block}" in block  # a paragraph of its own after the points
    text = " ".join(block.split())
    assert r"\item \emph{block 1000 us}: thread pool (request, queue), 64 threads." in text
    assert r"were shown within 10\,\% of the best with 95\,\% simultaneous confidence" in text
    assert "at close the load generator bounded half or more of the fastest design's rounds." in text
    assert "a pool of 64 threads" in text and "pick epoll over poll" in text
    assert "with 8,000 idle connections held open and 10\\,\\textmu s of work per request, poll" in text


def test_without_a_workloads_campaign_the_findings_say_so():
    assert pick_facts(None) == {"available": False}
    assert "No workloads campaign was analysed" in Prose().block(TEMPLATE, "picks", {"available": False})


def findings_after(main, tmp_path, earlier) -> dict:
    """The findings study's facts, written after the studies `earlier` ({name: StudyOutput}) in a report."""
    context = StudyContext(
        processed=main,
        campaigns=None,
        raw_root=tmp_path,
        processed_dir=tmp_path,
        generated_dir=tmp_path / "generated",
        figures_dir=tmp_path / "figures",
        prose=Prose(),
        earlier=earlier,
    )
    return findings.write(context).section


def test_the_findings_picks_are_the_workloads_studys_section_facts(workloads_study, main, tmp_path):
    """What to pick is the workloads study's decision, read from its section facts through the study context (no
    study imports another): the findings render those picks, whatever the workloads study's result holds."""
    given = {
        "available": True,
        "points": "3",
        "ranked": [{"point": "given point", "picks": ["epoll"], "open": [], "state": "resolved"}],
        "unranked": [{"reason": "client", "points": ["close", "idle 1000"]}],
        "delta": "10",
        "blocking": {"verdict": "not testable here"},
        "idle": {"verdict": "not testable here"},
        "cpu_bound": {"verdict": "not testable here"},
    }
    earlier = {"workloads": StudyOutput(result=workloads_study, section={"picks": given})}
    found = findings_after(main, tmp_path, earlier)
    assert found["picks"] == given
    assert (found["limits"]["unranked_points"], found["limits"]["points"]) == (2, "3")
    assert r"\item \emph{given point}: epoll." in " ".join(Prose().block(TEMPLATE, "picks", found["picks"]).split())
    # The workloads study's section carries its picks, with a campaign and without one.
    assert workloads.WORKLOADS.sentences(workloads_study, {"map": None})["picks"] == pick_facts(workloads_study)
    without = workloads.WORKLOADS.read([None], tmp_path, None)
    assert workloads.WORKLOADS.sentences(without, {"map": None})["picks"] == {"available": False}
    # A report built without the workloads study (or before it) says so, as before.
    assert findings_after(main, tmp_path, {})["picks"] == {"available": False}


def test_a_map_without_a_rankable_point_says_what_bounded_each_and_names_no_cause_for_all(workloads_study):
    found = {
        **pick_facts(workloads_study),
        "ranked": [],
        "unranked": [{"reason": "client", "points": ["close"]}, {"reason": "none", "points": ["idle 1000"]}],
    }
    text = " ".join(Prose().block(TEMPLATE, "picks", found).split())
    # The old sentence said "At no workload point did the server set the rate", although one point had no best.
    assert "No workload point can rank the designs on this machine" in text and "did the server set" not in text
    assert "at close the load generator bounded" in text and "nothing: no server had a measured best" in text


def test_cpu_per_request_is_ranked_cheapest_first_without_the_upper_bound(main):
    depths = facts.cpu_facts(main.summary)
    assert [d["pipeline"] for d in depths] == ["1", "16"]
    for depth in depths:
        values = [float(entry["cpu"].replace(",", "")) for entry in depth["ranked"]]
        names = [entry["name"] for entry in depth["ranked"]]
        assert values == sorted(values) and len(names) == len(set(names)) >= 2
        assert not any("upper bound" in name for name in names)
        assert any(name.startswith("nginx") for name in names)
        assert float(depth["factor"]) == pytest.approx(values[-1] / values[0], rel=0.05)


def test_the_lowest_mean_cpu_is_named_the_cheapest_only_when_its_interval_is_below_every_other(main):
    column = facts.CPU_COLUMN

    def rendered(low_factor: float, high_factor: float) -> tuple[list[dict], str]:
        summary = main.summary.assign(
            **{
                f"{column}_ci95_low": main.summary[column] * low_factor,
                f"{column}_ci95_high": main.summary[column] * high_factor,
            }
        )
        depths = facts.cpu_facts(summary)
        return depths, Prose().sentence(TEMPLATE, "cpu", {"depths": depths, "figure": False})

    depths, text = rendered(0.01, 100.0)  # every interval overlaps the lowest mean's
    assert not any(d["separated"] for d in depths)
    assert all(d["overlapping"] == str(len(d["ranked"]) - 1) for d in depths)
    assert "the cheapest server there" not in text and text.count("no server is named the cheapest there") == 2
    assert all("--" in entry["interval"] for d in depths for entry in d["ranked"])
    depths, text = rendered(1.0, 1.0)  # points: the lowest mean's interval is below every other's
    assert all(d["separated"] for d in depths) and text.count("the cheapest server there") == 2


def test_starvation_per_design_with_its_worst_configuration():
    summary = pd.DataFrame(
        [
            {"architecture": "blocking", "connections": 10, "starved_connections_mean": 9.0},
            {"architecture": "blocking", "connections": 400, "starved_connections_mean": 399.0},
            {"architecture": "blocking", "connections": 1, "starved_connections_mean": 0.0},
            {"architecture": "epoll", "trigger": "level", "connections": 100, "starved_connections_mean": 0.0},
            {"architecture": "nginx", "threads": 1, "connections": 100, "starved_connections_mean": float("nan")},
        ]
    )
    found = facts.starvation_facts(summary)
    assert found["measured"] and found["never"] == ["epoll (level)"] and found["unmeasured"] == ["nginx"]
    (blocking,) = found["starving"]
    assert {k: blocking[k] for k in ("name", "starved", "connections", "configurations", "of")} == {
        "name": "blocking",
        "starved": "399",
        "connections": "400",
        "configurations": "2",
        "of": "3",
    }
    text = " ".join(Prose().block(TEMPLATE, "starvation", found, figure=False).split())
    assert "blocking (399 of 400; 2 of 3)." in text and "nginx reports no such count." in text
    assert "Figure" not in text and r"Table~\ref{tab:configurations}" in text
    assert facts.starvation_facts(pd.DataFrame()) == {"measured": False}


def test_what_this_machine_could_not_test_comes_from_the_records():
    metas = [{"parameters": {}}, {"parameters": {"placement": "netns", "link": "1gbit"}}]
    picks = {"unranked": [{"reason": "client", "points": ["close", "idle 1000"]}], "points": "5"}
    here = facts.limit_facts(pd.DataFrame({"server_cpus": ["0", "0"]}), metas, picks, ["not testable here", "agree"])
    assert here["one_cpu"] and not here["second_host"] and not here["delay"]
    assert here["placements"] == ["loopback", "netns"] and here["links"] == ["1gbit"]
    assert here["unranked_points"] == 2 and (here["untestable_sources"], here["sources"]) == ("1", "2")
    assert here["summary"]  # the sources' verdicts: the summary table to cite
    text = " ".join(Prose().block(TEMPLATE, "limits", here).split())
    assert "Multi-core scaling" in text and "A second host" in text and "no delay" in text
    # Server and load generator shared a machine in each campaign; the campaigns need not share one machine.
    assert "Each campaign ran on one machine (placement loopback and netns)" in text and "this one machine" not in text
    assert "Rankings at 2 of 5 workload points" in text
    elsewhere = facts.limit_facts(
        pd.DataFrame({"server_cpus": ["0-3"]}),
        [{"parameters": {"placement": "ssh"}}, {"parameters": {"placement": "netns", "link": "1gbit 50us"}}],
        {},
        [],
    )
    assert elsewhere["server_cpus"] == "4" and not elsewhere["one_cpu"]
    assert elsewhere["second_host"] and elsewhere["delay"]
    text = " ".join(Prose().block(TEMPLATE, "limits", elsewhere).split())
    assert "Scaling beyond 4 CPUs" in text and "second host" not in text and "Wire latency" not in text


@pytest.mark.integration
def test_the_findings_come_first_and_cite_only_labels_that_exist(root, tmp_path):
    paper = tmp_path / "paper"
    shutil.copytree(PAPER / "templates", paper / "templates")
    for name in ("report.tex", "references.bib"):
        shutil.copy(PAPER / name, paper / name)
    report.build_report(
        {"main": "fixture-architectures", "workloads": sw.WORKLOADS},
        paths=report.ReportPaths(
            raw_root=root,
            processed_dir=tmp_path / "processed",
            generated_dir=paper / "generated",
            figures_dir=paper / "figures",
            templates_dir=paper / "templates",  # the copy: the rendered sections' \input is relative to it
        ),
    )
    front = (paper / "generated" / "front.tex").read_text().splitlines()
    # The abstract, then the findings, before the introduction.
    assert front[1:] == [r"\input{generated/section-abstract}", r"\input{generated/section-findings}"]
    findings = (paper / "generated" / "section-findings.tex").read_text()
    assert r"\label{tab:findings-cpu}" in findings and "nan" not in re.findall(r"[a-z]+", findings.lower())
    sources = [paper / "report.tex", *(paper / "generated").glob("*.tex"), *(paper / "templates").glob("*/*.tex")]
    labels = {label for path in sources for label in re.findall(r"\\label\{([^}]+)\}", path.read_text())}
    assert set(re.findall(r"\\ref\{([^}]+)\}", findings)) - labels == set()
