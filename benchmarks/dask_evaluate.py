"""One evaluation's cases on 2 Dask worker processes against one local process (issue 21, ``executor=``).

Usage::

    python benchmarks/dask_evaluate.py [--copies 1] [--case-copies 4] [--cases 10000] [--repeat 5]

Two figures, each measured side by side (:func:`interleaved`: the runs take turns) in this
one run, against a ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``
started before the clock (its start-up is printed apart) by ``local_cluster``, as
``executor="dask"`` starts one (Dask's statistical profiler off, ``QUIET_WORKERS``):

* a CPU-bound KB: the demo's real Heta full-text (BM25) KB over the demo's 80 documents and
  ``--copies`` edited copies of each, so that one query scores enough chunks in Python to
  cost >= 5 ms (measured and printed), and the demo's cases ``--case-copies`` times (new
  case ids: a run of several hundred cases, the size a user moves to Dask for, so the run's
  fixed costs weigh as they would there). The same built KB object is queried locally and
  on Dask (where each worker unpickles it once: that cost is printed too). Target: Dask
  >= 1.6x faster, and the two reports identical (timings aside). Beside it, the machine's
  own ceiling: the same queries, bare (no heta_nb, no Dask), in one process and split over
  two ``multiprocessing`` processes;
* the driver's overhead per case: a KB that does nothing, ``--cases`` cases. Target: Dask
  <= 3x the local time per case.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import demo_documents  # noqa: E402
from _targets import Targets, interleaved, load_average  # noqa: E402

import heta_nb  # noqa: E402
from heta_nb import demo  # noqa: E402
from heta_nb.benchmark import Benchmark, BenchmarkCase, BenchmarkDocument, BenchmarkExpected  # noqa: E402
from heta_nb.demo.heta_recipes import demo_recipe  # noqa: E402

SPEEDUP = 1.6
OVERHEAD = 3.0


def corpus_benchmark(copies: int, case_copies: int = 1) -> Benchmark:
    """The demo's cases (``case_copies`` times) over its 80 documents and ``copies`` edited copies of each."""
    whole = demo.load_benchmark()
    documents = demo_documents(copies)
    cases = [
        dataclasses.replace(case, case_id=f"{case.case_id}~{n}" if n else case.case_id)
        for n in range(case_copies)
        for case in whole.cases
    ]
    return Benchmark(whole.manifest, documents, cases, evaluators=whole.default_evaluators)


def built_kb(bench: Benchmark, root: Path) -> Any:
    """The benchmark's KB, built by a real Heta recipe (chunks of 200 characters) and loaded."""
    from heta_framework.kb import KnowledgeBase

    recipe = demo_recipe(root, 200, 25)
    heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="corpus", report_id="build", progress=False, lint=False)
    return asyncio.run(KnowledgeBase.load(recipe=recipe, name="corpus"))


def query_ms(kb: Any, bench: Benchmark, n: int = 20) -> float:
    """Milliseconds one full-text query of ``kb`` takes (the median of ``n`` of the benchmark's queries)."""
    times = []
    for case in bench.cases[:n]:
        started = time.perf_counter()
        asyncio.run(kb.query(case.query, mode="full_text_search", top_k=10))
        times.append((time.perf_counter() - started) * 1000)
    return sorted(times)[len(times) // 2]


def noop_benchmark(n: int) -> Benchmark:
    """``n`` cases over one document."""
    document = BenchmarkDocument(document_id="d0", name="d0.txt", media_type="text/plain", data=b"nothing")
    return Benchmark(
        {"name": "noop", "version": "1", "split": "test", "task_type": "qa"},
        [document],
        [BenchmarkCase(case_id=f"c{i:05d}", query=f"question {i}?", expected=BenchmarkExpected()) for i in range(n)],
        evaluators=("answer_contains",),
    )


def noop_kb(query: str) -> dict[str, Any]:
    return {"mode": "full_text_search", "results": [], "answer": None}


def comparable(report: Any) -> list[dict[str, Any]]:
    """The case results without their timings."""
    out = []
    for raw in report.raw["case_results"]:
        result = {k: v for k, v in raw.items() if k != "latency_ms"}
        result["metadata"] = {
            **raw["metadata"],
            "heta_nb": {k: v for k, v in raw["metadata"]["heta_nb"].items() if k != "query_ms"},
        }
        out.append(result)
    return out


_BARE_KB: Any = None


def _bare_open(blob: bytes) -> None:
    global _BARE_KB  # noqa: PLW0603 - one KB per pool process
    _BARE_KB = pickle.loads(blob)  # noqa: S301 - made by this script


def _bare_queries(queries: list[str]) -> None:
    async def run() -> None:
        for query in queries:
            await _BARE_KB.query(query, mode="full_text_search", top_k=10)

    asyncio.run(run())


def bare_ceiling(blob: bytes, queries: list[str], repeat: int) -> tuple[float, float]:
    """Median seconds of the bare queries in one process, and split over two processes at once."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(2, initializer=_bare_open, initargs=(blob,)) as pool:
        pool.map(_bare_queries, [queries[:2], queries[:2]], chunksize=1)
        times = interleaved(
            repeat,
            {
                "one": lambda: pool.apply(_bare_queries, (queries,)),
                "two": lambda: pool.map(_bare_queries, [queries[0::2], queries[1::2]], chunksize=1),
            },
        )
    return times["one"], times["two"]


def unpickle_ms(blob: bytes) -> float:
    """On a worker: milliseconds to unpickle the KB (what each worker does once per run unit)."""
    started = time.perf_counter()
    pickle.loads(blob)  # noqa: S301 - made by this script
    return (time.perf_counter() - started) * 1000


def cpu_line(client: Any, runs: dict[str, Any]) -> str:
    """CPU seconds one more run of each takes: in this process, and on the workers (other load aside)."""
    started = time.process_time()
    runs["local"]()
    local = time.process_time() - started
    before = client.run(time.process_time)
    started = time.process_time()
    runs["dask"]()
    driver = time.process_time() - started
    after = client.run(time.process_time)
    workers = sum(after[w] - before[w] for w in after if w in before)
    return (
        f"CPU seconds of one run: local {local:.2f}; Dask {driver + workers:.2f} "
        f"(driver {driver:.2f}, workers {workers:.2f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=1, help="edited copies of each demo document (default 1)")
    parser.add_argument("--case-copies", type=int, default=4, help="times the demo's cases are run (default 4)")
    parser.add_argument("--cases", type=int, default=10000, help="cases of the no-op run (default 10000)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import cloudpickle
    from distributed import Client

    from heta_nb.runner.distributed import local_cluster

    targets = Targets(__file__)
    with tempfile.TemporaryDirectory() as tmp:
        bench = corpus_benchmark(args.copies, args.case_copies)
        kb = built_kb(bench, Path(tmp))
        per_query = query_ms(kb, bench)
        print(f"corpus: {len(bench.documents)} documents, {len(bench.cases)} cases; one query: {per_query:.1f} ms")
        started = time.perf_counter()
        cluster = local_cluster(2)  # (the cluster executor="dask" starts, of 2 workers)
        client = Client(cluster)
        print(f"LocalCluster of 2 worker processes: started in {time.perf_counter() - started:.1f} s (not timed)")
        try:
            blob = cloudpickle.dumps(kb)
            first = client.run(unpickle_ms, blob)  # (on every worker: also imports Heta there, before the clock)
            again = client.run(unpickle_ms, blob)
            print(
                f"KB sent to each worker by cloudpickle: {len(blob) / 1e6:.1f} MB; a worker unpickles it (once per "
                f"run unit) in {max(again.values()):.0f} ms, the first time {max(first.values()):.0f} ms "
                "(importing Heta)"
            )
            settings: dict[str, Any] = {
                "kb": kb,
                "knowledge_base_name": "corpus",
                "store": None,
                "progress": False,
                "lint": False,
                "report_id": "bench",
            }
            reports: dict[str, Any] = {}

            def run(name: str, **extra: Any) -> Any:
                reports[name] = heta_nb.evaluate(bench, **settings, **extra)
                return reports[name]

            runs = {"local": lambda: run("local"), "dask": lambda: run("dask", executor=client)}
            times = interleaved(args.repeat, runs)
            same = comparable(reports["local"]) == comparable(reports["dask"]) and dict(
                reports["local"].score_summary
            ) == dict(reports["dask"].score_summary)
            print(
                f"CPU-bound KB: local {times['local']:.2f} s, Dask {times['dask']:.2f} s "
                f"(median of {args.repeat}); reports identical: {same}; 1-minute load average {load_average()} "
                f"on {os.cpu_count()} CPUs"
            )
            print(cpu_line(client, runs))
            speedup = times["local"] / times["dask"]
            one, two = bare_ceiling(blob, [case.query for case in bench.cases], args.repeat)
            print(
                f"speed-up: {speedup:.2f}x; the machine's ceiling, the bare queries on 2 processes / 1: "
                f"{one / two:.2f}x ({one:.2f} s / {two:.2f} s)"
            )
            targets.check(
                f"CPU-bound KB ({per_query:.0f} ms/query): time on 2 Dask workers / 1 process (>= {SPEEDUP}x faster)",
                times["dask"] / times["local"],
                round(1 / SPEEDUP, 3),
            )
            if not same:
                targets.check("CPU-bound KB: Dask report identical to the local one (1 = differs)", 1, 0)

            noop = noop_benchmark(args.cases)
            plain: dict[str, Any] = {"kb": noop_kb, "store": None, "progress": False, "lint": False, "report_id": "n"}
            runs = {
                "local": lambda: heta_nb.evaluate(noop, **plain),
                "dask": lambda: heta_nb.evaluate(noop, executor=client, **plain),
            }
            times = interleaved(args.repeat, runs)
            print(cpu_line(client, runs))
            local_us, dask_us = (times[k] / args.cases * 1e6 for k in ("local", "dask"))
            print(
                f"no-op KB, {args.cases} cases: local {local_us:.0f} us/case, Dask {dask_us:.0f} us/case; "
                f"load average {load_average()}"
            )
            targets.check("driver overhead per case, no-op KB: Dask / local", dask_us / local_us, OVERHEAD)
        finally:
            client.close()
            cluster.close()
    targets.report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
