"""Timeouts, retries and backoff."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from runner_support import FlakyKB, evaluate_toy

import heta_nb
from heta_nb.runner.deadlines import SUPPORTED, Deadlines

MODES = ["good", "poor"]


def test_timeouts_and_retries() -> None:
    class Hangs:
        def __init__(self) -> None:
            self.calls = 0

        async def query(self, query: str, **_: Any) -> list[str]:
            self.calls += 1
            if query.endswith("0?"):
                await asyncio.sleep(30)
            return ["ok"]

    kb = Hangs()
    started = time.perf_counter()
    report = evaluate_toy(kb=kb, store=None, knowledge_base_name="k", timeout_s=0.2, retries=1, backoff_s=0.01)
    assert time.perf_counter() - started < 5
    hung = [r for r in report.case_results if r.case_id in ("c000", "c006")]
    assert all(r.error.error_type == "TimeoutError" and r.error.retryable for r in hung)
    assert all(r.error.metadata["attempts"] == 2 for r in hung)
    assert report.error_count == len(hung) == 4


def test_flaky_kb_succeeds_with_retries() -> None:
    kb = FlakyKB(rate=0.3, seed=3)
    report = evaluate_toy(kb=kb, store=None, knowledge_base_name="k", retries=6, backoff_s=0.001)
    assert kb.failures > 3
    assert report.error_count == 0
    attempts = [r.metadata["heta_nb"]["attempts"] for r in report.case_results]
    assert sum(attempts) == kb.calls and max(attempts) > 1
    without = evaluate_toy(kb=FlakyKB(rate=0.3, seed=3), store=None, knowledge_base_name="k", retries=0)
    assert without.error_count > 0
    assert {r.error.error_type for r in without.errors()} == {"FlakyError"}
    assert all(r.error.retryable for r in without.errors())


# -- timeouts ------------------------------------------------------------------------------


def test_a_hung_query_times_out_within_five_percent() -> None:
    async def hangs(query: str) -> list[str]:
        if query.endswith("3?"):
            await asyncio.sleep(30)
        return ["Document text"]

    started = time.perf_counter()
    report = evaluate_toy(query_modes=["good"], kb=hangs, store=None, timeout_s=0.4, retries=0, concurrency=4)
    elapsed = time.perf_counter() - started
    hung = [r for r in report.case_results if not r.ok]
    assert [r.case_id for r in hung] == [r.case_id for r in report.case_results if r.query.endswith("3?")]
    assert hung and all(r.error.error_type == "TimeoutError" for r in hung)
    assert all(0.4 <= r.latency_ms / 1000 < 0.4 * 1.05 + 0.1 for r in hung)
    assert elapsed < 3


def test_a_kb_that_swallows_the_cancellation_is_a_timeout_and_the_run_goes_on() -> None:
    """An answer that comes after its deadline (the KB ignored the cancellation) is never a success."""
    calls = []

    async def stubborn(query: str) -> list[str]:
        calls.append(query)
        if len(calls) == 1:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:  # a badly behaved KB: ignores the timeout
                return ["late answer"]
        await asyncio.sleep(0.01)  # later queries must not see a stale cancellation
        return ["Document text"]

    report = evaluate_toy(query_modes=["good"], kb=stubborn, store=None, timeout_s=0.2, retries=0, concurrency=1)
    assert len(report.case_results) == 12 and report.error_count == 1
    error = report.case_results[0].error
    assert error is not None and error.error_type == "TimeoutError" and "swallowed its cancellation" in error.message
    assert all(r.ok for r in report.case_results[1:])  # later queries do not see a stale cancellation
    assert report.metadata["heta_nb"]["status"] == "complete"


@pytest.mark.skipif(not SUPPORTED, reason="the watchdog needs Task.uncancel (Python 3.11+); 3.10 uses wait_for")
def test_deadlines_tell_a_timeout_from_a_real_cancellation() -> None:
    async def scenario() -> tuple[str, str]:
        deadlines = Deadlines(0.05)
        deadlines.start()
        outcomes = {}

        async def query(name: str) -> None:
            task = asyncio.current_task()
            assert task is not None
            deadlines.arm(task)
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                outcomes[name] = "timeout" if deadlines.expired(task) else "cancelled"
                if outcomes[name] == "cancelled":
                    raise
            finally:
                deadlines.disarm(task)

        alone = asyncio.ensure_future(query("alone"))
        both = asyncio.ensure_future(query("both"))
        early = asyncio.ensure_future(query("early"))
        await asyncio.sleep(0.01)
        early.cancel()  # the user cancels before the deadline: a plain cancellation
        await asyncio.sleep(0)
        time.sleep(0.07)  # blocks the loop: every deadline passes before the watchdog runs
        both.cancel()  # ... and the user cancels this one too, at the same moment
        await asyncio.gather(early, return_exceptions=True)
        await asyncio.gather(alone, both, return_exceptions=True)
        await deadlines.stop()
        assert not alone.cancelled() and both.cancelled() and early.cancelled()
        assert outcomes["early"] == "cancelled"
        return outcomes["alone"], outcomes["both"]

    assert asyncio.run(scenario()) == ("timeout", "cancelled")


def test_a_sync_kb_stuck_past_its_timeout_does_not_starve_the_next_queries() -> None:
    import time as _time

    from heta_nb.benchmark import Benchmark, BenchmarkCase

    benchmark = Benchmark(
        {"name": "b", "version": "1", "split": "test", "task_type": "qa"},
        (),
        [BenchmarkCase(case_id=f"c{i}", query=f"q{i}") for i in range(4)],
    )

    def kb(query: str) -> list[Any]:
        if query == "q0":
            _time.sleep(1.5)  # overruns timeout_s; Python cannot stop this thread
        return []

    started = _time.monotonic()
    report = heta_nb.start(
        benchmark,
        kb=kb,
        query_modes=["m"],
        evaluators=[],
        concurrency=1,
        timeout_s=0.3,
        retries=0,
        store=None,
        progress=False,
        lint=False,
    ).result(timeout=30)
    by_case = {r.case_id: r for r in report.case_results}
    assert by_case["c0"].error is not None and by_case["c0"].error.error_type == "TimeoutError"
    assert all(by_case[f"c{i}"].error is None for i in (1, 2, 3))  # before: each waited for c0's thread and timed out
    assert _time.monotonic() - started < 1.4
