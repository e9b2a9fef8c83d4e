"""The live widget, driven by recorded events and a fake clock (no kernel, no browser)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from runner_support import SlowKB, exact_kb, toy_benchmark

import heta_nb
from heta_nb._util.throttle import Throttle
from heta_nb.progress.widget import RunWidget


class FakeTime:
    """A clock moved by hand and a scheduler that keeps callbacks until fired."""

    def __init__(self) -> None:
        self.now = 0.0
        self.scheduled: list[tuple[float, Any]] = []

    def clock(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Any) -> None:
        self.scheduled.append((self.now + delay, callback))

    def advance(self, seconds: float) -> None:
        self.now += seconds
        due = [item for item in self.scheduled if item[0] <= self.now]
        self.scheduled = [item for item in self.scheduled if item[0] > self.now]
        for _, callback in due:
            callback()


@pytest.fixture(scope="module")
def recorded_events() -> list[Any]:
    run = heta_nb.start(
        toy_benchmark(40),
        kb=exact_kb,
        query_modes=["good", "poor"],
        store=None,
        knowledge_base_name="toy kb",
        progress=False,
        record_events=True,
    )
    run.result(timeout=30)
    assert run.events is not None
    # one event per case, as a slow KB gives (the engine batches the cases that finish
    # in one event-loop iteration); the reducer takes both forms
    events: list[Any] = []
    for event in run.events:
        events.extend(event.cases if event.kind == "cases_finished" else [event])
    return events


def test_throttle_leading_trailing_and_forced() -> None:
    fake = FakeTime()
    flushes: list[float] = []
    throttle = Throttle(lambda: flushes.append(fake.now), min_interval=0.1, clock=fake.clock, schedule=fake.schedule)
    throttle.request()  # leading edge: immediate
    for _ in range(50):  # a burst inside one interval: one trailing flush, scheduled once
        fake.now += 0.001
        throttle.request()
    assert flushes == [0.0] and len(fake.scheduled) == 1
    fake.advance(0.2)
    assert len(flushes) == 2
    throttle.request(force=True)  # forced: immediate, even right after a flush
    assert len(flushes) == 3 and not fake.scheduled


def test_replayed_run_final_state_and_flush_count(recorded_events: list[Any]) -> None:
    fake = FakeTime()
    widget = RunWidget(min_interval=0.1, clock=fake.clock, schedule=fake.schedule)
    for event in recorded_events:  # 80 results arriving over 0.8 s of fake time
        widget(event)
        fake.advance(0.01)
    fake.advance(1.0)
    state = widget.state
    assert state.status == "complete" and state.done == state.total == 80
    assert widget.bar.value == widget.bar.max == 80
    assert widget.bar.bar_style == "success"
    assert "80/80" in widget.stats.value and "100%" in widget.stats.value
    assert widget.cancel_button.disabled and widget.cancel_button.description == "Complete"
    assert "<code>good</code>" in widget.means.value and "1.000" in widget.means.value
    # <= 10 flushes per second plus the forced ones (start, unit, finish), never one per event
    forced = sum(1 for e in recorded_events if e.kind != "case_finished")
    assert widget.flushes <= 0.8 / 0.1 + 2 + forced
    assert widget.flushes < len(recorded_events) / 4


def test_errors_and_cancelled_state_turn_the_bar_red(recorded_events: list[Any]) -> None:
    from heta_nb.runner.events import CaseFinished, RunFinished

    fake = FakeTime()
    widget = RunWidget(min_interval=0.1, clock=fake.clock, schedule=fake.schedule)
    events = [e for e in recorded_events if e.kind in ("run_started", "unit_started")]
    events.append(
        CaseFinished(
            unit_id="corpus",
            case_id="c001",
            mode="good",
            ok=False,
            latency_ms=1.0,
            attempts=3,
            scores={},
            error_type="TimeoutError",
            error_message="query did not finish <in> 5 s",
        )
    )
    events.append(RunFinished(status="cancelled", done=1, total=80, errors=1, seconds=1.0))
    for event in events:
        widget(event)
    assert widget.bar.bar_style == "danger"
    assert "TimeoutError" in widget.errors.value and "&lt;in&gt;" in widget.errors.value
    assert widget.cancel_button.description == "Cancelled"


def test_cancel_button_stops_a_real_run() -> None:
    run = heta_nb.start(
        toy_benchmark(60),
        kb=SlowKB(0.05),
        query_modes=["good", "poor"],
        store=None,
        knowledge_base_name="toy kb",
        progress=False,
        concurrency=2,
    )
    widget = RunWidget(run=run, show_report=False)
    run.subscribe(widget)
    deadline = time.monotonic() + 20
    while run.state.done < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    widget.cancel_button.click()
    report = run.result(timeout=20)
    assert report.metadata["heta_nb"]["status"] == "cancelled"
    assert 4 <= len(report.case_results) < 120
    deadline = time.monotonic() + 5
    while widget.bar.bar_style != "danger" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert widget.bar.bar_style == "danger"
