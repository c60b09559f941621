"""The one look of every figure, in the report and in the notebooks: seaborn's "whitegrid" style and "paper"
context, sized for the report's \\linewidth, and a colour per architecture that is the same in every figure.

The theme is applied without touching global state: `paper_theme()` is a context manager (matplotlib's
`rc_context` underneath) that restores every rcParam on exit, and the figures are `Figure` objects, never
pyplot's. Only `apply_theme()` changes the defaults for good; it is for a notebook that wants its own inline
plots to look like the report's.

    from matplotlib.figure import Figure
    import seaborn as sns
    from archbench.render.theme import architecture_palette, paper_theme

    with paper_theme():
        figure = Figure(figsize=(5.6, 3.4))
        sns.pointplot(data=trials, x="threads", y="requests_per_sec", hue="variant",
                      palette=architecture_palette(labels, architectures), ax=figure.subplots())
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import matplotlib
import seaborn as sns
from cycler import cycler

from archbench.analyze.analysis import REFERENCE_ARCHITECTURE
from archbench.config import servers

RGB = tuple[float, float, float]

# seaborn's defaults, then the sizes that stay readable at \linewidth in an 11pt article (figures are
# 5.6-6.3 inches wide and included at \linewidth, so a point here is close to a point on the page).
PAPER_RC: dict[str, object] = {
    **sns.axes_style("whitegrid"),
    **sns.plotting_context("paper"),
    "font.family": ["sans-serif"],
    "font.sans-serif": ["DejaVu Sans"],  # the font matplotlib ships: the same glyphs on every machine
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "legend.title_fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.6,
    "grid.linewidth": 0.6,
    # Tick marks on the outer axes: the whitegrid style drops them, but log axes need them to be read.
    "xtick.bottom": True,
    "ytick.left": True,
    "xtick.major.size": 3,
    "ytick.major.size": 3,
    "xtick.minor.size": 1.5,
    "ytick.minor.size": 1.5,
    "axes.edgecolor": ".6",
    # Colours of series that are not architectures ("C0", percentiles, sent/received): the same palette.
    "axes.prop_cycle": cycler(color=sns.color_palette("colorblind")),
    "pdf.fonttype": 42,  # TrueType: text stays selectable and searchable in the PDF
    "svg.hashsalt": "archbench",
}

REFERENCE_COLOUR: RGB = (0.15, 0.15, 0.15)
UNKNOWN_COLOUR: RGB = (0.5, 0.5, 0.5)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")
# Shades of an architecture's hue for its second, third, ... series in one figure: (towards, fraction).
SHADES: tuple[tuple[RGB, float], ...] = (
    ((0.0, 0.0, 0.0), 0.0),
    ((1.0, 1.0, 1.0), 0.5),
    ((0.0, 0.0, 0.0), 0.5),
    ((1.0, 1.0, 1.0), 0.7),
    ((0.0, 0.0, 0.0), 0.7),
)
LIGHT = 0.6  # relative luminance above which a palette colour is darkened to stand out on white


@contextlib.contextmanager
def paper_theme(**rc_overrides: object) -> Iterator[dict[str, object]]:
    """Build figures inside this block to give them the report's theme; yields the rcParams in force."""
    rc = {**PAPER_RC, **rc_overrides}
    with matplotlib.rc_context(rc):
        yield rc


def apply_theme() -> None:
    """The report's theme as the session default (notebooks: inline plots that look like the report's)."""
    sns.set_theme(style="whitegrid", context="paper", rc=PAPER_RC)


def _blend(colour: Sequence[float], towards: Sequence[float], fraction: float) -> RGB:
    red, green, blue = (c + (t - c) * fraction for c, t in zip(colour[:3], towards, strict=True))
    return (float(red), float(green), float(blue))


def _luminance(colour: Sequence[float]) -> float:
    red, green, blue = colour[:3]
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def architecture_palette_hues() -> list[RGB]:
    """The colours a `ServerSpec.hue` indexes: seaborn's colour-blind palette without its grey, then its darker
    "dark" palette (so that a later architecture need not repeat a hue), light entries darkened for contrast on
    white."""
    hues: list[RGB] = []
    for colour in (c for name in ("colorblind", "dark") for c in sns.color_palette(name, 10) if len(set(c)) > 1):
        if _luminance(colour) > LIGHT:
            colour = _blend(colour, (0.0, 0.0, 0.0), 0.3)
        hues.append((float(colour[0]), float(colour[1]), float(colour[2])))
    return hues


def architecture_colours() -> dict[str, RGB]:
    """Registry architecture name -> its colour: the palette entry its `hue` names; nginx, the reference, dark
    grey; one without a hue, grey."""
    hues = architecture_palette_hues()
    colours = {
        name: UNKNOWN_COLOUR if spec.hue is None else hues[spec.hue] for name, spec in servers.server_specs().items()
    }
    colours[REFERENCE_ARCHITECTURE] = REFERENCE_COLOUR
    return colours


def architecture_colour(architecture: str) -> RGB:
    """The colour of a registry architecture ("thread_pool", "nginx", ...) in every figure; grey if unknown."""
    return architecture_colours().get(str(architecture), UNKNOWN_COLOUR)


def architecture_palette(labels: Sequence[str], architectures: Sequence[str]) -> dict[str, RGB]:
    """Series label -> colour, given each label's architecture (aligned sequences; repeated labels are fine):
    the architecture's hue, a darker or lighter shade of it for its second, third, ... label."""
    colours = architecture_colours()
    palette: dict[str, RGB] = {}
    seen: dict[str, int] = {}
    for label, architecture in zip(labels, architectures, strict=True):
        if label in palette:
            continue
        base = colours.get(str(architecture), UNKNOWN_COLOUR)
        index = seen.get(str(architecture), 0)
        seen[str(architecture)] = index + 1
        towards, fraction = SHADES[index % len(SHADES)]
        palette[label] = _blend(base, towards, fraction)
    return palette
