"""The report's artifact appendix: its facts are computed from the set-up files, the profiles and the
campaigns' records, and it renders for the shipped reference campaigns and for a campaign without studies."""

from __future__ import annotations

from pathlib import Path

from archbench.config.plan import expected_duration_s
from archbench.data import storage
from archbench.render.latex import MacroSet
from archbench.render.prose import Prose
from archbench.studies.artifact import facts as artifact_appendix
from archbench.studies.artifact.facts import (
    appendix_outputs,
    collect_appendix,
    debian_packages,
    format_duration,
    python_pins,
)

REPO = Path(__file__).resolve().parent.parent
RAW = REPO / "data" / "raw"
FIXTURES = REPO / "tests" / "fixtures" / "campaigns"


def appendix_text(appendix: artifact_appendix.ArtifactAppendix, macros: MacroSet) -> str:
    """The appendix as the report shows it: its section rendered from its facts, with the table it inputs."""
    prose = Prose()
    files = appendix_outputs(appendix, macros, prose)
    section = prose.section("artifact", appendix.facts(prose))
    table_input = "\\input{generated/" + artifact_appendix.EXPERIMENTS_FILE.removesuffix(".tex") + "}"
    assert table_input in section
    return section.replace(table_input, files[artifact_appendix.EXPERIMENTS_FILE])


def test_packages_are_read_from_setup_and_requirements() -> None:
    packages = debian_packages(REPO)
    assert {"wrk", "liburing-dev", "cmake", "latexmk", "texlive-latex-extra"} <= set(packages)
    assert not any(p.startswith("$") for p in packages) and len(packages) == len(set(packages))
    pins = dict(python_pins(REPO))
    requirements = [
        line
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    ]
    assert len(pins) == len(requirements) and "numpy" in pins and "jinja2" in pins


def test_setup_parsing_on_a_small_script(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "setup.sh").write_text(
        'TEX_DEBS="latexmk lmodern"\n'
        "need() { # need WHAT DEBIAN-PACKAGE...\n"
        "have wrk || need wrk wrk\n"
        '{ have gcc && have make; } || need "gcc and make" build-essential\n'
        'need "$f" $(deb_for_tex_file "$f")\n'
        'need "pdflatex" $TEX_DEBS\n'
    )
    assert debian_packages(tmp_path) == ("wrk", "build-essential", "latexmk", "lmodern")
    assert debian_packages(tmp_path / "absent") == () and python_pins(tmp_path) == ()


def test_durations_read_as_a_reader_plans() -> None:
    assert format_duration(34.5) == "34\\,s" or format_duration(34.5) == "35\\,s"
    assert format_duration(354.75) == "6\\,min"
    assert format_duration(10150) == "2\\,h\\,49\\,min"
    assert format_duration(7200) == "2\\,h"


def test_reference_appendix_has_every_part_and_computed_durations() -> None:
    main = storage.load_campaign(RAW / "reference")
    appendix = collect_appendix(
        main, RAW, {"echo": "reference-echo", "latency": "reference-latency", "network": "reference-network"}
    )
    experiments = {e.key: e for e in appendix.experiments}
    assert experiments["main"].command == "make all PROFILE=default"
    assert experiments["main"].expected_s == expected_duration_s("default")
    assert 60 < experiments["main"].measured_s < 3600
    assert [c.name for c in experiments["latency"].campaigns] == [
        "reference-latency-closed",
        "reference-latency",
        "reference-latency-001",
    ]
    assert len(experiments["network"].campaigns) == 2 and experiments["bench"].measured_s is None
    macros = MacroSet()
    text = appendix_text(appendix, macros)
    for heading in (
        "Abstract",
        "Artifact check-list",
        "Description",
        "Installation",
        "Experiment workflow",
        "Evaluation and expected results",
        "Notes",
    ):
        assert f"\\subsection{{{heading}}}" in text
    assert "make check-artifact" in text and "tab:artifact-experiments" in text and "liburing-dev" in text
    provenance = main.meta["provenance"]
    assert provenance["kernel"] in text and f"{provenance['cpu_count']} logical CPUs" in text
    assert "\\abHowToCite" in macros.names()


def test_a_campaign_without_studies_or_io_uring_still_renders() -> None:
    main = storage.load_campaign(FIXTURES / "fixture-minimal")
    appendix = collect_appendix(main, FIXTURES)
    text = appendix_text(appendix, MacroSet())
    assert "did not measure it" in text
    assert all(not e.campaigns for e in appendix.experiments if e.key != "main")
