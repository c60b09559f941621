"""The notebooks as the analysis, their HTML export, the appendix listing them, progress in a kernel (no kernel run).

Running real kernels is in tests/test_notebook_runner.py and tests/test_lab.py (integration).
"""

from __future__ import annotations

import base64
import io
import json
import re
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from archbench.analyze import analysis
from archbench.cli.lab import KERNEL_NAME, ProjectKernelManager, lab_command, lab_url
from archbench.cli.notebooks import default_html_dir, executed_at, export_html
from archbench.config.params import ParameterError
from archbench.config.paths import RAW_ROOT, REPO_ROOT
from archbench.measure.progress import Progress
from archbench.render.prose import Prose
from archbench.render.study import ReportOptions
from archbench.report import pipeline
from archbench.studies.notebooks import index as notebook_index

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "campaigns"
# nbconvert writes `<img alt="..." class="" src="data:image/png;base64,...">`: the figure travels inside the page.
EMBEDDED_PNG = re.compile(r'<img [^>]*src="data:image/png;base64,')
NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
# A 1x1 PNG: what an executed cell's figure output holds.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100ffff03000006000557bfabd40000000049454e44ae426082"
    )
).decode()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_import_the_installed_package_and_name_the_project_kernel(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "sys.path" not in code and "root.parent" not in code
    assert notebook.metadata["kernelspec"]["name"] == KERNEL_NAME
    tagged = [cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1, "one papermill parameters cell"


def test_analyze_notebook_runs_the_pipeline_steps_in_order() -> None:
    notebook = nbformat.read(REPO_ROOT / "notebooks" / "analyze.ipynb", as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    steps = [
        "pipeline.check_parameters(",
        "pipeline.load_campaign(",
        "pipeline.tidy_trials(",
        "pipeline.summarise(",
        "pipeline.write_processed(",
        "pipeline.statistical_tests(",
        "analysis.comparisons(",
        "pipeline.inline_figures(",
        "report.write_report(",
    ]
    positions = [code.index(step) for step in steps]
    assert positions == sorted(positions)
    assert "build_report(" not in code  # the steps, not the one call
    # Each step has a markdown cell that says what and why.
    assert sum(cell.cell_type == "markdown" and cell.source.startswith("## ") for cell in notebook.cells) >= 8


def test_the_notebook_threshold_is_the_report_option() -> None:
    """papermill needs a literal in the parameters cell: it must stay the one definition's value."""
    notebook = nbformat.read(REPO_ROOT / "notebooks" / "analyze.ipynb", as_version=4)
    parameters = next(cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", []))
    literal = re.search(r"^latency_knee_p99_ms = ([0-9.]+)", parameters.source, re.M)
    assert literal is not None and float(literal.group(1)) == ReportOptions.latency_knee_p99_ms


def test_pipeline_steps_process_a_campaign_as_analysis_does(tmp_path: Path) -> None:
    campaign_dir = FIXTURES / "fixture-architectures"
    by_steps = pipeline.process_main_campaign(campaign_dir, tmp_path / "steps")
    at_once = analysis.process_campaign(campaign_dir, tmp_path / "once")
    pd.testing.assert_frame_equal(by_steps.trials, at_once.trials)
    pd.testing.assert_frame_equal(by_steps.summary, at_once.summary)
    assert by_steps.summary_csv.read_bytes() == at_once.summary_csv.read_bytes()
    assert by_steps.trials_csv.read_bytes() == at_once.trials_csv.read_bytes()


def test_check_parameters_names_the_bad_one() -> None:
    with pytest.raises(ParameterError, match="campaign"):
        pipeline.check_parameters("no-such-campaign", FIXTURES, 1.0)
    with pytest.raises(ParameterError, match="latency_knee_p99_ms"):
        pipeline.check_parameters("fixture-minimal", FIXTURES, -1)
    assert pipeline.check_parameters("fixture-minimal", FIXTURES, 1.0) == FIXTURES / "fixture-minimal"


def test_load_campaign_refuses_a_processed_dir_inside_the_raw_campaign() -> None:
    with pytest.raises(ValueError, match="immutable raw campaign"):
        pipeline.load_campaign(FIXTURES / "fixture-minimal", FIXTURES / "fixture-minimal" / "processed")


def _executed_notebook(path: Path) -> Path:
    cell = new_code_cell("display(figure)")
    cell.outputs = [new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})]
    notebook = new_notebook(cells=[cell])
    notebook.metadata["papermill"] = {"end_time": "2026-11-24T10:24:55.123456+00:00"}
    nbformat.write(notebook, path)
    return path


def test_html_export_embeds_figures_and_says_what_it_is(tmp_path: Path) -> None:
    executed = _executed_notebook(tmp_path / "run_trials-20261124T102456Z.ipynb")
    page = export_html(executed, tmp_path / "html" / "run_trials-c1.html", notebook="run_trials", campaign="c1")
    text = page.read_text(encoding="utf-8")
    assert len(EMBEDDED_PNG.findall(text)) == 1
    facts = notebook_index.page_facts(page)
    assert facts == {
        "notebook": "run_trials",
        "campaign": "c1",
        "executed": "2026-11-24T10:24:55Z",
        "executed-copy": executed.name,
    }
    # A second export replaces the first (regenerable), leaving no scratch file behind.
    export_html(executed, page, notebook="run_trials", campaign="c1")
    assert [p.name for p in page.parent.iterdir()] == ["run_trials-c1.html"]


def test_execution_time_is_utc_whatever_the_form_papermill_wrote() -> None:
    naive = new_notebook(metadata={"papermill": {"end_time": "2026-11-24T10:24:55.5"}})
    offset = new_notebook(metadata={"papermill": {"end_time": "2026-11-24T11:24:55+01:00"}})
    assert executed_at(naive) == executed_at(offset) == "2026-11-24T10:24:55Z"


def test_html_goes_beside_the_report_only_for_the_repositorys_campaigns(tmp_path: Path) -> None:
    assert default_html_dir(RAW_ROOT) == REPO_ROOT / "paper" / "notebooks"
    assert default_html_dir(tmp_path / "raw") is None


def test_appendix_lists_the_exported_notebooks(tmp_path: Path) -> None:
    paper = tmp_path / "paper"
    (paper / "notebooks").mkdir(parents=True)
    executed = _executed_notebook(tmp_path / "analyze-1.ipynb")
    export_html(executed, paper / "notebooks" / "analyze.html", notebook="analyze", campaign="default_vm")
    (paper / "notebooks" / "stray.html").write_text("<html><head></head><body></body></html>")
    entries = notebook_index.notebook_entries(paper / "notebooks")
    assert [(e.file, e.notebook, e.campaign, e.executed) for e in entries] == [
        ("analyze.html", "analyze", "default_vm", "2026-11-24T10:24:55Z"),
        ("stray.html", "stray", "", ""),
    ]
    written = notebook_index.write_notebook_index(paper / "generated", Prose())
    tex = written[notebook_index.NOTEBOOKS_FILE].read_text()
    assert r"\section{Executed notebooks}" in tex and r"\label{tab:notebooks}" in tex
    assert "default\\_vm" in tex and "2026-11-24 10:24:55" in tex
    assert "2 such exports" in tex


def test_appendix_without_exports_is_a_sentence(tmp_path: Path) -> None:
    tex = notebook_index.notebook_index_tex(tmp_path / "none", Prose())
    assert r"\section{Executed notebooks}" in tex
    assert "No executed notebook" in tex and "longtable" not in tex


def test_progress_draws_a_bar_and_keeps_every_line(tmp_path: Path) -> None:
    stream = io.StringIO()
    ticks = iter([0.0, 10.0, 20.0])
    progress = Progress(
        total=2, already_done=0, remaining_work_s=10.0, stream=stream, clock=lambda: next(ticks), bar=True
    )
    progress.start_message("c1")
    progress.trial_finished("t1", "ok", 5.0)
    progress.trial_finished("t2", "ok", 5.0)
    text = stream.getvalue()
    lines = [line.split("\r")[-1] for line in text.splitlines()]
    assert "campaign c1: 2 trials" in lines
    assert any(line.startswith("[1/2]  50.0% elapsed 0:10 ETA 0:10  t1 ok") for line in lines)
    assert any(line.startswith("[2/2] 100.0%") for line in lines)
    assert "2/2 trials" in text and "ETA 0:00" in text  # the bar, closed at the last trial


def test_progress_outside_a_kernel_writes_lines_only() -> None:
    stream = io.StringIO()
    progress = Progress(total=1, already_done=0, remaining_work_s=1.0, stream=stream)
    assert progress.bar is False  # pytest is no Jupyter kernel
    progress.start_message("c1")
    progress.trial_finished("t1", "ok", 1.0)
    assert stream.getvalue().splitlines()[0] == "campaign c1: 1 trials"
    assert "\r" not in stream.getvalue()


def test_papermill_runs_this_interpreter_whatever_kernelspecs_exist() -> None:
    manager = ProjectKernelManager(kernel_name="no-such-kernel-anywhere")
    spec = manager.kernel_spec
    assert spec.argv[0] == sys.executable and "ipykernel_launcher" in spec.argv
    assert spec.display_name == "archbench (.venv)"


def test_lab_command_is_headless_on_loopback_with_a_token() -> None:
    command = lab_command("127.0.0.1", 8899, "abc", open_browser=False)
    assert command[:3] == [sys.executable, "-m", "jupyterlab"]
    assert "--no-browser" in command and "--ip=127.0.0.1" in command and "--port=8899" in command
    assert "--IdentityProvider.token=abc" in command and f"--ServerApp.root_dir={REPO_ROOT}" in command
    assert lab_url("127.0.0.1", 8899, "abc") == "http://127.0.0.1:8899/lab?token=abc"
    assert json.loads(json.dumps(command)) == command


def test_index_command_refreshes_the_appendix_after_the_analysis_exported_itself(tmp_path: Path) -> None:
    paper = tmp_path / "paper"
    generated = paper / "generated"
    assert notebook_index.main(["--generated-dir", str(generated)]) == 0
    assert "No executed notebook" in (generated / notebook_index.NOTEBOOKS_FILE).read_text()
    export_html(
        _executed_notebook(tmp_path / "a.ipynb"), paper / "notebooks" / "analyze.html", notebook="analyze", campaign="c"
    )
    assert notebook_index.main(["--generated-dir", str(generated)]) == 0
    assert r"\texttt{analyze.html}" in (generated / notebook_index.NOTEBOOKS_FILE).read_text()
