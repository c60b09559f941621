"""The architecture registry: flags per architecture, the parallelism flag, nginx's entry, wrk's script."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REAL_BUILD_DIR, REPO_ROOT

from archbench.analyze.fields import REFERENCE_ARCHITECTURE, default_triggers
from archbench.config.loadgen import load_generator, pipeline_script
from archbench.config.plan import TrialConfig
from archbench.config.servers import CPU_SOURCE_STATS, CPU_SOURCE_TREE, server_spec, server_specs
from archbench.measure.nginx import NginxSpec
from archbench.render.theme import architecture_palette_hues

# The architectures the report was built with, in their order: a new one may join anywhere, but these keep their
# order, parallelism flags and colours (report output stays identical).
EXISTING = (
    "blocking",
    "thread_per_conn",
    "thread_pool",
    "poll",
    "epoll",
    "reactor",
    "reuseport",
    "prefork",
    "io_uring",
    "nginx",
    "pong",
)
# Executables built into build/bin, by the registry's own account (nginx is found on PATH instead).
BUILT = [name for name, spec in server_specs().items() if spec.missing_binary(Path("/nonexistent")) is not None]


def command(architecture: str, threads: int | None = None, **options) -> list[str]:
    config = TrialConfig(architecture, 100, 1, 5, threads=threads, options=tuple(options.items())).as_dict()
    return server_spec(architecture).command(config, Path("build"))


def test_registry_order_and_parallelism_flags() -> None:
    specs = server_specs()
    assert [name for name in specs if name in EXISTING] == list(EXISTING)
    assert {name: specs[name].threads_flag for name in EXISTING} == {
        "blocking": None,
        "thread_per_conn": None,
        "thread_pool": "--threads",
        "poll": None,
        "epoll": None,
        "reactor": "--threads",
        "reuseport": "--threads",
        "prefork": "--workers",
        "io_uring": "--threads",
        "nginx": "worker_processes",
        "pong": "--threads",
    }
    assert [name for name in EXISTING if specs[name].takes_threads] == [
        "thread_pool",
        "reactor",
        "reuseport",
        "prefork",
        "io_uring",
        "nginx",
        "pong",
    ]
    assert {name for name, spec in specs.items() if spec.cpu_source == CPU_SOURCE_STATS} == {"nginx"}
    assert {spec.cpu_source for name, spec in specs.items() if name != "nginx"} == {CPU_SOURCE_TREE}


def test_the_existing_architectures_keep_their_hues_and_every_hue_is_its_own() -> None:
    specs = server_specs()
    assert {name: specs[name].hue for name in EXISTING} == {
        **{name: index for index, name in enumerate(EXISTING[:9])},
        "nginx": None,  # the reference's own grey
        "pong": 9,
    }
    hues = [spec.hue for name, spec in specs.items() if name != REFERENCE_ARCHITECTURE]
    assert None not in hues, "an architecture without a hue is drawn in the grey of an unknown one"
    assert len(set(hues)) == len(hues)
    assert max(hues) < len(architecture_palette_hues())


def test_the_cmake_list_builds_exactly_the_registry_servers() -> None:
    """The one place CMake names a server (ARCHBENCH_ARCHITECTURES, or pong's ARCHBENCH_UPPER_BOUNDS) agrees with
    the registry: CMake cannot read it, so this test holds the two together."""
    text = (REPO_ROOT / "servers_c" / "CMakeLists.txt").read_text()

    def cmake_list(variable: str) -> list[str]:
        match = re.search(rf"^set\({variable} ([^)]*)\)", text, re.MULTILINE)
        assert match is not None, f"{variable} is not set on one line"
        return match[1].split()

    specs = server_specs()
    assert cmake_list("ARCHBENCH_ARCHITECTURES") == [specs[n].binary for n in BUILT if not specs[n].upper_bound]
    assert cmake_list("ARCHBENCH_UPPER_BOUNDS") == [specs[n].binary for n in BUILT if specs[n].upper_bound]


def test_every_built_server_has_variants_for_the_socket_suites() -> None:
    """Conformance and abuse test what `variants` lists; only the reference floor, which parses nothing, has its
    own suite (servers_c/pong/CMakeLists.txt)."""
    specs = server_specs()
    untested = [name for name in BUILT if not specs[name].variants and not specs[name].upper_bound]
    assert untested == []
    names = [v.name for spec in specs.values() for v in spec.variants]
    assert len(set(names)) == len(names), "two variants would register the same CTest name"
    for spec in specs.values():
        for variant in spec.variants:
            assert variant.slots is None or variant.http_concurrency <= variant.slots, variant.name


def test_trigger_defaults_per_architecture() -> None:
    defaults = {name: spec.option("trigger").default for name, spec in server_specs().items() if spec.option("trigger")}
    assert {name: defaults[name] for name in EXISTING if name in defaults} == {
        "epoll": "level",
        "reactor": "edge",
        "reuseport": "edge",
        "prefork": "level",
    }
    assert default_triggers() == defaults


def test_commands_of_the_event_loop_architectures() -> None:
    assert command("poll") == ["build/bin/poll", "--host", "127.0.0.1", "--port", "0", "--response", "test"]
    assert command("epoll", trigger="edge")[5:] == ["--trigger", "edge", "--response", "test"]
    assert command("reactor", threads=4, trigger="edge")[5:] == [
        "--threads",
        "4",
        "--trigger",
        "edge",
        "--response",
        "test",
    ]
    assert command("reuseport", threads=2, trigger="level")[5:7] == ["--threads", "2"]
    # prefork's parallelism is its worker processes; its --threads stays at the server's 1.
    assert command("prefork", threads=8, trigger="level")[5:] == [
        "--workers",
        "8",
        "--trigger",
        "level",
        "--response",
        "test",
    ]
    assert command("io_uring", threads=2)[5:] == ["--threads", "2", "--response", "test"]


def test_nginx_runs_through_the_launcher_module() -> None:
    argv = command("nginx", threads=4)
    assert argv[:3] == [sys.executable, "-m", "archbench.measure.nginx"]
    assert argv[argv.index("--worker-processes") + 1] == "4"
    assert argv[argv.index("--port") + 1] == "0" and argv[argv.index("--response") + 1] == "test"
    # The launcher imports this checkout even where archbench is not installed.
    assert NginxSpec().environment()["PYTHONPATH"].split(":")[0] == str(REPO_ROOT)
    assert NginxSpec().missing_binary(Path("/nonexistent")) is None


def test_nginx_missing_is_reported_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("archbench.config.nginx_spec.find_nginx", lambda: None)
    reason = NginxSpec().unavailable_reason()
    assert reason is not None and "nginx is not installed" in reason and "apt-get install nginx-light" in reason


def test_c_servers_report_missing_binaries(tmp_path: Path) -> None:
    assert server_spec("epoll").missing_binary(tmp_path) == tmp_path / "bin" / "epoll"
    assert server_spec("epoll").unavailable_reason() is None


def test_wrk_always_runs_the_lua_script_and_pipelines_only_when_deeper_than_one() -> None:
    wrk = load_generator("wrk")
    plain = TrialConfig("epoll", 100, 1, 5).as_dict()
    # The script's done() dumps the latency histogram on every run; depth 1 passes no script argument.
    assert wrk.command(plain, "http://127.0.0.1:1/", 2) == [
        "wrk",
        "-t1",
        "-c100",
        "-d5s",
        "--latency",
        "--timeout",
        "2s",
        "-s",
        str(REPO_ROOT / "archbench" / "config" / "lua" / "pipeline.lua"),
        "http://127.0.0.1:1/",
    ]
    deep = TrialConfig("epoll", 100, 1, 5, pipeline=16).as_dict()
    assert wrk.command(deep, "http://127.0.0.1:1/", 2) == [
        "wrk",
        "-t1",
        "-c100",
        "-d5s",
        "--latency",
        "--timeout",
        "2s",
        "-s",
        str(REPO_ROOT / "archbench" / "config" / "lua" / "pipeline.lua"),
        "http://127.0.0.1:1/",
        "--",
        "16",
    ]
    assert pipeline_script().is_file()
    assert "wrk.format" in pipeline_script().read_text()  # the static-request technique, not request()
    assert re.search(r"^function request", pipeline_script().read_text(), re.MULTILINE) is None


@pytest.mark.parametrize("architecture", BUILT)
def test_every_flag_the_registry_passes_is_in_the_servers_help(architecture: str) -> None:
    binary = REAL_BUILD_DIR / "bin" / architecture
    if not binary.is_file():
        pytest.skip(f"{binary} not built")
    help_text = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=10).stdout
    spec = server_spec(architecture)
    flags = [o.flag for o in spec.options] + ([spec.threads_flag] if spec.threads_flag else [])
    for flag in flags:
        assert re.search(rf"^\s+{re.escape(flag)}\b", help_text, re.MULTILINE), f"{architecture} --help lacks {flag}"
    for option in spec.options:
        for choice in option.choices:
            assert choice in help_text
