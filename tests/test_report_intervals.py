"""Intervals the report prints respect the data: no bound below zero for a rate or a ratio, the range (and "too few
trials") under three trials, every interval with its n. The rule is stats.rate_ci; the cells are
latex.format_interval / latex.table_interval."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)

from archbench.render import latex

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
SHIPPED = [
    "fixture-minimal",
    "fixture-architectures",
    {"main": "fixture-full", "echo": "fixture-echo", "latency": "fixture-latency"},
]

# A range "low--high" of counts whose low or high bound is negative ($-$ is how latex.py writes a minus).
NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"
NEGATIVE_BOUND = re.compile(rf"\$-\${NUMBER}--(?:\$-\$)?{NUMBER}|{NUMBER}--\$-\${NUMBER}")


@pytest.mark.parametrize(
    ("low", "high", "n", "text"),
    [
        (93735, 97262, 5, "93,735--97,262 ($n=5$)"),
        (100, 10000, 2, "100--10,000 (range, $n=2$: too few trials)"),
        (42, 42, 1, "42--42 (range, $n=1$: too few trials)"),
        (93735, 97262, None, "93,735--97,262"),
        (float("nan"), 5, 4, latex.MISSING),
    ],
)
def test_interval_text_names_its_n_and_a_range(low, high, n, text):
    assert latex.format_interval(low, high, n) == text


@pytest.mark.parametrize(
    ("n", "marked"),
    [(1, True), (2, True), (3, False), (10, False)],
)
def test_table_interval_marks_a_range_and_the_table_explains_the_mark(n, marked):
    cell = latex.table_interval(10, 20, n)
    assert cell.startswith("10--20") and cell.endswith(latex.RANGE_MARK) is marked
    notes = latex.range_notes(pd.DataFrame({"n": [n, 5]}))
    assert notes == ([latex.RANGE_NOTE] if marked else [])


def generated_tex(paper: Path) -> str:
    return "\n".join(path.read_text() for path in sorted((paper / "generated").rglob("*.tex")))


def test_the_scan_finds_a_negative_bound():
    assert NEGATIVE_BOUND.search("reactor 54,885 ($-$106,382--216,152)")
    assert NEGATIVE_BOUND.search("1--$-$2")
    assert not NEGATIVE_BOUND.search("93,735--97,262 ($n=5$) and a difference [$-$5; 3]")


@pytest.mark.parametrize("campaign", SHIPPED, ids=["minimal", "architectures", "full-echo-latency"])
def test_no_generated_interval_reaches_below_zero(campaign, shared_reports):
    # The shipped fixtures have two trials per configuration at most: every interval there is a range.
    _, paper = shared_reports.build(campaign, FIXTURES)
    text = generated_tex(paper)
    assert not NEGATIVE_BOUND.findall(text)


def test_synthetic_campaign_intervals_stay_above_zero_and_name_their_n(shared_reports, tmp_path_factory):
    root = tmp_path_factory.mktemp("synthetic-intervals")
    synthetic.write_comparison_campaign(root)
    _, paper = shared_reports.build(synthetic.COMPARISON, root)
    text = generated_tex(paper)
    assert not NEGATIVE_BOUND.findall(text)
    # Every range of counts in a sentence is followed by its n.
    assert re.search(rf"{NUMBER}--{NUMBER} \((?:range, )?\$n=\d+\$", text)
