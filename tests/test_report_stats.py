"""archbench.studies.statistics: the statistics, cross-OS, rules and environment sections of the report.

Besides the shipped fixture campaigns (two trials per configuration at most), a synthetic raw root
holds campaigns with enough trials for every path: `stats-here` (six trials per configuration, a
far-out trial, adaptive repetition on, a pool-size sweep, both dispatch modes and nginx),
`reference` (the same configurations on another machine) and `imported-ubuntu` (another OS,
brought in by `make import`, so it has an import/ directory). Expected values come from scipy and
statsmodels where a statistic is checked, not from archbench.stats.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)
from statsmodels.stats.multitest import multipletests

from archbench import stats
from archbench.analyze import adaptive_state, analysis, crossos
from archbench.analyze import planned_comparisons as planned
from archbench.config.catalogue import MAIN_REFERENCE
from archbench.data.importer import IMPORT_DIR
from archbench.measure import provenance
from archbench.render import formats as stats_format
from archbench.render import latex
from archbench.render.prose import Prose
from archbench.report import build as report
from archbench.studies import crossos as crossos_study
from archbench.studies import environment, rules
from archbench.studies import statistics as report_stats
from archbench.studies.crossos import data as crossos_data
from archbench.studies.crossos import tables as crossos_tables
from archbench.studies.environment import tables as stats_environment
from archbench.studies.statistics import comparisons as stats_comparisons
from archbench.studies.statistics import diagnostics as stats_diagnostics
from archbench.studies.statistics import qq as stats_qq

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
PAPER = Path(__file__).resolve().parents[1] / "paper"
SECTIONS = PAPER / "templates"
# The files the statistics, cross-OS, environment and rules studies write.
GENERATED_FILES = (
    report_stats.DIAGNOSTICS_TABLE_FILE,
    report_stats.QQ_FIGURE_FILE,
    report_stats.COMPARISONS_TABLE_FILE,
    crossos_study.CROSSOS_SOURCE_TABLE_FILE,
    crossos_study.CROSSOS_MEASURED_TABLE_FILE,
    crossos_study.CROSSOS_REFERENCE_TABLE_FILE,
    environment.PROVENANCE_TABLE_FILE,
    environment.FACTORS_TABLE_FILE,
    rules.RULES_TABLE_FILE,
)

HERE = "stats-here"
PROSE = Prose()  # the repository's templates (paper/templates/)
# The statistics section's sentences (paper/templates/statistics/section.tex.j2): its fact -> (template, macro).
STATS_SENTENCES = {
    "determinism": ("diagnostics", "determinism"),
    "normality": ("diagnostics", "normality"),
    "qq": ("diagnostics", "qq_figure_sentence"),
    "rate_summary": ("diagnostics", "rate_summary"),
    "outliers": ("diagnostics", "outliers"),
    "adaptive": ("diagnostics", "adaptive"),
    "half_width": ("diagnostics", "half_width"),
    "mean_median": ("diagnostics", "mean_median"),
    "families": ("comparisons", "families"),
    "speedup": ("comparisons", "speedup"),
    "abstract": ("comparisons", "abstract"),  # the abstract's sentence (studies.statistics.abstract)
}
IMPORTED = "imported-ubuntu"
POOL = [synthetic.config("thread_pool", t, 100, dispatch="request") for t in (1, 2, 4)]
POOL_CONNECTION = synthetic.config("thread_pool", 2, 100, dispatch="connection")
EPOLL = synthetic.config("epoll", None, 100, trigger="level")
NGINX = synthetic.config("nginx", 1, 100)
MEANS = {  # requests/s around which each configuration's trials scatter (sd 1 %)
    synthetic.config_id(POOL[0]): 10_000.0,
    synthetic.config_id(POOL[1]): 18_000.0,
    synthetic.config_id(POOL[2]): 18_200.0,
    synthetic.config_id(POOL_CONNECTION): 6_000.0,
    synthetic.config_id(EPOLL): 30_000.0,
    synthetic.config_id(NGINX): 29_000.0,
}
OUTLIER_TRIAL = f"{synthetic.config_id(EPOLL)}-r06"


def without_break_hints(latex: str) -> str:
    """Generated identifiers may break after their separators (latex.escape_identifier)."""
    return latex.replace(r"\allowbreak{}", "")


def host_provenance(host: str, os_name: str, cpu: str) -> dict:
    return {
        "git_commit": "0123456789abcdef0123456789abcdef01234567",
        "git_dirty": False,
        "compiler": "gcc 12.2.0",
        "c_flags": "-O2 -Wall",
        "build_type": "Release",
        "kernel": "6.1.0",
        "os": os_name,
        "os_family": "Linux",
        "hostname": host,
        "cpu_model": cpu,
        "cpu_count": 4,
        "cpu_affinity": [0, 1, 2, 3],
        "memory_bytes": 8 * 2**30,
        "open_files_limit": [20000, 20000],
        "somaxconn": 4096,
        "python": "3.11.7",
        "python_packages": {"numpy": "2.2.6", "scipy": "1.15.3"},
        "tools": {"wrk": "wrk 4.1.0 [epoll]", "nginx": "nginx version: nginx/1.22.1", "taskset": "taskset 2.38"},
    }


def write_stats_campaign(
    root: Path,
    name: str,
    prov: dict,
    *,
    scale: float = 1.0,
    trials: int = 6,
    seed: int = 1,
    outlier: bool = False,
    ci_target: float | None = 5.0,
    configs=None,
) -> Path:
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(seed)
    # Normal scores (Blom) in a seeded order: trials that look normal however few, so Welch's t is chosen.
    scores = scipy_stats.norm.ppf((np.arange(1, trials + 1) - 0.375) / (trials + 0.25))
    writer = synthetic.CampaignWriter(root, name)
    for cfg in configs or [*POOL, POOL_CONNECTION, EPOLL, NGINX]:
        mean = MEANS[synthetic.config_id(cfg)] * scale
        for rep, score in enumerate(rng.permutation(scores), start=1):
            rate = float(round(mean * (1 + 0.01 * score), 2))
            if outlier and cfg is EPOLL and rep == trials:
                rate = round(mean * 1.5, 2)  # far out: the fences are ~1 % wide
            served = None if cfg["architecture"] == "nginx" else cfg["connections"]
            stats_ = synthetic.nginx_stats(1) if cfg["architecture"] == "nginx" else None
            writer.trial(
                cfg,
                rep,
                wrk=synthetic.wrk_report(rate, int(rate), cfg["connections"]),
                served=served,
                server_stats=stats_,
                cpu_source="stats" if stats_ else None,
                load_utilisation=0.5,
            )
    path = writer.finish()
    for record_path in path.glob("*.json"):
        if record_path.name == "campaign.json":
            continue
        record = json.loads(record_path.read_text())
        record["provenance"] = prov
        record["open_files"] = {"soft": 20000, "hard": 20000, "needed": 356}
        record_path.write_text(json.dumps(record))
    meta = json.loads((path / "campaign.json").read_text())
    meta["provenance"] = prov
    meta["profile"] = "test"
    meta["parameters"] = {
        "duration_s": 1,
        "trials": trials,
        "warmup": False,
        "server_cpus": "0",
        "load_cpus": "1",
        "servers": [
            {"architecture": "thread_pool", "threads": [1, 2, 4]},
            {"architecture": "thread_pool", "dispatch": ["connection"], "threads": [2]},
            "epoll",
            "nginx",
        ],
        "ci_target": ci_target,
        "max_trials": 8 if ci_target else None,
    }
    (path / "campaign.json").write_text(json.dumps(meta))
    return path


@pytest.fixture(scope="module")
def stats_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("stats-raw")
    write_stats_campaign(root, HERE, host_provenance("host-a", "Debian GNU/Linux 12 (bookworm)", "CPU A"), outlier=True)
    write_stats_campaign(
        root,
        MAIN_REFERENCE,
        host_provenance("host-b", "Debian GNU/Linux 12 (bookworm)", "CPU B"),
        scale=1.1,
        trials=5,
        seed=2,
        ci_target=None,
    )
    imported = write_stats_campaign(
        root,
        IMPORTED,
        host_provenance("host-c", "Ubuntu 24.04 LTS", "CPU C"),
        scale=0.9,
        trials=5,
        seed=3,
        ci_target=None,
        configs=[POOL[0], EPOLL],
    )
    (imported / IMPORT_DIR).mkdir()
    return root


def build(campaign: str, raw_root: Path, tmp: Path, resamples: int | None = None) -> tuple[report.ReportOutputs, Path]:
    paper = tmp / "paper"
    outputs = report.build_report(
        campaign,
        paths=report.ReportPaths(
            raw_root=raw_root,
            processed_dir=tmp / "processed",
            generated_dir=paper / "generated",
            figures_dir=paper / "figures",
        ),
    )
    return outputs, paper


def defined_macros(paper: Path) -> dict[str, str]:
    definitions = {}
    for line in (paper / "generated" / report.MACROS_FILE).read_text().splitlines():
        match = re.match(r"\\newcommand\{\\(ab[A-Za-z]+)\}\{(.*)\}( % .*)?$", line)
        if match:
            definitions["\\" + match[1]] = match[2]
    return definitions


def section_source(name: str) -> str:
    """A study's section as written: its template (section.tex.j2) or its fixed section.tex."""
    return "".join(path.read_text() for path in (SECTIONS / name).glob("section.tex*"))


def section_text(paper: Path, name: str) -> str:
    """A study's section as the report reads it: rendered from its facts into generated/, or its fixed section.tex."""
    rendered = paper / "generated" / report.section_file(name)
    return rendered.read_text() if rendered.is_file() else (SECTIONS / name / "section.tex").read_text()


def section_macros(paper: Path) -> set[str]:
    used: set[str] = set()
    for name in ("statistics", "crossos", "rules", "environment"):
        used |= latex.macros_used(section_text(paper, name))
    return used


def stats_sentences(outputs: report.ReportOutputs) -> dict[str, str]:
    """The statistics section's sentences, rendered from the facts the study gave its section."""
    facts = outputs.studies["statistics"].section
    return {
        key: PROSE.sentence(f"statistics/{template}", macro, facts[key])
        for key, (template, macro) in STATS_SENTENCES.items()
    }


def crossos_sentence(outputs: report.ReportOutputs, macro: str, fact: str, part: str | None = None) -> str:
    """One sentence of the cross-OS section, rendered from the facts the build gave its template."""
    facts = outputs.studies["crossos"].section[fact]
    return PROSE.sentence("crossos/sentences", macro, facts if part is None else facts[part])


@pytest.fixture(scope="module")
def here(stats_root, shared_reports) -> tuple[report.ReportOutputs, Path, dict[str, str]]:
    outputs, paper = shared_reports.build(HERE, stats_root)
    return outputs, paper, defined_macros(paper)


@pytest.fixture(scope="module")
def full(shared_reports) -> tuple[report.ReportOutputs, Path, dict[str, str]]:
    outputs, paper = shared_reports.build("fixture-full", FIXTURES)
    return outputs, paper, defined_macros(paper)


@pytest.fixture(scope="module")
def minimal(shared_reports) -> tuple[report.ReportOutputs, Path, dict[str, str]]:
    outputs, paper = shared_reports.build("fixture-minimal", FIXTURES)
    return outputs, paper, defined_macros(paper)


# =========================================================================== formatting


def test_number_and_interval_formats():
    assert stats_format.fmt_rate(-1234.4) == "$-$1,234"
    assert stats_format.fmt_bracket(1000, 2500.6) == "[1,000; 2,501]"
    assert stats_format.fmt_bracket(-5, 3) == "[$-$5; 3]"
    assert stats_format.fmt_bracket(float("nan"), 3) == latex.MISSING
    assert stats_format.fmt_bracket(1.0, math.inf) == latex.MISSING
    assert stats_format.fmt_p(0.0004) == "$<$0.001" and stats_format.fmt_p(0.0123) == "0.012"
    assert stats_format.fmt_p(0.5) == "0.50" and stats_format.fmt_p(float("nan")) == latex.MISSING
    assert stats_format.p_equation(0.0004) == r"$p_{\mathrm{Holm}}<0.001$"
    assert stats_format.p_equation(0.25) == r"$p_{\mathrm{Holm}}=0.25$"
    assert stats_format.p_cell(0.01, True) == r"\textbf{0.010}" and stats_format.p_cell(0.01, False) == "0.010"
    assert stats_comparisons.pair_text("pool (request, queue), D=16: N=2") == r"pool (request, queue), $D=16$: $N=2$"
    # An interval on the second line must not be read as \\'s optional skip.
    assert stats_format.two_lines("1", "[2; 3]") == r"\begin{tabular}[t]{@{}r@{}}1\\{}[2; 3]\end{tabular}"
    assert stats_format.two_lines("1", latex.MISSING) == "1"


def test_long_tables_let_latex_size_their_first_column(here):
    """Each long table is an xltabular of the text width whose first column takes what the others leave, at a
    font size fixed per table: no width is estimated in Python, so no column is given in centimetres."""
    _, paper, _ = here
    generated = paper / "generated"
    sizes = {
        report_stats.DIAGNOSTICS_TABLE_FILE: r"\scriptsize",
        report_stats.COMPARISONS_TABLE_FILE: r"\footnotesize",
        crossos_study.CROSSOS_MEASURED_TABLE_FILE: r"\tiny",
        crossos_study.CROSSOS_REFERENCE_TABLE_FILE: r"\tiny",
    }
    for name, size in sizes.items():
        text = (generated / name).read_text()
        assert text.startswith("{" + size + r"\setlength{\tabcolsep}"), name
        assert r"\begin{xltabular}{\linewidth}{" + latex.FILL_COLUMN in text, name
        assert text.count(r"\end{xltabular}") == 1 and not re.search(r"p\{[0-9.]+cm\}", text), name
    for name in (environment.PROVENANCE_TABLE_FILE, environment.FACTORS_TABLE_FILE, rules.RULES_TABLE_FILE):
        text = (generated / name).read_text()
        # The name (and rule) columns keep their width; the value column fills the rest of the line.
        assert r"\begin{xltabular}{\linewidth}{" in text and latex.FILL_COLUMN + "}" in text, name


def test_a_wide_table_keeps_its_numbers_and_notes_under_the_last_rule():
    """Million-scale rates with intervals in nine columns (pipelined trials of two hosts): the table is rendered at
    its fixed \\tiny size with every cell as given, and its notes follow the table in the same size group."""
    row = {
        "variant": "epoll",
        "connections": 100,
        "pipeline": 16,
        "a": "host-a",
        "b": "host-b",
        "n_a": 4,
        "n_b": 4,
        "mean_a": 1_554_102.0,
        "mean_ci_low_a": 1_391_607.0,
        "mean_ci_high_a": 1_716_598.0,
        "mean_b": 1_578_501.0,
        "mean_ci_low_b": 1_400_000.0,
        "mean_ci_high_b": 1_700_000.0,
        "test": "welch_t",
        "p_adjusted": 1.0,
        "reject": False,
        "difference": -24_399.0,
        "difference_ci_low": -206_880.0,
        "difference_ci_high": 158_083.0,
        "effect_size_name": "hedges_g",
        "effect_size": -0.2,
        "effect_size_ci_low": -1.4,
        "effect_size_ci_high": 1.02,
        "confounded_with_hardware": False,
        "config_id": "epoll-c100-p16",
    }
    text = crossos_tables.measured_table(pd.DataFrame([row]), "tab:wide", "A caption.", "unused", PROSE)
    assert text.startswith(r"{\tiny\setlength{\tabcolsep}{2.5pt}")
    assert r"\begin{xltabular}{\linewidth}{" + latex.FILL_COLUMN + "rrrlrrrc}" in text
    assert stats_format.two_lines("1,554,102", "[1,391,607; 1,716,598]") in text
    assert r"$-$24,399" in text and r"[$-$206,880; 158,083]" in text
    assert r"epoll, 100 conn., $D=16$ & 4/4" in text
    assert text.index(r"\end{xltabular}") < text.index(r"{\raggedright Test: Welch's") < text.rindex("}")


def test_median_coverage_sentence_states_exact_coverage():
    summary = pd.DataFrame({"n": [2, 5, 10, 1]})
    text = PROSE.sentence(
        stats_diagnostics.TEMPLATE, "median_coverage", stats_diagnostics.median_coverage_facts(summary)
    )
    assert "with $n=2$, $[\\min,\\max]$ covers the median with probability 50.0" in text
    assert "with $n=5$, $[\\min,\\max]$ covers the median with probability 93.8\\,\\%, short of 95" in text
    assert "with $n=10$, $[x_{(2)}, x_{(9)}]$ covers the median with probability 97.9" in text
    assert "n=1$" not in text
    none = stats_diagnostics.median_coverage_facts(pd.DataFrame({"n": [1]}))
    assert "no interval of a median" in PROSE.sentence(stats_diagnostics.TEMPLATE, "median_coverage", none)


# =========================================================================== summary.csv and trials.csv additions


def test_summary_has_the_distribution_columns(here):
    outputs, _, _ = here
    summary = pd.read_csv(outputs.processed.summary_csv)
    row = summary[summary["config_id"] == synthetic.config_id(POOL[0])].iloc[0]
    trials = outputs.trials
    values = trials[(trials["config_id"] == row["config_id"]) & (trials["status"] == "ok")]["requests_per_sec"]
    from scipy import stats as scipy_stats

    w, p = scipy_stats.shapiro(values)
    assert row["shapiro_w"] == pytest.approx(w) and row["shapiro_p"] == pytest.approx(p)
    assert row["harmonic_mean"] == pytest.approx(scipy_stats.hmean(values))
    assert row["total_rate"] == pytest.approx(values.astype(int).sum() / len(values))  # 1 s per synthetic trial
    ordered = np.sort(values)  # n = 6: [min, max], coverage 1 - 2/64
    assert (row["median_ci95_low"], row["median_ci95_high"]) == (ordered[0], ordered[-1])
    assert row["median_ci_coverage"] == pytest.approx(1 - 2 / 64)
    # The half-width of the rate interval (stats.rate_ci: t on the logs, exponentiated) over the mean.
    logs = np.log(values.to_numpy(dtype=float))
    half_log = scipy_stats.t.ppf(0.975, 5) * logs.std(ddof=1) / math.sqrt(6)
    half = (math.exp(logs.mean() + half_log) - math.exp(logs.mean() - half_log)) / 2
    assert row["ci95_half_width_pct"] == pytest.approx(100 * half / values.mean())
    assert row["ci95_method"] == "log-t"
    epoll = summary[summary["config_id"] == synthetic.config_id(EPOLL)].iloc[0]
    assert epoll["n_outliers"] == 1 and epoll["n_far_out"] == 1


def test_trials_csv_has_the_provenance_columns(here, full):
    outputs, _, _ = here
    trials = pd.read_csv(outputs.processed.trials_csv)
    for column in analysis.PROVENANCE_COLUMNS:
        assert column in trials.columns, column
    assert set(trials["hostname"]) == {"host-a"} and set(trials["cpu_model"]) == {"CPU A"}
    assert set(full[0].trials["hostname"]) == {"vm"}


def test_python_package_versions_are_recorded():
    versions = provenance.python_packages()
    assert set(versions) == set(provenance.PYTHON_PACKAGES)
    assert versions["numpy"] == np.__version__
    assert provenance.python_packages(("no-such-package-archbench",)) == {"no-such-package-archbench": None}


# =========================================================================== comparisons within a campaign


def test_comparison_families_and_pairs(here):
    outputs, _, _ = here
    pairs = planned.comparison_pairs(outputs.summary)
    by_family = {}
    for pair in pairs:
        by_family.setdefault(pair.family, []).append(pair)
    assert [(p.a_name, p.b_name) for p in by_family["pool"]] == [("N=2", "N=1"), ("N=4", "N=2")]
    assert [(p.a, p.b) for p in by_family["dispatch"]] == [
        (synthetic.config_id(POOL[1]), synthetic.config_id(POOL_CONNECTION))
    ]
    nginx = by_family["nginx"]
    assert all(p.b == synthetic.config_id(NGINX) for p in nginx)
    assert {p.a for p in nginx} == {
        synthetic.config_id(POOL[2]),
        synthetic.config_id(POOL_CONNECTION),
        synthetic.config_id(EPOLL),
    }


def test_comparisons_are_holm_corrected_within_each_family(here):
    outputs, paper, macros = here
    frame = pd.read_csv(outputs.processed.trials_csv.parent / stats_comparisons.COMPARISONS_CSV)
    assert list(dict.fromkeys(frame["family"])) == ["pool", "dispatch", "nginx"]
    for _, rows in frame.groupby("family"):
        expected = multipletests(rows["p_value"], method="holm")[1]
        assert rows["p_holm"].tolist() == pytest.approx(list(expected))
        assert rows["p_bh"].tolist() == pytest.approx(list(multipletests(rows["p_value"], method="fdr_bh")[1]))
    # Six rounds per configuration: every comparison gets the pre-declared paired t test, the far-out epoll round
    # included (it fails Shapiro-Wilk on the log ratios, a diagnostic that chooses nothing).
    assert set(frame["test"]) == {stats.PAIRED_TEST} and set(frame["n_rounds"]) == {6}
    pool = frame[frame["family"] == "pool"].iloc[0]
    epoll = frame[(frame["family"] == "nginx") & (frame["config_a"] == synthetic.config_id(EPOLL))].iloc[0]
    assert epoll["shapiro_p_log"] < 0.05 and epoll["verdict"] in ("significant", "not significant")
    assert pool["mdd_alpha"] == pytest.approx(0.05 / pool["family_size"]) and pool["mdd_pct"] > 0
    # N = 1 -> 2 (10,000 -> 18,000 r/s) is significant; N = 2 -> 4 (18,000 -> 18,200, 1 % noise) need not be.
    assert bool(pool["reject_holm"]) and pool["ratio"] == pytest.approx(1.8, rel=0.02)
    tex = (paper / "generated" / report_stats.COMPARISONS_TABLE_FILE).read_text()
    assert r"\label{tab:comparisons}" in tex and "xltabular" in tex  # a long table breaks across pages
    assert r"pool (request, queue), 100 conn.: $N=2$ vs $N=1$" in tex
    assert "pre-declared test of Section" in tex and "M--W" not in tex and r"\textbf{" in tex
    assert (
        "Table~\\ref{tab:comparisons} holds 6 planned comparisons in 3 families" in stats_sentences(outputs)["families"]
    )
    assert "Of 6 planned comparisons" in stats_sentences(outputs)["abstract"]


def test_speedup_is_against_the_base_case_with_its_absolute_rate(here):
    outputs, _, _ = here
    text = stats_sentences(outputs)["speedup"]
    base = outputs.summary[outputs.summary["config_id"] == synthetic.config_id(POOL[0])].iloc[0]
    assert f"whose absolute rate is {base['mean']:,.0f}\\,r/s" in text
    assert "bootstrap interval of the ratio of means [1." in text
    none = stats_comparisons.speedup_facts(pd.DataFrame(), pd.DataFrame(), 1, 99)
    assert "no thread-pool sweep" in PROSE.sentence(stats_comparisons.TEMPLATE, "speedup", none)


def test_comparisons_with_two_rounds_are_not_run_and_say_what_they_need(full):
    outputs, _, _ = full
    frame = pd.read_csv(outputs.processed.trials_csv.parent / stats_comparisons.COMPARISONS_CSV)
    not_run = frame[frame["test"] == stats.NOT_RUN]
    assert not not_run.empty and (not_run["verdict"] == "not run").all()
    assert (not_run["n_rounds"] < stats.MIN_ROUNDS).all() and not_run["p_value"].isna().all()
    text = stats_sentences(outputs)["families"]
    assert "not run: with fewer than 3 usable" in text and "rank test" not in text


# =========================================================================== diagnostics, Q-Q, outliers, adaptive


def test_diagnostics_table_and_sentences(here):
    outputs, paper, macros = here
    sentences = stats_sentences(outputs)
    tex = (paper / "generated" / report_stats.DIAGNOSTICS_TABLE_FILE).read_text()
    assert r"\label{tab:diagnostics}" in tex and "xltabular" in tex  # a long table breaks across pages
    assert tex.count(r" \\") >= len(outputs.summary)
    assert "Target" in tex and " & met " in tex  # adaptive repetition was on
    assert "1 trial in 1 configuration lies beyond the fences (1 far out)" in sentences["outliers"]
    assert OUTLIER_TRIAL.replace("_", r"\_") in without_break_hints(sentences["outliers"])
    outliers_csv = pd.read_csv(outputs.processed.trials_csv.parent / stats_diagnostics.OUTLIERS_CSV)
    assert outliers_csv["trial_id"].tolist() == [OUTLIER_TRIAL]
    assert "Shapiro--Wilk at $\\alpha=0.05$" in sentences["normality"]
    assert "Figure~\\ref{fig:qq}" in sentences["qq"]
    assert "differs from the total over total" in sentences["rate_summary"]
    assert "coefficient of variation" in sentences["determinism"]
    assert "median of" in sentences["half_width"]
    assert "mean and median throughput differ by at most" in sentences["mean_median"]
    assert macros[r"\abBootstrapSeed"] == str(stats.DEFAULT_SEED)
    assert macros[r"\abBootstrapResamples"] == f"{stats.DEFAULT_RESAMPLES:,}"


def test_qq_figure_of_the_planned_comparisons_log_ratios(here, tmp_path):
    outputs, paper, _ = here
    tex = (paper / "generated" / report_stats.QQ_FIGURE_FILE).read_text()
    assert r"\label{fig:qq}" in tex and "figures/" + stats_qq.QQ_FIGURE in tex and "log ratios" in tex
    pdf = paper / "figures" / stats_qq.QQ_FIGURE
    assert pdf.read_bytes().startswith(b"%PDF")
    chosen, total = stats_qq.qq_comparisons(outputs.summary, outputs.trials)
    frame = pd.read_csv(outputs.processed.trials_csv.parent / stats_comparisons.COMPARISONS_CSV)
    assert total == len(chosen) == len(frame)  # six comparisons, all paired over six rounds
    # In the comparison table's order, each with the log ratios its test used and their Shapiro-Wilk.
    assert [pair.a for pair, _ in chosen] == frame["config_a"].tolist()
    for (_, result), (_, row) in zip(chosen, frame.iterrows(), strict=True):
        assert len(result.log_ratios) == row["n_rounds"]
        assert result.normality.p_value == pytest.approx(row["shapiro_p_log"])
    figure = stats_qq.qq_figure(outputs.summary, outputs.trials)
    assert sum(ax.get_visible() for ax in figure.axes) == len(chosen)
    again = tmp_path / "again.pdf"
    from archbench.studies.pool import figures

    figures.save_figure(figure, again)
    assert again.read_bytes() == pdf.read_bytes()  # deterministic


def test_no_qq_figure_without_three_trials(full):
    outputs, paper, _ = full
    sentences = stats_sentences(outputs)
    assert "includegraphics" not in (paper / "generated" / report_stats.QQ_FIGURE_FILE).read_text()
    assert sentences["qq"] == ""
    assert not (paper / "figures" / stats_qq.QQ_FIGURE).exists()
    assert "No configuration of this campaign has three or more successful trials" in sentences["normality"]


def test_adaptive_outcome_recorded_or_derived(here, stats_root, tmp_path):
    outputs, _, _ = here
    sentences = stats_sentences(outputs)
    derived = adaptive_state.adaptive_outcome(
        stats_root / HERE,
        outputs.campaign_meta if hasattr(outputs, "campaign_meta") else outputs.processed.campaign.meta,
        outputs.trials,
    )
    assert derived.enabled and derived.source == "derived" and derived.target_pct == 5.0
    assert all(state["met"] for state in derived.configs.values() if state["n"] >= 6 and state["half_width_pct"] <= 5.0)
    assert "Adaptive repetition was on" in sentences["adaptive"]
    assert "as derived from the trial records" in sentences["adaptive"]
    # A recorded summary wins.
    copy = tmp_path / HERE
    shutil.copytree(stats_root / HERE, copy)
    (copy / "adaptive").mkdir()
    recorded = {
        "schema": 1,
        "campaign": HERE,
        "ci_target_pct": 5.0,
        "max_trials": 8,
        "level": 0.95,
        "method": "student-t",
        "configs": {
            synthetic.config_id(EPOLL): {
                "trials": 8,
                "n": 8,
                "mean": 1.0,
                "half_width_pct": 9.0,
                "met": False,
                "stopped_by": "max_trials",
            }
        },
        "written_at": "2026-11-21T10:00:00+00:00",
    }
    (copy / "adaptive" / "adaptive-20261121T100000000000Z.json").write_text(json.dumps(recorded))
    state = adaptive_state.adaptive_outcome(copy, outputs.processed.campaign.meta, outputs.trials)
    assert state.source == "recorded" and list(state.configs) == [synthetic.config_id(EPOLL)]
    facts = stats_diagnostics.adaptive_facts(state, analysis.Labeller(outputs.summary), outputs.summary, False)
    sentence = PROSE.sentence(stats_diagnostics.TEMPLATE, "adaptive", facts)
    assert "1 stopped at the maximum without meeting it (epoll (level), 100 conn.)" in sentence
    off = adaptive_state.adaptive_outcome(None, {"parameters": {}}, outputs.trials)
    assert not off.enabled
    facts = stats_diagnostics.adaptive_facts(off, analysis.Labeller(outputs.summary), outputs.summary, False)
    assert "Adaptive repetition was off" in PROSE.sentence(stats_diagnostics.TEMPLATE, "adaptive", facts)


# =========================================================================== cross-OS, hosts, reference


def test_source000_cross_os_table_in_a_fixture_build(minimal):
    """The smoke/fixture path exercises the cross-OS comparison with the shipped external data."""
    outputs, paper, _ = minimal
    tex = (paper / "generated" / crossos_study.CROSSOS_SOURCE_TABLE_FILE).read_text()
    assert r"\label{tab:crossos-source000}" in tex
    for pair in ("Windows vs macOS", "Windows vs Linux", "macOS vs Linux", "separate-client vs loopback"):
        assert pair in tex, pair
    expected = crossos.source000_cross_os()
    assert tex.count("yes") == int(expected["confounded_with_hardware"].sum()) == 4
    text = crossos_sentence(outputs, "confounding", "source", "confounding")
    assert "All 4 comparisons are confounded with the hardware" in text and "compiler" in text
    holm = int(expected["reject"].sum())
    assert f"{holm} differences are significant" in crossos_sentence(outputs, "source", "source")
    assert "The server hardware is the same" in crossos_sentence(outputs, "setup", "source", "setup")
    assert "threads per logical processor" in crossos_sentence(outputs, "share", "source", "share")
    crossos_csv = pd.read_csv(paper.parent / "processed" / crossos_study.CROSSOS_CSV)
    assert {"source000_cross_os", "source000_setups", "source000_cross_os_cpu_share"} <= set(crossos_csv["table"])


def test_missing_source000_data_degrades_to_a_sentence(tmp_path):
    state = crossos_data.CrossOs()
    crossos_data.source000_frames(state, tmp_path / "absent.csv")
    assert state.source_error and "could not be read" in crossos_tables.source000_table(state, PROSE)
    facts = crossos_tables.source000_facts(state)
    assert "could not be read" in PROSE.sentence("crossos/sentences", "source", facts)
    assert facts["confounding"] is facts["setup"] is facts["share"] is None  # their sentences render empty


def test_cross_host_and_reference_comparisons(here):
    outputs, paper, _ = here
    # The catalogue's crossos entry reads the shipped reference and the imported campaign beside the report's.
    assert outputs.campaigns.choice("crossos").read == ("reference", IMPORTED)
    assert crossos_data.compared_campaigns(outputs.campaigns.choice("crossos").read, HERE) == [IMPORTED, "reference"]
    measured = (paper / "generated" / crossos_study.CROSSOS_MEASURED_TABLE_FILE).read_text()
    assert r"\label{tab:crossos-measured}" in measured
    assert "a = Debian GNU/Linux 12 (bookworm), b = Ubuntu 24.04 LTS" in measured  # one pair: a header row
    text = crossos_sentence(outputs, "cross_host", "cross_host")
    assert "span 2 operating systems" in text and "2 configurations" in text and "recorded hardware differs" in text
    reference = (paper / "generated" / crossos_study.CROSSOS_REFERENCE_TABLE_FILE).read_text()
    assert r"\label{tab:crossos-reference}" in reference and "a = stats-here, b = reference" in reference
    assert "6 configurations both measured" in crossos_sentence(outputs, "reference", "reference")
    frame = pd.read_csv(outputs.processed.trials_csv.parent / crossos_study.CROSSOS_CSV)
    ref = frame[frame["table"] == "reference"]
    assert len(ref) == 6 and ref["confounded_with_hardware"].all()  # CPU A against CPU B
    assert ref["p_adjusted"].tolist() == pytest.approx(list(multipletests(ref["p_value"], method="holm")[1]))


def test_reference_campaign_itself_and_a_lone_campaign(stats_root, full, tmp_path):
    outputs, paper = build(MAIN_REFERENCE, stats_root, tmp_path)
    reference = crossos_sentence(outputs, "reference", "reference")
    assert "built from the reference campaign itself" in reference and "make import" in reference
    assert "includegraphics" not in (paper / "generated" / crossos_study.CROSSOS_REFERENCE_TABLE_FILE).read_text()
    full_outputs = full[0]
    assert "No reference campaign" in crossos_sentence(full_outputs, "reference", "reference")
    assert "ran on one host (vm)" in crossos_sentence(full_outputs, "cross_host", "cross_host")


# =========================================================================== environment appendix


def test_provenance_values_count_what_changed():
    records = [
        {"provenance": {"kernel": "6.1", "tools": {"wrk": "wrk 4.1"}}},
        {"provenance": {"kernel": "6.2", "tools": {"wrk": "wrk 4.1"}}},
    ]
    values = stats_environment.provenance_values({}, records)
    assert values["kernel"] == {'"6.1"': 1, '"6.2"': 1} and values["tools.wrk"] == {'"wrk 4.1"': 2}
    assert stats_environment._counted(values["kernel"]) == "6.1 (1 trial); 6.2 (1 trial)"
    assert stats_environment.provenance_values({"provenance": {"os": "x"}}, []) == {"os": {'"x"': 1}}


def test_environment_tables(here, full):
    outputs, paper, macros = here
    factors = (paper / "generated" / environment.FACTORS_TABLE_FILE).read_text()
    assert r"\label{tab:factors}" in factors
    assert "threads or workers $N$ & 1 (2), 2 (2), 4 (1), n/a (1)" in factors
    assert "thread-pool dispatch & connection (1), request (3), n/a (2)" in factors
    assert "protocol & http" in factors  # a record without proto is http (contracts.md)
    assert r"\texttt{ci\_target} & 5.0" in factors and r"thread\_pool:threads=1/2/4" in without_break_hints(factors)
    assert "measured trials per configuration & 6" in factors
    prov = (paper / "generated" / environment.PROVENANCE_TABLE_FILE).read_text()
    for expected in (
        "CPU A",
        "8.0\\,GiB",
        "nginx version: nginx/1.22.1",
        "numpy & 2.2.6",
        "4096",
        "at most 356 (connections + 256)",
        "0123456789abcdef0123456789abcdef01234567",
    ):
        assert expected in prov, expected
    assert "factors: architecture, thread-pool dispatch" in section_text(paper, "environment")
    full_prov = (full[1] / "generated" / environment.PROVENANCE_TABLE_FILE).read_text()
    assert "not recorded (the campaign predates their recording)" in full_prov


# =========================================================================== the rules


def rules_of(paper: Path) -> list[list[str]]:
    tex = (paper / "generated" / rules.RULES_TABLE_FILE).read_text()
    return [line.split(" & ") for line in tex.splitlines() if re.match(r"^\d+ & ", line)]


def test_rules_table_has_twelve_rows_with_statuses(here, full, minimal):
    for _, paper, _macros in (here, full, minimal):
        rows = rules_of(paper)
        assert [int(r[0]) for r in rows] == list(range(1, 13))
        assert all(r[2] in ("met", "partly", "n/a") for r in rows)
        assert "of the twelve rules are met" in section_text(paper, "rules")
    here_rows = {int(r[0]): r for r in rules_of(here[1])}
    assert here_rows[1][2] == "met" and r"\ref{tab:threads-thread-pool-request-queue}" in here_rows[1][3]
    assert here_rows[6][2] == "partly"  # the far-out epoll round: its log ratios fail Shapiro-Wilk
    assert here_rows[7][2] == "met" and r"\ref{tab:comparisons}" in here_rows[7][3]
    assert "fig:qq" in here_rows[6][3] and here_rows[12][2] == "met"
    assert here_rows[2][2] == "partly" and "2 of the machine's 4 logical CPUs" in here_rows[2][3]
    full_rows = {int(r[0]): r for r in rules_of(full[1])}
    assert full_rows[2][2] == "met" and "all 2 logical CPUs" in full_rows[2][3]  # server on 0, wrk on 1
    minimal_rows = {int(r[0]): r for r in rules_of(minimal[1])}
    assert minimal_rows[1][2] == "n/a" and minimal_rows[5][2] == "partly" and minimal_rows[7][2] == "partly"


def test_rules_cite_only_labels_that_exist(here, full, minimal):
    """Every \\ref in the generated files and the sections resolves to a label of this build."""
    static = set(re.findall(r"\\label\{([^}]+)\}", (PAPER / "report.tex").read_text()))
    for path in SECTIONS.glob("*/section.tex*"):
        static |= set(re.findall(r"\\label\{([^}]+)\}", path.read_text()))
    for _, paper, _macros in (here, full, minimal):
        files = list((paper / "generated").glob("*.tex"))
        labels = static | set(re.findall(r"\\label\{([^}]+)\}", "\n".join(p.read_text() for p in files)))
        # The sections these studies wrote, and every generated file but the other studies' rendered sections (a
        # section may \\ref a table its \\ifnum leaves out when the study has no data).
        own = {report.section_file(n) for n in ("statistics", "crossos", "rules", "environment")}
        cited = [p for p in files if not p.name.startswith("section-") or p.name in own]
        sections = "\n".join(section_source(n) for n in ("statistics", "crossos", "rules", "environment"))
        refs = set(re.findall(r"\\ref\{([^}]+)\}", "\n".join(p.read_text() for p in cited) + sections))
        assert refs - labels == set(), paper


# =========================================================================== macros and the PDF


@pytest.mark.parametrize("campaign", ["fixture-full", "fixture-minimal", "fixture-architectures", HERE])
def test_every_section_macro_is_defined(campaign, stats_root, shared_reports):
    raw = stats_root if campaign == HERE else FIXTURES
    _, paper = shared_reports.build(campaign, raw)
    definitions = defined_macros(paper)
    assert section_macros(paper) - set(definitions) == set()
    for name in GENERATED_FILES:
        text = (paper / "generated" / name).read_text()
        assert "nan" not in re.findall(r"[a-z]+", text.lower()), name
        assert latex.macros_used(text) - set(definitions) == set(), name
    for name, value in definitions.items():
        assert "nan" not in re.findall(r"[a-z]+", value.lower()), name


@pytest.mark.parametrize("campaign", ["fixture-full", "fixture-minimal", HERE])
def test_pdf_with_the_sections_builds(campaign, stats_root, shared_reports):
    raw = stats_root if campaign == HERE else FIXTURES
    pdf = shared_reports.pdf(campaign, raw)
    paper = pdf.parent
    assert pdf.read_bytes().startswith(b"%PDF")
    log = (paper / "report.log").read_text(errors="replace")
    assert "undefined" not in log.lower(), [line for line in log.splitlines() if "ndefined" in line]
    assert "Overfull \\hbox" not in log, [line for line in log.splitlines() if "Overfull" in line]
    aux = (paper / "report.aux").read_text(errors="replace")
    for label in (
        "sec:statistics",
        "sec:crossos",
        "sec:rules",
        "app:environment",
        "tab:rules",
        "tab:crossos-source000",
        "tab:provenance",
        "tab:factors",
    ):
        assert f"{{{label}}}" in aux, label
