"""The paired ratios in the report (archbench.studies.statistics.paired and paired_power): the CSV, table,
forest plot, macros and the sentence with its "could have detected" phrase, on a small synthetic trials frame."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_adaptive_paired import RATES
from test_adaptive_paired import _campaign as _adaptive_campaign  # tests/ is on pytest's pythonpath
from test_paired import _frame

from archbench.analyze import analysis
from archbench.analyze.paired import PAIRED_CSV, paired_ratios
from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.studies.statistics.paired import PAIRED_FIGURE, PAIRED_TABLE_FILE, TEMPLATE, paired_outputs
from archbench.studies.statistics.paired_figure import forest_figure, forest_rows

PROSE = Prose()


def _processed(tmp_path: Path, trials: pd.DataFrame) -> analysis.ProcessedCampaign:
    summary = pd.DataFrame({"config_id": trials["config_id"].unique(), "pipeline": 1})
    processed_dir = tmp_path / "processed"
    return analysis.ProcessedCampaign(
        campaign=None,  # type: ignore[arg-type]  # paired_outputs reads trials and summary only
        trials=trials,
        summary=summary,
        trials_csv=processed_dir / "trials.csv",
        summary_csv=processed_dir / "summary.csv",
    )


def test_paired_outputs_write_csv_table_figure_and_macros(tmp_path: Path) -> None:
    macros = MacroSet()
    generated, figures_dir = tmp_path / "paper" / "generated", tmp_path / "paper" / "figures"
    files, facts = paired_outputs(_processed(tmp_path, _frame()), macros, generated, figures_dir, PROSE, resamples=200)
    frame = pd.read_csv(tmp_path / "processed" / PAIRED_CSV)
    assert len(frame) == 6  # three configurations x two metrics
    assert (figures_dir / PAIRED_FIGURE).is_file()
    assert r"\label{tab:paired}" in files[PAIRED_TABLE_FILE]
    assert "figures/" + PAIRED_FIGURE in files["figure-paired.tex"]
    values = {m.name: m.value for m in macros.macros.values()}
    sentence = PROSE.sentence(TEMPLATE, "sentence", facts)
    assert "3 configurations" in sentence and "client-bound" in sentence
    assert "1 round dropped" in sentence
    cpu = frame[frame["metric"] == "server_cpu_us_per_request"]["half_width_pct"].median()
    assert values[r"\abPairedCpuMedianHalfWidth"] == f"{cpu:.1f}" + r"\,\%"
    assert values[r"\abPowerPercent"] == "80"
    # The client-bound pair is marked in the table and compared on CPU per request.
    assert r"epoll$^{\dagger}$ & CPU/req." in files[PAIRED_TABLE_FILE]


def test_not_distinguishable_comes_with_what_could_have_been_detected(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = _frame().to_dict("records")
    for row in rows:  # noise on every side, and nginx-t2 within 1 % of the reference: not distinguishable
        row["requests_per_sec"] *= 1 + 0.03 * rng.standard_normal()
    macros = MacroSet()
    _, facts = paired_outputs(
        _processed(tmp_path, pd.DataFrame(rows)), macros, tmp_path / "g", tmp_path / "f", PROSE, resamples=100
    )
    sentence = PROSE.sentence(TEMPLATE, "sentence", facts)
    assert "not distinguishable from the reference" in sentence
    assert "could have detected differences of $X$ or more" in sentence


def test_no_reference_gives_sentences_not_errors(tmp_path: Path) -> None:
    frame = _frame()
    frame = frame[~frame["architecture"].isin(["nginx"])]
    macros = MacroSet()
    files, facts = paired_outputs(_processed(tmp_path, frame), macros, tmp_path / "g", tmp_path / "f", PROSE)
    assert "no paired ratio is computed" in PROSE.sentence(TEMPLATE, "sentence", facts)
    assert files[PAIRED_TABLE_FILE].startswith("% No paired-ratio table")
    assert forest_figure(pd.DataFrame(), False) is None


def test_forest_figure_draws_the_tables_intervals() -> None:
    frame = paired_ratios(_frame(), resamples=100)
    rows = forest_rows(frame)
    figure = forest_figure(frame, several_depths=False)
    assert figure is not None
    axes = figure.axes[0]
    paired_bars = axes.containers[0]  # the first errorbar container: the paired intervals
    segments = paired_bars.lines[2][0].get_segments()
    for segment, (_, row) in zip(segments, rows.iterrows(), strict=True):
        assert segment[0][0] == pytest.approx(row["low"]) and segment[1][0] == pytest.approx(row["high"])


def test_a_paired_adaptive_campaign_says_how_it_stopped(tmp_path: Path) -> None:
    campaign = _adaptive_campaign(tmp_path / "raw", RATES)
    meta = json.loads((campaign / "campaign.json").read_text())
    meta["parameters"].update(ci_target=2.0, max_trials=5, adaptive_criterion="paired_median", adaptive_budget_s=300)
    (campaign / "campaign.json").write_text(json.dumps(meta))
    (campaign / "adaptive").mkdir()
    (campaign / "adaptive" / "adaptive-20261121T100000000000Z.json").write_text(json.dumps({"stopped_by": "budget"}))
    processed = analysis.process_campaign(campaign, tmp_path / "processed")
    macros = MacroSet()
    _, facts = paired_outputs(processed, macros, tmp_path / "g", tmp_path / "f", PROSE, resamples=100)
    sentence = PROSE.sentence(TEMPLATE, "sentence", facts)
    assert "until the median compared paired half-width was at most 2.0" in sentence
    assert "300\\,s of adaptive trials" in sentence and "the time budget ended it" in sentence


def test_a_campaign_without_a_ci_target_is_held_to_no_target(tmp_path: Path) -> None:
    # No ci_target (campaign=None: no parameters at all): the half-widths are stated, never "within" or "above" a
    # target the campaign did not set.
    _, facts = paired_outputs(_processed(tmp_path, _frame()), MacroSet(), tmp_path / "g", tmp_path / "f", PROSE)
    sentence = " ".join(PROSE.sentence(TEMPLATE, "sentence", facts).split())
    assert "The median half-width of the paired server-CPU-per-request ratios is" in sentence
    assert "target" not in sentence
