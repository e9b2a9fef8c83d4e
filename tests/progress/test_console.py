"""The terminal progress line."""

from __future__ import annotations

import io

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.progress.console import ConsoleProgress
from heta_nb.runner.events import CaseFinished, RunFinished, RunStarted

MODES = ["good", "poor"]


def test_console_progress_output() -> None:
    import io

    from heta_nb.progress.console import ConsoleProgress

    stream = io.StringIO()
    now = [0.0]
    console = ConsoleProgress(stream, clock=lambda: now[0])
    run = heta_nb.start(
        toy_benchmark(), kb=exact_kb, query_modes=MODES, store=None, knowledge_base_name="k", progress=console
    )
    run.result(timeout=30)
    text = stream.getvalue()
    assert "heta_nb: evaluating 'k' on toy (test), modes good, poor: 24 results" in text
    assert "heta_nb: complete: 24/24 results, 0 errors" in text
    assert console.redraws <= 3  # the fake clock never advanced: no redraw storm


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
