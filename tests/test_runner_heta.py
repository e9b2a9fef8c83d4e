"""The runner with real heta-framework recipes, KBs, benchmarks and evaluators."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import FIXTURES, UnitsBenchmark, heta_jsonl_benchmark, heta_recipe, requires_heta

import heta_nb
from heta_nb.model import BenchmarkManifest
from heta_nb.model.io import decode_report, encode_report

pytestmark = requires_heta

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


def heta_run(root: Path, benchmark: Any, name: str, **kwargs: Any) -> Any:
    from heta_framework.evaluation import BenchmarkRunConfig, BenchmarkRunner, BenchmarkWorkspace

    result = asyncio.run(
        BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=heta_recipe(root),
            knowledge_base_name=name,
            query_modes=("full_text_search",),
            workspace=BenchmarkWorkspace(root_dir=root / "ws", cache_dir=root / "ws" / "cache"),
            config=BenchmarkRunConfig(top_k=5, report_id="heta", **kwargs),
        )
    )
    return heta_nb.load_report(result.report)


def test_same_numbers_as_hetas_runner(tmp_path: Path) -> None:
    theirs = heta_run(tmp_path / "heta", heta_benchmark(), "lighthouse mini")
    events: list[Any] = []
    ours = heta_nb.evaluate(
        heta_benchmark(),
        recipe=heta_recipe(tmp_path / "ours"),
        knowledge_base_name="lighthouse mini",
        query_modes=["full_text_search"],
        top_k=5,
        report_id="ours",
        progress=False,
        on_event=events.append,
    )
    assert dict(ours.score_summary) == dict(theirs.score_summary)
    # to_dict() is plain JSON, though the results share Heta's data (its tuples included)
    assert ours.to_dict() == json.loads(ours.to_json())
    assert [(r.case_id, r.query_mode) for r in ours.case_results] == [
        (r.case_id, r.query_mode) for r in theirs.case_results
    ]
    assert dict(ours.recipe_manifest) == dict(theirs.recipe_manifest)
    assert ours.knowledge_base_manifest["name"] == theirs.knowledge_base_manifest["name"] == "lighthouse mini"
    assert set(ours.knowledge_base_manifest) == set(theirs.knowledge_base_manifest)
    assert list(ours.metadata["benchmark_document_keys"]) == list(theirs.metadata["benchmark_document_keys"])
    assert ours.report_key == "_heta/knowledge_bases/lighthouse_mini/evaluations/ours/report.json"
    steps = [(e.name, e.status) for e in events if e.kind == "build_step"]
    assert steps == [
        ("parse_documents", "running"),
        ("parse_documents", "succeeded"),
        ("split_documents", "running"),
        ("split_documents", "succeeded"),
        ("index_full_text", "running"),
        ("index_full_text", "succeeded"),
    ]
    # heta_nb's own evaluators under Heta's names give Heta's numbers
    names = [
        "evidence_recall@3",
        "answer_contains",
        "answer_exact_match",
        "beir_ndcg@3",
        "beir_map@3",
        "beir_recall@3",
        "beir_precision@3",
        "beir_mrr@3",
    ]
    builtin = heta_nb.evaluate(
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST),
        recipe=heta_recipe(tmp_path / "b"),
        knowledge_base_name="lighthouse mini",
        query_modes=["full_text_search"],
        top_k=5,
        evaluators=names,
        progress=False,
    )
    assert dict(builtin.score_summary) == dict(theirs.score_summary)


class TwoUnits(UnitsBenchmark):
    """A Heta BenchmarkProtocol object with two run units (as in the fixtures)."""

    def __init__(self, inner: Any) -> None:
        from heta_framework.evaluation import BenchmarkRunUnit

        units = (
            BenchmarkRunUnit(
                unit_id="coast",
                document_ids=("lh1", "lh2", "lh6", "lh8"),
                case_ids=("c01", "c02", "c05", "c10"),
            ),
            BenchmarkRunUnit(
                unit_id="Harbour Towns",
                document_ids=("lh3", "lh4", "lh5", "lh9"),
                case_ids=("c03", "c06", "c07", "c09"),
            ),
        )
        super().__init__(inner, units)


def test_multi_unit_protocol_benchmark(tmp_path: Path) -> None:
    theirs = heta_run(tmp_path / "heta", TwoUnits(heta_benchmark()), "lighthouse multi")
    ours = heta_nb.evaluate(
        TwoUnits(heta_benchmark()),
        recipe=heta_recipe(tmp_path / "ours"),
        knowledge_base_name="lighthouse multi",
        query_modes=["full_text_search"],
        top_k=5,
        progress=False,
        workspace=tmp_path / "ws",
    )
    manifests = [m["name"] for m in ours.knowledge_base_manifests]
    assert manifests == ["lighthouse multi-coast", "lighthouse multi-harbour_towns"]
    assert set(ours.knowledge_base_manifest) == {"knowledge_bases"}
    assert [r.metadata["knowledge_base_name"] for r in ours.case_results][:1] == ["lighthouse multi-coast"]
    assert dict(ours.score_summary) == dict(theirs.score_summary)
    assert [r.case_id for r in ours.case_results] == [r.case_id for r in theirs.case_results]


def test_rerun_reuses_the_built_kb_and_warns_about_contamination(tmp_path: Path) -> None:
    recipe = heta_recipe(tmp_path)
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    first = heta_nb.evaluate(
        bench,
        recipe=recipe,
        knowledge_base_name="kb",
        report_id="one",
        evaluators=["evidence_recall@3"],
        progress=False,
    )
    asyncio.run(recipe.stores.objects.put("raw/unrelated/notes.txt", b"Harrow Point notes"))
    events: list[Any] = []
    second = heta_nb.evaluate(
        bench,
        recipe=recipe,
        knowledge_base_name="kb",
        report_id="two",
        evaluators=["evidence_recall@3"],
        progress=False,
        on_event=events.append,
    )
    builds = [e.status for e in events if e.kind == "build_finished"]
    assert builds == ["reused"]
    warnings = [e.code for e in events if e.kind == "warning"]
    assert "corpus_contamination" in warnings
    assert dict(first.score_summary) == dict(second.score_summary)
    store = heta_nb.ReportStore(recipe.stores.objects)
    assert sorted(store.list()["report_id"]) == ["one", "two"]


def test_failed_recipe_step_is_recorded_not_fatal(tmp_path: Path) -> None:
    """Heta answers with a bare missing-asset LookupError; the warning kept in the report names the step."""
    events: list[Any] = []
    report = heta_nb.evaluate(
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST),
        recipe=heta_recipe(tmp_path, encoding="no_such_encoding"),
        knowledge_base_name="kb",
        evaluators=["evidence_recall@3"],
        progress=False,
        retries=0,
        lint=False,
        on_event=events.append,
    )
    steps = [(e.index, e.name, e.status) for e in events if e.kind == "build_step"]
    assert steps == [
        (0, "parse_documents", "running"),
        (0, "parse_documents", "succeeded"),
        (1, "split_documents", "running"),
        (1, "split_documents", "failed"),
    ]
    [started] = [e for e in events if e.kind == "build_started"]
    assert started.steps == ("parse_documents", "split_documents", "index_full_text")
    errors = {(r.error.error_type, r.error.message) for r in report.errors()}
    assert report.error_count == 10 and len(errors) == 1
    [(error_type, message)] = errors
    assert error_type == "LookupError"
    assert message.startswith("full_text_search requires missing search asset(s)")
    assert report.knowledge_base_manifest["run_record"]["status"] == "failed"
    assert dict(report.score_summary) == {}
    [warning] = [e for e in events if e.kind == "warning" and e.code == "build_failed"]
    assert "step 'split_documents' failed" in warning.message and "no_such_encoding" in warning.message
    assert any("step 'split_documents' failed" in w for w in report.metadata["heta_nb"]["warnings"])
    assert not [e for e in events if e.kind == "warning" and e.code == "unknown_mode"]


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


def test_manifest_is_coerced_from_heta(tmp_path: Path) -> None:
    assert BenchmarkManifest.coerce(heta_benchmark().manifest).key == "lighthouse_mini:1:test"


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


def test_names_heta_would_refuse_late_are_refused_before_any_write(tmp_path: Path) -> None:
    from heta_nb.runner import RunError

    recipe = heta_recipe(tmp_path)
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    with pytest.raises(RunError, match="at most 80 letters, digits"):
        heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="../evil", progress=False)
    with pytest.raises(RunError, match="at most 80 letters"):
        heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="x" * 81, progress=False)
    assert not (tmp_path / "objects").exists() or not list((tmp_path / "objects").rglob("*.txt"))


def test_a_protocol_benchmark_with_a_nesting_document_id_writes_nothing(tmp_path: Path) -> None:
    from heta_framework.evaluation import BenchmarkDocument

    class Nesting(TwoUnits):
        def __init__(self) -> None:
            super().__init__(heta_benchmark())

        async def run_units(self, prepared: Any) -> Any:
            from heta_framework.evaluation import BenchmarkRunUnit

            yield BenchmarkRunUnit(unit_id="corpus")  # every document, the nesting one included

        async def documents(self, prepared: Any) -> Any:
            async for document in self.inner.documents(prepared):
                yield document
            yield BenchmarkDocument(document_id="a/b", name="x.txt", media_type="text/plain", data=b"nested")

    recipe = heta_recipe(tmp_path)
    with pytest.raises(ValueError, match="plain path segment"):
        heta_nb.evaluate(Nesting(), recipe=recipe, knowledge_base_name="kb", progress=False, workspace=tmp_path / "w")
    assert not (tmp_path / "objects").exists() or list((tmp_path / "objects").rglob("*")) == []


def test_heta_objects_that_contain_themselves_become_recorded_errors_not_a_failed_run() -> None:
    """Heta copies ``source`` and ``metadata`` one level deep, so a cycle below survives.

    A cyclic score metadata is that evaluator's error (the response is kept); a cyclic
    result source makes the response unwritable, so the case is an
    ``InvalidResponseError``. Every case is recorded and the run completes.
    """
    from heta_framework.evaluation.types import EvaluationScore
    from heta_framework.kb.search import QueryResponse, QueryResult

    loop: dict[str, Any] = {}
    loop["itself"] = loop

    class CyclicKB:
        name = "cyclic kb"

        async def query(self, query: str, *, mode: str, top_k: int, options: Any, trace: bool) -> Any:
            source = loop if query.endswith("3?") else {"document_id": "d1"}
            return QueryResponse(mode=mode, results=(QueryResult(id="r1", text="answer", source=source),))

    class CyclicScore:
        name = "cyclic_score"

        async def evaluate(self, *, case: Any, response: Any) -> Any:
            metadata = loop if case.case_id.endswith("1") else {"fine": True}
            return EvaluationScore(name=self.name, value=1.0, metadata=metadata)

    cases = pd.DataFrame({"case_id": [f"c{i}" for i in range(5)], "query": [f"q {i}?" for i in range(5)]})
    benchmark = heta_nb.Benchmark.from_frame(cases, manifest=MANIFEST)
    report = heta_nb.evaluate(
        benchmark, kb=CyclicKB(), query_modes=["m"], evaluators=[CyclicScore(), "answer_contains"], progress=False
    )
    by_case = {r.case_id: r for r in report.case_results}
    assert len(by_case) == 5 and report.metadata["heta_nb"]["status"] == "complete"
    scored = by_case["c1"]
    assert scored.error is None and scored.response is not None
    assert scored.score("cyclic_score").value == "error"
    assert scored.metadata["heta_nb"]["evaluator_errors"] == ("cyclic_score",)
    unwritable = by_case["c3"]
    assert unwritable.error is not None and unwritable.error.error_type == "InvalidResponseError"
    assert "cannot be written as JSON" in unwritable.error.message and unwritable.response is None
    for case_id in ("c0", "c2", "c4"):
        assert by_case[case_id].error is None and by_case[case_id].score("cyclic_score").value == 1.0
    assert decode_report(encode_report(report), source="cyclic run") == report
