"""The comparison families within one campaign: pairs, tests, Holm/BH adjustment, table and sentences."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from archbench import stats
from archbench.analyze import analysis
from archbench.analyze.analysis import Labeller, key_text, main_pool_series, series_of
from archbench.report import latex
from archbench.report.formats import (
    ALPHA,
    COMPARISONS_SIZE,
    EFFECT_SYMBOLS,
    TEST_NAMES,
    count_of,
    family_row,
    fill_first,
    fmt_bracket,
    fmt_number,
    fmt_p,
    fmt_rate,
    measured_values,
    notes_after,
    several_depths,
    truthy,
    two_lines,
)
from archbench.report.latex import (
    MISSING,
    escape,
    format_count,
    format_decimal,
    is_missing,
)
from archbench.report.prose import Prose
from archbench.report.studies.statistics.paired_power import POWER_PCT, add_detectable_differences, detectable_facts

COMPARISONS_CSV = "comparisons.csv"  # data/processed/: one row per compared pair
TEMPLATE = "statistics/comparisons"  # paper/templates/statistics/comparisons.tex.j2


@dataclass(frozen=True)
class Pair:
    """Two configurations to compare (a - b, a / b) within a family; the texts are plain (not LaTeX)."""

    family: str
    context: str
    a_name: str
    b_name: str
    a: str
    b: str


def comparison_pairs(summary: pd.DataFrame) -> list[Pair]:
    """The families of the report: each pool size against the next smaller (every thread-pool sweep),
    request against connection dispatch at equal N, connections, handoff and depth, and every
    architecture of each comparison table against its nginx reference."""
    if summary.empty:
        return []
    several = several_depths(summary)
    pairs: list[Pair] = []

    def depth_text(row: Mapping[str, Any]) -> str:
        return f", D={key_text(row.get('pipeline')) or '1'}" if several else ""

    for one in series_of(summary, "threads"):
        if one.first["architecture"] != "thread_pool":
            continue
        rows = one.rows.sort_values("threads", kind="stable")
        first = one.first
        context = (
            f"{analysis.architecture_label('thread_pool', first.get('dispatch'), first.get('handoff'), short=True)}"
            f", {format_count(first['connections'])} conn.{depth_text(first)}"
        )
        records = [r for _, r in rows.iterrows()]
        for lower, higher in zip(records, records[1:], strict=False):  # neighbours
            pairs.append(
                Pair(
                    "pool",
                    context,
                    f"N={int(float(higher['threads']))}",
                    f"N={int(float(lower['threads']))}",
                    str(higher["config_id"]),
                    str(lower["config_id"]),
                )
            )

    pool = summary[summary["architecture"] == "thread_pool"]
    if not pool.empty and "dispatch" in pool:
        fields = [
            f
            for f in (
                "handoff",
                "threads",
                "connections",
                "pipeline",
                "load_threads",
                "duration_s",
                "response",
                "load_generator",
                "proto",
            )
            if f in pool
        ]
        several_handoffs = pool["handoff"].map(key_text).nunique() > 1 if "handoff" in pool else False
        keyed = pool.assign(_key=[tuple(key_text(r[f]) for f in fields) for _, r in pool.iterrows()])
        for _, rows in keyed.groupby("_key", sort=False):
            request = rows[rows["dispatch"].map(key_text).isin(["request", ""])]
            connection = rows[rows["dispatch"].map(key_text) == "connection"]
            if len(request) == 1 and len(connection) == 1:
                row = request.iloc[0]
                context = f"N={int(float(row['threads']))}, {format_count(row['connections'])} conn.{depth_text(row)}"
                if several_handoffs:
                    context += f", {key_text(row.get('handoff'))}"
                pairs.append(
                    Pair(
                        "dispatch",
                        context,
                        "request",
                        "connection",
                        str(row["config_id"]),
                        str(connection.iloc[0]["config_id"]),
                    )
                )

    labels = Labeller(summary)
    for one in analysis.comparisons(summary):
        if one.reference is None:
            continue
        reference = one.reference
        context = (
            f"D={one.pipeline}, {format_count(one.point.get('connections'))} conn."
            if several
            else f"{format_count(one.point.get('connections'))} conn."
        )
        for _, row in one.rows.iterrows():
            pairs.append(
                Pair(
                    "nginx",
                    context,
                    labels.variant(row),
                    labels.variant(reference),
                    str(row["config_id"]),
                    str(reference["config_id"]),
                )
            )
    return pairs


def run_comparisons(
    pairs: Sequence[Pair],
    trials: pd.DataFrame,
    *,
    alpha: float = ALPHA,
    seed: int | None = stats.DEFAULT_SEED,
    resamples: int = stats.DEFAULT_RESAMPLES,
) -> pd.DataFrame:
    """`stats.compare` on every pair, then Holm and Benjamini-Hochberg within each family."""
    values = measured_values(trials)
    empty = np.array([])
    records = []
    for pair in pairs:
        result = stats.compare(
            values.get(pair.a, empty), values.get(pair.b, empty), alpha, seed=seed, resamples=resamples
        )
        records.append(
            {
                "family": pair.family,
                "context": pair.context,
                "a_name": pair.a_name,
                "b_name": pair.b_name,
                "config_a": pair.a,
                "config_b": pair.b,
                **result.as_dict(),
            }
        )
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    return add_detectable_differences(adjust_within_families(frame, alpha), values, alpha)


def adjust_within_families(frame: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """p_holm / reject_holm and p_bh / reject_bh, each family corrected on its own."""
    frame = frame.copy()
    for column in ("p_holm", "p_bh"):
        frame[column] = math.nan
    frame["reject_holm"] = False
    frame["reject_bh"] = False
    frame["family_size"] = 0
    for _, rows in frame.groupby("family", sort=False):
        holm = stats.holm(rows["p_value"].tolist(), alpha)
        bh = stats.benjamini_hochberg(rows["p_value"].tolist(), alpha)
        frame.loc[rows.index, "p_holm"] = holm.adjusted
        frame.loc[rows.index, "reject_holm"] = holm.reject
        frame.loc[rows.index, "p_bh"] = bh.adjusted
        frame.loc[rows.index, "reject_bh"] = bh.reject
        frame.loc[rows.index, "family_size"] = holm.m
    return frame


def effect_cell(row: Mapping[str, Any]) -> str:
    name = str(row.get("effect_size_name") or "")
    if name not in EFFECT_SYMBOLS or is_missing(row.get("effect_size")):
        return MISSING
    top = f"{EFFECT_SYMBOLS[name]}$\\,=\\,${fmt_number(row['effect_size'], 2)}"
    return two_lines(
        top, fmt_bracket(row.get("effect_size_ci_low"), row.get("effect_size_ci_high"), lambda v: fmt_number(v, 2))
    )


def difference_cell(row: Mapping[str, Any]) -> str:
    if is_missing(row.get("difference")):
        return MISSING
    return two_lines(
        fmt_rate(row["difference"]), fmt_bracket(row.get("difference_ci_low"), row.get("difference_ci_high"))
    )


def ratio_cell(row: Mapping[str, Any]) -> str:
    if is_missing(row.get("ratio")):
        return MISSING
    return two_lines(
        fmt_number(row["ratio"], 3),
        fmt_bracket(row.get("ratio_ci_low"), row.get("ratio_ci_high"), lambda v: fmt_number(v, 3)),
    )


def p_equation(p: Any, name: str = r"p_{\mathrm{Holm}}") -> str:
    """'$p_{Holm}=0.012$' or '$p_{Holm}<0.001$' for running text."""
    text = fmt_p(p)
    if text == MISSING:
        return f"${name}$ undefined"
    if text.startswith("$<$"):
        return f"${name}<{text[3:]}$"
    return f"${name}={text}$"


def p_cell(p: Any, reject: Any) -> str:
    text = fmt_p(p)
    return r"\textbf{" + text + "}" if truthy(reject) and text != MISSING else text


def pair_text(text: Any) -> str:
    """Escaped, with 'N=2' and 'D=16' typeset as mathematics."""
    return re.sub(r"\b([ND])=(\d+)", r"$\1=\2$", escape(text))


def comparisons_table(frame: pd.DataFrame, prose: Prose) -> str:
    if frame.empty:
        return prose.block(TEMPLATE, "no_table")
    columns = [
        ("Comparison (a vs b)", "l"),
        (r"$n_a/n_b$", "r"),
        ("Test", "l"),
        (r"$p_{\mathrm{Holm}}$", "r"),
        (latex.stacked("Effect size", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Difference a$-$b", r"(r/s) {[}95\,\% CI{]}"), "r"),
        (latex.stacked("Ratio a/b", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Det.", r"(\%)"), "r"),  # smallest detectable difference (paired_power)
    ]
    body: list[str | list[str]] = []
    for family, rows in frame.groupby("family", sort=False):
        if body:
            body.append(r"\midrule")
        title = prose.sentence(
            TEMPLATE,
            "family_title",
            family=family,
            escaped=escape(family),
            tested=int(rows["family_size"].iloc[0]),
            size=len(rows),
        )
        body.append(family_row(len(columns), title))
        for _, row in rows.iterrows():
            name = f"{pair_text(row['context'])}: {pair_text(row['a_name'])} vs {pair_text(row['b_name'])}"
            body.append(
                [
                    name,
                    f"{count_of(row['n_a'])}/{count_of(row['n_b'])}",
                    TEST_NAMES.get(str(row["test"]), escape(row["test"])),
                    p_cell(row.get("p_holm"), row.get("reject_holm")),
                    effect_cell(row),
                    difference_cell(row),
                    ratio_cell(row),
                    format_decimal(row.get("detectable_pct"), 0),
                ]
            )
    body = [line if isinstance(line, str) else " & ".join(line) + r" \\[2pt]" for line in body]
    caption = prose.sentence(TEMPLATE, "table_caption")
    notes = prose.sentence(TEMPLATE, "table_notes", ratio=True, within_families=True, power_pct=POWER_PCT)
    return latex.render_longtable(
        fill_first(columns), body, caption, "tab:comparisons", notes=notes_after(notes), size=COMPARISONS_SIZE
    )


def comparison_sentence(frame: pd.DataFrame, seed: int | None, resamples: int, prose: Prose) -> str:
    if frame.empty:
        return prose.sentence(TEMPLATE, "families", count=0)
    families = [
        {"words": prose.sentence(TEMPLATE, "family_words", family=family), "size": len(rows)}
        for family, rows in frame.groupby("family", sort=False)
    ]
    tested = frame[frame["test"] != "none"]
    facts: dict[str, Any] = {
        "count": len(frame),
        "families": families,
        "welch": int((frame["test"] == "welch_t").sum()),
        "mwu": int((frame["test"] == "mann_whitney_u").sum()),
        "untested": int((frame["test"] == "none").sum()),
        "tested": len(tested),
        "raw": int((pd.to_numeric(tested["p_value"], errors="coerce") < ALPHA).sum()),
        "alpha": format_decimal(ALPHA, 2),
        "holm": int(frame["reject_holm"].map(truthy).sum()),
        "bh": int(frame["reject_bh"].map(truthy).sum()),
        "seed": seed,
        "resamples": format_count(resamples),
        "csv": COMPARISONS_CSV,
    }
    facts.update(detectable_facts(frame))
    hopeless = tested[tested["notes"].fillna("").str.contains("no outcome could be significant")]
    facts["hopeless"] = len(hopeless)
    if not hopeless.empty:
        example = hopeless.iloc[0]
        n_a, n_b = count_of(example["n_a"]), count_of(example["n_b"])
        facts.update(n_a=n_a, n_b=n_b, smallest_p=format_decimal(min(1.0, 2.0 / math.comb(n_a + n_b, n_a)), 2))
    return prose.sentence(TEMPLATE, "families", facts)


def comparison_abstract_sentence(frame: pd.DataFrame, prose: Prose) -> str:
    holm = int(frame["reject_holm"].map(truthy).sum()) if not frame.empty else 0
    return prose.sentence(TEMPLATE, "abstract", count=len(frame), holm=holm)


def speedup_sentence(
    summary: pd.DataFrame, trials: pd.DataFrame, seed: int | None, resamples: int, prose: Prose
) -> str:
    """Rule 1: the pool-size speed-up with its base case's absolute rate and a bootstrap interval of the ratio."""
    main = main_pool_series(summary)
    if main is None:
        return prose.sentence(TEMPLATE, "speedup", sweep=False)
    rows = main.rows.dropna(subset=["mean"])
    if rows.empty:
        return prose.sentence(TEMPLATE, "speedup", sweep=True, base_rate=None)
    first = rows.iloc[0]
    best = rows.loc[pd.to_numeric(rows["mean"]).idxmax()]
    facts: dict[str, Any] = {
        "sweep": True,
        "label": escape(main.label),
        "base_threads": int(float(first["threads"])),
        "base_rate": fmt_rate(first["mean"]),
        "base_interval": latex.format_interval(first["ci95_low"], first["ci95_high"], first.get("n")),
        "base_is_best": str(best["config_id"]) == str(first["config_id"]),
    }
    if not facts["base_is_best"]:
        values = measured_values(trials)
        interval = stats.bootstrap_ratio_ci(
            values.get(str(best["config_id"]), []),
            values.get(str(first["config_id"]), []),
            center="mean",
            seed=seed,
            resamples=resamples,
        )
        ci_text = fmt_bracket(interval.ci.low, interval.ci.high, lambda v: fmt_number(v, 2))
        facts.update(
            best_threads=int(float(best["threads"])),
            best_rate=fmt_rate(best["mean"]),
            ratio=fmt_number(interval.estimate, 2),
            ratio_interval=None if ci_text == MISSING else ci_text,
        )
    return prose.sentence(TEMPLATE, "speedup", facts)
