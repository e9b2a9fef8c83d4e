"""Audit of the interactive surfaces: magics, live widget, console progress, pandas tables.

Real runs, real widgets and a real IPython shell (no mocks); each test pins a defect
that was found, or a property that was checked and must stay true.
"""

from __future__ import annotations

import io
import weakref
from typing import Any

import pandas as pd
import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.progress.console import ConsoleProgress
from heta_nb.progress.widget import RunWidget
from heta_nb.render import render_widget_parts
from heta_nb.runner.events import CaseFinished, RunFinished, RunStarted, RunWarning
from heta_nb.tables import cases_frame, scores_frame, summary_frame

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
    return widget, report


def _shown(widget: RunWidget) -> dict[str, str]:
    return {name: getattr(widget, name).value for name in ("title", "stats", "build", "means", "errors")}


# -- %load_ext heta_nb ------------------------------------------------------------------


def test_magic_with_an_unclosed_quote_is_a_usage_error_not_a_traceback() -> None:
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "heta_nb")
    try:
        for name in ("heta_report", "heta_runs", "heta_compare", "heta_export"):
            with pytest.raises(UsageError, match="No closing quotation"):
                ip.run_line_magic(name, "'unclosed")
    finally:
        ip.run_line_magic("unload_ext", "heta_nb")


def test_load_unload_load_registers_each_formatter_once() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    html = ip.display_formatter.formatters["text/html"]
    before = len(html.deferred_printers)
    for _ in range(2):
        ip.run_line_magic("load_ext", "heta_nb")
        ip.run_line_magic("load_ext", "heta_nb")
        assert len(html.deferred_printers) == before + 5
        ip.run_line_magic("unload_ext", "heta_nb")
        assert len(html.deferred_printers) == before
        assert "heta_report" not in ip.magics_manager.magics["line"]


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


def _running(state: Any) -> Any:
    from heta_nb.runner.state import _replace

    return _replace(state, status="running", total=5, errors=0, errors_by_type={}, last_errors=())


@pytest.mark.parametrize("cases", [0, 6])
def test_final_widget_matches_the_report(cases: int) -> None:
    widget, report = _widget_run(toy_benchmark(cases), exact_kb, query_modes=["good", "poor"])
    state = widget.state
    assert state.status == "complete" and state.done == len(report.case_results) == 2 * cases
    assert widget.bar.bar_style == "success" and widget.cancel_button.description == "Complete"
    assert widget.bar.value == widget.bar.max  # a run of 0 cases is a full bar, not an empty one
    assert _shown(widget) == render_widget_parts(state)
    for key, value in report.score_summary.items():
        mode, metric = key.split(".", 1)
        assert state.mean(mode, metric) == pytest.approx(value)


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


# -- console progress -------------------------------------------------------------------


def test_console_failure_before_start_has_no_false_progress_line() -> None:
    stream = io.StringIO()
    with pytest.raises(FileNotFoundError):
        heta_nb.evaluate("/no/such/benchmark/folder", kb=exact_kb, store=None, progress=ConsoleProgress(stream))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("heta_nb: failed:"), lines
    assert "100%" not in stream.getvalue()


def test_console_log_does_not_repeat_its_last_line_and_is_quiet_when_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ticks = iter(range(0, 1000, 3))  # 3 s between events: every result gets a line in a log
    stream = io.StringIO()  # not a TTY: a CI log
    console = ConsoleProgress(stream, clock=lambda: float(next(ticks)))
    console(RunStarted("r", "kb", {"name": "toy", "split": "test"}, ("good",), ("m",), 3, 0, 1, 1, "now"))
    for i in range(3):
        console(CaseFinished("corpus", f"c{i}", "good", True, 1.0, 1, {"m": 1.0}, t=float(i)))
    console(RunFinished(status="complete", done=3, total=3, errors=0, seconds=3.0, t=3.0))
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    progress = [line for line in lines if not line.startswith("heta_nb:")]
    assert [line.split(" ")[0] for line in progress] == ["1/3", "2/3", "3/3"], lines  # 3/3 once
    assert lines[-1].startswith("heta_nb: complete: 3/3 results")
    heta_nb.evaluate(toy_benchmark(3), kb=exact_kb, query_modes=["good"], store=None, progress=False)
    captured = capsys.readouterr()
    assert captured.out == captured.err == ""


# -- pandas tables ----------------------------------------------------------------------


def test_empty_and_all_error_frames_have_the_dtypes_of_full_ones() -> None:
    full = heta_nb.evaluate(toy_benchmark(4), kb=exact_kb, query_modes=["good"], store=None, progress=False)
    empty = heta_nb.evaluate(toy_benchmark(0), kb=exact_kb, query_modes=["good"], store=None, progress=False)
    failed = heta_nb.evaluate(toy_benchmark(2), kb=_raises, query_modes=["good"], store=None, progress=False, retries=0)
    for function in (cases_frame, scores_frame, summary_frame):
        expected = function(full).dtypes
        for report in (empty, failed):
            got = function(report).dtypes
            common = [name for name in got.index if name in expected.index]
            assert dict(got[common]) == dict(expected[common]), function.__name__
    text = pd.Series(["x"]).dtype
    assert cases_frame(full)["error_type"].dtype == text  # all missing, still text
    assert summary_frame(empty)["mean"].dtype == "float64"


def test_an_evaluator_that_raised_leaves_its_cases_column_numeric() -> None:
    def flaky(case: Any, response: Any) -> float:
        if case.case_id.endswith(("0", "3")):
            raise RuntimeError("boom")
        return 0.5

    def flag(case: Any, response: Any) -> bool:
        if case.case_id.endswith("1"):
            raise RuntimeError("boom")
        return case.case_id.endswith("2")

    report = heta_nb.evaluate(
        toy_benchmark(6), kb=exact_kb, query_modes=["good"], store=None, progress=False, evaluators=[flaky, flag]
    )
    frame = cases_frame(report)
    assert frame["flaky"].dtype == "float64" and frame["flaky"].mean() == 0.5
    assert frame["flaky"].isna().sum() == 2
    assert frame["flag"].dtype == "boolean" and frame["flag"].isna().sum() == 1
    scores = scores_frame(report)  # the raw "error" value is still there, in the tidy frame
    assert (scores["value"] == "error").sum() == 3


def test_frames_do_not_share_state_with_the_report() -> None:
    report = heta_nb.evaluate(toy_benchmark(3), kb=exact_kb, query_modes=["good"], store=None, progress=False)
    before = report.to_json()
    for function in (cases_frame, scores_frame, summary_frame):
        frame = function(report)
        for column in frame.columns:
            frame[column] = None
    assert report.to_json() == before
