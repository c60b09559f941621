"""CPU topology over fake /sys trees (tests/fixtures/topology, written by its make_trees.py): the usable
CPUs, their cores and nodes, the default server / load split, sweeps that scale, and what a campaign records."""

from __future__ import annotations

from pathlib import Path

import pytest

from archbench.cli.main import main
from archbench.config.parameter_model import ProfileValues
from archbench.config.params import ParameterError, parameters_from_dict, resolve_parameters
from archbench.config.plan import expand_grid
from archbench.config.topology import (
    CpuTopology,
    auto_sweep,
    default_split,
    fitting_load_threads,
    read_topology,
    split_cpus,
    thread_sweep,
)
from archbench.config.values import format_cpu_list

TREES = Path(__file__).parent / "fixtures" / "topology"


def tree(name: str) -> CpuTopology:
    return read_topology(TREES / name)


def lists(server: tuple[int, ...], load: tuple[int, ...]) -> tuple[str, str]:
    return format_cpu_list(server), format_cpu_list(load)


# --------------------------------------------------------------------------- reading and splitting


def test_two_cpus_keep_the_reference_split() -> None:
    topology = tree("2cpu")
    assert topology.cpus == (0, 1)
    assert topology.cores == ((0,), (1,))
    split = default_split(topology)
    assert lists(split.server_cpus, split.load_cpus) == ("0", "1")
    assert (split.server_cores, split.load_cores, split.server_node) == (1, 1, 0)
    assert thread_sweep(len(split.server_cpus)) == (1, 2, 4, 8)  # today's default pool sweep


def test_sixteen_cpus_with_smt_give_the_server_half_the_cores_with_their_siblings() -> None:
    topology = tree("16cpu-smt")
    assert len(topology.cpus) == 16
    assert len(topology.cores) == 8
    assert (3, 11) in topology.cores  # Linux numbers the siblings N and N + cores
    split = default_split(topology)
    assert lists(split.server_cpus, split.load_cpus) == ("0-3,8-11", "4-7,12-15")
    assert (split.server_cores, split.load_cores) == (4, 4)
    assert thread_sweep(len(split.server_cpus)) == (1, 2, 4, 8, 16)


def test_sixty_four_cpus_on_two_nodes_keep_the_server_on_one_node() -> None:
    topology = tree("64cpu-numa")
    assert topology.nodes() == (0, 1)
    split = default_split(topology)
    assert lists(split.server_cpus, split.load_cpus) == ("0-15,32-47", "16-31,48-63")
    assert (split.server_cores, split.server_node) == (16, 0)
    assert {topology.node(cpu) for cpu in split.load_cpus} == {1}


def test_the_process_cgroup_cpuset_restricts_the_usable_cpus() -> None:
    topology = tree("16cpu-cgroup")
    # The process's own cgroup (2-5,10-13), not the root cgroup's 0-15.
    assert format_cpu_list(topology.cpus) == "2-5,10-13"
    assert topology.cpuset == "2-5,10-13"
    split = default_split(topology)
    assert lists(split.server_cpus, split.load_cpus) == ("2-3,10-11", "4-5,12-13")
    assert "cgroup cpuset 2-5,10-13 (8 CPUs usable)" in split.describe()


def test_affinity_is_intersected_and_partial_cores_count_as_cores() -> None:
    topology = read_topology(TREES / "16cpu-smt", affinity={0, 8, 1, 9, 2})
    assert topology.cores == ((0, 8), (1, 9), (2,))
    split = default_split(topology)
    assert lists(split.server_cpus, split.load_cpus) == ("0,8", "1-2,9")


def test_missing_topology_files_make_each_cpu_its_own_core_on_one_node(tmp_path: Path) -> None:
    for cpu in range(4):
        (tmp_path / "sys/devices/system/cpu" / f"cpu{cpu}").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/cpufreq").mkdir()  # not a CPU
    topology = read_topology(tmp_path)
    assert topology.cores == ((0,), (1,), (2,), (3,))
    assert topology.nodes() == (0,)
    split = default_split(topology)
    assert lists(split.server_cpus, split.load_cpus) == ("0-1", "2-3")


def test_one_core_with_two_siblings_is_split_between_server_and_load(tmp_path: Path) -> None:
    for cpu in (0, 1):
        topology_dir = tmp_path / "sys/devices/system/cpu" / f"cpu{cpu}" / "topology"
        topology_dir.mkdir(parents=True)
        (topology_dir / "thread_siblings_list").write_text("0-1\n")
    split = default_split(read_topology(tmp_path))
    assert lists(split.server_cpus, split.load_cpus) == ("0", "1")


def test_one_usable_cpu_is_a_clear_error() -> None:
    with pytest.raises(ParameterError, match=r"server_cpus: only CPU 3 is usable .* need one CPU each"):
        default_split(read_topology(TREES / "16cpu-smt", affinity={3}))


def test_one_explicit_side_leaves_the_rest_to_the_other() -> None:
    topology = tree("16cpu-smt")
    split = split_cpus(topology, "0", "auto")
    assert lists(split.server_cpus, split.load_cpus) == ("0", "1-15")
    split = split_cpus(topology, None, "12-15")
    assert lists(split.server_cpus, split.load_cpus) == ("0-11", "12-15")
    with pytest.raises(ParameterError, match="load_cpus: takes every usable CPU"):
        split_cpus(topology, "auto", "0-15")


# --------------------------------------------------------------------------- sweeps


def test_thread_sweeps_scale_with_the_server_cpus() -> None:
    assert thread_sweep(1) == (1, 2, 4, 8)
    assert thread_sweep(3) == (1, 2, 4, 6, 8)
    assert thread_sweep(6) == (1, 2, 4, 8, 12)
    assert thread_sweep(32) == (1, 2, 4, 8, 16, 32, 64)
    assert auto_sweep("auto:16", 1) == (1, 2, 4, 8, 16)
    assert auto_sweep(["auto"], 8) == (1, 2, 4, 8, 16)
    assert auto_sweep([1, 2], 8) is None
    assert auto_sweep("automatic", 8) is None


def test_load_threads_fit_the_connections() -> None:
    assert fitting_load_threads(8, 400) == 8
    assert fitting_load_threads(8, 100) == 5  # 100 // 8 x 8 would open only 96 connections
    assert fitting_load_threads(8, 2) == 2
    assert fitting_load_threads(1, 7) == 1


# --------------------------------------------------------------------------- parameters and records


def test_default_profile_on_sixteen_cpus() -> None:
    params = resolve_parameters("default", campaign="t", topology=tree("16cpu-smt"))
    assert (params.server_cpus, params.load_cpus) == ("0-3,8-11", "4-7,12-15")
    assert (params.load_threads, params.load_threads_auto) == ((8,), True)
    assert params.thread_counts == (1, 2, 4, 8, 16)
    assert params.cpu_topology is not None
    assert (params.cpu_topology.server_cores, params.cpu_topology.usable_cpus) == (4, "0-15")
    ids = [config.config_id for config in expand_grid(params)]
    pool = [i for i in ids if i.startswith("thread_pool-request-queue-") and i.endswith("-c100-lt5-d1s")]
    assert pool == [f"thread_pool-request-queue-t{t}-c100-lt5-d1s" for t in (1, 2, 4, 8, 16)]
    assert "thread_pool-request-queue-t2-c400-lt8-d1s" in ids
    assert "thread_pool-request-queue-t2-c10-lt5-d1s" in ids


def test_full_profile_thread_sweeps_reach_sixteen_and_grow_beyond() -> None:
    small = resolve_parameters("full", campaign="t", topology=tree("2cpu"), check_host=False)
    large = resolve_parameters("full", campaign="t", topology=tree("64cpu-numa"), check_host=False)
    reactor = [e for e in small.servers if e.architecture == "reactor" and e.threads and len(e.threads) > 1]
    assert reactor[0].threads == (1, 2, 4, 8, 16)
    reactor = [e for e in large.servers if e.architecture == "reactor" and e.threads and len(e.threads) > 1]
    assert reactor[0].threads == (1, 2, 4, 8, 16, 32, 64)
    # Source 000's pool sweep is that source's, on any machine.
    assert large.servers[0].threads == (1, 3, 5, 7, 9, 11)


def test_explicit_cpus_are_checked_against_the_topology() -> None:
    with pytest.raises(ParameterError, match=r"server_cpus: CPU 16 is not available \(available: 0-15") as caught:
        resolve_parameters("smoke", server_cpus="16", load_cpus="1", topology=tree("16cpu-smt"))
    assert "leave server_cpus unset (auto)" in str(caught.value)
    with pytest.raises(ParameterError, match="load_cpus: overlaps server_cpus on CPU 3"):
        resolve_parameters("smoke", server_cpus="0-3", load_cpus="3-5", topology=tree("16cpu-smt"))


def test_explicit_load_threads_keep_their_checks() -> None:
    with pytest.raises(ParameterError, match="load_threads: 10 connections are not a multiple of 8"):
        resolve_parameters("default", load_threads=[8], topology=tree("16cpu-smt"))
    params = resolve_parameters("smoke", load_threads=["auto"], topology=tree("16cpu-smt"))
    assert {c.load_threads for c in expand_grid(params)} == {8}  # 16 connections: 8 threads fit


def test_a_stored_campaign_keeps_its_cpus_and_topology_on_another_machine() -> None:
    params = resolve_parameters("default", campaign="t", seed=1, topology=tree("64cpu-numa"))
    stored = params.to_dict()
    assert stored["cpu_topology"]["server_cores"] == 16
    assert stored["cpu_topology"]["numa_nodes"] == 2
    again = parameters_from_dict(stored)  # read here, on whatever machine runs the tests
    assert again == params
    assert [c.config_id for c in expand_grid(again)] == [c.config_id for c in expand_grid(params)]


def test_profiles_may_say_auto() -> None:
    ProfileValues.model_validate({"thread_counts": "auto:16", "load_threads": "auto", "server_cpus": "auto"})
    ProfileValues.model_validate({"servers": [{"architecture": "reactor", "threads": "auto"}]})
    with pytest.raises(ValueError, match="thread_counts"):
        ProfileValues.model_validate({"thread_counts": "automatic"})


# --------------------------------------------------------------------------- the dry run


def test_dry_run_over_the_sixteen_cpu_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = TREES / "16cpu-smt"
    argv = ["run", "--profile", "default", "--dry-run", "--raw-root", str(tmp_path), "--topology-root", str(root)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "CPU split: server CPUs 0-3,8-11 (4 cores, NUMA node 0), load CPUs 4-7,12-15 "
        f"(wrk -t8, 5 where the connections need fewer); from {root}/sys (16 CPUs usable)"
    )
    assert "thread_pool-request-queue-t16-c100-lt5-d1s" in lines
    assert list(tmp_path.iterdir()) == []


def test_topology_root_is_for_planning_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--profile", "smoke", "--raw-root", str(tmp_path), "--topology-root", str(TREES / "2cpu")]
    assert main(argv) == 2
    assert "topology_root: is for planning only" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
