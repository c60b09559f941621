"""Named parameter sets, one data file each: `profiles.d/<name>.toml` beside this module. The profiles are the
files there (`profile_names`); each file's opening comment says what it is for (smoke: tests and CI, default:
minutes, full: hours, and one per study), and docs/sources.md says which profile reproduces which source.

A profile file's comments explain its choices and expected duration; its keys are parameter names
(`ProfileValues` checks them on loading, and `archbench.config.params.validate` checks the values whenever a profile is resolved). A profile is only
default values: any of them can be overridden by an explicit parameter (see
`archbench.config.params.resolve_parameters`). Per-server entries may carry their own thread, connection
and pipeline-depth sweeps, which is how one profile holds both a thread sweep at a fixed connection count
and a connection sweep at a fixed thread count; an explicit campaign-wide `thread_counts`,
`connection_counts` or `pipeline_depths` replaces those per-entry sweeps. "Threads" are worker threads or
worker processes (prefork, nginx), whatever the architecture's parallelism is; architectures without one
(blocking, thread_per_conn, poll, epoll) are never multiplied by a thread sweep.

CPU placement is the machine's: no profile sets `server_cpus` or `load_cpus` (both "auto", the topology's
split, `archbench.config.topology`), `load_threads` is "auto" (one load-generator thread per load CPU), and
the default and full profiles' thread sweeps are "auto" (they grow with the server's CPUs); each file's
comments give the rule. On the 2-CPU reference machine every "auto" resolves to the values the profiles
held before (server CPU 0, load CPU 1, wrk -t1, pool sweep [1, 2, 4, 8]).

A study that measures with a profile of its own (echo, latency, ...) names the profile as itself and gives the
profile a `[catalogue]` table (`ProfileCatalogue`): its entry in the campaign catalogue (`archbench.config.catalogue`),
which is not a parameter, so `profile_values` leaves it out.

Expected durations on the reference machine (2 cores) follow from the grid: `expected_duration_s`
computes them (pass `topology=` to plan for another machine), so they follow any edit of the files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from archbench.config.parameter_model import ProfileCatalogue, ProfileValues

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# The files live in the package directory, so an editable install reads them from the checkout.
PROFILE_DIR = Path(__file__).with_name("profiles.d")


def profile_names(directory: Path = PROFILE_DIR) -> tuple[str, ...]:
    """Every profile file's name, sorted: adding a file under profiles.d is all it takes to add a profile."""
    return tuple(sorted(path.stem for path in directory.glob("*.toml")))


# The names help texts, `--profile` and error messages list, read once at import (the files ship with the package).
PROFILE_NAMES = profile_names()

# Wall time of one trial beyond its wrk duration: server start and ready line,
# wrk's start-up and the final ~0.1 s it overruns, server shutdown, commit.
# Measured on the reference machine by the smoke campaign: median 0.11 s per trial
# (finished_at - started_at - duration), rounded up for larger connection counts.
# nginx trials take 0.13-0.16 s (its Python launcher starts, probes and stops it), the
# C servers' 0.02-0.11 s, so the one figure still fits a mixed campaign.
TRIAL_OVERHEAD_S = 0.15


CATALOGUE_TABLE = "catalogue"  # a study's entry in the campaign catalogue: in a profile file, not a parameter


class ProfileError(ValueError):
    """A profile file is missing or does not have the shape of `ProfileValues`."""


def profile_path(name: str, directory: Path = PROFILE_DIR) -> Path:
    return directory / f"{name}.toml"


def _read_profile(path: Path) -> tuple[dict[str, Any], ProfileValues]:
    try:
        with path.open("rb") as stream:
            values = tomllib.load(stream)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ProfileError(f"profile {path.stem}: {error}") from error
    try:
        return values, ProfileValues.model_validate(values)
    except ValidationError as error:
        raise ProfileError(f"profile {path.stem} ({path}): {error}") from error


def load_profile(path: Path) -> dict[str, Any]:
    """A profile file's values, checked against `ProfileValues` (keys and JSON types, nothing coerced)."""
    return _read_profile(path)[0]


def profile_catalogue(path: Path) -> ProfileCatalogue | None:
    """A profile file's `[catalogue]` table, checked with the rest of the file; None when it has none."""
    return _read_profile(path)[1].catalogue


def profile_values(name: str) -> dict[str, Any]:
    """Fresh dict of the profile's parameter values (callers may modify it): read from its file each time."""
    if name not in PROFILE_NAMES:
        raise KeyError(f"unknown profile {name!r}; valid: {', '.join(PROFILE_NAMES)}")
    values = load_profile(profile_path(name))
    values.pop(CATALOGUE_TABLE, None)
    return values


def source_001_servers() -> list[Any]:
    """Source 001's four architectures as server entries: the latency profile's (a fresh list)."""
    return profile_values("latency")["servers"]
