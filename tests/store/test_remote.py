"""fsspec URLs and Heta ObjectStores as report stores."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

import pytest
from helpers import FIXTURES, REPORT_FILES, requires_heta

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import StoreError
from heta_nb.store import SUMMARY_FILE
from heta_nb.testing import synthetic_report

# -- 2. a same-size rewrite on an object store -----------------------------------------


def _same_size(data: bytes) -> bytes:
    new = data.replace(b'"synthetic"', b'"rewritten"', 1)
    assert len(new) == len(data) and new != data
    return new


def test_fsspec_memory_and_file_urls(tmp_path: Path) -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    memory = ReportStore("memory://heta-store-test")
    key = memory.save(report, overwrite=True)
    assert memory.load("lighthouse mini", "fixture-normal") == report
    assert list(memory.list()["key"]) == [key]
    assert memory.delete("lighthouse mini", "fixture-normal")
    assert memory.list().empty
    local = ReportStore(f"file://{tmp_path}")
    local.save(report)
    assert ReportStore(tmp_path).load("lighthouse mini", "fixture-normal") == report
    with pytest.raises(StoreError):
        ReportStore(object())


@requires_heta
def test_heta_object_store_interop(tmp_path: Path) -> None:
    from heta_framework.common.stores import LocalObjectStore
    from heta_framework.evaluation.types import default_report_key

    objects = LocalObjectStore(tmp_path / "objects")
    store = ReportStore(objects)
    for path in REPORT_FILES:
        report = heta_nb.load_report(path)
        key = store.save(report)
        assert key == default_report_key(report.knowledge_base_name, report.report_id)
        assert asyncio.run(objects.get(key)) == path.read_bytes()
        assert store.load(report.knowledge_base_name, report.report_id) == report
    assert len(store.list()) == len(REPORT_FILES)
    # the same files, read as a plain folder
    assert sorted(ReportStore(tmp_path / "objects").list()["key"]) == sorted(store.list()["key"])


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
