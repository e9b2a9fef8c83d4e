"""What KB and evaluator code may raise or do, recorded per case: exits, a raising ``name``, hangs, a blocked loop."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import SlowKB, exact_kb, interrupt_when_checkpointed, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import HetaNbError
from heta_nb.runner import RunConfig
from heta_nb.runner.case import CaseRunner
from heta_nb.runner.checkpoint import CHECKPOINT_FILE
from heta_nb.runner.errors import RunError
from heta_nb.runner.kb import KnowledgeBaseAdapter
from heta_nb.runner.stalls import StallMonitor
from heta_nb.store import report_prefix

EXITS = {
    "SystemExit": lambda: SystemExit("the KB called sys.exit(3)"),
    "KeyboardInterrupt": lambda: KeyboardInterrupt("raised by the KB, not by the user"),
    "GeneratorExit": lambda: GeneratorExit("a generator's exit, raised by hand"),
}
"""What ``except Exception`` misses; the message each carries."""


def _failing(case_id: str) -> bool:
    return case_id in ("c001", "c004")


def _query_fails(query: str) -> bool:
    return query.endswith(("1?", "4?"))  # cases c001 and c004 of a 6-case toy benchmark


def _sync_kb(name: str) -> Any:
    def kb(query: str, *, mode: str, top_k: int) -> Any:
        if _query_fails(query):
            raise EXITS[name]()
        return exact_kb(query, mode=mode, top_k=top_k)

    return kb


def _async_kb(name: str) -> Any:
    async def kb(query: str, *, mode: str, top_k: int) -> Any:
        await asyncio.sleep(0)
        if _query_fails(query):
            raise EXITS[name]()
        return exact_kb(query, mode=mode, top_k=top_k)

    return kb


def _to_thread_kb(name: str) -> Any:
    """An async KB that runs sync code in a thread: the exit reaches the runner through a future."""

    def blocking() -> None:
        raise EXITS[name]()

    async def kb(query: str, *, mode: str, top_k: int) -> Any:
        if _query_fails(query):
            await asyncio.to_thread(blocking)
        return exact_kb(query, mode=mode, top_k=top_k)

    return kb


def _sync_evaluator(name: str) -> Any:
    def exploding(case: Any, response: Any) -> float:
        if _failing(case.case_id):
            raise EXITS[name]()
        return 1.0

    return exploding


def _async_evaluator(name: str) -> Any:
    async def exploding(case: Any, response: Any) -> float:
        await asyncio.sleep(0)
        if _failing(case.case_id):
            raise EXITS[name]()
        return 1.0

    return exploding


KBS = {"sync KB": _sync_kb, "async KB": _async_kb, "async KB awaiting a thread": _to_thread_kb}
EVALUATORS = {"sync evaluator": _sync_evaluator, "async evaluator": _async_evaluator}


def _run(tmp_path: Path, **settings: Any) -> Any:
    settings.setdefault("kb", exact_kb)
    return heta_nb.evaluate(
        toy_benchmark(6),
        query_modes=["good", "poor"],
        knowledge_base_name="toy kb",
        report_id="exits",
        store=tmp_path,
        progress=False,
        concurrency=3,
        **settings,
    )


# -- 1. SystemExit, KeyboardInterrupt and GeneratorExit from KB or evaluator code ---------


@pytest.mark.hostile
@pytest.mark.parametrize("where", list(KBS))
@pytest.mark.parametrize("name", list(EXITS))
def test_an_exit_raised_by_kb_code_is_that_cases_error(tmp_path: Path, name: str, where: str) -> None:
    """It ended the whole run ("Task exception was never retrieved"): no report, the case lost."""
    report = _run(tmp_path, kb=KBS[where](name), evaluators=["recall@3"])
    assert report.metadata["heta_nb"]["status"] == "complete" and len(report.case_results) == 12
    failed = {(r.case_id, r.query_mode): r.error for r in report.case_results if r.error is not None}
    assert sorted(failed) == [(c, m) for c in ("c001", "c004") for m in ("good", "poor")]
    for error in failed.values():
        assert error.error_type == name and error.message == str(EXITS[name]()) and not error.retryable
    assert all(r.scores for r in report.case_results if r.error is None)
    assert ReportStore(tmp_path).load("toy kb", "exits") == report  # the report was written


@pytest.mark.hostile
@pytest.mark.parametrize("where", list(EVALUATORS))
@pytest.mark.parametrize("name", list(EXITS))
def test_an_exit_raised_by_an_evaluator_is_that_scores_error(tmp_path: Path, name: str, where: str) -> None:
    report = _run(tmp_path, evaluators=["recall@3", EVALUATORS[where](name)])
    assert report.metadata["heta_nb"]["status"] == "complete" and report.error_count == 0
    for result in report.case_results:
        recall, exploding = result.scores
        assert recall.value != "error"
        if _failing(result.case_id):
            assert exploding.value == "error" and exploding.metadata["error"] == {
                "type": name,
                "message": str(EXITS[name]()),
            }
            assert list(result.metadata["heta_nb"]["evaluator_errors"]) == ["exploding"]
        else:
            assert exploding.value == 1.0
    assert ReportStore(tmp_path).load("toy kb", "exits") == report


@pytest.mark.hostile
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")  # "never retrieved", "ignored"
@pytest.mark.parametrize("name", list(EXITS))
def test_evaluate_async_on_the_main_thread_records_a_kbs_exits_too(name: str) -> None:
    """On the main thread a ``KeyboardInterrupt`` could be the user's: one raised by the KB is the KB's."""

    async def main() -> Any:
        return await heta_nb.evaluate_async(
            toy_benchmark(6),
            kb=_async_kb(name),
            query_modes=["good"],
            evaluators=["recall@3", _sync_evaluator(name)],
            knowledge_base_name="toy kb",
            store=None,
            progress=False,
        )

    assert threading.current_thread() is threading.main_thread()
    report = asyncio.run(main())
    assert report.metadata["heta_nb"]["status"] == "complete" and len(report.case_results) == 6
    assert {r.case_id: r.error.error_type for r in report.case_results if r.error} == {"c001": name, "c004": name}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the run's handler is gone


def _interrupting_kb(after: int) -> Any:
    """An async KB during whose ``after``-th query the user presses Ctrl-C (SIGINT to this process)."""
    calls = {"n": 0}

    async def kb(query: str, *, mode: str, top_k: int) -> Any:
        calls["n"] += 1
        if calls["n"] == after:
            signal.raise_signal(signal.SIGINT)  # handled on this (the main) thread, at once
        await asyncio.sleep(0.005)
        return exact_kb(query, mode=mode, top_k=top_k)

    return kb


@pytest.mark.skipif(not hasattr(signal, "raise_signal"), reason="needs signal.raise_signal")
def test_the_users_ctrl_c_still_cancels_evaluate_async(tmp_path: Path) -> None:
    """The user's interrupt during ``evaluate_async`` on the main thread cancels the run; the KB's does not.

    With Python's default SIGINT handler (a loop run by hand), the first Ctrl-C cancels the run
    as ``run.cancel()`` does: the partial report comes back. With ``asyncio.run``'s handler the
    main task is cancelled: the partial report is saved and ``KeyboardInterrupt`` propagates.
    """
    settings: dict[str, Any] = {
        "query_modes": ["good"],
        "knowledge_base_name": "toy kb",
        "store": tmp_path,
        "progress": False,
        "concurrency": 2,
    }
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    loop = asyncio.new_event_loop()
    try:
        coroutine = heta_nb.evaluate_async(toy_benchmark(60), kb=_interrupting_kb(10), report_id="own-loop", **settings)
        report = loop.run_until_complete(coroutine)
    except KeyboardInterrupt:  # (not a bare KeyboardInterrupt: pytest would stop the whole session)
        pytest.fail("the first Ctrl-C escaped as a KeyboardInterrupt from inside the KB instead of cancelling the run")
    finally:
        loop.close()
    assert report.metadata["heta_nb"]["status"] == "cancelled" and 5 <= len(report.case_results) < 60
    assert ReportStore(tmp_path).load("toy kb", "own-loop") == report
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    interrupted = heta_nb.evaluate_async(toy_benchmark(60), kb=_interrupting_kb(10), report_id="run", **settings)
    if sys.version_info >= (3, 11):  # asyncio.run's own handler cancels the main task
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(interrupted)
    else:  # Python 3.10's asyncio.run keeps the default handler: as with a loop run by hand
        assert asyncio.run(interrupted).metadata["heta_nb"]["status"] == "cancelled"
    saved = ReportStore(tmp_path).load("toy kb", "run")
    assert saved.metadata["heta_nb"]["status"] == "cancelled" and 5 <= len(saved.case_results) < 60
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# -- 2. a KB object whose attributes raise -------------------------------------------------


class _RaisingName:
    @property
    def name(self) -> str:
        raise RuntimeError("the name service is down")

    def query(self, query: str) -> list[str]:
        return ["ok"]


class _RaisingQuery:
    name = "kb"

    @property
    def query(self) -> Any:
        raise SystemExit("no query today")


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("kb", "attribute", "raised"),
    [
        (_RaisingName(), "name", "RuntimeError: the name service is down"),
        (_RaisingQuery(), "query", "SystemExit: no query today"),
    ],
)
def test_a_kb_attribute_that_raises_is_named_before_the_run(kb: Any, attribute: str, raised: str) -> None:
    with pytest.raises(HetaNbError) as info:
        heta_nb.evaluate(toy_benchmark(2), kb=kb, store=None, progress=False)
    message = str(info.value)
    assert f"reading its attribute {attribute!r} raised {raised}" in message and type(kb).__name__ in message
    assert isinstance(info.value, RunError)


# -- 5. an async evaluator that never returns ------------------------------------------------


async def _hung(case: Any, response: Any) -> float:
    if _failing(case.case_id):
        await asyncio.Event().wait()  # never set
    return 1.0


def test_an_async_evaluator_that_never_returns_times_out_with_the_query_timeout() -> None:
    started = time.perf_counter()
    report = heta_nb.evaluate(
        toy_benchmark(6),
        kb=exact_kb,
        evaluators=["recall@3", _hung],
        query_modes=["good"],
        knowledge_base_name="toy kb",
        store=None,
        progress=False,
        timeout_s=0.3,
    )
    assert time.perf_counter() - started < 5
    info = report.metadata["heta_nb"]
    assert info["status"] == "complete" and info["evaluator_timeout_s"] == 0.3 and report.error_count == 0
    for result in report.case_results:
        recall, hung = result.scores
        assert recall.value != "error" and result.response is not None
        if _failing(result.case_id):
            assert hung.value == "error" and hung.metadata["error"]["type"] == "TimeoutError"
            assert "did not finish within 0.3 s" in hung.metadata["error"]["message"]
            assert list(result.metadata["heta_nb"]["evaluator_errors"]) == ["_hung"]
        else:
            assert hung.value == 1.0


def test_the_evaluator_timeout_is_its_own_setting() -> None:
    report = heta_nb.evaluate(
        toy_benchmark(6),
        kb=exact_kb,
        evaluators=[_hung],
        query_modes=["good"],
        knowledge_base_name="toy kb",
        store=None,
        progress=False,
        timeout_s=None,
        evaluator_timeout_s=0.2,
    )
    assert report.metadata["heta_nb"]["evaluator_timeout_s"] == 0.2
    assert [s.value for r in report.case_results for s in r.scores].count("error") == 2
    defaults = RunConfig(benchmark=toy_benchmark(2), kb=exact_kb)
    assert defaults.evaluator_timeout == 60.0  # the query timeout
    assert RunConfig(benchmark=toy_benchmark(2), kb=exact_kb, timeout_s=None).evaluator_timeout is None
    assert RunConfig(benchmark=toy_benchmark(2), kb=exact_kb, evaluator_timeout_s=None).evaluator_timeout is None
    for bad in (0, -1, True, "5", float("nan")):
        with pytest.raises(RunError, match="evaluator_timeout_s must be a positive number"):
            RunConfig(benchmark=toy_benchmark(2), kb=exact_kb, evaluator_timeout_s=bad)


# -- 6. an async KB that blocks the event loop ----------------------------------------------


def _blocking_kb(seconds: float) -> Any:
    async def kb(query: str, *, mode: str, top_k: int) -> Any:
        if query.endswith("1?"):
            time.sleep(seconds)  # blocking code inside async def: the classic mistake
        await asyncio.sleep(0.02)
        return exact_kb(query, mode=mode, top_k=top_k)

    return kb


def _monitors() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "heta_nb-loop-monitor"]


def test_an_async_kb_that_blocks_the_loop_past_its_timeout_is_a_timeout_naming_the_cause() -> None:
    """It was recorded as a success 1.2 s later, past a 0.5 s timeout (the watchdog could not run)."""
    events: list[Any] = []
    report = heta_nb.evaluate(
        toy_benchmark(6),
        kb=_blocking_kb(1.2),
        evaluators=["recall@3"],
        query_modes=["good"],
        knowledge_base_name="toy kb",
        store=None,
        progress=False,
        concurrency=6,
        timeout_s=0.5,
        retries=0,
        on_event=events.append,
    )
    errors = {r.case_id: r.error for r in report.case_results if r.error is not None}
    if sys.version_info >= (3, 11):
        assert list(errors) == ["c001"], errors  # the queries that waited meanwhile did not time out
    else:  # asyncio.wait_for's timers count the blocked time: ordinary (retryable) timeouts
        assert all(
            e.retryable and e.message == "query did not finish within 0.5 s" for c, e in errors.items() if c != "c001"
        )
    error = errors["c001"]
    assert error.error_type == "TimeoutError" and not error.retryable and error.metadata["attempts"] == 1
    assert "query did not finish within 0.5 s: the KB blocked the event loop for 1.2 s" in error.message
    assert "run blocking code in a thread" in error.message and "plain function" in error.message
    assert 1.0 <= error.metadata["blocked_loop_s"] <= 1.5
    warnings = [e for e in events if type(e).__name__ == "RunWarning" and e.code == "blocked_event_loop"]
    assert len(warnings) == 1 and "the KB blocked the event loop for 1.2 s" in warnings[0].message
    assert any("blocked the event loop" in w for w in report.metadata["heta_nb"]["warnings"])
    assert not _monitors()  # the monitor thread stopped with the run


def test_a_short_block_is_only_warned_about_once() -> None:
    report = heta_nb.evaluate(
        toy_benchmark(12),
        kb=_blocking_kb(0.4),
        evaluators=["recall@3"],
        query_modes=["good"],
        knowledge_base_name="toy kb",
        store=None,
        progress=False,
        timeout_s=2,
    )
    assert report.error_count == 0
    warnings = [w for w in report.metadata["heta_nb"]["warnings"] if "blocked the event loop" in w]
    assert len(warnings) == 1 and "(case 'c001', mode 'good'" in warnings[0]
    seconds = float(warnings[0].split("blocked the event loop for ")[1].split(" s:")[0])
    assert 0.3 <= seconds <= 0.6  # within a tick of the 0.4 s it slept


def test_a_sync_evaluator_that_blocks_the_loop_past_its_timeout_is_that_scores_timeout() -> None:
    def slow(case: Any, response: Any) -> float:
        if _failing(case.case_id):
            time.sleep(0.8)
        return 1.0

    report = heta_nb.evaluate(
        toy_benchmark(6),
        kb=SlowKB(0.001),
        evaluators=["recall@3", slow],
        query_modes=["good"],
        knowledge_base_name="toy kb",
        store=None,
        progress=False,
        timeout_s=5,
        evaluator_timeout_s=0.3,
    )
    slow_scores = {r.case_id: r.scores[1] for r in report.case_results}
    for case_id, score in slow_scores.items():
        if _failing(case_id):
            assert score.value == "error" and score.metadata["error"]["type"] == "TimeoutError"
            assert "evaluator_timeout_s" in score.metadata["error"]["message"]
            assert "blocked the event loop" in score.metadata["error"]["message"]
        else:
            assert score.value == 1.0


def test_the_blocked_loop_warning_is_once_per_run_not_once_per_process() -> None:
    for _ in range(2):
        events: list[Any] = []
        heta_nb.evaluate(
            toy_benchmark(12),  # two cases block: c001 and c011
            kb=_blocking_kb(0.4),
            query_modes=["good"],
            knowledge_base_name="toy kb",
            store=None,
            progress=False,
            timeout_s=2,
            on_event=events.append,
        )
        codes = [e.code for e in events if type(e).__name__ == "RunWarning"]
        assert codes.count("blocked_event_loop") == 1, codes
    assert not _monitors()


def test_a_task_seen_just_after_the_one_that_blocked_is_not_blamed() -> None:
    """The monitor can see the next task run before the loop beats again: a record shorter than a stall is no block."""
    config = RunConfig(benchmark=toy_benchmark(2), kb=exact_kb, query_modes=("good",), timeout_s=0.5)
    runner = CaseRunner(config, [], lambda: False, warn=lambda code, message: warned.append(message))
    warned: list[str] = []
    case = toy_benchmark(2).cases[1]

    async def main() -> Any:
        task = asyncio.current_task()
        stalls = runner.deadlines.stalls

        async def query(text: str) -> Any:
            now = time.perf_counter()
            stalls[task] = [now - 0.04, now]  # what the monitor records for such a task: a tick or two
            return exact_kb(text, mode="good", top_k=3)

        short, _ = await runner.run(task, query, "u", "kb", 1, case, "good")

        async def blocking(text: str) -> Any:
            now = time.perf_counter()
            stalls[task] = [now - 0.8, now]  # a real block, longer than the 0.5 s timeout
            return exact_kb(text, mode="good", top_k=3)

        long, _ = await runner.run(task, blocking, "u", "kb", 1, case, "good")
        return short, long

    short, long = asyncio.run(main())
    assert short["error"] is None and long["error"]["error_type"] == "TimeoutError"
    assert len(warned) == 1 and "blocked the event loop for 0.8 s" in warned[0]


# -- the user's interrupt and a KB's KeyboardInterrupt in one run --------------------------


def _kb_interrupting_itself(query: str, *, mode: str, top_k: int) -> Any:
    """A sync KB (run on a pool thread) whose third-party code raises ``KeyboardInterrupt`` on some queries."""
    time.sleep(0.01)
    if _query_fails(query):
        raise KeyboardInterrupt("raised by the KB's own code")
    return exact_kb(query, mode=mode, top_k=top_k)


def test_a_kbs_keyboard_interrupt_from_a_pool_thread_is_never_the_users() -> None:
    """After the user's Ctrl-C (``interrupted``), a ``KeyboardInterrupt`` from a pool thread is still the KB's.

    Python runs signal handlers on the main thread only; one raised on the main thread may be the user's.
    """
    config = RunConfig(benchmark=toy_benchmark(2), kb=exact_kb, query_modes=("good",))
    runner = CaseRunner(config, [], lambda: False, interrupted=lambda: True)
    adapter = KnowledgeBaseAdapter(_kb_interrupting_itself)
    case = toy_benchmark(2).cases[1]

    async def on_the_main_thread(text: str) -> Any:
        raise KeyboardInterrupt("maybe the user's")

    async def main() -> Any:
        task = asyncio.current_task()
        data, _ = await runner.run(
            task, adapter.caller("good", top_k=3, options={}, trace=False), "u", "kb", 1, case, "good"
        )
        with pytest.raises(KeyboardInterrupt, match="maybe the user's"):
            await runner.run(task, on_the_main_thread, "u", "kb", 1, case, "good")
        return data

    try:
        data = asyncio.run(main())
    finally:
        adapter.close()
    assert data["error"]["error_type"] == "KeyboardInterrupt"
    assert data["error"]["message"] == "raised by the KB's own code"


def test_run_cancel_stops_a_run_whose_kb_raises_keyboard_interrupt(tmp_path: Path) -> None:
    run = heta_nb.start(
        toy_benchmark(300),
        kb=_kb_interrupting_itself,
        query_modes=["good"],
        knowledge_base_name="toy kb",
        report_id="cancel",
        store=tmp_path,
        progress=False,
        concurrency=2,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and run.state.done < 20:
        time.sleep(0.01)
    run.cancel()
    report = run.result(timeout=30)
    assert report.metadata["heta_nb"]["status"] == "cancelled" and 20 <= len(report.case_results) < 300
    errors = {r.error.error_type for r in report.case_results if r.error is not None}
    assert errors == {"KeyboardInterrupt"}
    assert ReportStore(tmp_path).load("toy kb", "cancel") == report
    assert not _monitors()


CTRL_C_CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
sys.path.insert(0, {here!r})
import heta_nb
from runner_support import toy_benchmark
from test_escapes import _kb_interrupting_itself
report = heta_nb.evaluate(toy_benchmark(600), kb=_kb_interrupting_itself, query_modes=["good"], store=sys.argv[1],
                          report_id="ctrl-c", knowledge_base_name="toy kb", progress=False, concurrency=2)
info = report.metadata["heta_nb"]
kinds = sorted({{r.error.error_type for r in report.case_results if r.error is not None}})
print("returned", info["status"], info["done"], ",".join(kinds), flush=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name == "nt", reason="needs SIGINT")
def test_the_users_ctrl_c_cancels_evaluate_while_the_kbs_own_interrupts_are_recorded(tmp_path: Path) -> None:
    """In one run: the KB's ``KeyboardInterrupt`` (a pool thread) is a case's error; the user's Ctrl-C cancels."""
    store_root = tmp_path / "store"
    checkpoint = store_root / report_prefix("toy kb", "ctrl-c") / CHECKPOINT_FILE
    here = str(Path(__file__).resolve().parent)
    code = CTRL_C_CHILD.format(tests=str(Path(here).parent), here=here)
    returncode, out = interrupt_when_checkpointed(code, store_root, checkpoint, lines=20, timeout=60)
    assert returncode == 0, out
    status, done, kinds = out.strip().splitlines()[-1].split()[1:]
    assert status == "cancelled" and 20 <= int(done) < 600 and kinds == "KeyboardInterrupt"
    saved = ReportStore(store_root).load("toy kb", "ctrl-c")
    assert saved.metadata["heta_nb"]["status"] == "cancelled" and len(saved.case_results) == int(done)


# -- the monitor thread and the SIGINT handler never outlive a run ---------------------------


def _raising_subscriber(exc: BaseException) -> Any:
    def subscriber(event: Any) -> None:
        if type(event).__name__ == "CasesFinished":
            raise exc

    return subscriber


def test_a_run_that_dies_leaves_no_monitor_thread_and_restores_sigint() -> None:
    """A subscriber's ``KeyboardInterrupt`` (the one exit let through) left ``asyncio.run``'s handler installed."""
    raised = KeyboardInterrupt("from a subscriber")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    async def main() -> Any:
        return await heta_nb.evaluate_async(
            toy_benchmark(30),
            kb=SlowKB(0.005),
            query_modes=["good"],
            knowledge_base_name="toy kb",
            store=None,
            progress=False,
            on_event=_raising_subscriber(raised),
        )

    with pytest.raises(type(raised), match="from a subscriber"):
        asyncio.run(main())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not _monitors()
    run = heta_nb.start(  # on the engine's own thread
        toy_benchmark(30),
        kb=SlowKB(0.005),
        query_modes=["good"],
        knowledge_base_name="toy kb",
        store=None,
        progress=False,
        on_event=_raising_subscriber(raised),
    )
    with pytest.raises(type(raised), match="from a subscriber"):
        run.result(timeout=30)
    deadline = time.monotonic() + 5
    while _monitors() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _monitors() and run.done()


class _SlowHeartbeat:
    """A heartbeat whose first read (on the monitor thread) takes longer than ``stop()`` waits for it."""

    monitor_interval = 0.02
    stall_s = 0.25

    def __init__(self) -> None:
        self.stalls: dict[Any, list[float]] = {}
        self.reads = 0

    @property
    def beat(self) -> float:
        self.reads += 1
        if self.reads == 1:
            time.sleep(1.5)
        return time.perf_counter()


def test_a_monitor_restarted_after_a_stop_that_gave_up_waiting_leaves_one_thread() -> None:
    """A multi-unit run restarts the monitor per unit; an old thread still waking must not run on."""

    async def main() -> None:
        monitor = StallMonitor(_SlowHeartbeat())
        monitor.start(asyncio.get_running_loop())
        await asyncio.sleep(0.1)  # its first look has begun, and takes 1.5 s
        monitor.stop()  # gives up after 1 s
        monitor.start(asyncio.get_running_loop())
        await asyncio.sleep(1.0)  # the first thread's look is over
        assert len(_monitors()) == 1
        monitor.stop()

    asyncio.run(main())
    assert not _monitors()
