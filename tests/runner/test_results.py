"""What the runner records for each case: responses, errors, scores, order, summary."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest
from helpers import requires_heta
from runner_support import SlowKB, evaluate_toy, exact_kb

import heta_nb
from heta_nb import ReportStore
from heta_nb.model import QueryResponse, heta_score_summary

MODES = ["good", "poor"]


def _query_only(query: str) -> list[str]:
    return [f"Document {query[-2]} text"]


class SyncObject:
    name = "sync object"

    def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> QueryResponse:
        return QueryResponse(mode=mode, results=[{"id": "r1", "text": "plain text"}], answer="answer1")


async def async_function(query: str, mode: str) -> dict:
    await asyncio.sleep(0)
    return {"results": [{"id": "x", "text": "t", "source": {"document_id": "d1"}}]}


class StrayCancelKB:
    """Raises ``CancelledError`` for one case, as a KB awaiting a cancelled task of its own does."""

    name = "stray cancel kb"

    async def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> dict[str, Any]:
        if query.endswith("question 1?") and mode == "good":
            task = asyncio.ensure_future(asyncio.sleep(10))
            task.cancel()
            await task  # raises CancelledError here, though nobody cancelled the run
        await asyncio.sleep(0)
        return exact_kb(query, mode=mode, top_k=top_k)


class UnprintableError(RuntimeError):
    def __str__(self) -> str:
        raise RuntimeError("str fails")


def test_order_and_summary_whatever_the_completion_order() -> None:
    kb = SlowKB(delay=0.001, jitter=0.02, seed=7)
    report = evaluate_toy(kb=kb, concurrency=16, store=None)
    expected = [(f"c{i:03d}", mode) for i in range(12) for mode in MODES]
    assert [(r.case_id, r.query_mode) for r in report.case_results] == expected
    assert dict(report.score_summary) == heta_score_summary(report.case_results)
    summary = report.score_summary
    assert summary["good.evidence_recall@3"] == 1.0 and summary["good.ndcg@3"] == 1.0
    assert summary["poor.ndcg@3"] == pytest.approx(0.5)  # relevant at rank 3: 1/log2(4)
    assert summary["good.answer_contains"] == 1.0 and summary["poor.answer_contains"] == 0.0
    first = report.case_results[0]
    assert first.metadata["benchmark_run_unit"] == "corpus"
    assert first.metadata["knowledge_base_name"] == "toy kb"
    assert first.metadata["heta_nb"]["case_index"] == 0
    assert report.metadata["heta_nb"]["status"] == "complete"
    assert report.metadata["run_units"][0]["unit_id"] == "corpus"
    assert kb.calls == 24


@pytest.mark.parametrize(
    "kb",
    [exact_kb, _query_only, SyncObject(), async_function, SlowKB(0)],
    ids=["sync-fn", "query-only-fn", "sync-object", "async-fn", "async-object"],
)
def test_every_kind_of_kb(kb: Any) -> None:
    report = evaluate_toy(kb=kb, store=None, knowledge_base_name="k")
    assert len(report.case_results) == 24
    assert report.error_count == 0, [r.error.message for r in report.errors()]


def test_bad_responses_become_case_errors_not_crashes() -> None:
    def garbage(query: str, *, mode: str) -> Any:
        if query.endswith("1?"):
            return 42
        if query.endswith("2?"):
            return {"results": [{"id": "r", "text": "   "}]}  # blank text: invalid in Heta's schema
        if query.endswith("3?"):
            raise LookupError("query engine is not registered: " + mode)
        return ["a fine result"]

    report = evaluate_toy(kb=garbage, store=None, knowledge_base_name="k")
    errors = {(r.case_id, r.error.error_type) for r in report.errors()}
    assert ("c001", "InvalidResponseError") in errors and ("c002", "InvalidResponseError") in errors
    assert ("c003", "LookupError") in errors
    assert report.case("c001", "good").error.message.startswith("the KB returned int")
    assert "traceback" in report.case("c003", "good").error.metadata
    assert report.case("c000", "good").ok
    assert len(report.case_results) == 24


def test_an_evaluator_that_raises_keeps_the_response() -> None:
    def picky(case: Any, response: Any) -> float:
        if case.case_id == "c004":
            raise ZeroDivisionError("picky failed")
        return 1.0

    report = evaluate_toy(kb=exact_kb, store=None, evaluators=["evidence_recall@3", picky])
    result = report.case("c004", "good")
    assert result.ok and result.response is not None
    score = result.score("picky")
    assert score.value == "error" and score.metadata["error"]["type"] == "ZeroDivisionError"
    assert result.score("evidence_recall@3").value == 1.0
    assert result.metadata["heta_nb"]["evaluator_errors"] == ("picky",)
    assert report.score_summary["good.picky"] == 1.0  # the error is left out, as text scores are


# -- encoding ---------------------------------------------------------------------------------


def test_non_finite_scores_are_kept_as_nan_not_null(tmp_path: Path) -> None:
    def kb(query: str) -> list[dict[str, Any]]:
        return [{"id": "r1", "text": "Document text", "score": math.nan}, {"id": "r2", "text": "x", "score": math.inf}]

    def odd(case: Any, response: Any) -> float:
        return math.nan

    report = evaluate_toy(
        query_modes=["good"], kb=kb, store=tmp_path, evaluators=[odd, "answer_contains"], report_id="nan"
    )
    assert math.isnan(report.case_results[0].score("odd").value)
    raw = (tmp_path / report.report_key).read_text()
    assert '"value":NaN' in raw and '"score":NaN' in raw and '"score":Infinity' in raw
    loaded = ReportStore(tmp_path).load("toy kb", "nan")
    assert math.isnan(loaded.case_results[0].score("odd").value)
    assert math.isinf(loaded.case_results[0].response.results[1].score)
    assert dict(loaded.score_summary).keys() == dict(report.score_summary).keys()


def test_an_evaluator_whose_metadata_is_not_json_is_an_evaluator_error(tmp_path: Path) -> None:
    def leaky(case: Any, response: Any) -> dict[str, Any]:
        return {"value": 1.0, "metadata": {"handle": object()}}

    report = evaluate_toy(
        query_modes=["good"], kb=exact_kb, store=tmp_path, evaluators=[leaky, "ndcg@3"], report_id="leaky"
    )
    first = report.case_results[0]
    assert first.ok and first.score("leaky").value == "error"
    assert "not JSON" in first.score("leaky").metadata["error"]["message"]
    assert first.score("ndcg@3").value == 1.0
    assert ReportStore(tmp_path).load("toy kb", "leaky") == report


@requires_heta
def test_heta_responses_are_shared_and_foreign_values_converted_as_heta_does(tmp_path: Path) -> None:
    from heta_framework.evaluation import EvaluationScore as HetaScore
    from heta_framework.kb.search import QueryResponse as HetaResponse
    from heta_framework.kb.search import QueryResult as HetaResult

    plain = HetaResult(
        id="c1", text="Document 1 text", score=2.5, source={"document_id": "d1", "chunk_ids": ("c1",)}, metadata={}
    )

    class Foreign:
        pass

    odd = HetaResult(id="c2", text="odd", source={"tags": {"a"}, 7: Foreign()}, metadata={"when": Foreign()})

    async def kb(query: str, *, mode: str) -> HetaResponse:
        if query.endswith("1?"):
            return HetaResponse(mode=mode, results=(plain, odd))
        return HetaResponse(mode=mode, results=(plain,), answer="Document 1")

    class HetaStyle:
        name = "heta_style"

        async def evaluate(self, *, case: Any, response: Any) -> HetaScore:
            return HetaScore(name="heta_style", value=True, passed=True, metadata={"n": len(response.results)})

    report = evaluate_toy(
        query_modes=["good"], kb=kb, store=tmp_path, evaluators=[HetaStyle(), "evidence_recall@3"], report_id="shared"
    )
    shared = report.case("c000", "good").response.raw["results"][0]
    assert shared is plain.__dict__  # no copy of a Heta result
    assert report.case("c000", "good").score("heta_style").metadata == {"n": 1}
    converted = report.case("c001", "good").response.raw["results"][1]
    assert converted["source"]["tags"] == ["a"]
    assert converted["source"]["7"] == {"type": "Foreign", "manifest_note": "value omitted because it is not JSON-safe"}
    assert converted["metadata"]["when"]["type"] == "Foreign"
    loaded = ReportStore(tmp_path).load("toy kb", "shared")
    assert loaded == report  # tuples in memory, lists on disk: equal as JSON
    assert loaded.case("c000", "good").response.raw["results"][0]["source"]["chunk_ids"] == ["c1"]


def test_a_sync_evaluate_that_returns_an_awaitable_is_awaited() -> None:
    class Wrapped:
        name = "wrapped"

        def evaluate(self, *, case: Any, response: Any) -> Any:  # sync, but hands back a coroutine
            async def later() -> float:
                return 0.5

            return later()

    report = evaluate_toy(query_modes=["good"], kb=exact_kb, store=None, evaluators=[Wrapped(), "answer_contains"])
    assert all(r.score("wrapped").value == 0.5 for r in report.case_results)


@pytest.mark.parametrize(
    ("values", "result_scores", "expected"),
    [
        ([1.0, 0.5, True], [3.0, 2.0], False),
        ([float("nan"), 1.0], [1.0], True),
        ([1.0], [1.0, float("inf")], True),
        (["error", None], [float("-inf")], True),  # text values force the term-by-term check
        (["error", None], [1.0, None], False),
        ([1e308, 1e308], [1e308], False),  # the sum overflows; every term is finite
        ([], [], False),
    ],
)
def test_non_finite_numbers_are_found_whatever_else_the_result_holds(
    values: list[Any], result_scores: list[Any], expected: bool
) -> None:
    from heta_nb.runner.encode import has_non_finite as _has_non_finite

    data = {
        "scores": [{"name": f"s{i}", "value": v} for i, v in enumerate(values)],
        "response": {"results": [{"id": str(i), "score": s} for i, s in enumerate(result_scores)]},
    }
    assert _has_non_finite(data) is expected
    data["response"] = None
    assert _has_non_finite(data) is (expected and any(isinstance(v, float) and not math.isfinite(v) for v in values))


def test_an_exception_whose_message_cannot_be_read_is_still_recorded() -> None:
    def kb(query: str, *, mode: str, top_k: int) -> Any:
        if mode == "poor":
            raise UnprintableError()
        return exact_kb(query, mode=mode, top_k=top_k)

    def evaluator(case: Any, response: Any) -> float:
        raise UnprintableError()

    report = evaluate_toy(lint=False, kb=kb, evaluators=["answer_contains", evaluator], retries=0)
    assert report.metadata["heta_nb"]["status"] == "complete" and len(report.case_results) == 24
    poor = [r for r in report.case_results if r.query_mode == "poor"]
    assert all(r.error.error_type == "UnprintableError" and "could not be read" in r.error.message for r in poor)
    good = [r for r in report.case_results if r.query_mode == "good"]
    assert all(s.value == "error" for r in good for s in r.scores if s.name == "evaluator")


def test_a_score_that_takes_another_evaluators_name_is_that_evaluators_error() -> None:
    def impostor(case: Any, response: Any) -> dict[str, Any]:
        return {"name": "answer_contains", "value": 0.0}

    def renamed(case: Any, response: Any) -> dict[str, Any]:
        return {"name": "my metric", "value": 0.5}  # a name of its own is fine

    report = evaluate_toy(lint=False, kb=exact_kb, evaluators=["answer_contains", impostor, renamed])
    for result in report.case_results:
        names = [s.name for s in result.scores]
        assert names == ["answer_contains", "impostor", "my metric"]
        impostor_score = result.scores[1]
        assert impostor_score.value == "error" and "another evaluator" in impostor_score.metadata["error"]["message"]
    assert report.score_summary["good.answer_contains"] == 1.0  # not averaged with the impostor's 0.0


@pytest.mark.hostile
def test_a_run_whose_evaluator_returns_a_huge_integer_completes(tmp_path: Path) -> None:
    from heta_nb.benchmark import Benchmark, BenchmarkCase

    benchmark = Benchmark(
        {"name": "b", "version": "1", "split": "test", "task_type": "qa"},
        (),
        [BenchmarkCase(case_id=f"c{i}", query=f"q{i}") for i in range(3)],
    )

    def huge(case: Any, response: Any) -> int:
        return 10**400

    report = heta_nb.evaluate(
        benchmark,
        kb=lambda query: [],
        query_modes=["m"],
        evaluators=[huge],
        store=tmp_path,
        report_id="huge",
        progress=False,
    )
    assert len(report.case_results) == 3
    assert report.score_summary["m.huge"] == float("inf")
    assert (
        heta_nb.load_report(
            tmp_path / "_heta/knowledge_bases" / report.knowledge_base_name / "evaluations/huge/report.json"
        )
        == report
    )
