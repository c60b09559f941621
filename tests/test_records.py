"""The record models (archbench.data.records) against every shipped record, and the committed JSON Schemas.

Shipped: the fixture campaigns, and under data/raw the files its manifest lists or git has committed. A campaign this
machine measured, or is still measuring, is not shipped until then: it may be half-written (a campaign.json and no
trial record yet) or written by code not yet committed, and this test must pass whatever the machine measured."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from archbench.config.parameter_model import LATER_PARAMETER_DEFAULTS, OPTION_NAMES, StoredParameters
from archbench.config.params import FIELD_NAMES, resolve_parameters
from archbench.config.plan import plan_campaign
from archbench.config.profiles import PROFILE_NAMES
from archbench.config.servers import all_option_names
from archbench.data.manifest import read_manifest
from archbench.data.records import SCHEMA_MODELS, CampaignMeta, TrialConfigRecord, TrialRecord, schema_text

REPO = Path(__file__).resolve().parent.parent
RAW = REPO / "data" / "raw"
SCHEMA_DIR = REPO / "docs" / "schemas"
# Files in a campaign directory that are not campaign.json or trial records (reference-robustness's results).
NOT_RECORDS = {"robustness.json", "provenance.json"}


def committed_raw_files() -> set[Path]:
    """The files under data/raw that git's HEAD holds; none without git (an unpacked artifact has the manifest)."""
    try:
        listing = subprocess.run(
            ["git", "-C", str(REPO), "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", "data/raw"],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    return {REPO / name for name in listing.decode().split("\0") if name}


def shipped_files(raw: Path, committed: set[Path]) -> set[Path]:
    """The files under `raw` its manifest lists or git has committed."""
    return {raw / relative for relative in read_manifest(raw)} | committed


def shipped_campaigns(raw: Path, shipped: set[Path]) -> set[Path]:
    """The campaign directories of `raw` whose campaign.json is shipped."""
    return {path.parent for path in shipped if path.name == "campaign.json" and path.parent.parent == raw}


def trial_files(campaign_dir: Path, shipped: set[Path] | None = None) -> list[Path]:
    """The campaign's trial records: every one, or only those in `shipped`."""
    return sorted(
        p
        for p in campaign_dir.glob("*.json")
        if p.name != "campaign.json" and p.name not in NOT_RECORDS and (shipped is None or p in shipped)
    )


SHIPPED_RAW = shipped_files(RAW, committed_raw_files())
FIXTURE_DIRS = {path.parent for path in (REPO / "tests" / "fixtures" / "campaigns").glob("*/campaign.json")}
CAMPAIGN_DIRS = sorted(shipped_campaigns(RAW, SHIPPED_RAW) | FIXTURE_DIRS)


def shipped_records(campaign_dir: Path) -> list[Path]:
    return trial_files(campaign_dir, None if campaign_dir in FIXTURE_DIRS else SHIPPED_RAW)


def test_the_shipped_campaigns_are_found() -> None:
    names = {d.name for d in CAMPAIGN_DIRS}
    assert {"reference", "reference-echo", "reference-latency", "fixture-minimal", "fixture-echo"} <= names
    assert sum(len(shipped_records(d)) for d in CAMPAIGN_DIRS) > 700


def test_a_campaign_measured_here_is_not_shipped_until_listed(tmp_path: Path) -> None:
    # A listed campaign, one re-run of it that came after the listing, and a half-written campaign of this machine's.
    for name in ("listed", "measuring"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "campaign.json").write_text("{}")
        (tmp_path / name / "epoll-c10-r01.json").write_text("{}")
    (tmp_path / "listed" / "epoll-c10-r02.json").write_text("{}")
    listed = "".join(f"{'0' * 64}  listed/{name}\n" for name in ("campaign.json", "epoll-c10-r01.json"))
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "listed.sha256").write_text(listed)
    shipped = shipped_files(tmp_path, committed=set())
    assert shipped_campaigns(tmp_path, shipped) == {tmp_path / "listed"}
    assert trial_files(tmp_path / "listed", shipped) == [tmp_path / "listed" / "epoll-c10-r01.json"]
    assert trial_files(tmp_path / "measuring", shipped) == []
    # Committed in git, though not listed, is shipped too.
    committed = shipped_files(tmp_path, committed={tmp_path / "measuring" / "campaign.json"})
    assert shipped_campaigns(tmp_path, committed) == {tmp_path / "listed", tmp_path / "measuring"}


@pytest.mark.parametrize("campaign_dir", CAMPAIGN_DIRS, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_every_shipped_record_fits_the_models(campaign_dir: Path) -> None:
    meta = CampaignMeta.model_validate(json.loads((campaign_dir / "campaign.json").read_text()))
    assert meta.campaign
    trials = shipped_records(campaign_dir)
    assert trials, "a campaign directory without trial records"
    for path in trials:
        record = TrialRecord.model_validate(json.loads(path.read_text()))
        assert record.trial_id == path.stem
        assert record.trial_id.startswith(record.config_id)
        if meta.configs is not None and record.config_id in meta.configs:
            assert meta.configs[record.config_id] == record.config


@pytest.mark.parametrize("file_name", sorted(SCHEMA_MODELS))
def test_committed_schemas_are_the_generated_ones(file_name: str) -> None:
    committed = (SCHEMA_DIR / file_name).read_text(encoding="utf-8")
    assert committed == schema_text(SCHEMA_MODELS[file_name]), (
        f"docs/schemas/{file_name} is stale: python -m archbench.data.records --write docs/schemas"
    )


def a_record() -> dict:
    path = trial_files(REPO / "tests" / "fixtures" / "campaigns" / "fixture-minimal")[0]
    return json.loads(path.read_text())


def test_closed_parts_refuse_unknown_keys_and_wrong_types() -> None:
    record = a_record()
    TrialRecord.model_validate(record)
    for mutate in (
        lambda r: r.update(surprise=1),
        lambda r: r["config"].update(colour="blue"),
        lambda r: r["server"].update(note="x"),
        lambda r: r["config"].update(connections="100"),  # strict: no coercion of text to numbers
        lambda r: r.update(status="crashed"),
        lambda r: r.update(schema=2),
        lambda r: r.pop("trial_id"),
    ):
        broken = copy.deepcopy(record)
        mutate(broken)
        with pytest.raises(ValidationError):
            TrialRecord.model_validate(broken)


def test_open_parts_accept_new_keys() -> None:
    record = a_record()
    record["provenance"]["new_fact"] = {"anything": [1, 2]}
    record["server"]["stats"] = {"architecture": "x", "new_counter": 3}
    assert TrialRecord.model_validate(record).provenance.model_extra == {"new_fact": {"anything": [1, 2]}}


def test_optional_fields_say_what_missing_means() -> None:
    record = a_record()
    for key in ("open_files", "adaptive"):
        record.pop(key, None)
    for key in ("cpu_source", "cpus_busy", "pid"):
        record["server"].pop(key, None)
    record["config"].pop("pipeline")
    parsed = TrialRecord.model_validate(record)
    assert parsed.config.pipeline == 1
    assert parsed.open_files is None and parsed.adaptive is None and parsed.server.cpu_source is None


def test_models_cover_the_registry_options_and_the_parameters() -> None:
    assert OPTION_NAMES == tuple(all_option_names())
    assert set(OPTION_NAMES) <= set(TrialConfigRecord.model_fields)
    assert tuple(StoredParameters.model_fields) == FIELD_NAMES
    for name, default in LATER_PARAMETER_DEFAULTS.items():
        assert StoredParameters.model_fields[name].get_default(call_default_factory=True) == default, name


OPEN_LOOP = {"load_generator": "oha", "offered_rates": [1000, 5000]}


@pytest.mark.parametrize(("profile", "overrides"), [(p, {}) for p in PROFILE_NAMES] + [("latency", OPEN_LOOP)])
def test_what_the_writers_produce_fits_the_models(profile: str, overrides: dict) -> None:
    params = resolve_parameters(profile, campaign=f"schema-{profile}", seed=1, check_host=False, **overrides)
    StoredParameters.model_validate(params.to_dict())
    configs = {planned.config_id: planned.config.as_dict() for planned in plan_campaign(params)}
    for config in configs.values():
        TrialConfigRecord.model_validate(config)
    if overrides:
        assert all(config["offered_rate"] in (1000, 5000) for config in configs.values())
