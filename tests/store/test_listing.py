"""Listing, latest and delete: sidecars, stale entries, problems named."""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

import pytest
from helpers import REPORT_FILES

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import ReportExistsError, ReportFormatError, ReportNotFoundError, StoreError, UnsafeNameError
from heta_nb.store import SUMMARY_FILE, ReportStoreWarning, report_key
from heta_nb.testing import synthetic_report

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes and symlinks")


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


def test_list_latest_delete(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    for path in REPORT_FILES:
        store.save(heta_nb.load_report(path))
    early = synthetic_report(4, report_id="early", knowledge_base_name="lighthouse mini")
    store.save(early.replace(started_at="2020-01-01T00:00:00+00:00"))
    frame = store.list()
    assert list(frame.columns[:16]) == [
        "kb",
        "report_id",
        "knowledge_base_name",
        "benchmark",
        "benchmark_version",
        "split",
        "task_type",
        "modes",
        "cases",
        "errors",
        "status",
        "started_at",
        "finished_at",
        "duration_s",
        "size_bytes",
        "key",
    ]
    assert sorted(frame["report_id"]) == sorted(
        ["fixture-beir-local", "fixture-errors", "fixture-multi-unit", "fixture-normal", "early"]
    )
    row = frame.set_index("report_id").loc["fixture-errors"]
    assert (row["cases"], row["errors"], row["kb"]) == (30, 21, "lighthouse-errors")
    assert row["full_text_search.evidence_recall@3"] == pytest.approx(7 / 8)  # the headline: skipped left out
    assert row["heta_mean:full_text_search.evidence_recall@3"] == pytest.approx(7 / 9)  # Heta's, named so
    assert store.latest("lighthouse mini").report_id == "fixture-normal"
    assert store.delete("lighthouse mini", "early") is True
    assert store.delete("lighthouse mini", "early") is False
    assert not store.exists("lighthouse mini", "early")
    with pytest.raises(ReportNotFoundError, match="reports for 'lighthouse_mini': fixture-normal"):
        store.load("lighthouse mini", "early")
    with pytest.raises(ReportNotFoundError, match="no reports for knowledge base 'nobody'"):
        store.latest("nobody")


def test_listing_uses_sidecars_and_notices_replaced_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ReportStore(tmp_path)
    for index in range(5):
        store.save(synthetic_report(3, report_id=f"r{index}", knowledge_base_name="kb"))
    import heta_nb.store.scan as store_module  # where listings parse reports

    calls = []
    real = store_module.decode_report
    monkeypatch.setattr(store_module, "decode_report", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert len(store.list()) == 5
    assert calls == [], "sidecars should make listing parse no report"
    # someone (e.g. Heta re-running with the same id) replaces a report behind our back
    replaced = synthetic_report(7, report_id="r2", knowledge_base_name="kb")
    key = report_key("kb", "r2")
    (tmp_path / key).write_bytes(replaced.to_json().encode())
    frame = ReportStore(tmp_path).list().set_index("report_id")
    assert frame.loc["r2", "cases"] == 21
    assert len(calls) == 1
    # a broken report is skipped by default, raised on request
    (tmp_path / report_key("kb", "r3")).write_bytes(b"{broken")
    with pytest.warns(ReportStoreWarning, match="r3/report.json: invalid JSON"):
        listing = ReportStore(tmp_path).list()
    assert "r3" not in set(listing["report_id"])
    assert [p["key"] for p in listing.attrs["problems"]] == [report_key("kb", "r3")]
    with pytest.raises(heta_nb.ReportFormatError, match="invalid JSON"):
        ReportStore(tmp_path).summaries(on_error="raise")


# -- 7. time order ---------------------------------------------------------------------


def test_latest_and_listing_order_compare_moments_not_text(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    base = synthetic_report(2, report_id="x", knowledge_base_name="kb")
    times = {
        "berlin": ("2026-01-01T10:00:00+02:00", "2026-01-01T10:05:00+02:00"),  # 08:00 UTC
        "utc": ("2026-01-01T09:00:00+00:00", "2026-01-01T09:05:00+00:00"),
        "zulu": ("2026-01-01T08:30:00Z", "2026-01-01T08:35:00Z"),
    }
    for rid, (start, end) in times.items():
        store.save(base.replace(report_id=rid, started_at=start, finished_at=end))
    assert [s.report_id for s in store.summaries()] == ["berlin", "zulu", "utc"]
    assert store.latest("kb").report_id == "utc"
    data = json.loads((tmp_path / report_key("kb", "utc")).read_bytes())
    assert data["started_at"] == times["utc"][0]  # stored as given


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


@pytest.mark.hostile
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


@pytest.mark.hostile
@pytest.mark.skipif(os.name == "nt", reason="FIFOs")
def test_a_fifo_in_the_store_is_a_listing_problem_and_loading_it_does_not_block(tmp_path: Path) -> None:
    """A FIFO where a report (or its sidecar) should be: reading it would wait for a writer forever."""
    store = ReportStore(tmp_path)
    store.save(synthetic_report(2, report_id="good", knowledge_base_name="kb"))
    fifo = tmp_path / report_key("kb", "pipe")
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    sidecar_pipe = tmp_path / store.save(synthetic_report(2, report_id="side", knowledge_base_name="kb"))
    sidecar_pipe.with_name(SUMMARY_FILE).unlink()
    os.mkfifo(sidecar_pipe.with_name(SUMMARY_FILE))
    with pytest.warns(ReportStoreWarning, match="FIFO"):
        frame = store.list()  # (this blocked forever on the sidecar FIFO)
    assert list(frame["report_id"]) == ["good"]
    errors = {p["key"]: p["error"] for p in frame.attrs["problems"]}
    assert errors[report_key("kb", "pipe")] == "it is a FIFO (named pipe), not a regular file"
    assert "FIFO" in errors[report_key("kb", "side")] and SUMMARY_FILE in errors[report_key("kb", "side")]
    with pytest.raises(StoreError, match="not a regular file: it is a FIFO"):
        store.load("kb", "pipe")


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
