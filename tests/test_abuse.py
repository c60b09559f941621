"""Abuse suite: every architecture, in every variant CTest's
conformance suites run, against malformed, oversized, slow, pipelined, reset
and idle clients over real sockets, plus the binding and --response file
guarantees. See tests/abuse/cases.py for the cases and what each architecture
is expected to do.

The cases of all variants run once per session, several variants at a time
(ARCHBENCH_ABUSE_JOBS, default 4), before the first test of this module; each
test then reports one variant x case. The results also go to a JSON file for
the report's robustness appendix: data/processed/robustness.json, or the path
in ARCHBENCH_ROBUSTNESS_OUT (schema: tests/abuse/report.py).

ARCHBENCH_ABUSE_BUILD_DIR picks the servers (default build/; e.g. build-asan
to run the suite under the sanitizers: any report on a server's stderr fails
its cases).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from abuse.cases import CASE_NAMES, Result, Settings, run_variant
from abuse.report import write_report
from abuse.variants import VARIANTS, Variant

from archbench.config.servers import server_specs

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = Path(os.environ.get("ARCHBENCH_ABUSE_BUILD_DIR", REPO_ROOT / "build"))
if not BUILD_DIR.is_absolute():
    BUILD_DIR = REPO_ROOT / BUILD_DIR
JOBS = max(1, int(os.environ.get("ARCHBENCH_ABUSE_JOBS", "4")))
# Registered architectures the suite does not run, each with its reason; every other one must have a variant.
NOT_ABUSED = {
    "nginx": "not a build/bin server (tests/test_nginx.py runs it)",
    "pong": "the upper bound parses nothing, so the malformed, oversized and slow-head cases do not apply; "
    "servers_c/tests/pong_conformance.py runs the cases that do and names the exempt ones",
}


def _settings() -> Settings:
    try:
        build_type = json.loads((BUILD_DIR / "build-info.json").read_text()).get("build_type", "")
    except (OSError, ValueError):
        build_type = ""
    if build_type in ("Asan", "Tsan"):
        # Shadow memory, quarantine and per-thread sanitizer state inflate the
        # resident size (TSan: about 0.8 MiB per thread), and everything is slower.
        return Settings(
            rss_growth_bound_kb=2 * 1024 * 1024,
            served_promptly_s=5.0,
            timing_slack_s=3.0,
            owed_rss_bound_kb=64 * 1024,  # still below the 80 MiB owed
        )
    return Settings()


SETTINGS = _settings()


def _raise_open_file_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard == resource.RLIM_INFINITY else min(hard, max(soft, needed))
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def _selected_pairs(session: pytest.Session) -> set[tuple[str, str]]:
    pairs = set()
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if item.module is not None and item.module.__name__.endswith("test_abuse") and callspec is not None:
            if "variant" in callspec.params and "case" in callspec.params:
                pairs.add((callspec.params["variant"].name, callspec.params["case"]))
    return pairs


@pytest.fixture(scope="module")
def abuse_results(request: pytest.FixtureRequest) -> dict[tuple[str, str], Result]:
    missing = sorted({v.binary for v in VARIANTS if not (BUILD_DIR / "bin" / v.binary).is_file()})
    if missing:
        pytest.skip(f"servers not built in {BUILD_DIR} ({', '.join(missing)} missing); run make servers")
    pairs = _selected_pairs(request.session)
    # Each variant holds up to 1000 slowloris connections (twice: client and server side).
    _raise_open_file_limit(min(JOBS, len(VARIANTS)) * 2 * (SETTINGS.slowloris_connections + 200) + 1024)
    by_variant: dict[str, set[str]] = {}
    for variant_name, case in pairs:
        by_variant.setdefault(variant_name, set()).add(case)
    todo = [v for v in VARIANTS if v.name in by_variant]
    results: dict[tuple[str, str], Result] = {}
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        for variant_results in pool.map(lambda v: run_variant(BUILD_DIR, v, by_variant[v.name], SETTINGS), todo):
            for r in variant_results:
                results[(r.variant, r.case)] = r
    out = Path(os.environ.get("ARCHBENCH_ROBUSTNESS_OUT", REPO_ROOT / "data" / "processed" / "robustness.json"))
    write_report(out, list(results.values()), SETTINGS, BUILD_DIR)
    return results


@pytest.mark.parametrize("case", CASE_NAMES)
@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_abuse(abuse_results: dict[tuple[str, str], Result], variant: Variant, case: str) -> None:
    result = abuse_results.get((variant.name, case))
    assert result is not None, "the case did not run"
    if result.outcome == "skipped":
        pytest.skip(result.observed)
    assert result.outcome == "passed", (
        f"{variant.name} {' '.join(variant.args)}: {case}\n  expected: {result.expected}\n  observed: {result.observed}"
    )


def test_variants_match_ctest_conformance() -> None:
    """The abuse suite covers exactly the variants CTest's conformance suites run, with the same arguments: both
    read the registry, CTest through the lines archbench.config.server_variants prints."""
    text = (REPO_ROOT / "servers_c" / "tests" / "CMakeLists.txt").read_text()
    assert "-m archbench.config.server_variants" in text
    assert re.search(r"^\s*archbench_conformance\(NAME", text, re.M) is None, "a variant written by hand in CMake"
    printed = subprocess.run(
        [sys.executable, "-m", "archbench.config.server_variants"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for line in printed.splitlines():
        tokens = shlex.split(line)
        args = tuple(tokens[tokens.index("ARGS") + 1 :]) if "ARGS" in tokens else ()
        found[tokens[tokens.index("NAME") + 1]] = (tokens[tokens.index("BINARY") + 1], args)
    assert found == {v.name: (v.binary, v.args) for v in VARIANTS}


def test_every_registered_architecture_is_abused_or_excused_by_name() -> None:
    """No architecture leaves the suite silently: it has a variant or a reason in NOT_ABUSED."""
    abused = {v.architecture for v in VARIANTS}
    assert abused.isdisjoint(NOT_ABUSED)
    assert set(server_specs()) == abused | set(NOT_ABUSED)


@pytest.mark.parametrize(
    "first_line",
    [
        "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010",
        "WARNING: ThreadSanitizer: data race (pid=1)",
        "UndefinedBehaviorSanitizer:DEADLYSIGNAL",
        "session.c:10:5: runtime error: signed integer overflow",
    ],
)
def test_the_abuse_suite_reads_every_sanitizer_report_kind(first_line: str, tmp_path: Path) -> None:
    """A server's stderr is searched with the socket suites' recogniser, so no report kind goes unnoticed."""
    from abuse.server import Server

    server = Server.__new__(Server)  # only the stderr side: no process is started
    server.stderr_file = (tmp_path / "stderr").open("w+b")
    server.stderr_file.write(f"listening on 127.0.0.1:1\n{first_line}\n    #0 0x1 in f\n".encode())
    report = server.sanitizer_report()
    assert report is not None and first_line in report
    server.stderr_file.close()
