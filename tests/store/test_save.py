"""Saving: atomic, exclusive, file modes kept, sidecars never fail a saved report."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

import heta_nb
from heta_nb import ReportStore
from heta_nb._util.atomic import temporaries_of, write_atomically
from heta_nb.errors import ReportExistsError, StoreError
from heta_nb.store import SUMMARY_FILE, ReportStoreWarning, report_key
from heta_nb.testing import synthetic_report

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes, symlinks and locks")
fcntl: Any = None if os.name == "nt" else __import__("fcntl")


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

    root, report_id, signals, trials, tag = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    report = synthetic_report(300, report_id=report_id, knowledge_base_name="kb", seed=int(tag))
    report = report.replace(report_key=report_key("kb", report_id))
    encoded = encode_report(report)  # ready before the start signal: both save at once
    open(os.path.join(signals, f"ready-{tag}"), "w").close()
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
        name = os.path.join(signals, f"result-{trial}-{tag}")
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


@pytest.mark.parametrize(
    ("ids", "trials"),
    [(("Run A", "run_a"), 8), (("run a", "run a"), 3)],
    ids=["two ids, one slug", "one id, two reports"],
)
def test_two_processes_saving_one_key_one_wins(tmp_path: Path, ids: tuple[str, str], trials: int) -> None:
    """The loser is told which report the key holds (not "this report" when it is another one)."""
    root, signals = tmp_path / "stores", tmp_path / "signals"
    signals.mkdir()
    tags = ["1", "2"]  # each worker's report has its own seed: different reports
    package_parent = str(Path(heta_nb.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")])}
    workers = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(root), rid, str(signals), str(trials), tag], env=env)
        for rid, tag in zip(ids, tags)
    ]
    try:
        _wait_for([signals / f"ready-{tag}" for tag in tags])
        for trial in range(trials):
            (signals / f"go-{trial}").touch()  # both start together
            results = [signals / f"result-{trial}-{tag}" for tag in tags]
            _wait_for(results)
            outcomes = {tag: path.read_text() for tag, path in zip(tags, results)}
            saved = [tag for tag, outcome in outcomes.items() if outcome == "saved"]
            lost = [outcome for outcome in outcomes.values() if outcome != "saved"]
            assert len(saved) == 1, f"trial {trial}: {outcomes}"
            winner = ids[tags.index(saved[0])]
            assert lost[0].startswith("exists ") and "this report" not in lost[0], outcomes
            if ids[0] != ids[1]:
                assert f"already holds report {winner!r}" in lost[0], outcomes
            else:
                assert f"already holds another report with the id {winner!r}" in lost[0], outcomes
            store = ReportStore(root / str(trial))
            key = report_key("kb", "run a")
            on_disk = json.loads((root / str(trial) / key).read_bytes())
            sidecar = json.loads((root / str(trial) / key.replace("report.json", SUMMARY_FILE)).read_bytes())
            assert on_disk["report_id"] == sidecar["report_id"] == winner
            assert on_disk["metadata"]["seed"] == int(saved[0])
            assert on_disk["started_at"] == sidecar["started_at"]
            assert list(store.list()["report_id"]) == [winner]
            assert store.load("kb", "run a").report_id == winner
            assert not list((root / str(trial)).rglob("*.tmp")) and not list((root / str(trial)).rglob("*.lock"))
    except BaseException:
        for worker in workers:  # do not leave them waiting for the next start signal
            worker.kill()
            worker.wait()
        raise
    assert [w.wait(timeout=60) for w in workers] == [0, 0]


def test_saving_another_report_under_an_id_in_use_says_which_report_holds_it(tmp_path: Path) -> None:
    """Two runs that both name their report "baseline": the second is not told "this report"."""
    store = ReportStore(tmp_path)
    first = synthetic_report(2, report_id="baseline", knowledge_base_name="kb", seed=1)
    second = synthetic_report(3, report_id="baseline", knowledge_base_name="kb", seed=2)
    key = store.save(first)
    with pytest.raises(ReportExistsError) as info:
        store.save(second)
    message = str(info.value)
    assert "this report" not in message and f"{key} already holds another report with the id 'baseline'" in message
    assert "knowledge base 'kb', started 2026-12-01T07:00:00.000000+00:00, 6 results" in message
    assert "the one being saved has 9 results" in message and message.endswith("pass overwrite=True to replace it")
    with pytest.raises(ReportExistsError, match="already holds this report;"):
        store.save(first)  # the very same report again
    (tmp_path / key).with_name(SUMMARY_FILE).unlink()  # without the sidecar (a report Heta wrote), the same
    with pytest.raises(ReportExistsError, match="already holds another report with the id 'baseline'"):
        store.save(second)
    with pytest.raises(ReportExistsError, match="already holds this report;"):
        store.save(first)
    assert store.load("kb", "baseline") == first.replace(report_key=key)


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


# -- 5. temporary files of saves killed mid-write -----------------------------------------


def _aged(path: Path, seconds: float = 3600) -> None:
    old = time.time() - seconds
    os.utime(path, (old, old))


def _left_by_a_killed_save(target: Path, data: bytes, hexpart: str = "0badc0de") -> Path:
    """The ``.report.json.<hex>.tmp`` a save killed mid-write leaves (its writer is gone: no lock held)."""
    temporary = target.with_name(f".{target.name}.{hexpart}.tmp")
    temporary.write_bytes(data[: len(data) // 2])
    return temporary


@POSIX_ONLY
def test_a_killed_saves_temporary_is_listed_and_removed_by_the_next_save_or_delete(tmp_path: Path) -> None:
    """A SIGKILL during an overwriting save left ``.report.json.<hex>.tmp`` (a whole report) forever."""
    store = ReportStore(tmp_path)
    first = synthetic_report(3, report_id="r", knowledge_base_name="kb")
    key = store.save(first)
    target = tmp_path / key
    temporaries = [
        _left_by_a_killed_save(target, target.read_bytes()),
        _left_by_a_killed_save(target.with_name(SUMMARY_FILE), b'{"format": 1}', "00c0ffee"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a young one may be a save in progress: listed, no warning
        frame = store.list()
    assert [t["key"] for t in frame.attrs["temporaries"]] == sorted(
        f"{key.rsplit('/', 1)[0]}/{p.name}" for p in temporaries
    )
    assert not any(t["stale"] for t in frame.attrs["temporaries"]) and len(frame) == 1
    for temporary in temporaries:
        _aged(temporary)
    with pytest.warns(ReportStoreWarning, match=r"2 temporary files left by saves that did not finish") as caught:
        frame = store.list()
    assert all(t["stale"] and t["age_s"] > 3000 for t in frame.attrs["temporaries"])
    assert store.temporaries == frame.attrs["temporaries"] and len(frame) == 1 and frame.attrs["problems"] == []
    assert ".report.json.0badc0de.tmp" in str(caught[0].message) and "next save or delete" in str(caught[0].message)
    assert store.list(on_error="ignore").attrs["temporaries"]  # listed, without the warning

    store.save(synthetic_report(4, report_id="r", knowledge_base_name="kb"), overwrite=True)
    assert sorted(p.name for p in target.parent.iterdir()) == ["heta_nb.summary.json", "report.json"]
    assert store.list().attrs["temporaries"] == [] and store.load("kb", "r").case_count == 12

    (tmp_path / report_key("kb", "never saved")).parent.mkdir()  # killed during its first save
    orphan = _left_by_a_killed_save(tmp_path / report_key("kb", "never saved"), target.read_bytes())
    _aged(orphan)
    with pytest.warns(ReportStoreWarning, match="1 temporary file left"):
        assert list(store.list()["report_id"]) == ["r"]
    assert store.delete("kb", "never saved") and not orphan.parent.exists()


@POSIX_ONLY
def test_a_live_saves_temporary_is_never_removed_however_old(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    key = store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
    live = _left_by_a_killed_save(tmp_path / key, (tmp_path / key).read_bytes())
    _aged(live)
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a writer in another process holds while it writes
        store.save(synthetic_report(3, report_id="r", knowledge_base_name="kb"), overwrite=True)
        assert live.exists()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert [t["stale"] for t in store.list().attrs["temporaries"]] == [False]
    finally:
        os.close(fd)
    store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"), overwrite=True)
    assert not live.exists()


_SLOW_SAVER = textwrap.dedent(
    """
    import os, sys, time
    from heta_nb import ReportStore
    from heta_nb.testing import synthetic_report

    root, signal_file = sys.argv[1], sys.argv[2]

    def stuck_fsync(fd):  # every byte written, not yet published: SIGKILL lands here
        open(signal_file, "w").close()
        time.sleep(120)

    os.fsync = stuck_fsync
    ReportStore(root).save(synthetic_report(200, report_id="r", knowledge_base_name="kb"), overwrite=True)
    """
)


@pytest.mark.slow
@POSIX_ONLY
def test_sigkill_during_an_overwriting_save(tmp_path: Path) -> None:
    """The real thing: a process killed while it writes; the report it replaced is intact, its temporary goes."""
    store = ReportStore(tmp_path / "store")
    old = synthetic_report(2, report_id="r", knowledge_base_name="kb")
    key = store.save(old)
    signal_file = tmp_path / "writing"
    package_parent = str(Path(heta_nb.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", _SLOW_SAVER, str(tmp_path / "store"), str(signal_file)], env=env)
    try:
        _wait_for([signal_file], timeout=60)
        [temporary] = temporaries_of(tmp_path / "store" / key)
        assert not temporary.stale and temporary.size > 100_000  # the whole new report, held by its writer
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert store.load("kb", "r") == old.replace(report_key=key)
    _aged(temporary.path)
    with pytest.warns(ReportStoreWarning, match="1 temporary file left by saves that did not finish"):
        store.list()
    store.save(synthetic_report(3, report_id="r", knowledge_base_name="kb"), overwrite=True)
    assert temporaries_of(tmp_path / "store" / key) == [] and store.load("kb", "r").case_count == 9
