"""The record models (archbench.data.records) against every shipped record, and the committed JSON Schemas."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from archbench.config.parameter_model import LATER_PARAMETER_DEFAULTS, OPTION_NAMES, StoredParameters
from archbench.config.params import FIELD_NAMES, resolve_parameters
from archbench.config.plan import plan_campaign
from archbench.config.profiles import PROFILE_NAMES
from archbench.config.servers import all_option_names
from archbench.data.records import SCHEMA_MODELS, CampaignMeta, TrialConfigRecord, TrialRecord, schema_text

REPO = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO / "docs" / "schemas"
# Files in a campaign directory that are not campaign.json or trial records (reference-robustness's results).
NOT_RECORDS = {"robustness.json", "provenance.json"}
CAMPAIGN_DIRS = sorted(
    {
        path.parent
        for root in (REPO / "data" / "raw", REPO / "tests" / "fixtures" / "campaigns")
        for path in root.glob("*/campaign.json")
    }
)


def trial_files(campaign_dir: Path) -> list[Path]:
    return sorted(p for p in campaign_dir.glob("*.json") if p.name != "campaign.json" and p.name not in NOT_RECORDS)


def test_the_shipped_campaigns_are_found() -> None:
    names = {d.name for d in CAMPAIGN_DIRS}
    assert {"reference", "reference-echo", "reference-latency", "fixture-minimal", "fixture-echo"} <= names
    assert sum(len(trial_files(d)) for d in CAMPAIGN_DIRS) > 700


@pytest.mark.parametrize("campaign_dir", CAMPAIGN_DIRS, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_every_shipped_record_fits_the_models(campaign_dir: Path) -> None:
    meta = CampaignMeta.model_validate(json.loads((campaign_dir / "campaign.json").read_text()))
    assert meta.campaign
    trials = trial_files(campaign_dir)
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
