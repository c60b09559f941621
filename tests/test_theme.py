"""The one theme of every figure: applied without global state, one colour per architecture everywhere."""

from __future__ import annotations

import colorsys

import matplotlib
import pandas as pd
import pytest

from archbench.config.servers import server_specs
from archbench.render import plots, theme
from archbench.render.plots import label_colours


def _hue(colour) -> float:
    return colorsys.rgb_to_hls(*colour[:3])[0]


def test_paper_theme_applies_inside_and_restores_every_rc_param_on_exit():
    before = dict(matplotlib.rcParams)
    with theme.paper_theme(**{"axes.titlesize": 6.5}) as rc:
        assert matplotlib.rcParams["font.size"] == 9
        assert matplotlib.rcParams["axes.titlesize"] == 6.5 and rc["axes.titlesize"] == 6.5
        assert matplotlib.rcParams["pdf.fonttype"] == 42
        assert matplotlib.rcParams["axes.grid"]
    assert dict(matplotlib.rcParams) == before


def test_importing_and_drawing_figures_leaves_the_defaults_alone():
    before = dict(matplotlib.rcParams)
    frame = pd.DataFrame({"x": [1.0, 1.0, 2.0, 2.0], "y": [1.0, 2.0, 3.0, 5.0], "h": ["a"] * 4})
    with theme.paper_theme():
        axes = matplotlib.figure.Figure().subplots()
        plots.means_with_trials(axes, frame, "x", "y", "h", ["a"], {"a": theme.architecture_colour("poll")})
    assert dict(matplotlib.rcParams) == before
    assert plots.STYLE is theme.PAPER_RC  # the old name still works for code that applies it itself


def test_apply_theme_is_the_same_look_for_notebooks():
    with matplotlib.rc_context():  # apply_theme changes the session defaults; the test must not
        theme.apply_theme()
        for key in ("font.size", "axes.labelsize", "legend.fontsize", "pdf.fonttype", "axes.edgecolor"):
            assert matplotlib.rcParams[key] == matplotlib.rcParams.validate[key](theme.PAPER_RC[key]), key


def test_every_architecture_has_its_own_fixed_colour_and_nginx_is_the_reference_grey():
    colours = theme.architecture_colours()
    assert set(colours) == set(server_specs())
    assert len(set(colours.values())) == len(colours)
    assert colours["nginx"] == theme.REFERENCE_COLOUR
    assert theme.architecture_colour("no such server") == theme.UNKNOWN_COLOUR
    assert theme.architecture_colours() == colours  # computed the same way on every call
    for name, colour in colours.items():
        assert theme._luminance(colour) <= theme.LIGHT, name  # readable on white


def test_a_second_label_of_one_architecture_is_a_shade_of_its_hue():
    palette = theme.architecture_palette(
        ["pool (connection)", "pool (request)", "poll", "pool (connection)"],
        ["thread_pool", "thread_pool", "poll", "thread_pool"],
    )
    assert list(palette) == ["pool (connection)", "pool (request)", "poll"]
    assert palette["pool (connection)"] == theme.architecture_colour("thread_pool")
    assert palette["pool (request)"] != palette["pool (connection)"]
    assert _hue(palette["pool (request)"]) == pytest.approx(_hue(palette["pool (connection)"]), abs=0.02)
    assert palette["poll"] == theme.architecture_colour("poll")


def test_the_same_architecture_has_the_same_colour_in_the_main_and_the_study_figures():
    echo_rows = pd.DataFrame({"variant": ["epoll (edge)", "reactor (2 threads)"], "architecture": ["epoll", "reactor"]})
    studies = label_colours([echo_rows], "variant")
    assert studies["epoll (edge)"] == theme.architecture_colour("epoll")
    assert studies["reactor (2 threads)"] == theme.architecture_colour("reactor")
    # Without an architecture column the labels still get distinct colours.
    anonymous = label_colours([echo_rows.drop(columns="architecture")], "variant")
    assert len(set(anonymous.values())) == 2
