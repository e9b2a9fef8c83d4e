"""A run's warnings reach Python's ``warnings`` (as ``HetaRunWarning``) and the ``heta_nb.runner`` logger.

Each exactly once, whatever the display (none, the console line, the widget) and whichever
entry point (``evaluate``, ``evaluate_async``, ``start``, cases on Dask); the report keeps
them as before, and the console line no longer prints its own copy.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb import HetaRunWarning
from heta_nb.benchmark import Benchmark

ROOT = Path(__file__).resolve().parents[2]
NO_EVIDENCE = (
    "2 case(s) (c000, c001): cases have no expected evidence: retrieval metrics score them 0.0 (skipped), "
    "which Heta's summary averages in"
)
BLOCKED = "the KB blocked the event loop for"


def no_evidence_benchmark() -> Benchmark:
    """The 6-case toy benchmark whose first two cases have no expected evidence (the lint warns once)."""
    bench = toy_benchmark(6)
    cases = [
        dataclasses.replace(case, expected=dataclasses.replace(case.expected, evidence=())) if i < 2 else case
        for i, case in enumerate(bench.cases)
    ]
    return Benchmark(bench.manifest, bench.documents, cases, evaluators=bench.default_evaluators)


async def blocking_kb(query: str, *, mode: str, top_k: int) -> Any:
    """An async KB that blocks its event loop on question 1 (``time.sleep`` in ``async def``)."""
    if query.endswith("question 1?"):
        time.sleep(0.5)  # blocking code inside async def: warned about once per run (a stall is 0.3 s here)
    await asyncio.sleep(0)
    return exact_kb(query, mode=mode, top_k=top_k)


SETTINGS: dict[str, Any] = {
    "query_modes": ["good", "poor"],
    "knowledge_base_name": "toy kb",
    "store": None,
    "timeout_s": 2,  # (the watchdog ticks every 0.1 s: a loop that does not beat for 0.3 s is blocked)
}


def run_warnings(report: Any) -> list[str]:
    return list(report.metadata["heta_nb"]["warnings"])


def issued(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, HetaRunWarning)]


def logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "heta_nb.runner" and r.levelno == logging.WARNING]


def test_a_quiet_runs_warning_is_a_heta_run_warning_and_one_log_record(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="heta_nb.runner")
    with pytest.warns(HetaRunWarning, match=r"2 case\(s\) \(c000, c001\): cases have no expected evidence") as caught:
        report = heta_nb.evaluate(no_evidence_benchmark(), kb=exact_kb, progress=False, **SETTINGS)
    assert run_warnings(report) == [NO_EVIDENCE]  # the report keeps it, as before
    assert issued(caught.list) == [NO_EVIDENCE]
    (warning,) = [w for w in caught.list if issubclass(w.category, HetaRunWarning)]
    assert warning.filename == "heta_nb" and warning.lineno == 0  # one clean line: no internal source line
    assert logged(caplog) == [NO_EVIDENCE]
    (record,) = [r for r in caplog.records if r.name == "heta_nb.runner"]
    assert record.heta_nb_warning_code == "no_evidence"  # type: ignore[attr-defined]
    assert report.case_count == 12 and report.error_count == 0


def test_the_category_is_exported_where_users_look() -> None:
    import heta_nb.runner

    assert heta_nb.HetaRunWarning is heta_nb.runner.HetaRunWarning is HetaRunWarning
    assert issubclass(HetaRunWarning, UserWarning) and HetaRunWarning.__doc__
    assert "HetaRunWarning" in heta_nb.__all__ and "HetaRunWarning" in heta_nb.runner.__all__
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("heta_nb").handlers)


def _evaluate(bench: Benchmark, **settings: Any) -> Any:
    return heta_nb.evaluate(bench, **settings)


def _evaluate_async(bench: Benchmark, **settings: Any) -> Any:
    return asyncio.run(heta_nb.evaluate_async(bench, **settings))


def _start(bench: Benchmark, **settings: Any) -> Any:
    return heta_nb.start(bench, **settings).result(timeout=60)


@pytest.mark.parametrize("entry", [_evaluate, _evaluate_async, _start], ids=["evaluate", "evaluate_async", "start"])
@pytest.mark.parametrize("progress", [False, "console", "widget"])
def test_every_warning_is_issued_and_logged_once_whatever_the_entry_point_and_display(
    entry: Any, progress: Any, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two warnings: the lint's before the run starts, the blocked loop's from inside a case."""
    caplog.set_level(logging.WARNING, logger="heta_nb.runner")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = entry(no_evidence_benchmark(), kb=blocking_kb, progress=progress, **SETTINGS)
    expected = run_warnings(report)
    assert len(expected) == 2 and expected[0] == NO_EVIDENCE and BLOCKED in expected[1]
    assert issued(caught) == expected
    assert logged(caplog) == expected
    assert report.case_count == 12 and report.error_count == 0
    assert "heta_nb: warning:" not in capsys.readouterr().err  # the console line leaves them to `warnings`


def test_the_widget_still_lists_the_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    from heta_nb.progress.widget import RunWidget

    made: list[RunWidget] = []
    init = RunWidget.__init__

    def spy(self: RunWidget, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(RunWidget, "__init__", spy)
    with pytest.warns(HetaRunWarning):
        report = heta_nb.evaluate(no_evidence_benchmark(), kb=exact_kb, progress="widget", **SETTINGS)
    (widget,) = made
    assert widget.state.warnings == (NO_EVIDENCE,) == tuple(run_warnings(report))


def test_each_run_shows_its_warnings_even_the_same_text_again() -> None:
    """No registry: a second run's identical warning is not taken as already shown (the default filter)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):
            heta_nb.evaluate(no_evidence_benchmark(), kb=exact_kb, progress=False, **SETTINGS)
    assert issued(caught) == [NO_EVIDENCE, NO_EVIDENCE]


def test_an_error_filter_does_not_stop_the_run_or_lose_a_case(caplog: pytest.LogCaptureFixture) -> None:
    """``simplefilter("error", HetaRunWarning)`` cannot raise inside a run (it would lose cases):
    the run goes on, and the warning is still logged and kept in the report."""
    caplog.set_level(logging.WARNING, logger="heta_nb.runner")
    with warnings.catch_warnings():
        warnings.simplefilter("error", HetaRunWarning)
        report = heta_nb.evaluate(no_evidence_benchmark(), kb=blocking_kb, progress=False, **SETTINGS)
    assert report.metadata["heta_nb"]["status"] == "complete"
    assert report.case_count == 12 and report.error_count == 0
    expected = run_warnings(report)
    assert len(expected) == 2 and expected[0] == NO_EVIDENCE and BLOCKED in expected[1]
    assert logged(caplog) == expected


def test_the_console_display_prints_each_warning_once(capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        # print warnings as Python does outside pytest (which records them instead)
        warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: sys.stderr.write(
            warnings.formatwarning(message, category, filename, lineno, line)
        )
        report = heta_nb.evaluate(no_evidence_benchmark(), kb=blocking_kb, progress="console", **SETTINGS)
    err = capsys.readouterr().err
    no_evidence, blocked = run_warnings(report)
    assert err.count(NO_EVIDENCE) == 1 and err.count(blocked) == 1, err
    assert f"heta_nb:0: HetaRunWarning: {NO_EVIDENCE}\n" in err
    assert "heta_nb: warning:" not in err
    assert "heta_nb: complete: 12/12 results" in err


@pytest.mark.slow
def test_a_script_prints_each_warning_once_with_or_without_a_display(tmp_path: Path) -> None:
    """Outside pytest: Python's own filters and printing, and no logging configured (the NullHandler
    keeps logging's last-resort handler from printing each warning a second time)."""
    code = (
        "import sys, dataclasses, heta_nb\n"
        "from runner_support import exact_kb, toy_benchmark\n"
        "from heta_nb.benchmark import Benchmark\n"
        "b = toy_benchmark(6)\n"
        "cases = [dataclasses.replace(c, expected=dataclasses.replace(c.expected, evidence=())) if i < 2 else c\n"
        "         for i, c in enumerate(b.cases)]\n"
        "bench = Benchmark(b.manifest, b.documents, cases, evaluators=b.default_evaluators)\n"
        "progress = {'False': False, 'console': 'console'}[sys.argv[1]]\n"
        "heta_nb.evaluate(bench, kb=exact_kb, query_modes=['good'], store=None, progress=progress)\n"
    )
    for progress in ("False", "console"):
        out = subprocess.run(
            [sys.executable, "-c", code, progress],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])},
        )
        assert out.returncode == 0, out.stderr
        assert out.stderr.count(NO_EVIDENCE) == 1, out.stderr
        assert f"heta_nb:0: HetaRunWarning: {NO_EVIDENCE}\n" in out.stderr


def test_a_workers_warning_on_dask_is_issued_and_logged_once_by_the_driver(caplog: pytest.LogCaptureFixture) -> None:
    """Each batch on a worker reports the blocked loop; the driver passes it on once, as a local run would."""
    distributed = pytest.importorskip("distributed", reason="needs the [dask] extra")
    cloudpickle = pytest.importorskip("cloudpickle")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # (the workers cannot import this test module)
    caplog.set_level(logging.WARNING, logger="heta_nb.runner")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=logging.ERROR
    )
    try:
        with distributed.Client(cluster) as client, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bench = toy_benchmark(12)  # two cases block: c001 and c007, likely in different batches
            report = heta_nb.evaluate(bench, kb=blocking_kb, progress=False, executor=client, **SETTINGS)
    finally:
        cluster.close()
    expected = run_warnings(report)
    assert len(expected) == 1 and BLOCKED in expected[0]
    assert issued(caught) == expected
    assert logged(caplog) == expected
    assert report.case_count == 24 and report.error_count == 0


def test_a_warning_is_issued_and_logged_as_one_line(caplog: pytest.LogCaptureFixture) -> None:
    from heta_nb.runner.events import RunWarning, announce_warning

    caplog.set_level(logging.WARNING, logger="heta_nb.runner")
    with pytest.warns(HetaRunWarning) as caught:
        announce_warning(RunWarning("recipe_step_failed", "step 'split' failed:\n  ValueError: bad\r\n chunk"))
    assert issued(caught.list) == ["step 'split' failed: ValueError: bad chunk"] == logged(caplog)
