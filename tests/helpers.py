"""Shared constants and markers for the tests (imported as ``helpers``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "heta-0.1.2"
REPORT_FILES = sorted(FIXTURES.glob("report-*.json"))


def heta_available() -> bool:
    """Whether the [heta] extra (heta-framework) is installed."""
    try:
        import heta_framework  # noqa: F401
    except ImportError:
        return False
    return True


requires_heta = pytest.mark.skipif(not heta_available(), reason="needs the [heta] extra (heta-framework)")


def heta_recipe(root: Path, *, chunk_size: int = 120, encoding: str = "unicode"):  # noqa: ANN201 - a Heta recipe
    """A real Heta full-text recipe (parse, split, BM25) with its objects under ``root / "objects"``."""
    from heta_nb.demo.heta_recipes import demo_recipe

    return demo_recipe(root, chunk_size, 10, encoding=encoding)


def heta_jsonl_benchmark(*evaluators: object):  # noqa: ANN201 - a Heta JsonlBenchmark
    """Heta's own JsonlBenchmark over the lighthouse_mini fixture files."""
    from heta_framework.evaluation import BenchmarkManifest, EvidenceRecallAtK, JsonlBenchmark

    return JsonlBenchmark(
        manifest=BenchmarkManifest(name="lighthouse_mini", version="1", split="test", task_type="multihop_qa"),
        documents_jsonl=FIXTURES / "documents.jsonl",
        cases_jsonl=FIXTURES / "cases.jsonl",
        evaluator_list=evaluators or (EvidenceRecallAtK(k=3),),
    )


class UnitsBenchmark:
    """A Heta BenchmarkProtocol object: ``inner``'s documents, cases and evaluators, with the given run units."""

    def __init__(self, inner: Any, units: tuple[Any, ...]) -> None:
        self.inner = inner
        self.units = units

    @property
    def manifest(self) -> Any:
        return self.inner.manifest

    def resources(self) -> Any:
        return self.inner.resources()

    async def prepare(self, workspace: Any) -> Any:
        return await self.inner.prepare(workspace)

    def documents(self, prepared: Any) -> Any:
        return self.inner.documents(prepared)

    def cases(self, prepared: Any) -> Any:
        return self.inner.cases(prepared)

    async def run_units(self, prepared: Any) -> Any:
        for unit in self.units:
            yield unit

    def evaluators(self) -> Any:
        return self.inner.evaluators()


def report_dict(results: list[dict[str, Any]], *, report_id: str, modes: Any, benchmark: str) -> dict[str, Any]:
    """A report.json dict in Heta's schema around ``results`` (their score_summary computed as Heta does)."""
    from heta_nb.model.report import EvaluationCaseResult
    from heta_nb.model.summary import heta_score_summary

    return {
        "schema_version": "1",
        "report_id": report_id,
        "report_key": None,
        "benchmark": {
            "name": benchmark,
            "version": "1",
            "split": "test",
            "task_type": "qa",
            "build_scope": "corpus",
            "homepage": None,
            "license": None,
            "citation": None,
            "metadata": {},
        },
        "knowledge_base_name": "kb",
        "knowledge_base_manifest": {},
        "recipe_manifest": {},
        "query_modes": list(modes),
        "score_summary": heta_score_summary(EvaluationCaseResult.from_raw(r) for r in results),
        "case_results": results,
        "started_at": "2026-01-01T00:00:00+00:00",
        "finished_at": "2026-01-01T00:01:00+00:00",
        "metadata": {},
    }


def call_in_thread(call: Callable[[], Any], timeout: float) -> tuple[threading.Thread, dict[str, Any]]:
    """``call()`` on a daemon thread, waited for ``timeout`` seconds: the thread (alive: it is still
    running, a hang) and its outcome, ``{"value": ...}`` or ``{"error": the BaseException it raised}``."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    return thread, outcome
