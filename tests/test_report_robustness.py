"""The robustness appendix: the abuse suite's result as a matrix, from the shipped reference result,
synthetic results (a failed, a skipped and a not-run cell; unreadable and missing files), the macros and the PDF."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest

from archbench.render import latex
from archbench.render.prose import Prose
from archbench.report import build as report
from archbench.studies.robustness import data as rres
from archbench.studies.robustness import facts as rtext

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO / "paper"
SECTION = PAPER / "templates" / "robustness" / "section.tex.j2"
REFERENCE = REPO / "data" / "raw" / "reference-robustness" / "robustness.json"
MIXED = Path(__file__).parent / "fixtures" / "robustness" / "mixed" / "robustness.json"
CAMPAIGNS = Path(__file__).parent / "fixtures" / "campaigns"
# The appendix's sentences these tests read (paper/templates/robustness/sentences.tex.j2), by their fact's name.
SOURCE, PROVENANCE, SUMMARY = "source", "provenance", "summary"
SANITIZER, FUZZ = "sanitizer", "fuzz"


def sentences(facts: dict) -> dict[str, str]:
    """Each sentence of the appendix rendered from its facts, as its section template renders it."""
    prose = Prose()
    return {name: prose.sentence("robustness/sentences", name, facts[name]) if facts[name] else "" for name in facts}


def render(result: rres.RobustnessResult) -> tuple[dict[str, str], dict[str, str]]:
    """({macro: value, sentence: text}, {generated file: text}) for one result."""
    macros = latex.MacroSet()
    facts = rtext.robustness_facts(macros, result, Prose())
    files = rtext.appendix_files(result, Prose())
    return {**{name: m.value for name, m in macros.macros.items()}, **sentences(facts)}, files


def load(path: Path) -> rres.RobustnessResult:
    return rres.read_robustness(path, Path("/nonexistent/processed"), Path("/nonexistent/raw"))


def write_result(tmp_path: Path, doc: dict, name: str = "result") -> Path:
    path = tmp_path / name / rres.RESULT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def every_macro_is_defined(macros: dict[str, str], files: dict[str, str]) -> None:
    used = latex.macros_used(SECTION.read_text())
    for text in [*files.values(), *macros.values()]:
        used |= latex.macros_used(text)
    robustness_used = {m for m in used if m.startswith(r"\abRobustness")}
    defined = {name for name in macros if name.startswith("\\")}
    assert robustness_used <= defined, sorted(robustness_used - defined)


@pytest.fixture(scope="module")
def reference_doc() -> dict:
    return json.loads(REFERENCE.read_text())


# --------------------------------------------------------------------------- the shipped reference result


def test_reference_result_is_shipped_with_its_provenance():
    assert REFERENCE.is_file(), "data/raw/reference-robustness/robustness.json must be shipped"
    readme = (REFERENCE.parent / "README.md").read_text()
    provenance = json.loads((REFERENCE.parent / rres.PROVENANCE_FILE).read_text())
    assert provenance["git_commit"] in readme and provenance["hostname"] in readme
    assert re.fullmatch(r"[0-9a-f]{40}", provenance["git_commit"])


def test_reference_result_parses_into_the_whole_matrix(reference_doc):
    result = load(REFERENCE)
    assert result.available and result.source.origin == "reference"
    assert [v.name for v in result.variants] == [v["variant"] for v in reference_doc["variants"]]
    assert list(result.cases) == reference_doc["cases"]
    counts = result.counts()
    summary = reference_doc["summary"]
    assert (counts["passed"], counts["failed"], counts["skipped"]) == (
        summary["passed"],
        summary["failed"],
        summary["skipped"],
    )
    assert counts["not run"] == len(result.variants) * len(result.cases) - len(reference_doc["results"])
    for architecture, rows in result.architectures():
        by_arch = result.counts(rows)
        assert {k: by_arch[k] for k in ("passed", "failed", "skipped")} == summary["by_architecture"][architecture]
    # Host and commit come from provenance.json beside the result, since the suite does not record them.
    assert result.provenance["hostname"] and result.provenance["git_commit"]


def test_reference_macros_and_matrix(reference_doc):
    result = load(REFERENCE)
    macros, files = render(result)
    every_macro_is_defined(macros, files)
    summary, settings = reference_doc["summary"], reference_doc["settings"]
    assert macros[r"\abRobustnessPassedCount"] == f"{summary['passed']:,}"
    assert macros[r"\abRobustnessFailedCount"] == f"{summary['failed']:,}"
    assert macros[r"\abRobustnessVariantCount"] == str(len(reference_doc["variants"]))
    assert macros[r"\abRobustnessCaseCount"] == str(len(reference_doc["cases"]))
    assert macros[r"\abRobustnessHeaderTimeout"] == latex.format_compact(settings["header_timeout_s"])
    assert macros[r"\abRobustnessSlowlorisConnections"] == f"{settings['slowloris_connections']:,}"
    assert macros[r"\abRobustnessRssBound"] == latex.format_compact(settings["rss_growth_bound_kb"] / 1024)
    assert macros[r"\abRobustnessHost"] == latex.escape(result.provenance["hostname"])
    assert result.provenance["git_commit"][:12] in macros[r"\abRobustnessCommit"]
    assert macros[r"\abRobustnessBuildType"] == reference_doc["build"]["build_type"]
    assert "reference" in macros[SOURCE]
    table = files[rres.TABLE_FILE]
    # One row per variant, one mark per case.
    for variant in reference_doc["variants"]:
        row = next(line for line in table.splitlines() if line.startswith(rres.tt(variant["variant"]) + " &"))
        assert row.count(" & ") == len(reference_doc["cases"]) + 2
    marks = sum(table.count(rres.MARKS[o]) for o in ("passed", "failed")) - 2  # the caption names each mark once
    assert marks == len(reference_doc["results"]) - summary["skipped"]
    # Expectations that differ between architectures (slowloris: event loops against slots) are listed by group.
    notes = files[rres.NOTES_FILE]
    slowloris = {r["expected"] for r in reference_doc["results"] if r["case"] == "slowloris" and r["expected"]}
    assert len(slowloris) > 1
    for text in slowloris:
        assert rres.plain(text) in notes


def test_sanitizer_and_fuzz_facts_come_from_the_files():
    facts = rtext.tooling(REPO)
    harnesses = sorted(p.stem[len("fuzz_") :] for p in (REPO / "servers_c" / "fuzz").glob("fuzz_*.c"))
    assert [h.name for h in facts.harnesses] == harnesses
    corpus = [p for p in (REPO / "servers_c" / "fuzz" / "corpus").glob("*/*") if p.is_file()]
    assert sum(h.corpus or 0 for h in facts.harnesses) == len(corpus)
    macros = latex.MacroSet()
    rtext.tooling_facts(macros, facts)
    values = {name: m.value for name, m in macros.macros.items()}
    assert values[r"\abRobustnessFuzzCorpusCount"] == f"{len(corpus):,}"
    assert values[r"\abRobustnessFuzzHarnessCount"] == str(len(harnesses))
    ci = (REPO / ".ci" / "run").read_text()
    for command in facts.ci_commands:
        assert command in ci
    assert any(c.startswith("make fuzz") for c in facts.ci_commands)
    assert any(c.startswith("make test-sanitize") for c in facts.ci_commands)


def test_tooling_without_the_files_is_a_sentence(tmp_path):
    macros = latex.MacroSet()
    facts = rtext.tooling_facts(macros, rtext.tooling(tmp_path))
    values = {name: m.value for name, m in macros.macros.items()} | sentences(facts)
    assert values[FUZZ] == "The repository has no fuzzing harness."
    assert "no sanitizer target" in values[SANITIZER]
    assert values[r"\abRobustnessFuzzHarnessCount"] == "0"


# --------------------------------------------------------------------------- synthetic results


def test_failed_skipped_and_not_run_cells_are_marked_and_explained():
    doc = json.loads(MIXED.read_text())
    result = load(MIXED)
    macros, files = render(result)
    every_macro_is_defined(macros, files)
    assert result.outcome("epoll_edge", "header_100kb") == "failed"
    assert result.outcome("io_uring_t1", "slowloris") == "skipped"
    assert result.outcome("epoll_edge", "clean_shutdown") == "not run"
    assert macros[r"\abRobustnessFailedCount"] == "1"
    assert macros[r"\abRobustnessSkippedCount"] == str(doc["summary"]["skipped"])
    assert macros[r"\abRobustnessNotRunCount"] == "1"
    # blocking and thread_pool passed everything; epoll failed one; io_uring was skipped.
    assert macros[r"\abRobustnessArchitecturesAllPassed"] == "2"
    table, notes = files[rres.TABLE_FILE], files[rres.NOTES_FILE]
    edge = next(line for line in table.splitlines() if line.startswith(rres.tt("epoll_edge") + " &"))
    assert r"\ding{55}\textsuperscript{1}" in edge and r"$\cdot$" in edge
    io = next(line for line in table.splitlines() if line.startswith(rres.tt("io_uring_t1") + " &"))
    assert io.count(" & -- ") + io.count(" & --") >= len(doc["cases"])
    assert io.rstrip(" \\").endswith("0/4 & 0/4")
    # The failure is explained, escaped, on one line, ASCII only, cut when long.
    failure = next(line for line in notes.splitlines() if line.startswith(r"\item \textsuperscript{1}"))
    assert "431 once the head passes 8" in failure and "heap-buffer-overflow" in failure
    assert r"100\% of \$HOME \#1 \{x\} \textasciitilde{}y \textasciicircum{}z \textbackslash{} caf<U+00E9>" in failure
    assert "cut here" in failure
    assert "unsupported here: io\\_uring\\_setup" in notes and "every case" in notes
    assert "not run" in notes.lower() or "no result in this file" in notes
    assert "Every failed cell is explained" in macros[SUMMARY]
    # No provenance.json beside the fixture: host and commit are unknown, and the text says why.
    assert macros[r"\abRobustnessHost"] == "unknown" and macros[r"\abRobustnessCommit"] == "unknown"
    assert "does not record the host" in macros[PROVENANCE]


def test_a_single_failed_case_in_the_reference_is_never_hidden(tmp_path, reference_doc):
    doc = copy.deepcopy(reference_doc)
    victim = next(r for r in doc["results"] if r["variant"] == "reactor_edge" and r["case"] == "slowloris")
    victim.update(outcome="failed", observed="CaseFailure: normal client not served within 1.5 s")
    # The same pair recorded again as passed does not hide the failure.
    doc["results"].append({**victim, "outcome": "passed", "observed": "fine"})
    result = load(write_result(tmp_path, doc))
    macros, files = render(result)
    assert result.outcome("reactor_edge", "slowloris") == "failed"
    assert macros[r"\abRobustnessFailedCount"] == "1"
    assert macros[r"\abRobustnessArchitecturesAllPassed"] == str(len(result.architectures()) - 1)
    assert "normal client not served within 1.5 s" in files[rres.NOTES_FILE]
    row = next(line for line in files[rres.TABLE_FILE].splitlines() if line.startswith(rres.tt("reactor_edge") + " &"))
    assert r"\ding{55}\textsuperscript{1}" in row and "16/17" in row


def test_an_unknown_outcome_counts_as_failed(tmp_path, reference_doc):
    doc = copy.deepcopy(reference_doc)
    doc["results"][0]["outcome"] = "xpassed"
    result = load(write_result(tmp_path, doc))
    assert result.counts()["failed"] == 1
    assert "xpassed" in result.cells[(doc["results"][0]["variant"], doc["results"][0]["case"])]["observed"]


def test_a_skipped_variant(tmp_path, reference_doc):
    doc = copy.deepcopy(reference_doc)
    for r in doc["results"]:
        if r["variant"] == "io_uring_t2":
            r.update(outcome="skipped", expected="", observed="unsupported here: no io_uring", details={})
    result = load(write_result(tmp_path, doc))
    macros, files = render(result)
    assert macros[r"\abRobustnessSkippedCount"] == str(len(doc["cases"]))
    assert (
        r"\texttt{io\_\allowbreak{}uring\_\allowbreak{}t2}, every case: unsupported here: no io\_uring."
        in (files[rres.NOTES_FILE])
    )
    assert "were skipped" in macros[SUMMARY]


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        json.dumps({"schema": 2, "results": []}),
        json.dumps([1, 2]),
        json.dumps({"schema": 1, "results": []}),
    ],
)
def test_an_unreadable_result_is_a_sentence(tmp_path, content):
    path = tmp_path / rres.RESULT_FILE
    path.write_text(content)
    result = load(path)
    assert not result.available
    macros, files = render(result)
    every_macro_is_defined(macros, files)
    assert "could not be read" in macros[SOURCE]
    assert all(text.startswith("%") for text in files.values())


def test_a_missing_result_is_a_sentence(tmp_path):
    result = rres.read_robustness(None, tmp_path / "processed", tmp_path / "raw")
    assert not result.available and result.source.origin == "missing"
    macros, files = render(result)
    every_macro_is_defined(macros, files)
    assert macros[SOURCE].startswith("Neither")
    assert "make test" in macros[SOURCE]
    assert macros[r"\abRobustnessPassedCount"] == latex.MISSING
    assert all(text.startswith("%") for text in files.values())
    # A path that was asked for but does not exist says so too.
    asked = rres.read_robustness(tmp_path / "nope.json", tmp_path / "processed", tmp_path / "raw")
    assert not asked.available and asked.problem.kind == "missing"
    assert "does not exist" in render(asked)[0][SOURCE]


def test_this_machines_result_comes_before_the_reference(tmp_path):
    processed, raw = tmp_path / "processed", tmp_path / "raw"
    (raw / rres.REFERENCE_DIR).mkdir(parents=True)
    shutil.copy(MIXED, raw / rres.REFERENCE_DIR / rres.RESULT_FILE)
    assert rres.read_robustness(None, processed, raw).source.origin == "reference"
    processed.mkdir()
    shutil.copy(MIXED, processed / rres.RESULT_FILE)
    chosen = rres.read_robustness(None, processed, raw)
    assert chosen.source.origin == "processed" and chosen.source.path == processed / rres.RESULT_FILE
    macros, _ = render(chosen)
    assert "this machine's" in macros[SOURCE]
    given = rres.read_robustness(str(MIXED), processed, raw)
    assert given.source.path == MIXED and "as requested" in render(given)[0][SOURCE]


# --------------------------------------------------------------------------- the report and the PDF


def test_build_report_writes_the_appendix(shared_reports):
    outputs, _ = shared_reports.build({"main": "fixture-minimal", "robustness": str(MIXED)}, CAMPAIGNS)
    assert outputs.result("robustness") is not None and outputs.result("robustness").available
    assert rres.TABLE_FILE in outputs.generated and rres.NOTES_FILE in outputs.generated
    source = sentences(dict(outputs.studies["robustness"].section))[SOURCE]
    assert "as requested" in source and source in outputs.generated["section-robustness.tex"].read_text()
    assert r"\input{generated/section-robustness}" in outputs.generated["appendices.tex"].read_text()


def pathological(tmp_path: Path) -> Path:
    """The mixed fixture with a failure whose texts are long unspaced runs (a byte dump, a deep path) and LaTeX."""
    doc = json.loads(MIXED.read_text())
    cell = next(r for r in doc["results"] if r["outcome"] == "failed")
    cell["observed"] = "b'" + "\\x16\\x03\\x01\\x00" * 60 + "' \\end{document} $$ %" + "/very/deep" * 40
    cell["expected"] = "_" * 200
    return write_result(tmp_path, doc, "pathological")


def test_a_named_result_that_does_not_exist_is_refused(tmp_path):
    with pytest.raises(report.ParameterError, match="robustness="):
        report.build_report(
            {"main": "fixture-minimal", "robustness": str(tmp_path / "none.json")},
            paths=report.ReportPaths(
                raw_root=CAMPAIGNS,
                processed_dir=tmp_path / "processed",
                generated_dir=tmp_path / "paper" / "generated",
                figures_dir=tmp_path / "paper" / "figures",
            ),
        )


# The plain build's PDF is shared with tests/test_latex.py; the other inputs' PDFs are long integration (latexmk),
# left to `make test-slow` but for the mixed result's (tests above check every input's generated files).
@pytest.mark.parametrize(
    "which",
    ["mixed", "default", *(pytest.param(which, marks=pytest.mark.slow) for which in ("reference", "pathological"))],
)
def test_report_pdf_builds_with_the_appendix(which, tmp_path, shared_reports):
    robustness = {
        "mixed": str(MIXED),
        "reference": str(REFERENCE),
        "default": None,
        "pathological": None,
    }[which]  # default: neither tmp processed/ nor the fixture raw root has one
    if which == "pathological":
        robustness = str(pathological(tmp_path))
    # default: the shared plain build's
    campaigns = "fixture-minimal" if robustness is None else {"main": "fixture-minimal", "robustness": robustness}
    pdf = shared_reports.pdf(campaigns, CAMPAIGNS)
    assert pdf.is_file() and pdf.read_bytes().startswith(b"%PDF")
    log = (pdf.parent / "report.log").read_text(errors="replace")
    assert "undefined" not in log.lower(), [line for line in log.splitlines() if "ndefined" in line]
    assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]


def test_a_result_without_build_or_settings_still_reads(tmp_path, reference_doc):
    doc = copy.deepcopy(reference_doc)
    del doc["build"], doc["settings"], doc["generated_at"]
    result = load(write_result(tmp_path, doc))
    macros, files = render(result)
    every_macro_is_defined(macros, files)
    assert result.available
    assert "unrecorded build type" in macros[PROVENANCE]
    assert macros[r"\abRobustnessHeaderTimeout"] == latex.MISSING
    assert macros[r"\abRobustnessDate"] == "unknown"
