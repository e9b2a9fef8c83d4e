"""Calling any KB: Heta KBs, objects, functions, numpy values, stuck threads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import requires_heta
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.model import heta_score_summary
from heta_nb.model.io import decode_report, encode_report
from heta_nb.runner import KnowledgeBaseAdapter

HARD_TIMEOUT_S = 30


def _run(benchmark: Any = None, **kwargs: Any) -> heta_nb.EvaluationReport:
    """``heta_nb.evaluate`` with a hard timeout, so a hanging run fails the test instead."""
    kwargs.setdefault("query_modes", ["good"])
    kwargs.setdefault("evaluators", ["evidence_recall@3"])
    kwargs.setdefault("store", None)
    kwargs.setdefault("progress", False)
    kwargs.setdefault("lint", False)
    kwargs.setdefault("timeout_s", None)
    kwargs.setdefault("retries", 0)
    kwargs.setdefault("knowledge_base_name", "toy kb")
    run = heta_nb.start(benchmark if benchmark is not None else toy_benchmark(6), **kwargs)
    try:
        return run.result(timeout=HARD_TIMEOUT_S)
    except TimeoutError:
        run.cancel()
        pytest.fail(f"the run did not finish within {HARD_TIMEOUT_S} s")


def _question(query: str) -> int:
    return int(query.rstrip("?").split()[-1])


# -- 1. StopIteration ------------------------------------------------------------------


def _stop_function(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    if _question(query) == 1:
        raise StopIteration("iterator exhausted")
    return exact_kb(query, mode=mode, top_k=top_k)


class _StopObject:
    name = "stopping kb"

    def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> dict[str, Any]:
        if _question(query) == 1:
            raise StopAsyncIteration("async iterator exhausted")
        return exact_kb(query, mode=mode, top_k=top_k)


class _AsyncStopObject:
    async def query(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        if _question(query) == 1:
            raise StopIteration("iterator exhausted")  # Python turns it into RuntimeError
        return exact_kb(query, mode=mode, top_k=top_k)


# -- 2. query_options copies -----------------------------------------------------------


class _MutatingKB:
    """Records the options it sees, then changes them (nested values too)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.objects: list[dict[str, Any]] = []

    def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> dict[str, Any]:
        self.seen.append(json.dumps(options, sort_keys=True))
        self.objects.append(options)
        options["top"] = "mutated"
        if "filters" in options:
            options["filters"]["n"] += 1
            options["tags"].append(query)
        return exact_kb(query, mode=mode, top_k=top_k)


class _AsyncMutatingKB(_MutatingKB):
    async def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> dict[str, Any]:  # type: ignore[override]
        return super().query(query, mode=mode, top_k=top_k, options=options, trace=trace)


# -- 3. numpy scalars ------------------------------------------------------------------


def _numpy_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    import numpy as np

    response = exact_kb(query, mode=mode, top_k=top_k)
    results = response["results"]
    results[0]["score"] = np.float32(0.5)
    results[1]["score"] = np.int64(2)
    results[2]["score"] = np.float64(0.125) if mode == "good" else np.float32("nan")
    return response


def _f32(case: Any, response: Any) -> Any:
    import numpy as np

    return np.float32(0.25)


def _i64(case: Any, response: Any) -> Any:
    import numpy as np

    return np.int64(2)


def _np_bool(case: Any, response: Any) -> Any:
    import numpy as np

    return np.bool_(case.case_id != "c000")


def _np_mapping(case: Any, response: Any) -> Any:
    import numpy as np

    return {"value": np.float32(0.75), "passed": np.bool_(True)}


MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


@pytest.mark.parametrize(
    ("kb", "raised"),
    [(_stop_function, "StopIteration"), (_StopObject(), "StopAsyncIteration"), (_AsyncStopObject(), "StopIteration")],
    ids=["sync-function", "sync-object", "async-object"],
)
def test_a_kb_raising_stop_iteration_fails_only_its_case(kb: Any, raised: str) -> None:
    report = _run(kb=kb)
    assert report.metadata["heta_nb"]["status"] == "complete"
    assert len(report.case_results) == 6
    for result in report.case_results:
        if result.case_id == "c001":
            assert result.response is None
            assert result.error is not None
            assert result.error.error_type == "RuntimeError"
            assert raised in result.error.message
        else:
            assert result.error is None, result.error
            assert result.response is not None and result.response.results


def test_the_adapter_chains_the_original_stop_iteration() -> None:
    adapter = KnowledgeBaseAdapter(_stop_function)
    try:
        call = adapter.caller("good", top_k=3, options={}, trace=False)
        with pytest.raises(RuntimeError, match="StopIteration: iterator exhausted") as info:
            asyncio.run(asyncio.wait_for(call("What is the answer to question 1?"), HARD_TIMEOUT_S))
        assert type(info.value.__cause__) is StopIteration
        fine = asyncio.run(asyncio.wait_for(call("What is the answer to question 2?"), HARD_TIMEOUT_S))
        assert fine["mode"] == "good"
    finally:
        adapter.close()


@pytest.mark.parametrize("kb_type", [_MutatingKB, _AsyncMutatingKB], ids=["sync", "async"])
def test_each_query_gets_its_own_copy_of_the_options(kb_type: type[_MutatingKB]) -> None:
    nested_options = {"filters": {"n": 0}, "tags": []}
    kb = kb_type()
    report = _run(kb=kb, query_options=nested_options, concurrency=1, query_modes=["good", "poor"])
    assert all(r.error is None for r in report.case_results)
    assert len(kb.seen) == 12
    assert set(kb.seen) == {json.dumps({"filters": {"n": 0}, "tags": []}, sort_keys=True)}
    assert nested_options == {"filters": {"n": 0}, "tags": []}

    flat_options = {"lang": "en", "k": 3, "boost": 1.5, "exact": True, "none": None, "ids": ("a", "b")}
    kb = kb_type()
    _run(kb=kb, query_options=flat_options, concurrency=1)
    expected = dict(flat_options, ids=["a", "b"])  # JSON has no tuples
    assert [json.loads(s) for s in kb.seen] == [expected] * 6
    assert len({id(o) for o in kb.objects}) == 6  # a fresh dict per call (all still alive)
    assert all(type(o) is dict for o in kb.objects)
    assert "top" not in flat_options


def test_numpy_scalars_become_plain_numbers(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    evaluators = ["evidence_recall@3", _f32, _i64, _np_bool, _np_mapping]
    report = _run(kb=_numpy_kb, evaluators=evaluators, store=ReportStore(tmp_path), report_id="np")
    assert report.metadata["heta_nb"]["status"] == "complete"
    for result in report.case_results:
        assert result.error is None, result.error
        assert result.response is not None
        scores = [r.score for r in result.response.results]
        assert [type(s) for s in scores] == [float, int, float]
        assert scores == [0.5, 2, 0.125]
        values = {s.name: s.value for s in result.scores}
        assert type(values["_f32"]) is float and values["_f32"] == 0.25
        assert type(values["_i64"]) is int and values["_i64"] == 2
        assert type(values["_np_bool"]) is bool and values["_np_bool"] is (result.case_id != "c000")
        assert type(values["_np_mapping"]) is float and result.score("_np_mapping").passed is True
        assert "evaluator_errors" not in result.metadata["heta_nb"]
    data = report.to_dict()
    first = data["case_results"][0]
    assert [type(r["score"]) for r in first["response"]["results"]] == [float, int, float]
    assert [type(s["value"]) for s in first["scores"]] == [float, float, int, bool, float]
    summary = dict(report.score_summary)
    assert summary == heta_score_summary(report.case_results)
    assert summary["good._f32"] == 0.25 and summary["good._i64"] == 2.0
    assert summary["good._np_bool"] == pytest.approx(5 / 6)
    assert summary["good._np_mapping"] == 0.75
    loaded = ReportStore(tmp_path).load("toy kb", "np")
    assert loaded == report
    assert json.dumps(loaded.to_dict(), sort_keys=True) == json.dumps(data, sort_keys=True)


def test_a_numpy_nan_score_stays_nan() -> None:
    pytest.importorskip("numpy")
    report = _run(toy_benchmark(2), kb=_numpy_kb, query_modes=["poor"])
    for result in report.case_results:
        assert result.error is None, result.error
        assert result.response is not None
        score = result.response.results[2].score
        assert type(score) is float and score != score
    assert "NaN" in json.dumps(report.to_dict())


def test_numpy_arrays_are_still_refused() -> None:
    np = pytest.importorskip("numpy")

    def array_kb(query: str) -> dict[str, Any]:
        return {"results": [{"id": "d1", "text": "t", "score": np.array(0.5)}]}

    def array_score(case: Any, response: Any) -> Any:
        return np.array([0.5])

    report = _run(toy_benchmark(1), kb=array_kb)
    error = report.case_results[0].error
    assert error is not None and error.error_type == "InvalidResponseError"
    assert "must be a number, got ndarray" in error.message
    report = _run(toy_benchmark(1), kb=exact_kb, evaluators=[array_score])
    score = report.case_results[0].score("array_score")
    assert score.value == "error" and "returned ndarray, not a score" in score.metadata["error"]["message"]


@requires_heta
def test_heta_objects_with_numpy_scalars() -> None:
    np = pytest.importorskip("numpy")
    from heta_framework.evaluation.types import EvaluationScore as HetaScore
    from heta_framework.kb.search.types import QueryResponse as HetaResponse
    from heta_framework.kb.search.types import QueryResult as HetaResult

    def heta_kb(query: str, *, mode: str) -> Any:
        results = (
            HetaResult(id="r1", text="first", score=np.float32(0.5)),
            HetaResult(id="r2", text="second", score=np.int64(3)),
        )
        return HetaResponse(mode=mode, results=results)

    def heta_score(case: Any, response: Any) -> Any:
        return HetaScore(name="heta_score", value=np.float32(0.5), passed=np.bool_(False))

    report = _run(toy_benchmark(2), kb=heta_kb, evaluators=[heta_score])
    for result in report.case_results:
        assert result.error is None, result.error
        assert result.response is not None
        assert [(type(r.score), r.score) for r in result.response.results] == [(float, 0.5), (int, 3)]
        score = result.score("heta_score")
        assert type(score.value) is float and score.value == 0.5 and score.passed is False


@requires_heta
@pytest.mark.hostile
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
