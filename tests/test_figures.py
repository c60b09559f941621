"""Figures from the fixture campaigns: created, deterministic, labelled, absent without data."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from archbench import analysis, figures

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> analysis.ProcessedCampaign:
    return analysis.process_campaign(FIXTURES / "fixture-full", tmp_path_factory.mktemp("processed"))


def test_both_figures_are_written_as_pdf(full, tmp_path):
    made = figures.make_figures(full.summary, full.trials, tmp_path)
    assert set(made) == {"pool_size", "connections"}
    for figure_file in made.values():
        assert figure_file is not None
        data = figure_file.path.read_bytes()
        assert data.startswith(b"%PDF") and len(data) > 5_000
    assert made["pool_size"].path.name == figures.POOL_SIZE_FIGURE
    # One line per dispatch mode at 20 connections.
    assert made["pool_size"].series_labels == (
        "thread pool, connection dispatch, FIFO queue (20 connections)",
        "thread pool, request dispatch, FIFO queue (20 connections)",
    )
    assert len(made["connections"].series_labels) == 4  # blocking, thread/conn., two pool modes at N = 2


def test_figures_are_byte_for_byte_reproducible(full, tmp_path):
    first = figures.make_figures(full.summary, full.trials, tmp_path / "a")
    second = figures.make_figures(full.summary, full.trials, tmp_path / "b")
    for key in first:
        data = first[key].path.read_bytes()
        assert data == second[key].path.read_bytes()
        assert b"/CreationDate" not in data and b"/ModDate" not in data


def test_axes_have_labels_with_units(full):
    pool = figures.pool_size_figure(full.summary, full.trials)
    axes = pool.axes[0]
    assert axes.get_ylabel() == "Throughput (requests/s)"
    assert axes.get_xlabel().startswith("Worker threads N")
    plt.close(pool)
    connections = figures.connections_figure(full.summary, full.trials)
    top, bottom = connections.axes
    assert top.get_xscale() == "log" and bottom.get_xscale() == "log"
    assert top.get_ylabel() == "Throughput (requests/s)"
    assert "connections" in bottom.get_xlabel().lower()
    assert "Starved" in bottom.get_ylabel()
    plt.close(connections)


def test_error_bars_are_the_confidence_intervals(full):
    pool = figures.pool_size_series(full.summary)
    request = next(s for s in pool if s.first["dispatch"] == "request")
    bars = figures._error_bars(request.rows)
    expected_low = (request.rows["mean"] - request.rows["ci95_low"]).fillna(0).clip(lower=0)
    assert list(bars[0]) == pytest.approx(list(expected_low))
    # N = 4 lost one of its two trials to the injected failure: n = 1, no interval, no bar.
    n_one = list(request.rows["n"]).index(1)
    assert bars[0][n_one] == 0 and bars[1][n_one] == 0


def test_no_figures_without_sweeps(tmp_path):
    minimal = analysis.process_campaign(FIXTURES / "fixture-minimal", tmp_path / "processed")
    made = figures.make_figures(minimal.summary, minimal.trials, tmp_path / "figures")
    assert made == {"pool_size": None, "connections": None}
    assert not (tmp_path / "figures").exists() or not any((tmp_path / "figures").iterdir())
