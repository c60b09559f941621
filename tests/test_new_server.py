"""A new server is three places: servers_c/<name>.c, its line in servers_c/CMakeLists.txt and its `ServerSpec` in
archbench/config/servers.py (docs/extending.md). This adds a toy server the third way (a registry entry run by an
existing binary, as tests/test_studies.py adds a toy study) and checks that the conformance and abuse variants,
the analysis' order and thread units, and the figures' colours take it up with no other edit, while the servers
already there keep their order and colours."""

from __future__ import annotations

import shlex

import pandas as pd
import pytest
from abuse.variants import Variant, registry_variants

from archbench.analyze import fields
from archbench.analyze.labels import Labeller, sort_configurations
from archbench.config import servers
from archbench.config.server_spec import ServerSpec, ServerVariant, trigger_option
from archbench.config.server_variants import conformance_lines
from archbench.render import theme

REGISTRY = servers.server_specs
# A toy: reactor's binary under another name, with a hue no other server has and two variants worth testing.
TOY = ServerSpec(
    name="toy",
    binary="reactor",
    summary="a toy: reactor's binary registered under another name",
    threads_flag="--threads",
    options=(trigger_option("edge"),),
    hue=10,
    variants=(
        ServerVariant("toy_t1", ("--threads", "1")),
        ServerVariant("toy_t2", ("--threads", "2", "--trigger", "level"), http_concurrency=50, threaded=True),
    ),
)


def with_toy() -> dict[str, ServerSpec]:
    """The registry with the toy entered before the reference, where docs/extending.md says a server goes."""
    specs = list(REGISTRY().values())
    at = next(i for i, spec in enumerate(specs) if spec.name == fields.REFERENCE_ARCHITECTURE)
    return {spec.name: spec for spec in (*specs[:at], TOY, *specs[at:])}


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servers, "server_specs", with_toy)


def test_ctest_registers_the_toy_variants_from_its_entry(toy_registered: None) -> None:
    lines = conformance_lines()
    toy = [shlex.split(line) for line in lines if shlex.split(line)[1].startswith("toy_")]
    assert toy == [
        ["NAME", "toy_t1", "BINARY", "reactor", "HTTP_CONCURRENCY", "200", "ARGS", "--threads", "1"],
        [
            "NAME",
            "toy_t2",
            "BINARY",
            "reactor",
            "HTTP_CONCURRENCY",
            "50",
            "THREADED",
            "ARGS",
            "--threads",
            "2",
            "--trigger",
            "level",
        ],
    ]
    # The toy joins the others; theirs are the lines CTest had before.
    assert [line for line in lines if not line.startswith("NAME toy_")] == conformance_lines(REGISTRY())


def test_the_abuse_suite_runs_the_toy_variants(toy_registered: None) -> None:
    variants = registry_variants()
    assert [v for v in variants if v.architecture == "toy"] == [
        Variant("toy_t1", "reactor", ("--threads", "1"), architecture="toy"),
        Variant("toy_t2", "reactor", ("--threads", "2", "--trigger", "level"), architecture="toy"),
    ]
    assert [v for v in variants if v.architecture != "toy"] == list(registry_variants(REGISTRY()))


def test_the_analysis_orders_and_counts_the_toy(toy_registered: None) -> None:
    before = fields.ARCHITECTURE_ORDER  # the registry as imported, without the toy
    assert fields.architecture_order() == (*before[:-1], "toy", fields.REFERENCE_ARCHITECTURE)
    assert "toy" in fields.multi_loop_architectures()
    assert fields.thread_units()["toy"] == ("thread", "threads")
    assert fields.default_triggers()["toy"] == "edge"
    rows = pd.DataFrame(
        {"architecture": ["nginx", "toy", "blocking"], "threads": [2, 2, float("nan")], "connections": [8, 8, 8]}
    )
    assert list(sort_configurations(rows)["architecture"]) == ["blocking", "toy", "nginx"]
    assert Labeller(rows).variant({"architecture": "toy", "threads": 2}) == "toy, 2 threads"


def test_the_figures_colour_the_toy_and_no_other_server_changes_colour(toy_registered: None) -> None:
    colours = theme.architecture_colours()
    assert colours["toy"] == theme.architecture_palette_hues()[TOY.hue]
    assert {name: colour for name, colour in colours.items() if name != "toy"} == {
        name: theme.architecture_palette_hues()[spec.hue] if spec.hue is not None else theme.REFERENCE_COLOUR
        for name, spec in REGISTRY().items()
    }
    assert len(set(colours.values())) == len(colours)
