"""Placement ssh: the hosts inventory, the remote commands, combining clients, and a real multi-host run
(three network namespaces, each with its own sshd, driven from a fourth by the runner)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from archbench.analyze.histogram import LatencyHistogram, bucket_of, lower_edge, upper_edge
from archbench.analyze.trials import trials_frame
from archbench.config.hosts import InventoryError, load_inventory
from archbench.config.params import ParameterError, resolve_parameters
from archbench.data.records import TrialRecord
from archbench.data.storage import load_campaign
from archbench.measure.ssh_placement import (
    START_LINE,
    SshPlacement,
    SshPlacementError,
    combine,
    proc_cpu_seconds,
    remote_shell,
)
from archbench.parse import parse_file

ROOT = Path(__file__).resolve().parents[1]
HOSTS = ROOT / "tests" / "fixtures" / "hosts"
SSHD = Path("/usr/sbin/sshd")


def write_inventory(tmp_path: Path, body: str) -> Path:
    (tmp_path / "key").write_text("not a key\n")
    path = tmp_path / "hosts.toml"
    path.write_text(body)
    return path


HOST = 'address = "192.0.2.1"\nuser = "u"\nkey = "key"\nworkdir = "/tmp/w"\n'


# --------------------------------------------------------------------------- the inventory


def test_example_inventory_parses() -> None:
    inventory = load_inventory(HOSTS / "three-hosts.toml")
    assert inventory.server.name == "server"
    assert [h.name for h in inventory.clients] == ["client1", "client2"]
    assert inventory.clients[1].port == 2222 and inventory.clients[0].port == 22
    assert inventory.server.key == (HOSTS / "keys" / "example_ed25519").resolve()
    assert inventory.server.cpu_numbers == (0, 1, 2, 3)


def test_overlapping_cpus_on_one_address_are_refused() -> None:
    with pytest.raises(InventoryError, match=r"same machine \(192.0.2.10\).*overlap on 1"):
        load_inventory(HOSTS / "overlapping-cpus.toml")


def test_client_hosts_on_one_machine_may_share_cpus(tmp_path: Path) -> None:
    body = "".join(
        f'[hosts.{name}]\n{HOST}role = "{role}"\ncpus = "{cpus}"\n\n'
        for name, role, cpus in (("s", "server", "0"), ("c1", "client", "1"), ("c2", "client", "1"))
    )
    assert [h.cpus for h in load_inventory(write_inventory(tmp_path, body)).hosts] == ["0", "1", "1"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "no \\[hosts.NAME\\] tables"),
        (f'[hosts.a]\n{HOST}role = "server"\ncpus = "0"\n', 'no host has role = "client"'),
        (f'[hosts.a]\n{HOST}role = "client"\ncpus = "0"\n', 'exactly one host needs role = "server"'),
        (f'[hosts.a]\n{HOST}role = "boss"\ncpus = "0"\n', "role 'boss' is not one of server, client"),
        (f'[hosts.a]\n{HOST}role = "server"\ncpus = "x"\n', "host 'a': cpus: 'x' is not a CPU list"),
        (f'[hosts.a]\n{HOST}role = "server"\ncpus = "0"\nport = 0\n', "port 0 is not a TCP port"),
        (f'[hosts.a]\n{HOST}role = "server"\ncpus = "0"\nshell = "x"\n', "unknown key\\(s\\) shell"),
        (f'[hosts.a]\n{HOST}role = "server"\n', "missing cpus"),
        (f'[hosts."a b"]\n{HOST}role = "server"\ncpus = "0"\n', "only letters, digits"),
        (f'[hosts.a]\n{HOST.replace("/tmp/w", "w")}role = "server"\ncpus = "0"\n', "must be an absolute path"),
        (
            "[hosts.a]\n" + HOST.replace('key = "key"', 'key = "nokey"') + 'role = "server"\ncpus = "0"\n',
            "key .*nokey does",
        ),
        ("[hosts\n", "not readable TOML"),
    ],
)
def test_bad_inventories_name_the_problem(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(InventoryError, match=message):
        load_inventory(write_inventory(tmp_path, body))


def test_missing_inventory_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(InventoryError, match="does not exist; see tests/fixtures/hosts"):
        load_inventory(tmp_path / "absent.toml")


def test_unknown_host_is_named() -> None:
    inventory = load_inventory(HOSTS / "three-hosts.toml")
    with pytest.raises(InventoryError, match="unknown host 'nope' \\(known: server, client1, client2\\)"):
        inventory.host("nope")


# --------------------------------------------------------------------------- parameters


def test_ssh_needs_hosts_and_hosts_needs_ssh() -> None:
    with pytest.raises(ParameterError, match="hosts: placement ssh needs a hosts inventory"):
        resolve_parameters("smoke", placement="ssh")
    with pytest.raises(ParameterError, match="hosts: a hosts inventory needs placement ssh"):
        resolve_parameters("smoke", hosts=str(HOSTS / "three-hosts.toml"))
    with pytest.raises(ParameterError, match="hosts: .*overlap"):
        resolve_parameters("smoke", placement="ssh", hosts=str(HOSTS / "overlapping-cpus.toml"))
    params = resolve_parameters("smoke", placement="ssh", hosts=str(HOSTS / "three-hosts.toml"))
    assert params.placement == "ssh" and params.hosts == str(HOSTS / "three-hosts.toml")
    assert params.to_dict()["hosts"] == params.hosts


def test_refused_ssh_fails_before_any_trial(tmp_path: Path) -> None:
    # Port 1 on loopback: nothing listens, so ssh is refused at once; the error names the host and the fix.
    body = "".join(
        f'[hosts.{name}]\naddress = "127.0.0.1"\nport = 1\nuser = "u"\nkey = "key"\nworkdir = "/tmp/w"\n'
        f'role = "{role}"\ncpus = "{cpus}"\n\n'
        for name, role, cpus in (("s", "server", "0"), ("c", "client", "1"))
    )
    hosts = write_inventory(tmp_path, body)
    params = resolve_parameters("smoke", check_host=False, placement="ssh", hosts=str(hosts))
    placement = SshPlacement.from_params(params)
    try:
        with pytest.raises(SshPlacementError, match="host s: ssh to u@127.0.0.1 port 1 failed .*check the host's"):
            placement.set_up()
    finally:
        placement.tear_down()
    assert placement.work is None


# --------------------------------------------------------------------------- commands and results


def test_remote_shell_quotes_and_records_the_pid() -> None:
    command = remote_shell(["taskset", "-c", "0", "bin/epoll", "--response", "a b"], workdir="/tmp/w x")
    assert shlex.split(command) == [
        "sh", "-c", "cd '/tmp/w x' && echo \"archbench-pid $$\" && exec taskset -c 0 bin/epoll --response 'a b'",
    ]  # fmt: skip
    printed = subprocess.run(["sh", "-c", command.replace("exec taskset", "exec echo taskset")], cwd="/",
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert printed.returncode != 0 and "/tmp/w x" in printed.stderr  # cd first: no such directory, no exec


def test_barrier_sleeps_until_the_start_instant() -> None:
    start_ns = time.time_ns() + 300_000_000
    script = remote_shell(["echo", "ran"], start_ns=start_ns)
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=10, check=True)
    assert done.stdout == "ran\n"
    started = int(done.stderr.strip().removeprefix(START_LINE))
    assert start_ns <= started < start_ns + 200_000_000


def test_combine_sums_and_keeps_latency_per_host() -> None:
    hosts = [
        {"requests_per_s": 100.5, "requests": 101, "errors": 1, "started_at_ns": 10_000_000,
         "latency_percentiles_s": {"99": 0.002}},
        {"requests_per_s": 200.25, "requests": 200, "errors": 0, "started_at_ns": 13_000_000,
         "latency_percentiles_s": {"99": 0.004}},
    ]  # fmt: skip
    assert combine(hosts) == {
        "clients": 2, "requests_per_s": 300.75, "requests": 301, "errors": 1, "start_skew_s": 0.003,
    }  # fmt: skip
    hosts[0]["started_at_ns"] = None
    assert combine(hosts)["start_skew_s"] is None


def test_proc_cpu_seconds() -> None:
    stat = "1234 (a b) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 2 0 5 0 0\n100\n"
    assert proc_cpu_seconds(stat) == (2.57, 0.53)
    assert proc_cpu_seconds("garbage") is None


# --------------------------------------------------------------------------- the real multi-host test


def sshd_or_skip() -> None:
    if os.geteuid() != 0:
        pytest.skip("the multi-host test creates network namespaces: run it as root (make test does in CI)")
    if shutil.which("ip") is None:
        pytest.skip("`ip` (iproute2) is missing")
    if not SSHD.is_file() or shutil.which("ssh-keygen") is None or shutil.which("ssh") is None:
        pytest.skip("sshd, ssh or ssh-keygen missing: apt-get install openssh-server openssh-client")
    if not (ROOT / "build" / "bin" / "blocking").is_file() or shutil.which("wrk") is None:
        pytest.skip("needs build/bin/blocking (make servers) and wrk")


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


class Network:
    """Namespaces <p>-ctl (the runner, with a bridge), <p>-srv, <p>-c1, <p>-c2, each joined to the bridge."""

    def __init__(self, tmp: Path) -> None:
        self.prefix = f"abssh{os.getpid() % 100000}"
        self.subnet = f"10.214.{os.getpid() % 250}"
        self.tmp = tmp
        self.namespaces: list[str] = []
        self.sshds: list[subprocess.Popen[bytes]] = []

    def ns(self, role: str) -> str:
        return f"{self.prefix}-{role}"

    def build(self) -> None:
        ctl = self.ns("ctl")
        for role in ("ctl", "srv", "c1", "c2"):
            ip("netns", "add", self.ns(role))
            self.namespaces.append(self.ns(role))
            ip("-n", self.ns(role), "link", "set", "lo", "up")
        ip("-n", ctl, "link", "add", "br0", "type", "bridge")
        ip("-n", ctl, "address", "add", f"{self.subnet}.254/24", "dev", "br0")
        ip("-n", ctl, "link", "set", "br0", "up")
        for number, role in ((1, "srv"), (2, "c1"), (3, "c2")):
            ip("link", "add", "eth0", "netns", self.ns(role), "type", "veth", "peer", "name", f"v{role}", "netns", ctl)
            ip("-n", ctl, "link", "set", f"v{role}", "master", "br0", "up")
            ip("-n", self.ns(role), "address", "add", f"{self.subnet}.{number}/24", "dev", "eth0")
            ip("-n", self.ns(role), "link", "set", "eth0", "up")

    def start_sshd(self, role: str, number: int) -> None:
        directory = self.tmp / f"sshd-{role}"
        directory.mkdir()
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(directory / "host_key")], check=True)
        shutil.copy(self.tmp / "id_ed25519.pub", directory / "authorized_keys")
        config = directory / "sshd_config"
        config.write_text(
            f"Port 22\nListenAddress {self.subnet}.{number}\nHostKey {directory / 'host_key'}\n"
            f"AuthorizedKeysFile {directory / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
            f"PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            f"PidFile {directory / 'sshd.pid'}\nSubsystem sftp internal-sftp\n"
        )
        self.sshds.append(
            subprocess.Popen(
                ["ip", "netns", "exec", self.ns(role), str(SSHD), "-D", "-e", "-f", str(config)],
                stdout=subprocess.DEVNULL,
                stderr=open(directory / "log", "wb"),  # noqa: SIM115 - closed with the process
            )
        )

    def wait_for_sshd(self, number: int) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            probe = subprocess.run(
                ["ip", "netns", "exec", self.ns("ctl"), "bash", "-c", f"exec 3<>/dev/tcp/{self.subnet}.{number}/22"],
                capture_output=True, timeout=5, check=False,
            )  # fmt: skip
            if probe.returncode == 0:
                return
            time.sleep(0.1)
        raise AssertionError(f"sshd on {self.subnet}.{number} did not start")

    def tear_down(self) -> None:
        for sshd in self.sshds:
            sshd.terminate()
            try:
                sshd.wait(5)
            except subprocess.TimeoutExpired:
                sshd.kill()
                sshd.wait(5)
        for name in reversed(self.namespaces):
            # Killing what still runs inside (a server left by a failed test) before the namespace goes.
            pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, check=False)
            for pid in pids.stdout.split():
                subprocess.run(["kill", "-KILL", pid], check=False)
            subprocess.run(["ip", "netns", "delete", name], check=False, capture_output=True)


@pytest.fixture
def network(tmp_path: Path) -> Iterator[Network]:
    sshd_or_skip()
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "id_ed25519")], check=True)
    net = Network(tmp_path)
    try:
        net.build()
        for number, role in ((1, "srv"), (2, "c1"), (3, "c2")):
            net.start_sshd(role, number)
        for number in (1, 2, 3):
            net.wait_for_sshd(number)
        yield net
    finally:
        net.tear_down()


def inventory_for(net: Network, cpus: tuple[str, str, str] = ("0", "1", "1")) -> Path:
    body = ""
    for (name, role, number), cpu in zip(
        (("srv", "server", 1), ("c1", "client", 2), ("c2", "client", 3)), cpus, strict=True
    ):
        workdir = net.tmp / f"work-{name}"
        body += (
            f'[hosts.{name}]\naddress = "{net.subnet}.{number}"\nuser = "root"\nkey = "{net.tmp / "id_ed25519"}"\n'
            f'role = "{role}"\ncpus = "{cpu}"\nworkdir = "{workdir}"\n\n'
        )
    path = net.tmp / "hosts.toml"
    path.write_text(body)
    return path


def run_in_controller_argv(net: Network, hosts: Path, raw_root: Path, *extra: str) -> list[str]:
    return [
        "ip", "netns", "exec", net.ns("ctl"), sys.executable, "-m", "archbench", "run",
        "--profile", "smoke", "--campaign", "ssh-test", "--raw-root", str(raw_root),
        "--servers", "blocking", "--connection-counts", "4", "--thread-counts", "1", "--load-threads", "1",
        "--pipeline-depths", "1", "--duration-s", "1", "--trials", "1", "--no-warmup", "--seed", "7",
        "--build-dir", str(ROOT / "build"), "--placement", "ssh", "--hosts", str(hosts), *extra,
    ]  # fmt: skip


def run_in_controller(net: Network, hosts: Path, raw_root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = run_in_controller_argv(net, hosts, raw_root, *extra)
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)


@pytest.mark.slow
@pytest.mark.integration
def test_multi_host_campaign_through_ssh(network: Network, tmp_path: Path) -> None:
    raw_root = tmp_path / "raw"
    # One machine: the server's CPU apart from the clients', which may share theirs.
    shared_machine_cpus = ("0", "1", "1")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("server and client hosts on one machine need two CPUs (server and load CPUs may not overlap)")
    done = run_in_controller(network, inventory_for(network, shared_machine_cpus), raw_root)
    assert done.returncode == 0, done.stderr
    campaign = raw_root / "ssh-test"
    records = [json.loads(p.read_text()) for p in campaign.glob("*.json") if p.name != "campaign.json"]
    assert len(records) == 1
    record = records[0]
    assert record["status"] == "ok", record["failure_reason"]
    TrialRecord.model_validate(record)
    load = record["load"]
    assert [h["host"] for h in load["hosts"]] == ["c1", "c2"]
    assert load["combined"]["requests_per_s"] == pytest.approx(sum(h["requests_per_s"] for h in load["hosts"]))
    assert load["combined"]["requests"] == sum(h["requests"] for h in load["hosts"]) > 0
    assert load["combined"]["start_skew_s"] is not None and load["combined"]["start_skew_s"] < 0.5
    for host in load["hosts"]:
        assert host["latency_percentiles_s"]["99"] is not None
        assert (campaign / host["output_file"]).read_text().startswith("Running 1s test @ http://")
    # The server also answered requests still in flight when each wrk stopped counting.
    assert record["server"]["stats"]["requests_served"] >= load["combined"]["requests"]
    assert record["server"]["cpu_source"] == "proc" and record["server"]["host"] == "srv"
    placement = record["placement"]
    assert placement["kind"] == "ssh" and placement["server_address"] == f"{network.subnet}.1"
    assert all(h["kernel"] for h in placement["hosts"])
    # No server is left running on the server host (only its sshd), and a re-run overwrites nothing.
    pids = subprocess.run(["ip", "netns", "pids", network.ns("srv")], capture_output=True, text=True).stdout.split()
    assert {Path(f"/proc/{pid}/comm").read_text().strip() for pid in pids} == {"sshd"}
    before = {p.name: p.read_bytes() for p in campaign.iterdir()}
    again = run_in_controller(network, inventory_for(network, shared_machine_cpus), raw_root)
    assert again.returncode == 0, again.stderr
    assert {p.name: p.read_bytes() for p in campaign.iterdir()} == before


@pytest.mark.slow
@pytest.mark.integration
def test_preflight_refuses_cpus_the_host_lacks(network: Network, tmp_path: Path) -> None:
    hosts = inventory_for(network)
    hosts.write_text(hosts.read_text().replace('cpus = "0"', 'cpus = "4095"', 1))
    done = run_in_controller(network, hosts, tmp_path / "raw")
    assert done.returncode == 1
    assert "host srv: cpus 4095 include 4095, which that host does not have" in done.stderr
    assert not (tmp_path / "raw" / "ssh-test").exists() or not list((tmp_path / "raw" / "ssh-test").glob("*-*.json"))


@pytest.mark.slow
@pytest.mark.integration
def test_lost_client_host_fails_its_trials_and_the_campaign_goes_on(network: Network, tmp_path: Path) -> None:
    raw_root = tmp_path / "raw"
    campaign = raw_root / "ssh-test"
    runner = subprocess.Popen(
        run_in_controller_argv(network, inventory_for(network), raw_root, "--trials", "2"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (campaign / "campaign.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        # The host goes away: its sshd and every session (the runner's master connection) die at once.
        for pid in subprocess.run(
            ["ip", "netns", "pids", network.ns("c2")], capture_output=True, text=True
        ).stdout.split():
            subprocess.run(["kill", "-KILL", pid], check=False)
        _, stderr = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    records = [json.loads(p.read_text()) for p in campaign.glob("*.json") if p.name != "campaign.json"]
    assert len(records) == 2, stderr  # both trials ran and were recorded, neither dropped
    last = max(records, key=lambda r: r["order_index"])
    assert last["status"] == "failed"
    assert "client host c2: status 255" in last["failure_reason"]
    pids = subprocess.run(["ip", "netns", "pids", network.ns("srv")], capture_output=True, text=True).stdout.split()
    assert {Path(f"/proc/{pid}/comm").read_text().strip() for pid in pids} == {"sshd"}


@pytest.mark.slow
@pytest.mark.integration
def test_two_client_hosts_latency_is_their_summed_histogram(network: Network, tmp_path: Path) -> None:
    # Each client host's wrk dumps its histogram (its script written to that host's workdir by set_up); the
    # trial's latency columns come from their sum, and a percentile of the sum lies between the hosts' own.
    if (os.cpu_count() or 1) < 2:
        pytest.skip("server and client hosts on one machine need two CPUs (server and load CPUs may not overlap)")
    raw_root = tmp_path / "raw"
    # epoll serves every connection at once; blocking (the other tests') may leave one host's all unserved.
    done = run_in_controller(network, inventory_for(network, ("0", "1", "1")), raw_root, "--servers", "epoll")
    assert done.returncode == 0, done.stderr
    campaign = raw_root / "ssh-test"
    record = next(json.loads(p.read_text()) for p in campaign.glob("*.json") if p.name != "campaign.json")
    assert record["status"] == "ok", record["failure_reason"]
    for host in record["load"]["hosts"]:
        assert host["argv"][-1].count(f"{network.tmp}/work-{host['host']}/pipeline.lua") == 1
    hosts = [parse_file(campaign / host["output_file"]).get("latency_histogram") for host in record["load"]["hosts"]]
    assert all(h is not None and h["count"] > 0 for h in hosts)
    own = [LatencyHistogram.from_wrk(h) for h in hosts]
    row = trials_frame(load_campaign(campaign)).iloc[0]
    assert row["latency_source"] == "histogram" and row["latency_hosts"] == 2
    for q, column in ((50, "latency_p50_s"), (99, "latency_p99_s"), (99.9, "latency_p99_9_s")):
        low, high = min(h.percentile(q) for h in own), max(h.percentile(q) for h in own)
        # One bucket of slack above: a host's percentile in its top bucket is capped at that host's maximum.
        slack = upper_edge(bucket_of(int(high))) - lower_edge(bucket_of(int(high)))
        assert low <= round(row[column] * 1e9) <= high + slack, column
    assert round(row["latency_max_s"] * 1e9) == max(h.percentile(100) for h in own)
