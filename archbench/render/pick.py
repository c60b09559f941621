"""A pick's answer in words: the terminal table and the page to keep, both rendered from the templates in
paper/templates/pick/ (the words live there; this module formats the facts of archbench.analyze.pick).

The page is one self-contained HTML file: the figure (each design's ratio to the best of the others with its
simultaneous interval, the indifference zone shaded) is inline SVG, so the file can be mailed or archived alone.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from matplotlib.figure import Figure

from archbench.analyze.pick import BOUND_WORDS, DesignRow, PickAnswer
from archbench.config.paths import TEMPLATES_DIR
from archbench.render.theme import paper_theme
from archbench.stats.selection import OPEN, SLOWER, WITHIN

PICK_TEMPLATES = TEMPLATES_DIR / "pick"
TERMINAL_TEMPLATE = "terminal.txt.j2"
PAGE_TEMPLATE = "page.html.j2"
VERDICT_WORDS = {WITHIN: "within", SLOWER: "slower", OPEN: "open", "": "not compared"}
VERDICT_COLOURS = {WITHIN: "#1b9e77", SLOWER: "#d95f02", OPEN: "#7570b3", "": "#999999"}
STOPPED_WORDS = {
    "resolved": "every design decided",
    "not rankable": "the load generator bound the fastest design",
    "max rounds": "the most rounds the budget allowed",
    "budget": "the budget",
    "too few": "too few rounds for a first look",
}


def _environment(html: bool) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PICK_TEMPLATES)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=html,
        undefined=jinja2.StrictUndefined,
    )


def _number(value: float, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def _ratio(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def _interval(row: DesignRow) -> str:
    return "-" if math.isnan(row.low) else f"{row.low:.3f}-{row.high:.3f}"


def _row_view(row: DesignRow) -> dict[str, str]:
    return {
        "design": row.label,
        "verdict": VERDICT_WORDS.get(row.verdict, row.verdict),
        "rate": _number(row.rate),
        "ratio": _ratio(row.ratio),
        "interval": _interval(row),
        "cpu": _number(row.cpu_us, 1),
        "bound": row.bound or "-",
        "rounds": str(row.rounds),
        "decided_at": str(row.decided_at or "-"),
    }


def _workload_words(settings: Mapping[str, Any]) -> str:
    """The point as the user gave it, e.g. "200 us of work, 5000 us wait (exp), 2000 idle, 8 KiB responses"."""
    parts = []
    work, block = float(settings.get("work_us") or 0), float(settings.get("block_us") or 0)
    parts.append(f"{work:g} us of work" if work else "no per-request work")
    if block:
        dist = str(settings.get("block_dist") or "fixed")
        parts.append(f"a {block:g} us wait" + (" (exponential)" if dist == "exp" else ""))
    idle = float(settings.get("idle_connections") or 0)
    if idle:
        parts.append(f"{idle:g} idle connections held beside")
    if str(settings.get("connection_mode")) == "close":
        parts.append("one request per connection")
    response = str(settings.get("response") or "test")
    if response.startswith("bytes:"):
        parts.append(f"{int(response.split(':', 1)[1]):,} byte responses")
    elif response != "test":
        parts.append(f"response {response}")
    connections, pipeline = settings.get("connections"), int(float(settings.get("pipeline") or 1))
    parts.append(f"{connections} connections" + (f", pipelining {pipeline}" if pipeline > 1 else ""))
    return ", ".join(parts)


def view(answer: PickAnswer, page: Path | None = None) -> dict[str, Any]:
    """The facts the templates render, formatted."""
    best_row = next((row for row in answer.rows if row.label == answer.best), None)
    nearest = answer.nearest
    return {
        "answer": answer,
        "workload": _workload_words(answer.settings),
        "delta_pct": f"{100 * answer.delta:g}",
        "confidence_pct": f"{100 * (1 - answer.alpha):g}",
        "rows": [_row_view(row) for row in answer.rows],
        "within": [row.label for row in answer.rows_with(WITHIN)],
        "slower": [row.label for row in answer.rows_with(SLOWER)],
        "open": [row.label for row in answer.rows_with(OPEN)],
        "uncompared": [row.label for row in answer.rows_with("")],
        "best_row": None if best_row is None else _row_view(best_row),
        "best_bound_words": BOUND_WORDS.get(answer.best_bound, "nothing recorded"),
        "best_bound_pct": _number(100 * answer.best_bound_share) if not math.isnan(answer.best_bound_share) else "-",
        "client_bound_pct": _number(100 * answer.client_bound_share)
        if not math.isnan(answer.client_bound_share)
        else "-",
        "stopped_words": STOPPED_WORDS.get(answer.stopped_by or "", answer.stopped_by or ""),
        "nearest": nearest,
        "page": "" if page is None else str(page),
    }


def render_terminal(answer: PickAnswer, page: Path | None = None) -> str:
    """The answer as the terminal prints it."""
    return _environment(html=False).get_template(TERMINAL_TEMPLATE).render(view(answer, page))


def ratio_figure(answer: PickAnswer) -> Figure | None:
    """Each compared design's ratio to the best of the others with its simultaneous interval; the indifference zone
    (1 - delta to 1) shaded. None where no look compared the designs."""
    rows = [row for row in answer.rows if row.verdict]
    if not rows:
        return None
    with paper_theme():
        figure = Figure(figsize=(6.4, 0.32 * len(rows) + 1.2))
        axes = figure.subplots()
        positions = list(range(len(rows)))[::-1]
        axes.axvspan(1 - answer.delta, 1.0, color="0.9", zorder=0)
        axes.axvline(1.0, color="0.4", linewidth=0.8)
        for position, row in zip(positions, rows, strict=True):
            colour = VERDICT_COLOURS.get(row.verdict, "#999999")
            axes.plot([row.low, row.high], [position, position], color=colour, linewidth=2.2, solid_capstyle="butt")
            axes.plot([row.ratio], [position], "o", color=colour, markersize=4)
        axes.set_yticks(positions, [f"{row.label} ({VERDICT_WORDS[row.verdict]})" for row in rows], fontsize=7)
        axes.set_xlabel(
            f"rate relative to the best of the others ({100 * (1 - answer.alpha):g} % simultaneous intervals)"
        )
        axes.set_title(f"shaded: within {100 * answer.delta:g} % of the best", fontsize=7, loc="left")
        figure.tight_layout()
    return figure


def _svg(figure: Figure | None) -> str:
    if figure is None:
        return ""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def render_page(answer: PickAnswer) -> str:
    """The page to keep: one HTML file with the figure inline."""
    return (
        _environment(html=True)
        .get_template(PAGE_TEMPLATE)
        .render({**view(answer), "figure_svg": jinja2.utils.markupsafe.Markup(_svg(ratio_figure(answer)))})
    )


def write_page(answer: PickAnswer, directory: Path) -> Path:
    """Write the page to DIRECTORY/<campaign>.html (a derived file: it is rewritten from the campaign each time)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{answer.campaign}.html"
    path.write_text(render_page(answer), encoding="utf-8")
    return path
