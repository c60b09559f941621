"""Generated LaTeX: escaping, macro names, tables, the macros report.tex needs, and the PDF build."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.analyze import analysis, bottleneck
from archbench.render import latex
from archbench.render.prose import Prose
from archbench.report import build as report
from archbench.studies import architectures, pool
from archbench.studies.pool import facts as findings
from archbench.studies.pool import tables as main_tables

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
PAPER = Path(__file__).resolve().parents[1] / "paper"
NOTES = latex.mark_notes(Prose())  # the standard explanations of the table marks

# Shipped fixture campaigns, plus the synthetic comparison campaign written into a temporary raw root.
SHIPPED = ["fixture-full", "fixture-minimal", "fixture-architectures"]
ALL_CAMPAIGNS = [*SHIPPED, synthetic.COMPARISON]


@pytest.fixture(scope="module")
def synthetic_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("synthetic-raw")
    synthetic.write_comparison_campaign(root)
    return root


def raw_root_of(campaign: str, synthetic_root: Path) -> Path:
    return synthetic_root if campaign == synthetic.COMPARISON else FIXTURES


# --------------------------------------------------------------------------- primitives


def test_escape_every_special_character():
    assert latex.escape(r"50% of $x_1 & #2 {a} ~b ^c \d") == (
        r"50\% of \$x\_1 \& \#2 \{a\} \textasciitilde{}b \textasciicircum{}c \textbackslash{}d"
    )


def test_escape_keeps_command_line_hyphens():
    assert latex.escape("wrk --latency") == "wrk -{}-latency"
    assert latex.escape("a---b") == "a-{}-{}-b"
    assert latex.escape("-O2 -Wall") == "-O2 -Wall"


def test_macro_names_are_letters_only():
    assert latex.macro_name("pool", "best threads") == r"\abPoolBestThreads"
    assert latex.macro_name("cpu_model") == r"\abCpuModel"
    assert latex.macro_name("t4 c100") == r"\abTFourCOneZeroZero"
    for bad in ("", "!!!", "  "):
        with pytest.raises(ValueError):
            latex.macro_name(bad)


def test_macro_set_renders_and_rejects_duplicates():
    macros = latex.MacroSet()
    name = macros.add(r"\abBestMean", "12,345", "r/s")
    assert name == r"\abBestMean"
    with pytest.raises(ValueError, match="twice"):
        macros.add(r"\abBestMean", "1")
    with pytest.raises(ValueError, match="paragraph"):
        macros.add(r"\abText", "a\n\nb")
    assert macros.render("header").splitlines() == ["% header", r"\newcommand{\abBestMean}{12,345} % r/s"]


def test_macros_used_ignores_comments():
    tex = "\\abOne{} and \\abTwo\n% \\abThree is commented\n50\\% \\abFour"
    assert latex.macros_used(tex) == {r"\abOne", r"\abTwo", r"\abFour"}


def test_number_formats():
    assert latex.format_count(621257.4) == "621,257"
    assert latex.format_count(float("nan")) == latex.MISSING
    assert latex.format_decimal(12.345, 1) == "12.3"
    assert latex.format_compact(3.0) == "3" and latex.format_compact(2.25) == "2.2"
    assert latex.format_interval(1000, 2500.6) == "1,000--2,501"
    assert latex.format_interval(float("nan"), 1) == latex.MISSING
    assert latex.format_list([1.0, 2.0, 4.0]) == "1, 2 and 4"


def test_cpu_list_parsing():
    assert analysis.parse_cpu_list("0") == {0}
    assert analysis.parse_cpu_list("0-2,5") == {0, 1, 2, 5}


def summary_rows(**overrides) -> pd.DataFrame:
    row = {
        "architecture": "thread_pool",
        "dispatch": "request",
        "handoff": "queue",
        "threads": 2,
        "connections": 100,
        "n": 5,
        "n_flagged": 0,
        "n_failed": 0,
        "mean": 107345.2,
        "sd": 3326.0,
        "ci95_low": 103215.4,
        "ci95_high": 111475.0,
    }
    row.update(overrides)
    return pd.DataFrame([row])


def test_pool_size_table_in_source_000_form():
    tex = main_tables.pool_size_table(summary_rows(), "tab:x", "caption", NOTES)
    assert r"\toprule" in tex and r"\bottomrule" in tex
    assert "Number of" in tex and "Sample mean" in tex and "Sample standard" in tex and "CI of" in tex
    assert "2 & 5 & 107,345 & 3,326 & 103,215--111,475" in tex
    assert NOTES.flagged not in tex and NOTES.failed not in tex


def test_flagged_and_failed_configurations_are_marked_and_explained():
    tex = main_tables.pool_size_table(summary_rows(n_flagged=2, n_failed=1), "tab:x", "caption", NOTES)
    assert "2" + latex.FLAGGED_MARK + latex.FAILED_MARK + " & 5 &" in tex
    assert NOTES.flagged in tex and NOTES.failed in tex


def test_a_bound_mark_is_explained_by_the_rule_that_sets_it():
    """A configuration's bound mark is its trials' most common class, a tie never the server: 2 client-bound trials
    of 5 mark it client-bound, so its note may not say "in most measured trials", which reads as a majority."""
    classes = [bottleneck.CLIENT, bottleneck.CLIENT, bottleneck.SERVER, bottleneck.BOTH, bottleneck.WAIT]
    assert bottleneck.dominant(classes) == bottleneck.CLIENT
    assert bottleneck.dominant([bottleneck.SERVER, bottleneck.NEITHER]) == bottleneck.NEITHER
    for note in (NOTES.client_bound, NOTES.both_bound, NOTES.wait_bound, NOTES.neither_bound):
        assert "the most common case among the measured trials, or tied for it" in note
        assert "in most measured trials" not in note


def test_undefined_statistics_print_as_dashes():
    tex = main_tables.pool_size_table(
        summary_rows(n=1, sd=float("nan"), ci95_low=float("nan"), ci95_high=float("nan")), "tab:x", "caption", NOTES
    )
    assert f"107,345 & {latex.MISSING} & {latex.MISSING}" in tex
    assert "nan" not in tex.lower()


# --------------------------------------------------------------------------- generated from a campaign


@pytest.fixture(scope="module")
def full_report(shared_reports) -> tuple[report.ReportOutputs, Path]:
    return shared_reports.build("fixture-full", FIXTURES)


def defined_macros(macros_tex: str) -> dict[str, str]:
    definitions = {}
    for line in macros_tex.splitlines():
        if line.startswith("%"):
            continue
        match = re.match(r"\\newcommand\{\\(ab[A-Za-z]+)\}\{(.*)\}( % .*)?$", line)
        assert match, f"not a macro definition with a letters-only name: {line!r}"
        definitions["\\" + match[1]] = match[2]
    return definitions


@pytest.mark.parametrize("campaign", ALL_CAMPAIGNS)
def test_every_macro_report_tex_uses_is_generated(campaign, synthetic_root, shared_reports):
    outputs, paper = shared_reports.build(campaign, raw_root_of(campaign, synthetic_root))
    definitions = defined_macros((paper / "generated" / report.MACROS_FILE).read_text())
    used = latex.macros_used((PAPER / "report.tex").read_text())
    for generated in (paper / "generated").glob("*.tex"):
        if generated.name != report.MACROS_FILE:
            used |= latex.macros_used(generated.read_text())
    assert used, "report.tex quotes no generated macro"
    assert used - set(definitions) == set()
    assert outputs.macro_names == frozenset(definitions)
    # Every file report.tex inputs from generated/ exists, whatever the campaign lacks.
    tex = (PAPER / "report.tex").read_text()
    for name in re.findall(r"\\input\{generated/([^}]+)\}", tex):
        assert (paper / "generated" / f"{name}.tex").is_file(), name
    for generated in (paper / "generated").glob("*.tex"):
        text = generated.read_text()
        assert "nan" not in re.findall(r"[a-z]+", text.replace("nonstop", "").lower()), generated


def test_macro_values_come_from_the_data(full_report):
    outputs, paper = full_report
    definitions = defined_macros((paper / "generated" / report.MACROS_FILE).read_text())
    summary = outputs.summary
    assert definitions[r"\abCampaign"] == "fixture-full"
    assert definitions[r"\abConfigurationCount"] == str(len(summary)) == "12"
    assert definitions[r"\abFailedTrialCount"] == "1"
    assert definitions[r"\abFlaggedTrialCount"] == "1"
    assert definitions[r"\abWarmupTrialCount"] == "12"
    assert definitions[r"\abServerCpus"] == "0" and definitions[r"\abLoadCpus"] == "1"
    assert definitions[r"\abLoadCommand"].startswith(r"\texttt{taskset -c 1 wrk -t1 -c20 -d1s -{}-latency")
    main = summary[
        (summary["architecture"] == "thread_pool") & (summary["dispatch"] == "request") & (summary["connections"] == 20)
    ]
    best = main.loc[main["mean"].idxmax()]
    assert definitions[r"\abPoolBestThreads"] == str(int(best["threads"]))
    assert definitions[r"\abPoolBestThreadsPlusOne"] == str(int(best["threads"]) + 1)
    assert definitions[r"\abPoolBestMean"] == f"{best['mean']:,.0f}"
    first = main.loc[main["threads"].idxmin()]
    assert definitions[r"\abPoolBestOverFirst"] == f"{best['mean'] / first['mean']:.2f}"


def test_tables_mark_the_flagged_and_failed_fixture_trials(full_report):
    outputs, paper = full_report
    tables = (paper / "generated" / pool.POOL_TABLES_FILE).read_text()
    assert "\\label{tab:threads-thread-pool-request-queue}" in tables
    # N = 2 at 20 connections had a flagged trial; N = 4 lost one of two trials (each may also carry the mark of
    # what bounded its trials: the fixture's server CPUs were not recorded busy enough to be the bottleneck).
    marks = "(?:" + "|".join(re.escape(m) for m in latex.BOTTLENECK_MARKS.values()) + ")?"
    assert re.search(r"\b2" + re.escape(latex.FLAGGED_MARK) + marks + " &", tables)
    assert re.search(r"\b4" + re.escape(latex.FAILED_MARK) + marks + " & 1 &", tables)
    assert NOTES.flagged in tables and NOTES.failed in tables
    configurations = (paper / "generated" / pool.CONFIGURATIONS_TABLE_FILE).read_text()
    assert "longtable" in configurations and "Starved" in configurations
    for generated in (paper / "generated").glob("*.tex"):
        assert "nan" not in generated.read_text().replace("nonstop", "").lower().split(), generated


def test_unknown_campaign_fails_naming_the_parameter():
    with pytest.raises(report.ParameterError) as error:
        report.build_report("no-such-campaign", report.ReportPaths(raw_root=FIXTURES))
    assert str(error.value).startswith("campaigns: main=no-such-campaign")
    assert "fixture-full" in str(error.value) and "fixture-minimal" in str(error.value)


def test_minimal_campaign_degrades_to_sentences(shared_reports):
    _, paper = shared_reports.build("fixture-minimal", FIXTURES)
    assert "there is no pool-size figure" in (paper / "generated" / "figure-pool-size.tex").read_text()
    assert "includegraphics" not in (paper / "generated" / "figure-connections.tex").read_text()
    section = (paper / "generated" / report.section_file("pool")).read_text()
    assert "no thread-pool configuration measured at two or more pool sizes" in section


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("campaign", ALL_CAMPAIGNS)
def test_report_pdf_builds_from_a_fixture_campaign(campaign, synthetic_root, shared_reports):
    pdf = shared_reports.pdf(campaign, raw_root_of(campaign, synthetic_root))
    assert pdf.is_file() and pdf.read_bytes().startswith(b"%PDF")
    log = (pdf.parent / "report.log").read_text(errors="replace")
    assert "undefined" not in log.lower(), [line for line in log.splitlines() if "ndefined" in line]
    assert "Citation" not in log or "undefined" not in log
    # Tables and figures fit the text width for real and synthetic data alike.
    assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]


# --------------------------------------------------------------------------- architecture comparison


def test_significant_figures_and_milliseconds():
    assert latex.format_significant(0.11532) == "0.115"
    assert latex.format_significant(18.75) == "18.8"
    assert latex.format_significant(1234.5) == "1,234"
    assert latex.format_ms(0.00341) == "3.41"
    assert latex.format_ms(float("nan")) == latex.MISSING
    assert latex.format_percent(0.983) == r"98\,\%"
    # A t interval below zero keeps a readable minus sign.
    assert latex.format_interval(-271.4, 2271.0) == "$-$271--2,271"


@pytest.fixture(scope="module")
def comparison_report(synthetic_root, shared_reports) -> tuple[report.ReportOutputs, Path, dict[str, str]]:
    outputs, paper = shared_reports.build(synthetic.COMPARISON, synthetic_root)
    return outputs, paper, defined_macros((paper / "generated" / report.MACROS_FILE).read_text())


def architecture_sentence(outputs: report.ReportOutputs, fact: str, macro: str | None = None) -> str:
    """A sentence of the architecture section (the macro `macro`, by default `fact`, of
    paper/templates/architectures/sentences.tex.j2), rendered from the facts the study gave its section."""
    return Prose().sentence("architectures/sentences", macro or fact, outputs.studies["architectures"].section[fact])


def method_sentence(outputs: report.ReportOutputs, fact: str) -> str:
    """A sentence of paper/templates/method/trials.tex.j2 (the macro `fact`), rendered from the method study's
    facts, as the method section and the threats to validity render it (studies.method)."""
    return Prose().sentence("method/trials", fact, outputs.studies["method"].section[fact])


def table_rows(tex: str) -> list[list[str]]:
    """The body rows of the tabulars in `tex`, as lists of cells (header rows left out)."""
    rows = []
    for line in tex.splitlines():
        if line.endswith(r"\\") and " & " in line and not line.startswith("Server &"):
            rows.append(line[: -len(r"\\")].rstrip().split(" & "))
    return rows


def test_one_comparison_table_per_depth_with_nginx_below_a_rule(comparison_report):
    _, paper, _ = comparison_report
    tables = (paper / "generated" / architectures.TABLES_FILE).read_text()
    assert tables.count(r"\begin{table}") == 2
    assert r"\label{tab:architectures-p1}" in tables and r"\label{tab:architectures-p16}" in tables
    depth_one = tables.split(r"\label{tab:architectures-p16}")[0]
    lines = depth_one.splitlines()
    reference = next(i for i, line in enumerate(lines) if line.startswith("nginx, 1 worker (reference)"))
    assert lines[reference - 1] == r"\midrule"  # visually separated, last
    assert lines[reference].split(" & ")[4] == "1.00"  # ratio to itself
    rows = {cells[0]: cells for cells in table_rows(depth_one)}
    assert list(rows) == [
        "blocking",
        "epoll (edge)",
        "reactor, 2 threads",
        "io\\_uring, 1 thread",
        "nginx, 1 worker (reference)",
    ]
    epoll = rows["epoll (edge)"]
    assert epoll[2] == "51,000" + latex.CLIENT_BOUND_MARK  # client-bound mark on the mean
    assert epoll[4] == "1.13"  # 51,000 / 45,250
    assert epoll[-1] == r"98\,\%"
    io_uring = rows["io\\_uring, 1 thread"]
    assert io_uring[1] == "0" and io_uring[2] == "unsupported" + latex.UNSUPPORTED_MARK
    assert rows["blocking"][8] == "0/50/99"  # errors / timeouts / starved
    assert rows["nginx, 1 worker (reference)"][8] == "0/0/" + latex.NOT_MEASURED
    for note in (NOTES.client_bound, NOTES.unsupported, NOTES.not_measured):
        assert note in depth_one
    depth_sixteen = tables.split(r"\label{tab:architectures-p16}")[1]
    assert "epoll (edge) & 2 & 505,000 &" in depth_sixteen
    assert latex.LATENCY_MARK in depth_sixteen and NOTES.latency in depth_sixteen
    # prefork: one trial with both sides saturated, one server-bound: a tie, which never names the server, so the
    # mean carries the mark of both (wrk was saturated in half its trials: the architectures' client-bound rule too).
    assert "prefork, 2 workers & 2 & 545,000" + latex.BOTTLENECK_MARKS["both"] + " &" in depth_sixteen


def test_the_fastest_server_is_named_only_where_the_server_set_the_rate(comparison_report):
    outputs, _, macros = comparison_report
    text = architecture_sentence(outputs, "fastest", "fastest_by_depth")
    depth_one, depth_sixteen = text.split("At pipeline depth 16")
    # epoll (edge) has the highest mean at depth 1, and wrk's CPU was saturated in both its trials.
    assert "the load generator set the rate: in both trials of epoll (edge)" in depth_one
    assert "do not say which server is fastest at this depth" in depth_one and "upper bound" not in text
    assert "the fastest correct server is reactor, 2 threads, 605,000" in depth_sixteen
    assert "the server, not the load generator, set this rate" in depth_sixteen
    summary = architecture_sentence(outputs, "fastest_summary")  # the abstract's (studies.architectures)
    assert summary.startswith("At pipeline depth 1 the load generator set the rate")
    assert "at pipeline depth 16 the fastest correct server was reactor, 2 threads" in summary
    assert "3 of the 22 measured trials" in method_sentence(outputs, "client_bound")
    assert macros[r"\abClientBoundThreshold"] == "95"


def test_response_bytes_and_nginx_macros(comparison_report):
    outputs, _, macros = comparison_report
    assert macros[r"\abOurResponseBytes"] == "91"
    assert macros[r"\abNginxResponseBytes"] == "150"
    assert macros[r"\abResponseByteDifference"] == "59"
    response_bytes = architecture_sentence(outputs, "response_bytes")
    assert "59 bytes (65\\,\\%) more" in response_bytes
    # The synthetic wrk byte counts are not realistic, and the sentence must not pretend they agree.
    assert "does not agree" in response_bytes
    nginx_cpu = Prose().sentence(
        "method/trials", "nginx_cpu_source", outputs.studies["method"].section["nginx_cpu_source"]
    )
    assert "own processes" in nginx_cpu
    assert "io\\_uring, 1 thread" in architecture_sentence(outputs, "unsupported")
    assert "nginx, 1 worker" in architecture_sentence(outputs, "nginx")
    assert macros[r"\abPipelineDepths"] == "1 and 16"
    citations = outputs.studies["architectures"].section["citations"]
    tables = Prose().sentence("architectures/citations", "architecture_tables", citations)
    assert tables.startswith(r"Tables~\ref{tab:architectures-p1}")


def test_real_campaign_response_bytes_agree_with_wrk(shared_reports):
    outputs, paper = shared_reports.build("fixture-architectures", FIXTURES)
    macros = defined_macros((paper / "generated" / report.MACROS_FILE).read_text())
    record = json.loads(next((FIXTURES / "fixture-architectures").glob("nginx-*.json")).read_text())
    nginx_bytes = record["server"]["stats"]["response_bytes"]
    assert macros[r"\abNginxResponseBytes"] == str(nginx_bytes)
    assert macros[r"\abResponseByteDifference"] == str(nginx_bytes - 91)
    assert "which agrees with these lengths" in architecture_sentence(outputs, "response_bytes")
    # Real client-bound trials are counted and named.
    assert "were client-bound" in method_sentence(outputs, "client_bound")
    assert "Poll's mean throughput" in architecture_sentence(outputs, "poll_epoll")
    assert "Source~001's designs" in architecture_sentence(outputs, "source_one")


def test_configurations_table_marks_the_new_cases(comparison_report):
    _, paper, _ = comparison_report
    tex = (paper / "generated" / pool.CONFIGURATIONS_TABLE_FILE).read_text()
    assert "$D$" in tex and "failed/unsup." in tex
    assert latex.CLIENT_BOUND_MARK in tex and NOTES.client_bound in tex
    assert "& " + latex.NOT_MEASURED + " &" in tex


def test_minimal_campaign_has_sentences_instead_of_the_comparison(shared_reports):
    outputs, paper = shared_reports.build("fixture-minimal", FIXTURES)
    generated = paper / "generated"
    tables = (generated / architectures.TABLES_FILE).read_text()
    assert r"\begin{table}" not in tables and "only one server" in tables
    for name in (
        "figure-architectures-throughput.tex",
        "figure-architectures-connections.tex",
        "figure-architectures-threads.tex",
        "figure-architectures-cpu.tex",
    ):
        assert "includegraphics" not in (generated / name).read_text(), name
    macros = defined_macros((generated / report.MACROS_FILE).read_text())
    assert "only one correct server was measured" in architecture_sentence(outputs, "fastest", "fastest_by_depth")
    assert "no nginx" in architecture_sentence(outputs, "nginx")
    assert macros[r"\abNginxResponseBytes"] == latex.MISSING


def test_pool_tables_are_split_by_depth_and_keep_their_labels(comparison_report, full_report):
    _, paper = full_report
    assert r"\label{tab:threads-thread-pool-request-queue}" in (paper / "generated" / pool.POOL_TABLES_FILE).read_text()
    summary = pd.DataFrame(
        [
            {
                "architecture": "thread_pool",
                "dispatch": "request",
                "handoff": "queue",
                "threads": t,
                "connections": 50,
                "pipeline": d,
                "n": 2,
                "n_flagged": 0,
                "n_failed": 0,
                "mean": 1000.0 * t * d,
                "sd": 1.0,
                "ci95_low": 1.0,
                "ci95_high": 2.0,
            }
            for d in (1, 16)
            for t in (1, 2)
        ]
    )
    labels = [label for label, _ in main_tables.pool_size_table_blocks(summary)]
    assert labels == ["tab:threads-thread-pool-request-queue", "tab:threads-thread-pool-request-queue-p16"]
    # The event-driven architectures are not in source 000's tables.
    assert main_tables.pool_size_table_blocks(summary.assign(architecture="reactor")) == []


@pytest.fixture(scope="module")
def degenerate_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("degenerate-raw")
    synthetic.write_degenerate_campaigns(root)
    return root


# Their PDFs are long integration (latexmk), left to `make test-slow`; `make test` checks their generated files.
@pytest.mark.parametrize(
    "compile_pdf", [pytest.param(False, id="tex"), pytest.param(True, marks=pytest.mark.slow, id="pdf")]
)
@pytest.mark.parametrize("campaign", synthetic.DEGENERATE)
def test_report_builds_from_degenerate_campaigns(campaign, compile_pdf, degenerate_root, tmp_path):
    paper = tmp_path / "paper"
    paper.mkdir()
    for name in ("report.tex", "references.bib"):
        shutil.copy(PAPER / name, paper / name)
    shutil.copytree(PAPER / "templates", paper / "templates", dirs_exist_ok=True)  # the sections are there
    report.build_report(
        campaign,
        paths=report.ReportPaths(
            raw_root=degenerate_root,
            processed_dir=tmp_path / "processed",
            generated_dir=paper / "generated",
            figures_dir=paper / "figures",
        ),
    )
    definitions = defined_macros((paper / "generated" / report.MACROS_FILE).read_text())
    assert latex.macros_used((PAPER / "report.tex").read_text()) - set(definitions) == set()
    if campaign == "only-unsupported":
        section = (paper / "generated" / report.section_file("architectures")).read_text()
        assert "2 measured trials were unsupported" in section
        assert definitions[r"\abFailedTrialCount"] == "0"
    if not compile_pdf:
        return
    if shutil.which("latexmk") is None:
        pytest.skip("latexmk is not installed (apt-get install latexmk texlive-latex-extra)")
    report.build_pdf(paper)
    log = (paper / "report.log").read_text(errors="replace")
    assert "undefined" not in log.lower(), [line for line in log.splitlines() if "ndefined" in line]


def test_dispatch_pairs_never_mix_pipeline_depths():
    rows = [
        {
            "architecture": "thread_pool",
            "dispatch": dispatch,
            "handoff": "queue",
            "threads": 2,
            "connections": 50,
            "pipeline": depth,
            "mean": mean,
            "starved_connections_mean": starved,
        }
        for dispatch, depth, mean, starved in (
            ("request", 1, 300.0, 0.0),
            ("connection", 1, 100.0, 48.0),
            ("request", 16, 4000.0, 0.0),
            ("connection", 16, 1000.0, 48.0),
        )
    ]
    sentence = Prose().sentence("pool/sentences", "dispatch", findings.dispatch_comparison(pd.DataFrame(rows)))
    assert "(2 pairs)" in sentence and "for 2 no planned comparison was made" in sentence


# A citation of the software, rendered from CITATION.cff for the title page and the artifact appendix: a label, not a
# finding, so it is the one long macro.
LONG_LABELS = {r"\abHowToCite"}


def reads_as_a_sentence(value: str) -> bool:
    """Over 60 characters with a full stop after a word: a sentence, not a number or a short label."""
    return len(value) > 60 and re.search(r"[a-z)]\.(\s|$)", value) is not None


@pytest.mark.parametrize("campaign", ALL_CAMPAIGNS)
def test_macros_carry_numbers_and_short_labels_never_sentences(campaign, synthetic_root, shared_reports):
    """Sentences are rendered by the section templates from the studies' facts (`studies.<name>` for one another
    quotes); macros.tex holds what a sentence quotes, never the sentence."""
    _, paper = shared_reports.build(campaign, raw_root_of(campaign, synthetic_root))
    definitions = defined_macros((paper / "generated" / report.MACROS_FILE).read_text())
    assert any(reads_as_a_sentence(value) for name, value in definitions.items() if name in LONG_LABELS)
    sentences = {name for name, value in definitions.items() if reads_as_a_sentence(value)} - LONG_LABELS
    assert sentences == set()
