"""Noise diagnostics: the drift and autocorrelation statistics, the campaign analysis and the report's part."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import REPO_ROOT
from scipy import stats as scipy_stats

from archbench.analyze import analysis
from archbench.analyze.noise import (
    AUTOCORRELATION_CSV,
    DRIFT_CSV,
    STEAL_FLAG_SHARE,
    TRIALS_CSV,
    WITHIN_ROUND_RESIDUALS,
    execution_order,
    noise_diagnostics,
    residuals,
)
from archbench.render.latex import FIGURE_MAX_HEIGHT, MacroSet
from archbench.render.prose import Prose
from archbench.stats.autocorrelation import autocorrelation
from archbench.stats.drift import relative_slope
from archbench.studies.statistics.noise import (
    NOISE_FIGURE,
    NOISE_FIGURE_FILE,
    TEMPLATE,
    noise_outputs,
    steal_facts,
)
from archbench.studies.statistics.noise_figure import noise_figure

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "campaigns"


def noise_text(outputs: tuple[dict[str, str], dict[str, Any]]) -> str:
    """The report's noise diagnostics as the statistics section gives them: its sentences, rendered from the facts
    (paper/templates/statistics/noise.tex.j2), then the figure's file."""
    files, facts = outputs
    parts = ("method", "drift", "autocorrelation", "steal")
    return "\n\n".join([*(Prose().sentence(TEMPLATE, part, facts) for part in parts), files[NOISE_FIGURE_FILE]])


# --------------------------------------------------------------------------- statistics


def test_relative_slope_by_hand() -> None:
    # y = 100, 102, 104, 106: slope 2 per round, mean 103, a perfect line.
    result = relative_slope([1, 2, 3, 4], [100, 102, 104, 106])
    assert result.n == 4 and result.mean == 103.0
    assert result.slope == pytest.approx(2.0) and result.relative == pytest.approx(2 / 103)
    assert result.ci.low == pytest.approx(2 / 103) and result.ci.high == pytest.approx(2 / 103)
    assert result.p_value < 1e-6


def test_relative_slope_interval_is_students_t() -> None:
    x, y = [1, 2, 3, 4, 5], [10.0, 12.0, 9.0, 13.0, 12.0]
    fit = scipy_stats.linregress(x, y)
    half = scipy_stats.t.ppf(0.975, 3) * fit.stderr / np.mean(y)
    result = relative_slope(x, y)
    assert result.ci.low == pytest.approx(fit.slope / np.mean(y) - half)
    assert result.ci.high == pytest.approx(fit.slope / np.mean(y) + half)
    assert result.p_value == pytest.approx(fit.pvalue)


def test_relative_slope_degenerate_cases() -> None:
    assert math.isnan(relative_slope([1, 2], [1.0, 2.0]).relative)
    assert math.isnan(relative_slope([1, 1, 1], [1.0, 2.0, 3.0]).p_value)
    assert math.isnan(relative_slope([1, 2, 3], [1.0, -1.0, 0.0]).relative)  # mean zero
    constant = relative_slope([1, 2, 3], [5.0, 5.0, 5.0])
    assert constant.relative == 0.0 and constant.p_value == 1.0
    missing = relative_slope([1, 2, 3, 4], [1.0, float("nan"), 3.0, 4.0])
    assert missing.n == 3
    with pytest.raises(ValueError):
        relative_slope([1, 2], [1.0])


def test_autocorrelation_of_an_ar1_series_and_of_white_noise() -> None:
    rng = np.random.default_rng(7)
    noise = rng.normal(size=200)
    ar = np.empty(200)
    ar[0] = noise[0]
    for i in range(1, 200):
        ar[i] = 0.7 * ar[i - 1] + noise[i]
    correlated = autocorrelation(ar)
    assert correlated.max_lag == 10 and correlated.lags == tuple(range(1, 11))
    assert 0.5 < correlated.lag1 < 0.85 and correlated.p_value < 1e-6
    white = autocorrelation(noise)
    assert abs(white.lag1) < white.band and white.p_value > 0.05
    assert white.band == pytest.approx(1.959964 / math.sqrt(200), rel=1e-5)


def test_ljung_box_at_lag_one_by_hand() -> None:
    values = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 6.0, 5.0, 8.0, 7.0, 9.0])
    result = autocorrelation(values, max_lag=1)
    centred = values - values.mean()
    r1 = float((centred[1:] * centred[:-1]).sum() / (centred**2).sum())
    n = values.size
    q = n * (n + 2) * r1**2 / (n - 1)
    assert result.lag1 == pytest.approx(r1)
    assert result.q[0] == pytest.approx(q)
    assert result.p_value == pytest.approx(scipy_stats.chi2.sf(q, 1))


def test_autocorrelation_of_short_or_constant_series_is_empty() -> None:
    assert autocorrelation([1.0, 2.0, 3.0]).lags == ()
    assert math.isnan(autocorrelation([1.0] * 30).p_value)
    assert autocorrelation([1.0] * 30).note


# --------------------------------------------------------------------------- the analysis


def shares(steal: float, softirq: float = 0.1) -> dict[str, Any]:
    part = {"ticks": 200, "iowait": 0.0, "irq": 0.0, "softirq": softirq, "steal": steal}
    return {"machine": dict(part, ticks=400), "server_cpus": part, "load_cpus": dict(part, steal=steal / 2)}


def synthetic_trials(rounds: int = 4) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Three configurations over `rounds` rounds: "up" grows 5 % of its first value per round, "flat" and
    "wobbly" alternate around their means; trials are started in the order given, with warm-ups and a
    failed trial that must be left out."""
    rows, records = [], []
    start = pd.Timestamp("2026-11-21T10:00:00Z")
    position = 0
    for round_number in range(1, rounds + 1):
        for config_id, base in (("up", 1000.0), ("flat", 500.0), ("wobbly", 200.0)):
            position += 1
            if config_id == "up":
                value = base * (1 + 0.05 * (round_number - 1))
            elif config_id == "flat":
                value = base + (1 if round_number % 2 else -1)
            else:
                value = base * (1.1 if round_number % 2 else 0.9)
            trial_id = f"{config_id}-r{round_number:02d}"
            rows.append(
                {
                    "trial_id": trial_id,
                    "config_id": config_id,
                    "variant": config_id,
                    "architecture": "epoll",
                    "warmup": False,
                    "status": "ok",
                    "repetition": round_number,
                    "order_index": position,
                    "started_at": (start + pd.Timedelta(seconds=3 * position)).isoformat(),
                    "requests_per_sec": value,
                    "server_cpu_us_per_request": 1e6 / value,
                }
            )
            records.append({"trial_id": trial_id, "cpu_shares": shares(0.03 if trial_id == "up-r02" else 0.001)})
    rows.append(dict(rows[0], trial_id="up-warmup", warmup=True, repetition=0, requests_per_sec=1.0))
    rows.append(dict(rows[1], trial_id="flat-r09", status="failed", repetition=9, requests_per_sec=math.nan))
    # Listed out of execution order: the analysis sorts by start time.
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=3).reset_index(drop=True)
    return frame, records


def test_execution_order_and_residuals() -> None:
    trials, _ = synthetic_trials()
    ordered = execution_order(trials)
    assert list(ordered["trial_id"][:4]) == ["up-r01", "flat-r01", "wobbly-r01", "up-r02"]
    assert len(ordered) == 12 and set(ordered["round"]) == {1, 2, 3, 4}
    relative = residuals(ordered, "requests_per_sec")
    # "up": 1000, 1050, 1100, 1150 around 1075.
    assert relative.iloc[0] == pytest.approx(1000 / 1075 - 1)
    wobbly = relative[ordered["config_id"] == "wobbly"]
    assert list(wobbly.round(6)) == [0.1, -0.1, 0.1, -0.1]


def test_drift_finds_the_growing_configuration() -> None:
    trials, records = synthetic_trials()
    diagnostics = noise_diagnostics(trials, records)
    drift = diagnostics.drift.set_index(["metric", "config_id"])
    up = drift.loc[("requests_per_sec", "up")]
    assert up["slope_pct_per_round"] == pytest.approx(100 * 50 / 1075)
    assert up["drifting"] and up["n"] == 4 and (up["first_round"], up["last_round"]) == (1, 4)
    assert not drift.loc[("requests_per_sec", "wobbly")]["drifting"]
    summary = diagnostics.drift_summary["requests_per_sec"]
    assert summary.tested == 3 and summary.drifting == 1
    assert summary.median_pct == pytest.approx(float(np.median(drift.xs("requests_per_sec")["slope_pct_per_round"])))
    assert diagnostics.drift_summary["server_cpu_us_per_request"].tested == 3


def test_round_effect_and_autocorrelation_within_rounds() -> None:
    trials, records = synthetic_trials(rounds=6)
    diagnostics = noise_diagnostics(trials, records)
    effect = diagnostics.round_effect["requests_per_sec"]
    assert effect.rounds == 6 and effect.n == 18 and 0.0 < effect.share < 1.0
    table = diagnostics.trials
    by_round = table.groupby("round")["residual_requests_per_sec"].mean()
    centred = table["residual_requests_per_sec"] - table["round"].map(by_round)
    expected = autocorrelation(centred.to_numpy())
    assert diagnostics.within_rounds["requests_per_sec"].acf == pytest.approx(expected.acf)


def test_steal_summary_flags_trials_over_the_threshold() -> None:
    trials, records = synthetic_trials()
    steal = noise_diagnostics(trials, records).steal
    assert steal.recorded == steal.trials == 12
    assert steal.flagged == 1 and steal.flagged_ids == ("up-r02",) and STEAL_FLAG_SHARE == 0.02
    assert steal.median_steal == pytest.approx(0.001) and steal.max_steal == pytest.approx(0.03)
    assert steal.median_interrupts == pytest.approx(0.1)


def test_records_without_shares_say_not_recorded_and_the_rest_still_runs(tmp_path: Path) -> None:
    trials, records = synthetic_trials()
    diagnostics = noise_diagnostics(trials, [{"trial_id": r["trial_id"]} for r in records])
    assert diagnostics.steal.recorded == 0 and diagnostics.steal.trials == 12
    assert diagnostics.drift_summary["requests_per_sec"].tested == 3
    written = diagnostics.write(tmp_path)
    assert [p.name for p in written] == [DRIFT_CSV, AUTOCORRELATION_CSV, TRIALS_CSV]
    table = pd.read_csv(tmp_path / TRIALS_CSV)
    assert table["machine_steal"].isna().all() and not table["high_steal"].any()
    assert list(table["position"]) == list(range(1, 13))
    sentence = Prose().sentence(TEMPLATE, "steal", steal=steal_facts(diagnostics))
    assert "not recorded" in sentence


def test_empty_campaign() -> None:
    diagnostics = noise_diagnostics(pd.DataFrame(), [])
    assert diagnostics.trials.empty and diagnostics.drift.empty and diagnostics.steal.recorded == 0
    assert diagnostics.autocorrelation["requests_per_sec"].lags == ()
    assert math.isnan(diagnostics.round_effect["requests_per_sec"].share)
    assert noise_figure(diagnostics.trials) is None


# --------------------------------------------------------------------------- the report


def synthetic_processed(tmp_path: Path) -> SimpleNamespace:
    trials, records = synthetic_trials(rounds=6)
    summary = pd.DataFrame(
        [{"config_id": c, "architecture": "epoll", "connections": 100, "pipeline": 1} for c in ("up", "flat", "wobbly")]
    )
    return SimpleNamespace(
        trials=trials,
        summary=summary,
        campaign=SimpleNamespace(trials=records),
        trials_csv=tmp_path / "processed" / "trials.csv",
    )


def test_report_outputs_with_steal(tmp_path: Path) -> None:
    macros = MacroSet()
    generated, figures_dir = tmp_path / "paper" / "generated", tmp_path / "paper" / "figures"
    text = noise_text(noise_outputs(synthetic_processed(tmp_path), macros, generated, figures_dir))
    assert (figures_dir / NOISE_FIGURE).is_file() and r"\label{fig:noise}" in text
    include = f"\\includegraphics[width=\\linewidth,height={FIGURE_MAX_HEIGHT},keepaspectratio]"
    assert include + "{figures/noise-residuals.pdf}" in text
    assert "1 trial lost 2\\,\\% or more of the ticks to steal: \\texttt{up-\\allowbreak{}r02}" in text
    assert "stolen by the hypervisor" in text  # the figure's steal panel, named in its caption
    assert "0.10\\,\\%" in text  # median steal, 0.001 of the ticks
    assert (tmp_path / "processed" / DRIFT_CSV).is_file()
    rendered = macros.render("test")
    assert r"\newcommand{\abNoiseMedianSteal}{0.10\,\%}" in rendered
    assert r"\newcommand{\abNoiseMaxSteal}{3.00\,\%}" in rendered
    assert r"\abNoiseLjungBoxP" in rendered and r"\abNoiseMedianDrift" in rendered
    figure = noise_figure(noise_diagnostics(*synthetic_trials(rounds=6)).trials)
    assert figure is not None and len(figure.axes) == 3


def test_report_outputs_on_fixture_campaigns(tmp_path: Path) -> None:
    """Two rounds (fixture-full): no drift estimate, steal not recorded, the figure still drawn; one trial
    (fixture-minimal): every part says why it is missing and no figure is left behind."""
    for name, expect_figure in (("fixture-full", True), ("fixture-minimal", False)):
        processed = analysis.process_campaign(FIXTURES / name, tmp_path / name / "processed")
        generated, figures_dir = tmp_path / name / "paper" / "generated", tmp_path / name / "paper" / "figures"
        macros = MacroSet()
        text = noise_text(noise_outputs(processed, macros, generated, figures_dir))
        assert "No configuration has three or more rounds of throughput" in text
        assert "Steal and interrupt time are not recorded in this campaign" in text
        assert (figures_dir / NOISE_FIGURE).is_file() == expect_figure
        assert (r"\label{fig:noise}" in text) == expect_figure
        assert r"\newcommand{\abNoiseMedianSteal}{--}" in macros.render("test")
        within = pd.read_csv(tmp_path / name / "processed" / AUTOCORRELATION_CSV)
        assert set(within["residual"]) <= {"configuration mean", WITHIN_ROUND_RESIDUALS}
