"""Saving: atomic, exclusive, file modes kept, sidecars never fail a saved report."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

import heta_nb
from heta_nb import ReportStore
from heta_nb._util.atomic import write_atomically
from heta_nb.errors import ReportExistsError, StoreError
from heta_nb.store import SUMMARY_FILE, ReportStoreWarning, report_key
from heta_nb.testing import synthetic_report

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes and symlinks")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


class _Umask:
    def __init__(self, mask: int) -> None:
        self.mask = mask
        self.old = 0

    def __enter__(self) -> None:
        self.old = os.umask(self.mask)

    def __exit__(self, *exc: object) -> None:
        os.umask(self.old)


# -- 2. two processes saving one key -------------------------------------------------

_WORKER = textwrap.dedent(
    """
    import os, sys, time
    from heta_nb import ReportStore
    from heta_nb.errors import ReportExistsError
    from heta_nb.model.io import encode_report
    from heta_nb.store import report_key
    from heta_nb.testing import synthetic_report

    root, report_id, signals, trials = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    report = synthetic_report(300, report_id=report_id, knowledge_base_name="kb")
    report = report.replace(report_key=report_key("kb", report_id))
    encoded = encode_report(report)  # ready before the start signal: both save at once
    open(os.path.join(signals, "ready-" + report_id.replace(" ", "_")), "w").close()
    for trial in range(trials):
        go = os.path.join(signals, f"go-{trial}")
        deadline = time.monotonic() + 60
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.0002)
        try:
            ReportStore(os.path.join(root, str(trial))).save(report, encoded=encoded)
            outcome = "saved"
        except ReportExistsError as exc:
            outcome = "exists " + str(exc)
        except Exception as exc:
            outcome = f"error {type(exc).__name__}: {exc}"
        name = os.path.join(signals, f"result-{trial}-{report_id.replace(' ', '_')}")
        with open(name + ".tmp", "w") as handle:
            handle.write(outcome)
        os.replace(name + ".tmp", name)
    """
)


def _wait_for(paths: list[Path], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        if time.monotonic() > deadline:
            raise AssertionError(f"workers did not answer: {[str(p) for p in paths if not p.exists()]}")
        time.sleep(0.005)


def test_colliding_ids_are_not_silently_overwritten(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    first = synthetic_report(2, report_id="Run 1", knowledge_base_name="kb")
    second = synthetic_report(3, report_id="run_1", knowledge_base_name="kb")
    store.save(first)
    with pytest.raises(ReportExistsError, match="already holds report 'Run 1'"):
        store.save(second)
    with pytest.raises(ReportExistsError, match="already holds this report"):
        store.save(first)
    assert len(store.load("kb", "Run 1").case_results) == 6
    store.save(second, overwrite=True)
    assert store.load("kb", "RUN  1").report_id == "run_1"


def test_atomic_write_keeps_the_old_report_on_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ReportStore(tmp_path)
    old = synthetic_report(2, report_id="r", knowledge_base_name="kb")
    key = store.save(old)
    before = (tmp_path / key).read_bytes()

    def crash(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(StoreError, match="No space left on device"):
        store.save(synthetic_report(5, report_id="r", knowledge_base_name="kb"), overwrite=True)
    monkeypatch.undo()
    assert (tmp_path / key).read_bytes() == before
    assert not [p for p in tmp_path.rglob("*.tmp")], "temporary files must be cleaned up"
    assert store.load("kb", "r") == old.replace(report_key=key)


# -- 3. the sidecar cannot be written, the report was ----------------------------------


def test_a_sidecar_that_cannot_be_written_does_not_fail_a_saved_report(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    report = synthetic_report(2, report_id="r", knowledge_base_name="kb")
    key = report_key("kb", "r")
    (tmp_path / key).with_name(SUMMARY_FILE).mkdir(parents=True)  # a file cannot be written there
    with pytest.warns(ReportStoreWarning, match=f"saved {key}, but cannot write .*{SUMMARY_FILE}"):
        assert store.save(report) == key
    assert store.load("kb", "r") == report.replace(report_key=key)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [s.report_id for s in store.summaries()] == ["r"]  # parsed from the report
    with pytest.raises(ReportExistsError, match="already holds this report"):
        store.save(report)
    assert not list(tmp_path.rglob("*.tmp"))


# -- 4. long file names ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["x" * 250, "\N{LATIN SMALL LETTER E WITH ACUTE}" * 127, "y" * 255])
@pytest.mark.parametrize("exclusive", [False, True], ids=["replace", "exclusive"])
def test_atomic_write_of_a_name_that_fits_succeeds(tmp_path: Path, name: str, exclusive: bool) -> None:
    assert len(os.fsencode(name)) <= 255
    write_atomically(tmp_path / name, b"one", exclusive=exclusive)
    if not exclusive:
        write_atomically(tmp_path / name, b"two")
    assert (tmp_path / name).read_bytes() == (b"one" if exclusive else b"two")
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left


# -- 1. file modes -------------------------------------------------------------------


@POSIX_ONLY
def test_new_files_get_the_mode_open_would_give(tmp_path: Path) -> None:
    for mask in (0o022, 0o077, 0o002):
        expected, folder = 0o666 & ~mask, tmp_path / oct(mask)
        with _Umask(mask):
            folder.mkdir()
            plain = folder / "plain.txt"
            plain.write_text("x")
            written = write_atomically(folder / "atomic.html", b"<html>")
            key = ReportStore(folder / "store").save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
        assert _mode(plain) == expected, oct(mask)
        assert _mode(written) == expected, oct(mask)
        assert _mode(folder / "store" / key) == expected, oct(mask)
        assert _mode(folder / "store" / key.replace("report.json", SUMMARY_FILE)) == expected, oct(mask)


@POSIX_ONLY
@pytest.mark.parametrize("mask", [0o022, 0o077])
@pytest.mark.parametrize("existing", [0o644, 0o640, 0o664])
def test_replacing_a_file_keeps_its_mode(tmp_path: Path, mask: int, existing: int) -> None:
    """Under umask 022 or 077, a 0644/0640/0664 file stays so when replaced."""
    target = tmp_path / "shared.html"
    target.write_bytes(b"old")
    os.chmod(target, existing)
    store = ReportStore(tmp_path / "store")
    report = synthetic_report(2, report_id="r", knowledge_base_name="kb")
    key = store.save(report)
    paths = [tmp_path / "store" / key, tmp_path / "store" / key.replace("report.json", SUMMARY_FILE)]
    for path in paths:
        os.chmod(path, existing)
    with _Umask(mask):
        write_atomically(target, [b"new ", b"content"])
        store.save(synthetic_report(3, report_id="r", knowledge_base_name="kb"), overwrite=True)
    assert target.read_bytes() == b"new content"
    assert _mode(target) == existing
    assert [_mode(p) for p in paths] == [existing, existing]
    assert len(store.load("kb", "r").case_results) == 9


def test_two_processes_saving_one_key_one_wins(tmp_path: Path) -> None:
    root, signals = tmp_path / "stores", tmp_path / "signals"
    signals.mkdir()
    trials = 8
    ids = ["Run A", "run_a"]  # different reports, the same slug
    package_parent = str(Path(heta_nb.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")])}
    workers = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(root), rid, str(signals), str(trials)], env=env)
        for rid in ids
    ]
    try:
        _wait_for([signals / f"ready-{rid.replace(' ', '_')}" for rid in ids])
        for trial in range(trials):
            (signals / f"go-{trial}").touch()  # both start together
            results = [signals / f"result-{trial}-{rid.replace(' ', '_')}" for rid in ids]
            _wait_for(results)
            outcomes = {rid: path.read_text() for rid, path in zip(ids, results)}
            saved = [rid for rid, outcome in outcomes.items() if outcome == "saved"]
            lost = [outcome for outcome in outcomes.values() if outcome != "saved"]
            assert len(saved) == 1, f"trial {trial}: {outcomes}"
            assert lost[0].startswith("exists ") and f"already holds report {saved[0]!r}" in lost[0], outcomes
            store = ReportStore(root / str(trial))
            key = report_key("kb", "run a")
            on_disk = json.loads((root / str(trial) / key).read_bytes())
            sidecar = json.loads((root / str(trial) / key.replace("report.json", SUMMARY_FILE)).read_bytes())
            assert on_disk["report_id"] == sidecar["report_id"] == saved[0]
            assert on_disk["started_at"] == sidecar["started_at"]
            assert list(store.list()["report_id"]) == saved
            assert store.load("kb", "run a").report_id == saved[0]
            assert not list((root / str(trial)).rglob("*.tmp")) and not list((root / str(trial)).rglob("*.lock"))
    except BaseException:
        for worker in workers:  # do not leave them waiting for the next start signal
            worker.kill()
            worker.wait()
        raise
    assert [w.wait(timeout=60) for w in workers] == [0, 0]


def test_exclusive_create_without_hard_links_uses_a_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "Operation not permitted")  # what vfat answers

    monkeypatch.setattr(os, "link", no_links)
    store = ReportStore(tmp_path)
    report = synthetic_report(2, report_id="r", knowledge_base_name="kb")
    path = tmp_path / report_key("kb", "r")
    lock = path.with_name(".report.json.lock")
    lock.parent.mkdir(parents=True)
    lock.touch()  # another writer is creating this report right now
    with pytest.raises(ReportExistsError):
        store.save(report)
    assert not path.exists()
    old = time.time() - 3600
    os.utime(lock, (old, old))  # ...or it crashed an hour ago: its lock does not block the key
    store.save(report)
    assert store.load("kb", "r").report_id == "r" and not lock.exists()
    with pytest.raises(ReportExistsError, match="already holds this report"):
        store.save(report)
    assert not list(tmp_path.rglob("*.tmp"))
