"""Cross-OS (and cross-host, cross-campaign) comparisons of throughput, with sound statistics.

Three families of comparisons, each returned as a DataFrame with one row per pair of
groups, ready for a LaTeX emitter (booleans, floats, short text; NaN where undefined):

(a) `source000_cross_os`: source 000's published tables (data/external/source000_throughput.csv:
    mean, sample sd and n per OS and thread count, no raw trials). For every thread count
    present on two or more OSes, Welch's t-test of each pair from the summary statistics,
    Holm-corrected across the family, with the interval of the difference, the ratio and
    Hedges' g. The OSes ran on different hardware, so every row says what the OS effect is
    confounded with (`confounded_with_hardware`, `confounded_with`, `note`).
    `source000_setups` does the same between the separate-client and loopback setups (Linux).
(b) `measured_comparisons`: per-trial rows (data/processed/trials.csv, or
    `load_campaign_trials`) grouped by OS, host or campaign: for every configuration measured
    in two or more groups, each group's mean with its t interval and median with its
    order-statistic interval, and `archbench.stats.compare` on each pair (Welch's t when
    both groups pass Shapiro-Wilk, else Mann-Whitney U; effect size and difference with
    intervals), Holm-corrected across the family.
(c) `compare_with_reference`: (b) with group = campaign, between a campaign run on this
    machine and the reference campaign shipped in git (data/raw/reference).

Columns of (a), `summary_comparisons` (one row per pair, families in order of appearance):
    family              name of the family the correction ran over
    group_by            the column compared (os, setup)
    match               the key the pair shares, as text ("setup=separate-client, threads=4")
    <match columns>     that key's columns (setup, threads; or setup, threads_per_logical_processor)
    a, b                the two groups (a - b, a / b); in the table's order of first appearance
    threads_a, threads_b
    n_a, mean_a, sd_a, mean_ci_low_a, mean_ci_high_a      published n, mean, sd; log-scale t interval
    n_b, mean_b, sd_b, mean_ci_low_b, mean_ci_high_b
    test                "welch_t"
    test_reason         why (summary statistics only: normality cannot be checked)
    statistic, df       Welch's t and Welch-Satterthwaite df
    p_value             two-sided, uncorrected
    p_adjusted, reject  after `correction` over the family; reject = p_adjusted <= alpha
    correction, family_size, alpha, ci_level
    center              "mean"
    estimate_a, estimate_b                                the means again (uniform with (b))
    difference, difference_ci_low, difference_ci_high, difference_ci_method, standard_error
    ratio, ratio_ci_low, ratio_ci_high, ratio_ci_method   mean_a / mean_b, delta method on logs
    effect_size_name, effect_size, effect_size_ci_low, effect_size_ci_high, effect_size_ci_method
                        Hedges' g (noncentral-t interval)
    confounded_with_hardware   True when the server hardware differs between a and b
    confounded_with     every factor besides the compared one that differs ("cpu: X vs Y; ...")
    note                the caveat in words

Columns of (b) and (c), `measured_comparisons` / `compare_with_reference`:
    family, group_by, a, b, <key column> (config_id), and, when the trials have them,
    variant, family_label (the trials' `family`), architecture, threads, connections, pipeline, proto
    per group x in {a, b}:
        n_x, n_flagged_x, mean_x, mean_ci_low_x, mean_ci_high_x (stats.rate_ci),
        median_x, median_ci_low_x, median_ci_high_x, median_ci_coverage_x, median_ci_reaches_level_x
        (order statistics, exact binomial coverage), n_outliers_x, n_far_out_x, outlier_trials_x
        (Tukey fences, reported, never dropped), hardware_x (the group's provenance, text)
    then the columns of `archbench.stats.ComparisonResult.as_dict()`:
        test, test_reason, shapiro_w_a, shapiro_p_a, normal_a, shapiro_w_b, shapiro_p_b, normal_b,
        statistic, df, p_value, p_method, alpha, significant, center, estimate_a, estimate_b,
        difference, difference_ci_low, difference_ci_high, difference_ci_method,
        ratio, ratio_ci_low, ratio_ci_high, ratio_ci_method,
        effect_size_name, effect_size, effect_size_ci_low, effect_size_ci_high,
        effect_size_ci_method, ci_level, seed, resamples, notes
    p_adjusted, reject, correction, family_size
    confounded_with_hardware   True / False / None (unknown: provenance missing)
    confounded_with, note

The statistics use the measured (non-warm-up) trials with status ok, flagged ones included
(as summary.csv does; `n_flagged_x` counts them).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from archbench import stats
from archbench.analyze import analysis, outliers
from archbench.config.paths import EXTERNAL_DIR, REPO_ROOT

REPO = REPO_ROOT
SOURCE000_CSV = EXTERNAL_DIR / "source000_throughput.csv"

# Columns of data/external/source000_throughput.csv (data/external/README.md describes them).
SOURCE000_COLUMNS: tuple[str, ...] = (
    "source",
    "table",
    "os",
    "os_version",
    "setup",
    "threads",
    "thread_pool_size",
    "mean_rps",
    "sd_rps",
    "n",
    "machine",
    "cpu",
    "logical_processors",
    "clock_ghz",
    "memory",
    "memory_gb",
    "ethernet",
    "compiler",
    "client",
    "load_command",
    "title",
    "url",
)
# Server hardware: a difference in any of these confounds the compared factor with the machine.
SOURCE000_HARDWARE: tuple[str, ...] = ("machine", "cpu", "logical_processors", "clock_ghz", "memory", "ethernet")
# Other factors that differ with the OS or the setup and are named in `confounded_with`.
SOURCE000_OTHER_FACTORS: tuple[str, ...] = ("os_version", "compiler", "client", "load_command")

# The confounding check compares the per-trial provenance (docs/contracts.md section 2, `provenance`) that
# trials.csv carries (analysis.PROVENANCE_COLUMNS); of it, the hardware and the other factors:
MEASURED_HARDWARE: tuple[str, ...] = ("cpu_model", "cpu_count", "memory_bytes")
MEASURED_OTHER_FACTORS: tuple[str, ...] = ("os", "kernel", "compiler", "hostname")
# Grouping columns tried in order when `group` is not given.
GROUP_CANDIDATES: tuple[str, ...] = ("os", "hostname", "campaign")
# Configuration columns copied into each row, when the trials have them (renamed on the right).
CONFIG_DESCRIPTION: dict[str, str] = {
    "variant": "variant",
    "family": "family_label",
    "architecture": "architecture",
    "threads": "threads",
    "connections": "connections",
    "pipeline": "pipeline",
    "proto": "proto",
}
SEPARATOR = ";"  # between trial ids, as in trials.csv's flags
FACTOR_SEPARATOR = " | "  # between differing factors (source 000's memory field contains ";")


# =========================================================================== source 000's tables


def load_source000(path: Path | str = SOURCE000_CSV) -> pd.DataFrame:
    """data/external/source000_throughput.csv as a DataFrame (source kept as the text "000")."""
    table = pd.read_csv(
        path,
        dtype={"source": str, "load_command": str},
        keep_default_na=False,
        na_values={"mean_rps": [""], "sd_rps": [""], "n": [""]},
    )
    missing = [c for c in SOURCE000_COLUMNS if c not in table]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}")
    return table


_NUMBER_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
}


def parse_source000_tables(text: str) -> pd.DataFrame:
    """The result tables of source 000's captured text: columns os, setup, threads, mean_rps,
    sd_rps, n. Used to check the shipped CSV against the source (tests/test_crossos.py).

    A heading line "Windows:", "macOS:" or "Linux:" starts a separate-client table; the
    sentence saying the server and wrk ran on one machine starts the loopback (Linux) table;
    "running <number word> trials" sets n for the tables that follow; a table row is three
    integers: threads, sample mean, sample sd.
    """
    rows = []
    os_name, setup, n = None, None, None
    for line in text.splitlines():
        line = line.strip()
        trials = re.search(r"\b(\w+) trials\b", line)
        if trials and trials.group(1).lower() in _NUMBER_WORDS:
            n = _NUMBER_WORDS[trials.group(1).lower()]
        heading = re.fullmatch(r"(Windows|macOS|Linux):", line)
        if heading:
            os_name, setup = heading.group(1), "separate-client"
            continue
        if re.search(r"both the server and wrk were run on the", line):
            os_name, setup = "Linux", "loopback"
            continue
        row = re.fullmatch(r"(\d+)\s+(\d+)\s+(\d+)", line)
        if row and os_name:
            threads, mean, sd = (int(v) for v in row.groups())
            rows.append({"os": os_name, "setup": setup, "threads": threads, "mean_rps": mean, "sd_rps": sd, "n": n})
    return pd.DataFrame(rows, columns=["os", "setup", "threads", "mean_rps", "sd_rps", "n"])


@dataclass(frozen=True)
class Testing:
    """How a family of comparisons is tested: the level of its intervals (None: 1 - alpha), the test's alpha and
    the correction over the family; for measured trials also the normality check's alpha and the bootstrap's
    seed and resamples (stats.compare)."""

    alpha: float = stats.DEFAULT_ALPHA
    level: float | None = None
    correction: str = "holm"
    normality_alpha: float = stats.DEFAULT_ALPHA
    seed: int | None = stats.DEFAULT_SEED
    resamples: int = stats.DEFAULT_RESAMPLES

    @property
    def interval_level(self) -> float:
        return 1.0 - self.alpha if self.level is None else self.level


@dataclass(frozen=True)
class SummaryColumns:
    """A table of summary statistics: its mean, standard-deviation and count columns, and the columns that describe
    each row's hardware and its other factors (what a pair may be confounded with)."""

    hardware: Sequence[str] = SOURCE000_HARDWARE
    other_factors: Sequence[str] = SOURCE000_OTHER_FACTORS
    mean: str = "mean_rps"
    sd: str = "sd_rps"
    n: str = "n"


def summary_comparisons(
    table: pd.DataFrame,
    group: str,
    match: Sequence[str],
    *,
    family: str = "",
    testing: Testing = Testing(level=stats.DEFAULT_CONFIDENCE),
    columns: SummaryColumns = SummaryColumns(),
) -> pd.DataFrame:
    """Welch's t-test from summary statistics for every pair of `group` values sharing a `match`
    key, corrected over the whole family (columns in the module docstring)."""
    match = list(match)
    out: list[dict[str, Any]] = []
    for key, rows in table.groupby(match, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        if rows[group].duplicated().any():
            raise ValueError(f"several rows for one {group} at {dict(zip(match, key, strict=True))}")
        if len(rows) < 2:
            continue
        for (_, a), (_, b) in itertools.combinations(rows.iterrows(), 2):
            out.append(_summary_pair((a, b), group, dict(zip(match, key, strict=True)), family, testing, columns))
    frame = pd.DataFrame(out)
    return _with_correction(frame, testing.correction, testing.alpha)


def _summary_pair(
    pair: tuple[pd.Series, pd.Series],
    group: str,
    key: dict[str, Any],
    family: str,
    testing: Testing,
    columns: SummaryColumns,
) -> dict[str, Any]:
    a, b = pair
    level, alpha = testing.interval_level, testing.alpha
    hardware, other_factors = columns.hardware, columns.other_factors
    values = [(float(r[columns.mean]), float(r[columns.sd]), int(r[columns.n])) for r in (a, b)]
    (mean_a, sd_a, n_a), (mean_b, sd_b, n_b) = values
    welch = stats.welch_from_stats(mean_a, sd_a, n_a, mean_b, sd_b, n_b, level)
    ratio, ratio_ci = stats.ratio_ci_from_stats(mean_a, sd_a, n_a, mean_b, sd_b, n_b, level)
    g = stats.hedges_g_from_stats(mean_a, sd_a, n_a, mean_b, sd_b, n_b, level)
    ci_a = stats.rate_ci_from_stats(mean_a, sd_a, n_a, level)
    ci_b = stats.rate_ci_from_stats(mean_b, sd_b, n_b, level)
    hardware_diffs = _differences(a, b, hardware)
    other_diffs = _differences(a, b, [f for f in other_factors if f != group and not f.startswith(group + "_")])
    confounded = bool(hardware_diffs)
    row: dict[str, Any] = {
        "family": family,
        "group_by": group,
        "match": ", ".join(f"{k}={_text(v)}" for k, v in key.items()),
        **key,
        "a": a[group],
        "b": b[group],
        "threads_a": a.get("threads"),
        "threads_b": b.get("threads"),
        "n_a": n_a,
        "mean_a": mean_a,
        "sd_a": sd_a,
        "mean_ci_low_a": ci_a.low,
        "mean_ci_high_a": ci_a.high,
        "n_b": n_b,
        "mean_b": mean_b,
        "sd_b": sd_b,
        "mean_ci_low_b": ci_b.low,
        "mean_ci_high_b": ci_b.high,
        "test": "welch_t",
        "test_reason": (
            "published mean, sd and n only: normality cannot be checked without the trials, Welch's t assumes it"
        ),
        "statistic": welch.statistic,
        "df": welch.df,
        "p_value": welch.p_value,
        "alpha": alpha,
        "ci_level": level,
        "center": "mean",
        "estimate_a": mean_a,
        "estimate_b": mean_b,
        "difference": welch.difference,
        "difference_ci_low": welch.ci.low,
        "difference_ci_high": welch.ci.high,
        "difference_ci_method": welch.ci.method,
        "standard_error": welch.standard_error,
        "ratio": ratio,
        "ratio_ci_low": ratio_ci.low,
        "ratio_ci_high": ratio_ci.high,
        "ratio_ci_method": ratio_ci.method,
        "effect_size_name": g.name,
        "effect_size": g.estimate,
        "effect_size_ci_low": g.ci.low,
        "effect_size_ci_high": g.ci.high,
        "effect_size_ci_method": g.ci.method,
        "confounded_with_hardware": confounded,
        "confounded_with": FACTOR_SEPARATOR.join(hardware_diffs + other_diffs),
        "note": _summary_note(a, b, group, hardware_diffs, other_diffs, welch.note),
    }
    return row


def _summary_note(
    a: pd.Series, b: pd.Series, group: str, hardware_diffs: list[str], other_diffs: list[str], extra: str
) -> str:
    parts = []
    if hardware_diffs:
        also = f"; also {FACTOR_SEPARATOR.join(other_diffs)}" if other_diffs else ""
        parts.append(
            f"the server hardware differs between {a[group]} and {b[group]} "
            f"({FACTOR_SEPARATOR.join(hardware_diffs)}{also}): the difference mixes the {group} with these "
            f"factors and is not an effect of the {group} alone"
        )
    elif other_diffs:
        parts.append(f"same server hardware; also differing: {FACTOR_SEPARATOR.join(other_diffs)}")
    else:
        parts.append("same server hardware and recorded set-up")
    if extra:
        parts.append(extra)
    return ". ".join(parts)


def source000_cross_os(
    table: pd.DataFrame | None = None,
    *,
    match: str = "threads",
    level: float = stats.DEFAULT_CONFIDENCE,
    alpha: float = stats.DEFAULT_ALPHA,
    correction: str = "holm",
) -> pd.DataFrame:
    """Cross-OS Welch tests on source 000's tables (separate-client and loopback setups apart).

    match="threads" (default): pairs at the same thread count (4 threads: Windows, macOS,
    Linux; 8 threads: Windows, Linux), one family of 4 tests.
    match="cpu_share": pairs at the same threads per logical processor, the pairing the
    source chose (macOS, with 8 logical processors, ran half the threads of the
    16-processor machines): macOS 2 vs Windows/Linux 4, macOS 4 vs Windows/Linux 8.
    Every pair is confounded with the hardware (different machines, or the same CPU model
    at a different reported clock) and the compiler; the rows say so.
    """
    table = load_source000() if table is None else table
    if match == "threads":
        keys = ["setup", "threads"]
    elif match == "cpu_share":
        table = table.assign(threads_per_logical_processor=table["threads"] / table["logical_processors"])
        keys = ["setup", "threads_per_logical_processor"]
    else:
        raise ValueError(f"match must be 'threads' or 'cpu_share', got {match!r}")
    return summary_comparisons(
        table,
        "os",
        keys,
        family=f"source 000 cross-OS ({match})",
        testing=Testing(alpha=alpha, level=level, correction=correction),
    )


def source000_setups(
    table: pd.DataFrame | None = None,
    *,
    level: float = stats.DEFAULT_CONFIDENCE,
    alpha: float = stats.DEFAULT_ALPHA,
    correction: str = "holm",
) -> pd.DataFrame:
    """Separate-client vs loopback on source 000's Linux machine at the thread counts both
    tables have (4 and 8), as the source itself discusses (n = 5 vs n = 10)."""
    table = load_source000() if table is None else table
    return summary_comparisons(
        table,
        "setup",
        ["os", "threads"],
        family="source 000 separate-client vs loopback",
        testing=Testing(alpha=alpha, level=level, correction=correction),
    )


# =========================================================================== measured campaigns


def load_campaign_trials(campaign_dir: Path | str, parse: Any = None) -> pd.DataFrame:
    """trials.csv's rows for a raw campaign (archbench.analyze.analysis.trials_frame) plus the provenance
    columns of analysis.PROVENANCE_COLUMNS from each trial record (campaign.json's when a record has none),
    so campaigns from different machines can be grouped and their hardware compared."""
    campaign = analysis.load_raw_campaign(Path(campaign_dir))
    trials = analysis.trials_frame(campaign, parse)
    fallback = dict(campaign.meta.get("provenance") or {})
    by_id = {record.get("trial_id"): dict(record.get("provenance") or fallback) for record in campaign.trials}
    for name in analysis.PROVENANCE_COLUMNS:
        if name not in trials:
            trials[name] = (
                [by_id.get(trial_id, fallback).get(name) for trial_id in trials["trial_id"]]
                if "trial_id" in trials
                else None
            )
    return trials


def choose_group(trials: pd.DataFrame) -> str:
    """The first of GROUP_CANDIDATES (os, hostname, campaign) with two or more values among the
    measured ok trials, else the first one present; ValueError when none is."""
    rows = outliers.measured_ok_undisturbed(trials)
    present = [c for c in GROUP_CANDIDATES if c in rows]
    if not present:
        raise ValueError(f"trials have none of the grouping columns {GROUP_CANDIDATES}")
    for column in present:
        if rows[column].dropna().nunique() >= 2:
            return column
    return present[0]


def measured_comparisons(
    trials: pd.DataFrame,
    group: str | None = None,
    *,
    key: str = "config_id",
    value: str = "requests_per_sec",
    pairs: Iterable[tuple[Any, Any]] | None = None,
    family: str = "",
    testing: Testing = Testing(),
    hardware: Mapping[Any, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """For every `key` (configuration) measured in two or more `group`s: per-group statistics and
    `stats.compare` on each pair (a = earlier group in order of first appearance, or as `pairs`
    orders them), corrected over the family (columns in the module docstring).

    `group` defaults to `choose_group(trials)`. `hardware` maps a group value to provenance
    fields (cpu_model, cpu_count, memory_bytes, kernel, compiler, os, hostname), overriding the
    trials' columns; without either, `confounded_with_hardware` is None (unknown).
    The same seed is used for every pair, so each row is reproducible on its own. Trials
    without a value in the `group` column cannot be placed and are left out.
    """
    if value not in trials:
        raise ValueError(f"trials have no {value!r} column")
    group = group or choose_group(trials)
    if group not in trials:
        raise ValueError(f"trials have no {group!r} column")
    if key not in trials:
        raise ValueError(f"trials have no {key!r} column")
    level, alpha = testing.interval_level, testing.alpha
    rows = outliers.measured_ok_undisturbed(trials)
    rows = rows[rows[group].notna()]
    order = list(dict.fromkeys(rows[group].tolist()))
    wanted = None if pairs is None else [tuple(p) for p in pairs]
    family = family or f"{value} by {group}"
    profiles = {g: _provenance(rows[rows[group] == g], (hardware or {}).get(g)) for g in order}

    out: list[dict[str, Any]] = []
    for config, config_rows in rows.groupby(key, sort=False, dropna=False):
        present = [g for g in order if (config_rows[group] == g).any()]
        candidates = wanted if wanted is not None else list(itertools.combinations(present, 2))
        for a, b in candidates:
            if a not in present or b not in present:
                continue
            rows_a, rows_b = config_rows[config_rows[group] == a], config_rows[config_rows[group] == b]
            record: dict[str, Any] = {"family": family, "group_by": group, "a": a, "b": b, key: config}
            first = config_rows.iloc[0]
            for column, name in CONFIG_DESCRIPTION.items():
                if column in config_rows and column != key:
                    record[name] = first[column]
            record.update(_group_columns(rows_a, value, level, "a"))
            record.update(_group_columns(rows_b, value, level, "b"))
            record["hardware_a"] = _profile_text(profiles[a])
            record["hardware_b"] = _profile_text(profiles[b])
            result = stats.compare(
                pd.to_numeric(rows_a[value], errors="coerce"),
                pd.to_numeric(rows_b[value], errors="coerce"),
                alpha,
                seed=testing.seed,
                level=level,
                normality_alpha=testing.normality_alpha,
                resamples=testing.resamples,
            )
            record.update(result.as_dict())
            confounded, differences, note = _confounding(profiles[a], profiles[b], group)
            record.update(
                confounded_with_hardware=confounded, confounded_with=FACTOR_SEPARATOR.join(differences), note=note
            )
            out.append(record)
    return _with_correction(pd.DataFrame(out), testing.correction, alpha)


def compare_with_reference(
    local_trials: pd.DataFrame,
    reference_trials: pd.DataFrame,
    **options: Any,
) -> pd.DataFrame:
    """A campaign run here (a) against the shipped reference campaign (b), configuration by
    configuration, as `measured_comparisons` with group = campaign (keyword options pass
    through). Only local-vs-reference pairs are tested; the frames must name different campaigns.
    """
    for name, frame in (("local", local_trials), ("reference", reference_trials)):
        if "campaign" not in frame:
            raise ValueError(f"the {name} trials have no 'campaign' column")
    local_names = list(dict.fromkeys(local_trials["campaign"].dropna().tolist()))
    reference_names = list(dict.fromkeys(reference_trials["campaign"].dropna().tolist()))
    shared = set(local_names) & set(reference_names)
    if shared:
        raise ValueError(f"local and reference trials share campaign names {sorted(shared)}")
    combined = pd.concat([local_trials, reference_trials], ignore_index=True)
    options.setdefault("family", "this machine vs the reference campaign")
    pairs = [(local, reference) for local in local_names for reference in reference_names]
    return measured_comparisons(combined, "campaign", pairs=pairs, **options)


def group_summaries(
    trials: pd.DataFrame,
    group: str | None = None,
    *,
    key: str = "config_id",
    value: str = "requests_per_sec",
    level: float = stats.DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """One row per (configuration, group): the per-group columns of `measured_comparisons`
    without the suffix (n, n_flagged, mean, mean_ci_low, mean_ci_high, median, median_ci_low,
    median_ci_high, median_ci_coverage, median_ci_reaches_level, n_outliers, n_far_out,
    outlier_trials), plus `total_rate` (Σ total_requests / Σ measured_duration_s, when the
    trials have both: the rate of all trials together, see stats.harmonic_mean) and the
    Shapiro-Wilk W, p and pass flag (shapiro_w, shapiro_p, normal)."""
    group = group or choose_group(trials)
    rows = outliers.measured_ok_undisturbed(trials)
    rows = rows[rows[group].notna()]
    out = []
    for (config, group_value), group_rows in rows.groupby([key, group], sort=False, dropna=False):
        record: dict[str, Any] = {"group_by": group, key: config, "group": group_value}
        columns = _group_columns(group_rows, value, level, "")
        record.update({name.rstrip("_"): v for name, v in columns.items()})
        if "total_requests" in group_rows and "measured_duration_s" in group_rows:
            record["total_rate"] = stats.total_rate(
                pd.to_numeric(group_rows["total_requests"], errors="coerce"),
                pd.to_numeric(group_rows["measured_duration_s"], errors="coerce"),
            )
        check = stats.shapiro_wilk(pd.to_numeric(group_rows[value], errors="coerce"))
        record.update(shapiro_w=check.statistic, shapiro_p=check.p_value, normal=check.passes)
        out.append(record)
    return pd.DataFrame(out)


# =========================================================================== helpers


def _group_columns(rows: pd.DataFrame, value: str, level: float, suffix: str) -> dict[str, Any]:
    values = pd.to_numeric(rows[value], errors="coerce")
    summary = stats.summarize(values, level)
    median = stats.median_ci(values, level)
    report = stats.tukey_outliers(values.tolist())
    ids = rows["trial_id"].tolist() if "trial_id" in rows else list(rows.index)
    flagged = int(outliers.truthy(rows["flagged"]).sum()) if "flagged" in rows else 0
    s = f"_{suffix}" if suffix else "_"
    return {
        f"n{s}": summary.n,
        f"n_flagged{s}": flagged,
        f"mean{s}": summary.mean,
        f"mean_ci_low{s}": summary.mean_ci.low,
        f"mean_ci_high{s}": summary.mean_ci.high,
        f"median{s}": median.median,
        f"median_ci_low{s}": median.ci.low,
        f"median_ci_high{s}": median.ci.high,
        f"median_ci_coverage{s}": median.coverage,
        f"median_ci_reaches_level{s}": median.reaches_level,
        f"n_outliers{s}": report.count,
        f"n_far_out{s}": report.far_count,
        f"outlier_trials{s}": SEPARATOR.join(str(ids[i]) for i in report.indices),
    }


def _with_correction(frame: pd.DataFrame, correction: str, alpha: float) -> pd.DataFrame:
    if frame.empty:
        return frame
    adjusted = stats.adjust_pvalues(frame["p_value"].tolist(), correction, alpha)
    frame = frame.copy()
    frame["p_adjusted"] = adjusted.adjusted
    frame["reject"] = adjusted.reject
    frame["correction"] = adjusted.method
    frame["family_size"] = adjusted.m
    return frame


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _differences(a: Mapping[str, Any], b: Mapping[str, Any], fields: Iterable[str]) -> list[str]:
    """'field: A vs B' for every field both rows have, whose values differ."""
    out = []
    for name in fields:
        if name in a and name in b:
            left, right = _text(a[name]), _text(b[name])
            if left != right:
                out.append(f"{name}: {left or 'not stated'} vs {right or 'not stated'}")
    return out


def _provenance(rows: pd.DataFrame, override: Mapping[str, Any] | None) -> dict[str, set[str]]:
    """Provenance values of one group: field -> set of distinct texts (several = pooled machines)."""
    profile: dict[str, set[str]] = {}
    for name in analysis.PROVENANCE_COLUMNS:
        if override is not None and name in override:
            profile[name] = {_text(override[name])} - {""}
        elif name in rows:
            profile[name] = {_text(v) for v in rows[name].dropna()} - {""}
    return {name: values for name, values in profile.items() if values}


def _profile_text(profile: Mapping[str, set[str]]) -> str:
    return SEPARATOR.join(
        f"{name}={'|'.join(sorted(values))}"
        for name, values in profile.items()
        if name in MEASURED_HARDWARE or name in MEASURED_OTHER_FACTORS
    )


def _confounding(
    a: Mapping[str, set[str]], b: Mapping[str, set[str]], group: str
) -> tuple[bool | None, list[str], str]:
    hardware_diffs, other_diffs, unknown = [], [], []
    for name in MEASURED_HARDWARE:
        if name in a and name in b:
            if a[name] != b[name]:
                hardware_diffs.append(f"{name}: {'|'.join(sorted(a[name]))} vs {'|'.join(sorted(b[name]))}")
        else:
            unknown.append(name)
    for name in MEASURED_OTHER_FACTORS:
        if name != group and name in a and name in b and a[name] != b[name]:
            other_diffs.append(f"{name}: {'|'.join(sorted(a[name]))} vs {'|'.join(sorted(b[name]))}")
    pooled = sorted(
        {
            name
            for profile in (a, b)
            for name, values in profile.items()
            if name in MEASURED_HARDWARE and len(values) > 1
        }
    )
    confounded: bool | None
    notes = []
    if hardware_diffs:
        confounded = True
        notes.append(
            f"different hardware ({FACTOR_SEPARATOR.join(hardware_diffs)}): the difference mixes the "
            f"{group} with the machine and is not an effect of the {group} alone"
        )
    elif unknown:
        confounded = None
        notes.append(f"hardware unknown ({', '.join(unknown)} not recorded for both groups): confounding not checked")
    else:
        confounded = False
        notes.append("same recorded hardware")
    if other_diffs:
        notes.append(f"also differing: {FACTOR_SEPARATOR.join(other_diffs)}")
    if pooled:
        notes.append(f"a group pools trials from several machines ({', '.join(pooled)} vary within it)")
    if group == "campaign":
        notes.append("campaigns also differ in when they ran and in anything not recorded")
    return confounded, hardware_diffs + other_diffs, ". ".join(notes)
