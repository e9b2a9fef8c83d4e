"""heta-framework's own objects (responses, reports, run results) load as Heta serializes them."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import heta_jsonl_benchmark, heta_recipe, requires_heta

import heta_nb
from heta_nb.model import EvaluationCaseResult, EvaluationScore, QueryResponse


def _heta_response():
    from heta_framework.kb.search import (
        QueryCitation,
        QueryInsight,
        QueryResult,
    )
    from heta_framework.kb.search import (
        QueryResponse as HetaResponse,
    )

    return HetaResponse(
        mode=" full_text_search ",
        results=(QueryResult(id="chunk_1", text=" Harrow Point ", score=3.5, source={"object_key": "raw/x.txt"}),),
        answer="Mirela Ostrand",
        citations=(QueryCitation(id="citation_1", result_id="chunk_1", source={"object_key": "raw/x.txt"}),),
        metadata={"ranking": "bm25", "tags": {"a"}},
        insights=(QueryInsight(text="claim", evidence_ids=("chunk_1",)),),
    )


@requires_heta
def test_heta_query_response_coerces_like_heta_serializes() -> None:
    from heta_framework.evaluation.types import _query_response_to_dict  # Heta's own serializer, as reference

    heta = _heta_response()
    ours = QueryResponse.coerce(heta)
    assert ours.to_dict() == json.loads(json.dumps(_query_response_to_dict(heta)))
    assert ours.results[0].text == "Harrow Point"
    assert "insights" not in ours.to_dict()  # dropped from reports, as Heta does


@requires_heta
def test_heta_report_object_loads_identically() -> None:
    from heta_framework.evaluation import (
        BenchmarkManifest,
        EvaluationError,
    )
    from heta_framework.evaluation import (
        EvaluationCaseResult as HetaCase,
    )
    from heta_framework.evaluation import (
        EvaluationReport as HetaReport,
    )
    from heta_framework.evaluation import (
        EvaluationScore as HetaScore,
    )

    heta_report = HetaReport(
        report_id="r1",
        benchmark=BenchmarkManifest(name="b", version="1", split="test", task_type="qa"),
        knowledge_base_name="kb",
        knowledge_base_manifest={"name": "kb"},
        recipe_manifest={"steps": []},
        query_modes=("full_text_search",),
        score_summary={"full_text_search.hit": 1.0},
        case_results=(
            HetaCase(
                case_id="c1",
                query="q",
                query_mode="full_text_search",
                scores=(HetaScore(name="hit", value=True, passed=True),),
                response=_heta_response(),
                latency_ms=1.25,
            ),
            HetaCase(
                case_id="c2",
                query="q2",
                query_mode="full_text_search",
                error=EvaluationError(message="boom", error_type="RuntimeError"),
                latency_ms=0.5,
            ),
        ),
        started_at="2026-12-01T00:00:00+00:00",
        finished_at="2026-12-01T00:00:01+00:00",
    )
    ours = heta_nb.load_report(heta_report)
    expected = json.dumps(heta_report.to_dict(), ensure_ascii=False, separators=(",", ":"))
    assert ours.to_json() == expected
    # case results and scores coerce one by one as well
    case = EvaluationCaseResult.coerce(heta_report.case_results[0])
    assert case.to_dict() == json.loads(json.dumps(heta_report.case_results[0].to_dict()))
    assert EvaluationScore.coerce(heta_report.case_results[0].scores[0]).value is True


@requires_heta
def test_heta_run_result_report_loads(tmp_path) -> None:
    """A BenchmarkRunResult's report, straight from Heta's runner."""
    from heta_framework.evaluation import BenchmarkRunConfig, BenchmarkRunner, BenchmarkWorkspace

    recipe = heta_recipe(tmp_path)
    benchmark = heta_jsonl_benchmark()
    result = asyncio.run(
        BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=recipe,
            knowledge_base_name="kb",
            query_modes=("full_text_search",),
            workspace=BenchmarkWorkspace(root_dir=tmp_path / "ws", cache_dir=tmp_path / "ws" / "c"),
            config=BenchmarkRunConfig(persist_report=False),
        )
    )
    report = heta_nb.load_report(result.report)
    assert len(report.case_results) == 10
    assert report.recomputed_score_summary() == dict(result.report.score_summary)
    with pytest.raises(AttributeError):
        report.report_id = "x"  # type: ignore[misc]
