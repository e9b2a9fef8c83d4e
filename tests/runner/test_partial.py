"""``run.partial_report()``: the report of the cases finished so far, during a real run.

A gated KB answers only as many queries as the test has released, so "so far" is an exact
number; the reports are checked for validity (round trips, views, export, compare), for
their partial marking, for consistency under concurrent callers, and the store is checked
to hold only the final report.
"""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from typing import Any

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.export import to_html
from heta_nb.model import EvaluationReport
from heta_nb.runner import EvaluationRun, RunConfig
from heta_nb.runner.partial import is_partial

MODES = ["good", "poor"]


class GatedKB:
    """Answers like ``exact_kb``, but only as many queries as the test has released (in call order)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.released = 0
        self.calls = 0

    def release(self, n: int) -> None:
        with self._lock:
            self.released += n

    async def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> dict[str, Any]:
        with self._lock:
            self.calls += 1
            ticket = self.calls
        while True:
            with self._lock:
                if ticket <= self.released:
                    break
            await asyncio.sleep(0.002)
        return exact_kb(query, mode=mode, top_k=top_k)


def _start(kb: Any, *, cases: int = 20, store: Any = None, **kwargs: Any) -> EvaluationRun:
    return heta_nb.start(
        toy_benchmark(cases),
        kb=kb,
        query_modes=MODES,
        store=store,
        report_id="partial-run",
        knowledge_base_name="toy kb",
        progress=False,
        concurrency=2,
        **kwargs,
    )


def _wait_done(run: EvaluationRun, done: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while run.state.done < done:
        assert time.monotonic() < deadline, f"only {run.state.done} of {done} results after {timeout} s"
        time.sleep(0.005)


def test_the_partial_report_grows_is_valid_and_is_never_stored(tmp_path) -> None:
    store = ReportStore(tmp_path / "store")
    kb = GatedKB()
    run = _start(kb, store=store)
    try:
        kb.release(10)
        _wait_done(run, 10)
        first = run.partial_report()
        assert first.case_count == 10 and first.report_key is None
        info = first.metadata["heta_nb"]
        assert info["status"] == "running" and is_partial(first)
        assert (info["done"], info["total"], info["remaining"]) == (10, 40, 30)
        assert dict(info["partial"]) == {"done": 10, "total": 40}
        # valid: it round-trips through JSON and every view works on it
        path = tmp_path / "partial.json"
        path.write_text(first.to_json())
        assert heta_nb.load_report(path) == first
        assert dict(first.score_summary) == first.recomputed_score_summary()
        assert len(first.cases_frame()) == 10 and not first.summary_frame().empty
        assert "10 of 40 results recorded" in first._repr_html_()
        assert "partial-run" in repr(first)
        assert "<html" in to_html(first).lower()
        assert store.summaries() == []  # only the checkpoint so far: no report is written

        kb.release(14)
        _wait_done(run, 24)
        second = run.partial_report()
        assert second.case_count == 24 and dict(second.metadata["heta_nb"]["partial"]) == {"done": 24, "total": 40}
        assert second.case_results[:10] == first.case_results  # Heta's order: the first ten come first
        assert first.case_count == 10  # an earlier snapshot does not change
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comparison = heta_nb.compare(first, second, names=["first", "second"], modes="good")
        assert comparison._repr_html_()
        assert store.summaries() == []
    finally:
        kb.release(10_000)
    final = run.result(timeout=30)
    assert run.partial_report() is final  # after the run: the final report itself
    info = final.metadata["heta_nb"]
    assert info["status"] == "complete" and "partial" not in info and not is_partial(final)
    [summary] = store.summaries()
    stored = store.load_key(summary.key)
    assert stored == final and stored.case_count == 40 and "partial" not in stored.metadata["heta_nb"]


def test_concurrent_callers_get_consistent_snapshots() -> None:
    """Four threads ask for reports while cases finish: each is whole (counts, summary, order agree)."""
    kb = GatedKB()
    run = _start(kb, cases=60)
    reports: dict[int, list[EvaluationReport]] = {i: [] for i in range(4)}
    stop = threading.Event()
    failures: list[BaseException] = []

    def ask(i: int) -> None:
        try:
            while not stop.is_set():
                reports[i].append(run.partial_report())
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(12):
            kb.release(10)
            time.sleep(0.05)
    finally:
        kb.release(10_000)
        run.result(timeout=30)
        stop.set()
        for thread in threads:
            thread.join(10)
    assert not failures
    order = {(r.case_id, r.query_mode): i for i, r in enumerate(run.result().case_results)}
    for got in reports.values():
        assert got
        dones = [r.case_count for r in got]
        assert dones == sorted(dones)  # never goes back
        for report in got:
            info = report.metadata["heta_nb"]
            assert info["done"] == report.case_count
            assert dict(report.score_summary) == report.recomputed_score_summary()
            positions = [order[(r.case_id, r.query_mode)] for r in report.case_results]
            assert positions == sorted(positions) and len(set(positions)) == len(positions)
            assert is_partial(report) or info["status"] == "complete"


def test_a_cancelled_run_then_gives_its_cancelled_report(tmp_path) -> None:
    store = ReportStore(tmp_path / "store")
    kb = GatedKB()
    run = _start(kb, store=store)
    kb.release(6)
    _wait_done(run, 6)
    assert run.partial_report().case_count == 6
    run.cancel()
    final = run.result(timeout=30)
    after = run.partial_report()
    assert after is final and after.metadata["heta_nb"]["status"] == "cancelled" and not is_partial(after)
    assert after.case_count == 6
    [summary] = store.summaries()
    assert store.load_key(summary.key).metadata["heta_nb"]["status"] == "cancelled"


def test_an_event_subscriber_can_ask_on_the_runs_own_loop() -> None:
    """Called from an event (on the run's thread and loop) it snapshots at once, without waiting on itself."""
    seen: list[tuple[int, int]] = []
    holder: dict[str, EvaluationRun] = {}

    def on_event(event: Any) -> None:
        if event.kind == "cases_finished" and "run" in holder:
            report = holder["run"].partial_report()
            seen.append((report.case_count, holder["run"].state.done))

    run = heta_nb.start(
        toy_benchmark(10),
        kb=exact_kb,
        query_modes=MODES,
        store=None,
        progress=False,
        on_event=on_event,
        knowledge_base_name="toy kb",
    )
    holder["run"] = run
    run.result(timeout=30)
    assert seen and all(count >= 1 for count, _ in seen)
    assert run.partial_report().case_count == 20


def test_before_start_and_after_an_early_failure(tmp_path) -> None:
    run = EvaluationRun(RunConfig(benchmark=toy_benchmark(4), kb=exact_kb, query_modes=MODES, store=None))
    with pytest.raises(RuntimeError, match="has not started"):
        run.partial_report()
    broken = heta_nb.start(tmp_path / "no-such-benchmark", kb=exact_kb, store=None, progress=False)
    with pytest.raises(FileNotFoundError):
        broken.result(timeout=30)
    with pytest.raises(FileNotFoundError):  # as result() raises it: there is no report at all
        broken.partial_report()


def test_wait_returns_once_that_many_results_are_in_then_partial_report_has_them() -> None:
    """A notebook's "Run All" reaches the cell after ``start`` at once: ``run.wait(n)`` first."""
    kb = GatedKB()
    run = _start(kb)
    try:
        kb.release(10)
        state = run.wait(10, timeout=20)
        assert state.done >= 10 and state.total == 40
        assert run.partial_report().metadata["heta_nb"]["partial"]["done"] >= 10
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=r"'partial-run' has 10 of 11 results after 0.2 s"):
            run.wait(11, timeout=0.2)  # the KB answers no more: the run goes on
        assert 0.2 <= time.monotonic() - started < 2 and not run.done()
        kb.release(30)
        assert run.wait(1000, timeout=20).status == "complete"  # more than the run has: until it ends
    finally:
        run.cancel()
        run.result(timeout=20)
