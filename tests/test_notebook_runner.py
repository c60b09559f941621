"""`python -m archbench notebook` on a tiny notebook: progress reaches the terminal live, figures reach the HTML.

The notebook prints the runner's per-trial progress lines (archbench.measure.progress, as the campaign notebooks
do) and then waits until this test has seen them on the runner's stderr: the notebook can only end if they
arrived while it was still running. It then displays a matplotlib Figure made without pyplot, which the HTML
export must carry as an embedded PNG.
"""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from archbench.config.paths import REPO_ROOT
from archbench.studies.notebooks.index import page_facts

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # starts a Jupyter kernel and runs notebooks

EMBEDDED_PNG = re.compile(r'<img [^>]*src="data:image/png;base64,')
TRIALS = 3

PARAMETERS = 'release = ""  # a file the test creates once it has seen the progress lines\ntrials = 3'
PROGRESS = """import sys
import time
from pathlib import Path

from archbench.measure.progress import Progress

progress = Progress(total=trials, already_done=0, remaining_work_s=float(trials), stream=sys.stdout)
progress.start_message("tiny")
for index in range(trials):
    time.sleep(0.2)
    progress.trial_finished(f"trial-{index}", "ok", 1.0)"""
WAIT = """deadline = time.monotonic() + 60
while not Path(release).exists() and time.monotonic() < deadline:
    time.sleep(0.1)
assert Path(release).exists(), "the runner's terminal never showed the progress lines"
print("released")"""
FIGURE = """from matplotlib.figure import Figure
from matplotlib_inline.backend_inline import set_matplotlib_formats

set_matplotlib_formats("png")
figure = Figure(figsize=(2, 2))
figure.subplots().plot([1, 3, 2])
display(figure)"""


def tiny_notebook(path: Path) -> Path:
    parameters = new_code_cell(PARAMETERS, metadata={"tags": ["parameters"]})
    notebook = new_notebook(cells=[parameters, new_code_cell(PROGRESS), new_code_cell(WAIT), new_code_cell(FIGURE)])
    notebook.metadata["kernelspec"] = {"display_name": "archbench (.venv)", "language": "python", "name": "archbench"}
    notebook.metadata["language_info"] = {"name": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def read_lines(stream, into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def test_progress_reaches_the_terminal_while_the_notebook_runs_and_the_html_has_the_figure(
    tmp_path: Path, repo_env: dict[str, str]
) -> None:
    source = tiny_notebook(tmp_path / "notebooks" / "tiny.ipynb")
    release = tmp_path / "release"
    command = [sys.executable, "-m", "archbench", "notebook", str(source), "--output-dir", str(tmp_path / "executed")]
    command += ["--html-dir", str(tmp_path / "html"), "--campaign", "c-tiny", "-p", "release", str(release)]
    runner = subprocess.Popen(
        command, cwd=REPO_ROOT, env=repo_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=read_lines, args=(runner.stderr, lines), daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 90
        while not any(f"[{TRIALS}/{TRIALS}]" in line for line in seen) and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            seen.append(line)
        assert runner.poll() is None, "the notebook ended before its progress lines reached the terminal"
        release.touch()
        runner.wait(timeout=90)  # stderr is the reader thread's; communicate() would take part of it
        out = runner.stdout.read() if runner.stdout else ""
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    reader.join(timeout=10)
    while not lines.empty():
        seen.append(lines.get() or "")
    err = "".join(seen)
    assert runner.returncode == 0, err
    assert "campaign tiny: 3 trials" in err
    for index in range(TRIALS):
        assert re.search(rf"\[{index + 1}/3\] +\d+\.\d% elapsed \d+:\d\d ETA \d+:\d\d  trial-{index} ok", err)
    assert "3/3 trials" in err  # the tqdm bar drawn inside the kernel, on the same stream
    assert "released" in err

    executed = Path(out.strip())
    assert executed.parent == tmp_path / "executed" and executed.is_file()
    page = tmp_path / "html" / "tiny.html"
    text = page.read_text(encoding="utf-8")
    assert len(EMBEDDED_PNG.findall(text)) >= 1
    assert page_facts(page)["notebook"] == "tiny" and page_facts(page)["campaign"] == "c-tiny"


def test_no_html_leaves_only_the_executed_copy(tmp_path: Path, repo_env: dict[str, str]) -> None:
    source = tiny_notebook(tmp_path / "notebooks" / "tiny.ipynb")
    (tmp_path / "release").touch()
    command = [sys.executable, "-m", "archbench", "notebook", str(source), "--output-dir", str(tmp_path / "executed")]
    command += ["--no-html", "-p", "release", str(tmp_path / "release"), "-p", "trials", "1"]
    done = subprocess.run(command, cwd=REPO_ROOT, env=repo_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [p.suffix for p in (tmp_path / "executed").iterdir()] == [".ipynb"]
    assert "HTML:" not in done.stderr
