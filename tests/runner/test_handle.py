"""The run handle (start): waiting, cancelling, threads and event loops."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import SlowKB, evaluate_toy, exact_kb, interrupt_when_checkpointed, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.runner import EvaluationRun
from heta_nb.runner.checkpoint import CHECKPOINT_FILE
from heta_nb.runner.config import RunConfig
from heta_nb.store import report_prefix

MODES = ["good", "poor"]


HERE = Path(__file__).resolve().parents[1]


CTRL_C_CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import heta_nb
    from runner_support import SlowKB, toy_benchmark
    print("started", flush=True)
    report = heta_nb.evaluate(toy_benchmark(60), kb=SlowKB(0.05), query_modes=["good", "poor"], store=sys.argv[1],
                              report_id="ctrl-c", knowledge_base_name="toy kb", progress=False, concurrency=2)
    info = report.metadata["heta_nb"]
    print("returned", info["status"], info["done"], info["remaining"], flush=True)
    """
)


# 300 cases, one mode, 30 ms each, two at a time: a full run takes at least 4.5 s.
SIGINT_CHILD = textwrap.dedent(
    """
    import json, signal, sys, threading, time
    sys.path.insert(0, {tests!r})
    import heta_nb
    from runner_support import SlowKB, exact_kb, toy_benchmark

    kind, how = sys.argv[1], sys.argv[2]

    def sync_kb(query, *, mode, top_k):
        time.sleep(0.03)
        return exact_kb(query, mode=mode, top_k=top_k)

    def kb():
        return SlowKB(0.03) if kind == "async" else sync_kb

    def run(cases):
        started = time.monotonic()
        report = heta_nb.evaluate(toy_benchmark(cases), kb=kb(), query_modes=["good"], store=None,
                                  knowledge_base_name="toy kb", progress=False, concurrency=2)
        info = report.metadata["heta_nb"]
        return {{"status": info["status"], "done": info["done"], "total": info["total"],
                "results": len(report.case_results), "elapsed": time.monotonic() - started}}

    def interrupt():
        if how == "raise_signal":  # the C handler runs on the timer's thread
            signal.raise_signal(signal.SIGINT)
        else:  # the signal is delivered to a thread other than the main one
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    normal = run(20)
    threading.Timer(0.5, interrupt).start()
    interrupted = run(300)

    # a timeout on the main thread is still kept to the slice
    handle = heta_nb.start(toy_benchmark(200), kb=kb(), query_modes=["good"], store=None,
                           knowledge_base_name="toy kb", progress=False, concurrency=2)
    started = time.monotonic()
    try:
        handle.result(timeout=0.35)
        timed_out = None
    except TimeoutError as exc:
        timed_out = {{"message": str(exc), "waited": time.monotonic() - started, "done": handle.done()}}
    handle.cancel()
    timed_out["status"] = handle.result(timeout=20).metadata["heta_nb"]["status"]
    print(json.dumps({{"normal": normal, "interrupted": interrupted, "timed_out": timed_out}}), flush=True)
    """
)


# -- the handle ------------------------------------------------------------------------


def _start(cases: int = 40, **kwargs: Any) -> EvaluationRun:
    kwargs.setdefault("kb", SlowKB(0.01))
    return heta_nb.start(
        toy_benchmark(cases),
        query_modes=["good"],
        store=None,
        knowledge_base_name="toy kb",
        progress=False,
        concurrency=2,
        **kwargs,
    )


class _Interrupting:
    """An ``on_event`` callback that raises ``KeyboardInterrupt`` on the run's own thread, once.

    The one ``BaseException`` the runner lets through from code it calls: on the main
    thread a ``KeyboardInterrupt`` may be the user's.
    """

    def __init__(self) -> None:
        self.raised = False

    def __call__(self, event: Any) -> None:
        if not self.raised and type(event).__name__ == "CasesFinished":
            self.raised = True
            raise KeyboardInterrupt("from a subscriber")


def test_evaluate_works_inside_a_running_event_loop() -> None:
    async def notebook_cell() -> Any:
        return evaluate_toy(kb=exact_kb, store=None)  # blocking call from within a loop, as in Jupyter

    assert len(asyncio.run(notebook_cell()).case_results) == 24

    async def awaited() -> Any:
        return await heta_nb.evaluate_async(
            toy_benchmark(),
            kb=exact_kb,
            query_modes=MODES,
            store=None,
            knowledge_base_name="k",
            progress=False,
        )

    assert len(asyncio.run(awaited()).case_results) == 24


def test_start_leaves_the_caller_free() -> None:
    run = heta_nb.start(
        toy_benchmark(40),
        kb=SlowKB(0.02),
        query_modes=MODES,
        store=None,
        concurrency=4,
        knowledge_base_name="k",
        progress=False,
    )
    assert not run.done()
    ticks = 0
    while not run.done():
        ticks += 1  # the caller keeps working meanwhile
        time.sleep(0.005)
    assert ticks > 10
    assert len(run.result().case_results) == 80
    assert threading.active_count() >= 1


@pytest.mark.skipif(not hasattr(asyncio, "timeout"), reason="asyncio.timeout is Python 3.11+")
def test_evaluate_async_lets_the_callers_cancellation_propagate(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)

    async def main() -> str:
        try:
            async with asyncio.timeout(0.3):
                await heta_nb.evaluate_async(
                    toy_benchmark(30),
                    kb=SlowKB(0.05),
                    query_modes=MODES,
                    store=store,
                    report_id="timed",
                    knowledge_base_name="toy kb",
                    progress=False,
                    concurrency=2,
                )
        except TimeoutError:
            return "timed out"
        return "returned"

    assert asyncio.run(main()) == "timed out"
    saved = store.load("toy kb", "timed")
    assert saved.metadata["heta_nb"]["status"] == "cancelled" and 0 < len(saved.case_results) < 60
    finished = evaluate_toy(
        lint=False, benchmark=toy_benchmark(30), kb=SlowKB(0), store=store, report_id="timed", resume=True
    )
    assert finished.metadata["heta_nb"]["status"] == "complete" and len(finished.case_results) == 60


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs SIGINT")
def test_ctrl_c_returns_the_partial_report(tmp_path: Path) -> None:
    store_root = tmp_path / "store"
    checkpoint = store_root / report_prefix("toy kb", "ctrl-c") / CHECKPOINT_FILE
    code = CTRL_C_CHILD.format(tests=str(HERE))
    returncode, out = interrupt_when_checkpointed(code, store_root, checkpoint, lines=6, timeout=30)
    assert returncode == 0, out
    status, done, remaining = out.strip().splitlines()[-1].split()[1:]
    assert status == "cancelled" and int(done) > 0 and int(done) + int(remaining) == 120
    saved = heta_nb.ReportStore(store_root).load("toy kb", "ctrl-c")
    assert saved.metadata["heta_nb"]["status"] == "cancelled" and len(saved.case_results) == int(done)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
@pytest.mark.parametrize(("kind", "how"), [("async", "raise_signal"), ("sync", "pthread_kill")])
def test_sigint_handled_on_another_thread_cancels_the_blocking_evaluate(kind: str, how: str) -> None:
    """Ctrl-C whose C handler ran off the main thread cancels; a normal run completes; timeouts hold."""
    child = subprocess.run(
        [sys.executable, "-c", SIGINT_CHILD.format(tests=str(HERE)), kind, how],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout.strip().splitlines()[-1])
    normal, interrupted = out["normal"], out["interrupted"]
    assert normal["status"] == "complete" and normal["done"] == normal["total"] == normal["results"] == 20
    # the full run needs >= 4.5 s; the interrupt comes at 0.5 s
    assert interrupted["status"] == "cancelled", out
    assert interrupted["total"] == 300 and 0 < interrupted["done"] == interrupted["results"] < 300
    assert interrupted["elapsed"] < 3.0, out
    timed_out = out["timed_out"]
    assert timed_out is not None and "still running after 0.35 s" in timed_out["message"]
    assert 0.35 <= timed_out["waited"] < 1.5 and not timed_out["done"] and timed_out["status"] == "cancelled"


def test_a_cancelled_await_leaves_the_run_and_its_result_alone() -> None:
    """``asyncio.wait_for(run, t)`` used to cancel the run's future: every later wait got CancelledError."""
    run = _start()

    async def wait_briefly() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(run, 0.05)

    asyncio.run(wait_briefly())
    report = run.result(timeout=30)
    assert report.metadata["heta_nb"]["status"] == "complete" and len(report.case_results) == 40
    assert run.status == "complete" and run.done()

    async def wait_again() -> heta_nb.EvaluationReport:
        return await run

    assert asyncio.run(wait_again()) is report


def test_results_from_several_threads_and_event_loops_are_the_same_report() -> None:
    """Checked correct: concurrent waits (threads, loops on threads) all get the one report."""
    run = _start(60)
    got: list[Any] = []

    def in_thread() -> None:
        got.append(run.result(timeout=30))

    def on_a_loop() -> None:
        async def wait() -> heta_nb.EvaluationReport:
            return await run

        got.append(asyncio.run(wait()))

    threads = [threading.Thread(target=target) for target in (in_thread, in_thread, on_a_loop, on_a_loop)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(got) == 4 and all(report is got[0] for report in got)
    run.cancel()
    run.cancel()  # after the end: nothing changes
    assert run.result(timeout=0) is got[0] and run.status == "complete"


def test_state_is_final_when_the_run_dies_of_a_base_exception() -> None:
    """A ``BaseException`` that stops the run's loop reached the caller, but ``state`` said ``running`` forever."""
    run = _start(4, on_event=_Interrupting())
    with pytest.raises(KeyboardInterrupt, match="from a subscriber"):
        run.result(timeout=20)
    assert run.done() and run.state.finished and run.status in ("failed", "cancelled")


def test_result_starts_a_handle_that_was_cancelled_before_it_started() -> None:
    """A handle that was never started used to make ``result()`` wait forever."""
    config = RunConfig(
        benchmark=toy_benchmark(4), kb=exact_kb, query_modes=("good",), store=None, knowledge_base_name="toy kb"
    )
    run = EvaluationRun(config)
    assert run.status == "pending"
    run.cancel()
    report = run.result(timeout=10)
    assert report.metadata["heta_nb"]["status"] == "cancelled" and report.case_results == ()
    assert run.status == "cancelled"
