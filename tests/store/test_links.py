"""Symbolic links inside a store are never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from heta_nb import ReportStore
from heta_nb.errors import UnsafeNameError
from heta_nb.store import ReportStoreWarning, report_key
from heta_nb.testing import synthetic_report

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="symbolic links")


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink())


# -- 1. a link inside the store aliases another report ---------------------------------


@pytest.mark.hostile
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


@pytest.mark.hostile
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


@pytest.mark.hostile
@POSIX_ONLY
def test_a_store_root_that_is_a_link_still_works(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    store = ReportStore(tmp_path / "link")
    key = store.save(synthetic_report(2, report_id="r", knowledge_base_name="kb"))
    assert (tmp_path / "real" / key).is_file()
    assert store.load("kb", "r").report_id == "r" and [s.key for s in store.summaries()] == [key]
    assert store.delete("kb", "r") and not (tmp_path / "real" / key).exists()


# -- 8. fsspec's own URL of the local disk ---------------------------------------------


@pytest.mark.hostile
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
