"""The report as a list of studies: the registry's shape, one resolution of campaigns for make, the notebook and
the command line, and a new study added as one folder, one template folder and one registry line, and, for one that
measures, a profile with a `[catalogue]` table."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import papermill
import pytest
import synthetic_studies as ss  # tests/fixtures/campaigns/synthetic_studies.py (pytest pythonpath)

from archbench.cli.main import main as cli_main
from archbench.config import catalogue
from archbench.config.catalogue import CATALOGUE
from archbench.config.params import ParameterError
from archbench.config.paths import REPO_ROOT, TEMPLATES_DIR
from archbench.config.profiles import PROFILE_DIR
from archbench.data import storage
from archbench.data.importer import IMPORT_DIR
from archbench.render.campaigns import GIVEN, MEASURED, NONE, REFERENCE, resolve, short_host
from archbench.render.latex import MacroSet
from archbench.render.study import Paper
from archbench.report import build as report
from archbench.studies import STUDIES

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "campaigns"
HOST = "testhost"


def test_every_study_has_a_package_a_template_folder_and_a_section():
    names = [s.name for s in STUDIES]
    assert len(names) == len(set(names))
    for study in STUDIES:
        package = REPO_ROOT / "archbench" / "studies" / study.name
        assert (package / "__init__.py").is_file(), study.name
        assert study.section_path().is_file(), study.name
        declared = importlib.import_module(f"archbench.studies.{study.name}").STUDY
        # The registry may place a study in another part of the report than its package declares, nothing else.
        assert replace(declared, part=study.part) == study, study.name


def test_the_main_body_runs_from_the_findings_to_the_threats_with_the_support_in_the_appendices():
    parts = {study.name: study.part for study in STUDIES}
    assert [name for name, part in parts.items() if part == "front"] == ["abstract", "findings"]
    for name in (
        "echo",
        "network",
        "sources",
        "summary",
        "statistics",
        "crossos",
        "rules",
        "configurations",
        "environment",
        "robustness",
    ):
        assert parts[name] == "appendix", name
    for name in ("workloads", "method", "architectures", "pool", "latency", "serving_order", "threats"):
        assert parts[name] == "body", name
    # The threats to validity end the main body (its label main-body-end: tests/test_report_pages.py).
    assert [name for name, part in parts.items() if part == "body"][-1] == "threats"


def test_no_section_is_left_outside_a_study():
    assert not (REPO_ROOT / "paper" / "sections").exists()
    report_tex = (REPO_ROOT / "paper" / "report.tex").read_text()
    for part in ("front", "body", "appendices"):
        assert f"\\input{{generated/{part}}}" in report_tex


def campaign_dir(root: Path, name: str) -> Path:
    shutil.copytree(FIXTURES / "fixture-minimal", root / name)
    return root / name


def test_this_machine_first_then_the_shipped_reference_then_none(tmp_path):
    for name in ("reference", f"echo-short-{HOST}", f"echo-{HOST}", "reference-echo", "reference-latency-designs"):
        campaign_dir(tmp_path, name)
    campaign_dir(tmp_path, "reference-latency-designs-001")
    chosen = resolve(STUDIES, None, raw_root=tmp_path, processed_dir=tmp_path / "p", host=HOST)
    assert chosen.choice("main").how == REFERENCE and chosen.main == "reference"
    assert (chosen["echo"], chosen.choice("echo").how) == (f"echo-{HOST}", MEASURED)  # the full study first
    assert chosen.choice("latency").read == ("reference-latency-designs", "reference-latency-designs-001")
    assert chosen["network"] is None and chosen.choice("network").how == NONE
    lines = dict(line.split(None, 1) for line in chosen.explain(STUDIES))
    assert lines["echo"].startswith(f"echo-{HOST}: this machine's (make echo-study)")
    assert lines["network"].startswith("-: none (none of network-testhost")
    assert lines["pool"].startswith("reference: the shipped reference")
    assert lines["crossos"].startswith("reference: the shipped reference (make import brings another machine's)")


def test_the_cross_os_comparison_is_chosen_like_every_study(tmp_path):
    """crossos reads what its catalogue entry chose (the shipped reference unless CAMPAIGNS names another) and
    every campaign imported from another machine beside it, never one measured here that was not imported."""
    for name in ("reference", "other-lab", f"default-{HOST}", "imported-b", "imported-a"):
        campaign_dir(tmp_path, name)
    for name in ("imported-a", "imported-b"):
        (tmp_path / name / IMPORT_DIR).mkdir()
    chosen = resolve(STUDIES, None, raw_root=tmp_path, processed_dir=tmp_path / "p", host=HOST)
    assert (chosen["crossos"], chosen.choice("crossos").how) == ("reference", REFERENCE)
    assert chosen.choice("crossos").read == ("reference", "imported-a", "imported-b")
    given = resolve(STUDIES, "crossos=other-lab", raw_root=tmp_path, processed_dir=tmp_path / "p", host=HOST)
    assert given.choice("crossos").read == ("other-lab", "imported-a", "imported-b")
    assert given.raw_campaigns()[0] == f"default-{HOST}" and "reference" not in given.raw_campaigns()


def test_campaigns_overrides_are_one_mapping_and_bad_ones_are_named(tmp_path):
    for name in ("reference", "mine", "echo-lab"):
        campaign_dir(tmp_path, name)
    chosen = resolve(STUDIES, "main=mine, echo=echo-lab", raw_root=tmp_path, processed_dir=tmp_path / "p", host=HOST)
    assert (chosen.main, chosen["echo"], chosen.choice("echo").how) == ("mine", "echo-lab", GIVEN)
    # The cross-OS comparison is a key like any other: by default the shipped reference.
    assert chosen.as_text() == "main=mine,echo=echo-lab,crossos=reference"
    for bad, message in (
        ("colour=red", "unknown key 'colour'"),
        ("echo", "is not KEY=CAMPAIGN"),
        ("echo=absent", "echo=absent: no campaign.json"),
        ("echo=echo-lab,echo=mine", "'echo' given twice"),
    ):
        with pytest.raises(ParameterError, match=message) as error:
            resolve(STUDIES, bad, raw_root=tmp_path, processed_dir=tmp_path / "p", host=HOST)
        assert error.value.parameter == "campaigns"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ParameterError, match="no main campaign"):
        resolve(STUDIES, None, raw_root=empty, host=HOST)


def test_a_choice_passed_on_explains_itself_the_same(tmp_path):
    """The Makefile hands the notebook its resolved mapping: resolved again, every line reads the same."""
    for name in ("reference", f"default-{HOST}", "reference-echo"):
        campaign_dir(tmp_path, name)
    first = resolve(STUDIES, None, raw_root=tmp_path, processed_dir=tmp_path / "p", host=HOST)
    again = resolve(STUDIES, first.as_text(), raw_root=tmp_path, processed_dir=tmp_path / "p", host=HOST)
    assert again.explain(STUDIES) == first.explain(STUDIES)
    assert again.to_json() == first.to_json()


def reads(choice_json: str) -> list[tuple[str, str | None, str, list[str]]]:
    """What a resolution reads, key by key: the campaign, whether measured or the reference, and what it reads beside
    it (the `detail` explains which make target measures it, and may name another one for the same campaign)."""
    return [(c["key"], c["name"], c["how"], c["read"]) for c in json.loads(choice_json)["campaigns"]]


@pytest.mark.parametrize("measured", [False, True], ids=["fresh-clone", "after-make-all"])
def test_run_all_in_jupyterlab_reads_what_make_analysis_reads(capsys, tmp_path, measured):
    """analyze.ipynb's parameters default to None, and None resolves as `python -m archbench campaigns` (what
    make analysis runs with the Makefile's CAMPAIGN, default-<host>) does: on a fresh clone, and once `make all` has
    measured this machine's own campaigns. Both on a raw root of their own, whatever data/raw holds."""
    declared = papermill.inspect_notebook(str(REPO_ROOT / "notebooks" / "analyze.ipynb"))
    assert declared["campaign"]["default"] == "None" and declared["campaigns"]["default"] == "None"
    host = short_host()
    raw, processed = tmp_path / "raw", tmp_path / "processed"
    for name in ("reference", "reference-echo", "reference-latency-designs", "reference-latency-designs-001"):
        campaign_dir(raw, name)
    if measured:
        for name in (f"default-{host}", f"echo-{host}"):
            campaign_dir(raw, name)
    arguments = ["campaigns", "--json", "--raw-root", str(raw), "--processed-dir", str(processed)]
    assert cli_main([*arguments, "--measured-main", f"default-{host}"]) == 0
    from_make = capsys.readouterr().out
    from_notebook = report.choose_campaigns(None, raw_root=raw, processed_dir=processed).to_json()
    assert reads(from_notebook) == reads(from_make)
    main = next(choice for choice in reads(from_make) if choice[0] == "main")
    assert main[1:3] == ((f"default-{host}", MEASURED) if measured else ("reference", REFERENCE))


TOY_STUDY = '''"""A toy study: counts the trials of its own campaign."""

import pandas as pd

from archbench.analyze import analysis
from archbench.render.latex import format_count
from archbench.config.catalogue import CATALOGUE
from archbench.render.study import CampaignStudy


class Toy:
    def __init__(self, trials):
        self.trials = trials

    @property
    def available(self):
        return not self.trials.empty


class ToyStudy(CampaignStudy):
    name = "toy"
    title = "a toy study"
    part = "body"
    rule = CATALOGUE[name]
    processed_files = ("toy-trials.csv",)
    generated_files = ("toy-table.tex",)

    def process(self, sources, options):
        campaign = sources[0].campaign
        return Toy(analysis.trials_frame(campaign) if campaign is not None else pd.DataFrame())

    def csvs(self, result):
        return {"toy-trials.csv": result.trials} if result.available else {}

    def facts(self, result, macros, prose, figures):
        macros.add(r"\\abToyTrialCount", format_count(len(result.trials)), "trials of the toy campaign")

    def files(self, result, paper, figures):
        count = paper.prose.sentence("toy/sentences", "count", trials=format_count(len(result.trials)))
        return {"toy-table.tex": count + "\\n"}


TOY = ToyStudy()
STUDY = TOY.study
'''


# The toy study's profile: what it measures, and as its [catalogue] table its entry in the campaign catalogue, with
# every field but the shipped campaign left to the defaults (toy-<host>, made by `make study NAME=toy`).
TOY_PROFILE = """# Profile toy: the toy study's campaign.
servers = ["epoll"]
connection_counts = [8]
duration_s = 1
trials = 1

[catalogue]
reference = "reference-toy"
"""


def toy_profiles(tmp_path: Path, monkeypatch) -> Path:
    """profiles.d with the toy's profile beside the others, and the catalogue built from it in place of the
    repository's (as it would be with the file in profiles.d): catalogue.py is not edited."""
    profiles = tmp_path / "profiles.d"
    shutil.copytree(PROFILE_DIR, profiles)
    (profiles / "toy.toml").write_text(TOY_PROFILE)
    monkeypatch.setattr(catalogue, "CATALOGUE", catalogue.build_catalogue(profiles))
    return profiles


def toy_package(tmp_path: Path, monkeypatch) -> ModuleType:
    """The toy study as a package of its own, outside the repository, on sys.path, with its profile."""
    toy_profiles(tmp_path, monkeypatch)
    package = tmp_path / "src" / "toy_study"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(TOY_STUDY)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.delitem(sys.modules, "toy_study", raising=False)
    return importlib.import_module("toy_study")


def test_a_new_study_is_one_folder_one_template_folder_and_one_registry_line(tmp_path, monkeypatch):
    # One folder: the study's package.
    toy = toy_package(tmp_path, monkeypatch)
    # One template folder: the section and its sentences.
    paper = tmp_path / "paper"
    shutil.copytree(TEMPLATES_DIR, paper / "templates")
    (paper / "templates" / "toy").mkdir()
    (paper / "templates" / "toy" / "section.tex").write_text("\\section{Toy}\n\\abToyTrialCount\n")
    (paper / "templates" / "toy" / "sentences.tex.j2").write_text(
        "<% macro count(f) %>The toy campaign holds << f.trials >> trials.<% endmacro %>\n"
    )
    # One registry line.
    studies = (*STUDIES, toy.STUDY)
    raw = tmp_path / "raw"
    raw.mkdir()
    campaign_dir(raw, "fixture-minimal")
    campaign_dir(raw, "reference-toy")
    outputs = report.build_report(
        "fixture-minimal",
        paths=ss.report_paths(tmp_path, raw, paper / "templates"),
        studies=studies,
    )
    generated = paper / "generated"
    trials = len(storage.load_campaign(raw / "reference-toy").trials)
    assert trials > 0 and len(outputs.result("toy").trials) == trials
    # The base wrote its CSV: a header and one row per trial record.
    written = (tmp_path / "processed" / "toy-trials.csv").read_text().splitlines()
    assert len(written) == trials + 1 and written[0].startswith("campaign,trial_id,")
    macros = (generated / "macros.tex").read_text()
    assert f"% study: toy\n\\newcommand{{\\abToyTrialCount}}{{{trials}}}" in macros
    assert (generated / "body.tex").read_text().rstrip().endswith("\\input{templates/toy/section}")
    assert (generated / "toy-table.tex").read_text().startswith("The toy campaign holds")
    recorded = json.loads((tmp_path / "processed" / "campaigns.json").read_text())
    toy_choice = next(c for c in recorded["campaigns"] if c["key"] == "toy")
    assert (toy_choice["name"], toy_choice["how"]) == ("reference-toy", REFERENCE)
    assert any(line.startswith("toy ") for line in outputs.campaigns.explain(studies))


def test_a_new_study_that_measures_takes_its_catalogue_entry_from_its_profile(tmp_path, monkeypatch, capsys):
    toy = toy_package(tmp_path, monkeypatch)
    rule = catalogue.CATALOGUE["toy"]
    assert toy.STUDY.campaign is rule
    assert list(catalogue.CATALOGUE) == [*CATALOGUE, "toy"]  # without an order, after every other entry
    assert (rule.profile, rule.reference, rule.measure_with) == ("toy", "reference-toy", "make study NAME=toy")
    assert rule.measured == (("toy-{host}", "make study NAME=toy"),)
    # Resolved like every study: the shipped campaign until `make study NAME=toy` has measured this machine's.
    studies, raw = (*STUDIES, toy.STUDY), tmp_path / "raw"
    for name in ("reference", "reference-toy"):
        campaign_dir(raw, name)
    chosen = resolve(studies, None, raw_root=raw, processed_dir=tmp_path / "p", host=HOST)
    assert (chosen["toy"], chosen.choice("toy").how) == ("reference-toy", REFERENCE)
    assert chosen.choice("toy").detail == "make study NAME=toy measures this machine's"
    campaign_dir(raw, f"toy-{HOST}")
    chosen = resolve(studies, None, raw_root=raw, processed_dir=tmp_path / "p", host=HOST)
    assert (chosen["toy"], chosen.choice("toy").how, chosen.choice("toy").detail) == (
        f"toy-{HOST}",
        MEASURED,
        "make study NAME=toy",
    )
    # What `make study NAME=toy` asks before it measures, and the catalogue make help lists.
    profiles = ["--profiles-dir", str(tmp_path / "profiles.d")]
    assert cli_main(["campaigns", "--measures", "toy", *profiles]) == 0
    assert capsys.readouterr().out == "make study NAME=toy\n"
    assert cli_main(["campaigns", "--catalogue", *profiles]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == [
        *("toy", "toy-<host>", "(make", "study", "NAME=toy);", "shipped:", "reference-toy")
    ]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_study_measures_a_new_study_into_its_campaign(tmp_path, monkeypatch):
    """The toy's catalogue command, dry-run (`make -n`: nothing is built or measured), runs the toy's profile into
    the campaign its entry names, after checking that the command is the toy's."""
    toy_profiles(tmp_path, monkeypatch)
    command = catalogue.CATALOGUE["toy"].measure_with.split()
    output = subprocess.run(
        ["make", "-n", "--no-print-directory", "-C", str(REPO_ROOT), *command[1:], f"HOST_SHORT={HOST}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "archbench campaigns --measures 'toy'" in output
    runs = [line for line in output.splitlines() if "--campaign" in line]
    assert len(runs) == 1 and f"--campaign toy-{HOST} -p campaign toy-{HOST} -p profile toy" in runs[0]
    assert [p.format(host=HOST) for p, _ in catalogue.CATALOGUE["toy"].measured] == [f"toy-{HOST}"]


def test_a_campaign_study_without_its_campaign_says_so_and_leaves_no_stale_csv(tmp_path, monkeypatch):
    toy = toy_package(tmp_path, monkeypatch)
    processed = tmp_path / "processed"
    processed.mkdir()
    (processed / "toy-trials.csv").write_text("an earlier run's\n")
    with pytest.warns(UserWarning, match="toy campaign 'gone' not found"):
        result = toy.TOY.read(["gone"], tmp_path / "raw", processed)
    assert not result.available and not (processed / "toy-trials.csv").exists()
    macros = MacroSet()
    files = toy.TOY.section(result, macros, Paper(tmp_path / "figures", tmp_path / "paper"))
    # Its macros are defined all the same; every generated file is the comment pointing at the section's sentence.
    assert macros.macros[r"\abToyTrialCount"].value == "0"
    assert list(files) == ["toy-table.tex"] and files["toy-table.tex"].startswith("% no toy campaign")


def test_two_studies_defining_one_macro_is_an_error(tmp_path, monkeypatch):
    package = tmp_path / "src" / "twin_study"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from archbench.render.latex import MacroSet\n"
        "from archbench.render.study import Study, StudyOutput\n"
        "def write(context):\n"
        "    macros = MacroSet()\n"
        "    macros.add(r'\\abCampaign', 'x')\n"
        "    return StudyOutput(macros)\n"
        "STUDY = Study(name='twin', title='twin', part='body', write=write)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    twin = importlib.import_module("twin_study")
    with pytest.raises(ValueError, match=r"macro \\abCampaign defined by study method and by study twin"):
        report.build_report(
            "fixture-minimal",
            paths=ss.report_paths(tmp_path, FIXTURES),
            studies=(*STUDIES, twin.STUDY),
        )
    sys.modules.pop("twin_study", None)


def test_a_study_section_renders_from_its_facts_and_brings_its_own_bibliography(tmp_path, monkeypatch):
    """A section template (`section.tex.j2`) is rendered with the facts the study returns, its sentences macros of
    its own template folder; its references.bib joins the report's bibliography."""
    package = tmp_path / "src" / "worded_study"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from archbench.render.study import Study, StudyOutput\n"
        "def write(context):\n"
        "    rows = len(context.processed.summary)\n"
        "    return StudyOutput(section={'count': {'rows': rows, 'several': rows > 1}})\n"
        "STUDY = Study(name='worded', title='worded', part='appendix', write=write)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.delitem(sys.modules, "worded_study", raising=False)
    worded = importlib.import_module("worded_study")
    paper = tmp_path / "paper"
    shutil.copytree(TEMPLATES_DIR, paper / "templates")
    folder = paper / "templates" / "worded"
    folder.mkdir()
    (folder / "section.tex.j2").write_text(
        '<% import "worded/sentences.tex.j2" as s %>\n\\section{Worded}\n\n<< s.count(count)|oneline >> Fixed text.\n'
    )
    (folder / "sentences.tex.j2").write_text(
        "<% macro count(f) %>\nThe campaign has << f.rows >>\n<% if f.several %>configurations<% else %>configuration"
        "<% endif %>.\n<% endmacro %>\n"
    )
    (folder / "references.bib").write_text("@misc{wordedsource, title={A source}}\n")
    (paper / "generated").mkdir()
    (paper / "generated" / "published-000.tex").write_text("an earlier build's file\n")
    outputs = report.build_report(
        "fixture-minimal",
        paths=ss.report_paths(tmp_path, FIXTURES, paper / "templates"),
        studies=(*STUDIES, worded.STUDY),
    )
    rows = len(outputs.summary)
    section = (paper / "generated" / "section-worded.tex").read_text()
    noun = "configurations" if rows > 1 else "configuration"
    assert section == f"\\section{{Worded}}\n\nThe campaign has {rows} {noun}. Fixed text.\n"
    assert (paper / "generated" / "appendices.tex").read_text().rstrip().endswith("\\input{generated/section-worded}")
    assert (paper / "generated" / "bibliography.tex").read_text().splitlines()[-1] == (
        "\\bibliography{references,templates/worded/references}"
    )
    # The generated directory holds this build's files only.
    assert not (paper / "generated" / "published-000.tex").exists()
    sys.modules.pop("worded_study", None)
