"""ReportStore: Heta's layout, safe names, atomic writes, listings, Heta interop."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest
from helpers import FIXTURES, REPORT_FILES, heta_jsonl_benchmark, heta_recipe, requires_heta
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import ReportExistsError, ReportNotFoundError, StoreError, UnsafeNameError
from heta_nb.store import SUMMARY_FILE, ReportStoreWarning, heta_slug, report_key, safe_slug
from heta_nb.testing import synthetic_report


def _all_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_layout_is_hetas(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    report = heta_nb.load_report(FIXTURES / "report-errors.json")
    key = store.save(report)
    assert key == "_heta/knowledge_bases/lighthouse-errors/evaluations/fixture-errors/report.json"
    # the stored bytes are Heta's bytes (report_key already matched)
    assert (tmp_path / key).read_bytes() == (FIXTURES / "report-errors.json").read_bytes()
    assert _all_files(tmp_path) == sorted([key, key.replace("report.json", SUMMARY_FILE)])
    assert store.load("lighthouse-errors", "fixture-errors") == report
    assert store.load("Lighthouse-Errors", "FIXTURE-errors") == report  # slugged like Heta
    assert report_key("My KB", "Run 1") == "_heta/knowledge_bases/my_kb/evaluations/run_1/report.json"


def test_report_key_is_set_to_the_real_key(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    report = synthetic_report(3, report_id="Run 7", knowledge_base_name="Tiny KB")
    assert report.report_key is None
    key = store.save(report)
    assert key == "_heta/knowledge_bases/tiny_kb/evaluations/run_7/report.json"
    assert store.load("Tiny KB", "Run 7").report_key == key


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


def test_non_string_and_edge_names() -> None:
    with pytest.raises(UnsafeNameError, match="must be a string"):
        safe_slug(5, "report_id")
    assert safe_slug("  Run   1 ") == "run_1"
    assert safe_slug("tiny-kb") == "tiny-kb"
    assert safe_slug("x" * 128) == "x" * 128
    assert safe_slug(".hidden") == ".hidden"  # not an escape: stays one folder
    assert heta_slug("a/b") == "a/b"  # Heta's slug, kept for reference: nests


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
    assert row["full_text_search.evidence_recall@3"] == pytest.approx(7 / 9)
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
    import heta_nb.store.report_store as store_module

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
def test_finds_reports_heta_wrote_and_heta_reads_ours(tmp_path: Path) -> None:
    """Run Heta's own BenchmarkRunner, then find its report with heta_nb (and back)."""
    from heta_framework.evaluation import BenchmarkRunConfig, BenchmarkRunner, BenchmarkWorkspace

    recipe = heta_recipe(tmp_path)
    objects = recipe.stores.objects
    benchmark = heta_jsonl_benchmark()
    result = asyncio.run(
        BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=recipe,
            knowledge_base_name="Interop KB",
            query_modes=("full_text_search",),
            workspace=BenchmarkWorkspace(root_dir=tmp_path / "ws", cache_dir=tmp_path / "ws" / "cache"),
            config=BenchmarkRunConfig(report_id="Heta Run"),
        )
    )
    store = ReportStore(tmp_path / "objects")
    found = store.list()
    assert list(found["key"]) == [result.report_key]
    loaded = store.load("Interop KB", "Heta Run")
    assert loaded == heta_nb.load_report(result.report)  # Heta's object converts too
    assert loaded.to_json().encode() == asyncio.run(objects.get(result.report_key))
    # and the other way round: Heta's store reads the report heta_nb writes
    ours = synthetic_report(2, report_id="ours", knowledge_base_name="Interop KB")
    key = ReportStore(objects).save(ours)
    assert json.loads(asyncio.run(objects.get(key)))["report_id"] == "ours"
    assert key in {info.key for info in asyncio.run(objects.list("_heta"))}
