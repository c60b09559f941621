"""archbench.stats.predeclared: the one pre-declared test of a planned comparison, its fallback, when it is not run,
its minimum detectable difference (against a hand computation with scipy) and the rounds a test not run needs; and
the report's planned comparisons: Holm over the tests run of each family, verdicts, the table and the sentence."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from archbench import stats
from archbench.analyze import planned_comparisons as planned
from archbench.render.prose import Prose
from archbench.stats.predeclared import MAX_ROUNDS_NEEDED, aligned_by_round
from archbench.studies.statistics import comparisons

PROSE = Prose()
A = [100.0, 104.0, 98.0, 101.0, 103.0]
B = [50.0, 53.0, 48.0, 49.0, 52.0]
ROUNDS = [1, 2, 3, 4, 5]


# =========================================================================== which test, by the one fixed rule


@pytest.mark.parametrize(
    ("a", "b", "rounds_a", "rounds_b", "test", "n", "paired"),
    [
        (A, B, ROUNDS, ROUNDS, stats.PAIRED_TEST, 5, True),  # rounds on both sides: paired
        (A, B, None, None, stats.UNPAIRED_TEST, 5, False),  # a campaign without rounds: Welch on the logs
        (A, B, ROUNDS, None, stats.UNPAIRED_TEST, 5, False),  # one side cannot be aligned
        (A, B, [1, 2, None, 4, 5], ROUNDS, stats.UNPAIRED_TEST, 5, False),  # a value without its round
        (A[:2], B[:2], [1, 2], [1, 2], stats.NOT_RUN, 2, True),  # 2 rounds < 3: not run
        (A, B, ROUNDS, [6, 7, 8, 9, 10], stats.NOT_RUN, 0, True),  # no round in common: nothing to pair
        (A[:3], B[:2], None, None, stats.NOT_RUN, 2, False),  # unpaired, a group of 2 < 3: not run
        (A[:3], B[:3], [1, 2, 3], [1, 2, 3], stats.PAIRED_TEST, 3, True),  # exactly the minimum
    ],
)
def test_the_rule_table(a, b, rounds_a, rounds_b, test, n, paired) -> None:
    result = stats.planned_comparison(a, b, rounds_a=rounds_a, rounds_b=rounds_b)
    assert (result.test, result.n, result.paired) == (test, n, paired)
    assert result.run == (test != stats.NOT_RUN)
    if result.run:
        assert 0.0 <= result.p_value <= 1.0 and result.ci.low < result.ratio < result.ci.high
    else:
        assert math.isnan(result.p_value) and not result.ci.is_defined
        assert str(stats.MIN_ROUNDS) in result.reason


def test_normality_chooses_nothing() -> None:
    """A far-out round fails Shapiro-Wilk on the log ratios, and the test is still the pre-declared one."""
    a = [100.0, 101.0, 99.0, 100.5, 160.0, 100.2]
    b = [50.0, 50.0, 50.0, 50.0, 50.0, 50.0]
    result = stats.planned_comparison(a, b, rounds_a=range(6), rounds_b=range(6))
    assert not result.normality.passes and result.normality.p_value < 0.05
    assert result.test == stats.PAIRED_TEST


def test_paired_is_scipy_ttest_on_the_log_ratios() -> None:
    result = stats.planned_comparison(A, B, rounds_a=ROUNDS, rounds_b=ROUNDS)
    logs = np.log(np.array(A) / np.array(B))
    expected = scipy_stats.ttest_1samp(logs, 0.0)
    assert result.statistic == pytest.approx(expected.statistic) and result.p_value == pytest.approx(expected.pvalue)
    assert result.ratio == pytest.approx(math.exp(logs.mean()))
    assert result.standard_error == pytest.approx(logs.std(ddof=1) / math.sqrt(5)) and result.df == 4


def test_pairs_follow_the_rounds_not_the_order() -> None:
    """b listed in another order is paired by its round labels; a round's duplicate values are averaged."""
    shuffled = [4, 2, 5, 1, 3]
    b_by_round = dict(zip(ROUNDS, B, strict=True))
    result = stats.planned_comparison(A, [b_by_round[r] for r in shuffled], rounds_a=ROUNDS, rounds_b=shuffled)
    assert result.p_value == pytest.approx(stats.planned_comparison(A, B, rounds_a=ROUNDS, rounds_b=ROUNDS).p_value)
    assert aligned_by_round([1.0, 3.0, float("nan")], [1, 1, 2]) == {1: 2.0}
    assert aligned_by_round([1.0], None) is None
    with pytest.raises(ValueError, match="each value needs its round"):
        aligned_by_round([1.0, 2.0], [1])


def test_a_failed_round_is_dropped_and_counted() -> None:
    a = [100.0, float("nan"), 98.0, 101.0, 103.0]
    result = stats.planned_comparison(a, B, rounds_a=ROUNDS, rounds_b=ROUNDS)
    assert (result.n, result.dropped, result.test) == (4, 1, stats.PAIRED_TEST)
    worse = stats.planned_comparison(
        [100.0, float("nan"), float("nan"), float("nan"), 103.0], B, rounds_a=ROUNDS, rounds_b=ROUNDS
    )
    assert worse.test == stats.NOT_RUN and "missing in 3 more" in worse.reason


def test_unpaired_is_scipy_welch_on_the_logs() -> None:
    result = stats.planned_comparison(A, B[:4])
    expected = scipy_stats.ttest_ind(np.log(A), np.log(B[:4]), equal_var=False)
    assert result.p_value == pytest.approx(expected.pvalue) and result.statistic == pytest.approx(expected.statistic)
    assert result.ratio == pytest.approx(math.exp(np.log(A).mean() - np.log(B[:4]).mean()))
    assert (result.n_a, result.n_b) == (5, 4)


def test_constant_log_ratios_are_not_run() -> None:
    result = stats.planned_comparison([2.0, 4.0, 6.0], [1.0, 2.0, 3.0], rounds_a=[1, 2, 3], rounds_b=[1, 2, 3])
    assert result.test == stats.NOT_RUN and "do not vary" in result.reason and result.ratio == pytest.approx(2.0)


# =========================================================================== minimum detectable difference


def test_mdd_against_a_hand_computation() -> None:
    result = stats.planned_comparison(A, B, rounds_a=ROUNDS, rounds_b=ROUNDS)
    logs = np.log(np.array(A) / np.array(B))
    alpha = 0.05 / 7
    hand = 100 * (math.exp(scipy_stats.t.ppf(1 - alpha / 2, 4) * logs.std(ddof=1) / math.sqrt(5)) - 1)
    assert stats.minimum_detectable_pct(result.standard_error, result.df, alpha) == pytest.approx(hand)


def test_a_ratio_at_the_mdd_is_just_significant() -> None:
    """Log ratios shifted so their mean sits exactly at the MDD give p = alpha / m."""
    spread = np.array([0.01, -0.02, 0.015, -0.005, 0.0])
    alpha = 0.05 / 4
    se = spread.std(ddof=1) / math.sqrt(5)
    mdd = stats.minimum_detectable_pct(se, 4, alpha)
    logs = spread - spread.mean() + math.log1p(mdd / 100)
    assert scipy_stats.ttest_1samp(logs, 0.0).pvalue == pytest.approx(alpha)


@pytest.mark.parametrize(("se", "df"), [(float("nan"), 4), (0.01, float("nan")), (0.01, 0.5), (-0.1, 4)])
def test_mdd_undefined(se: float, df: float) -> None:
    assert math.isnan(stats.minimum_detectable_pct(se, df))


def test_rounds_needed() -> None:
    sd, mean, alpha = 0.05, 0.03, 0.05 / 6
    n = stats.rounds_needed(mean, sd, alpha)

    def threshold(k: int) -> float:
        return scipy_stats.t.ppf(1 - alpha / 2, k - 1) * sd / math.sqrt(k)

    assert n >= stats.MIN_ROUNDS and threshold(int(n)) <= mean < threshold(int(n) - 1)
    assert stats.rounds_needed(1.0, 0.01, alpha) == stats.MIN_ROUNDS  # a large ratio: the minimum does
    assert math.isnan(stats.rounds_needed(0.1, float("nan"), alpha))  # one round: no spread
    assert math.isinf(stats.rounds_needed(0.0, 0.05, alpha))  # a ratio of exactly 1
    assert math.isinf(stats.rounds_needed(1e-6, 0.5, alpha)) and MAX_ROUNDS_NEEDED == 10_000


# =========================================================================== the family: Holm, verdicts, words


def _trials(rates: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for config_id, values in rates.items():
        for round_, value in enumerate(values, start=1):
            rows.append(
                {
                    "config_id": config_id,
                    "repetition": round_,
                    "requests_per_sec": value,
                    "status": "ok",
                    "warmup": False,
                }
            )
    return pd.DataFrame(rows)


def _family(rates: dict[str, list[float]], pairs: list[tuple[str, str]]) -> pd.DataFrame:
    listed = [planned.Pair("nginx", "ctx", a, b, a, b) for a, b in pairs]
    return planned.run_comparisons(listed, _trials(rates))


RATES = {
    "ref": [100.0, 102.0, 98.0, 101.0, 99.0],
    "fast": [300.0, 310.0, 290.0, 305.0, 296.0],  # 3x: significant
    "same": [101.0, 101.0, 99.0, 100.0, 100.0],  # within the noise
    "short": [150.0, 152.0, float("nan"), float("nan"), float("nan")],  # 2 rounds: not run
}


def test_holm_runs_over_the_tests_run_and_in_p_order() -> None:
    frame = _family(RATES, [("fast", "ref"), ("same", "ref"), ("short", "ref")])
    run = frame[frame["test"] != stats.NOT_RUN]
    assert list(run["config_a"]) == ["fast", "same"] and set(frame["family_size"]) == {2}
    assert set(frame["planned_size"]) == {3}
    assert run["p_holm"].tolist() == pytest.approx(list(multipletests(run["p_value"], method="holm")[1]))
    # Holm's order: the smallest p is multiplied by m, the next by m - 1, never below the one before.
    ordered = run.sort_values("p_value")
    assert ordered["p_holm"].iloc[0] == pytest.approx(2 * ordered["p_value"].iloc[0])
    assert ordered["p_holm"].iloc[1] >= ordered["p_holm"].iloc[0]
    assert list(frame["verdict"]) == ["significant", "not significant", "not run"]
    assert frame["mdd_alpha"].iloc[0] == pytest.approx(0.025) and math.isnan(frame["mdd_alpha"].iloc[2])
    short = frame.iloc[2]
    assert short["n_rounds"] == 2 and math.isnan(short["p_value"]) and math.isnan(short["mdd_pct"])
    # Its observed ratio (1.5) and spread would need this many rounds at 0.05 / 3, the planned family.
    assert short["rounds_needed"] == stats.rounds_needed(short["mean_log"], short["sd_log"], 0.05 / 3)
    assert short["rounds_needed"] >= stats.MIN_ROUNDS
    # The ratio beyond the MDD is significant; the one inside is not.
    fast, same = frame.iloc[0], frame.iloc[1]
    assert 100 * (fast["ratio"] - 1) > fast["mdd_pct"] and abs(100 * (same["ratio"] - 1)) < same["mdd_pct"]


def test_table_and_sentence_say_not_run_and_what_is_needed() -> None:
    frame = _family(RATES, [("fast", "ref"), ("same", "ref"), ("short", "ref")])
    table = comparisons.comparisons_table(frame, PROSE)
    assert "not run: needs" in table and "MDD" in table and r"\textbf{" in table
    # The test is named once, in the method; the table repeats it nowhere, and has no fallback row to mark.
    assert "paired $t$" not in table and r"\dagger" not in table and "pre-declared test of Section" in table
    sentence = PROSE.sentence(comparisons.TEMPLATE, "families", comparisons.families_facts(frame))
    assert "2 were tested by the pre-declared paired test" in sentence
    assert "1 was not run" in sentence and "1 after Holm's correction" in sentence
    assert "minimum detectable" in sentence and "Shapiro--Wilk" in sentence
    abstract = PROSE.sentence(comparisons.TEMPLATE, "abstract", comparisons.comparison_abstract_facts(frame))
    assert "1 was run" not in abstract
    assert "2 were run (1 had too few rounds)" in abstract
    assert "paired $t$ test on the per-round log ratios" in comparisons.predeclared_test_name(PROSE)


def test_a_single_round_needs_at_least_the_minimum() -> None:
    rates = {"ref": [100.0, float("nan"), float("nan")], "one": [150.0, float("nan"), float("nan")]}
    frame = _family(rates, [("one", "ref")])
    row = frame.iloc[0]
    assert row["verdict"] == "not run" and math.isnan(row["rounds_needed"])
    assert r"not run: needs $\ge$3 rounds" in comparisons.comparisons_table(frame, PROSE)
    sentence = PROSE.sentence(comparisons.TEMPLATE, "families", comparisons.families_facts(frame))
    assert "the spread is unknown, so 3 rounds is the least that can be said" in sentence


def test_a_configuration_without_a_trial_is_not_run() -> None:
    frame = _family({"ref": RATES["ref"]}, [("absent", "ref")])
    row = frame.iloc[0]
    assert row["test"] == stats.NOT_RUN and bool(row["paired"]) and row["n_rounds"] == 0
    assert "0 paired rounds" in row["test_reason"] and row["family_size"] == 0 and math.isnan(row["mdd_alpha"])


def test_a_campaign_without_rounds_falls_back_to_welch_on_the_logs() -> None:
    trials = _trials(RATES).drop(columns=["repetition"])
    pairs = [planned.Pair("pool", "ctx", "fast", "ref", "fast", "ref")]
    row = planned.run_comparisons(pairs, trials).iloc[0]
    assert row["test"] == stats.UNPAIRED_TEST and not bool(row["paired"]) and row["n_rounds"] == 0
    table = comparisons.comparisons_table(planned.run_comparisons(pairs, trials), PROSE)
    assert r"$^{\dagger}$ &" in table and "5/5" in table and "the one fallback" in table


def test_a_significant_difference_orders_a_pair_only_where_the_lower_rate_was_not_client_set() -> None:
    """A rate the load generator capped is a floor of that server's: a higher rate than it orders nothing, while a
    capped higher rate only understates its lead (archbench.analyze.planned_comparisons)."""
    pairs = [
        planned.Pair("nginx", "ctx", "fast", "ref", "fast", "ref", a_client_set=True, b_client_set=False),
        planned.Pair("nginx", "ctx", "fast", "ref", "fast", "ref", a_client_set=False, b_client_set=True),
        planned.Pair("nginx", "ctx", "ref", "fast", "ref", "fast", a_client_set=True, b_client_set=False),
        planned.Pair("nginx", "ctx", "same", "ref", "same", "ref", a_client_set=False, b_client_set=False),
    ]
    frame = planned.run_comparisons(pairs, _trials(RATES))
    assert list(frame["verdict"]) == ["significant"] * 3 + ["not significant"]
    assert list(frame["ordered"]) == [True, False, False, False]
    table = comparisons.comparisons_table(frame, PROSE)
    assert table.count(r"significant\textsuperscript{c}") == 2
    assert "so the difference orders nothing" in table
    ordered_only = comparisons.comparisons_table(frame.iloc[[0, 3]], PROSE)
    assert r"\textsuperscript{c}" not in ordered_only and "orders nothing" not in ordered_only
