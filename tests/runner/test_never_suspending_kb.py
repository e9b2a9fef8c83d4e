"""An async KB whose queries never suspend (an in-memory index: CPU work, no I/O) is not a blocked loop.

Each query returns in a few milliseconds, but without the runner yielding between cases the
workers ran case after case in one event-loop step: the watchdog, the progress updates and
every other query waited for the whole unit, and the monitor blamed whichever query was
running for the sum of them (Heta's in-memory BM25 in the bundled demo: "the KB blocked the
event loop for 0.8 s" on every run).
"""

from __future__ import annotations

import time
from typing import Any

from runner_support import exact_kb, toy_benchmark

import heta_nb


async def cpu_kb(query: str, *, mode: str, top_k: int) -> Any:
    """Searches in memory: 5 ms of CPU per query, and never awaits anything."""
    until = time.perf_counter() + 0.005
    while time.perf_counter() < until:
        pass
    return exact_kb(query, mode=mode, top_k=top_k)


def test_queries_that_never_suspend_do_not_block_the_loop() -> None:
    """One clean run of three passes (a CPU-starved machine can make the monitor itself wake late:
    runner/stalls.py); without the yield between cases every run blocked the loop."""
    for _ in range(3):
        report = heta_nb.evaluate(
            toy_benchmark(150),  # 0.75 s of queries, each 5 ms
            kb=cpu_kb,
            evaluators=["recall@3"],
            query_modes=["good"],
            knowledge_base_name="toy kb",
            store=None,
            progress=False,
            timeout_s=2,  # the watchdog ticks every 0.1 s: a loop that does not beat for 0.3 s is blocked
        )
        blocked = [w for w in report.metadata["heta_nb"]["warnings"] if "blocked the event loop" in w]
        if not blocked:
            break
    assert report.error_count == 0
    assert not blocked, blocked


def test_a_query_that_blocks_is_still_warned_about() -> None:
    """The yield between cases does not hide a query that really blocks (0.5 s of ``time.sleep``)."""

    async def blocking(query: str, *, mode: str, top_k: int) -> Any:
        if query.endswith("question 3?"):
            time.sleep(0.5)
        return exact_kb(query, mode=mode, top_k=top_k)

    report = heta_nb.evaluate(
        toy_benchmark(12),
        kb=blocking,
        evaluators=["recall@3"],
        query_modes=["good"],
        knowledge_base_name="toy kb",
        store=None,
        progress=False,
        timeout_s=2,
    )
    (warning,) = [w for w in report.metadata["heta_nb"]["warnings"] if "blocked the event loop" in w]
    assert "(case 'c003', mode 'good'" in warning
    seconds = float(warning.split("blocked the event loop for ")[1].split(" s:")[0])
    assert 0.4 <= seconds <= 0.7
