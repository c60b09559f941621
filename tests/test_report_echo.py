"""The echo section (source 004): analysis of real and synthetic echo campaigns, macros, tables,
figures, and the PDF with the echo and latency sections."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import synthetic_studies as ss  # tests/fixtures/campaigns/synthetic_studies.py (pytest pythonpath)

from archbench.parse import parse_file
from archbench.render import latex
from archbench.render.common import sorted_rows
from archbench.render.prose import Prose
from archbench.render.study import Paper
from archbench.report import build as report
from archbench.studies import echo as report_echo
from archbench.studies.echo import data as echo_data
from archbench.studies.echo import facts as echo_facts
from archbench.studies.echo import figures as echo_figures
from archbench.studies.echo import tables as echo_tables
from archbench.studies.echo.data import EchoResults

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
PAPER = Path(__file__).resolve().parents[1] / "paper"

# The section's sentences these tests read, by their names in paper/templates/echo/sentences.tex.j2.


@pytest.fixture(scope="module")
def synthetic_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("studies-raw")
    ss.write_echo_campaign(root)
    ss.write_empty_echo_campaign(root)
    ss.write_latency_campaigns(root)
    ss.write_slow_latency_campaign(root)
    shutil.copytree(FIXTURES / "fixture-minimal", root / "fixture-minimal")
    return root


@pytest.fixture(scope="module")
def synthetic(synthetic_root, tmp_path_factory) -> EchoResults:
    return report_echo.ECHO.read([ss.ECHO], synthetic_root, tmp_path_factory.mktemp("processed"))


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> EchoResults:
    return report_echo.ECHO.read(["fixture-echo"], FIXTURES, tmp_path_factory.mktemp("processed-real"))


def row_of(frame: pd.DataFrame, architecture: str, connections: int) -> pd.Series:
    rows = frame[(frame["architecture"] == architecture) & (frame["connections"] == connections)]
    assert len(rows) == 1, (architecture, connections, rows)
    return rows.iloc[0]


def defined_macros(path: Path) -> dict[str, str]:
    definitions = {}
    for line in path.read_text().splitlines():
        match = re.match(r"\\newcommand\{\\(ab[A-Za-z]+)\}\{(.*)\}( % .*)?$", line)
        if match:
            definitions["\\" + match[1]] = match[2]
    return definitions


def plain(text: str) -> str:
    """A generated sentence without its line-break hints."""
    return text.replace("\\allowbreak{}", "")


def rendered(study: EchoResults, tmp_path: Path) -> tuple[dict[str, str], dict[str, str], str]:
    """The generated files, the macros and sentences by name, and the rendered section (rendered_study)."""
    return ss.rendered_study(report_echo.ECHO, study, tmp_path)


def outputs_for(study: EchoResults, tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    files, values, _ = rendered(study, tmp_path)
    return files, values


# --------------------------------------------------------------------------- real campaign (runner)


def test_real_campaign_throughput_matches_the_raw_outputs(real):
    summary = real.summary
    assert len(summary) == 8  # 4 architectures x {100, 1000} clients
    assert set(summary["n"]) == {2} and set(summary["n_flagged"]) == {0} and set(summary["n_failed"]) == {0}
    assert list(dict.fromkeys(summary["architecture"])) == ["thread_per_conn", "poll", "epoll", "reactor"]
    # Warm-ups are in trials.csv, never in the statistics.
    assert real.trials["warmup"].sum() == 12
    # bytes/s of one trial = the window's received bytes (its per-second series) / window_s, from the raw JSON.
    trial = real.trials[
        (real.trials["config_id"] == "epoll-edge-c1000-lt1-d3s-echo-s64-src4") & (real.trials["repetition"] == 1)
    ].iloc[0]
    parsed = parse_file(FIXTURES / "fixture-echo" / f"{trial['trial_id']}.echo_client.txt")
    expected = sum(s["bytes_received"] for s in parsed["series"]) / parsed["window_s"]
    assert trial["bytes_received_per_sec"] == pytest.approx(expected)
    assert trial["rtt_p99_s"] == parsed["rtt_s"]["percentiles"]["99"]
    row = row_of(summary, "epoll", 1000)
    rates = real.trials[(real.trials["config_id"] == row["config_id"]) & ~real.trials["warmup"]][
        "bytes_received_per_sec"
    ]
    assert row["bytes_received_per_sec_mean"] == pytest.approx(rates.mean())


def test_real_campaign_max_conns_names_reason_memory_and_limit(real):
    table = real.max_conns
    assert len(table) == 4 and set(table["stop_reasons"]) == {"cap_reached:2"}
    assert set(table["reached_min"]) == {1500.0} and set(table["open_files_hard"]) == {20000.0}
    records = [json.loads(p.read_text()) for p in (FIXTURES / "fixture-echo").glob("epoll-*maxconns-r0*.json")]
    per_conn = sorted(r["load"]["max_conns"]["server_rss_per_conn_bytes"] for r in records)
    assert row_of(table, "epoll", 1500)["rss_per_conn_bytes_median"] == pytest.approx(sum(per_conn) / 2)


def test_real_time_series_has_a_time_axis_from_the_first_connect(real):
    picks = echo_data.representative_trials(real.trials, real.summary)
    assert set(picks["connections"]) == {1000} and len(picks) == 4
    figure, chosen = echo_figures.time_series_figure(real)
    assert figure is not None and list(chosen["trial_id"]) == list(sorted_rows(picks)["trial_id"])
    first_axes = figure.axes[0]
    line = first_axes.get_lines()[0]
    x = list(line.get_xdata())
    samples = real.series[real.series["trial_id"] == chosen.iloc[0]["trial_id"]]
    assert x[0] == 0.0 and x[1:] == list(samples["second"])  # seconds since start, one step per sample
    assert first_axes.get_xlim()[0] == 0.0
    assert max(x) <= samples["second"].max() + 1e-9 < 4.0  # a 3-s window, not a wrapped or absolute clock


def test_real_macros(real, tmp_path):
    files, macros = outputs_for(real, tmp_path)
    assert "fixture-echo" in plain(macros["campaign"]) and "vm" in macros["campaign"]
    assert macros[r"\abEchoClientCounts"] == "100 and 1,000"
    assert "not one differed" in macros["verify"]
    assert "20,000 (soft) and 20,000 (hard)" in macros["open_files"]
    assert "-{}-sources 4" in macros["open_files"]
    assert "cap\\_reached" in macros["max_conns"]
    assert r"\label{tab:echo}" in files[report_echo.TABLE_FILE]
    assert "includegraphics" in files[report_echo.TIME_SERIES_FIGURE_FILE]


# --------------------------------------------------------------------------- synthetic campaign (edge cases)


def test_flagged_trials_are_counted_marked_and_never_averaged(synthetic):
    summary = synthetic.summary
    epoll = row_of(summary, "epoll", 100)
    assert epoll["n"] == 2 and epoll["bytes_received_per_sec_mean"] == pytest.approx(3.15e6)  # warm-up (1e9) excluded
    assert epoll["rtt_p99_s_mean"] == pytest.approx(0.005) and epoll["rtt_max_s_max"] == pytest.approx(0.009)
    poll = row_of(summary, "poll", 1000)
    assert (poll["n"], poll["n_flagged"], poll["verify_errors"], poll["n_verify_error_trials"]) == (1, 1, 7, 1)
    assert poll["bytes_received_per_sec_mean"] == pytest.approx(1.2e6)  # the 1.3e6 trial had verification errors
    tpc = row_of(summary, "thread_per_conn", 1000)
    assert (tpc["n"], tpc["n_flagged"], tpc["connect_errors"]) == (0, 2, 8)
    assert math.isnan(tpc["bytes_received_per_sec_mean"])
    assert "connect_failures:2" in tpc["flags"] and "not_all_connected:2" in tpc["flags"]
    reactor = row_of(summary, "reactor", 100)
    assert (reactor["n"], reactor["n_failed"]) == (1, 1)


def test_echo_table_shows_errors_and_marks(synthetic):
    table = echo_tables.throughput_table(synthetic, Prose())
    lines = {line.split(" & ")[0] + "@" + line.split(" & ")[1]: line for line in table.splitlines() if " & " in line}
    poll = lines["poll@1,000"]
    assert latex.FLAGGED_MARK in poll and poll.endswith("1/0 & 7 & 0 \\\\")
    tpc = lines["thread-per-connection@1,000"]
    assert " & 0 & --" + latex.FLAGGED_MARK + " & -- &" in tpc and tpc.endswith("2/0 & 0 & 8 \\\\")
    assert latex.FAILED_MARK in lines["reactor (2 threads)@100"]
    assert echo_tables.flagged_note(Prose()) in table and latex.mark_notes(Prose()).failed in table
    assert "nan" not in re.findall(r"[a-z]+", table.lower())


def test_max_conns_reasons_memory_and_failures(synthetic):
    table = synthetic.max_conns
    assert dict(zip(table["architecture"], table["stop_reasons"], strict=True)) == {
        "thread_per_conn": "client_EMFILE:1",
        "poll": "echo_timeout:1",
        "epoll": "cap_reached:1",
        "reactor": "",
    }
    assert row_of(table, "poll", 19500)["rss_per_conn_bytes_median"] == 8000.0
    assert math.isnan(row_of(table, "thread_per_conn", 19500)["rss_per_conn_bytes_median"])
    assert row_of(table, "reactor", 19500)["n_failed"] == 1
    tex = echo_tables.max_conns_table(synthetic, Prose())
    assert r"\texttt{client\_EMFILE}" in tex and r"\texttt{echo\_timeout}" in tex
    assert "thread-per-connection & 19,500 & 1 & 17,000 & 17,000 & \\texttt{client\\_EMFILE} & -- &" in tex
    assert "7.81" in tex  # 8000 B = 7.81 KiB


def test_representative_trial_is_the_lower_median(synthetic):
    picks = echo_data.representative_trials(synthetic.trials, synthetic.summary)
    by_arch = dict(zip(picks["architecture"], picks["trial_id"], strict=True))
    assert by_arch["epoll"].endswith("-r01")  # 2.0e6 and 2.2e6 B/s: the lower of the two middles
    assert by_arch["poll"].endswith("-r01")  # the unflagged trial, not the one with verification errors
    series = synthetic.series[synthetic.series["trial_id"] == by_arch["epoll"].replace("-r01", "-r02")]
    assert list(series["bytes_received_per_sec"]) == [1.8e6, 2.2e6, 2.6e6]
    assert list(series["second"]) == [1.0, 2.0, 3.0] and list(series["interval_s"]) == [1.0, 1.0, 1.0]


def test_synthetic_macros_say_what_went_wrong(synthetic, tmp_path):
    _, macros = outputs_for(synthetic, tmp_path)
    trials = macros["trials"]
    assert "15 measured trials" in trials and "1 warm-up trial," in trials and "2 measured trials failed" in trials
    assert "flagged 3 of the 13" in trials and "verification errors in 1" in trials
    verify = macros["verify"]
    assert "1 of the 13 measured trials had verification errors (7 bytes in total; poll)" in verify
    assert "ECONNREFUSED} 8" in macros["connect"]
    finding = macros["max_conns"]
    assert "Epoll (edge) held every connection up to the cap of 19,500" in finding and "its ceiling" in finding
    assert "stopped at 6,000 connections" in finding and "out of descriptors" in finding
    assert "reactor (2 threads) failed" in finding
    assert "4.88\\,KiB" in macros["memory"] and "7.81\\,KiB" in macros["memory"]
    assert "Poll against epoll" in macros["poll_epoll"]
    assert "synth-host" in plain(macros["campaign"]) and "2026-11-22" in macros["campaign"]


@pytest.mark.parametrize("case", ["synthetic", "real", "empty", "http-only", "none", "not-found"])
def test_every_macro_of_the_echo_section_is_defined(case, synthetic_root, tmp_path):
    name, root = {
        "synthetic": (ss.ECHO, synthetic_root),
        "real": ("fixture-echo", FIXTURES),
        "http-only": ("fixture-minimal", FIXTURES),
        "empty": ("synthetic-echo-empty", synthetic_root),
        "none": (None, synthetic_root),
        "not-found": ("no-such-echo", synthetic_root),
    }[case]
    with pytest.warns(UserWarning) if case == "not-found" else _no_warning():
        study = report_echo.ECHO.read([name], root, tmp_path / "processed")
    files, macros, section = rendered(study, tmp_path)
    used = latex.macros_used(section)
    for text in files.values():
        used |= latex.macros_used(text)
    assert {m for m in used if m.startswith(r"\abEcho")} - set(macros) == set()
    assert sorted(files) == sorted(report_echo.ECHO.generated_files)
    for text in [*files.values(), *macros.values()]:
        assert "nan" not in re.findall(r"[a-z]+", text.lower())
        assert not re.search(r"(?<!\\)_", re.sub(r"\\(label|ref|includegraphics)\{[^}]*\}", "", text)), text
    if case in ("none", "not-found"):
        assert macros["campaign"].startswith("This section has no measurements")
        assert all(r"\begin" not in text for text in files.values())
    if case == "not-found":
        assert "no-such-echo" in macros["campaign"]
    if case in ("empty", "http-only"):
        assert "no measured trial" in macros["trials"]
        assert "no echo table" in files[report_echo.TABLE_FILE]


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_processed_csvs_are_written_and_raw_is_untouched(synthetic_root, tmp_path):
    before = {p: p.read_bytes() for p in (synthetic_root / ss.ECHO).iterdir()}
    processed = tmp_path / "processed"
    report_echo.ECHO.read([ss.ECHO], synthetic_root, processed)
    assert sorted(p.name for p in processed.iterdir()) == sorted(
        [report_echo.TRIALS_CSV, report_echo.SUMMARY_CSV, report_echo.MAX_CONNS_CSV, report_echo.SERIES_CSV]
    )
    trials = pd.read_csv(processed / report_echo.TRIALS_CSV)
    assert len(trials) == 16 and trials["flagged"].sum() == 3  # every record, warm-up and failed ones included
    assert {p: p.read_bytes() for p in (synthetic_root / ss.ECHO).iterdir()} == before
    with pytest.raises(ValueError, match="immutable"):
        report_echo.ECHO.read([ss.ECHO], synthetic_root, synthetic_root / ss.ECHO / "processed")


# --------------------------------------------------------------------------- the whole report


def copy_paper(tmp_path: Path) -> Path:
    paper = tmp_path / "paper"
    paper.mkdir()
    for name in ("report.tex", "references.bib"):
        shutil.copy(PAPER / name, paper / name)
    shutil.copytree(PAPER / "templates", paper / "templates")
    return paper


# The PDF of each report a test below builds from unusual study campaigns: long integration (latexmk), so left
# to `make test-slow`; `make test` checks the same report's generated files without compiling them.
PDF_TOO = pytest.mark.parametrize(
    "compile_pdf", [pytest.param(False, id="tex"), pytest.param(True, marks=pytest.mark.slow, id="pdf")]
)


def build_and_check(
    campaign: str, raw_root: Path, tmp_path: Path, compile_pdf: bool = True, **studies
) -> tuple[report.ReportOutputs, Path]:
    paper = copy_paper(tmp_path)
    outputs = report.build_report(
        {"main": campaign, **studies},
        paths=report.ReportPaths(
            raw_root=raw_root,
            processed_dir=tmp_path / "processed",
            generated_dir=paper / "generated",
            figures_dir=paper / "figures",
        ),
    )
    definitions = defined_macros(paper / "generated" / report.MACROS_FILE)
    used = latex.macros_used((PAPER / "report.tex").read_text())
    for tex in [*(PAPER / "templates").glob("*/section.tex"), *(paper / "generated").glob("*.tex")]:
        if tex.name != report.MACROS_FILE:
            used |= latex.macros_used(tex.read_text())
    assert used - set(definitions) == set()
    # The latency study is in the main body; source 004's echo study is an appendix.
    assert "\\input{generated/section-latency}" in (paper / "generated" / "body.tex").read_text()
    assert "\\input{generated/section-echo}" in (paper / "generated" / "appendices.tex").read_text()
    if not compile_pdf:
        return outputs, paper
    if shutil.which("latexmk") is None:
        pytest.skip("latexmk is not installed (apt-get install latexmk texlive-latex-extra)")
    pdf = report.build_pdf(paper)
    assert pdf.read_bytes().startswith(b"%PDF")
    log = (paper / "report.log").read_text(errors="replace")
    assert "undefined" not in log.lower(), [line for line in log.splitlines() if "ndefined" in line]
    overfull = [
        line for section, line in lines_by_section(log) if section in ("echo", "latency") and "Overfull" in line
    ]
    assert not overfull, overfull  # the other sections are checked by their own tests (tests/test_latex.py: all)
    return outputs, paper


def section_of(paper: Path, study: str) -> str:
    """The study's section as rendered from its facts (paper/templates/<study>/section.tex.j2)."""
    return (paper / "generated" / report.section_file(study)).read_text()


def lines_by_section(log: str):
    """(the study whose section TeX last opened, or "", line) for each line of a LaTeX log."""
    current = ""
    for line in log.splitlines():
        opened = re.findall(
            r"\(\./(?:templates/([A-Za-z0-9_-]+)/section|generated/section-([A-Za-z0-9_-]+))\.tex", line
        )
        if opened:
            current = "".join(opened[-1])
        yield current, line


@PDF_TOO
def test_pdf_builds_with_synthetic_echo_and_latency_sections(synthetic_root, tmp_path, compile_pdf):
    outputs, paper = build_and_check(
        "fixture-minimal", synthetic_root, tmp_path, compile_pdf, echo=ss.ECHO, latency=ss.LATENCY
    )
    assert outputs.result("echo").available and outputs.result("latency").available
    assert len(outputs.result("latency").campaigns) == 2  # synthetic-latency-001 found beside it
    for name in (echo_figures.SCALING_FIGURE, echo_figures.TIME_SERIES_FIGURE):
        assert (paper / "figures" / name).is_file()
    assert (tmp_path / "processed" / report_echo.SUMMARY_CSV).is_file()


def test_pdf_builds_with_the_real_fixture_campaigns(tmp_path):
    outputs, paper = build_and_check(
        "fixture-minimal", FIXTURES, tmp_path, echo="fixture-echo", latency="fixture-latency"
    )
    assert "fixture-echo" in plain(section_of(paper, "echo"))
    assert "fixture-latency-001" in plain(section_of(paper, "latency"))


@PDF_TOO
def test_pdf_builds_without_echo_and_latency_campaigns(synthetic_root, tmp_path, compile_pdf):
    stale = tmp_path / "processed" / report_echo.SUMMARY_CSV  # from an earlier campaign: must not survive
    stale.parent.mkdir(parents=True)
    stale.write_text("stale\n")
    # Neither this machine's echo-<host> nor a shipped reference-echo is under the synthetic raw root.
    outputs, paper = build_and_check("fixture-minimal", synthetic_root, tmp_path, compile_pdf)
    assert "no echo campaign was found" in section_of(paper, "echo")
    assert "no latency campaign was found" in section_of(paper, "latency")
    assert not outputs.result("echo").available and not outputs.result("latency").available
    assert not (paper / "figures" / echo_figures.SCALING_FIGURE).exists()
    assert not stale.exists()


def test_a_named_campaign_that_does_not_exist_is_refused(synthetic_root, tmp_path):
    with pytest.raises(report.ParameterError, match="echo=reference-echo: no campaign.json"):
        report.build_report(
            {"main": "fixture-minimal", "echo": "reference-echo"},
            paths=report.ReportPaths(
                raw_root=synthetic_root,
                processed_dir=tmp_path / "processed",
                generated_dir=tmp_path / "generated",
                figures_dir=tmp_path / "figures",
            ),
        )
    assert not (tmp_path / "generated").exists()


@PDF_TOO
def test_pdf_builds_with_campaigns_that_hold_no_measurement_of_their_own(synthetic_root, tmp_path, compile_pdf):
    """An echo campaign without records and a latency sweep without source 001's campaign: sentences, no error."""
    outputs, paper = build_and_check(
        "fixture-minimal",
        synthetic_root,
        tmp_path,
        compile_pdf,
        echo="synthetic-echo-empty",
        latency=ss.LATENCY_SLOW,
    )
    assert outputs.result("echo").available and outputs.result("echo").summary.empty
    assert [c.path.name for c in outputs.result("latency").campaigns] == [ss.LATENCY_SLOW]
    assert "no echo table" in (paper / "generated" / report_echo.TABLE_FILE).read_text()


# --------------------------------------------------------------------------- structure: figures and prose


def test_study_figures_leave_pyplot_untouched(real, synthetic_root, tmp_path):
    """The study figures are built with matplotlib's object API: a notebook's pyplot state (its current
    figures, its backend) is not touched by building them."""
    import matplotlib
    import matplotlib.pyplot as plt

    from archbench.studies import latency as report_latency

    backend = matplotlib.get_backend()
    before = plt.get_fignums()
    figure, _ = echo_figures.time_series_figure(real)
    assert figure is not None and echo_figures.scaling_figure(real) is not None
    latency = report_latency.LATENCY.read([ss.LATENCY], synthetic_root, None)
    made = report_latency.LATENCY.section(
        latency, latex.MacroSet(), Paper(tmp_path / "paper" / "figures", tmp_path / "paper")
    )
    assert "includegraphics" in made[report_latency.PERCENTILES_FIGURE_FILE]
    assert plt.get_fignums() == before and matplotlib.get_backend() == backend


def test_sentences_come_from_the_templates(real, tmp_path):
    """A template directory of one's own changes the words and nothing else: the prose is not in Python."""
    shutil.copytree(PAPER / "templates", tmp_path / "templates")
    tables = tmp_path / "templates" / "echo" / "tables.tex.j2"
    tables.write_text(tables.read_text().replace("Echo throughput and round-trip time", "ECHO CAPTION"))
    macros = latex.MacroSet()
    paper = Paper(tmp_path / "paper" / "figures", tmp_path / "paper", Prose(tmp_path / "templates"))
    files = report_echo.ECHO.section(real, macros, paper)
    assert r"\caption{ECHO CAPTION by server" in files[report_echo.TABLE_FILE]
    assert macros.macros[r"\abEchoClientCounts"].value == "100 and 1,000"


def test_a_trial_whose_client_cpus_were_saturated_is_client_bound(synthetic_root):
    """echo_client's own CPU time, or its pinned CPUs' busy share (loopback softirq work included): either at 95 %
    or more marks the trial client-bound, as in the latency study."""
    campaign_dir = synthetic_root / ss.ECHO
    path = campaign_dir / f"{ss.echo_id(ss.EPOLL_1000)}-r01.json"
    record = json.loads(path.read_text())
    load = record.setdefault("load", {})
    for utilisation, busy, bound in ((0.5, 0.97, True), (0.97, 0.5, True), (0.5, 0.5, False)):
        load.update(cpu_utilisation=utilisation, cpus_busy=busy)
        row, _ = echo_data.echo_trial_row(record, campaign_dir)
        assert row["client_bound"] is bound, (utilisation, busy)


def test_the_scaling_sentence_says_where_the_client_set_the_rate(synthetic):
    summary = synthetic.summary.copy()
    largest = pd.to_numeric(summary["connections"]).max()
    at_largest = (pd.to_numeric(summary["connections"]) == largest) & summary["bytes_received_per_sec_mean"].notna()
    summary.loc[at_largest, "n_client_bound"] = summary.loc[at_largest, "n"]
    study = EchoResults(synthetic.source, synthetic.trials, synthetic.series, summary, synthetic.max_conns)
    facts = echo_facts.scaling_facts(study)
    assert facts["client_set"] and facts["configurations"] == str(int(at_largest.sum()))
    text = " ".join(Prose().block("echo/sentences", "scaling", facts).split())
    assert "the highest mean rate of echoed bytes was" in text and "most echoed" not in text
    assert "so the client, not the servers, may have set those rates" in text
    # The table's mark flags a configuration with one client-bound trial; this rule is half or more, not the mark.
    assert "saturated in half or more of the trials" in text and "client-bound mark" not in text
    unbound = summary.assign(n_client_bound=0)
    clean = EchoResults(synthetic.source, synthetic.trials, synthetic.series, unbound, synthetic.max_conns)
    assert echo_facts.scaling_facts(clean)["client_set"] == []


def test_a_server_without_an_unflagged_trial_at_the_top_client_count_is_named_not_dropped(synthetic):
    # thread_per_conn at 1,000 clients: both trials flagged (connect failures), so no mean to rank.
    facts = echo_facts.scaling_facts(synthetic)
    assert facts["largest"] == "1,000" and len(facts["without_mean"]) == 1
    text = " ".join(Prose().block("echo/sentences", "scaling", facts).split())
    assert f"{facts['without_mean'][0]} had no unflagged trial there, so no mean to set beside them" in text


def test_a_poll_epoll_ratio_whose_rates_the_client_set_says_so(synthetic):
    summary = synthetic.summary.copy()
    at_100 = pd.to_numeric(summary["connections"]) == 100
    summary.loc[at_100, "n_client_bound"] = summary.loc[at_100, "n"]
    study = EchoResults(synthetic.source, synthetic.trials, synthetic.series, summary, synthetic.max_conns)
    facts = echo_facts.poll_epoll_facts(study)
    flags = {c["clients"]: c["client_set"] for c in facts["counts"]}
    assert flags["100"] and not flags["1,000"]
    text = " ".join(Prose().block("echo/sentences", "poll_epoll", facts).split())
    assert text.count("(client-bound: the client, not the servers, may have set the rates)") == 1
