"""requirements.txt, environment.yml and pyproject.toml pin the same versions.

requirements.txt is the list pip (and `make setup`) installs; environment.yml is
the same list for conda users; pyproject.toml takes its dependencies from
requirements.txt. These tests keep them from drifting apart, and check that the
environment running the tests has the pinned versions installed.

No YAML library is assumed: environment.yml is kept to the flat structure
parsed below (top-level keys, lists of scalars).
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements.txt"
ENVIRONMENT = ROOT / "environment.yml"
PYPROJECT = ROOT / "pyproject.toml"

# conda-forge name -> PyPI name, where they differ.
CONDA_TO_PIP = {"matplotlib-base": "matplotlib"}
# Entries of environment.yml that are not Python packages of requirements.txt.
CONDA_ONLY = {"python"}

NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
VERSION = r"[0-9][0-9A-Za-z.+!-]*"


def normalise(name: str) -> str:
    """PEP 503 normalisation: case and runs of -_. do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def strip_comment(line: str) -> str:
    return re.sub(r"(^|\s)#.*$", "", line).strip()


def parse_requirements(text: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = strip_comment(raw)
        if not line:
            continue
        match = re.fullmatch(rf"({NAME})\s*==\s*({VERSION})", line)
        assert match, f"requirements.txt:{number}: not an exact `name==version` pin: {raw!r}"
        name = normalise(match.group(1))
        assert name not in pins, f"requirements.txt:{number}: {name} pinned twice"
        pins[name] = match.group(2)
    return pins


def parse_simple_yaml(text: str) -> dict[str, object]:
    """Top-level `key: value` and `key:` followed by `  - item` lists; nothing else."""
    data: dict[str, object] = {}
    key = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = strip_comment(raw)
        if not line:
            continue
        top = re.fullmatch(r"([A-Za-z_][\w-]*):\s*(.*)", line)
        if top and not raw[0].isspace():
            key, value = top.group(1), top.group(2)
            data[key] = value if value else []
            continue
        item = re.fullmatch(r"-\s+(.+)", line)
        assert item and key is not None and isinstance(data[key], list), (
            f"environment.yml:{number}: unsupported structure (keep it flat): {raw!r}"
        )
        value = item.group(1).strip().strip("'\"")
        assert not re.search(r":(\s|$)", value), f"environment.yml:{number}: nested mapping: {raw!r}"
        data[key].append(value)
    return data


def parse_conda_dependencies(items: list[str]) -> dict[str, str]:
    pins: dict[str, str] = {}
    for item in items:
        match = re.fullmatch(rf"({NAME})\s*(==|=)\s*({VERSION})", item)
        assert match, f"environment.yml: dependency not pinned to a version: {item!r}"
        name, operator, version = match.groups()
        if name in CONDA_ONLY:
            continue
        # `=` is a prefix match in conda (numpy=2.2 takes 2.2.x); packages need `==`.
        assert operator == "==", f"environment.yml: pin {name} exactly with `==`: {item!r}"
        name = normalise(CONDA_TO_PIP.get(name, name))
        assert name not in pins, f"environment.yml: {name} pinned twice"
        pins[name] = version
    return pins


def load_toml(path: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    with path.open("rb") as handle:
        return tomllib.load(handle)


@pytest.fixture(scope="module")
def pip_pins() -> dict[str, str]:
    return parse_requirements(REQUIREMENTS.read_text())


@pytest.fixture(scope="module")
def environment() -> dict[str, object]:
    return parse_simple_yaml(ENVIRONMENT.read_text())


@pytest.fixture(scope="module")
def conda_pins(environment) -> dict[str, str]:
    return parse_conda_dependencies(environment["dependencies"])


def test_requirements_pin_something(pip_pins):
    assert len(pip_pins) >= 10, pip_pins


def test_both_files_pin_the_same_packages(pip_pins, conda_pins):
    only_pip = sorted(set(pip_pins) - set(conda_pins))
    only_conda = sorted(set(conda_pins) - set(pip_pins))
    assert not only_pip, f"pinned in requirements.txt but not in environment.yml: {only_pip}"
    assert not only_conda, f"pinned in environment.yml but not in requirements.txt: {only_conda}"


def test_both_files_pin_the_same_versions(pip_pins, conda_pins):
    differing = {
        name: (pip_pins[name], conda_pins[name])
        for name in pip_pins
        if name in conda_pins and pip_pins[name] != conda_pins[name]
    }
    assert not differing, f"(requirements.txt, environment.yml) versions differ: {differing}"


def test_environment_uses_conda_forge_and_python_311(environment):
    assert environment.get("channels") and environment["channels"][0] == "conda-forge"
    assert "defaults" not in environment["channels"]
    python = [d for d in environment["dependencies"] if re.match(r"python\s*=", d)]
    assert python == ["python=3.11"], python
    assert "pip" not in environment, "pip: sections are not pinned by this test; keep them out"


def test_pyproject_takes_dependencies_from_requirements(pip_pins):
    pyproject = load_toml(PYPROJECT)
    project = pyproject["project"]
    assert project["name"] == "archbench"
    assert project["requires-python"] == ">=3.10"
    setuptools = pyproject["tool"]["setuptools"]
    if "dependencies" in project.get("dynamic", []):
        assert setuptools["dynamic"]["dependencies"]["file"] == ["requirements.txt"]
    else:  # listed inline: then the same exact pins as requirements.txt
        listed = parse_requirements("\n".join(project.get("dependencies", [])))
        assert listed == pip_pins
    assert "archbench" in setuptools["packages"]["find"]["include"]
    assert pyproject["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]


def test_python_is_supported():
    assert sys.version_info >= (3, 10)


def test_installed_versions_match_the_pins(pip_pins):
    """The environment running the tests is the pinned one (the `make setup` venv)."""
    wrong = {}
    for name, version in pip_pins.items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            wrong[name] = (version, installed)
    assert not wrong, f"(pinned, installed) differ, run `make setup`: {wrong}"


# The parsers themselves, on small inputs, so a failure above is about the files.


def test_parse_requirements_rejects_loose_pins():
    assert parse_requirements("# c\nNumPy==2.2.6  # why\n\n") == {"numpy": "2.2.6"}
    for loose in ("numpy", "numpy>=2", "numpy~=2.2", "numpy==2.*"):
        with pytest.raises(AssertionError):
            parse_requirements(loose)


def test_parse_simple_yaml_and_conda_pins():
    text = "name: x\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - matplotlib-base==3.10.3  # c\n"
    data = parse_simple_yaml(text)
    assert data == {
        "name": "x",
        "channels": ["conda-forge"],
        "dependencies": ["python=3.11", "matplotlib-base==3.10.3"],
    }
    assert parse_conda_dependencies(data["dependencies"]) == {"matplotlib": "3.10.3"}
    for loose in (["numpy"], ["numpy>=2"], ["numpy=2.2"]):
        with pytest.raises(AssertionError):
            parse_conda_dependencies(loose)
    with pytest.raises(AssertionError):
        parse_simple_yaml("dependencies:\n  - pip:\n    - foo\n")


def test_simple_parser_agrees_with_pyyaml_when_present(environment):
    """PyYAML is not pinned (it only comes with jupyter); where it is there, cross-check."""
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(ENVIRONMENT.read_text()) == environment
