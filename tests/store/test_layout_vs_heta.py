"""The store's layout is Heta's: each finds and reads the other's reports."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from helpers import FIXTURES, heta_jsonl_benchmark, heta_recipe, requires_heta

import heta_nb
from heta_nb import ReportStore
from heta_nb.store import SUMMARY_FILE, report_key
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
