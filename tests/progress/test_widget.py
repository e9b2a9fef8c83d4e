"""The live widget."""

from __future__ import annotations

import time
import weakref
from typing import Any

import pytest
from runner_support import SlowKB, exact_kb, toy_benchmark

import heta_nb
from heta_nb.progress.widget import RunWidget
from heta_nb.render import render_widget_parts
from heta_nb.render.context.widget import widget_context
from heta_nb.runner.events import CaseFinished, RunFinished, RunWarning


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


EVIL = "<script>alert('x')</script> & \"q\" \ud800"


def _raises(query: str, *, mode: str, top_k: int) -> Any:
    raise ValueError(f"bad {EVIL}")


def _widget_run(benchmark: Any, kb: Any, **kwargs: Any) -> tuple[RunWidget, Any]:
    """A real run with the widget subscribed before it starts (as ``heta_nb.start`` does)."""
    widget = RunWidget(show_report=False)
    run = heta_nb.start(benchmark, kb=kb, store=None, progress=widget, **{"knowledge_base_name": "toy kb", **kwargs})
    widget._run = weakref.ref(run)
    try:
        report = run.result(timeout=30)
    except Exception as exc:  # noqa: BLE001 - a failed run still has a report
        report = getattr(exc, "report", None)
    widget.flush()  # heta_nb.start gives the widget its run before it starts; here it knows it only now
    return widget, report


def _shown(widget: RunWidget) -> dict[str, str]:
    return {name: getattr(widget, name).value for name in ("title", "stats", "build", "means", "errors")}


def _running(state: Any) -> Any:
    from heta_nb.runner.state import _replace

    return _replace(state, status="running", total=5, errors=0, errors_by_type={}, last_errors=())


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


# -- the live widget --------------------------------------------------------------------


def test_a_flush_that_read_an_older_state_cannot_leave_it_over_the_final_one() -> None:
    """The throttle's timer thread may be drawing an older state when the run ends: the
    final state must still be what stays on screen."""
    widget, _ = _widget_run(toy_benchmark(4), exact_kb, query_modes=["good"])
    final_case = CaseFinished(
        unit_id="corpus",
        case_id="late",
        mode="good",
        ok=False,
        latency_ms=1.0,
        attempts=1,
        scores={},
        error_type="TimeoutError",
        error_message="too slow",
    )
    fresh = RunWidget(show_report=False)
    fresh.state = _running(widget.state)  # 4 of 5 results in
    fired: list[bool] = []

    def final_events_arrive(_change: Any) -> None:  # the run's thread, mid-flush
        if not fired:
            fired.append(True)
            fresh(final_case)
            fresh(RunFinished(status="complete", done=5, total=5, errors=1, seconds=1.0))

    fresh.stats.observe(final_events_arrive, "value")
    fresh.flush()  # a trailing flush of the running state
    assert fired and fresh.state.status == "complete"
    assert _shown(fresh) == render_widget_parts(fresh.state)
    assert "TimeoutError" in fresh.errors.value and "Evaluated" in fresh.title.value


@pytest.mark.parametrize("cases", [0, 6])
def test_final_widget_matches_the_report(cases: int) -> None:
    widget, report = _widget_run(toy_benchmark(cases), exact_kb, query_modes=["good", "poor"])
    state = widget.state
    assert state.status == "complete" and state.done == len(report.case_results) == 2 * cases
    assert widget.bar.bar_style == "success" and widget.cancel_button.description == "Complete"
    assert widget.bar.value == widget.bar.max  # a run of 0 cases is a full bar, not an empty one
    summaries = report.metric_summaries()
    assert _shown(widget) == render_widget_parts(state, summaries)  # it ends on the report's one summary
    for key, value in report.score_summary.items():
        mode, metric = key.split(".", 1)
        assert state.mean(mode, metric) == pytest.approx(value)
    cells = {(r["mode"], m): cell for r in widget_context(state, summaries)["rows"] for m, cell in
             zip(state.metrics, r["means"])}  # fmt: skip
    for s in summaries:
        cell = cells[(s.mode, s.metric)]
        if s.scored:
            assert cell["value"] == s.shown and cell["status"] == "scored"
        else:  # the poor mode returns no answers: n/a with the report's reason
            assert cell["value"] is None and cell["na"] == f"{s.status}: {s.reason}"
    if cases:
        assert "the report's mean of the scored values" in widget.means.value
        assert any(not s.scored for s in summaries) and ">n/a<" in widget.means.value


@pytest.mark.hostile
def test_failed_cases_and_untrusted_text_are_counted_and_escaped() -> None:
    widget, report = _widget_run(
        toy_benchmark(3), _raises, query_modes=[f"m {EVIL}", "plain"], knowledge_base_name=f"kb {EVIL}", retries=0
    )
    assert widget.state.errors == report.error_count == 6
    assert dict(widget.state.errors_by_type) == {"ValueError": 6}
    widget(RunWarning("w", f"warn {EVIL}"))
    html = "".join(_shown(widget).values())
    assert "<script>" not in html and "alert('x')" not in html and '"q"' not in html
    assert "&lt;script&gt;" in html and "&amp;" in html and "&#34;q&#34;" in html
    html.encode("utf-8")  # no lone surrogate reaches a Jupyter message
    assert "ValueError</code> 6" in widget.errors.value


def test_the_widget_says_how_many_older_warnings_it_does_not_show() -> None:
    widget = RunWidget(show_report=False)
    for i in range(5):
        widget(RunWarning("w", f"warning {i} <b>"))
    stats = widget.stats.value
    assert "warning 4 &lt;b&gt;" in stats and "warning 1" not in stats
    assert "2 earlier warnings" in stats


# -- progress follows finished cases; Cancel where it can work ------------------------------


def test_progress_follows_cases_even_when_the_kb_never_yields() -> None:
    """An async KB that computes without awaiting (as a Heta full-text KB does) keeps the
    event loop busy: finished cases still reach the widget within ~50 ms, not in 32-case steps."""

    async def busy_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        time.sleep(0.01)  # CPU work, no await: the loop never iterates between cases
        return exact_kb(query, mode=mode, top_k=top_k)

    events: list[Any] = []
    started = time.monotonic()
    heta_nb.evaluate(
        toy_benchmark(80),
        kb=busy_kb,
        query_modes=["good"],
        store=None,
        knowledge_base_name="busy kb",
        progress=False,
        on_event=lambda event: events.append((time.monotonic() - started, event)),
    )
    batches = [(t, len(e.records)) for t, e in events if e.kind == "cases_finished"]
    assert sum(n for _, n in batches) == 80
    assert len(batches) >= 10, batches  # 32-case batches would give 3
    assert max(n for _, n in batches) < 32
    gaps = [b[0] - a[0] for a, b in zip(batches, batches[1:])]
    assert max(gaps) < 0.5, gaps


def test_a_widget_that_cannot_be_answered_shows_how_to_interrupt_instead_of_cancel() -> None:
    from heta_nb.progress.choose import progress_subscriber
    from heta_nb.progress.kernel_comms import comm_pump, comm_pump_available

    assert not comm_pump_available() and comm_pump(["x"]) is None  # no kernel here: nothing to pump
    widget = progress_subscriber("widget", None, blocking=True, show_report=False)
    assert isinstance(widget, RunWidget) and not widget.cancellable
    assert widget.cancel_button.layout.display == "none"
    assert "interrupt the kernel" in widget.interrupt_hint.value
    for event in (RunFinished(status="complete", done=0, total=0, errors=0, seconds=0.1, t=0.1),):
        widget(event)
    assert widget.interrupt_hint.value == ""  # nothing left to stop
    shown = progress_subscriber("widget", None, show_report=False)  # start(): the kernel is free
    assert isinstance(shown, RunWidget) and shown.cancellable and shown.cancel_button.layout.display != "none"


def test_cancel_button_calls_the_given_cancel_and_lists_its_comms() -> None:
    from heta_nb.api.views import ViewOptions, view_subscribers

    calls: list[str] = []
    (widget,) = view_subscribers(ViewOptions(progress="widget"), None, cancel=lambda: calls.append("x"))
    assert isinstance(widget, RunWidget)
    widget.cancel_button.click()
    assert calls == ["x"] and widget.cancel_button.disabled
    assert str(widget.cancel_button.model_id) in widget.comm_ids() and len(widget.comm_ids()) >= 7


def _sometimes_fails(case: Any, response: Any) -> float:
    if int(case.case_id[1:]) % 2:
        raise ValueError("the judge failed")
    return 1.0


def test_the_widget_counts_evaluator_errors_as_they_happen() -> None:
    widget, report = _widget_run(toy_benchmark(6), exact_kb, query_modes=["good"], evaluators=[_sometimes_fails])
    state = widget.state
    assert state.evaluator_errors("good", "_sometimes_fails") == 3  # folded from the events, during the run
    running = render_widget_parts(state)["means"]  # what the widget shows before the report exists
    assert "3 evaluator errors" in running and 'data-testid="heta-evaluator-errors"' in running
    final = render_widget_parts(state, report.metric_summaries())["means"]
    assert "3 evaluator errors" in final and "the report's mean" in final


def test_without_widgets_the_output_reads_as_the_run_s_line(recorded_events: list[Any]) -> None:
    """ipywidgets' text/plain is the box's repr (``VBox(children=...``): ours is a line, in text and HTML."""
    fake = FakeTime()
    widget = RunWidget(min_interval=0.1, clock=fake.clock, schedule=fake.schedule)
    data, _ = widget._repr_mimebundle_()
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.box.model_id
    assert data["text/plain"].startswith("heta_nb evaluation: starting (the live progress is a Jupyter widget")
    for event in recorded_events[:10]:
        widget(event)
    running = widget._repr_mimebundle_()[0]["text/plain"]
    assert running.startswith("heta_nb evaluation of 'toy kb' on toy (test): ") and "/80 (" in running
    for event in recorded_events[10:]:
        widget(event)
    data, _ = widget._repr_mimebundle_()
    assert data["text/plain"].startswith(
        "heta_nb evaluation of 'toy kb' on toy (test): 80/80 results, complete, 0 errors"
    )
    assert "VBox(" not in data["text/plain"] and "80/80 results, complete" in data["text/html"]
