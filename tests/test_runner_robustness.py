"""Runs that meet odd KBs, evaluators and settings still end with every case recorded.

Found by fault injection: a KB or an evaluator that raises ``CancelledError`` of its
own, an exception whose ``__str__`` fails, settings the engine took without checking,
and resuming a finished report with other settings (which replaced it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from runner_support import SlowKB, cancel_after, exact_kb, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import ReportExistsError
from heta_nb.runner import RunError

MODES = ["good", "poor"]


def _run(**kwargs: Any) -> heta_nb.EvaluationReport:
    kwargs.setdefault("progress", False)
    kwargs.setdefault("query_modes", MODES)
    kwargs.setdefault("knowledge_base_name", "toy kb")
    kwargs.setdefault("lint", False)
    return heta_nb.evaluate(kwargs.pop("benchmark", toy_benchmark()), **kwargs)


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


@pytest.mark.skipif(not hasattr(asyncio.Task, "cancelling"), reason="Python 3.10 cannot tell a stray CancelledError")
def test_a_cancelled_error_the_kb_raises_itself_is_that_case_s_error() -> None:
    report = _run(kb=StrayCancelKB())
    info = report.metadata["heta_nb"]
    assert info["status"] == "complete" and info["done"] == info["total"] == 24
    failed = [r for r in report.case_results if r.error is not None]
    assert {(r.case_id, r.query_mode) for r in failed} == {("c001", "good"), ("c007", "good")}
    assert all(
        r.error.error_type == "CancelledError" and "nothing cancelled this run" in r.error.message for r in failed
    )


@pytest.mark.skipif(not hasattr(asyncio.Task, "cancelling"), reason="Python 3.10 cannot tell a stray CancelledError")
def test_a_cancelled_error_an_evaluator_raises_is_that_score_s_error() -> None:
    async def stray(case: Any, response: Any) -> float:
        task = asyncio.ensure_future(asyncio.sleep(10))
        task.cancel()
        await task
        return 1.0

    report = _run(kb=exact_kb, evaluators=["answer_contains", stray])
    assert report.metadata["heta_nb"]["status"] == "complete" and len(report.case_results) == 24
    for result in report.case_results:
        assert result.response is not None and result.error is None
        score = next(s for s in result.scores if s.name == "stray")
        assert score.value == "error" and score.metadata["error"]["type"] == "CancelledError"


class UnprintableError(RuntimeError):
    def __str__(self) -> str:
        raise RuntimeError("str fails")


def test_an_exception_whose_message_cannot_be_read_is_still_recorded() -> None:
    def kb(query: str, *, mode: str, top_k: int) -> Any:
        if mode == "poor":
            raise UnprintableError()
        return exact_kb(query, mode=mode, top_k=top_k)

    def evaluator(case: Any, response: Any) -> float:
        raise UnprintableError()

    report = _run(kb=kb, evaluators=["answer_contains", evaluator], retries=0)
    assert report.metadata["heta_nb"]["status"] == "complete" and len(report.case_results) == 24
    poor = [r for r in report.case_results if r.query_mode == "poor"]
    assert all(r.error.error_type == "UnprintableError" and "could not be read" in r.error.message for r in poor)
    good = [r for r in report.case_results if r.query_mode == "good"]
    assert all(s.value == "error" for r in good for s in r.scores if s.name == "evaluator")


def test_settings_the_engine_used_to_take_unchecked_are_refused_before_any_query() -> None:
    kb = SlowKB(0)
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    for settings, message in (
        ({"retry_on": ("x",)}, "retry_on must be exception classes"),
        ({"backoff_s": float("inf")}, "backoff_s must be a finite number"),
        ({"timeout_s": True}, "timeout_s must be a positive number"),
        ({"shard": (True, 2)}, "shard must be"),
        ({"metadata": {"heta_nb": {"mine": 1}}}, r"metadata keys \['heta_nb'\] are written by the runner"),
        ({"metadata": {"run_units": []}}, "are written by the runner"),
        ({"metadata": cyclic}, "nested too deeply or contains itself"),
        ({"metadata": ["not", "a", "mapping"]}, "metadata"),
    ):
        with pytest.raises(RunError, match=message):
            _run(kb=kb, **settings)
    assert kb.calls == 0


def test_retry_on_takes_one_exception_class() -> None:
    calls: dict[str, int] = {}

    def kb(query: str, *, mode: str, top_k: int) -> Any:
        calls[query + mode] = calls.get(query + mode, 0) + 1
        if calls[query + mode] == 1:
            raise KeyError("first call fails")
        return exact_kb(query, mode=mode, top_k=top_k)

    report = _run(benchmark=toy_benchmark(6), kb=kb, retry_on=KeyError, retries=1, backoff_s=0)  # distinct queries
    assert all(r.error is None for r in report.case_results)
    assert {r.metadata["heta_nb"]["attempts"] for r in report.case_results} == {2}


def test_resuming_a_finished_report_with_other_settings_is_refused_and_keeps_it(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    first = _run(kb=exact_kb, store=store, report_id="done", query_modes=["good"])
    stored = (tmp_path / store.key_for("toy kb", "done")).read_bytes()
    for settings, field in (
        ({"query_modes": ["poor"]}, "modes"),
        ({"query_modes": ["good"], "evaluators": ["answer_contains"]}, "evaluators"),
        ({"query_modes": ["good"], "top_k": 3}, "top_k"),
        (
            {
                "query_modes": ["good"],
                "benchmark": toy_benchmark().__class__(
                    {"name": "other", "version": "1", "split": "test", "task_type": "qa"},
                    toy_benchmark().documents,
                    toy_benchmark().cases,
                ),
            },
            "benchmark",
        ),
    ):
        with pytest.raises(RunError, match=f"its stored report has {field}="):
            _run(kb=exact_kb, store=store, report_id="done", resume=True, **settings)
    assert (tmp_path / store.key_for("toy kb", "done")).read_bytes() == stored
    kb = SlowKB(0)
    again = _run(kb=kb, store=store, report_id="done", resume=True, query_modes=["good"])
    assert kb.calls == 0 and again.case_results == first.case_results


def test_a_run_that_only_left_a_checkpoint_is_not_started_over_silently(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    cancel_after(3, store=store, kb=SlowKB(0.02), report_id="cp", cases=30)
    # what a kill -9 before the final save leaves: the checkpoint, no report
    for leftover in (tmp_path / store.key_for("toy kb", "cp")).parent.iterdir():
        if leftover.name != "checkpoint.jsonl":
            leftover.unlink()
    checkpoint = (tmp_path / store.key_for("toy kb", "cp")).parent / "checkpoint.jsonl"
    kept = checkpoint.read_bytes()
    with pytest.raises(ReportExistsError, match="left a checkpoint"):
        _run(benchmark=toy_benchmark(30), kb=SlowKB(0), store=store, report_id="cp")
    assert checkpoint.read_bytes() == kept
    fresh = _run(benchmark=toy_benchmark(30), kb=SlowKB(0), store=store, report_id="cp", overwrite=True)
    assert fresh.metadata["heta_nb"]["resumed"] == 0 and len(fresh.case_results) == 60


@pytest.mark.skipif(not hasattr(asyncio, "timeout"), reason="asyncio.timeout is Python 3.11+")
def test_evaluate_async_lets_the_callers_cancellation_propagate(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)

    async def main() -> str:
        try:
            async with asyncio.timeout(0.3):
                await heta_nb.evaluate_async(
                    toy_benchmark(30),
                    kb=SlowKB(0.05),
                    query_modes=MODES,
                    store=store,
                    report_id="timed",
                    knowledge_base_name="toy kb",
                    progress=False,
                    concurrency=2,
                )
        except TimeoutError:
            return "timed out"
        return "returned"

    assert asyncio.run(main()) == "timed out"
    saved = store.load("toy kb", "timed")
    assert saved.metadata["heta_nb"]["status"] == "cancelled" and 0 < len(saved.case_results) < 60
    finished = _run(benchmark=toy_benchmark(30), kb=SlowKB(0), store=store, report_id="timed", resume=True)
    assert finished.metadata["heta_nb"]["status"] == "complete" and len(finished.case_results) == 60


def test_a_score_that_takes_another_evaluators_name_is_that_evaluators_error() -> None:
    def impostor(case: Any, response: Any) -> dict[str, Any]:
        return {"name": "answer_contains", "value": 0.0}

    def renamed(case: Any, response: Any) -> dict[str, Any]:
        return {"name": "my metric", "value": 0.5}  # a name of its own is fine

    report = _run(kb=exact_kb, evaluators=["answer_contains", impostor, renamed])
    for result in report.case_results:
        names = [s.name for s in result.scores]
        assert names == ["answer_contains", "impostor", "my metric"]
        impostor_score = result.scores[1]
        assert impostor_score.value == "error" and "another evaluator" in impostor_score.metadata["error"]["message"]
    assert report.score_summary["good.answer_contains"] == 1.0  # not averaged with the impostor's 0.0


def test_start_refuses_bad_evaluators_before_it_returns() -> None:
    for evaluators, error in (
        (["answer_contains", "answer_contains"], "must be unique"),
        (["no_such_metric@3"], "no_such_metric"),
    ):
        with pytest.raises((RunError, ValueError, KeyError), match=error):
            heta_nb.start(toy_benchmark(), kb=exact_kb, query_modes=MODES, evaluators=evaluators, progress=False)
    report = _run(kb=exact_kb, evaluators="answer_contains")  # one name alone is one evaluator
    assert [s.name for s in report.case_results[0].scores] == ["answer_contains"]
