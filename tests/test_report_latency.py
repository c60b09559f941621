"""The latency section (source 001): each design's floor and its knee against it (a clear knee, noisy trials, a floor
above the threshold), client-bound trials, source 001's set-up, macros for full and empty campaigns, the real fixture
campaigns. The rule itself is tested on its own in tests/test_latency_knee.py."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest
import synthetic_studies as ss  # tests/fixtures/campaigns/synthetic_studies.py (pytest pythonpath)

from archbench.analyze import open_loop_trials
from archbench.analyze.open_loop_checks import assess
from archbench.data import storage
from archbench.parse import parse_file
from archbench.render import latex
from archbench.render.study import ReportOptions
from archbench.report import build as report
from archbench.studies import latency as report_latency
from archbench.studies.latency.data import LatencyResults

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"

# The section's sentences these tests read, by their names in paper/templates/latency/sentences.tex.j2.


@pytest.fixture(scope="module")
def synthetic_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("latency-raw")
    ss.write_latency_campaigns(root)
    ss.write_slow_latency_campaign(root)
    ss.write_disturbed_latency_campaign(root)
    return root


@pytest.fixture(scope="module")
def synthetic(synthetic_root, tmp_path_factory) -> LatencyResults:
    return report_latency.LATENCY.read([ss.LATENCY], synthetic_root, tmp_path_factory.mktemp("processed"))


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> LatencyResults:
    return report_latency.LATENCY.read(["fixture-latency"], FIXTURES, tmp_path_factory.mktemp("real"))


def outputs_of(study: LatencyResults, tmp_path: Path) -> tuple[dict[str, str], dict[str, str], str]:
    """The generated files, the macros and sentences by name, and the rendered section (rendered_study)."""
    return ss.rendered_study(report_latency.LATENCY, study, tmp_path)


def macros_of(study: LatencyResults, tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    files, values, _ = outputs_of(study, tmp_path)
    return files, values


def knee_row(study: LatencyResults, architecture: str) -> pd.Series:
    rows = study.knees[study.knees["architecture"] == architecture]
    assert len(rows) == 1
    return rows.iloc[0]


def rate_row(study: LatencyResults, architecture: str, offered: float, setup: str = "sweep") -> pd.Series:
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


def test_the_trials_frame_is_the_analyze_stages_with_the_trial_marks_alone(synthetic_root, synthetic):
    """The study's trials are archbench.analyze.open_loop_trials.latency_trials' frame, and only the trial marks
    (client-bound, kept up) shape it: the knee's own criteria (its threshold) leave it as it is."""
    campaigns = [storage.load_campaign(synthetic_root / name) for name in (ss.LATENCY, ss.LATENCY_001)]
    trials = open_loop_trials.latency_trials(campaigns, open_loop_trials.TrialCriteria())
    pd.testing.assert_frame_equal(trials, synthetic.trials)
    strict = report_latency.Criteria(p99_s=0.0001)
    assert isinstance(strict, open_loop_trials.TrialCriteria)
    pd.testing.assert_frame_equal(open_loop_trials.latency_trials(campaigns, strict), trials)
    fell_behind = trials[(trials["architecture"] == "epoll") & (trials["offered_rate"] == 110_000)]
    assert not fell_behind["kept_up"].any() and (fell_behind["knee_p99_s"].dropna() == math.inf).all()
    assert (trials[trials["setup"] == open_loop_trials.SETUP_FIXED]["campaign"] == ss.LATENCY_001).all()


def test_client_bound_trials_are_marked_and_not_counted_for_the_knee(synthetic):
    trials = synthetic.trials
    bound = trials[trials["client_bound"]]
    # cpus_busy 0.97 at 70,000, and one by cpu_utilisation 0.95 alone at 110,000.
    assert sorted(bound["trial_id"]) == [
        "epoll-level-c100-lt1-d2s-oha-rate110000-r04",
        "epoll-level-c100-lt1-d2s-oha-rate70000-r04",
    ]
    assert bound["knee_p99_s"].isna().all()
    assert rate_row(synthetic, "epoll", 70_000)["n_knee"] == 3 and rate_row(synthetic, "epoll", 70_000)["n"] == 4
    assert knee_row(synthetic, "epoll")["n_client_bound"] == 2


def test_floor_well_under_the_threshold_with_a_clear_knee(synthetic):
    epoll = knee_row(synthetic, "epoll")
    assert epoll["floor_state"] == "well_under" and epoll["floor_p99_s"] == pytest.approx(0.000255)
    assert epoll["floor_rate"] == 50_000 and epoll["floor_n"] == 4
    assert epoll["knee_state"] == "knee" and epoll["knee_rate"] == 90_000 and epoll["knee_fraction"] == 0.9
    assert epoll["below_rate"] == 70_000 and epoll["below_fraction"] == 0.7
    assert epoll["knee_p99_s"] == pytest.approx(0.0019) and epoll["trials_per_rate"] == 3
    verdicts = [rate_row(synthetic, "epoll", r)["versus_floor"] for r in (50_000, 70_000, 90_000, 110_000)]
    assert verdicts == ["floor", "held", "risen", "risen"]
    assert rate_row(synthetic, "epoll", 90_000)["p_risen"] == pytest.approx(1 / 70)
    # 110,000 fell behind (95,000 achieved): its trials count as above any multiple of the floor.
    assert rate_row(synthetic, "epoll", 110_000)["n_fell_behind"] == 3
    assert rate_row(synthetic, "epoll", 110_000)["knee_p99_s_median"] == math.inf


def test_noisy_trials_make_no_knee(synthetic):
    reactor = knee_row(synthetic, "reactor")
    assert reactor["floor_state"] == "well_under" and reactor["knee_state"] == "undecided"
    assert math.isnan(reactor["knee_rate"])
    sweep = synthetic.setup("sweep")
    noisy = sweep[sweep["architecture"] == "reactor"]
    assert list(noisy["versus_floor"]) == ["floor", "undecided", "undecided"]
    trials = synthetic.trials[(synthetic.trials["architecture"] == "reactor") & (synthetic.trials["setup"] == "sweep")]
    assert (trials["latency_p99_s"] > 2 * reactor["floor_p99_s"]).sum() == 3  # single trials far above twice it


def test_floor_above_the_threshold_measures_no_knee(synthetic, tmp_path):
    blocking = knee_row(synthetic, "blocking")
    assert blocking["floor_state"] == "dominates" and blocking["knee_state"] == "not_measured"
    assert blocking["floor_p99_s"] == pytest.approx(0.003) and blocking["n_flagged"] == 1
    assert rate_row(synthetic, "blocking", 5_000)["versus_floor"] == "untested"
    files, macros = macros_of(synthetic, tmp_path)
    floor = " ".join(macros["floor"].split())
    assert "was 0.255--3.00\\,ms" in floor
    assert "The floors of 2 of the 3 designs were well under the 1\\,ms threshold (at most 0.5\\,ms)" in floor
    assert "for blocking (3.00\\,ms) the knee is not measured." in floor  # oha records no lateness of its own
    knees = " ".join(macros["knees"].split())
    assert "The p99 rose beyond 2 times its floor between 70 and 90\\,\\% of saturation for epoll (level)" in knees
    assert "The trials did not decide for reactor (2 threads)" in knees
    assert "For blocking the floor was not well under 1\\,ms, so no knee is measured" in knees
    table = files[report_latency.KNEES_TABLE_FILE]
    assert "epoll (level) & 100,000 & 50\\,\\% & 0.255 & 70--90\\,\\% & 1.90 & 3 & 2 & 0 \\\\" in table
    assert "reactor (2 threads) & 120,000 & 50\\,\\% & 0.295 & undecided & -- & 4 & 0 & 0 \\\\" in table
    assert "blocking & 10,000 & 10\\,\\% & 3.00 & floor & -- & 4 & 0 & 0 \\\\" in table


def test_the_finding_is_rendered_from_the_knees_table(synthetic, tmp_path):
    """The findings' latency sentence and the knees table are one decision: every design named in the finding under the group
    its row's state puts it in."""
    _, macros = macros_of(synthetic, tmp_path)
    finding = " ".join(macros["finding"].split())
    assert finding.startswith("With 20\\,\\textmu s of work") is False  # the synthetic trials record no work
    assert "The 99th-percentile latency rose beyond 2 times its floor (0.255--0.295\\,ms at 50\\,\\% of" in finding
    assert "between 70 and 90\\,\\% of saturation for epoll (level)" in finding
    assert "the trials did not decide for reactor (2 threads)" in finding
    assert "for blocking the floor was not well under 1\\,ms and the knee is not measured" in finding
    assert "(3--4 per rate)" in finding  # epoll's 70,000 and 110,000 have a client-bound trial each


def test_a_finding_without_a_knee_says_no_rise_was_shown(tmp_path):
    """Floors well under the threshold and p99 within twice the floor up to the highest rate: the finding says no
    design was shown to rise, and names the design whose highest rate held."""
    writer = ss.StudyWriter(tmp_path / "raw", "flat-latency", {"rate_fractions": [0.5, 0.9], "rate_reference": None})
    for offered, p99s in ((50_000, (0.25, 0.26, 0.24)), (90_000, (0.30, 0.31, 0.29))):
        config = ss.open_config("epoll", 100, offered, "epoll-level-c100", 100_000.0, trigger="level")
        for repetition, p99 in enumerate(p99s, start=1):
            output = ss.oha_output(offered * 0.999, p99 / 4, p99 / 2, p99, p99, p99)
            writer.trial(ss.open_id(config), config, repetition, tool="oha", output=output)
    writer.finish("latency")
    study = report_latency.LATENCY.read(["flat-latency"], tmp_path / "raw", None)
    assert knee_row(study, "epoll")["knee_state"] == "beyond"
    files, macros = macros_of(study, tmp_path)
    finding = " ".join(macros["finding"].split())
    assert finding.startswith("No design's 99th-percentile latency was shown to rise beyond 2 times its floor (0.250")
    assert "it stayed within it up to the highest rate for epoll (level)" in finding and "rose" not in finding
    assert (
        "epoll (level) & 100,000 & 50\\,\\% & 0.250 & beyond & -- & 3 & 0 & 0" in files[report_latency.KNEES_TABLE_FILE]
    )


def test_a_floor_above_the_threshold_everywhere_says_the_machine_dominates(synthetic_root, tmp_path):
    slow = report_latency.LATENCY.read([ss.LATENCY_SLOW], synthetic_root, tmp_path / "processed")
    assert len(slow.campaigns) == 1 and slow.setup("source_001").empty
    epoll = knee_row(slow, "epoll")
    assert epoll["floor_p99_s"] == pytest.approx(0.002) and epoll["knee_state"] == "not_measured"
    files, macros = macros_of(slow, tmp_path)
    assert "No design's floor was well under the 1\\,ms threshold" in " ".join(macros["floor"].split())
    finding = " ".join(macros["finding"].split())
    assert finding.startswith("No design's p99 floor, the median p99 at its lowest offered rate (2.00\\,ms), was well")
    assert finding.endswith("so the servers' knees are not measured here.") and "rose beyond" not in finding
    assert "& floor & -- &" in files[report_latency.KNEES_TABLE_FILE]
    assert "no trial of source~001's set-up" in files[report_latency.SOURCE_001_TABLE_FILE]
    assert "no trial of source~001's set-up" in macros["setup"]


def test_disturbed_trials_are_not_counted_and_without_a_floor_no_knee_is_measured(synthetic_root, tmp_path):
    study = report_latency.LATENCY.read([ss.LATENCY_DISTURBED], synthetic_root, None)
    assert (
        study.trials["disturbed"].sum() == 6 and study.trials.loc[study.trials["disturbed"], "knee_p99_s"].isna().all()
    )
    epoll = knee_row(study, "epoll")
    assert epoll["floor_state"] == "unmeasured" and epoll["knee_state"] == "not_measured"
    assert epoll["n_disturbed"] == 6 and epoll["floor_n"] == 0
    files, macros = macros_of(study, tmp_path)
    finding = " ".join(macros["finding"].split())
    assert finding.startswith("No design's p99 floor was measured: at each design's lowest offered rate fewer than 3")
    assert "the servers' knees are not measured here" in finding
    assert "so no design's floor is known" in " ".join(macros["floor"].split())
    checks = " ".join(macros["checks"].split())
    assert (
        "it counts 2, leaving out client-bound trials, those with too few samples for their p99 and disturbed" in checks
    )
    assert "(6 here: other work took" in checks
    assert "at least 10\\,\\% of the server's or the client's CPU" in checks
    assert (
        "epoll (level) & 100,000 & 50\\,\\% & -- & floor & -- & 0 & 0 & 6 \\\\"
        in files[report_latency.KNEES_TABLE_FILE]
    )


def test_the_threshold_is_a_parameter(synthetic_root, tmp_path):
    strict = ReportOptions(latency_knee_p99_ms=0.4)  # the epoll floor, 0.255 ms, is no longer well under 0.2 ms
    study = report_latency.LATENCY.read([ss.LATENCY], synthetic_root, None, strict)
    assert knee_row(study, "epoll")["knee_state"] == "not_measured"
    lenient = ReportOptions(latency_knee_p99_ms=10.0)  # blocking's 3 ms floor is well under 5 ms
    study = report_latency.LATENCY.read([ss.LATENCY], synthetic_root, None, lenient)
    assert knee_row(study, "blocking")["floor_state"] == "well_under"
    _, macros = macros_of(study, tmp_path)
    assert macros[r"\abLatencyKneeThreshold"] == "10" and macros[r"\abLatencyFloorLimit"] == "5"
    assert macros[r"\abLatencyRiseMultiple"] == "2" and macros[r"\abLatencyKneeAlpha"] == "0.05"
    for bad in (0, -1.0, "1"):
        with pytest.raises(report.ParameterError, match="latency_knee_p99_ms"):
            report.build_report(
                "fixture-minimal",
                paths=report.ReportPaths(
                    raw_root=FIXTURES,
                    processed_dir=tmp_path / "p",
                    generated_dir=tmp_path / "g",
                    figures_dir=tmp_path / "f",
                ),
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
    finding = macros["source_001"]
    # One maximum per design over a few trials is described, never taken to order the designs.
    largest = "The single-thread epoll server's largest observed latency was 3,000\\,ms over 2 trials, the reactor's"
    assert " ".join(finding.split()).startswith(largest)
    assert "which no test compares" in finding and "exceeds" not in finding and "As in source" not in finding
    assert "reactor (2 threads) 97.8\\,\\% (001: 95.5\\,\\%)" in finding
    assert "Requests timed out with blocking" in finding
    assert "every one offered 90,000 requests/s: 90\\,\\% of 100,000 requests/s" in macros["setup"]


def test_tool_sentence_names_wrk2_and_oha(synthetic, tmp_path):
    _, macros = macros_of(synthetic, tmp_path)
    tool = macros["tool"]
    assert "\\texttt{oha} (32 trials) and \\texttt{wrk2} (12 trials)" in tool
    assert "wrk2 was used" in tool and "latency-correction" in tool
    assert "oha 1.16.0" in tool


def test_the_knee_paragraph_states_the_rate_fallback_only_for_clients_without_counts(synthetic, tmp_path):
    """oha and wrk2 count no scheduled requests, so "kept up" falls back to the achieved rate: the knee's paragraph
    says so there, as the checks sentence does; a campaign of open_loop trials (counts throughout) reads without it."""
    *_, section = outputs_of(synthetic, tmp_path)
    knee = " ".join(section[section.index("A trial counts with its p99") :].split())
    assert knee.startswith(
        "A trial counts with its p99 when it completed at least \\abLatencyKeptUpThreshold\\,\\% of the requests it "
        "scheduled (by the rate, for a client that counts none) without errors,"
    )
    counted = LatencyResults(**{**vars(synthetic), "trials": synthetic.trials.assign(requests_counted=True)})
    *_, section = outputs_of(counted, tmp_path / "counted")
    knee = " ".join(section[section.index("A trial counts with its p99") :].split())
    assert "scheduled without errors," in knee and "counts none" not in knee


def test_rates_table_marks_and_verdicts(synthetic, tmp_path):
    files, _ = macros_of(synthetic, tmp_path)
    table = files[report_latency.RATES_TABLE_FILE]
    rows = [line for line in table.splitlines() if line.count(" & ") > 10]
    epoll_70 = next(r for r in rows if r.startswith("70,000 &"))
    assert latex.CLIENT_BOUND_MARK in epoll_70 and epoll_70.endswith("& held \\\\")
    assert next(r for r in rows if r.startswith("90,000 &")).endswith("& risen \\\\")
    assert next(r for r in rows if r.startswith("50,000 &")).endswith("& floor \\\\")
    assert next(r for r in rows if r.startswith("84,000 &")).endswith("& undec. \\\\")
    assert any(r.startswith("1,000 & 10\\,\\% & 4 & 999" + latex.FLAGGED_MARK) for r in rows)  # blocking, timeouts
    assert next(r for r in rows if r.startswith("5,000 &")).endswith("& -- \\\\")
    assert "\\multicolumn{12}{@{}l}{\\textit{blocking}}" in table
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
    """fixture-latency has two trials per rate: too few to measure a floor (or for the rank test to reach 0.05: one
    split in C(4, 2) = 6), so no design has a knee."""
    for _, row in real.knees.iterrows():
        assert row["knee_state"] == "not_measured" and math.isnan(row["knee_rate"])
        floor = real.trials[
            (real.trials["server_key"] == row["server_key"])
            & (real.trials["offered_rate"] == row["floor_rate"])
            & real.trials["knee_p99_s"].notna()
        ]
        assert row["floor_p99_s"] == pytest.approx(floor["knee_p99_s"].median())
        assert row["floor_state"] == "unmeasured"  # fewer than three trials: no single trial sets a floor


@pytest.mark.parametrize("case", ["synthetic", "real", "slow", "disturbed", "closed-loop-only", "none", "not-found"])
def test_every_macro_of_the_latency_section_is_defined(case, synthetic_root, tmp_path):
    name, root = {
        "synthetic": (ss.LATENCY, synthetic_root),
        "real": ("fixture-latency", FIXTURES),
        "closed-loop-only": ("fixture-latency-closed", FIXTURES),
        "slow": (ss.LATENCY_SLOW, synthetic_root),
        "disturbed": (ss.LATENCY_DISTURBED, synthetic_root),
        "none": (None, synthetic_root),
        "not-found": ("no-such-latency", synthetic_root),
    }[case]
    if case == "not-found":
        with pytest.warns(UserWarning):
            study = report_latency.LATENCY.read([name], root, tmp_path / "processed")
    else:
        study = report_latency.LATENCY.read([name], root, tmp_path / "processed")
    files, macros, section = outputs_of(study, tmp_path)
    used = latex.macros_used(section)
    for text in files.values():
        used |= latex.macros_used(text)
    assert {m for m in used if m.startswith(r"\abLatency")} - set(macros) == set()
    assert sorted(files) == sorted(report_latency.LATENCY.generated_files)
    for text in [*files.values(), *macros.values()]:
        assert "nan" not in re.findall(r"[a-z]+", text.lower())
        assert not re.search(r"(?<!\\)_", re.sub(r"\\(label|ref|includegraphics)\{[^}]*\}", "", text)), text
    if case in ("none", "not-found"):
        assert macros["campaign"].startswith("This section has no measurements")
        assert all(r"\begin" not in text for text in files.values())
    if case == "closed-loop-only":
        assert study.trials.empty and "no open-loop trial" in macros["tool"]
        assert "no fraction-sweep trial" in files[report_latency.RATES_TABLE_FILE]


def test_processed_csvs(synthetic_root, tmp_path):
    processed = tmp_path / "processed"
    report_latency.LATENCY.read([ss.LATENCY], synthetic_root, processed)
    assert sorted(p.name for p in processed.iterdir()) == sorted(
        [report_latency.TRIALS_CSV, report_latency.SUMMARY_CSV, report_latency.KNEES_CSV]
    )
    knees = pd.read_csv(processed / report_latency.KNEES_CSV)
    assert list(knees["architecture"]) == ["blocking", "epoll", "reactor"]
    trials = pd.read_csv(processed / report_latency.TRIALS_CSV)
    assert len(trials) == 44 and trials["client_bound"].sum() == 2  # 36 sweep + 8 of source 001
    assert list(knees["knee_state"]) == ["not_measured", "knee", "undecided"]


# --------------------------------------------------------------------------- the shipped open_loop campaign

SHIPPED = "reference-latency-designs"
RAW = Path(__file__).resolve().parents[1] / "data" / "raw"


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> LatencyResults:
    return report_latency.LATENCY.read([SHIPPED], RAW, tmp_path_factory.mktemp("shipped"))


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
        if knee["knee_state"] == "knee":
            at = sweep[(sweep["server_key"] == knee["server_key"]) & (sweep["offered_rate"] == knee["knee_rate"])]
            floor = sweep[(sweep["server_key"] == knee["server_key"]) & (sweep["offered_rate"] == knee["floor_rate"])]
            # Three trials against three: the knee's rate lies wholly above twice the floor's trials.
            assert at["knee_p99_s"].min() > 2 * floor["knee_p99_s"].max()


def test_shipped_campaign_floors_are_well_under_the_threshold(shipped, tmp_path):
    """The shipped campaign ran on a quiet machine: every design's floor is well under 1 ms, so the finding names
    knees; the finding and the knees table name the same designs."""
    assert set(shipped.knees["floor_state"]) == {"well_under"}
    assert (shipped.knees["floor_p99_s"] < 0.0005).all()
    _, values = macros_of(shipped, tmp_path)
    finding = " ".join(values["finding"].split())
    for _, row in shipped.knees.iterrows():
        if row["knee_state"] == "knee":
            low, high = f"{row['below_fraction'] * 100:g}", f"{row['knee_fraction'] * 100:g}"
            assert f"between {low} and {high}" in finding and latex.escape(row["server"]) in finding


def test_shipped_section_names_the_checks_and_the_left_out_server(shipped, tmp_path):
    _, values = macros_of(shipped, tmp_path)
    checks = " ".join(values["checks"].split())
    measured = shipped.trials[~shipped.trials["warmup"].astype(bool) & (shipped.trials["status"] == "ok")]
    assert f"Of the {len(measured)} measured open-loop trials, {int(measured['usable'].sum())}" in checks
    assert r"\cite{lancet}" in checks
    knees = " ".join(values["knees"].split())
    assert "blocking is not in the fraction sweep" in knees
    assert "20" in values["work"] and "Poisson" in values["work"]
    assert r"\texttt{open\_loop}" in values["tool"]


def test_shipped_usable_and_fell_behind_are_one_rule(shipped, tmp_path):
    """Usability's `sustained` and the knee's `kept_up` are one decision (open_loop_checks.kept_up_ratio, the
    counts, which every shipped trial has): a trial at 94.9 % of the offered rate that completed 95.02 % of the
    requests it scheduled is both sustained and kept up. So the sweep's trials that are not usable (none is
    client-bound, flagged, disturbed or short of samples for its p99 there) are the ones the knee counts as fell
    behind, and the text's two counts agree."""
    measured = shipped.trials[~shipped.trials["warmup"].astype(bool) & (shipped.trials["status"] == "ok")]
    assert (measured["sustained"] == measured["kept_up"]).all()
    assert measured["requests_counted"].all()
    # The checks column names the same verdicts the row holds, never a second reading of the rate or the client.
    flags = measured["checks"].fillna("").str.split(";")
    assert (flags.map(lambda f: "did_not_sustain" in f) == ~measured["sustained"].astype(bool)).all()
    assert (flags.map(lambda f: "client_bound" in f) == measured["client_bound"].astype(bool)).all()
    sweep = measured[measured["setup"] == "sweep"]
    assert not (sweep["client_bound"] | sweep["flagged"] | sweep["disturbed"]).any()
    assert sweep["knee_p99_s"].notna().all()
    _, values = macros_of(shipped, tmp_path)
    checks = " ".join(values["checks"].split())
    usable, swept = map(int, re.search(r"In the fraction sweep, (\d+) of (\d+)", checks).groups())
    behind = int(re.search(r"or with errors, (\d+) of them", checks).group(1))
    assert swept - usable == behind == int((sweep["knee_p99_s"] == math.inf).sum())
