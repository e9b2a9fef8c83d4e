"""Hostile cases on Dask: a case whose query kills its worker process (issue 35, item 9).

On a real ``LocalCluster(processes=True)`` of two single-threaded workers, a KB calls
``os._exit(1)`` for chosen questions (as an out-of-memory kill or a native crash would end
the worker). The run must finish with every other case scored, each killer recorded once
with the ``WorkerDied`` error, nothing lost or duplicated, and ``resume=True`` must not send
a recorded killer again. Every wait is bounded: a regression fails, it does not hang.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb

distributed = pytest.importorskip("distributed", reason="needs the [dask] extra")
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module

pytestmark = [pytest.mark.slow, pytest.mark.hostile]

LIMIT_S = 90
"""The most one run may take here (they took 3-7 s when this was written)."""


@pytest.fixture
def client() -> Any:
    """Two single-threaded worker processes; Dask gives up on a task after two deaths (``allowed-failures: 1``).

    A cluster per test: after many deaths, Dask's nannies sometimes stop restarting their
    workers (the cluster then has none left), which must not carry over to the next test.
    """
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.CRITICAL
        )
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close(timeout=30)


class KillerKB:
    """``exact_kb``; for the questions in ``killers`` it exits the worker process at once.

    Every query appends ``pid question mode`` to ``log`` first (closed before the exit).
    """

    def __init__(self, log: Path, killers: set[int], delay: float = 0.0) -> None:
        self.log = str(log)
        self.killers = set(killers)
        self.delay = delay

    def query(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        question = int(query.rstrip("?").split()[-1])
        with open(self.log, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()}\t{question}\t{mode}\n")
        if question in self.killers:
            os._exit(1)
        if self.delay:
            time.sleep(self.delay)
        return exact_kb(query, mode=mode, top_k=top_k)


def _queries(log: Path) -> list[tuple[int, str]]:
    if not log.exists():
        return []
    return [(int(q), m) for _, q, m in (line.split("\t") for line in log.read_text(encoding="utf-8").splitlines())]


def _run(client: Any, kb: KillerKB, n: int, **settings: Any) -> Any:
    started = time.monotonic()
    settings.setdefault("store", None)
    run = heta_nb.start(
        toy_benchmark(n, n_docs=n),
        kb=kb,
        query_modes=["good", "poor"],
        knowledge_base_name="toy kb",
        report_id="killers",
        concurrency=1,
        executor=client,
        progress=False,
        **settings,
    )
    try:
        report = run.result(timeout=LIMIT_S)
    except TimeoutError as exc:
        workers = len(client.scheduler_info()["workers"])
        raise AssertionError(f"not finished in {LIMIT_S} s; the cluster has {workers} worker(s) left") from exc
    finally:
        run.cancel()
    assert time.monotonic() - started < LIMIT_S
    return report


def _check(report: Any, n: int, killers: set[int]) -> None:
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    assert keys == sorted((f"c{i:03d}", m) for i in range(n) for m in ("good", "poor"))  # each once, none lost
    assert report.metadata["heta_nb"]["status"] == "complete"
    died = {(r.case_id, r.query_mode) for r in report.case_results if r.error is not None}
    assert died == {(f"c{i:03d}", m) for i in killers for m in ("good", "poor")}
    for result in report.case_results:
        if result.error is None:
            assert result.scores and all(s.value != "error" for s in result.scores)  # scored
        else:
            assert result.error.error_type == "WorkerDied"
            assert result.error.message.startswith("the worker died running this case (Dask: ")
            assert "\n" not in result.error.message


def test_a_case_that_kills_its_worker_is_recorded_as_its_error_and_the_run_goes_on(client: Any, tmp_path: Path) -> None:
    log = tmp_path / "log.tsv"
    report = _run(client, KillerKB(log, {7}), 40)
    _check(report, 40, {7})
    assert report.metadata["heta_nb"]["executor"] == {"kind": "dask", "workers": 2, "threads": 2}
    deaths = [q for q in _queries(log) if q[0] == 7]
    assert len(deaths) >= 2  # killed at least twice before it was recorded


def test_two_killers_in_one_batch_are_both_recorded_and_the_rest_scored(client: Any, tmp_path: Path) -> None:
    from heta_nb.runner.distributed import batch_sizes

    first = batch_sizes(80, 2)[0] // 2  # (questions 0.. in the first batch; two modes a question)
    killers = {1, first - 1}
    assert len(killers) == 2
    report = _run(client, KillerKB(tmp_path / "log.tsv", killers), 40)
    _check(report, 40, killers)


def test_resume_does_not_send_a_recorded_killer_again(client: Any, tmp_path: Path) -> None:
    log = tmp_path / "log.tsv"
    store = tmp_path / "store"
    _check(_run(client, KillerKB(log, {4}), 24, store=store), 24, {4})
    sent = _queries(log)
    again = _run(client, KillerKB(log, {4}), 24, store=store, resume=True)
    _check(again, 24, {4})
    assert _queries(log) == sent  # nothing sent again: the killer's error is a recorded result
    assert again.metadata["heta_nb"]["resumed"] == 48


def test_a_sweep_pair_whose_case_kills_its_worker_is_run_again_with_the_killer_recorded(
    client: Any, tmp_path: Path
) -> None:
    """A sweep runs each pair as one Dask task: a case that kills the worker made Dask give up on
    the whole pair. The pair now runs again from the driver with its cases on the cluster, so the
    killer is split out and recorded, every other case scored; the other pair is untouched."""
    log = tmp_path / "log.tsv"
    board = heta_nb.sweep(
        {"toy": toy_benchmark(12, n_docs=12)},
        kbs={"killer kb": KillerKB(log, {5}), "fine kb": exact_kb},
        store=tmp_path / "store",
        executor=client,
        progress=False,
        query_modes=["good", "poor"],
        concurrency=1,
    )
    store = heta_nb.ReportStore(tmp_path / "store")
    listing = store.list()
    assert len(listing) == 2, listing
    reports = {
        row.knowledge_base_name: store.load(row.knowledge_base_name, row.report_id) for row in listing.itertuples()
    }
    _check(reports["killer kb"], 12, {5})
    assert reports["fine kb"].error_count == 0 and len(reports["fine kb"].case_results) == 24
    assert set(board.recipes) == {"killer kb", "fine kb"}  # both on the board
