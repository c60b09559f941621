"""The method section's interference macros (archbench.studies.method.interference): counts per campaign,
the rule's parameters, and the sentence rendered from its facts, for campaigns judged by the runner, judged after the fact, not judgeable and
absent."""

from __future__ import annotations

import pandas as pd

from archbench.render.latex import MISSING, MacroSet
from archbench.render.prose import Prose
from archbench.studies.method.interference import CampaignTrials, interference_findings


def frame(rows: list[tuple[str, bool, str, str]]) -> pd.DataFrame:
    """Measured ok trials: (trial id, disturbed, interference_source, reruns)."""
    return pd.DataFrame(
        [
            {"trial_id": t, "status": "ok", "warmup": False, "disturbed": d, "interference_source": s, "reruns": r}
            for t, d, s, r in rows
        ]
    )


RECORDED = frame(
    [
        ("a-r01", True, "recorded", ""),
        ("a-r01-rerun1", False, "recorded", "a-r01"),
        ("a-r02", True, "recorded", ""),
        ("a-r02-rerun1", True, "recorded", "a-r02"),
        ("a-r02-rerun2", True, "recorded", "a-r02-rerun1"),
        ("a-r03", False, "recorded", ""),
    ]
)
DERIVED = frame([("b-r01", True, "derived", ""), ("b-r02", False, "derived", ""), ("b-r03", False, "derived", "")])
UNJUDGED = frame([("c-r01", False, "", ""), ("c-r02", False, "", "")])


FINDING = "interference sentence"  # the macro `interference` of paper/templates/method/trials.tex.j2


def macros_for(main: pd.DataFrame, workloads: pd.DataFrame, meta: dict | None = None) -> dict[str, str]:
    macros = MacroSet()
    campaigns = [
        CampaignTrials("main", "", main, meta or {}),
        CampaignTrials("workloads", "Workloads", workloads, {}),
    ]
    facts = interference_findings(macros, campaigns)
    sentence = Prose().sentence("method/trials", "interference", facts)
    return {**{name: macro.value for name, macro in macros.macros.items()}, FINDING: sentence}


def test_counts_of_a_judged_campaign_and_one_judged_after_the_fact() -> None:
    values = macros_for(RECORDED, DERIVED, {"parameters": {"interference_share": 0.1, "max_reruns": 2}})
    assert (
        values[r"\abJudgedTrialCount"],
        values[r"\abDisturbedTrialCount"],
        values[r"\abRerunTrialCount"],
        values[r"\abStillDisturbedCount"],
    ) == ("6", "4", "3", "1")
    assert (
        values[r"\abWorkloadsJudgedTrialCount"],
        values[r"\abWorkloadsDisturbedTrialCount"],
        values[r"\abWorkloadsRerunTrialCount"],
        values[r"\abWorkloadsStillDisturbedCount"],
    ) == ("3", "1", "0", "1")
    assert (values[r"\abInterferenceShare"], values[r"\abMaxReruns"]) == ("10", "2")
    finding = values[FINDING]
    assert finding.startswith(
        "In the main campaign 4 of 6 measured trials were disturbed; 3 re-runs were run for them, after which 1 round "
        "was still disturbed;"
    )
    assert "in the workloads campaign 1 of 3 measured trials was disturbed (judged after the fact" in finding
    assert finding.endswith(".")


def test_a_campaign_that_cannot_be_judged_has_no_counts_and_an_absent_one_none_at_all() -> None:
    values = macros_for(UNJUDGED, pd.DataFrame(), {"parameters": {"interference_share": 0.15, "max_reruns": 1}})
    assert values[r"\abJudgedTrialCount"] == "0"
    assert values[r"\abDisturbedTrialCount"] == MISSING  # never a 0 that reads as "none disturbed"
    assert values[r"\abStillDisturbedCount"] == MISSING
    assert {values[rf"\abWorkloads{name}"] for name in ("JudgedTrialCount", "DisturbedTrialCount")} == {MISSING}
    assert (values[r"\abInterferenceShare"], values[r"\abMaxReruns"]) == ("15", "1")
    finding = values[FINDING]
    assert finding.startswith("The main campaign's records predate the CPU counters the rule reads")
    assert "workloads" not in finding


def abstract_for(main: pd.DataFrame, workloads: pd.DataFrame) -> str:
    """The abstract's sentence on the trials (the macro `abstract` of method/trials.tex.j2), from the same facts."""
    campaigns = [CampaignTrials("main", "", main, {}), CampaignTrials("workloads", "Workloads", workloads, {})]
    return Prose().sentence("method/trials", "abstract", interference_findings(MacroSet(), campaigns))


def test_the_abstract_names_only_the_campaigns_whose_disturbed_trials_were_measured_again() -> None:
    # The main campaign predates the counters: the abstract must not say every trial recorded interference.
    shipped = abstract_for(UNJUDGED, RECORDED)
    assert shipped.startswith(
        "Every trial records what bounded it (the server, the load generator, the blocking waits)"
    )
    assert "designs are ranked only where the load generator did not;" in shipped
    assert shipped.endswith("; in the workloads campaign a trial disturbed by other work is measured again.")
    assert "whether other work shared" not in shipped and "server set the rate" not in shipped
    assert abstract_for(RECORDED, RECORDED).endswith(
        "in the main and workloads campaigns a trial disturbed by other work is measured again."
    )
    # Judged after the fact (none re-run) or not judged at all: no campaign re-ran a trial, so no clause says one did.
    assert abstract_for(UNJUDGED, DERIVED).endswith("ranked only where the load generator did not.")
    assert abstract_for(pd.DataFrame(), pd.DataFrame()).endswith("ranked only where the load generator did not.")
