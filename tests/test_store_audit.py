"""ReportStore audit: links inside a store, version stamps on object stores, a sidecar
that cannot be written, long file names, Windows device names, Unicode forms, time order.

Real files, a real Heta ``LocalObjectStore`` and a real fsspec ``memory://`` file system;
no mocks.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
import warnings
from pathlib import Path

import pytest
from helpers import requires_heta

from heta_nb import ReportStore
from heta_nb._util.atomic import write_atomically
from heta_nb.errors import ReportExistsError, UnsafeNameError
from heta_nb.store import SUMMARY_FILE, ReportStoreWarning, report_key, safe_slug, windows_name_problem
from heta_nb.testing import synthetic_report

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="symbolic links")


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink())


# -- 1. a link inside the store aliases another report ---------------------------------


@POSIX_ONLY
def test_a_linked_folder_inside_the_store_is_not_followed(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    real = synthetic_report(2, report_id="real", knowledge_base_name="kb")
    key = store.save(real)
    folder = (tmp_path / key).parent
    alias = folder.with_name("alias")
    alias.symlink_to(folder, target_is_directory=True)
    before = _files(tmp_path)

    # each of these would act on report "real" through the link
    with pytest.raises(UnsafeNameError, match="symbolic link inside the store"):
        store.load("kb", "alias")
    with pytest.raises(UnsafeNameError, match="symbolic link inside the store"):
        store.save(synthetic_report(2, report_id="alias", knowledge_base_name="kb"), overwrite=True)
    with pytest.raises(UnsafeNameError, match="symbolic link inside the store"):
        store.delete("kb", "alias")
    assert _files(tmp_path) == before
    assert store.load("kb", "real") == real.replace(report_key=key)
    assert [s.report_id for s in store.summaries()] == ["real"]


@POSIX_ONLY
def test_a_linked_report_file_inside_the_store_is_a_listing_problem(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    key = store.save(synthetic_report(2, report_id="real", knowledge_base_name="kb"))
    other = tmp_path / report_key("kb", "copy")
    other.parent.mkdir()
    other.symlink_to(tmp_path / key)
    with pytest.warns(ReportStoreWarning, match="symbolic link"):
        rows = store.summaries()
    assert [s.report_id for s in rows] == ["real"]
    assert [p["key"] for p in store.problems] == [report_key("kb", "copy")]
    with pytest.raises(UnsafeNameError, match="symbolic link inside the store"):
        store.load("kb", "copy")


@POSIX_ONLY
def test_a_store_root_that_is_a_link_still_works(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    store = ReportStore(tmp_path / "link")
    key = store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
    assert (tmp_path / "real" / key).is_file()
    assert store.load("kb", "r").report_id == "r" and [s.key for s in store.summaries()] == [key]
    assert store.delete("kb", "r") and not (tmp_path / "real" / key).exists()


# -- 2. a same-size rewrite on an object store -----------------------------------------


def _same_size(data: bytes) -> bytes:
    new = data.replace(b'"synthetic"', b'"rewritten"', 1)
    assert len(new) == len(data) and new != data
    return new


@requires_heta
def test_same_size_rewrite_through_a_heta_object_store_shows_the_new_data(tmp_path: Path) -> None:
    from heta_framework.common.stores.object.local import LocalObjectStore

    objects = LocalObjectStore(tmp_path)
    store = ReportStore(objects)
    key = store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
    assert [s.benchmark for s in store.summaries()] == ["synthetic"]  # also fills the cache
    asyncio.run(objects.put(key, _same_size((tmp_path / key).read_bytes())))  # as Heta re-running would
    later = (tmp_path / key).stat().st_mtime + 5  # a later write, without waiting for one
    os.utime(tmp_path / key, (later, later))
    for listing in (store, ReportStore(LocalObjectStore(tmp_path))):
        assert [s.benchmark for s in listing.summaries()] == ["rewritten"]
    assert store.load("kb", "r").benchmark.name == "rewritten"


def test_same_size_rewrite_on_an_fsspec_memory_store_shows_the_new_data() -> None:
    import fsspec

    bucket = f"audit-{uuid.uuid4().hex}"
    store = ReportStore(f"memory://{bucket}")
    key = store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
    assert [s.benchmark for s in store.summaries()] == ["synthetic"]
    fs = fsspec.filesystem("memory")
    path = f"/{bucket}/{key}"
    try:
        fs.pipe_file(path, _same_size(fs.cat_file(path)))
        for listing in (store, ReportStore(f"memory://{bucket}")):
            assert [s.benchmark for s in listing.summaries()] == ["rewritten"]
    finally:
        fs.rm(f"/{bucket}", recursive=True)


@requires_heta
def test_sidecars_written_through_object_stores_are_used(tmp_path: Path) -> None:
    """The stamp recorded at save time is the one a listing sees (else every list parses)."""
    from heta_framework.common.stores.object.local import LocalObjectStore

    from heta_nb.store.summary import decode_summary

    bucket = f"audit-{uuid.uuid4().hex}"
    for store in (ReportStore(LocalObjectStore(tmp_path)), ReportStore(f"memory://{bucket}")):
        key = store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
        entry = next(e for e in store._backend.list_prefix("_heta") if e.key == key)
        sidecar = store._backend.read(key.replace("report.json", SUMMARY_FILE))
        assert entry.stamp is not None and decode_summary(sidecar, entry) is not None, store


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


# -- 5. Windows device names -----------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["com9", "com\N{SUPERSCRIPT ONE}", "LPT\N{SUPERSCRIPT THREE}.json", "conin$", "CONOUT$", "nul .txt"],
)
def test_every_windows_device_name_is_refused_there(name: str) -> None:
    assert windows_name_problem(name) == "is a device name on Windows"


# -- 6. Unicode normalization ----------------------------------------------------------


@pytest.mark.parametrize("field", ["report_id", "knowledge_base_name"])
def test_names_that_look_alike_in_another_unicode_form_are_refused(tmp_path: Path, field: str) -> None:
    composed, decomposed = "caf\N{LATIN SMALL LETTER E WITH ACUTE}", "cafe\N{COMBINING ACUTE ACCENT}"
    store = ReportStore(tmp_path)
    names = {"report_id": "r", "knowledge_base_name": "kb"}
    store.save(synthetic_report(2, **{**names, field: composed}))
    before = _files(tmp_path)
    with pytest.raises(UnsafeNameError, match=r"not in Unicode normalization form NFC; use 'caf\\xe9'"):
        store.save(synthetic_report(2, **{**names, field: decomposed}))
    assert _files(tmp_path) == before
    assert safe_slug(composed) == composed


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


# -- 8. fsspec's own URL of the local disk ---------------------------------------------


@POSIX_ONLY
def test_a_local_disk_url_is_a_local_folder_store_and_links_do_not_escape_it(tmp_path: Path) -> None:
    outside, root = tmp_path / "outside", tmp_path / "store"
    outside.mkdir()
    (root / "_heta/knowledge_bases/kb").mkdir(parents=True)
    (root / "_heta/knowledge_bases/kb/evaluations").symlink_to(outside, target_is_directory=True)
    store = ReportStore(f"local://{root}")
    assert store.location == str(root)
    with pytest.raises(UnsafeNameError, match="outside the store root"):
        store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
    assert list(outside.iterdir()) == []
    key = store.save(synthetic_report(2, report_id="r", knowledge_base_name="other"))
    assert ReportStore(root).load("other", "r").report_key == key
    assert not list(root.rglob("*.tmp"))


# -- 9. errors through a Heta ObjectStore name its folder ------------------------------


@requires_heta
def test_errors_through_a_heta_object_store_name_its_folder_and_the_field(tmp_path: Path) -> None:
    from heta_framework.common.stores.object.local import LocalObjectStore

    store = ReportStore(LocalObjectStore(tmp_path))
    assert store.location == f"LocalObjectStore({tmp_path.resolve()})"
    key = store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
    data = json.loads((tmp_path / key).read_bytes())
    data["started_at"] = 5
    (tmp_path / key).write_text(json.dumps(data))
    with pytest.raises(ValueError) as info:
        store.load("kb", "r")
    assert str(info.value) == f"LocalObjectStore({tmp_path.resolve()})/{key}: started_at: expected string, got number"
