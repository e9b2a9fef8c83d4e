"""Prebuilt Heta knowledge bases, query engines, modes and object stores."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, heta_jsonl_benchmark, heta_recipe, requires_heta
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.model import BenchmarkManifest
from heta_nb.runner import RunError

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


def heta_evaluators() -> tuple:
    from heta_framework.evaluation import (
        AnswerContains,
        AnswerExactMatch,
        EvidenceRecallAtK,
        beir_default_metrics,
    )

    return (
        EvidenceRecallAtK(k=3),
        AnswerContains(),
        AnswerExactMatch(),
        *beir_default_metrics(k_values=(3,)),
    )


def heta_benchmark() -> Any:
    return heta_jsonl_benchmark(*heta_evaluators())


# -- query modes: a misspelling is refused with the right name -------------------------------------


class _Registry:
    modes = frozenset({"full_text_search", "vector_search"})


class _HetaLikeKb:
    """Duck-types a Heta KnowledgeBase: ``query_engines.modes`` and ``query(...)``."""

    name = "heta-like"
    query_engines = _Registry()

    def __init__(self) -> None:
        self.calls = 0

    def query(self, query: str, *, mode: str, top_k: int, options: Any, trace: bool) -> Any:
        self.calls += 1
        return exact_kb(query, mode="good", top_k=top_k)


@requires_heta
def test_prebuilt_heta_kb_and_custom_query_engine(tmp_path: Path) -> None:
    from heta_framework.kb import (
        KnowledgeBase,
        QueryEngineRegistry,
        QueryRequest,
        QueryResponse,
        SearchAssetRef,
    )

    class TopChunkAnswer:
        mode = "extractive_answer"
        required_assets = frozenset({SearchAssetRef(kind="chunk_full_text_index")})

        async def query(self, request: QueryRequest, context: Any) -> QueryResponse:
            inner = await context.query("full_text_search", request)
            answer = inner.results[0].text if inner.results else None
            return QueryResponse(mode=self.mode, results=inner.results, answer=answer, citations=inner.citations)

    recipe = heta_recipe(tmp_path)
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    registry = QueryEngineRegistry.defaults().register(TopChunkAnswer())
    report = heta_nb.evaluate(
        bench,
        recipe=recipe,
        knowledge_base_name="kb",
        top_k=5,
        query_engines=registry,
        query_modes=["full_text_search", "extractive_answer"],
        progress=False,
        evaluators=["answer_contains", "evidence_recall@3"],
    )
    assert report.score_summary["extractive_answer.answer_contains"] > 0
    assert report.score_summary["full_text_search.answer_contains"] == 0.0
    # the KB Heta built, loaded and passed straight in as kb=
    kb = asyncio.run(KnowledgeBase.load(recipe=recipe, name="kb", query_engines=registry))
    again = heta_nb.evaluate(
        bench,
        kb=kb,
        query_modes=["extractive_answer"],
        progress=False,
        top_k=5,
        evaluators=["answer_contains"],
        report_id="prebuilt",
    )
    assert again.knowledge_base_name == "kb"
    assert again.report_key.startswith("_heta/knowledge_bases/kb/evaluations/prebuilt/")  # kb's own store
    assert (
        again.score_summary["extractive_answer.answer_contains"]
        == report.score_summary["extractive_answer.answer_contains"]
    )
    assert dict(again.recipe_manifest) == dict(report.recipe_manifest)


@requires_heta
def test_unknown_mode_is_warned_about_before_querying(tmp_path: Path) -> None:
    events: list[Any] = []
    report = heta_nb.evaluate(
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST),
        recipe=heta_recipe(tmp_path),
        knowledge_base_name="kb",
        query_modes=["full_text_search", "vector_search"],
        evaluators=["evidence_recall@3"],
        progress=False,
        on_event=events.append,
        retries=0,
    )
    assert any(e.kind == "warning" and e.code == "unknown_mode" and "vector_search" in e.message for e in events)
    assert {r.query_mode for r in report.errors()} == {"vector_search"}


@requires_heta
def test_manifest_is_coerced_from_heta(tmp_path: Path) -> None:
    assert BenchmarkManifest.coerce(heta_benchmark().manifest).key == "lighthouse_mini:1:test"


@requires_heta
def test_a_heta_object_store_as_the_report_store(tmp_path: Path) -> None:
    from heta_framework.common.stores import LocalObjectStore
    from runner_support import exact_kb, toy_benchmark

    objects = LocalObjectStore(tmp_path / "reports")
    report = heta_nb.evaluate(
        toy_benchmark(),
        kb=exact_kb,
        query_modes=["good"],
        knowledge_base_name="toy kb",
        report_id="in-heta-store",
        store=objects,
        progress=False,
    )
    key = "_heta/knowledge_bases/toy_kb/evaluations/in-heta-store/report.json"
    assert report.report_key == key
    assert asyncio.run(objects.get(key)) == report.to_json().encode("utf-8")
    assert not asyncio.run(objects.exists(key.replace("report.json", "checkpoint.jsonl")))


# -- a prebuilt Heta KB as kb= (found correct) -----------------------------------------------


@requires_heta
def test_prebuilt_heta_kb_missing_modes_are_warned_and_per_case_errors(tmp_path: Path) -> None:
    from heta_framework.kb import KnowledgeBase

    recipe = heta_recipe(tmp_path)
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="kb", evaluators=["evidence_recall@3"], progress=False)
    kb = asyncio.run(KnowledgeBase.load(recipe=recipe, name="kb"))
    events: list[Any] = []
    report = heta_nb.evaluate(
        bench,
        kb=kb,
        query_modes=["full_text_search", "vector_search", "no_such_mode"],
        evaluators=["evidence_recall@3"],
        progress=False,
        retries=0,
        lint=False,
        report_id="prebuilt",
        on_event=events.append,
    )
    warned = [e.message for e in events if e.kind == "warning" and e.code == "unknown_mode"]
    assert len(warned) == 2 and "vector_search" in warned[0] and "no_such_mode" in warned[1]
    errors = {(r.query_mode, r.error.error_type, r.error.message) for r in report.errors()}
    assert errors == {
        ("vector_search", "LookupError", "vector_search requires missing search asset(s): chunk_vector_index"),
        ("no_such_mode", "LookupError", "query engine is not registered: no_such_mode"),
    }
    assert report.score_summary["full_text_search.evidence_recall@3"] == 0.7


def test_misspelled_mode_of_a_heta_kb_is_refused() -> None:
    kb = _HetaLikeKb()
    with pytest.raises(
        RunError, match=r"'full_text_serach' is not a registered query mode; did you mean 'full_text_search'"
    ):
        heta_nb.evaluate(toy_benchmark(), kb=kb, query_modes=["full_text_serach"], progress=False, store=None)
    assert kb.calls == 0


def test_unrelated_unregistered_mode_still_runs_and_records_errors_as_heta_does() -> None:
    kb = _HetaLikeKb()
    report = heta_nb.evaluate(toy_benchmark(), kb=kb, query_modes=["no_such_mode"], progress=False, store=None)
    assert kb.calls > 0 and report.query_modes == ("no_such_mode",)
