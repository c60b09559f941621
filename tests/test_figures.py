"""Figures from the fixture campaigns: created, deterministic, labelled, absent without data."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)
from matplotlib.backends.backend_agg import FigureCanvasAgg

from archbench.analyze import analysis
from archbench.render import plots
from archbench.render.prose import Prose
from archbench.studies.architectures import figures as architecture_figures
from archbench.studies.pool import figures

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"

FIGURE_KEYS = {
    "pool_size",
    "connections",
    "architectures_throughput",
    "architectures_connections",
    "architectures_threads",
    "architectures_cpu",
}


def draw_figures(processed: analysis.ProcessedCampaign, figures_dir: Path) -> dict[str, plots.FigureFile | None]:
    """The main campaign's figures as the pool and architecture studies draw them."""
    return {
        **figures.make_pool_figures(processed.summary, processed.trials, figures_dir),
        **architecture_figures.make_architecture_figures(processed.summary, processed.trials, figures_dir),
    }


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> analysis.ProcessedCampaign:
    return analysis.process_campaign(FIXTURES / "fixture-full", tmp_path_factory.mktemp("processed"))


def test_figures_are_written_as_pdf(full, tmp_path):
    made = draw_figures(full, tmp_path)
    assert set(made) == FIGURE_KEYS
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
    first = draw_figures(full, tmp_path / "a")
    second = draw_figures(full, tmp_path / "b")
    for key in first:
        if first[key] is None:
            continue
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
    bars = plots.mean_error_bars(request.rows)
    expected_low = (request.rows["mean"] - request.rows["ci95_low"]).fillna(0).clip(lower=0)
    assert list(bars[0]) == pytest.approx(list(expected_low))
    # N = 4 lost one of its two trials to the injected failure: n = 1, no interval, no bar.
    n_one = list(request.rows["n"]).index(1)
    assert bars[0][n_one] == 0 and bars[1][n_one] == 0


def test_no_figures_without_sweeps(tmp_path):
    minimal = analysis.process_campaign(FIXTURES / "fixture-minimal", tmp_path / "processed")
    made = draw_figures(minimal, tmp_path / "figures")
    assert made == dict.fromkeys(FIGURE_KEYS)
    assert not (tmp_path / "figures").exists() or not any((tmp_path / "figures").iterdir())


# --------------------------------------------------------------------------- architecture comparison


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> analysis.ProcessedCampaign:
    root = tmp_path_factory.mktemp("raw")
    return analysis.process_campaign(synthetic.write_comparison_campaign(root), root.parent / "processed-figures")


@pytest.fixture(scope="module")
def architectures(tmp_path_factory) -> analysis.ProcessedCampaign:
    return analysis.process_campaign(FIXTURES / "fixture-architectures", tmp_path_factory.mktemp("processed-arch"))


def test_every_architecture_figure_from_the_real_campaign(architectures, tmp_path):
    made = draw_figures(architectures, tmp_path)
    for key in ("architectures_throughput", "architectures_connections", "architectures_threads", "architectures_cpu"):
        assert made[key] is not None, key
        assert made[key].path.read_bytes().startswith(b"%PDF")
    assert made["architectures_throughput"].series_labels == ("depth 1", "depth 16")
    # Swept at depth 1 over 10 and 50 connections, at the table's thread count.
    assert "nginx, 1 worker" in made["architectures_connections"].series_labels
    assert "poll" in made["architectures_connections"].series_labels
    # Only the multi-loop designs in the thread-count figure (each swept over 1 and 2).
    assert set(made["architectures_threads"].series_labels) == {
        "thread pool (request, queue)",
        "reactor",
        "reuseport",
        "prefork",
        "io_uring",
        "nginx",
    }
    # The starvation figure keeps to source 000's designs.
    assert made["connections"].series_labels == ("blocking (pipeline 1)", "blocking (pipeline 16)")


def test_throughput_bars_one_panel_per_depth_with_client_bound_hatched(comparison):
    figure = architecture_figures.architectures_throughput_figure(comparison.summary)
    panels = figure.axes
    assert [axes.get_title() for axes in panels] == [
        "pipeline depth 1\n(100 connections)",
        "pipeline depth 16\n(100 connections)",
    ]
    # Side by side, the panels' titles must not overprint each other.
    renderer = FigureCanvasAgg(figure).get_renderer()
    left, right = (axes.title.get_window_extent(renderer) for axes in panels)
    assert left.x1 < right.x0
    assert all(axes.get_xlabel() == "Throughput (requests/s)" for axes in panels)
    assert [t.get_text() for t in panels[0].get_yticklabels()] == [
        "blocking",
        "epoll (edge)",
        "reactor",
        "io_uring",
        "prefork",
        "nginx",
    ]
    # Hatched: the server did not bound most trials: epoll (edge) is client-bound, blocking neither (it starves).
    hatched = sorted(bar.get_width() for bar in panels[0].patches if bar.get_hatch())
    assert hatched == [pytest.approx(1_000), pytest.approx(51_000)]
    texts = [t.get_text().strip() for t in panels[0].texts]
    assert "unsupported" in texts and "not measured" in texts  # io_uring; prefork only at depth 16
    plt.close(figure)
    cpu = architecture_figures.architectures_cpu_figure(comparison.summary)
    assert cpu.axes[0].get_xlabel() == "Server CPU time per request (µs)"
    assert not [bar for bar in cpu.axes[0].patches if bar.get_hatch()]
    plt.close(cpu)


def test_sweep_figures(comparison):
    connections = architecture_figures.architectures_connections_figure(comparison.summary)
    assert connections.axes[0].get_xscale() == "log"
    assert [t.get_text() for t in connections.axes[0].get_xticklabels()] == ["10", "100"]
    plt.close(connections)
    threads = architecture_figures.architectures_threads_figure(comparison.summary)
    assert [axes.get_title() for axes in threads.axes] == ["pipeline depth 16 (100 connections)"]
    assert threads.axes[0].get_xlabel() == "Threads or worker processes N"
    plt.close(threads)


def test_captions_name_only_the_series_a_figure_shows(tmp_path):
    made = {
        "architectures_threads": plots.FigureFile(tmp_path / "figures" / "t.pdf", ("thread pool (request, queue)",))
    }
    blocks = plots.figure_blocks(
        made, {"t.tex": ("fig:t", "architectures_threads")}, "architectures/figures", Prose(), tmp_path
    )
    caption = blocks["t.tex"]
    assert "(thread pool (request, queue))" in caption
    assert "reactor" not in caption and "nginx" not in caption  # neither is plotted
    made["architectures_threads"] = plots.FigureFile(tmp_path / "figures" / "t.pdf", ("io_uring", "nginx"))
    caption = plots.figure_blocks(
        made, {"t.tex": ("fig:t", "architectures_threads")}, "architectures/figures", Prose(), tmp_path
    )["t.tex"]
    assert r"(io\_uring and nginx)" in caption and "nginx dashed" in caption
