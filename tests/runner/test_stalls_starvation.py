"""A machine starved of CPU is not blamed on the KB: the monitor leaves out of a "blocked the
event loop" the time the loop's thread only waited for a CPU (Linux schedstat).

Real starvation, no stand-in: this process's threads and three busy processes share one CPU,
so a query's 0.1 s of work takes ~0.4 s of wall time. Before, the monitor called that a
0.4 s block (over its 0.3 s threshold with ``timeout_s=2``) and warned, as it did now and
then on a busy CI machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from runner_support import evaluate_toy

from heta_nb.runner.stalls import runqueue_wait_reader

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or runqueue_wait_reader(threading.get_native_id()) is None,
    reason="needs Linux's per-thread schedstat and CPU affinity",
)

BUSY = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"


@contextmanager
def one_busy_cpu(competitors: int) -> Iterator[None]:
    """This thread (and the threads it starts) on one CPU, shared with ``competitors`` busy processes."""
    before = os.sched_getaffinity(0)
    cpu = min(before)
    busy = [subprocess.Popen([sys.executable, "-c", BUSY, str(cpu)]) for _ in range(competitors)]
    try:
        time.sleep(0.3)  # (they are spinning)
        os.sched_setaffinity(0, {cpu})
        yield
    finally:
        os.sched_setaffinity(0, before)
        for process in busy:
            process.kill()
            process.wait(5)


def _work(cpu_seconds: float, *, only_first: bool = False) -> Any:
    calls: list[str] = []

    async def query(text: str) -> list[str]:
        calls.append(text)
        started = time.thread_time()
        while time.thread_time() - started < (0 if only_first and len(calls) > 1 else cpu_seconds):
            pass  # CPU work that never yields to the loop
        return ["Document text"]

    return query


def _blocked(report: Any) -> list[str]:
    return [w for w in report.metadata["heta_nb"]["warnings"] if "blocked the event loop" in w]


def test_a_short_query_on_a_starved_cpu_is_not_called_a_block() -> None:
    with one_busy_cpu(3):
        started = time.perf_counter()
        # (timeout_s=2: the monitor's threshold is then 0.3 s, over the query's 0.1 s of work)
        report = evaluate_toy(kb=_work(0.1), query_modes=["good"], store=None, concurrency=1, timeout_s=2)
        wall = time.perf_counter() - started
    per_case = wall / len(report.case_results)
    assert per_case > 0.35, f"not starved ({per_case:.2f} s a case): the test shows nothing"  # 0.1 s took ~0.4
    assert report.error_count == 0
    assert _blocked(report) == []


def test_a_real_block_is_still_one_when_starved() -> None:
    with one_busy_cpu(3):
        report = evaluate_toy(
            kb=_work(0.6, only_first=True), query_modes=["good"], store=None, concurrency=1, timeout_s=10
        )
    blocked = _blocked(report)
    assert blocked, report.metadata["heta_nb"]["warnings"]
    assert "the KB blocked the event loop" in blocked[0]
