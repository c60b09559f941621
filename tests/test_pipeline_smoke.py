"""The whole pipeline on the smoke profile, as `make all` runs it, in a temp tree.

run_trials.ipynb (papermill, PROFILE=smoke) -> data/raw/<campaign>
analyze.ipynb -> processed CSVs, generated LaTeX, figures
latexmk -> report.pdf built from exactly that campaign.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CAMPAIGN = "smoke-pipeline"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (make setup)"),
    pytest.mark.skipif(shutil.which("latexmk") is None, reason="latexmk is not installed (make setup)"),
    pytest.mark.skipif(
        not (REPO / "build" / "bin" / "thread_pool").exists(), reason="servers not built (make servers)"
    ),
]


def archbench(env: dict[str, str], *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "archbench", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"archbench {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_smoke_profile_from_notebook_to_pdf(tmp_path: Path, cpu_pair, repo_env: dict[str, str]) -> None:
    raw = tmp_path / "raw"
    paper = tmp_path / "paper"
    paper.mkdir()
    for name in ("report.tex", "references.bib"):
        shutil.copy(REPO / "paper" / name, paper / name)
    shutil.copytree(REPO / "paper" / "templates", paper / "templates")

    archbench(
        repo_env,
        "notebook",
        "run_trials",
        "--campaign",
        CAMPAIGN,
        "--raw-root",
        str(raw),
        "-p",
        "profile",
        "smoke",
        "-p",
        "campaign",
        CAMPAIGN,
        "-p",
        "server_cpus",
        cpu_pair[0],
        "-p",
        "load_cpus",
        cpu_pair[1],
    )
    campaign_dir = raw / CAMPAIGN
    meta = json.loads((campaign_dir / "campaign.json").read_text())
    records = [json.loads(p.read_text()) for p in campaign_dir.glob("*.json") if p.name != "campaign.json"]
    assert len(records) == len(meta["plan"]), "every planned trial is recorded"
    assert all(r["status"] in ("ok", "unsupported") for r in records), [
        (r["trial_id"], r["failure_reason"]) for r in records if r["status"] not in ("ok", "unsupported")
    ]
    assert list((campaign_dir / "executed").glob("run_trials-*.ipynb")), "executed notebook kept beside the campaign"

    archbench(
        repo_env,
        "notebook",
        "analyze",
        "--campaign",
        CAMPAIGN,
        "--raw-root",
        str(raw),
        "--output-dir",
        str(tmp_path / "executed"),
        "-p",
        "processed_dir",
        str(tmp_path / "processed"),
        "-p",
        "generated_dir",
        str(paper / "generated"),
        "-p",
        "figures_dir",
        str(paper / "figures"),
    )
    trials_csv = (tmp_path / "processed" / "trials.csv").read_text()
    assert trials_csv.count("\n") == len(records) + 1, "one row per trial, warm-ups and failures included"
    assert (paper / "generated" / "macros.tex").is_file()

    latex = subprocess.run(
        ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
        cwd=paper,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert latex.returncode == 0, latex.stdout[-3000:]
    assert (paper / "report.pdf").read_bytes().startswith(b"%PDF")
    log = (paper / "report.log").read_text(errors="replace")
    assert "undefined" not in log.lower()
    # The report is about this campaign, not the reference one.
    assert CAMPAIGN in (paper / "generated" / "macros.tex").read_text()
    # The cross-OS path runs on every build, from source 000's published tables shipped in data/external.
    crossos = (paper / "generated" / "table-crossos-source000.tex").read_text()
    assert "Windows" in crossos and "Linux" in crossos and "Holm" in crossos
