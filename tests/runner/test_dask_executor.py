"""``executor=``: one evaluation's cases on a real ``LocalCluster(processes=True, n_workers=2)``.

The report must be the local run's (``case_results`` and ``score_summary``, timings aside),
with a toy KB and with a real Heta full-text recipe; timeouts and retries keep their meaning;
cancel returns a partial report and cancels the batches; a worker process killed mid-run
loses and duplicates nothing; a driver killed mid-run is resumed from its checkpoint.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import heta_recipe, requires_heta
from runner_support import FlakyError, exact_kb, run_toy, toy_benchmark

import heta_nb
from heta_nb.errors import MissingDependencyError
from heta_nb.runner import RunError

distributed = pytest.importorskip("distributed", reason="needs the [dask] extra")
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module


@pytest.fixture(scope="module")
def client() -> Any:
    """One real cluster of two single-threaded worker processes for the module's tests."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
    )
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()


def comparable(report: Any) -> list[dict[str, Any]]:
    """The case results without what differs between two runs of the same cases (timings)."""
    results = []
    for raw in report.raw["case_results"]:
        result = {k: v for k, v in raw.items() if k != "latency_ms"}
        extra = {k: v for k, v in raw["metadata"]["heta_nb"].items() if k != "query_ms"}
        result["metadata"] = {**raw["metadata"], "heta_nb": extra}
        results.append(result)
    return results


def assert_same(local: Any, remote: Any) -> None:
    assert comparable(remote) == comparable(local)
    assert dict(remote.score_summary) == dict(local.score_summary)
    assert remote.metadata["heta_nb"]["status"] == "complete"


def worker_pids(client: Any) -> dict[str, int]:
    return dict(client.run(os.getpid))


class SleepyKB:
    """A sync KB that takes ``delay`` seconds a query and logs ``pid case mode`` to ``log``."""

    def __init__(self, log: Path, delay: float = 0.05) -> None:
        self.log = str(log)
        self.delay = delay
        self.name = "toy kb"

    def query(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        time.sleep(self.delay)
        with open(self.log, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()}\t{query}\t{mode}\n")
        return exact_kb(query, mode=mode, top_k=top_k)


class SlowOrFlakyKB:
    """Question 3 takes longer than any timeout; every other query fails its first attempt (retryable)."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()

    def query(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        if query.endswith("question 3?"):
            time.sleep(0.6)
        elif (query, mode) not in self.seen:
            self.seen.add((query, mode))
            raise FlakyError("backend busy, try again")
        return exact_kb(query, mode=mode, top_k=top_k)


def test_a_toy_run_on_dask_is_the_local_run_with_the_executor_recorded(client: Any) -> None:
    local = run_toy(benchmark=toy_benchmark(60))
    events: list[Any] = []
    remote = run_toy(benchmark=toy_benchmark(60), executor=client, on_event=events.append)
    assert_same(local, remote)
    assert remote.metadata["heta_nb"]["executor"] == {"kind": "dask", "workers": 2, "threads": 2}
    assert "executor" not in local.metadata["heta_nb"]
    kinds = [e.kind for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    finished = [r for e in events if e.kind == "cases_finished" for r in e.records]
    assert len(finished) == 120 and len({(r[1].case_id, r[1].query_mode) for r in finished}) == 120
    assert kinds.count("cases_finished") > 1  # results stream back batch by batch


def test_timeouts_and_retries_keep_their_meaning(client: Any) -> None:
    settings: dict[str, Any] = {"timeout_s": 0.15, "retries": 1, "backoff_s": 0.0, "concurrency": 4}
    bench = toy_benchmark(12, n_docs=12)  # (every query once: the KB's first attempts are per query)
    local = run_toy(benchmark=bench, kb=SlowOrFlakyKB(), **settings)
    remote = run_toy(benchmark=bench, kb=SlowOrFlakyKB(), executor=client, **settings)
    assert_same(local, remote)
    errors = [r for r in remote.case_results if r.error is not None]
    assert {r.case_id for r in errors} == {"c003"}  # question 3: timed out, twice in each mode
    assert all(r.error.error_type == "TimeoutError" and r.error.metadata["attempts"] == 2 for r in errors)
    retried = [r for r in remote.case_results if r.error is None]
    assert retried and all(r.metadata["heta_nb"]["attempts"] == 2 for r in retried)


BLOCKED = "query did not finish within 0.2 s: the KB blocked the event loop"
MODES = ("good", "poor")


class BlockingKB:
    """An async KB that blocks its event loop (``time.sleep`` in ``async def``) on question 2."""

    async def query(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        if query.endswith("question 2?"):
            time.sleep(0.5)
        return exact_kb(query, mode=mode, top_k=top_k)


def test_a_workers_warnings_reach_the_report_once_as_in_a_local_run(client: Any) -> None:
    settings: dict[str, Any] = {"timeout_s": 0.2, "retries": 0, "kb": BlockingKB()}
    local = run_toy(benchmark=toy_benchmark(12), **settings)
    remote = run_toy(benchmark=toy_benchmark(12), executor=client, **settings)
    assert dict(remote.score_summary) == dict(local.score_summary)

    def errors(report: Any) -> list[tuple[str, str, str, bool]]:
        return [
            (r.case_id, r.query_mode, r.error.error_type, r.error.message.startswith(BLOCKED))
            for r in report.case_results
            if r.error is not None
        ]

    assert errors(remote) == errors(local) == [(c, m, "TimeoutError", True) for c in ("c002", "c008") for m in MODES]
    warned = [w for w in remote.metadata["heta_nb"]["warnings"] if "blocked" in w]
    assert len(warned) == 1 == len([w for w in local.metadata["heta_nb"]["warnings"] if "blocked" in w])


@requires_heta
def test_a_heta_recipe_on_dask_gives_the_local_report(client: Any, tmp_path: Path) -> None:
    bench = heta_nb.demo.load_benchmark()
    settings: dict[str, Any] = {
        "knowledge_base_name": "demo",
        "query_modes": ["extractive_answer"],  # (full-text search, then the demo's answer engine)
        "query_engines": heta_nb.demo.demo_query_engines(),
        "progress": False,
    }
    local = heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path / "local"), report_id="r", **settings)
    remote = heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path / "dask"), report_id="r", executor=client, **settings)
    assert_same(local, remote)
    assert len(remote.case_results) == len(bench.cases)
    assert sum(r.response is not None and r.response.answer is not None for r in remote.case_results) > 10
    assert remote.knowledge_base_manifest["name"] == local.knowledge_base_manifest["name"] == "demo"
    saved = [heta_nb.ReportStore(tmp_path / name / "objects").load("demo", "r") for name in ("local", "dask")]
    assert comparable(saved[1]) == comparable(saved[0])  # what the store holds came from the workers' JSON


def test_cancel_returns_the_partial_report_and_cancels_the_batches(client: Any, tmp_path: Path) -> None:
    run = heta_nb.start(
        toy_benchmark(60),
        kb=SleepyKB(tmp_path / "log.tsv", delay=0.05),
        query_modes=["good", "poor"],
        knowledge_base_name="toy kb",
        store=tmp_path / "store",
        report_id="cancelled",
        concurrency=1,
        executor=client,
        progress=False,
    )
    deadline = time.monotonic() + 60
    while run.state.done < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    run.cancel()
    report = run.result(timeout=30)
    info = report.metadata["heta_nb"]
    assert info["status"] == "cancelled" and 10 <= info["done"] < 120
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    assert len(set(keys)) == len(keys) and keys == sorted(keys)
    time.sleep(1.0)
    left = client.run_on_scheduler(lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks if "heta_nb" in str(k)])
    assert left == []  # no batch queued or kept: the futures were cancelled
    again = heta_nb.evaluate(
        toy_benchmark(60),
        kb=exact_kb,
        query_modes=["good", "poor"],
        knowledge_base_name="toy kb",
        store=tmp_path / "store",
        report_id="cancelled",
        resume=True,
        executor=client,
        progress=False,
    )
    assert again.metadata["heta_nb"]["resumed"] == info["done"]
    assert [(r.case_id, r.query_mode) for r in again.case_results] == sorted(
        (f"c{i:03d}", m) for i in range(60) for m in ("good", "poor")
    )


def test_executor_dask_starts_and_closes_a_cluster_of_its_own(client: Any) -> None:
    before = {p.pid for p in multiprocessing.active_children()}
    report = run_toy(benchmark=toy_benchmark(6), executor="dask")
    executor = report.metadata["heta_nb"]["executor"]
    assert executor["kind"] == "dask" and executor["workers"] >= 1 and executor["threads"] == executor["workers"]
    assert comparable(report) == comparable(run_toy(benchmark=toy_benchmark(6)))
    deadline = time.monotonic() + 10
    while {p.pid for p in multiprocessing.active_children()} - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not {p.pid for p in multiprocessing.active_children()} - before  # its worker processes are gone


def new_children(before: set[int]) -> set[int]:
    return {p.pid for p in multiprocessing.active_children()} - before


def test_a_run_cancelled_while_its_cluster_starts_leaves_no_cluster_running() -> None:
    before = {p.pid for p in multiprocessing.active_children()}

    async def run() -> None:
        task = asyncio.create_task(
            heta_nb.evaluate_async(toy_benchmark(6), kb=exact_kb, executor="dask", store=None, progress=False)
        )
        deadline = time.monotonic() + 30
        while not new_children(before) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        assert new_children(before)  # the cluster is starting
        task.cancel()  # (say, asyncio.wait_for's timeout)
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    deadline = time.monotonic() + 30
    while new_children(before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not new_children(before)  # closed as soon as it was up


def test_evaluate_async_runs_on_an_asynchronous_client() -> None:
    async def run() -> Any:
        async with (
            distributed.LocalCluster(
                n_workers=1, processes=False, asynchronous=True, dashboard_address=":0"
            ) as cluster,
            distributed.Client(cluster, asynchronous=True) as async_client,
        ):
            return await heta_nb.evaluate_async(
                toy_benchmark(4),
                kb=exact_kb,
                executor=async_client,
                query_modes=["good", "poor"],
                knowledge_base_name="toy kb",
                report_id="whole",
                store=None,
                progress=False,
            )

    report = asyncio.run(run())
    assert report.metadata["heta_nb"]["executor"]["kind"] == "dask"
    assert comparable(report) == comparable(run_toy(benchmark=toy_benchmark(4)))


def profiler_setting(query: str) -> str:
    """A KB whose answer is the Dask setting of the worker process that ran the query."""
    import dask

    return str(dask.config.get("distributed.worker.profile.enabled"))


def test_executor_dask_starts_its_workers_with_the_statistical_profiler_off() -> None:
    report = heta_nb.evaluate(toy_benchmark(2), kb=profiler_setting, executor="dask", store=None, progress=False)
    assert report.metadata["heta_nb"]["executor"]["kind"] == "dask"
    assert {r.response.answer for r in report.case_results if r.response} == {"False"}


@pytest.mark.parametrize("pending", [1, 2, 7, 95, 380, 2_000, 10_000, 100_000])
@pytest.mark.parametrize("threads", [1, 2, 8])
def test_batches_cover_every_query_once_largest_first_ending_small(pending: int, threads: int) -> None:
    from heta_nb.runner.distributed import MAX_BATCH, MAX_BATCHES_PER_THREAD, batch_sizes

    sizes = batch_sizes(pending, threads)
    assert sum(sizes) == pending and min(sizes) >= 1 and max(sizes) <= MAX_BATCH
    assert sizes == sorted(sizes, reverse=True)  # (large batches first, small ones last)
    floor = min(MAX_BATCH, math.ceil(pending / (threads * MAX_BATCHES_PER_THREAD)))
    assert all(size >= floor for size in sizes[:-1])  # (a bound on the number of Dask tasks)
    if pending >= 4 * threads and pending <= MAX_BATCH * threads:
        # the last batch is small next to the first: a worker that finishes early idles little
        assert sizes[-1] <= max(1, sizes[0] // 4)


def test_shards_on_dask_merge_into_the_local_report(client: Any) -> None:
    local = run_toy(benchmark=toy_benchmark(60))
    shards = [run_toy(benchmark=toy_benchmark(60), shard=(i, 3), executor=client) for i in range(3)]
    assert all(0 < len(s.case_results) < 120 for s in shards)
    merged = heta_nb.merge_reports(shards)
    assert comparable(merged) == comparable(local)
    assert dict(merged.score_summary) == dict(local.score_summary)
    assert merged.to_dict()["metadata"]["heta_nb"]["executor"] == {"kind": "dask", "workers": 2, "threads": 2}
    mixed = heta_nb.merge_reports([*shards[:2], run_toy(benchmark=toy_benchmark(60), shard=(2, 3))])
    assert comparable(mixed) == comparable(local)
    assert mixed.to_dict()["metadata"]["heta_nb"]["executor"] == {  # (each shard's, traceable)
        "kind": "per shard",
        "shards": [{"kind": "dask", "workers": 2, "threads": 2}] * 2 + [None],
    }


class LockedKB:
    """A KB that cannot be pickled (it holds a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.name = "locked"

    def query(self, query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        return exact_kb(query, mode=mode, top_k=top_k)


def test_a_kb_that_cannot_be_sent_to_the_workers_fails_the_run_saying_why(client: Any) -> None:
    with pytest.raises(heta_nb.runner.RunFailedError, match=r"executor: the knowledge base .* cannot be sent") as info:
        run_toy(kb=LockedKB(), executor=client)
    assert info.value.report.metadata["heta_nb"]["status"] == "failed"  # (the run's partial report)


@requires_heta
def test_a_heta_kb_that_cannot_be_pickled_is_loaded_from_its_recipes_store(client: Any, tmp_path: Path) -> None:
    from heta_nb.runner.config import RunConfig
    from heta_nb.runner.dask_worker import run_batch, unit_payload
    from heta_nb.runner.plan import prepared_evaluators

    bench = heta_nb.demo.load_benchmark()
    recipe = heta_recipe(tmp_path)
    local = heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="demo", evaluators=["recall@5"], progress=False)
    config = RunConfig(benchmark=bench, recipe=recipe, knowledge_base_name="demo")
    payload, travel = unit_payload(config, prepared_evaluators(["recall@5"]), "corpus", "demo", LockedKB())
    assert travel == "loaded"
    batch = cloudpickle.dumps([((0, i, 0), case, "full_text_search") for i, case in enumerate(bench.cases[:10])])
    outcome = client.submit(run_batch, "loaded-kb", payload, batch, pure=False).result()
    assert outcome["open_s"] is not None and outcome["pid"] in worker_pids(client).values()
    got = [data for _, data, _ in outcome["results"]]
    assert [d["scores"] for d in got] == [r.raw["scores"] for r in local.case_results[:10]]
    assert [[x["id"] for x in d["response"]["results"]] for d in got] == [
        [x.id for x in r.response.results] for r in local.case_results[:10]
    ]


@pytest.mark.parametrize("value", ["threads", "Dask", 3, object()])
def test_a_bad_executor_is_refused_naming_the_setting_and_the_extra(value: Any) -> None:
    with pytest.raises(RunError, match=r"executor must be None, \"dask\" or a dask.distributed.Client.*\[dask\]"):
        run_toy(executor=value)


def test_executor_dask_without_distributed_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    with pytest.raises(MissingDependencyError, match=r"executor=\"dask\".*heta-nb\[dask\]"):
        run_toy(executor="dask")


def test_a_killed_worker_loses_and_duplicates_no_case(client: Any, tmp_path: Path) -> None:
    log = tmp_path / "log.tsv"
    run = heta_nb.start(
        toy_benchmark(60),
        kb=SleepyKB(log, delay=0.04),
        query_modes=["good", "poor"],
        knowledge_base_name="toy kb",
        store=tmp_path / "store",
        report_id="killed",
        concurrency=1,
        executor=client,
        progress=False,
    )
    deadline = time.monotonic() + 60
    while run.state.done < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    # a worker answering this run's queries (another may still be busy with an earlier test's thread)
    answering = {int(line.split("\t")[0]) for line in log.read_text(encoding="utf-8").splitlines()}
    victim = min(answering & set(worker_pids(client).values()))
    os.kill(victim, signal.SIGKILL)
    report = run.result(timeout=120)
    assert report.metadata["heta_nb"]["status"] == "complete"
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    assert keys == sorted((f"c{i:03d}", m) for i in range(60) for m in ("good", "poor"))  # each once
    assert all(r.error is None for r in report.case_results)
    lines = [line.split("\t") for line in log.read_text(encoding="utf-8").splitlines()]
    assert str(victim) in {pid for pid, _, _ in lines}  # the killed worker had been answering
    assert len(lines) > len({(q, m) for _, q, m in lines})  # its batch in flight ran again elsewhere
    stored = heta_nb.ReportStore(tmp_path / "store").load("toy kb", "killed")
    assert [(r.case_id, r.query_mode) for r in stored.case_results] == keys


DRIVER = """
import sys, time
sys.path[:0] = {paths!r}
import distributed, heta_nb
from runner_support import toy_benchmark
from test_dask_executor import SleepyKB
with distributed.Client({address!r}) as client:
    heta_nb.evaluate(toy_benchmark(60), kb=SleepyKB({log!r}, delay=0.03), query_modes=["good", "poor"],
                     knowledge_base_name="toy kb", store={store!r}, report_id="driver", concurrency=1,
                     executor=client, progress=False)
"""


def test_resume_after_the_driver_was_killed(client: Any, tmp_path: Path) -> None:
    store = tmp_path / "store"
    here = str(Path(__file__).parent)
    script = DRIVER.format(
        paths=[here, str(Path(here).parent)],
        address=client.scheduler.address,
        log=str(tmp_path / "log.tsv"),
        store=str(store),
    )
    child = subprocess.Popen([sys.executable, "-c", script])
    checkpoints: list[Path] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and child.poll() is None:
        checkpoints = list(store.glob("**/checkpoint.jsonl"))
        if checkpoints and len(checkpoints[0].read_bytes().splitlines()) > 20:
            break
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert checkpoints, "the driver wrote no checkpoint"
    written = len(checkpoints[0].read_bytes().splitlines()) - 1  # (its first line is the header)
    report = heta_nb.evaluate(
        toy_benchmark(60),
        kb=exact_kb,
        query_modes=["good", "poor"],
        knowledge_base_name="toy kb",
        store=store,
        report_id="driver",
        resume=True,
        executor=client,
        progress=False,
    )
    info = report.metadata["heta_nb"]
    assert info["status"] == "complete" and info["resumed"] >= min(written, 20)
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    assert keys == sorted((f"c{i:03d}", m) for i in range(60) for m in ("good", "poor"))
    assert info["executor"]["kind"] == "dask"
