"""A report being written by one run is refused to another."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import SlowKB, evaluate_toy, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import HetaNbError, ReportInUseError
from heta_nb.runner.checkpoint import CHECKPOINT_FILE
from heta_nb.store import report_prefix

MODES = ["good", "poor"]


def test_a_second_run_of_a_report_being_written_is_refused_before_it_changes_anything(tmp_path: Path) -> None:
    """A resume (or an overwrite) from another notebook while the first run writes the report.

    Without the checkpoint's lock both runs ran the same cases, and the first to
    finish removed the checkpoint the other was still appending to.
    """
    store = ReportStore(tmp_path)
    first_kb = SlowKB(delay=0.02)
    run = heta_nb.start(
        toy_benchmark(30),
        kb=first_kb,
        query_modes=MODES,
        store=store,
        report_id="busy",
        concurrency=2,
        knowledge_base_name="toy kb",
        progress=False,
    )
    checkpoint = tmp_path / report_prefix("toy kb", "busy") / CHECKPOINT_FILE
    deadline = time.monotonic() + 20
    while run.state.done < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    second_kb = SlowKB(delay=0.001)
    for option in ({"resume": True}, {"overwrite": True}):
        lines = checkpoint.read_bytes().count(b"\n")
        with pytest.raises(ReportInUseError, match="another run is writing report 'busy' for 'toy kb'"):
            evaluate_toy(benchmark=toy_benchmark(30), kb=second_kb, store=store, report_id="busy", **option)
        assert checkpoint.read_bytes().count(b"\n") >= lines  # not emptied
    assert second_kb.calls == 0
    report = run.result(timeout=30)
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    assert len(keys) == len(set(keys)) == 60 and report.metadata["heta_nb"]["status"] == "complete"
    assert first_kb.calls == 60 and store.load("toy kb", "busy") == report and not checkpoint.exists()
    # the lock went with the run: the same report can be run again at once
    again = evaluate_toy(benchmark=toy_benchmark(30), kb=second_kb, store=store, report_id="busy", overwrite=True)
    assert len(again.case_results) == 60 and second_kb.calls == 60


def test_the_lock_goes_with_a_failed_run(tmp_path: Path) -> None:
    """A run whose report cannot be saved keeps its checkpoint, unlocked, for the resume."""
    store = ReportStore(tmp_path)
    kb = SlowKB(delay=0.001)
    folder = tmp_path / report_prefix("toy kb", "failed")
    folder.mkdir(parents=True)
    (folder / "report.json").mkdir()  # a folder where the report goes: the save fails
    with pytest.raises(HetaNbError, match="could not be saved") as failed:  # what heta_nb raises on purpose
        evaluate_toy(benchmark=toy_benchmark(10), kb=kb, store=store, report_id="failed", resume=True)
    assert isinstance(failed.value, heta_nb.runner.RunFailedError) and isinstance(failed.value, RuntimeError)
    assert (folder / CHECKPOINT_FILE).exists()
    (folder / "report.json").rmdir()
    final = evaluate_toy(benchmark=toy_benchmark(10), kb=kb, store=store, report_id="failed", resume=True)
    assert final.metadata["heta_nb"]["resumed"] == 20 and kb.calls == 20


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")  # no late finish on a closed loop
def test_a_run_killed_by_a_base_exception_releases_its_checkpoint(tmp_path: Path) -> None:
    """A ``BaseException`` that stops the run's loop; the same kernel can still resume the report.

    On Python 3.10 the run's coroutine can be left suspended and only closed by the
    garbage collector: the lock must not wait for that, nor the coroutine try to
    finish the run then.
    """
    counted = {"done": 0}

    def subscriber(event: Any) -> None:
        if type(event).__name__ == "CasesFinished":
            counted["done"] += len(event.records)
            if counted["done"] >= 5 and not counted.get("raised"):
                counted["raised"] = 1
                raise KeyboardInterrupt("stopped by a subscriber")

    with pytest.raises(KeyboardInterrupt, match="stopped by a subscriber"):
        evaluate_toy(
            benchmark=toy_benchmark(30),
            kb=SlowKB(delay=0.005),
            store=tmp_path,
            report_id="exit",
            concurrency=2,
            on_event=subscriber,
        )
    assert (tmp_path / report_prefix("toy kb", "exit") / CHECKPOINT_FILE).exists()
    kb = SlowKB(delay=0.001)
    final = evaluate_toy(benchmark=toy_benchmark(30), kb=kb, store=tmp_path, report_id="exit", resume=True)
    info = final.metadata["heta_nb"]
    assert info["status"] == "complete" and len(final.case_results) == 60
    assert kb.calls == 60 - info["resumed"]
