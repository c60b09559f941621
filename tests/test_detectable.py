"""One name, one quantity: the minimum detectable difference (the smallest ratio a test calls significant) and the
difference detectable with 80 % power (archbench.stats.power), each checked where it is computed and named as one
quantity wherever the report prints it; the families of Holm's correction stated once."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from test_paired import _frame  # tests/ is on pytest's pythonpath

from archbench.analyze.paired import paired_ratios
from archbench.analyze.planned_comparisons import add_verdicts, adjust_within_families
from archbench.config.paths import TEMPLATES_DIR
from archbench.render.formats import detectable_number
from archbench.render.prose import Prose
from archbench.stats.power import (
    COMPUTED,
    NOT_COMPUTABLE,
    POWER_TOLERANCE,
    UNDEFINED,
    paired_power,
)
from archbench.studies.statistics.comparisons import TEMPLATE as COMPARISONS
from archbench.studies.statistics.comparisons import holm_families_facts
from archbench.studies.statistics.paired import paired_facts, paired_table

PROSE = Prose()


@pytest.fixture(scope="module")
def paired() -> pd.DataFrame:
    return paired_ratios(_frame(), resamples=100)


def test_every_paired_detectable_difference_has_the_power_it_claims(paired: pd.DataFrame) -> None:
    computed = paired[paired["detectable_status"] == COMPUTED]
    assert len(computed) >= 4
    for _, row in computed.iterrows():
        if row["sd_log"] == 0:  # no spread: every difference is detectable, and the figure is 0
            assert row["detectable_pct"] == 0
            continue
        effect = math.log1p(row["detectable_pct"] / 100) / row["sd_log"]
        assert paired_power(effect, int(row["n_rounds"]), row["power_alpha"]) == pytest.approx(0.8, abs=POWER_TOLERANCE)
    for _, row in paired[paired["unpaired_detectable_status"] == COMPUTED].iterrows():
        assert row["unpaired_detectable_pct"] > 0
    assert set(paired["detectable_status"]) <= {COMPUTED, UNDEFINED, NOT_COMPUTABLE}


def test_a_difference_that_fails_its_check_is_printed_not_computable(paired: pd.DataFrame) -> None:
    broken = paired.copy()
    kept = ~broken["reject_holm"].astype(bool) & broken["compared"].astype(bool)
    assert kept.any()
    broken.loc[kept, "detectable_pct"] = math.nan
    broken.loc[kept, "detectable_status"] = NOT_COMPUTABLE
    table = paired_table(broken, False, PROSE)
    assert " n.c. " in table.replace("&", " ") and "n.c.: not computable, the solved power did not check" in table
    facts = paired_facts(broken, False)
    assert facts["not_computable"] == int(kept.sum()) and facts["detectable_median"] is None
    sentence = PROSE.sentence("statistics/paired", "sentence", {**facts, "adaptive": None})
    assert "is the difference detectable with 80\\,\\% power computable" in sentence


def test_an_astronomical_detectable_difference_is_printed_as_more_than_a_bound() -> None:
    assert detectable_number(5e300) == "$>$1,000" and detectable_number(12.34, 1) == "12.3"


def planned_frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = []
    for family, size in (("pool", 4), ("dispatch", 2), ("nginx", 21)):
        for k in range(size):
            rows.append(
                {
                    "family": family,
                    "test": "paired_t_log",
                    "p_value": float(rng.uniform(0, 0.2)),
                    "standard_error": 0.02,
                    "df": 3.0,
                    "mean_log": 0.01 * k,
                    "sd_log": 0.04,
                }
            )
    return add_verdicts(adjust_within_families(pd.DataFrame(rows)))


def test_the_families_of_holms_correction_are_stated_once_as_the_code_forms_them() -> None:
    frame = planned_frame()
    sentence = PROSE.sentence(COMPARISONS, "holm_families", holm_families_facts(frame, 25))
    assert "one family per question (pool size: $m=4$; dispatch mode: $m=2$; against nginx: $m=21$)" in sentence
    assert "form one family ($m=25$)" in sentence
    assert "The workloads study uses no Holm correction" in sentence
    # The m the sentence states is the m each row was tested at.
    for family, m in (("pool", 4), ("dispatch", 2), ("nginx", 21)):
        rows = frame[frame["family"] == family]
        assert (rows["family_size"] == m).all() and np.allclose(rows["mdd_alpha"], 0.05 / m)
    assert "this campaign has none" in PROSE.sentence(
        COMPARISONS, "holm_families", holm_families_facts(frame.iloc[0:0], None)
    )


def test_minimum_detectable_difference_names_one_quantity_in_every_template() -> None:
    """The name belongs to the smallest ratio a test calls significant (the statistics appendix defines it once);
    the 80 % power figure is the 'difference detectable with ... power' wherever it appears."""
    named = {
        path.relative_to(TEMPLATES_DIR).as_posix()
        for path in TEMPLATES_DIR.rglob("*")
        if path.is_file() and re.search(r"minimum\s+detectable", path.read_text(), re.IGNORECASE)
    }
    # The architectures section quotes the same quantity, the planned comparisons' MDD column, for the servers the
    # planned tests against nginx do not separate from it.
    assert named == {
        "statistics/section.tex.j2",
        "statistics/comparisons.tex.j2",
        "architectures/sentences.tex.j2",
    }
    section = (TEMPLATES_DIR / "statistics" / "section.tex.j2").read_text()
    assert len(re.findall(r"only quantity the report\s+calls by that name", section)) == 1
    definition = re.search(r"Each test\s+run comes with its \\emph\{minimum detectable difference\}[^;]*", section)
    assert definition and "calls significant" in definition.group(0) and "power" not in definition.group(0)
