"""A sweep of 4 real Heta recipes × 2 benchmarks: two workers against one pair after another (issue 21).

Usage::

    python benchmarks/sweep.py [--copies 1] [--workers 2] [--repeat 3] [--no-dask]

The recipes are the demo's full-text (BM25) recipe at four chunk sizes; the benchmarks are
the demo's cases split by hops, over a corpus of the demo's 80 documents plus ``--copies``
edited copies of each (so each query scores more chunks in Python, as a real corpus would).
Every configuration runs the same 8 pairs from scratch (fresh store, fresh KBs), side by
side in this one process: ``serial`` (one after another), ``threads`` (shown to be honest:
the KBs are CPU-bound Python, so threads take turns on the interpreter lock), a process pool
of ``--workers``, and Dask (a ``LocalCluster`` of ``--workers`` processes, started before the
clock and timed apart, as is the fork server the pool forks its workers from: both are paid
once per session). Each configuration runs once a round, ``--repeat`` rounds (the median is
shown). The boards must be identical. Target: 2 workers >= 1.6x faster.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _data import demo_documents
from _targets import load_average

import heta_nb
from heta_nb import demo
from heta_nb.benchmark import Benchmark
from heta_nb.demo.heta_recipes import demo_query_engines, demo_recipe

TARGET = 1.6
CHUNKS = (120, 200, 400, 700)
SETTINGS = {
    "query_modes": ["full_text_search", "extractive_answer"],
    "evaluators": ["recall@5", "ndcg@5", "answer_f1"],
    "top_k": 5,
}


def benchmarks(copies: int) -> dict[str, Benchmark]:
    """The demo's cases split by hops, over the demo's documents and ``copies`` edited copies of each."""
    whole = demo.load_benchmark()
    documents = demo_documents(copies)

    def part(version: str, keep: Any) -> Benchmark:
        cases = [c for c in whole.cases if keep(int(c.labels.get("hops", 0)))]
        return Benchmark(whole.manifest.replace(version=version), documents, cases, evaluators=whole.default_evaluators)

    return {"single-hop": part("1-single", lambda h: h <= 1), "multi-hop": part("1-multi", lambda h: h >= 2)}


def recipes() -> dict[str, Any]:
    return {f"chunks-{size}": functools.partial(demo_recipe, chunk_size=size, overlap=size // 8) for size in CHUNKS}


class CpuMeter:
    """CPU seconds of this process and of every process it starts (pool workers under the fork server, Dask
    nannies and workers), sampled every 0.2 s (psutil; a process's last 0.2 s before it exits can be missed)."""

    def __init__(self) -> None:
        import psutil

        self.me = psutil.Process()
        self.seen: dict[int, float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.stop.wait(0.2):
            self._read()

    def _read(self) -> None:
        for child in self.me.children(recursive=True):
            try:
                times = child.cpu_times()
            except Exception:  # noqa: BLE001 - it exited meanwhile
                continue
            self.seen[child.pid] = times.user + times.system

    def __enter__(self) -> CpuMeter:
        self._read()
        self.before = dict(self.seen)
        self.own = time.process_time()
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._read()
        self.stop.set()
        self.thread.join()
        self.seconds = (
            time.process_time() - self.own + sum(v - self.before.get(pid, 0.0) for pid, v in self.seen.items())
        )


def same_board(board: Any, reference: Any) -> bool:
    """The two boards' rows are equal (a NaN, say a p-value of a difference that is 0 everywhere, equals NaN)."""
    return json.dumps(board.rows(), sort_keys=True) == json.dumps(reference.rows(), sort_keys=True)


def timed(executor: Any, data: dict[str, Benchmark], workers: int) -> tuple[float, float, Any]:
    """Wall seconds, CPU seconds and the board of one sweep from scratch (fresh store and KB folders)."""
    root = Path(tempfile.mkdtemp(prefix="heta_nb-bench-sweep-"))
    try:
        with CpuMeter() as cpu:
            started = time.perf_counter()
            board = heta_nb.sweep(
                data, recipes(), store=root / "store", workdir=root / "kbs", executor=executor, max_workers=workers,
                query_engines=demo_query_engines(), progress=False, **SETTINGS,
            )  # fmt: skip
            seconds = time.perf_counter() - started
        return seconds, cpu.seconds, board
    finally:
        shutil.rmtree(root, ignore_errors=True)


def warm_fork_server() -> float:
    """Start the fork server process pools fork their workers from (it imports heta_nb and Heta
    once per Python session; a notebook's first sweep pays it, the next ones do not): seconds."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from heta_nb.sweeps.execute import PRELOAD

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return 0.0
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    started = time.perf_counter()
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        pool.submit(os.getpid).result()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1, help="edited copies of each demo document (default 1)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, every configuration once a round (median)")
    parser.add_argument("--no-dask", action="store_true", help="leave Dask out")
    args = parser.parse_args()
    data = benchmarks(args.copies)
    print(
        f"{len(CHUNKS)} recipes x {len(data)} benchmarks = {len(CHUNKS) * len(data)} pairs; "
        f"{len(next(iter(data.values())).documents)} documents; "
        f"{sum(len(b.cases) for b in data.values()) * len(SETTINGS['query_modes']) * len(CHUNKS)} queries in all; "
        f"median of {args.repeat} rounds"
    )
    print(f"fork server started in {warm_fork_server():.1f} s (once per session, not timed)")
    configurations: list[tuple[str, Any, int, float | None]] = [
        ("serial (one pair after another)", "serial", 1, None),
        (f"{args.workers} threads", "threads", args.workers, None),
        (f"{args.workers} processes", "processes", args.workers, TARGET),
    ]
    client = cluster = None
    if not args.no_dask:
        try:
            from distributed import Client
        except ImportError:
            print("(Dask left out: pip install 'heta-nb[dask]')")
        else:
            from heta_nb.runner.distributed import local_cluster

            started = time.perf_counter()
            cluster = local_cluster(args.workers)  # (the cluster executor="dask" starts)
            client = Client(cluster)
            name = f"Dask LocalCluster, {args.workers} workers (start-up {time.perf_counter() - started:.1f} s apart)"
            configurations.append((name, client, args.workers, TARGET))
    measured: dict[str, list[tuple[float, float, str]]] = {name: [] for name, *_ in configurations}
    reference = None
    try:
        for _ in range(args.repeat):
            for name, executor, workers, _target in configurations:
                seconds, cpu, board = timed(executor, data, workers)
                reference = reference or board
                assert same_board(board, reference), f"{name} gave another board"
                measured[name].append((seconds, cpu, load_average()))
    finally:
        if client is not None:
            client.close()
            cluster.close()
    rows: list[tuple[str, float, float, float | None, str]] = []
    for name, _executor, _workers, target in configurations:
        seconds, cpu, machine_load = sorted(measured[name])[len(measured[name]) // 2]
        rows.append((name, seconds, cpu, target, machine_load))
    serial_s = rows[0][1]
    print(f"{'figure':<58} {'seconds':>8} {'CPU s':>7} {'cores':>6} {'speed-up':>9} {'target':>7}  result  load")
    failed = False
    for name, seconds, cpu, target, machine_load in rows:
        speedup = serial_s / seconds
        verdict = "" if target is None else ("PASS" if speedup >= target else "FAIL")
        failed = failed or verdict == "FAIL"
        shown = f">= {target}x" if target else ""
        print(
            f"{name:<58} {seconds:>8.1f} {cpu:>7.1f} {cpu / seconds:>6.2f} {speedup:>8.2f}x {shown:>7}  "
            f"{verdict:<6}  {machine_load}"
        )
    print(
        f"boards identical in every configuration; {os.cpu_count()} CPUs; cores = CPU s / seconds (the share of "
        "the machine a configuration got, its workers included);\nload = 1-minute load average after it "
        "(other work on the machine slows every figure, parallel ones most)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
