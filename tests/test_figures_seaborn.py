"""The seaborn figures draw the report's numbers: every interval drawn is summary.csv's (the tables') interval,
every bar its mean, every dot a measured trial; the study figures are deterministic; pyplot is never used."""

from __future__ import annotations

from pathlib import Path

import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PathCollection

from archbench import stats
from archbench.analyze import analysis
from archbench.render import plots, theme
from archbench.studies import latency as report_latency
from archbench.studies.architectures import figures as architecture_figures
from archbench.studies.echo import ECHO
from archbench.studies.echo import figures as echo_figures
from archbench.studies.echo.data import MB
from archbench.studies.latency import figures as latency_figures
from archbench.studies.latency.data import SETUP_SWEEP
from archbench.studies.pool import figures

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> analysis.ProcessedCampaign:
    return analysis.process_campaign(FIXTURES / "fixture-full", tmp_path_factory.mktemp("processed"))


@pytest.fixture(scope="module")
def architectures(tmp_path_factory) -> analysis.ProcessedCampaign:
    return analysis.process_campaign(FIXTURES / "fixture-architectures", tmp_path_factory.mktemp("processed-arch"))


@pytest.fixture(scope="module")
def echo(tmp_path_factory):
    return ECHO.read(["fixture-echo"], FIXTURES, tmp_path_factory.mktemp("processed-echo"))


@pytest.fixture(scope="module")
def latency(tmp_path_factory):
    return report_latency.LATENCY.read(["fixture-latency"], FIXTURES, tmp_path_factory.mktemp("latency"))


def vertical_intervals(axes: Axes) -> list[tuple[float, float, float]]:
    """(x, low, high) of every vertical error bar drawn (errorbar's LineCollections), NaN bars left out."""
    drawn = []
    for collection in axes.collections:
        if not isinstance(collection, LineCollection):
            continue
        for segment in collection.get_segments():
            if len(segment) < 2:
                continue
            (x0, y0), (x1, y1) = segment[0], segment[-1]
            if np.isfinite([x0, y0, x1, y1]).all() and x0 == pytest.approx(x1):
                drawn.append((float(x0), min(y0, y1), max(y0, y1)))
    return sorted(drawn)


def horizontal_intervals(axes: Axes) -> list[tuple[float, float, float]]:
    """(y, low, high) of every horizontal error bar drawn."""
    drawn = []
    for collection in axes.collections:
        if isinstance(collection, LineCollection):
            for (x0, y0), (x1, y1) in (s[[0, -1]] for s in collection.get_segments() if len(s) >= 2):
                if y0 == pytest.approx(y1) and np.isfinite([x0, x1]).all():
                    drawn.append((float(y0), min(x0, x1), max(x0, x1)))
    return sorted(drawn)


def same(drawn: list[tuple[float, ...]], want: list[tuple[float, ...]]) -> bool:
    """The same intervals to rounding (pytest.approx does not compare nested sequences)."""
    return len(drawn) == len(want) and np.allclose(np.array(drawn, dtype=float), np.array(want, dtype=float), rtol=1e-9)


def expected(rows: pd.DataFrame, x: str, low: str, high: str, scale: float = 1.0) -> list[tuple[float, float, float]]:
    rows = rows[rows[low].notna() & rows[high].notna()]
    return sorted(
        (float(a), float(lo) / scale, float(hi) / scale)
        for a, lo, hi in zip(rows[x], rows[low], rows[high], strict=True)
    )


def test_the_figure_code_uses_seaborn():
    assert figures.sns is sns and echo_figures.means_with_trials is plots.means_with_trials
    assert latency_figures.sns is sns


def test_t_interval_is_the_summary_interval(full):
    values = [100.0, 104.0, 98.0, 101.0]
    interval = stats.rate_ci(values, stats.DEFAULT_CONFIDENCE)
    assert plots.t_interval(values) == (interval.low, interval.high)
    assert plots.t_interval([5.0]) == (5.0, 5.0)  # one trial: its range, a point (no bar)
    assert all(np.isnan(plots.t_interval([])))


def test_pool_size_intervals_drawn_are_the_tables_intervals(full):
    figure = figures.pool_size_figure(full.summary, full.trials)
    axes = figure.axes[0]
    rows = pd.concat([s.rows for s in figures.pool_size_series(full.summary)])
    # N = 4 of request dispatch lost one of its two trials: n = 1, its range is a point and no bar is drawn.
    want = [w for w in expected(rows, "threads", "ci95_low", "ci95_high") if w[1] < w[2]]
    assert len(want) >= 3
    assert same(vertical_intervals(axes), want)
    assert len(vertical_intervals(axes)) == int((rows["ci95_low"] < rows["ci95_high"]).sum())
    # The means on the lines are summary.csv's means.
    # The means on the lines (solid, with a marker) are summary.csv's means.
    means = sorted(
        (float(x), float(y))
        for line in axes.lines
        if line.get_linestyle() == "-" and line.get_marker() in theme.MARKERS
        for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)
    )
    assert same(means, sorted(zip(rows["threads"].astype(float), rows["mean"].astype(float), strict=True)))
    # Behind them, one dot per measured ok trial of the series.
    dots = sum(len(c.get_offsets()) for c in axes.collections if isinstance(c, PathCollection))
    assert dots == int(rows["n"].sum())
    plt.close(figure)


def test_connection_intervals_drawn_are_the_tables_intervals(full):
    figure = figures.connections_figure(full.summary, full.trials)
    top = figure.axes[0]
    rows = pd.concat([s.rows for s in figures.starvation_series(full.summary)])
    assert same(vertical_intervals(top), expected(rows, "connections", "ci95_low", "ci95_high"))
    low, high = top.get_xlim()
    assert low > float(rows["connections"].min()) / 2 and high < float(rows["connections"].max()) * 2


def test_bars_are_the_means_and_their_intervals_the_tables(architectures):
    figure = architecture_figures.architectures_throughput_figure(architectures.summary, architectures.trials)
    comparisons = [c for c in analysis.comparisons(architectures.summary) if len(c.all_rows) >= 2]
    for axes, one in zip(figure.axes, comparisons, strict=False):
        rows = one.all_rows[one.all_rows["mean"].notna()]
        widths = sorted(round(bar.get_width(), 6) for bar in axes.patches if bar.get_width() > 0)
        assert widths == sorted(round(float(v), 6) for v in rows["mean"])
        positions = {label.get_text(): index for index, label in enumerate(figure.axes[0].get_yticklabels())}
        want = sorted(
            (float(positions[f]), float(lo), float(hi))
            for f, lo, hi in zip(rows["family"], rows["ci95_low"], rows["ci95_high"], strict=True)
            if not (np.isnan(lo) or np.isnan(hi))
        )
        drawn = [(y, max(lo, 0.0), hi) for y, lo, hi in horizontal_intervals(axes)]
        assert same(drawn, [(y, max(lo, 0.0), hi) for y, lo, hi in want])
        # The single trials as dots: as many as the bars' measured ok trials.
        dots = sum(len(c.get_offsets()) for c in axes.collections if isinstance(c, PathCollection))
        assert dots == int(rows["n"].sum())
    plt.close(figure)


def test_echo_intervals_drawn_are_the_echo_tables_intervals(echo):
    figure = echo_figures.scaling_figure(echo)
    top = figure.axes[0]
    rows = echo.summary[echo.summary["bytes_received_per_sec_mean"].notna()]
    counts = rows.groupby("variant")["connections"].transform("nunique")
    want = expected(
        rows[counts >= 2], "connections", "bytes_received_per_sec_ci95_low", "bytes_received_per_sec_ci95_high", MB
    )
    assert want and same(vertical_intervals(top), want)
    plt.close(figure)


def test_latency_achieved_intervals_are_the_latency_tables_intervals(latency):
    figure = latency_figures.achieved_figure(latency)
    sweep = latency.setup(SETUP_SWEEP)
    want = expected(sweep[sweep["achieved_mean"].notna()], "offered_rate", "achieved_ci95_low", "achieved_ci95_high")
    drawn = vertical_intervals(figure.axes[0])
    assert want and same(drawn, want)
    low, _ = figure.axes[0].get_ylim()
    assert low > float(sweep["achieved_mean"].min()) / 3  # no stretch towards 1 on the log axis
    plt.close(figure)


def test_a_log_y_axis_is_set_after_seaborn_averaged_the_values():
    data = pd.DataFrame({"x": [1.0, 1.0, 1.0], "y": [1.0, 10.0, 100.0], "h": ["a"] * 3})
    with theme.paper_theme():
        axes = matplotlib.figure.Figure().subplots()
        plots.means_with_trials(axes, data, "x", "y", "h", ["a"], {"a": "C0"}, log_y=True)
        assert axes.get_yscale() == "log"
        mean = next(line for line in axes.lines if len(line.get_ydata()))
        assert float(mean.get_ydata()[0]) == pytest.approx(37.0)  # arithmetic, not the geometric mean 10
        logged = matplotlib.figure.Figure().subplots()
        logged.set_yscale("log")
        with pytest.raises(ValueError, match="log_y"):
            plots.means_with_trials(logged, data, "x", "y", "h", ["a"], {"a": "C0"})


def test_study_figures_are_byte_for_byte_reproducible_and_leave_pyplot_alone(echo, latency, tmp_path):
    open_before = plt.get_fignums()
    first = {
        **echo_figures.make_echo_figures(echo, tmp_path / "a"),
        **latency_figures.make_latency_figures(latency, tmp_path / "a"),
    }
    second = {
        **echo_figures.make_echo_figures(echo, tmp_path / "b"),
        **latency_figures.make_latency_figures(latency, tmp_path / "b"),
    }
    made = [key for key, value in first.items() if value is not None]
    assert len(made) >= 3
    for key in made:
        assert first[key].path.read_bytes() == second[key].path.read_bytes(), key
    assert plt.get_fignums() == open_before


def test_series_keep_their_architecture_colour(full):
    series = figures.starvation_series(full.summary)
    palette = figures.series_palette(series)
    blocking = next(s for s in series if s.first["architecture"] == "blocking")
    assert palette[blocking.label] == theme.architecture_colour("blocking")


def test_pool_dots_are_the_trials_of_the_summary_means() -> None:
    """summary.csv's means leave disturbed trials out (analyze.summary), so the dots behind them do too."""
    trials = pd.DataFrame(
        {
            "config_id": ["a", "a", "a", "a"],
            "warmup": [False, False, False, True],
            "status": ["ok", "ok", "failed", "ok"],
            "disturbed": [False, True, False, False],
            "threads": [4, 4, 4, 4],
            "requests_per_sec": [100.0, 900.0, 50.0, 70.0],
        }
    )
    series = [analysis.Series(key=("a",), label="pool", rows=pd.DataFrame({"config_id": ["a"]}))]
    dots = figures.series_trials(trials, series, "threads")
    assert dots["requests_per_sec"].tolist() == [100.0]
