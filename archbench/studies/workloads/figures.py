"""The decision map: workload points (rows) x servers (columns), each cell the server's throughput relative to the
point's fastest design (paired within rounds), coloured by it, marked with its selection verdict, with the letter of
what bounded its trials. Drawn with
seaborn's heatmap on our own Figure inside the paper theme (never pyplot)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from archbench.analyze.labels import architecture_rank
from archbench.render.theme import paper_theme
from archbench.studies.workloads.data import WorkloadsResults, points
from archbench.studies.workloads.tables import BOTTLENECK_LETTER

MAP_FIGURE = "workloads-map.pdf"
VERDICT_MARK = {"within": "*", "open": "?"}  # the caption says what they mean


def _columns(frame: pd.DataFrame) -> list[str]:
    """Servers in the report's architecture order, the reference floor pong last."""
    firsts = frame.drop_duplicates("variant")
    ranked = sorted(
        firsts.itertuples(),
        key=lambda r: (bool(r.reference_floor), architecture_rank(r.architecture), str(r.variant)),
    )
    return [str(r.variant) for r in ranked]


def map_figure(study: WorkloadsResults) -> Figure | None:
    frame = study.map
    if frame.empty:
        return None
    rows, columns = points(frame), _columns(frame)
    ratios = pd.DataFrame(np.nan, index=rows, columns=columns)
    labels = pd.DataFrame("", index=rows, columns=columns)
    for _, row in frame.iterrows():
        ratio = float(row["ratio"])
        ratios.loc[row["point"], row["variant"]] = ratio
        letter = BOTTLENECK_LETTER.get(str(row["bottleneck"]), "")
        text = "" if np.isnan(ratio) else (f"{ratio:.2f}" if ratio < 9.995 else f"{ratio:.0f}")
        text += VERDICT_MARK.get(str(row["ranked_verdict"]), "") if text else ""
        labels.loc[row["point"], row["variant"]] = f"{text}\n{letter}" if text else ""
    with paper_theme():
        figure = Figure(figsize=(max(5.6, 0.62 * len(columns) + 1.8), 0.42 * len(rows) + 1.6))
        axes = figure.subplots()
        sns.heatmap(
            ratios.clip(upper=1.0),
            ax=axes,
            vmin=0.0,
            vmax=1.0,
            cmap="viridis",
            annot=labels.to_numpy(),
            fmt="",
            annot_kws={"fontsize": 6},
            linewidths=0.5,
            linecolor="white",
            cbar_kws={"label": "throughput relative to the fastest of the row", "shrink": 0.8},
        )
        axes.set_xlabel("")
        axes.set_ylabel("")
        axes.set_xticklabels(axes.get_xticklabels(), rotation=40, ha="right", fontsize=7)
        axes.set_yticklabels(axes.get_yticklabels(), rotation=0, fontsize=7)
        axes.set_facecolor("0.92")  # a server not measured at a point (a workload it cannot take part in)
    return figure
