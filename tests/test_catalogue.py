"""The campaign catalogue (archbench/config/catalogue.py, with the studies' entries in their profiles' `[catalogue]`
tables) against what else names a campaign: the studies, the shipped data, the Makefile's study targets and help,
`python -m archbench campaigns --catalogue` and docs/data.md. A new study that measures adds a profile with a
`[catalogue]` table, measured by `make study NAME=<study>`; these tests say where the others disagree."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from archbench.cli.main import main as cli_main
from archbench.config.catalogue import (
    CATALOGUE,
    LOOPBACK_SUFFIX,
    MAIN,
    MAKE_ALL_PROFILES,
    SECOND_LOOK_SUFFIX,
    STUDY_COMMAND,
    build_catalogue,
    shipped_campaigns,
)
from archbench.config.paths import RAW_MANIFEST_DIR, RAW_ROOT, REPO_ROOT
from archbench.config.profiles import PROFILE_DIR, PROFILE_NAMES, ProfileError
from archbench.studies import STUDIES

HOST = "catalogue-host"  # HOST_SHORT for make: no real host name can collide with it
MAKEFILE = REPO_ROOT / "Makefile"
DATA_MD = REPO_ROOT / "docs" / "data.md"

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make_dry_run(*arguments: str) -> str:
    """What make would run (`make -n`: nothing is built or measured), with this test's host name. `all` stands for
    its steps that measure: its analysis step runs a second make on a fragment only a real analysis writes."""
    if arguments[0] == "all":
        arguments = ("trials", "studies", *arguments[1:])
    result = subprocess.run(
        ["make", "-n", "--no-print-directory", "-C", str(REPO_ROOT), *arguments, f"HOST_SHORT={HOST}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def written_campaigns(output: str) -> set[str]:
    return set(re.findall(r"--campaign (\S+)", output))


def measured_by_make() -> dict[str, list[tuple[str, str]]]:
    """{make arguments: [(key, campaign name)]} for every campaign of the catalogue a make target writes."""
    targets: dict[str, list[tuple[str, str]]] = {}
    for key, rule in CATALOGUE.items():
        if rule.file is not None:
            continue  # a result file, written by the test suite rather than by a campaign
        for pattern, command in rule.measured:
            if command.startswith("make "):
                targets.setdefault(command.removeprefix("make "), []).append((key, pattern.format(host=HOST)))
    return targets


def declared_names() -> set[str]:
    """Every campaign name the catalogue lets this machine write: each measured pattern with its suffixes."""
    names = set()
    for rule in CATALOGUE.values():
        if rule.file is not None:
            continue
        suffixes = set(rule.read_with) | set(rule.also_writes) | {""}
        for pattern, _ in rule.measured:
            names |= {pattern.format(host=HOST) + suffix for suffix in suffixes}
    return names


def help_lines() -> dict[str, str]:
    """{target: its help}, from the Makefile's own `target: ... ## help` lines."""
    return dict(re.findall(r"^([a-zA-Z0-9_-]+):[^#\n]*## (.*)$", MAKEFILE.read_text(), flags=re.MULTILINE))


def table(text: str, heading: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table after `heading`."""
    section = text.split(heading, 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows[2:]  # past the header and its rule


def expand_braces(name: str) -> list[str]:
    """`a{-x,,-y}` -> ['a-x', 'a', 'a-y'], as the docs abbreviate a campaign and those read beside it."""
    match = re.match(r"^(.*)\{([^}]*)\}(.*)$", name)
    if not match:
        return [name]
    return [match[1] + part + match[3] for part in match[2].split(",")]


def backticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_every_study_with_data_of_its_own_reads_its_catalogue_entry():
    with_campaign = {s.name: s.campaign for s in STUDIES if s.campaign is not None}
    assert set(with_campaign) == set(CATALOGUE) - {MAIN}
    for name, rule in with_campaign.items():
        assert rule is CATALOGUE[name], name  # the entry itself, not a copy that could drift
    for key, rule in CATALOGUE.items():
        assert rule.profile is None or rule.profile in PROFILE_NAMES, key


def test_a_studys_entry_is_its_profiles_catalogue_table_in_the_catalogues_order():
    assert list(CATALOGUE) == [
        *("main", "workloads", "echo", "latency", "serving_order", "network", "sources", "crossos", "robustness")
    ]
    # Key, profile and file are one name; what no profile measures (main and the file and import studies) is code's.
    for key, rule in CATALOGUE.items():
        assert rule.profile in (None, key), key
        assert (rule.profile is None) == (key in (MAIN, "crossos", "robustness")), key
    assert build_catalogue(PROFILE_DIR) == CATALOGUE
    # The suffixes the studies name in code are the ones their profiles read beside.
    assert LOOPBACK_SUFFIX in CATALOGUE["network"].read_with
    assert SECOND_LOOK_SUFFIX in CATALOGUE["serving_order"].read_with


def test_a_profile_cannot_redeclare_an_entry_of_code(tmp_path):
    (tmp_path / "crossos.toml").write_text('servers = ["epoll"]\n[catalogue]\nreference = "reference"\n')
    with pytest.raises(ProfileError, match="crossos"):
        build_catalogue(tmp_path)
    (tmp_path / "crossos.toml").write_text('servers = ["epoll"]\n[catalogue]\nrefrence = "reference"\n')
    with pytest.raises(ProfileError, match="refrence"):
        build_catalogue(tmp_path)


def test_what_the_catalogue_ships_is_under_data_raw():
    for name in shipped_campaigns():
        assert (RAW_ROOT / name).is_dir(), name
    assert "reference" in shipped_campaigns() and "reference-network-loopback" in shipped_campaigns()


@needs_make
def test_each_make_target_writes_the_campaigns_the_catalogue_says():
    for arguments, expected in measured_by_make().items():
        written = written_campaigns(make_dry_run(*arguments.split()))
        for key, name in expected:
            assert name in written, (key, f"make {arguments}", sorted(written))


@needs_make
def test_every_campaign_a_make_target_writes_is_declared_in_the_catalogue():
    runs = [("all", f"PROFILE={p}") for p in ("smoke", "default", "full")]
    runs += [("studies", "PROFILE=full")]  # the full studies, one sub-make each
    runs += [(target,) for target in help_lines() if target.endswith(("-study", "-study-short"))]
    # The generic target, for every study whose profile has a catalogue entry and whose campaign is named as the
    # study: it refuses those with a target of their own only when it runs, so the dry run says what it would write
    # (serving_order's campaigns are serving-order-<host>, which `make study` never writes).
    runs += [
        ("study", f"NAME={key}")
        for key, rule in CATALOGUE.items()
        if rule.profile is not None and f"{key}-{{host}}" in dict(rule.measured)
    ]
    declared = declared_names()
    for run in runs:
        written = written_campaigns(make_dry_run(*run))
        assert written, run
        assert written <= declared, (run, sorted(written - declared))


def test_the_make_help_lists_every_target_that_measures_a_campaign():
    helped = help_lines()
    for arguments in measured_by_make():
        assert arguments.split()[0] in helped, arguments
    for rule in CATALOGUE.values():
        assert rule.measure_with.split()[1] in helped, rule.measure_with
    assert "help" in helped


def test_the_make_help_names_only_catalogue_campaigns():
    declared = {
        pattern.format(host="<host>")
        for rule in CATALOGUE.values()
        if rule.file is None
        for pattern, _ in rule.measured
    }
    for target, text in help_lines().items():
        for name in re.findall(r"([a-z][a-z0-9_-]*-<host>)", text):
            assert name in declared, (target, name)
    # Each study target's help says where its campaigns go.
    for key, rule in CATALOGUE.items():
        for pattern, command in rule.measured:
            target = command.removeprefix("make ")
            if target.endswith("-study"):
                assert pattern.format(host="<host>") in help_lines()[target], (key, target)


@needs_make
def test_make_help_is_printed_from_the_makefile_comments():
    output = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(REPO_ROOT), "help"], capture_output=True, text=True, check=True
    ).stdout
    lines = output.splitlines()
    for target, text in help_lines().items():
        assert any(line.split(None, 1) == [target, text] for line in lines), target
    variables = lines[lines.index("Variables:") + 1 :]
    named = set(re.findall(r"\b([A-Z][A-Z0-9_]+)=", output))
    for variable in ("PROFILE", "CAMPAIGN", "CAMPAIGNS", "PLACEMENT", "SERVER_CPUS", "PYTHON", "JOBS"):
        assert any(re.search(rf"\b{variable}=", line) for line in variables), variable
    # Every VARIABLE= the help names is one the Makefile reads.
    for variable in named:
        assert f"$({variable})" in MAKEFILE.read_text(), variable


def test_the_catalogue_command_prints_the_catalogue(capsys):
    """`python -m archbench campaigns --catalogue --markdown`, which docs/data.md sends its reader to: one row per
    key in the catalogue's order, this machine's campaigns in the order they are looked for, each with its command,
    the shipped one and the suffixes read beside."""
    assert cli_main(["campaigns", "--catalogue", "--markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines[2:]]
    by_key = {backticked(row[0])[0]: row for row in rows}
    assert list(by_key) == list(CATALOGUE)
    for key, rule in CATALOGUE.items():
        _, measured, shipped, beside, _ = by_key[key]
        shown = [f"`{p.format(host='<host>', processed='data/processed')}` (`{c}`)" for p, c in rule.measured]
        assert measured.endswith(", ".join(shown)) if shown else rule.measure_with in measured, key
        assert backticked(shipped) == [rule.reference], key
        for suffix in (*rule.read_with, *rule.also_writes):
            assert suffix == "" or f"`{suffix}`" in beside, (key, suffix)
    assert by_key[MAIN][1].startswith("`CAMPAIGN` (`make trials`)")  # what make trials wrote, first
    assert cli_main(["campaigns", "--catalogue"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in text] == list(CATALOGUE)


def test_the_docs_send_the_reader_to_the_catalogue_command():
    section = DATA_MD.read_text().split("## Which campaign each section reads", 1)[1].split("\n## ", 1)[0]
    assert "python -m archbench campaigns --catalogue" in section
    assert "| key |" not in section  # no hand-kept copy of the catalogue


def test_the_command_a_study_is_measured_with(capsys):
    """What `make study NAME=<key>` checks before it measures: the catalogue's command for the key."""
    for key, rule in CATALOGUE.items():
        assert cli_main(["campaigns", "--measures", key]) == 0
        assert capsys.readouterr().out.strip() == rule.measure_with
    assert cli_main(["campaigns", "--measures", "nope"]) == 2
    assert "no key 'nope'" in capsys.readouterr().err
    assert STUDY_COMMAND.format(name="x") == "make study NAME=x"


@needs_make
@pytest.mark.skipif(not (Path(sys.prefix) / "bin" / "python").is_file(), reason="not run from a venv")
def test_make_help_lists_the_catalogue_when_the_venv_exists():
    output = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(REPO_ROOT), "help", f"VENV={sys.prefix}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = output.split("Campaigns of the catalogue", 1)[1].split("Variables:", 1)[0].splitlines()[1:]
    assert [line.split()[0] for line in listed] == list(CATALOGUE)
    for line, rule in zip(listed, CATALOGUE.values(), strict=True):
        assert rule.measure_with in line, line


def shipped_in_git() -> set[str]:
    """The campaign directories git tracks under data/raw: what a clone ships, whatever this machine measured since
    (make all writes default-<host> and the short studies beside them)."""
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout: what is shipped cannot be told from what was measured here")
    tracked = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "ls-files", "--", str(RAW_ROOT.relative_to(REPO_ROOT))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    depth = len(RAW_ROOT.relative_to(REPO_ROOT).parts)
    tracked_dirs = {Path(line).parts[depth] for line in tracked if len(Path(line).parts) > depth + 1}
    return tracked_dirs - {RAW_MANIFEST_DIR}  # the campaigns' checksum manifests, not a campaign


def test_every_shipped_campaign_is_read_by_the_catalogue_or_listed_in_the_docs():
    """A study's shipped reference is documented by its catalogue entry (`campaigns --catalogue`); a campaign no study
    reads is explained in docs/data.md's table, and that table names only campaigns git ships."""
    rows = table(DATA_MD.read_text(), "### Shipped campaigns")
    listed = set(itertools.chain.from_iterable(expand_braces(n) for row in rows for n in backticked(row[0])))
    assert listed <= shipped_in_git()
    assert listed | set(shipped_campaigns()) == shipped_in_git()


def test_the_profiles_make_all_accepts_are_the_main_campaigns_the_catalogue_looks_for():
    accepted = re.search(r"^ifeq \(\$\(filter \$\(PROFILE\),([^)]*)\),\)$", MAKEFILE.read_text(), flags=re.MULTILINE)
    assert accepted is not None
    assert set(accepted[1].split()) == set(MAKE_ALL_PROFILES)
    assert [p for p, _ in CATALOGUE[MAIN].measured] == [f"{p}-{{host}}" for p in MAKE_ALL_PROFILES]
