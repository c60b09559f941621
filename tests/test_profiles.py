"""Profiles as data files (archbench/config/profiles.d/*.toml), checked by the parameter model and validator."""

from __future__ import annotations

from pathlib import Path

import pytest

from archbench.config.parameter_model import ProfileValues
from archbench.config.params import FD_HEADROOM, FIELD_NAMES, resolve_parameters
from archbench.config.profiles import (
    PROFILE_DIR,
    PROFILE_NAMES,
    ProfileError,
    load_profile,
    profile_names,
    profile_values,
    source_001_servers,
)


def test_the_profiles_are_the_files_sorted(tmp_path: Path) -> None:
    assert PROFILE_NAMES == profile_names() == tuple(sorted(p.stem for p in PROFILE_DIR.glob("*.toml")))
    assert {"smoke", "default", "full"} <= set(PROFILE_NAMES)
    # A new file is a new profile, with no list to edit; other files beside them are not profiles.
    for name in ("zeta", "alpha"):
        (tmp_path / f"{name}.toml").write_text('servers = ["blocking"]\n')
    (tmp_path / "README.md").write_text("not a profile")
    assert profile_names(tmp_path) == ("alpha", "zeta")


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_profiles_pass_the_model_and_the_validator(name: str) -> None:
    values = profile_values(name)
    ProfileValues.model_validate(values)
    assert set(values) <= set(FIELD_NAMES) - {"profile"}
    params = resolve_parameters(name, check_host=False, campaign=f"check-{name}")
    assert params.profile == name
    assert params.servers, "a profile without servers"


def test_profile_files_keep_their_explanations() -> None:
    # The comments are the profiles' documentation: each file says what it is for and what it costs.
    for name in PROFILE_NAMES:
        text = (PROFILE_DIR / f"{name}.toml").read_text()
        assert text.startswith(f"# Profile {name}:"), name
    assert "t(7)/sqrt(8) / (t(9)/sqrt(10)) = 1.17x" in (PROFILE_DIR / "full.toml").read_text()


def test_known_values_of_the_profiles() -> None:
    assert profile_values("smoke")["duration_s"] == 1
    echo = profile_values("echo")
    assert echo["proto"] == "echo" and echo["connection_counts"] == [100, 1000, 10000]
    # The --max-conns cap leaves FD_HEADROOM of the reference machine's 20,000 open files.
    assert echo["max_conns_cap"] + FD_HEADROOM <= 20000
    assert profile_values("latency")["servers"][1] == {"architecture": "thread_per_conn", "max_threads": 1000}


def test_source_001_servers_are_the_latency_profiles_and_fresh() -> None:
    servers = source_001_servers()
    assert servers == profile_values("latency")["servers"]
    servers[1]["max_threads"] = 1
    assert source_001_servers()[1]["max_threads"] == 1000


def test_unknown_profile_name() -> None:
    with pytest.raises(KeyError, match="unknown profile 'nope'; valid: bench, default"):
        profile_values("nope")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "custom.toml"
    path.write_text(text)
    return path


def test_a_misspelt_parameter_in_a_profile_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="durations_s"):
        load_profile(write(tmp_path, 'servers = ["blocking"]\ndurations_s = 3\n'))


def test_a_wrongly_typed_value_in_a_profile_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="duration_s"):
        load_profile(write(tmp_path, 'servers = ["blocking"]\nduration_s = "3"\n'))
    with pytest.raises(ProfileError, match="colour"):
        load_profile(write(tmp_path, 'servers = [{ architecture = "epoll", colour = "blue" }]\n'))


def test_a_broken_profile_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="custom"):
        load_profile(write(tmp_path, "servers = [\n"))
    with pytest.raises(ProfileError, match="absent"):
        load_profile(tmp_path / "absent.toml")


def test_a_studys_catalogue_table_is_checked_but_is_no_parameter(tmp_path: Path) -> None:
    # The echo study's entry in the campaign catalogue lives in its profile (archbench.config.catalogue).
    assert load_profile(PROFILE_DIR / "echo.toml")["catalogue"]["reference"] == "reference-echo"
    assert "catalogue" not in profile_values("echo")
    with pytest.raises(ProfileError, match="measured"):
        load_profile(write(tmp_path, 'servers = ["blocking"]\n[catalogue]\nmeasured = "toy-{host}"\n'))
