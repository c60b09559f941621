"""The statistics study's comparisons: the table of every planned comparison and the facts of the sentences about
them (paper/templates/statistics/comparisons.tex.j2; the comparisons themselves are
archbench.analyze.planned_comparisons)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from archbench import stats
from archbench.analyze.analysis import main_pool_series
from archbench.analyze.client_bound import client_set_rate, trial_count
from archbench.analyze.planned_comparisons import VERDICT_SIGNIFICANT
from archbench.render import latex
from archbench.render.common import client_bound_rule
from archbench.render.formats import (
    ALPHA,
    COMPARISONS_SIZE,
    count_of,
    family_row,
    fill_first,
    fmt_bracket,
    fmt_number,
    fmt_p,
    fmt_rate,
    measured_values,
    notes_after,
    p_cell,
    ratio_cell,
    truthy,
)
from archbench.render.latex import MISSING, escape, format_count, format_decimal, is_missing
from archbench.render.prose import Prose
from archbench.stats.predeclared import MAX_ROUNDS_NEEDED
from archbench.studies.statistics.diagnostics import numbers, pct_range

COMPARISONS_CSV = "comparisons.csv"  # data/processed/: one row per compared pair
TEMPLATE = "statistics/comparisons"  # paper/templates/statistics/comparisons.tex.j2


def pair_text(text: Any) -> str:
    """Escaped, with 'N=2' and 'D=16' typeset as mathematics."""
    return re.sub(r"\b([ND])=(\d+)", r"$\1=\2$", escape(text))


def needed_facts(needed: Any) -> dict[str, Any]:
    """The rounds a test not run needs, as the templates say it: a count, more than the search went, or unknown."""
    value = pd.to_numeric(needed, errors="coerce")
    if is_missing(value):
        return {"needed": None, "beyond": False}
    if math.isinf(value):
        return {"needed": format_count(MAX_ROUNDS_NEEDED), "beyond": True}
    return {"needed": format_count(int(value)), "beyond": False}


def verdict_cell(row: Mapping[str, Any], prose: Prose) -> str:
    return prose.sentence(
        TEMPLATE,
        "verdict_cell",
        verdict=row.get("verdict"),
        ordered=truthy(row.get("ordered")),
        paired=truthy(row.get("paired")),
        minimum=stats.MIN_ROUNDS,
        **needed_facts(row.get("rounds_needed")),
    )


def comparisons_table(frame: pd.DataFrame, prose: Prose) -> str:
    """One row per planned comparison. The test is not repeated on every row (the section names it once): a row
    tested by the fallback is marked, and a row not run says so in its verdict."""
    if frame.empty:
        return prose.block(TEMPLATE, "no_table")
    columns = [
        ("Comparison (a vs b)", "l"),
        (latex.stacked("$n$", "(rounds)"), "r"),
        (latex.stacked("Ratio a/b", r"{[}95\,\% CI{]}"), "r"),
        ("$p$", "r"),
        (r"$p_{\mathrm{Holm}}$", "r"),
        (latex.stacked("MDD", r"(\%)"), "r"),
        ("Verdict", "l"),
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
            paired = truthy(row.get("paired"))
            body.append(
                [
                    name,
                    format_count(row["n_rounds"]) if paired else f"{count_of(row['n_a'])}/{count_of(row['n_b'])}",
                    ratio_cell(row) + prose.sentence(TEMPLATE, "test_mark", test=row["test"]),
                    fmt_p(row.get("p_value")),
                    p_cell(row.get("p_holm"), row.get("reject_holm")),
                    format_decimal(row.get("mdd_pct"), 1),
                    verdict_cell(row, prose),
                ]
            )
    body = [line if isinstance(line, str) else " & ".join(line) + r" \\[2pt]" for line in body]
    caption = prose.sentence(TEMPLATE, "table_caption")
    notes = prose.sentence(
        TEMPLATE,
        "planned_notes",
        minimum=stats.MIN_ROUNDS,
        paired=bool(frame["paired"].map(truthy).all()),
        client_set=any(
            r["verdict"] == VERDICT_SIGNIFICANT and not truthy(r.get("ordered")) for _, r in frame.iterrows()
        ),
        rule=client_bound_rule(),
    )
    return latex.render_longtable(
        fill_first(columns), body, caption, "tab:comparisons", notes=notes_after(notes), size=COMPARISONS_SIZE
    )


def comparison_facts(frame: pd.DataFrame) -> dict[str, Any]:
    """What the comparison sentence states: the tests run by kind, the verdicts, the minimum detectable differences
    of the tests not significant, the rounds the tests not run need, the log ratios' Shapiro-Wilk (diagnostic)."""
    run = frame[frame["test"] != stats.NOT_RUN]
    not_run = frame[frame["test"] == stats.NOT_RUN]
    kept = run[~run["reject_holm"].map(truthy)]
    needed = numbers(not_run, "rounds_needed")
    finite = needed[np.isfinite(needed)]
    paired_run = run[run["test"] == stats.PAIRED_TEST]
    shapiro = numbers(paired_run, "shapiro_p_log")
    return {
        "count": len(frame),
        "paired": int((run["test"] == stats.PAIRED_TEST).sum()),
        "unpaired": int((run["test"] == stats.UNPAIRED_TEST).sum()),
        "not_run": len(not_run),
        "minimum": stats.MIN_ROUNDS,
        "needed_max": format_count(int(finite.max())) if not finite.empty else None,
        "needed_unknown": int(needed.isna().sum()),
        "needed_beyond": int(np.isinf(needed).sum()),
        "search_max": format_count(MAX_ROUNDS_NEEDED),
        "tested": len(run),
        "raw": int((numbers(run, "p_value") < ALPHA).sum()),
        "alpha": format_decimal(ALPHA, 2),
        "holm": int(frame["reject_holm"].map(truthy).sum()),
        "bh": int(frame["reject_bh"].map(truthy).sum()),
        "mdd": pct_range(kept["mdd_pct"]),
        "shapiro_checked": int(shapiro.notna().sum()),
        "shapiro_failing": int((shapiro < ALPHA).sum()),
        "csv": COMPARISONS_CSV,
    }


def families_facts(frame: pd.DataFrame) -> dict[str, Any]:
    """The comparison families' sentence: each family (its name, its pairs) and `comparison_facts`."""
    if frame.empty:
        return {"count": 0}
    families = [{"family": family, "size": len(rows)} for family, rows in frame.groupby("family", sort=False)]
    return {**comparison_facts(frame), "families": families}


def holm_families_facts(frame: pd.DataFrame, paired_family: int | None) -> dict[str, Any]:
    """The families Holm's correction runs in, stated once: the planned comparisons' (their tests run) and the
    paired ratios' (`paired_family`: paired-ratios.csv's family_size, None without a paired ratio); the workloads
    study's multiple comparisons with the best are families of their own, one per workload point."""
    planned = (
        [
            {"family": family, "tested": int(rows["family_size"].iloc[0])}
            for family, rows in frame.groupby("family", sort=False)
        ]
        if not frame.empty
        else []
    )
    return {"planned": planned, "paired": paired_family}


def comparison_abstract_facts(frame: pd.DataFrame) -> dict[str, Any]:
    """The facts of the abstract's sentence on the comparisons (`abstract` of comparisons.tex.j2, which the abstract
    renders from `studies.statistics.abstract`)."""
    if frame.empty:
        return {"count": 0}
    facts = comparison_facts(frame)
    return {key: facts[key] for key in ("count", "holm", "tested", "not_run")}


def predeclared_test_name(prose: Prose) -> str:
    """The pre-declared test in words, from its constant (the report prints it once, in the method)."""
    return prose.sentence(TEMPLATE, "test_long", test=stats.PAIRED_TEST, fallback=stats.UNPAIRED_TEST)


def speedup_facts(summary: pd.DataFrame, trials: pd.DataFrame, seed: int | None, resamples: int) -> dict[str, Any]:
    """Rule 1: the pool-size speed-up with its base case's absolute rate and a bootstrap interval of the ratio."""
    main = main_pool_series(summary)
    if main is None:
        return {"sweep": False}
    rows = main.rows.dropna(subset=["mean"])
    if rows.empty:
        return {"sweep": True, "base_rate": None}
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
            # The load generator bounded half its trials or more: no "fastest" pool, and a speed-up the client capped.
            best_client_set=client_set_rate(best),
            best_bound=format_count(trial_count(best.get("n_client_bound"))),
            best_trials=format_count(trial_count(best.get("n"))),
            ratio=fmt_number(interval.estimate, 2),
            ratio_interval=None if ci_text == MISSING else ci_text,
        )
    return facts
