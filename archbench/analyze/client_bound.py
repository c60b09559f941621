"""Whether the load generator, not the server, set a configuration's rate: the rule every "fastest" sentence obeys.

A closed-loop load generator on its own cores can be the bottleneck itself. A configuration whose load-generator
CPUs were saturated (summary.csv's `n_client_bound`, the server's too or not) in half or more of its measured
trials has the load generator's rate, not the server's: the same share (CLIENT_BOUND_SHARE) that makes a pair
client-bound in archbench.analyze.paired. No sentence ranks such a configuration as the fastest; it says that the
load generator set the rate there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from archbench.analyze.values import is_nan
from archbench.measure.adaptive import CLIENT_BOUND_SHARE


def trial_count(value: Any) -> int:
    """A summary.csv count (n, n_client_bound), 0 where missing."""
    return 0 if is_nan(value) else int(float(value))


def client_set_rate(row: Mapping[str, Any]) -> bool:
    """Whether the load generator bounded half or more of the configuration's measured trials."""
    trials = trial_count(row.get("n"))
    return trials > 0 and trial_count(row.get("n_client_bound")) >= CLIENT_BOUND_SHARE * trials
