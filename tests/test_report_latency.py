"""The latency section (source 001): knees with client-bound exclusion and the no-knee case, the load
generator's floor, source 001's set-up, macros for full and empty campaigns, the real fixture campaigns."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest
import synthetic_studies as ss  # tests/fixtures/campaigns/synthetic_studies.py (pytest pythonpath)

from archbench.analyze.open_loop_checks import assess
from archbench.parse import parse_file
from archbench.report import build as report
from archbench.report import latex
from archbench.report.studies import latency as report_latency
from archbench.report.study import ReportOptions

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
PAPER = Path(__file__).resolve().parents[1] / "paper"

SECTION = PAPER / "templates" / "latency" / "section.tex"


@pytest.fixture(scope="module")
def synthetic_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("latency-raw")
    ss.write_latency_campaigns(root)
    ss.write_slow_latency_campaign(root)
    return root


@pytest.fixture(scope="module")
def synthetic(synthetic_root, tmp_path_factory) -> report_latency.LatencyStudy:
    return report_latency.process_latency_campaigns(ss.LATENCY, synthetic_root, tmp_path_factory.mktemp("processed"))


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> report_latency.LatencyStudy:
    return report_latency.process_latency_campaigns("fixture-latency", FIXTURES, tmp_path_factory.mktemp("real"))


def macros_of(study: report_latency.LatencyStudy, tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    macros = latex.MacroSet()
    files = study.outputs(macros, tmp_path / "paper", tmp_path / "paper" / "figures")
    return files, {name: m.value for name, m in macros.macros.items()}


def knee_row(study: report_latency.LatencyStudy, architecture: str) -> pd.Series:
    rows = study.knees[study.knees["architecture"] == architecture]
    assert len(rows) == 1
    return rows.iloc[0]


def rate_row(study: report_latency.LatencyStudy, architecture: str, offered: float, setup: str = "sweep") -> pd.Series:
    rows = study.summary[
        (study.summary["architecture"] == architecture)
        & (study.summary["offered_rate"] == offered)
        & (study.summary["setup"] == setup)
    ]
    assert len(rows) == 1
    return rows.iloc[0]


# --------------------------------------------------------------------------- synthetic: the definitions


def test_set_ups_are_read_from_the_data(synthetic):
    assert [c.path.name for c in synthetic.campaigns] == [ss.LATENCY, ss.LATENCY_001]  # the -001 sibling is found
    assert (synthetic.trials["setup"] == "source_001").sum() == 8
    assert set(synthetic.trials[synthetic.trials["campaign"] == ss.LATENCY]["setup"]) == {"sweep"}
    assert set(synthetic.trials["tool"]) == {"oha", "wrk2"}


def test_client_bound_trials_are_marked_and_excluded_from_the_knee(synthetic):
    trials = synthetic.trials
    bound = trials[trials["client_bound"]]
    # cpus_busy 0.97 and 0.96, and one by cpu_utilisation 0.95 alone.
    assert sorted(bound["trial_id"]) == [
        "epoll-level-c100-lt1-d2s-oha-rate50000-r02",
        "epoll-level-c100-lt1-d2s-oha-rate90000-r01",
        "epoll-level-c100-lt1-d2s-oha-rate90000-r02",
    ]
    assert rate_row(synthetic, "epoll", 50_000)["qualifies_1ms"] == "yes"  # its eligible trial meets 1 ms
    assert rate_row(synthetic, "epoll", 90_000)["qualifies_1ms"] == "excluded"  # p99 0.9 ms, but only client-bound
    epoll = knee_row(synthetic, "epoll")
    assert epoll["knee_1ms"] == 50_000 and epoll["knee_10ms"] == 50_000 and epoll["knee_1ms_fraction"] == 0.5
    assert epoll["n_client_bound"] == 3 and epoll["n_excluded_rates"] == 1


def test_no_knee_reports_the_lowest_p99_and_why(synthetic):
    reactor = knee_row(synthetic, "reactor")
    assert math.isnan(reactor["knee_1ms"]) and reactor["knee_10ms"] == 60_000
    assert reactor["lowest_p99_s"] == pytest.approx(0.002) and reactor["lowest_p99_rate"] == 12_000
    blocking = knee_row(synthetic, "blocking")
    assert math.isnan(blocking["knee_1ms"]) and math.isnan(blocking["knee_10ms"])
    assert blocking["why_no_knee_10ms"] == "errors"  # p99 3 ms at 1,000 req/s, but 4 timeouts
    assert rate_row(synthetic, "blocking", 1_000)["n_flagged"] == 1


def test_load_generator_floor_near_the_threshold(synthetic, tmp_path):
    floor = synthetic.floor
    assert floor.p99_s == pytest.approx(0.0005) and floor.server == "epoll (level)" and floor.rate == 10_000
    _, macros = macros_of(synthetic, tmp_path)
    text = macros[r"\abLatencyFloorSentence"]
    assert "0.500\\,ms" in text and "near the 1\\,ms" in text and "p99 $<$ 10\\,ms" in text
    knees = macros[r"\abLatencyKneeFinding"]
    assert "Under p99 $<$ 1\\,ms the knees are: epoll (level) 50,000 requests/s (50\\,\\% of its saturation)" in knees
    assert "reactor (2 threads) 60,000 requests/s" in knees
    assert "blocking (lowest p99 3.00\\,ms; the rates with a p99 below the threshold failed on socket errors" in knees


def test_floor_above_the_threshold_says_the_criterion_cannot_be_met(synthetic_root, tmp_path):
    slow = report_latency.process_latency_campaigns(ss.LATENCY_SLOW, synthetic_root, tmp_path / "processed")
    assert len(slow.campaigns) == 1 and slow.setup("source_001").empty
    assert slow.floor.p99_s == pytest.approx(0.002)
    files, macros = macros_of(slow, tmp_path)
    assert "cannot be met with this tool on this machine" in macros[r"\abLatencyFloorSentence"]
    assert macros[r"\abLatencyKneeFinding"].startswith("Under p99 $<$ 1\\,ms no server has a knee")
    assert "epoll (level) 50,000 requests/s" in macros[r"\abLatencyKneeFinding"]  # under 10 ms
    assert "& none & -- & 50,000 & 50\\,\\% &" in files[report_latency.KNEES_TABLE_FILE]
    assert "no trial of source~001's set-up" in files[report_latency.SOURCE_001_TABLE_FILE]
    assert "no trial of source~001's set-up" in macros[r"\abLatencySourceOneSetup"]


def test_thresholds_are_parameters(synthetic_root, tmp_path):
    criteria = report_latency.Criteria(p99_s=0.0006, p99_alt_s=0.0025)
    study = report_latency.process_latency_campaigns(ss.LATENCY, synthetic_root, None, criteria=criteria)
    assert knee_row(study, "epoll")["knee_0.6ms"] == 10_000  # 50,000's p99 of 0.8 ms no longer qualifies
    assert knee_row(study, "reactor")["knee_2.5ms"] == 12_000
    _, macros = macros_of(study, tmp_path)
    assert macros[r"\abLatencyKneeThreshold"] == "0.6" and macros[r"\abLatencyKneeAltThreshold"] == "2.5"
    for bad in (0, -1.0, "1"):
        with pytest.raises(report.ParameterError, match="latency_knee_p99_ms"):
            report.build_report(
                "fixture-minimal",
                raw_root=FIXTURES,
                processed_dir=tmp_path / "p",
                generated_dir=tmp_path / "g",
                figures_dir=tmp_path / "f",
                options=ReportOptions(latency_knee_p99_ms=bad),
            )


def test_source_001_table_and_comparison(synthetic, tmp_path):
    fixed = synthetic.setup("source_001")
    assert list(fixed["architecture"]) == ["blocking", "thread_per_conn", "epoll", "reactor"]
    assert set(fixed["offered_rate"]) == {90_000} and set(fixed["connections"]) == {2000}
    blocking = rate_row(synthetic, "blocking", 90_000, "source_001")
    assert blocking["timeouts_mean"] == 1200 and blocking["n_flagged"] == 2
    files, macros = macros_of(synthetic, tmp_path)
    table = files[report_latency.SOURCE_001_TABLE_FILE]
    assert "90,000\\,requests/s" in table and "over 2,000 connections" in table
    assert "& 97,015 & 48.5\\,\\% & 33.4 & 14,000 \\\\" in table  # source 001's thread-per-connection, cited
    assert "& 98 & 0.049\\,\\% & 5.66 & 28,860 \\\\" in table
    finding = macros[r"\abLatencySourceOneFinding"]
    assert finding.startswith("As in source~001, the single-thread epoll server's largest latency (3,000\\,ms)")
    assert "reactor (2 threads) 97.8\\,\\% (001: 95.5\\,\\%)" in finding
    assert "Requests timed out with blocking" in finding
    assert "every one offered 90,000 requests/s: 90\\,\\% of 100,000 requests/s" in macros[r"\abLatencySourceOneSetup"]


def test_tool_sentence_names_wrk2_and_oha(synthetic, tmp_path):
    _, macros = macros_of(synthetic, tmp_path)
    tool = macros[r"\abLatencyToolSentence"]
    assert "\\texttt{oha} (18 trials) and \\texttt{wrk2} (6 trials)" in tool
    assert "wrk2 was used" in tool and "latency-correction" in tool
    assert "oha 1.16.0" in tool


def test_rates_table_marks_and_verdicts(synthetic, tmp_path):
    files, _ = macros_of(synthetic, tmp_path)
    table = files[report_latency.RATES_TABLE_FILE]
    rows = [line for line in table.splitlines() if line.count(" & ") > 10]
    epoll_90 = next(r for r in rows if r.startswith("90,000 &") and "& excl. & excl." in r)
    assert latex.CLIENT_BOUND_MARK in epoll_90
    assert any(r.startswith("1,000 & 10\\,\\% & 1 & 995" + latex.FLAGGED_MARK) for r in rows)  # blocking, timeouts
    assert "\\multicolumn{13}{@{}l}{\\textit{blocking}}" in table
    assert "longtable" in table and r"\label{tab:latency-rates}" in table
    assert "nan" not in re.findall(r"[a-z]+", table.lower())


# --------------------------------------------------------------------------- real campaigns (runner, oha)


def test_real_campaign_numbers_come_from_the_oha_outputs(real):
    assert [c.path.name for c in real.campaigns] == ["fixture-latency", "fixture-latency-001"]
    sweep = real.setup("sweep")
    assert len(sweep) == 16 and set(sweep["n"]) == {2} and len(real.setup("source_001")) == 4
    trial = real.trials[real.trials["trial_id"] == "epoll-level-c100-lt1-d2s-oha-rate7917-r01"].iloc[0]
    parsed = parse_file(FIXTURES / "fixture-latency" / "epoll-level-c100-lt1-d2s-oha-rate7917-r01.oha.txt")
    assert trial["latency_p99_s"] == parsed["latency_s"]["percentiles"]["99"]
    assert trial["latency_p99_9_s"] == parsed["latency_s"]["percentiles"]["99.9"]
    assert trial["achieved_rate"] == parsed["requests_per_sec"]
    assert trial["achieved_fraction"] == pytest.approx(parsed["requests_per_sec"] / 7917)
    # Client-bound from the recorded load.cpus_busy (>= 0.95) and load.cpu_utilisation.
    expected = (real.trials["load_cpus_busy"] >= 0.95) | (real.trials["load_cpu_utilisation"] >= 0.95)
    assert list(real.trials["client_bound"]) == list(expected) and expected.any()


def test_real_campaign_knees_follow_the_definition(real):
    for _, row in real.knees.iterrows():
        server = real.summary[(real.summary["server_key"] == row["server_key"]) & (real.summary["setup"] == "sweep")]
        for key in ("1ms", "10ms"):
            qualifying = server[server[f"qualifies_{key}"] == "yes"]["offered_rate"]
            if qualifying.empty:
                assert math.isnan(row[f"knee_{key}"])
            else:
                assert row[f"knee_{key}"] == qualifying.max()
    eligible = real.trials[(real.trials["setup"] == "sweep") & ~real.trials["client_bound"]]
    assert real.floor.p99_s >= eligible["latency_p99_s"].min()


@pytest.mark.parametrize("case", ["synthetic", "real", "slow", "closed-loop-only", "none", "not-found"])
def test_every_macro_of_the_latency_section_is_defined(case, synthetic_root, tmp_path):
    name, root = {
        "synthetic": (ss.LATENCY, synthetic_root),
        "real": ("fixture-latency", FIXTURES),
        "closed-loop-only": ("fixture-latency-closed", FIXTURES),
        "slow": (ss.LATENCY_SLOW, synthetic_root),
        "none": (None, synthetic_root),
        "not-found": ("no-such-latency", synthetic_root),
    }[case]
    if case == "not-found":
        with pytest.warns(UserWarning):
            study = report_latency.process_latency_campaigns(name, root, tmp_path / "processed")
    else:
        study = report_latency.process_latency_campaigns(name, root, tmp_path / "processed")
    files, macros = macros_of(study, tmp_path)
    used = latex.macros_used(SECTION.read_text())
    for text in files.values():
        used |= latex.macros_used(text)
    assert {m for m in used if m.startswith(r"\abLatency")} - set(macros) == set()
    assert sorted(files) == sorted(report_latency.GENERATED_FILES)
    for text in [*files.values(), *macros.values()]:
        assert "nan" not in re.findall(r"[a-z]+", text.lower())
        assert not re.search(r"(?<!\\)_", re.sub(r"\\(label|ref|includegraphics)\{[^}]*\}", "", text)), text
    if case in ("none", "not-found"):
        assert macros[r"\abLatencyCampaignSentence"].startswith("This section has no measurements")
        assert all(r"\begin" not in text for text in files.values())
    if case == "closed-loop-only":
        assert study.trials.empty and "no open-loop trial" in macros[r"\abLatencyToolSentence"]
        assert "no fraction-sweep trial" in files[report_latency.RATES_TABLE_FILE]


def test_processed_csvs(synthetic_root, tmp_path):
    study = report_latency.process_latency_campaigns(ss.LATENCY, synthetic_root, tmp_path / "processed")
    assert sorted(p.name for p in study.csv_files.values()) == sorted(
        [report_latency.TRIALS_CSV, report_latency.SUMMARY_CSV, report_latency.KNEES_CSV]
    )
    knees = pd.read_csv(study.csv_files[report_latency.KNEES_CSV])
    assert list(knees["architecture"]) == ["blocking", "epoll", "reactor"]
    trials = pd.read_csv(study.csv_files[report_latency.TRIALS_CSV])
    assert len(trials) == 24 and trials["client_bound"].sum() == 3  # 16 sweep + 8 of source 001


# --------------------------------------------------------------------------- the shipped open_loop campaign

SHIPPED = "reference-latency-designs"
RAW = Path(__file__).resolve().parents[1] / "data" / "raw"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> report_latency.LatencyStudy:
    return report_latency.process_latency_campaigns(SHIPPED, RAW, tmp_path_factory.mktemp("shipped"))


def test_shipped_open_loop_trials_carry_the_run_checks(shipped):
    """Every measured trial's checks are open_loop_checks.assess's on its own output; usable means sustained, not
    client-bound and unflagged; the knee is taken only from usable rates."""
    measured = shipped.trials[~shipped.trials["warmup"].astype(bool) & (shipped.trials["status"] == "ok")]
    assert set(measured["tool"]) == {"open_loop"} and set(measured["arrival"]) == {"poisson"}
    for _, trial in measured.iterrows():
        parsed = parse_file(RAW / trial["campaign"] / f"{trial['trial_id']}.open_loop.txt")
        flags = assess(parsed)["flags"]
        assert [f for f in str(trial["checks"]).split(";") if f] == flags
        assert trial["sustained"] == ("did_not_sustain" not in flags)
        assert trial["usable"] == (trial["sustained"] and not trial["client_bound"] and not trial["flagged"])
    sweep = measured[measured["setup"] == "sweep"]
    assert sweep["usable"].mean() >= 0.9  # the target for the study's trials, met by the sweep
    assert not measured["client_bound"].any()
    for _, knee in shipped.knees.iterrows():
        if not math.isnan(knee["knee_1ms"]):
            at = sweep[(sweep["server_key"] == knee["server_key"]) & (sweep["offered_rate"] == knee["knee_1ms"])]
            assert at["usable"].all() and (at["latency_p99_s"] < 0.001).all()


def test_shipped_section_names_the_checks_and_the_left_out_server(shipped, tmp_path):
    _, values = macros_of(shipped, tmp_path)
    checks = " ".join(values[r"\abLatencyChecksSentence"].split())
    measured = shipped.trials[~shipped.trials["warmup"].astype(bool) & (shipped.trials["status"] == "ok")]
    assert f"Of the {len(measured)} measured open-loop trials, {int(measured['usable'].sum())}" in checks
    assert r"\cite{lancet}" in checks
    knees = " ".join(values[r"\abLatencyKneeFinding"].split())
    assert "blocking is not in the fraction sweep" in knees
    assert "20" in values[r"\abLatencyWorkSentence"] and "Poisson" in values[r"\abLatencyWorkSentence"]
    assert r"\texttt{open\_loop}" in values[r"\abLatencyToolSentence"]
