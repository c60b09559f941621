"""What the studies' figures share beyond drawing (archbench.report.plots): a colour per series label (its
architecture's, so that a server has the colour it has in every other figure), and the figure environments
(LaTeX) that include them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd

from archbench.report.latex import escape, figure_block
from archbench.report.plots import FigureFile
from archbench.report.prose import Prose
from archbench.report.theme import architecture_palette


def label_colours(frames: Sequence[pd.DataFrame], label_column: str) -> dict[str, Any]:
    """{label: colour} of the labels in `label_column` of `frames`, each its architecture's colour (the
    frames' `architecture` column) as in every figure of the report; matplotlib's tab10/tab20 in order of
    appearance when a frame has no architecture column."""
    frames = [f for f in frames if not f.empty and label_column in f]
    if not all("architecture" in f for f in frames):
        labels = list(dict.fromkeys(label for f in frames for label in f[label_column]))
        palette = matplotlib.colormaps["tab10" if len(labels) <= 10 else "tab20"]
        return {label: palette(index % palette.N) for index, label in enumerate(labels)}
    labels = [str(label) for f in frames for label in f[label_column]]
    return architecture_palette(labels, [str(arch) for f in frames for arch in f["architecture"]])


def include_path(figure: FigureFile | None, paper_dir: Path) -> str | None:
    """The figure's path as \\includegraphics takes it (relative to the paper directory); None without a figure."""
    return None if figure is None else Path(os.path.relpath(figure.path, paper_dir)).as_posix()


@dataclass(frozen=True)
class TablesAndFigures:
    """What a study of the main campaign lets later studies cite: its tables' labels and the figures it made."""

    table_labels: tuple[str, ...]
    figures: dict[str, FigureFile | None]

    @property
    def figures_present(self) -> dict[str, bool]:
        return {key: made is not None for key, made in self.figures.items()}


def figure_blocks(
    made: Mapping[str, FigureFile | None],
    blocks: Mapping[str, tuple[str, str]],
    template: str,
    prose: Prose,
    paper_dir: Path,
) -> dict[str, str]:
    """{generated file: figure environment} for `blocks` ({file: (label, figure key)}); the template holds each
    key's `<key>_caption` and `<key>_missing` (the sentence standing in for a figure the campaign cannot make). A
    caption gets the figure's series (`series`, LaTeX-escaped), so that it names only what the figure shows."""
    return {
        name: figure_block(
            include_path(made[key], paper_dir),
            label,
            prose.sentence(
                template,
                f"{key}_caption",
                series=[escape(s) for s in made[key].series_labels] if made[key] is not None else [],
            ),
            prose.sentence(template, f"{key}_missing"),
        )
        for name, (label, key) in blocks.items()
    }
