"""ReportStore robustness: file modes, concurrent saves, stale sidecars, broken entries.

Real files and, for the race, real processes; no mocks (one test makes ``os.link``
fail to exercise the lock used where a file system has no hard links).
"""

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
from heta_nb.errors import ReportExistsError, ReportFormatError, ReportNotFoundError, StoreError, UnsafeNameError
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


# -- 3. a same-size rewrite of report.json -------------------------------------------


def _same_size_rewrite(path: Path, *, in_place: bool) -> dict:
    data = json.loads(path.read_bytes())
    data["started_at"] = data["started_at"].replace("20", "30", 1)
    data["case_results"][0]["scores"][0]["value"] = 1.0 - data["case_results"][0]["scores"][0]["value"]
    new = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    assert len(new) == path.stat().st_size, "the rewrite must keep the size"
    if in_place:
        time.sleep(0.05)  # a later write, as another process would do it
        with open(path, "r+b") as handle:
            handle.write(new)
    else:
        other = path.with_name("elsewhere.json")
        other.write_bytes(new)
        os.replace(other, path)
    return data


@pytest.mark.parametrize("in_place", [False, True], ids=["replaced", "in-place"])
def test_same_size_rewrite_shows_the_new_data(tmp_path: Path, in_place: bool) -> None:
    store = ReportStore(tmp_path)
    report = synthetic_report(1, report_id="r", knowledge_base_name="kb", modes=("full_text_search",), error_rate=0)
    key = store.save(report)
    assert store.list().iloc[0]["started_at"] == report.started_at  # also fills the store's cache
    data = _same_size_rewrite(tmp_path / key, in_place=in_place)
    for listing in (store.list(), ReportStore(tmp_path).list()):
        assert listing.iloc[0]["started_at"] == data["started_at"] != report.started_at
        assert listing.iloc[0]["started_at"] == store.load("kb", "r").started_at
    assert store.latest("kb").started_at == data["started_at"]


# -- 4. broken and unsafe entries ----------------------------------------------------


@POSIX_ONLY
def test_broken_and_symlinked_entries_leave_the_rest_listed(tmp_path: Path) -> None:
    root, outside = tmp_path / "store", tmp_path / "outside"
    outside.mkdir()
    store = ReportStore(root)
    good = synthetic_report(2, report_id="good", knowledge_base_name="kb")
    store.save(good)
    raw = (root / report_key("kb", "good")).read_bytes()
    broken = {}
    for rid in ("trunc", "notjson", "schema2", "link", "sidecar", "dangling"):
        broken[rid] = root / store.save(synthetic_report(2, report_id=rid, knowledge_base_name="kb"))
    broken["trunc"].write_bytes(raw[: len(raw) // 2])
    broken["notjson"].write_bytes(b"garbage")
    broken["schema2"].write_bytes(raw.replace(b'"schema_version":"1"', b'"schema_version":"2"', 1))
    (outside / "secret.json").write_bytes(raw)
    broken["link"].unlink()
    broken["link"].symlink_to(outside / "secret.json")
    sidecar = broken["sidecar"].with_name(SUMMARY_FILE)
    sidecar.unlink()
    (outside / "sc.json").write_text("{}")
    sidecar.symlink_to(outside / "sc.json")
    broken["dangling"].unlink()
    broken["dangling"].symlink_to(outside / "gone.json")
    # a Heta-written report (no sidecar) that is corrupt
    hetaonly = root / report_key("kb", "hetaonly")
    hetaonly.parent.mkdir()
    hetaonly.write_bytes(b"{")
    bad_keys = sorted([*(report_key("kb", rid) for rid in broken), report_key("kb", "hetaonly")])

    with pytest.warns(ReportStoreWarning) as caught:
        frame = store.list()
    assert list(frame["report_id"]) == ["good"]
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "7 reports could not be read" in message
    for key in bad_keys:
        assert key in message
    problems = frame.attrs["problems"]
    assert sorted(p["key"] for p in problems) == bad_keys
    assert store.problems == problems
    errors = {p["key"]: p["error"] for p in problems}
    assert "invalid JSON" in errors[report_key("kb", "notjson")]
    assert "'2'" in errors[report_key("kb", "schema2")]
    assert "outside the store root" in errors[report_key("kb", "link")]
    assert (
        "outside the store root" in errors[report_key("kb", "sidecar")]
        and SUMMARY_FILE in errors[report_key("kb", "sidecar")]
    )
    assert "missing file" in errors[report_key("kb", "dangling")]
    with pytest.warns(ReportStoreWarning):
        assert store.latest("kb").report_id == "good"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [s.report_id for s in store.summaries(on_error="ignore")] == ["good"]
        assert len(store.list(on_error="ignore").attrs["problems"]) == 7
    with pytest.raises((ReportFormatError, UnsafeNameError, StoreError)):
        store.summaries(on_error="raise")
    with pytest.raises(ValueError, match="on_error"):
        store.list(on_error="sometimes")
    assert (outside / "sc.json").read_text() == "{}"


# -- 5. a store root that is missing or a file ---------------------------------------


def test_listing_a_missing_or_file_root_raises(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-store"
    store = ReportStore(missing)
    for listing in (store.list, store.summaries, lambda: store.latest("kb"), lambda: store.load("kb", "r")):
        with pytest.raises(FileNotFoundError, match="no-such-store: no such folder") as info:
            listing()
        assert isinstance(info.value, ReportNotFoundError)
    assert store.list(missing_ok=True).empty
    assert not missing.exists(), "listing must not create the folder"
    assert not store.exists("kb", "r")
    a_file = tmp_path / "report.json"
    a_file.write_text("{}")
    for root in (a_file, a_file / "sub"):
        with pytest.raises(NotADirectoryError, match="not a folder"):
            ReportStore(root).list()
        with pytest.raises(NotADirectoryError, match="not a folder"):
            ReportStore(root).list(missing_ok=True)
    # a store that does not exist yet can still be created by saving to it
    store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
    assert list(store.list()["report_id"]) == ["r"]


# -- 6. messages ---------------------------------------------------------------------


def test_messages_name_the_limit_and_the_unreadable_file(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    report = synthetic_report(2, report_id="r", knowledge_base_name="kb")
    with pytest.raises(UnsafeNameError, match=r"too long \(256 bytes in UTF-8; at most 255"):
        store.save(report.replace(report_id="\N{GRINNING FACE}" * 64))
    with pytest.raises(UnsafeNameError, match=r"too long \(129 characters; at most 128\)"):
        store.save(report.replace(report_id="x" * 129))
    key = store.save(report)
    (tmp_path / key).write_bytes(b'{"schema_version": "1", "report_id"')
    with pytest.raises(ReportExistsError, match="already holds an unreadable file .*invalid JSON") as info:
        store.save(report)
    assert "this report" not in str(info.value)
    store.save(report, overwrite=True)
    assert store.load("kb", "r") == report.replace(report_key=key)
