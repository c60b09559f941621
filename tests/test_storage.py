"""Write-once raw data, commit order, refusal to overwrite, and resuming a campaign."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import threading
from pathlib import Path

import pytest

from archbench.config.params import resolve_parameters
from archbench.config.plan import PlannedTrial
from archbench.data import storage
from archbench.data.storage import (
    CampaignMismatchError,
    CampaignStore,
    IncompleteTrialError,
    StorageWriteError,
    list_campaigns,
    load_campaign,
    write_new_file,
)
from archbench.measure import runner
from archbench.measure.runner import CampaignInterrupted, TrialOutcome, run_campaign


def test_write_new_file_writes_and_leaves_no_temporary(tmp_path: Path) -> None:
    write_new_file(tmp_path / "a.txt", b"first")
    assert (tmp_path / "a.txt").read_bytes() == b"first"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_second_write_of_a_name_raises_and_keeps_the_first(tmp_path: Path) -> None:
    write_new_file(tmp_path / "a.txt", b"first")
    with pytest.raises(FileExistsError):
        write_new_file(tmp_path / "a.txt", b"second")
    assert (tmp_path / "a.txt").read_bytes() == b"first"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_a_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_link(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage.os, "link", broken_link)
    with pytest.raises(OSError, match="No space"):
        write_new_file(tmp_path / "a.txt", b"data")
    assert os.listdir(tmp_path) == []


def test_data_is_fsynced_before_it_gets_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    real_fsync, real_link = os.fsync, os.link
    monkeypatch.setattr(storage.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(storage.os, "link", lambda a, b: (events.append("link"), real_link(a, b))[1])
    write_new_file(tmp_path / "a.txt", b"data")
    assert events == ["fsync", "link", "fsync"]  # file, name, directory


def _record(trial_id: str, order_index: int = 0) -> dict:
    return {"schema": 1, "trial_id": trial_id, "order_index": order_index, "status": "ok"}


def test_commit_writes_the_json_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []
    real = storage.write_new_file
    monkeypatch.setattr(storage, "write_new_file", lambda path, data: (written.append(path.name), real(path, data)))
    CampaignStore(tmp_path).commit_trial("t-r01", {"t-r01.wrk.txt": b"w", "t-r01.server.txt": b"s"}, _record("t-r01"))
    assert written == ["t-r01.wrk.txt", "t-r01.server.txt", "t-r01.json"]


def test_commit_refuses_existing_files_and_writes_nothing(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path)
    (tmp_path / "t-r01.server.txt").write_bytes(b"old")
    with pytest.raises(FileExistsError, match="t-r01.server.txt"):
        store.commit_trial("t-r01", {"t-r01.wrk.txt": b"w", "t-r01.server.txt": b"s"}, _record("t-r01"))
    assert sorted(os.listdir(tmp_path)) == ["t-r01.server.txt"]
    assert (tmp_path / "t-r01.server.txt").read_bytes() == b"old"


def test_commit_rejects_files_of_another_trial(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a file of trial t-r01"):
        CampaignStore(tmp_path).commit_trial("t-r01", {"t-r02.wrk.txt": b"w"}, _record("t-r01"))


def test_sigint_during_commit_waits_for_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = storage.write_new_file

    def write_then_interrupt(path: Path, data: bytes) -> None:
        real(path, data)
        if path.name.endswith(".wrk.txt"):
            # Lands between the output files and the record. Sent to this thread, not the process: a process-wide
            # signal may be taken by another thread (pytest-xdist's), and Python would run the handler only after
            # the commit had restored the previous one.
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    monkeypatch.setattr(storage, "write_new_file", write_then_interrupt)
    # The commit acts on a held SIGINT as the handler before it would: Python's default, which raises. An earlier
    # test in the same pytest-xdist worker may have left another (seen once in CI), so the test sets it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    store = CampaignStore(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        store.commit_trial("t-r01", {"t-r01.wrk.txt": b"w", "t-r01.server.txt": b"s"}, _record("t-r01"))
    assert sorted(os.listdir(tmp_path)) == ["t-r01.json", "t-r01.server.txt", "t-r01.wrk.txt"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _full_disk_at(suffix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write of a file whose name ends with `suffix` fails as on a full disk."""
    real = storage.write_new_file

    def write(path: Path, data: bytes) -> None:
        if path.name.endswith(suffix):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data)

    monkeypatch.setattr(storage, "write_new_file", write)


def test_a_full_disk_during_a_commit_names_the_path_and_rolls_the_trial_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "c").mkdir()
    _full_disk_at(".json", monkeypatch)
    store = CampaignStore(tmp_path / "c")
    with pytest.raises(StorageWriteError) as error:
        store.commit_trial("t-r01", {"t-r01.wrk.txt": b"w", "t-r01.server.txt": b"s"}, _record("t-r01"))
    assert str(error.value) == f"campaign c: cannot write {tmp_path / 'c' / 't-r01.json'}: No space left on device"
    assert os.listdir(tmp_path / "c") == []  # no output without its record: the campaign resumes cleanly
    assert store.incomplete_trials() == {}


def test_a_full_disk_at_the_start_leaves_no_campaign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _full_disk_at("campaign.json", monkeypatch)
    with pytest.raises(StorageWriteError, match=r"^campaign c: cannot write .*/c/campaign.json: No space left"):
        CampaignStore(tmp_path / "c").create({"campaign": "c"})
    assert not (tmp_path / "c").exists()


def test_finished_and_incomplete_trials(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path)
    store.create({"campaign": "c"})
    store.commit_trial("a-r01", {"a-r01.wrk.txt": b"w"}, _record("a-r01"))
    (tmp_path / "b-r01.wrk.txt").write_bytes(b"orphan")  # a crash after the output, before the record
    (tmp_path / ".tmp-x.json.123").write_bytes(b"")  # a temporary never linked
    assert store.finished_trial_ids() == {"a-r01"}
    assert store.incomplete_trials() == {"b-r01": ["b-r01.wrk.txt"]}
    with pytest.raises(IncompleteTrialError, match=r"b-r01\.wrk\.txt.*never overwritten"):
        store.check_no_incomplete_trials()


def test_campaign_json_is_written_once(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path / "c")
    store.create({"campaign": "c", "seed": 1})
    with pytest.raises(FileExistsError):
        store.create({"campaign": "c", "seed": 2})
    assert store.read_meta() == {"campaign": "c", "seed": 1}


def test_load_and_list_campaigns(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path / "c1")
    store.create({"campaign": "c1"})
    store.commit_trial("b-r01", {}, _record("b-r01", order_index=0))
    store.commit_trial("a-r01", {}, _record("a-r01", order_index=1))
    (tmp_path / "not-a-campaign").mkdir()
    campaign = load_campaign(tmp_path / "c1")
    assert campaign.name == "c1"
    assert campaign.path == tmp_path / "c1"
    assert [t["trial_id"] for t in campaign.trials] == ["b-r01", "a-r01"]  # execution order
    assert list_campaigns(tmp_path) == ["c1"]
    assert list_campaigns(tmp_path / "absent") == []
    with pytest.raises(FileNotFoundError, match="no campaign.json"):
        load_campaign(tmp_path / "not-a-campaign")


# --------------------------------------------------------------------------- resuming (no processes)


class FakeTrials:
    """Stands in for runner.run_trial: records what ran; can be told to be interrupted."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.ran: list[str] = []
        self.interrupt_at = interrupt_at

    def __call__(self, planned: PlannedTrial, params, provenance, placement=None) -> TrialOutcome:
        if self.interrupt_at is not None and len(self.ran) == self.interrupt_at:
            raise KeyboardInterrupt
        self.ran.append(planned.trial_id)
        record = {
            "schema": 1,
            "trial_id": planned.trial_id,
            "config_id": planned.config_id,
            "order_index": planned.order_index,
            "warmup": planned.warmup,
            "status": "ok",
            "failure_reason": None,
        }
        return TrialOutcome(
            record=record, outputs={f"{planned.trial_id}.wrk.txt": b"", f"{planned.trial_id}.server.txt": b""}
        )


@pytest.fixture
def no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "preflight", lambda params, plan: None)
    monkeypatch.setattr(runner, "collect_provenance", lambda build_dir: {"hostname": "test"})


def _params(tmp_path: Path, **overrides):
    values = dict(campaign="resume", raw_root=str(tmp_path), seed=11, servers=["blocking", "thread_pool"])
    values.update(overrides)
    return resolve_parameters("smoke", check_host=False, **values)


def test_resume_runs_each_trial_exactly_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes) -> None:
    params = _params(tmp_path)
    first = FakeTrials(interrupt_at=4)
    monkeypatch.setattr(runner, "run_trial", first)
    with pytest.raises(CampaignInterrupted, match="4 of 9 trials are finished and kept.*run the same command again"):
        run_campaign(params, stream=io.StringIO())

    second = FakeTrials()
    monkeypatch.setattr(runner, "run_trial", second)
    result = run_campaign(params, stream=io.StringIO())
    assert (result.planned, result.skipped, result.ran) == (9, 4, 5)

    meta = json.loads((tmp_path / "resume" / "campaign.json").read_text())
    assert first.ran + second.ran == meta["plan"]  # in plan order, nothing twice, nothing missing
    assert sorted(p.name for p in (tmp_path / "resume").glob("*.json") if p.name != "campaign.json") == sorted(
        f"{t}.json" for t in meta["plan"]
    )

    third = FakeTrials()
    monkeypatch.setattr(runner, "run_trial", third)
    assert run_campaign(params, stream=io.StringIO()).ran == 0
    assert third.ran == []


def test_rerun_with_other_parameters_fails_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes
) -> None:
    monkeypatch.setattr(runner, "run_trial", FakeTrials())
    run_campaign(_params(tmp_path), stream=io.StringIO())
    with pytest.raises(
        CampaignMismatchError,
        match=r"different parameters: duration_s \(campaign has 1, now 2\); "
        r"trials \(campaign has 2, now 3\)",
    ):
        run_campaign(_params(tmp_path, duration_s=2, trials=3), stream=io.StringIO())


def test_rerun_without_seed_uses_the_recorded_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes
) -> None:
    monkeypatch.setattr(runner, "run_trial", FakeTrials())
    run_campaign(_params(tmp_path, seed=None), stream=io.StringIO())
    meta = json.loads((tmp_path / "resume" / "campaign.json").read_text())
    assert isinstance(meta["seed"], int) and meta["parameters"]["seed"] == meta["seed"]
    assert run_campaign(_params(tmp_path, seed=None), stream=io.StringIO()).ran == 0


def test_campaign_refuses_to_start_over_orphan_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes
) -> None:
    monkeypatch.setattr(runner, "run_trial", FakeTrials(interrupt_at=1))
    with pytest.raises(CampaignInterrupted):
        run_campaign(_params(tmp_path), stream=io.StringIO())
    meta = json.loads((tmp_path / "resume" / "campaign.json").read_text())
    orphan = tmp_path / "resume" / f"{meta['plan'][1]}.wrk.txt"
    orphan.write_bytes(b"partial")
    with pytest.raises(IncompleteTrialError, match=orphan.name):
        run_campaign(_params(tmp_path), stream=io.StringIO())
    assert orphan.read_bytes() == b"partial"


def test_campaign_json_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_processes) -> None:
    monkeypatch.setattr(runner, "run_trial", FakeTrials())
    params = _params(tmp_path)
    run_campaign(params, stream=io.StringIO())
    meta = json.loads((tmp_path / "resume" / "campaign.json").read_text())
    assert set(meta) == {
        "schema",
        "campaign",
        "created_at",
        "profile",
        "parameters",
        "seed",
        "plan",
        "configs",
        "provenance",
    }
    assert (meta["schema"], meta["campaign"], meta["profile"], meta["seed"]) == (1, "resume", "smoke", 11)
    assert meta["parameters"] == params.to_dict()
    assert meta["plan"][:3] == [t for t in meta["plan"] if t.endswith("-warmup")]
    assert meta["configs"]["blocking-c16-lt1-d1s"]["architecture"] == "blocking"
