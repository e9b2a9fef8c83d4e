"""The run's freeze of the garbage collector: on while results pile up, handed back at the end,
never over somebody else's freeze, and no garbage cycle is lost.

CPython 3.12.1 starts with objects frozen (375 of them): there heta_nb freezes nothing, and
the tests that need a freeze of their own are skipped (unfreezing would undo the interpreter's).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkCase, BenchmarkExpected
from heta_nb.runner.collector import FreezeHold

STARTS_FROZEN = gc.get_freeze_count() > 0
needs_no_freeze = pytest.mark.skipif(STARTS_FROZEN, reason="this interpreter starts with objects frozen")


@pytest.fixture(autouse=True)
def _no_freeze_around() -> Iterator[None]:
    before = gc.get_freeze_count()
    assert STARTS_FROZEN or before == 0, "another test left objects frozen"
    enabled = gc.isenabled()
    yield
    if not STARTS_FROZEN:
        gc.unfreeze()  # (what a failing test left frozen)
    if enabled:
        gc.enable()


class Cycles:
    """A KB whose every answer leaves a garbage cycle behind (as tracebacks and many clients do)."""

    name = "cycles kb"

    def __init__(self) -> None:
        self.left: list[weakref.ref[Any]] = []
        self.frozen_during_run = 0

    async def query(self, text: str, *, mode: str, top_k: int = 10) -> dict[str, Any]:
        node: dict[str, Any] = {"text": text}
        node["self"] = node  # unreachable once this returns: only the collector frees it
        holder = _Holder(node)
        self.left.append(weakref.ref(holder))
        if len(self.left) % 500 == 0:  # (the count walks the whole frozen heap: not every query)
            self.frozen_during_run = max(self.frozen_during_run, gc.get_freeze_count())
        return {"results": [{"id": "r1", "text": f"answer to {text}"}], "answer": "yes"}


class _Holder:
    def __init__(self, node: dict[str, Any]) -> None:
        self.node = node
        node["holder"] = self


def _benchmark(n: int) -> Benchmark:
    cases = [
        BenchmarkCase(case_id=f"q{i:04d}", query=f"question {i}?", expected=BenchmarkExpected(answers=("yes",)))
        for i in range(n)
    ]
    return Benchmark({"name": "cycles", "version": "1", "split": "test", "task_type": "qa"}, (), cases)


@needs_no_freeze
def test_a_long_run_freezes_and_hands_everything_back_with_its_garbage_collected() -> None:
    kb = Cycles()
    report = heta_nb.evaluate(
        _benchmark(700), kb=kb, query_modes=["a", "b"], evaluators=["answer_contains"], store=None, progress=False
    )
    assert len(report.case_results) == 1400
    assert kb.frozen_during_run > 0, "1,400 results and nothing was frozen"
    assert gc.get_freeze_count() == 0, "the run ended and objects stayed frozen"
    gc.collect()
    alive = sum(ref() is not None for ref in kb.left)
    assert alive == 0, f"{alive} garbage cycles outlived the run"
    assert all(r.scores[0].value is True for r in report.case_results)


@needs_no_freeze
def test_nothing_is_frozen_over_somebody_elses_freeze() -> None:
    gc.freeze()
    theirs = gc.get_freeze_count()
    hold = FreezeHold(every=1)
    hold.start()
    hold.recorded(10)
    hold.stop()
    now = gc.get_freeze_count()  # (frozen objects freed by reference counting leave the count)
    assert not hold.active and 0.9 * theirs <= now <= theirs  # theirs kept, nothing unfrozen or added


@needs_no_freeze
def test_nothing_is_frozen_while_the_collector_is_off() -> None:
    gc.disable()
    hold = FreezeHold(every=1)
    hold.start()
    hold.recorded(10)
    assert not hold.active and gc.get_freeze_count() == 0
    hold.stop()


@needs_no_freeze
def test_two_runs_share_the_freeze_and_the_last_one_out_unfreezes() -> None:
    first, second = FreezeHold(every=1), FreezeHold(every=1)
    first.start()
    second.start()
    first.recorded(1)
    assert gc.get_freeze_count() > 0
    first.stop()
    assert gc.get_freeze_count() > 0, "the second run still holds it"
    second.recorded(1)
    second.stop()
    assert gc.get_freeze_count() == 0
    second.stop()  # idempotent
    assert gc.get_freeze_count() == 0


@needs_no_freeze
def test_young_garbage_cycles_are_collected_before_a_freeze() -> None:
    hold = FreezeHold(every=3)
    hold.start()
    try:
        node: dict[str, Any] = {}
        holder = _Holder(node)
        ref = weakref.ref(holder)
        del node, holder
        hold.recorded(3)  # the freeze: the cycle above is garbage already and must not be frozen
        assert ref() is None
    finally:
        hold.stop()


@pytest.mark.skipif(not STARTS_FROZEN, reason="this interpreter starts with nothing frozen")
def test_an_interpreter_that_starts_frozen_is_left_alone() -> None:
    before = gc.get_freeze_count()
    kb = Cycles()
    report = heta_nb.evaluate(
        _benchmark(300), kb=kb, query_modes=["a", "b"], evaluators=["answer_contains"], store=None, progress=False
    )
    assert len(report.case_results) == 600 and gc.get_freeze_count() == before
