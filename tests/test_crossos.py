"""archbench.analyze.crossos and archbench.analyze.outliers: source 000's published tables (data/external/)
and cross-OS / cross-host / cross-campaign comparisons of measured trials.

Expected values come from scipy (ttest_ind_from_stats, ttest_ind, mannwhitneyu) and
statsmodels (multipletests), not from archbench.stats, so the wiring is checked as well as
the numbers. tests/fixtures/crossos/trials_two_hosts.csv is a hand-made trials table (the
columns of data/processed/trials.csv plus per-trial provenance): two OSes on two machines,
warm-ups with an absurd rate, a failed trial, a far-out trial, a configuration measured on
one OS only.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from archbench.analyze import crossos, outliers

FIXTURES = Path(__file__).parent / "fixtures"
TWO_HOSTS = FIXTURES / "crossos" / "trials_two_hosts.csv"
# Source 000's published text (an excerpt; tests/fixtures/crossos/README.md cites the page).
SEED_000 = FIXTURES / "crossos" / "source000_excerpt.txt"
POOL = "thread_pool-request-queue-t1-c100-lt1-d5s"
EPOLL = "epoll-level-c100-lt1-d5s"
POLL = "poll-c100-lt1-d5s"
DEBIAN, UBUNTU = "Debian GNU/Linux 12 (bookworm)", "Ubuntu 24.04 LTS"


@pytest.fixture
def source000() -> pd.DataFrame:
    return crossos.load_source000()


@pytest.fixture
def two_hosts() -> pd.DataFrame:
    return pd.read_csv(TWO_HOSTS)


def documented(frame: pd.DataFrame) -> None:
    """Every output column is named in archbench/crossos.py's docstring (the schema the report reads)."""
    doc = crossos.__doc__ or ""
    missing = [
        c
        for c in frame.columns
        if not re.search(rf"(?<![\w]){re.escape(str(c))}(?![\w])", doc)
        and not re.search(rf"(?<![\w]){re.escape(str(c)[:-2])}_x(?![\w])", doc)
    ]
    assert not missing, f"columns not documented in archbench.analyze.crossos: {missing}"


# =========================================================================== the shipped CSV


def test_source000_csv_schema_and_trial_counts(source000):
    assert tuple(source000.columns) == crossos.SOURCE000_COLUMNS
    assert len(source000) == 12
    assert (source000["source"] == "000").all()
    separate = source000[source000["setup"] == "separate-client"]
    loopback = source000[source000["setup"] == "loopback"]
    assert set(separate["n"]) == {5} and set(loopback["n"]) == {10}  # "five trials", "ten trials"
    assert set(loopback["os"]) == {"Linux"} and list(loopback["threads"]) == [2, 4, 6, 8, 10, 12]
    assert (source000["thread_pool_size"] == source000["threads"] - 1).all()
    assert (source000["url"] == "https://github.com/WhaleConnect/whaleconnect/blob/main/docs/benchmarks.md").all()
    assert (source000["title"] == "WhaleConnect Benchmarks").all()
    assert set(separate["load_command"]) == {"wrk -t12 -c400 -d5s"} and set(loopback["load_command"]) == {""}
    hardware = source000.drop_duplicates("os").set_index("os")
    assert hardware.loc["macOS", "cpu"] == "Apple M1 Pro" and hardware.loc["macOS", "logical_processors"] == 8
    assert hardware.loc["Windows", "cpu"] == hardware.loc["Linux", "cpu"] == "AMD Ryzen 7 2700X"
    assert (hardware.loc["Windows", "clock_ghz"], hardware.loc["Linux", "clock_ghz"]) == (3.7, 2.2)
    assert hardware.loc["Windows", "logical_processors"] == hardware.loc["Linux", "logical_processors"] == 16


def test_source000_csv_matches_the_captured_text(source000):
    text = SEED_000.read_text(encoding="utf-8")
    parsed = crossos.parse_source000_tables(text)
    shipped = source000[["os", "setup", "threads", "mean_rps", "sd_rps", "n"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(shipped, parsed, check_dtype=False)
    for column in ("os_version", "machine", "cpu", "memory", "ethernet", "compiler"):
        for value in source000[column].unique():
            assert value in text, f"{column} {value!r} is not in the source"
    for row in source000.drop_duplicates("os").itertuples():
        assert f"{row.logical_processors} logical processors @ {row.clock_ghz} GHz" in text


def test_parse_source000_tables_reads_headings_setups_and_trial_counts():
    text = "\n".join(
        [
            "Results from running five trials on the server devices are shown below.",
            "Windows:",
            "Number of threads Sample mean (r/s) Sample standard deviation (r/s)",
            "4 100 10",
            "Linux:",
            "8 300 30",
            "Next, both the server and wrk were run on the Ubuntu 24.04 machine to assess it.",
            "The statistics below were calculated from running ten trials with each size:",
            "2 50 5",
        ]
    )
    parsed = crossos.parse_source000_tables(text)
    assert parsed.to_dict("records") == [
        {"os": "Windows", "setup": "separate-client", "threads": 4, "mean_rps": 100, "sd_rps": 10, "n": 5},
        {"os": "Linux", "setup": "separate-client", "threads": 8, "mean_rps": 300, "sd_rps": 30, "n": 5},
        {"os": "Linux", "setup": "loopback", "threads": 2, "mean_rps": 50, "sd_rps": 5, "n": 10},
    ]


# =========================================================================== (a) source 000 across OSes


def test_source000_cross_os_pairs_tests_and_holm(source000):
    result = crossos.source000_cross_os(source000)
    pairs = [(r.threads, r.a, r.b) for r in result.itertuples()]
    assert pairs == [(4, "Windows", "macOS"), (4, "Windows", "Linux"), (4, "macOS", "Linux"), (8, "Windows", "Linux")]
    assert set(result["setup"]) == {"separate-client"}  # the loopback table has one OS only
    table = source000.set_index(["setup", "os", "threads"])
    for row in result.itertuples():
        a = table.loc[("separate-client", row.a, row.threads)]
        b = table.loc[("separate-client", row.b, row.threads)]
        expected = scipy_stats.ttest_ind_from_stats(
            a.mean_rps, a.sd_rps, a.n, b.mean_rps, b.sd_rps, b.n, equal_var=False
        )
        assert row.statistic == pytest.approx(expected.statistic, rel=1e-12)
        assert row.p_value == pytest.approx(expected.pvalue, rel=1e-9)
        assert row.difference == a.mean_rps - b.mean_rps
        assert row.difference_ci_low < row.difference < row.difference_ci_high
        assert row.mean_ci_low_a < row.mean_a < row.mean_ci_high_a
        assert row.ratio == pytest.approx(a.mean_rps / b.mean_rps)
        assert row.ratio_ci_low < row.ratio < row.ratio_ci_high
        assert row.effect_size_name == "hedges_g" and row.effect_size_ci_method == "noncentral-t"
        assert row.test == "welch_t" and "normality cannot be checked" in row.test_reason
    reject, adjusted, _, _ = multipletests(result["p_value"], alpha=0.05, method="holm")
    assert list(result["p_adjusted"]) == pytest.approx(list(adjusted), rel=1e-12)
    assert list(result["reject"]) == list(reject)
    assert set(result["correction"]) == {"holm"} and set(result["family_size"]) == {4}
    # Windows vs macOS at 4 threads: 148,726 vs 146,494 r/s, no detectable difference
    assert (
        not result.iloc[0]["reject"] and result.iloc[0]["difference_ci_low"] < 0 < result.iloc[0]["difference_ci_high"]
    )
    documented(result)


def test_every_source000_os_pair_is_confounded_with_hardware(source000):
    result = crossos.source000_cross_os(source000)
    assert result["confounded_with_hardware"].all()
    by_pair = {(r.a, r.b, r.threads): r for r in result.itertuples()}
    windows_linux = by_pair[("Windows", "Linux", 4)]
    assert "clock_ghz: 3.7 vs 2.2" in windows_linux.confounded_with
    assert "compiler: Microsoft Visual C++ 19.40.33811 vs GCC 14.1" in windows_linux.confounded_with
    assert "cpu:" not in windows_linux.confounded_with  # same CPU model
    macos_linux = by_pair[("macOS", "Linux", 4)]
    assert "cpu: Apple M1 Pro vs AMD Ryzen 7 2700X" in macos_linux.confounded_with
    assert "logical_processors: 8 vs 16" in macos_linux.confounded_with
    for row in result.itertuples():
        assert "not an effect of the os alone" in row.note
        assert "os_version" not in row.confounded_with  # that is the compared factor itself


def test_source000_cross_os_matched_by_share_of_logical_processors(source000):
    result = crossos.source000_cross_os(source000, match="cpu_share")
    pairs = {(r.a, r.threads_a, r.b, r.threads_b) for r in result.itertuples()}
    assert pairs == {
        ("Windows", 4, "macOS", 2),
        ("Windows", 4, "Linux", 4),
        ("macOS", 2, "Linux", 4),
        ("Windows", 8, "macOS", 4),
        ("Windows", 8, "Linux", 8),
        ("macOS", 4, "Linux", 8),
    }
    assert set(result["threads_per_logical_processor"]) == {0.25, 0.5}
    assert set(result["family_size"]) == {6}
    with pytest.raises(ValueError, match="match"):
        crossos.source000_cross_os(source000, match="clock")


def test_source000_setups_compares_separate_client_and_loopback(source000):
    result = crossos.source000_setups(source000)
    assert [(r.threads, r.a, r.b) for r in result.itertuples()] == [
        (4, "separate-client", "loopback"),
        (8, "separate-client", "loopback"),
    ]
    assert list(result["n_a"]) == [5, 5] and list(result["n_b"]) == [10, 10]
    assert not result["confounded_with_hardware"].any()
    assert all("client:" in text for text in result["confounded_with"])
    # the source's own reading: separate client faster at 4 threads, loopback faster at 8
    assert list(result["difference"] > 0) == [True, False]
    assert result["reject"].all()


# =========================================================================== (b) measured trials


def test_measured_comparisons_by_os(two_hosts):
    assert crossos.choose_group(two_hosts) == "os"
    result = crossos.measured_comparisons(two_hosts, testing=crossos.Testing(seed=1, resamples=500))
    assert list(result["config_id"]) == [POOL, EPOLL]  # poll was measured on one OS only
    assert set(result["a"]) == {DEBIAN} and set(result["b"]) == {UBUNTU}
    measured = two_hosts[(~two_hosts["warmup"]) & (two_hosts["status"] == "ok")]

    def values(config, os_name):
        rows = measured[(measured["config_id"] == config) & (measured["os"] == os_name)]
        return rows["requests_per_sec"].to_numpy(dtype=float)

    pool = result.set_index("config_id").loc[POOL]
    assert pool["test"] == "welch_t" and pool["normal_a"] and pool["normal_b"]
    expected = scipy_stats.ttest_ind(values(POOL, DEBIAN), values(POOL, UBUNTU), equal_var=False)
    assert pool["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
    assert (pool["mean_a"], pool["mean_b"]) == (10_000.0, 12_000.0)  # the 999,999 r/s warm-ups are not in it
    assert pool["n_a"] == pool["n_b"] == 5

    epoll = result.set_index("config_id").loc[EPOLL]
    assert epoll["test"] == "mann_whitney_u" and not epoll["normal_a"]
    expected = scipy_stats.mannwhitneyu(values(EPOLL, DEBIAN), values(EPOLL, UBUNTU), method="exact")
    assert epoll["p_value"] == pytest.approx(expected.pvalue, rel=1e-12)
    assert epoll["n_a"] == 5  # the failed trial is counted nowhere in the statistics
    assert epoll["n_outliers_a"] == 1 and epoll["n_far_out_a"] == 1
    assert epoll["outlier_trials_a"] == f"{EPOLL}-r05"
    assert epoll["mean_a"] == pytest.approx(21_201.0)  # reported, not dropped
    assert epoll["median_ci_coverage_a"] == pytest.approx(15 / 16) and not epoll["median_ci_reaches_level_a"]

    reject, adjusted, _, _ = multipletests(result["p_value"], alpha=0.05, method="holm")
    assert list(result["p_adjusted"]) == pytest.approx(list(adjusted))
    assert list(result["reject"]) == list(reject)
    assert result["confounded_with_hardware"].all()
    assert all(
        "cpu_model: Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz vs AMD EPYC 7B13" in t for t in result["confounded_with"]
    )
    documented(result)


def test_measured_comparisons_without_provenance_say_the_hardware_is_unknown(two_hosts):
    bare = two_hosts.drop(columns=["cpu_model", "cpu_count", "memory_bytes", "kernel", "compiler", "hostname"])
    result = crossos.measured_comparisons(bare, "os", testing=crossos.Testing(resamples=200))
    assert result["confounded_with_hardware"].isna().all()
    assert all("hardware unknown" in note for note in result["note"])
    same = {"cpu_model": "X", "cpu_count": 2, "memory_bytes": 1}
    given = crossos.measured_comparisons(
        bare, "os", testing=crossos.Testing(resamples=200), hardware={DEBIAN: same, UBUNTU: same}
    )
    assert (given["confounded_with_hardware"] == False).all()  # noqa: E712 (a column of Python bools)


def test_measured_comparisons_group_choice_and_errors(two_hosts):
    by_host = crossos.measured_comparisons(two_hosts, "hostname", testing=crossos.Testing(resamples=200))
    assert set(by_host["a"]) == {"vm-debian"} and set(by_host["group_by"]) == {"hostname"}
    one_os = two_hosts[two_hosts["os"] == DEBIAN]
    assert crossos.measured_comparisons(one_os, "os").empty
    with pytest.raises(ValueError, match="requests_per_sec"):
        crossos.measured_comparisons(two_hosts.drop(columns="requests_per_sec"))
    with pytest.raises(ValueError, match="grouping"):
        crossos.choose_group(two_hosts.drop(columns=["os", "hostname", "campaign"]))


def test_group_summaries(two_hosts):
    summary = crossos.group_summaries(two_hosts)
    assert len(summary) == 5  # pool and epoll on both OSes, poll on one
    row = summary[(summary["config_id"] == POOL) & (summary["group"] == DEBIAN)].iloc[0]
    assert row["n"] == 5 and row["mean"] == 10_000.0 and row["total_rate"] == pytest.approx(10_000.0)
    assert row["normal"] and row["mean_ci_low"] < 10_000 < row["mean_ci_high"]


# =========================================================================== (c) this machine vs the reference


def test_compare_with_reference_on_a_real_fixture_campaign():
    reference = crossos.load_campaign_trials(FIXTURES / "campaigns" / "fixture-full")
    assert {"os", "hostname", "cpu_model", "cpu_count"} <= set(reference.columns)
    assert reference["hostname"].notna().all()
    reference = reference.assign(campaign="reference")
    local = crossos.load_campaign_trials(FIXTURES / "campaigns" / "fixture-full")
    local["requests_per_sec"] = local["requests_per_sec"] * 1.5
    result = crossos.compare_with_reference(local, reference, testing=crossos.Testing(resamples=200))
    assert set(result["a"]) == {"fixture-full"} and set(result["b"]) == {"reference"}
    assert set(result["group_by"]) == {"campaign"}
    assert (result["confounded_with_hardware"] == False).all()  # noqa: E712 (same machine)
    assert all("when they ran" in note for note in result["note"])
    ok = result[result["test"] != "none"]
    assert set(ok["center"]) == {"median"}
    assert ok["ratio"].tolist() == pytest.approx([1.5] * len(ok))  # every local trial is 1.5 x its reference
    # n = 2 per group: Shapiro-Wilk cannot run, Mann-Whitney cannot reach p < 0.05, and the rows say so
    assert set(ok["test"]) == {"mann_whitney_u"}
    assert all("no outcome could be significant" in notes for notes in ok["notes"])
    # the configuration with one ok trial per campaign is listed with no test
    assert (result["test"] == "none").sum() == 1
    documented(result)


def test_compare_with_reference_needs_distinct_campaigns(two_hosts):
    with pytest.raises(ValueError, match="share campaign names"):
        crossos.compare_with_reference(two_hosts, two_hosts)
    with pytest.raises(ValueError, match="campaign"):
        crossos.compare_with_reference(two_hosts.drop(columns="campaign"), two_hosts)


# =========================================================================== outliers.py


def test_outlier_tables_name_the_trials(two_hosts):
    summary = outliers.outlier_summary(two_hosts)
    epoll = summary[(summary["campaign"] == "crossos-debian") & (summary["config_id"] == EPOLL)].iloc[0]
    assert epoll["n"] == 5 and epoll["n_outliers"] == 1 and epoll["outlier_trials"] == f"{EPOLL}-r05"
    assert summary["n_outliers"].sum() == 1
    rows = outliers.outlier_rows(two_hosts)
    assert rows.to_dict("records")[0]["trial_id"] == f"{EPOLL}-r05"
    assert list(rows["kind"]) == ["far out"] and list(rows["value"]) == [26_000.0]
    # warm-ups are measured only on request
    everything = outliers.outlier_summary(two_hosts, measured_only=False)
    assert everything["n"].sum() > summary["n"].sum()
    assert math.isclose(summary["q1"].iloc[0], 9_950.0)
