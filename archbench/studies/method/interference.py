"""How many trials other work disturbed, in the main campaign and the workloads campaign, as the method section
says it once (archbench.measure.interference judges a trial, archbench.measure.reruns runs it again in its round,
archbench.analyze.noise.interference_counts counts both).

Per campaign (the main one without a prefix, the workloads one with `Workloads`): `\\ab<...>JudgedTrialCount` (measured
ok trials with a verdict), `DisturbedTrialCount` (of them disturbed, re-runs included), `RerunTrialCount` (re-runs
the runner added for disturbed trials) and `StillDisturbedCount` (configuration rounds whose last trial, after the
re-runs, was still disturbed); and `\\abInterferenceShare` and `\\abMaxReruns`, the campaign parameters that judged
and re-ran them; the facts of the section's sentence on them (the macro `interference` of
paper/templates/method/trials.tex.j2) and of the abstract's (`abstract`: the campaigns that re-ran disturbed trials). A campaign that is absent has every count undefined; one whose records cannot be judged (they
predate `cpu_shares`) has 0 judged and the other counts undefined, never a 0 that would read as "none disturbed".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from archbench.analyze.noise import interference_counts
from archbench.config.params import DEFAULT_INTERFERENCE_SHARE, DEFAULT_MAX_RERUNS
from archbench.render.latex import MISSING, MacroSet, format_compact, format_count


@dataclass(frozen=True)
class CampaignTrials:
    """A campaign the section counts: which one (`role`, the macro prefix), its trials frame and campaign.json."""

    role: str
    prefix: str
    trials: pd.DataFrame
    meta: Mapping[str, Any]


def _parameter(meta: Mapping[str, Any], name: str, default: Any) -> Any:
    value = (meta.get("parameters") or {}).get(name)
    return default if value is None else value


def interference_findings(macros: MacroSet, campaigns: list[CampaignTrials]) -> dict[str, Any]:
    """The counts of every campaign and the rule's parameters as macros; returns the facts of the sentence."""
    facts = []
    for campaign in campaigns:
        counts = interference_counts(campaign.trials)
        present = not campaign.trials.empty
        judged = present and counts.judged > 0
        for name, value, shown, what in (
            ("JudgedTrialCount", counts.judged, present, "measured ok trials judged"),
            ("DisturbedTrialCount", counts.disturbed, judged, "disturbed trials"),
            ("RerunTrialCount", counts.reruns, judged, "re-runs of disturbed trials"),
            ("StillDisturbedCount", counts.still_disturbed, judged, "rounds still disturbed after their re-runs"),
        ):
            macros.add(
                rf"\ab{campaign.prefix}{name}",
                format_count(value) if shown else MISSING,
                f"{campaign.role} campaign: {what}",
            )
        if present:
            facts.append(
                {
                    "role": campaign.role,
                    "trials": format_count(counts.trials),
                    "judged": counts.judged,
                    "derived": counts.judged > 0 and counts.recorded == 0,
                    "disturbed": format_count(counts.disturbed),
                    "one_disturbed": counts.disturbed == 1,
                    "reruns": format_count(counts.reruns) if counts.reruns else None,
                    "one_rerun": counts.reruns == 1,
                    "still": format_count(counts.still_disturbed),
                    "one_still": counts.still_disturbed == 1,
                }
            )
    main_meta = campaigns[0].meta if campaigns else {}
    share = float(_parameter(main_meta, "interference_share", DEFAULT_INTERFERENCE_SHARE))
    macros.add(r"\abInterferenceShare", format_compact(100 * share), "percent of a CPU set's ticks that disturb")
    macros.add(
        r"\abMaxReruns", format_count(_parameter(main_meta, "max_reruns", DEFAULT_MAX_RERUNS)), "re-runs per trial"
    )
    return {"campaigns": facts}
