"""Generated LaTeX: escaping, macro names, tables, the macros report.tex needs, and the PDF build."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from archbench import latex, report

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
PAPER = Path(__file__).resolve().parents[1] / "paper"


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
    name = macros.add("best mean", "12,345", "r/s")
    assert name == r"\abBestMean"
    with pytest.raises(ValueError, match="twice"):
        macros.add("best mean", "1")
    with pytest.raises(ValueError, match="paragraph"):
        macros.add("text", "a\n\nb")
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
    assert latex.parse_cpu_list("0") == {0}
    assert latex.parse_cpu_list("0-2,5") == {0, 1, 2, 5}


def summary_rows(**overrides) -> pd.DataFrame:
    row = {"architecture": "thread_pool", "dispatch": "request", "handoff": "queue", "threads": 2,
           "connections": 100, "n": 5, "n_flagged": 0, "n_failed": 0, "mean": 107345.2, "sd": 3326.0,
           "ci95_low": 103215.4, "ci95_high": 111475.0}
    row.update(overrides)
    return pd.DataFrame([row])


def test_pool_size_table_in_source_000_form():
    tex = latex.pool_size_table(summary_rows(), "tab:x", "caption")
    assert r"\toprule" in tex and r"\bottomrule" in tex
    assert "Number of" in tex and "Sample mean" in tex and "Sample standard" in tex and "CI of" in tex
    assert "2 & 5 & 107,345 & 3,326 & 103,215--111,475" in tex
    assert latex.FLAGGED_NOTE not in tex and latex.FAILED_NOTE not in tex


def test_flagged_and_failed_configurations_are_marked_and_explained():
    tex = latex.pool_size_table(summary_rows(n_flagged=2, n_failed=1), "tab:x", "caption")
    assert "2" + latex.FLAGGED_MARK + latex.FAILED_MARK + " & 5 &" in tex
    assert latex.FLAGGED_NOTE in tex and latex.FAILED_NOTE in tex


def test_undefined_statistics_print_as_dashes():
    tex = latex.pool_size_table(summary_rows(n=1, sd=float("nan"), ci95_low=float("nan"), ci95_high=float("nan")),
                                "tab:x", "caption")
    assert f"107,345 & {latex.MISSING} & {latex.MISSING}" in tex
    assert "nan" not in tex.lower()


# --------------------------------------------------------------------------- generated from a campaign


@pytest.fixture(scope="module")
def full_report(tmp_path_factory) -> tuple[report.ReportOutputs, Path]:
    paper = tmp_path_factory.mktemp("paper-full") / "paper"
    outputs = report.build_report(
        "fixture-full", raw_root=FIXTURES, processed_dir=paper.parent / "processed",
        generated_dir=paper / "generated", figures_dir=paper / "figures",
    )
    return outputs, paper


def defined_macros(macros_tex: str) -> dict[str, str]:
    definitions = {}
    for line in macros_tex.splitlines():
        if line.startswith("%"):
            continue
        match = re.match(r"\\newcommand\{\\(ab[A-Za-z]+)\}\{(.*)\}( % .*)?$", line)
        assert match, f"not a macro definition with a letters-only name: {line!r}"
        definitions["\\" + match[1]] = match[2]
    return definitions


def test_every_macro_report_tex_uses_is_generated(full_report):
    outputs, paper = full_report
    definitions = defined_macros((paper / "generated" / report.MACROS_FILE).read_text())
    used = latex.macros_used((PAPER / "report.tex").read_text())
    for generated in (paper / "generated").glob("*.tex"):
        if generated.name != report.MACROS_FILE:
            used |= latex.macros_used(generated.read_text())
    assert used, "report.tex quotes no generated macro"
    assert used - set(definitions) == set()
    assert outputs.macro_names == frozenset(definitions)


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
    main = summary[(summary["architecture"] == "thread_pool") & (summary["dispatch"] == "request")
                   & (summary["connections"] == 20)]
    best = main.loc[main["mean"].idxmax()]
    assert definitions[r"\abPoolBestThreads"] == str(int(best["threads"]))
    assert definitions[r"\abPoolBestThreadsPlusOne"] == str(int(best["threads"]) + 1)
    assert definitions[r"\abPoolBestMean"] == f"{best['mean']:,.0f}"
    first = main.loc[main["threads"].idxmin()]
    assert definitions[r"\abPoolBestOverFirst"] == f"{best['mean'] / first['mean']:.2f}"


def test_tables_mark_the_flagged_and_failed_fixture_trials(full_report):
    outputs, paper = full_report
    tables = (paper / "generated" / report.POOL_TABLES_FILE).read_text()
    assert "\\label{tab:threads-thread-pool-request-queue}" in tables
    assert "2" + latex.FLAGGED_MARK + " &" in tables  # N = 2 at 20 connections had a flagged trial
    assert "4" + latex.FAILED_MARK + " & 1 &" in tables  # N = 4 lost one of two trials
    assert latex.FLAGGED_NOTE in tables and latex.FAILED_NOTE in tables
    configurations = (paper / "generated" / report.CONFIGURATIONS_TABLE_FILE).read_text()
    assert "longtable" in configurations and "Starved" in configurations
    for generated in (paper / "generated").glob("*.tex"):
        assert "nan" not in generated.read_text().replace("nonstop", "").lower().split(), generated


def test_unknown_campaign_fails_naming_the_parameter():
    with pytest.raises(report.ParameterError) as error:
        report.build_report("no-such-campaign", raw_root=FIXTURES)
    assert str(error.value).startswith("campaign:")
    assert "fixture-full" in str(error.value) and "fixture-minimal" in str(error.value)


def test_minimal_campaign_degrades_to_sentences(tmp_path):
    paper = tmp_path / "paper"
    report.build_report("fixture-minimal", raw_root=FIXTURES, processed_dir=tmp_path / "processed",
                        generated_dir=paper / "generated", figures_dir=paper / "figures")
    assert "there is no pool-size figure" in (paper / "generated" / report.POOL_FIGURE_FILE).read_text()
    assert "includegraphics" not in (paper / "generated" / report.CONNECTIONS_FIGURE_FILE).read_text()
    macros = (paper / "generated" / report.MACROS_FILE).read_text()
    assert "no thread-pool configuration measured at two or more pool sizes" in macros


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("campaign", ["fixture-full", "fixture-minimal"])
def test_report_pdf_builds_from_a_fixture_campaign(campaign, tmp_path):
    if shutil.which("latexmk") is None:
        pytest.skip("latexmk is not installed (apt-get install latexmk texlive-latex-extra)")
    paper = tmp_path / "paper"
    paper.mkdir()
    for name in ("report.tex", "references.bib"):
        shutil.copy(PAPER / name, paper / name)
    report.build_report(campaign, raw_root=FIXTURES, processed_dir=tmp_path / "processed",
                        generated_dir=paper / "generated", figures_dir=paper / "figures")
    pdf = report.build_pdf(paper)
    assert pdf.is_file() and pdf.read_bytes().startswith(b"%PDF")
    log = (paper / "report.log").read_text(errors="replace")
    assert "undefined" not in log.lower(), [line for line in log.splitlines() if "ndefined" in line]
    assert "Citation" not in log or "undefined" not in log
