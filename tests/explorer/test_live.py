"""The explorer on a running evaluation: it grows as cases finish (throttled, refreshed off the
run's thread and the caller's), keeps its filters and open case, ends on the final report
(a cancelled run's too), and the live widget's "Explore results so far" button opens it."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from typing import Any

from runner.test_partial import GatedKB, _start, _wait_done
from runner_support import toy_benchmark

import heta_nb
from heta_nb.explorer import explore
from heta_nb.explorer.live import LiveRefresh
from heta_nb.explorer.sources import RunSource
from heta_nb.progress.widget import RunWidget
from heta_nb.runner.partial import is_partial


class FakeTime:
    """A clock moved by hand and a scheduler that keeps callbacks until their time comes."""

    def __init__(self) -> None:
        self.now = 0.0
        self.scheduled: list[tuple[float, Any]] = []

    def clock(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Any) -> None:
        self.scheduled.append((self.now + delay, callback))

    def advance(self, seconds: float) -> None:
        self.now += seconds
        while True:
            due = [item for item in self.scheduled if item[0] <= self.now]
            if not due:
                return
            self.scheduled = [item for item in self.scheduled if item[0] > self.now]
            for _, callback in due:
                callback()


class CountingSource(RunSource):
    """A run's source that records the threads its tables are built on."""

    def __init__(self, run: Any) -> None:
        super().__init__(run)
        self.threads: list[int] = []

    def table(self, **kwargs: Any) -> Any:
        self.threads.append(threading.get_ident())
        return super().table(**kwargs)


def _wait(condition: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_source_generation_follows_the_run_and_ends_on_the_final_report() -> None:
    kb = GatedKB()
    run = _start(kb)
    source = RunSource(run)
    try:
        kb.release(4)
        _wait_done(run, 4)
        explorer = explore(source, mode="good")
        assert explorer.total == 4 and is_partial(explorer.table.report)
        assert "results so far: 4 of 40, the run goes on" in explorer.info()["count_text"]
        opened = explorer.open(case_id="c001", mode="good")
        generation = source.generation
        kb.release(10)
        _wait_done(run, 14)
        assert source.generation != generation
        explorer.refresh()
        assert explorer.total >= 14 and explorer.filters.mode == "good"
        assert explorer.case.raw == opened.raw  # the open case stays open
    finally:
        kb.release(10_000)
    final = run.result(timeout=30)
    _wait(lambda: explorer.total == 40)  # the live refresh brings the final report by itself
    assert explorer.table.report is final and not is_partial(explorer.table.report)
    assert explorer.info()["count_text"].endswith("final report (complete)")
    assert explorer.filters.mode == "good" and explorer.matched == 20


def test_it_refreshes_itself_off_the_run_thread_while_the_caller_is_busy() -> None:
    """The caller sleeps (a busy kernel); the explorer's counts grow anyway, a few times a second at most."""
    kb = GatedKB()
    run = _start(kb, cases=60)
    source = CountingSource(run)
    explorer = explore(source)
    widget = explorer.widget
    run_thread = next(t for t in threading.enumerate() if t.name == f"heta_nb-run-{run.report_id}")
    counts = []
    started = time.monotonic()
    for _ in range(10):
        kb.release(12)
        time.sleep(0.15)  # the main thread is busy: it never calls refresh()
        counts.append(widget.info["total"])
    kb.release(10_000)
    run.result(timeout=30)
    _wait(lambda: widget.info["total"] == 120)
    elapsed = time.monotonic() - started
    assert counts == sorted(counts) and counts[-1] > counts[0] > 0
    assert len(set(counts)) >= 3
    refreshes = explorer.live.refreshes
    assert 3 <= refreshes <= elapsed / 0.3 + 3  # throttled: at most about three a second (+ first and last)
    built_on = source.threads[1:]  # the first table: built by explore() itself
    assert built_on and threading.get_ident() not in built_on and run_thread.ident not in built_on
    assert "final report (complete)" in widget.info["count_text"]


def test_the_throttle_and_the_hand_off() -> None:
    """Requests within an interval give one trailing refresh; the last one is at once; none runs on the caller."""
    fake = FakeTime()

    class Target:
        def __init__(self) -> None:
            self.refreshed = 0
            self.source = self
            self.watching: Any = None

        def watch(self, changed: Any) -> None:
            self.watching = changed

        def refresh(self) -> None:
            self.refreshed += 1

    target = Target()
    live = LiveRefresh(target, min_interval=0.3, clock=fake.clock, schedule=fake.schedule)
    assert target.watching == live.changed
    live.changed()
    assert target.refreshed == 0  # handed off to another thread (here: the fake scheduler)
    fake.advance(0)
    assert target.refreshed == 1
    for _ in range(20):
        live.changed()
        fake.advance(0.01)
    assert target.refreshed == 1
    fake.advance(0.3)
    assert target.refreshed == 2  # the 20 requests gave one trailing refresh
    live.changed(last=True)
    fake.advance(0)
    assert target.refreshed == 3  # the run's end is never held back
    del target
    gc.collect()
    live.changed()
    fake.advance(1)  # the explorer is gone: nothing to refresh, nothing fails


def test_a_cancelled_run_ends_on_its_cancelled_report() -> None:
    kb = GatedKB()
    run = _start(kb)
    kb.release(6)
    _wait_done(run, 6)
    explorer = explore(run, status="ok")
    assert explorer.total == 6
    run.cancel()
    report = run.result(timeout=30)
    _wait(lambda: explorer.table.report is report)
    assert report.metadata["heta_nb"]["status"] == "cancelled" and explorer.total == 6
    assert explorer.info()["count_text"].endswith("final report (cancelled)")
    assert explorer.filters.status == "ok"


def test_a_discarded_explorer_is_not_kept_alive_by_the_run() -> None:
    kb = GatedKB()
    run = _start(kb)
    try:
        kb.release(2)
        _wait_done(run, 2)
        explorer = explore(run)
        ref = weakref.ref(explorer)
        del explorer
        gc.collect()
        assert ref() is None
        kb.release(4)  # events still reach the (now idle) subscriber without error
        _wait_done(run, 6)
    finally:
        kb.release(10_000)
    assert run.result(timeout=30).case_count == 40


def test_a_run_that_stops_before_its_first_case_says_why(tmp_path) -> None:
    run = heta_nb.start(tmp_path / "missing", kb=lambda q, **_: {}, store=None, progress=False)
    explorer = explore(run)
    _wait(run.done)
    explorer.refresh()
    assert explorer.table is None
    info = explorer.info()
    assert info["empty"].startswith("The run stopped before its first case: FileNotFoundError")
    # titled with what the user knows: the KB's name, not the generated report id (eval_…)
    assert explorer.options()["title"] == f"Evaluation of {run.knowledge_base_name}: starting"
    assert run.report_id.startswith("eval_") and "eval_" not in explorer.options()["title"]


def test_the_live_explorer_is_titled_with_the_kb_and_benchmark_or_the_given_report_id() -> None:
    kb = GatedKB()
    unnamed = heta_nb.start(
        toy_benchmark(5), kb=kb, query_modes=["good"], knowledge_base_name="toy kb", store=None, progress=False
    )
    named = _start(GatedKB(), cases=5)  # report_id="partial-run"
    try:
        kb.release(2)
        _wait_done(unnamed, 2)
        live = explore(unnamed)
        key = live.table.report.benchmark.key
        assert unnamed.report_id.startswith("eval_")
        assert live.options()["title"] == f"toy kb · {key}"
        assert named.report_id_given and not unnamed.report_id_given
        assert RunSource(named).pending_title() == "Evaluation partial-run: starting"
        kb.release(10)
        unnamed.result(timeout=20)
        live.refresh()
        assert (
            not is_partial(live.table.report) and live.options()["title"] == f"toy kb · {key}"
        )  # the final report too
    finally:
        kb.release(10_000)
        named.cancel()
        named.result(timeout=20)


def test_the_run_widget_button_opens_the_live_explorer() -> None:
    kb = GatedKB()
    run = _start(kb)
    view = RunWidget(run=run, show_report=False)
    run.subscribe(view)
    assert view.explore_button.description == "Explore results so far"
    assert str(view.explore_button.model_id) in view.comm_ids()
    try:
        kb.release(8)
        _wait_done(run, 8)
        view.explore_button.click()
        explorer = view.explorer
        assert explorer is not None and view.explorer_box.children == (explorer.widget,)
        assert explorer.total >= 8 and isinstance(explorer.source, RunSource)
        assert view.explore_button.description == "Hide the explorer"
        view.explore_button.click()  # hides it
        assert view.explorer_box.layout.display == "none"
        assert view.explore_button.description == "Show the explorer"
        view.explore_button.click()  # shows it again: the same explorer
        assert view.explorer_box.layout.display != "none" and view.explorer is explorer
    finally:
        kb.release(10_000)
    final = run.result(timeout=30)
    _wait(lambda: explorer.table.report is final)
    _wait(lambda: view.cancel_button.description == "Complete")
    assert explorer.widget.info["total"] == 40
    assert view.explore_button.description == "Hide the explorer"  # opened: not renamed at the end


def test_the_button_after_the_run_opens_the_final_report() -> None:
    kb = GatedKB()
    run = _start(kb, cases=3)
    view = RunWidget(run=run, show_report=False)
    run.subscribe(view)
    kb.release(10_000)
    final = run.result(timeout=30)
    _wait(lambda: view.explore_button.description == "Explore the report")
    view.explore_button.click()
    assert view.explorer.table.report is final and view.explorer.total == 6


def test_the_button_when_the_run_is_gone_or_absent() -> None:
    view = RunWidget(run=None, show_report=False)
    assert view.explore_button.layout.display == "none"

    class Gone:
        pass

    gone = Gone()
    view = RunWidget(run=gone, show_report=False)
    del gone
    gc.collect()
    view.explore_button.click()
    assert view.explore_button.disabled and view.explore_button.description == "The run is gone"


def test_filters_from_the_main_thread_while_it_refreshes() -> None:
    """The user filters and pages while the live refresh swaps tables in: no error, consistent state."""
    kb = GatedKB()
    run = _start(kb, cases=60)
    kb.release(4)
    _wait_done(run, 4)
    explorer = explore(run)
    widget = explorer.widget
    for i in range(60):
        kb.release(2)
        widget.status = "ok" if i % 2 else ""
        widget.mode = "good" if i % 3 else ""
        widget.search = "question" if i % 5 else ""
        _ = explorer.selection
        time.sleep(0.01)
        assert widget.info["error"] == ""
    kb.release(10_000)
    run.result(timeout=30)
    _wait(lambda: explorer.total == 120)
    widget.status, widget.mode, widget.search = "", "", ""
    assert explorer.matched == 120 and len(explorer.selection) == 120
    assert [r["row"] for r in widget.rows] == list(range(50))


def test_the_magic_explores_a_run_variable() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "heta_nb")
    kb = GatedKB()
    run = _start(kb)
    try:
        kb.release(6)
        _wait_done(run, 6)
        shell.user_ns["run"] = run
        explorer = shell.run_line_magic("heta_explore", "run")
        assert isinstance(explorer.source, RunSource) and explorer.total >= 6
    finally:
        kb.release(10_000)
        shell.run_line_magic("unload_ext", "heta_nb")
    final = run.result(timeout=30)
    _wait(lambda: explorer.table.report is final)
