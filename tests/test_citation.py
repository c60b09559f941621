"""Licenses and citation metadata: CITATION.cff is valid Citation File Format 1.2.0 (checked against the
official JSON schema vendored in docs/schemas/external/), and LICENSE, LICENSE-DATA, the README and data/README.md
say what covers what; the report's title page and artifact appendix are computed from them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from archbench.render.prose import Prose
from archbench.studies.artifact import facts as artifact_appendix

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "docs" / "schemas" / "external" / "citation-file-format-1.2.0.json"
CC_BY_URL = "https://creativecommons.org/licenses/by/4.0/"


def citation() -> dict:
    return yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))


def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def test_the_vendored_schema_is_cff_1_2_0() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$id"] == "https://citation-file-format.github.io/1.2.0/schema.json"
    jsonschema.Draft7Validator.check_schema(schema)
    assert "CC-BY-4.0" in (SCHEMA.parent / "README.md").read_text(encoding="utf-8")


def test_citation_cff_is_valid() -> None:
    data = citation()
    errors = sorted(validator().iter_errors(data), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert data["cff-version"] == "1.2.0" and data["type"] == "software" and data["license"] == "MIT"
    assert data["authors"] == [{"name": "archbench authors"}]


@pytest.mark.parametrize(
    "broken",
    [{"cff-version": "1.1.0"}, {"authors": []}, {"license": "not-a-licence"}, {"date-released": "24 Nov 2026"}],
    ids=["version", "authors", "license", "date"],
)
def test_the_schema_catches_a_broken_citation(broken: dict) -> None:
    assert list(validator().iter_errors({**citation(), **broken}))


def test_licenses_are_named_where_a_reader_looks() -> None:
    license_text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License") and "the archbench authors" in license_text and "2026" in license_text
    data_license = (REPO / "LICENSE-DATA").read_text(encoding="utf-8")
    assert "CC-BY-4.0" in data_license and CC_BY_URL in data_license
    for covered in ("data/raw", "data/processed", "data/external", "paper/report.pdf", "WhaleConnect"):
        assert covered in data_license
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    data_readme = (REPO / "data" / "README.md").read_text(encoding="utf-8")
    for text in (readme, data_readme):
        assert "LICENSE" in text and "CC-BY-4.0" in text and "MIT" in text and "CITATION.cff" in text


def test_title_page_cite_line_comes_from_citation_cff() -> None:
    facts = artifact_appendix.citation_facts(artifact_appendix.read_citation(REPO))
    sentence = Prose().sentence(artifact_appendix.TEMPLATE, "how_to_cite", facts)
    assert "archbench authors" in sentence and citation()["version"] in sentence and "CITATION.cff" in sentence
    assert "\\abHowToCite" in (REPO / "paper" / "report.tex").read_text(encoding="utf-8")


def test_without_citation_cff_the_line_still_renders(tmp_path: Path) -> None:
    facts = artifact_appendix.citation_facts(artifact_appendix.read_citation(tmp_path))
    assert "git commit" in Prose().sentence(artifact_appendix.TEMPLATE, "how_to_cite", facts)
