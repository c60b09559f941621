"""Cross-OS tables and the facts of the section's sentences (source 000, measured hosts, the reference campaign;
the sentences are macros of paper/templates/crossos/sentences.tex.j2, called by its section.tex.j2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from archbench.analyze.analysis import key_text
from archbench.render import latex
from archbench.render.formats import (
    ALPHA,
    MEASURED_SIZE,
    TEST_NAMES,
    count_of,
    difference_cell,
    effect_cell,
    family_row,
    fill_first,
    first_named,
    fmt_bracket,
    fmt_number,
    fmt_rate,
    notes_after,
    p_cell,
    p_equation,
    ratio_cell,
    truthy,
    two_lines,
)
from archbench.render.latex import escape, format_count, format_decimal, is_missing
from archbench.render.prose import Prose
from archbench.studies.crossos.data import FACTOR_WORDS, CrossOs, factor_names

TEMPLATE = "crossos/sentences"  # paper/templates/crossos/sentences.tex.j2


def source000_table(state: CrossOs, prose: Prose) -> str:
    if state.source_error or (state.source_os.empty and state.source_setups.empty):
        return prose.sentence(TEMPLATE, "source_unreadable_table", error=escape(state.source_error or "empty")) + "\n"
    columns = [
        latex.Column("a vs b", "l"),
        latex.stacked_column("Means a, b (r/s)", "{[}$n${]}"),
        latex.Column(r"$t$ ($\nu$)", "r"),
        latex.Column(r"$p_{\mathrm{Holm}}$", "r"),
        latex.stacked_column("Difference a$-$b", r"(r/s) {[}95\,\% CI{]}"),
        latex.stacked_column("Ratio a/b", r"{[}95\,\% CI{]}"),
        latex.stacked_column("Hedges' $g$", r"{[}95\,\% CI{]}"),
        latex.stacked_column("Hardware", "differs", align="c"),
    ]
    blocks = [(state.source_os, "os"), (state.source_setups, "setup")]
    lines, breaks = [], []
    for frame, block in blocks:
        if frame.empty:
            continue
        breaks.append(len(lines))
        title = prose.sentence(TEMPLATE, "source_block_title", block=block, tested=int(frame["family_size"].iloc[0]))
        lines.append(family_row(len(columns), title))
        for _, row in frame.iterrows():
            at = f"{int(row['threads'])} threads" if "threads" in row and not is_missing(row.get("threads")) else ""
            if row["group_by"] == "setup":
                at = f"{escape(row.get('os', ''))}, {at}"
            means = two_lines(
                f"{fmt_rate(row['mean_a'])} [{count_of(row['n_a'])}]",
                f"{fmt_rate(row['mean_b'])} {{[}}{count_of(row['n_b'])}{{]}}",
            )
            pair = f"{escape(row['a'])} vs {escape(row['b'])}"
            lines.append(
                " & ".join(
                    [
                        r"\begin{tabular}[t]{@{}l@{}}" + pair + r"\\{}" + at + r"\end{tabular}",
                        means,
                        f"{fmt_number(row['statistic'], 2)} ({fmt_number(row['df'], 1)})",
                        p_cell(row.get("p_adjusted"), row.get("reject")),
                        difference_cell(row),
                        ratio_cell(row),
                        effect_cell(row),
                        "yes" if truthy(row.get("confounded_with_hardware")) else "no",
                    ]
                )
                + r" \\[2pt]"
            )
    caption = prose.sentence(TEMPLATE, "source_caption")
    tabular = latex.render_tabular(columns, lines, breaks)
    return latex.adjusted_table(caption, "tab:crossos-source000", tabular, skip=True) + "\n"


def source000_facts(state: CrossOs) -> dict[str, Any]:
    """Source 000's OS comparison: its significant pairs, what they are confounded with, the separate client
    against loopback and the match by threads per logical processor (None where the source has no such rows)."""
    if state.source_error or state.source_os.empty:
        return {"error": escape(state.source_error or "no rows"), "confounding": None, "setup": None, "share": None}
    frame = state.source_os
    significant = frame[frame["reject"].map(truthy)]
    described = [
        {
            "a": escape(r["a"]),
            "b": escape(r["b"]),
            "threads": int(r["threads"]),
            "mean_a": fmt_rate(r["mean_a"]),
            "mean_b": fmt_rate(r["mean_b"]),
            "ratio": fmt_number(r["ratio"], 2),
        }
        for _, r in significant.iterrows()
    ]
    named, more = first_named(described)
    confounded = frame[frame["confounded_with_hardware"].map(truthy)]
    pairs: list[dict[str, Any]] = []  # a pair that differs in the same factors is named once
    for _, r in confounded.iterrows():
        factors = [FACTOR_WORDS.get(f, f.replace("_", " ")) for f in factor_names(r["confounded_with"])]
        pair = {"a": escape(r["a"]), "b": escape(r["b"]), "factors": list(dict.fromkeys(factors))}
        if pair not in pairs:
            pairs.append(pair)
    setups, share = state.source_setups, state.source_cpu_share
    return {
        "error": None,
        "tests": len(frame),
        "significant_count": len(significant),
        "alpha": format_decimal(ALPHA, 2),
        "significant": named,
        "more": more,
        "confounding": {"total": len(frame), "confounded": len(confounded), "pairs": pairs},
        "setup": None if setups.empty else _setup_facts(setups),
        "share": None if share.empty else {"significant": int(share["reject"].map(truthy).sum()), "total": len(share)},
    }


def _setup_facts(setups: pd.DataFrame) -> dict[str, Any]:
    """Separate client against loopback on the source's Linux machine, thread count by thread count."""
    parts = [
        {
            "threads": int(r["threads"]),
            "mean_a": fmt_rate(r["mean_a"]),
            "n_a": count_of(r["n_a"]),
            "mean_b": fmt_rate(r["mean_b"]),
            "n_b": count_of(r["n_b"]),
            "p": p_equation(r["p_adjusted"]),
        }
        for _, r in setups.iterrows()
    ]
    same = not setups["confounded_with_hardware"].map(truthy).any()
    return {"parts": parts, "others": _factor_words(setups), "same": same}


def _measured_label(row: Mapping[str, Any]) -> str:
    if not is_missing(row.get("variant")) and not is_missing(row.get("connections")):
        text = f"{escape(row['variant'])}, {format_count(row['connections'])} conn."
        depth = key_text(row.get("pipeline"))
        if depth and depth != "1":
            text += f", $D={depth}$"
        return text
    return r"\texttt{" + escape(row.get("config_id", "")) + "}"


def measured_table(frame: pd.DataFrame | None, label: str, caption: str, empty_comment: str, prose: Prose) -> str:
    """(b) and (c): per-group means with intervals and the comparison, Holm-corrected (a long table); without
    rows, the LaTeX comment `empty_comment` (the section's sentence already says why there is no table)."""
    if frame is None or frame.empty:
        return empty_comment
    one_pair = frame[["a", "b"]].astype(str).drop_duplicates().shape[0] == 1
    columns = [
        ("Configuration" if one_pair else "Configuration; a vs b", "l"),
        (r"$n_a/n_b$", "r"),
        (latex.stacked("Mean a (r/s)", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Mean b (r/s)", r"{[}95\,\% CI{]}"), "r"),
        ("Test", "l"),
        (r"$p_{\mathrm{Holm}}$", "r"),
        (latex.stacked("Difference a$-$b", r"(r/s) {[}95\,\% CI{]}"), "r"),
        (latex.stacked("Effect size", r"{[}95\,\% CI{]}"), "r"),
        (latex.stacked("Hard-", "ware"), "c"),
    ]
    body = []
    for _, row in frame.iterrows():
        confounded = row.get("confounded_with_hardware")
        hardware = "?" if is_missing(confounded) else ("differs" if truthy(confounded) else "same")
        groups = "" if one_pair else r"\newline " + f"{escape(row['a'])} vs {escape(row['b'])}"
        cells = [
            _measured_label(row) + groups,
            f"{count_of(row['n_a'])}/{count_of(row['n_b'])}",
            two_lines(fmt_rate(row.get("mean_a")), fmt_bracket(row.get("mean_ci_low_a"), row.get("mean_ci_high_a"))),
            two_lines(fmt_rate(row.get("mean_b")), fmt_bracket(row.get("mean_ci_low_b"), row.get("mean_ci_high_b"))),
            TEST_NAMES.get(str(row["test"]), escape(row["test"])),
            p_cell(row.get("p_adjusted"), row.get("reject")),
            difference_cell(row),
            effect_cell(row),
            hardware,
        ]
        body.append(" & ".join(cells) + r" \\[2pt]")
    if one_pair:
        first = frame.iloc[0]
        body.insert(0, family_row(len(columns), f"a = {escape(first['a'])}, b = {escape(first['b'])}"))
    notes = prose.sentence("statistics/comparisons", "table_notes", ratio=False, within_families=False)
    return latex.render_longtable(
        fill_first(columns), body, caption, label, tabcolsep="2.5pt", notes=notes_after(notes), size=MEASURED_SIZE
    )


def _factor_words(frame: pd.DataFrame) -> list[str]:
    """The factors, other than the compared one, that the rows' groups differ in, in words."""
    return sorted({FACTOR_WORDS.get(f, f) for c in frame["confounded_with"] for f in factor_names(c)})


def _holm_facts(frame: pd.DataFrame) -> dict[str, Any]:
    """How many of the comparisons Holm's procedure rejects at ALPHA, and what their groups differ in besides."""
    differs = frame[frame["confounded_with_hardware"].map(truthy)]
    unknown = frame[frame["confounded_with_hardware"].map(is_missing)]
    return {
        "holm": int(frame["reject"].map(truthy).sum()),
        "alpha": format_decimal(ALPHA, 2),
        "confounding": {"differs": len(differs), "unknown": len(unknown), "factors": _factor_words(frame)},
    }


def cross_host_facts(state: CrossOs) -> dict[str, Any]:
    hosts = state.measured_groups.get("hostname", [])
    systems = state.measured_groups.get("os", [])
    facts: dict[str, Any] = {
        "campaigns": ", ".join(r"\texttt{" + escape(c) + "}" for c in state.measured_campaigns),
        "group": state.measured_group,
        "unreadable": [escape(u) for u in state.measured_unreadable],
        "host": escape(hosts[0]) if len(hosts) == 1 else None,
        "system": escape(systems[0]) if len(systems) == 1 else None,
        "groups": len(state.measured_groups.get(state.measured_group, [])),
        "comparisons": len(state.measured),
    }
    if state.measured_group and not state.measured.empty:
        facts.update(configurations=state.measured["config_id"].nunique(), **_holm_facts(state.measured))
    return facts


def reference_facts(state: CrossOs, campaign: str) -> dict[str, Any]:
    frame = state.reference
    facts: dict[str, Any] = {
        "status": state.reference_status,
        "error": escape(state.reference_error),
        "campaign": escape(campaign),
        "configurations": 0 if frame is None else len(frame),
    }
    if state.reference_status == "ran" and not frame.empty:
        facts.update(tested=int((frame["test"] != "none").sum()), **_holm_facts(frame))
    return facts
