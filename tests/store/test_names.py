"""Names that could escape or collide are refused before any write."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import StoreError, UnsafeNameError
from heta_nb.store import heta_slug, safe_slug, windows_name_problem
from heta_nb.testing import synthetic_report


def _all_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


HOSTILE = [
    ("../escape", "escape the store layout"),
    ("..", "would escape"),
    (".", "would escape"),
    ("a/b", "contains '/'"),
    ("/etc/passwd", "contains '/'"),
    ("..\\x", "contains '\\\\'"),
    ("C:\\Windows", "contains '\\\\'"),
    ("nul\x00byte", "control character"),
    ("bell\x07", "control character"),
    ("", "must not be empty"),
    ("   ", "must not be empty"),
    ("x" * 129, "too long"),
    ("é" * 128, "too long"),  # 128 characters but 256 UTF-8 bytes
]


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink())


@pytest.mark.hostile
@pytest.mark.parametrize(("name", "message"), HOSTILE, ids=[repr(h[0])[:20] for h in HOSTILE])
@pytest.mark.parametrize("field", ["report_id", "knowledge_base_name"])
def test_hostile_names_refused_before_any_write(tmp_path: Path, name: str, message: str, field: str) -> None:
    root = tmp_path / "store"
    store = ReportStore(root)
    kwargs = {"report_id": "ok", "knowledge_base_name": "kb", field: "placeholder"}
    report = synthetic_report(2, **kwargs)
    # the model itself accepts such names (Heta does too): the store refuses them
    report = report.replace(**{field: name}) if name.strip() else report
    with pytest.raises(UnsafeNameError, match=re.escape(message) if name.strip() else "must not be empty"):
        if name.strip():
            store.save(report)
        else:
            store.key_for(name if field == "knowledge_base_name" else "kb", name if field == "report_id" else "r")
    assert not root.exists() or _all_files(root) == []
    assert _all_files(tmp_path) == []
    with pytest.raises(UnsafeNameError):
        store.load(name if field == "knowledge_base_name" else "kb", name if field == "report_id" else "r")


@pytest.mark.hostile
def test_non_string_and_edge_names() -> None:
    with pytest.raises(UnsafeNameError, match="must be a string"):
        safe_slug(5, "report_id")
    assert safe_slug("  Run   1 ") == "run_1"
    assert safe_slug("tiny-kb") == "tiny-kb"
    assert safe_slug("x" * 128) == "x" * 128
    assert safe_slug(".hidden") == ".hidden"  # not an escape: stays one folder
    assert heta_slug("a/b") == "a/b"  # Heta's slug, kept for reference: nests


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("run:1", "contains ':'"),  # a timestamp id; on NTFS it would address a data stream
        ('a<b>"c"', "contains '\"<>'"),
        ("what?", "contains '?'"),
        ("trailing.", "ends with a dot or a space"),
        ("nul", "device name"),
        ("CON.json", "device name"),
        ("com7", "device name"),
    ],
)
def test_names_windows_cannot_hold_are_refused_there_before_any_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, problem: str
) -> None:
    from heta_nb import store as store_module

    assert problem in (store_module.windows_name_problem(name) or "")
    report = synthetic_report(2, report_id=name, knowledge_base_name="kb")
    root = tmp_path / "store"
    ReportStore(root / "posix").save(report)  # elsewhere these are ordinary names
    monkeypatch.setattr("heta_nb.store.local._ON_WINDOWS", True)
    windows = ReportStore(root / "windows")
    with pytest.raises(UnsafeNameError, match=re.escape(problem)):
        windows.save(report)
    with pytest.raises(UnsafeNameError, match=re.escape(problem)):
        heta_nb.evaluate(toy_benchmark(), kb=exact_kb, store=root / "windows", report_id=name, progress=False)
    assert _all_files(root / "windows") == []


def test_ordinary_names_pass_the_windows_check() -> None:
    from heta_nb.store import windows_name_problem

    for name in ("run_1", "tiny-kb", ".hidden", "report.json", "console", "nul_results", "com10", "_heta"):
        assert windows_name_problem(name) is None, name


# -- 5. Windows device names -----------------------------------------------------------


@pytest.mark.hostile
@pytest.mark.parametrize(
    "name",
    ["com9", "com\N{SUPERSCRIPT ONE}", "LPT\N{SUPERSCRIPT THREE}.json", "conin$", "CONOUT$", "nul .txt"],
)
def test_every_windows_device_name_is_refused_there(name: str) -> None:
    assert windows_name_problem(name) == "is a device name on Windows"


# -- 6. Unicode normalization ----------------------------------------------------------


@pytest.mark.hostile
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


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("root", "reason"), [("st\x00re", "it contains a NUL character"), ("st\ud800re", "such as a lone surrogate")]
)
def test_a_store_root_no_folder_can_have_is_a_store_error(tmp_path: Path, root: str, reason: str) -> None:
    """``load_report('STORE:KB/ID')`` with such a store part raised a raw ``ValueError`` (or ``UnicodeEncodeError``)."""
    with pytest.raises(StoreError, match=f"not a usable store folder \\(.*{reason}"):
        ReportStore(root)
    with pytest.raises(StoreError, match=f"not a usable store folder \\(.*{reason}"):
        heta_nb.load_report(f"{tmp_path}/{root}:kb/r")
