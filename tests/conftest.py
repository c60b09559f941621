"""Shared fixtures of the measurement-side tests: paths, skips with reasons, fake servers."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from archbench.config import topology as cpu_topology
from archbench.report import build as report

REPO_ROOT = Path(__file__).resolve().parent.parent
WRK_FIXTURES = REPO_ROOT / "tests" / "fixtures" / "wrk"
REAL_BUILD_DIR = REPO_ROOT / "build"
PAPER = REPO_ROOT / "paper"
TWO_CPU_TOPOLOGY = REPO_ROOT / "tests" / "fixtures" / "topology" / "2cpu"
BUILD_HINT = "cmake -S servers_c -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2"


def available_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


@pytest.fixture
def cpu_pair() -> tuple[str, str]:
    """(server CPU, load CPU): two distinct CPUs of this machine."""
    cpus = available_cpus()
    if len(cpus) < 2:
        pytest.skip(f"needs two CPUs to pin server and load apart; this process may use only {cpus}")
    return str(cpus[0]), str(cpus[1])


@pytest.fixture
def real_build_dir() -> Path:
    """The CMake build directory with the real servers (skips if not built)."""
    missing = [a for a in ("blocking", "thread_per_conn", "thread_pool") if not (REAL_BUILD_DIR / "bin" / a).is_file()]
    if missing:
        pytest.skip(f"servers not built ({', '.join(missing)} missing in build/bin); run {BUILD_HINT}")
    return REAL_BUILD_DIR


@pytest.fixture
def load_tools() -> None:
    """wrk and taskset on PATH (skips otherwise)."""
    absent = [tool for tool in ("wrk", "taskset") if shutil.which(tool) is None]
    if absent:
        pytest.skip(f"{', '.join(absent)} not installed (apt-get install wrk util-linux)")


def write_executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_build_dir(tmp_path: Path):
    """Returns make(arch, script_text) -> a build dir whose bin/<arch> is the given script."""

    def make(architecture: str, script: str) -> Path:
        build = tmp_path / "fake-build"
        write_executable(build / "bin" / architecture, script)
        return build

    return make


@pytest.fixture
def repo_env() -> dict[str, str]:
    """Environment for `python -m archbench` subprocesses run from the repository root."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


PYTHON = sys.executable


# Two kinds of test (`make test-unit` runs the first, `make test` both): unit tests need no build, no wrk,
# no nginx, no notebook kernel and no LaTeX, and take under a minute together; integration tests run real
# servers, load generators, notebooks or latexmk. A test is integration when it uses a fixture that needs
# the build or the load tools, lives in a module that is about running things, or is listed here by name.
INTEGRATION_FIXTURES = frozenset({"real_build_dir", "load_tools", "built_servers", "needs_build"})
INTEGRATION_MODULES = frozenset(
    {
        "test_abuse",
        "test_servers_under_wrk",
        "test_pipeline_smoke",
        "test_nginx",
        "test_harness_faults",
        "test_echo_trials",
        "test_latency_trials",
        "test_server_ready",
    }
)
INTEGRATION_TESTS: dict[str, frozenset[str]] = {
    "test_cli": frozenset(
        {
            "test_notebook_with_bad_parameter_fails_naming_it",
            "test_notebook_runs_a_campaign_and_keeps_each_executed_copy",
            "test_study_notebooks_fail_naming_a_bad_parameter",
        }
    ),
    "test_latex": frozenset(
        {"test_report_pdf_builds_from_a_fixture_campaign", "test_report_builds_from_degenerate_campaigns"}
    ),
    "test_report_echo": frozenset(
        {
            "test_pdf_builds_with_synthetic_echo_and_latency_sections",
            "test_pdf_builds_with_the_real_fixture_campaigns",
            "test_pdf_builds_without_echo_and_latency_campaigns",
            "test_pdf_builds_with_campaigns_that_hold_no_measurement_of_their_own",
        }
    ),
    "test_report_robustness": frozenset({"test_report_pdf_builds_with_the_appendix"}),
    "test_report_stats": frozenset({"test_pdf_with_the_sections_builds"}),
    "test_report_network": frozenset({"test_report_pdf_builds_with_the_network_section"}),
}


# `make test` runs pytest in three worker processes (pytest-xdist, -n 3 --dist loadgroup). The tests that run
# servers and load generators on loopback, pinned to the CPUs of cpu_pair (the abuse suite's servers to CPU 0), go
# to one worker and so run one after the other: two of them at once would share those CPUs, and their counts and
# timings would no longer be their own. The abuse suite runs all its cases in its module fixture, once, and spends
# that minute waiting on slow and idle clients: the two other workers keep both CPUs busy meanwhile.
LOOPBACK_FIXTURES = INTEGRATION_FIXTURES | {"cpu_pair", "fake_build_dir"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "integration: runs servers, load generators, notebooks or LaTeX (deselect with -m 'not integration')"
    )
    config.addinivalue_line(
        "markers",
        "slow: long integration (network namespaces, ssh placement, notebook kernels, interrupts, the whole pipeline, "
        "edge-case report PDFs, a real oha trial): `make test` deselects them, `make test-slow` (part of `make check` and CI) runs them",
    )


# tryfirst: pytest-xdist reads the xdist_group markers in its own hook, which would otherwise run before this one.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        name = item.originalname if isinstance(item, pytest.Function) else item.name
        fixtures = getattr(item, "fixturenames", ())
        if (
            module in INTEGRATION_MODULES
            or INTEGRATION_FIXTURES.intersection(fixtures)
            or name in INTEGRATION_TESTS.get(module, frozenset())
        ):
            item.add_marker(pytest.mark.integration)
        if module in INTEGRATION_MODULES or LOOPBACK_FIXTURES.intersection(fixtures):
            item.add_marker(pytest.mark.xdist_group("loopback"))


@pytest.fixture(autouse=True)
def two_cpu_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "auto" CPU values resolve on the 2-CPU fixture topology (server CPU 0, load CPU 1, wrk -t1), the shape
    the tests' expected trial ids and durations were written for, whatever machine runs them; a test about
    topology passes its own tree (`topology=` or `--topology-root`), which this leaves alone."""
    machine = cpu_topology.read_topology(TWO_CPU_TOPOLOGY, affinity=(0, 1))
    real = cpu_topology.read_topology

    def read(root: Path | str = "/", affinity: object = None) -> cpu_topology.CpuTopology:
        return machine if str(root) == "/" and affinity is None else real(root, affinity)

    monkeypatch.setattr("archbench.config.params.read_topology", read)
    monkeypatch.setattr("archbench.cli.main.read_topology", read)


class SharedReports:
    """Reports built once per test process and shared by the tests that only read them: a report takes seconds to
    build (its figures above all) and its PDF as long again, and many tests look at the same campaign's. Each lives
    in its own paper directory (report.tex, references.bib and templates/ copied beside generated/ and figures/, so
    that latexmk can build it there), with processed/ beside that directory. A test that changes a built report's
    files, or needs one that fails, builds its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.reports: dict[tuple, tuple[report.ReportOutputs, Path]] = {}
        self.pdfs: dict[tuple, Path] = {}

    @staticmethod
    def key(campaign: str | Mapping[str, str], raw_root: Path, options: dict[str, object]) -> tuple:
        named = campaign if isinstance(campaign, str) else tuple(sorted(campaign.items()))
        return named, str(raw_root), tuple(sorted((name, str(value)) for name, value in options.items()))

    def build(
        self, campaign: str | Mapping[str, str], raw_root: Path, **options: object
    ) -> tuple[report.ReportOutputs, Path]:
        """(outputs, paper directory) of build_report(campaign, raw_root, **options); `campaign` is the main
        campaign or a mapping of campaigns (archbench.render.campaigns)."""
        key = self.key(campaign, raw_root, options)
        if key not in self.reports:
            paper = self.root / f"report-{len(self.reports)}" / "paper"
            paper.mkdir(parents=True)
            for name in ("report.tex", "references.bib"):
                shutil.copy(PAPER / name, paper / name)
            shutil.copytree(PAPER / "templates", paper / "templates")
            outputs = report.build_report(
                campaign,
                paths=report.ReportPaths(
                    raw_root=raw_root,
                    processed_dir=paper.parent / "processed",
                    generated_dir=paper / "generated",
                    figures_dir=paper / "figures",
                ),
                **options,
            )
            self.reports[key] = (outputs, paper)
        return self.reports[key]

    def pdf(self, campaign: str | Mapping[str, str], raw_root: Path, **options: object) -> Path:
        """The PDF of that report, built by latexmk in its paper directory (report.log beside it); skips without
        latexmk."""
        if shutil.which("latexmk") is None:
            pytest.skip("latexmk is not installed (apt-get install latexmk texlive-latex-extra)")
        key = self.key(campaign, raw_root, options)
        _, paper = self.build(campaign, raw_root, **options)
        if key not in self.pdfs:
            self.pdfs[key] = report.build_pdf(paper)
        return self.pdfs[key]


@pytest.fixture(scope="session")
def shared_reports(tmp_path_factory: pytest.TempPathFactory) -> SharedReports:
    return SharedReports(tmp_path_factory.mktemp("shared-reports"))
