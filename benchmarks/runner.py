"""heta_nb's runner side by side with heta-framework's, in one process (needs [heta]).

1. Per-case overhead with a no-op KB returning 10 results and Heta's three
   evaluators (EvidenceRecallAtK, AnswerContains, AnswerExactMatch), concurrency 8,
   heta_nb with events and checkpoint on (target: heta_nb <= Heta).
2. The same with heta_nb's own evaluators for the same metrics (target: >= 2x
   Heta's throughput). Each heta_nb setup also runs in memory (no store, so no
   checkpoint writes; results are still encoded once, which is how they are
   checked to be JSON), to show what the checkpoint costs.

   A last line compares the two runners alone (no evaluators), which is the part
   heta_nb adds or saves; two more time the same work with no runner at all
   (:func:`time_floor`), with the results dropped once written and kept: what is
   left for a runner's own features once a loop keeps what a report needs.

   Two columns: "loop" is the case loop alone (heta_nb: from RunStarted to the last
   CasesFinished event, with every checkpoint line written and every event reduced),
   which is what Heta's ``_evaluate_cases`` is; "run" is the whole call, which for
   heta_nb includes loading the benchmark and saving the final report (fsync'd),
   compared with Heta's loop plus the to_dict/json.dumps its runner does before it
   persists.
2b. Targets 1 and 2 again at 20,000 cases (``--large``), where the collector's full
   collections over kept results dominate Heta's loop and any loop that keeps its
   results in the collector's way (heta_nb's does not: ``heta_nb.runner.collector``).
3. An async KB with 20 ms latency, 2,000 cases, concurrency 64 (target: the case
   loop <= 1.05x a pool of bare ``asyncio.sleep(0.02)`` tasks in the same run).
4. Peak memory per case for 2,000 vs 20,000 cases (flat: no coroutine per case
   created up front).

    python benchmarks/runner.py [--cases 4000] [--large 20000] [--repeat 3] [--small]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import tempfile
import time
import tracemalloc
from typing import Any

import orjson
from _targets import Targets
from heta_framework.evaluation import (
    AnswerContains,
    AnswerExactMatch,
    BenchmarkRunConfig,
    BenchmarkRunUnit,
    EvidenceRecallAtK,
)
from heta_framework.evaluation.runner import _evaluate_cases
from heta_framework.kb.search import QueryResponse, QueryResult

from heta_nb.benchmark import Benchmark, BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.evaluators import get
from heta_nb.runner import Engine, RunConfig, RunState, reduce
from heta_nb.runner.kb import normalize_response_data

MODE = "full_text_search"
BUILTIN = ("evidence_recall@5", "answer_contains", "answer_exact_match")
"""heta_nb's evaluators of the same three metrics."""


def make_response() -> QueryResponse:
    results = tuple(
        QueryResult(
            id=f"chunk_{i}",
            text=f"Chunk {i} of document d{i} mentions the harbour.",
            score=10.0 - i,
            source={
                "document_id": f"doc_{i:016x}",
                "object_key": f"raw/benchmarks/b/test/d{i}/d{i}.txt",
                "chunk_ids": [f"chunk_{i}"],
                "chunk_index": 0,
            },
            metadata={"ranking": "bm25", "retrieval_method": MODE, "index": "chunk_full_text"},
        )
        for i in range(10)
    )
    return QueryResponse(mode=MODE, results=results, answer=None)


class NoOpKB:
    """Answers instantly with the same 10 results (optionally after a sleep)."""

    name = "bench kb"

    def __init__(self, latency: float = 0.0) -> None:
        self.response = make_response()
        self.latency = latency

    async def query(
        self, text: str, *, mode: str, top_k: int = 10, options: Any = None, trace: bool = False, filters: Any = None
    ) -> QueryResponse:
        if self.latency:
            await asyncio.sleep(self.latency)
        return self.response


def make_benchmark(n: int) -> Benchmark:
    cases = [
        BenchmarkCase(
            case_id=f"q{i:06d}",
            query=f"Where is the harbour of document {i % 10}?",
            expected=BenchmarkExpected(
                answers=("harbour",),
                evidence=(
                    BenchmarkEvidence(
                        reference_id=f"d{i % 10}", locator={"source_key_prefix": f"raw/benchmarks/b/test/d{i % 10}/"}
                    ),
                ),
            ),
        )
        for i in range(n)
    ]
    return Benchmark({"name": "b", "version": "1", "split": "test", "task_type": "qa"}, (), cases)


def heta_evaluators() -> tuple[Any, ...]:
    return (EvidenceRecallAtK(k=5), AnswerContains(), AnswerExactMatch())


def time_heta(
    benchmark: Benchmark, kb: NoOpKB, concurrency: int, *, serialize: bool = False, evaluators: Any = None
) -> float:
    """Heta's per-unit case loop; with ``serialize`` also what its runner does at the end
    for a persisted report (``to_dict()`` of every result and one ``json.dumps``)."""
    config = BenchmarkRunConfig(max_concurrent_queries=concurrency, top_k=10)
    unit = BenchmarkRunUnit(unit_id="corpus")
    start = time.perf_counter()
    results = asyncio.run(
        _evaluate_cases(
            cases=benchmark.cases,
            knowledge_base=kb,
            query_modes=(MODE,),
            evaluators=heta_evaluators() if evaluators is None else evaluators,
            config=config,
            unit=unit,
        )
    )
    if serialize:
        json.dumps([r.to_dict() for r in results], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return time.perf_counter() - start


def time_heta_nb(
    benchmark: Benchmark, kb: NoOpKB, concurrency: int, evaluators: Any, *, store: bool
) -> tuple[float, float]:
    """``(run, loop)`` seconds: the whole call, and the case loop alone."""
    state = [RunState()]
    marks: dict[str, float] = {}

    def on_event(event: Any) -> None:  # what a display does with every event
        state[0] = reduce(state[0], event)
        if event.kind == "run_started":
            marks["started"] = time.perf_counter()
        elif event.kind == "cases_finished":
            marks["last_case"] = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(
            benchmark=benchmark,
            kb=kb,
            query_modes=(MODE,),
            evaluators=evaluators,
            concurrency=concurrency,
            store=tmp if store else None,
            lint=False,
            report_id="bench",
        )
        start = time.perf_counter()
        engine = Engine(config, emit=on_event)
        report = asyncio.run(engine.run())
        elapsed = time.perf_counter() - start
    assert len(report.case_results) == len(benchmark.cases) and state[0].done == len(benchmark.cases)
    return elapsed, marks["last_case"] - marks["started"]


def time_floor(benchmark: Benchmark, kb: NoOpKB, concurrency: int, *, keep: bool, native: bool = False) -> float:
    """The work every runner must do here, with none of heta_nb's runner around it.

    The same pool of workers queries the KB, turns the response into its JSON
    object, scores it with Heta's three evaluators (``native``: heta_nb's, on the
    response's JSON object), and encodes and writes each 32 cases with orjson and one
    ``writev``: no events, ordering, retries, timeouts, error capture or JSON-safety
    fallback. ``keep``: the results stay in memory (their dicts and their bytes), as a
    runner that returns a report must keep them.
    """
    evaluators = heta_evaluators()
    builtin = [get(name) for name in BUILTIN]
    kept: list[Any] = []

    async def loop(fd: int) -> None:
        todo = iter(benchmark.cases)
        batch: list[dict[str, Any]] = []

        async def worker() -> None:
            for case in todo:
                started = time.perf_counter()
                raw = await kb.query(case.query, mode=MODE, top_k=10)
                if native:
                    response = normalize_response_data(raw, MODE, safe=False)
                    scores = [e.score_json(case, response) for e in builtin]
                else:
                    response = {"mode": raw.mode, "results": [r.__dict__ for r in raw.results], "answer": raw.answer}
                    scores = [(await e.evaluate(case=case, response=raw)).__dict__ for e in evaluators]
                batch.append(
                    {
                        "case_id": case.case_id,
                        "query": case.query,
                        "scores": scores,
                        "response": response,
                        "latency_ms": time.perf_counter() - started,
                    }
                )
                if len(batch) >= 32:
                    lines = [orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE) for data in batch]
                    os.writev(fd, lines)
                    if keep:
                        kept.append((list(batch), lines))
                    batch.clear()

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    with tempfile.TemporaryDirectory() as tmp:
        fd = os.open(os.path.join(tmp, "lines.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            start = time.perf_counter()
            asyncio.run(loop(fd))
            return time.perf_counter() - start
        finally:
            os.close(fd)


def sleep_floor(n: int, concurrency: int, latency: float) -> float:
    """The same pool doing nothing but ``asyncio.sleep(latency)``: what the timers allow."""

    async def pool() -> None:
        todo = iter(range(n))

        async def worker() -> None:
            for _ in todo:
                await asyncio.sleep(latency)

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    start = time.perf_counter()
    asyncio.run(pool())
    return time.perf_counter() - start


def best(repeat: int, func: Any) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        times.append(func())
    return min(times)


def peak_per_case(func: Any, n: int) -> float:
    gc.collect()
    tracemalloc.start()
    func()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / n


def at_scale(n: int, repeat: int, targets: Targets) -> None:
    """Part 2b: the two targets again on a run of ``n`` cases, where the garbage collector's
    full collections over the kept results dominate any loop that keeps them in its way."""
    bench = make_benchmark(n)
    kb = NoOpKB()
    runs: dict[str, Any] = {
        "Heta _evaluate_cases": lambda: time_heta(bench, kb, 8),
        "heta_nb, Heta's evaluators, events + checkpoint": lambda: time_heta_nb(
            bench, kb, 8, heta_evaluators(), store=True
        )[1],
        "heta_nb, heta_nb's evaluators, events, in memory": lambda: time_heta_nb(
            bench, kb, 8, list(BUILTIN), store=False
        )[1],
        "no runner, Heta's evaluators, results kept": lambda: time_floor(bench, kb, 8, keep=True),
        "no runner, heta_nb's evaluators, results kept": lambda: time_floor(bench, kb, 8, keep=True, native=True),
    }
    best_of: dict[str, float] = {name: float("inf") for name in runs}
    for _ in range(repeat):
        for name, func in runs.items():
            gc.collect()
            best_of[name] = min(best_of[name], func())
    heta = best_of["Heta _evaluate_cases"]
    print(f"2b. the same at scale: {n:,} cases (best of {repeat}, interleaved)")
    for name, seconds in best_of.items():
        print(f"   {name:52} {seconds / n * 1e6:>7.1f} us/case {seconds / heta:>6.2f}x Heta's time")
    print("   (the floors and Heta keep their results where every full collection traverses them again;")
    print("    heta_nb's runner moves what it keeps out of the collector's way: heta_nb.runner.collector)")
    targets.check(
        f"runner, Heta's 3 evaluators, checkpoint on / Heta's bare loop, {n:,} cases",
        best_of["heta_nb, Heta's evaluators, events + checkpoint"] / heta,
        0.85,
    )
    targets.check(
        f"runner, heta_nb's evaluators, in memory / Heta's bare loop, {n:,} cases",
        best_of["heta_nb, heta_nb's evaluators, events, in memory"] / heta,
        0.5,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large", type=int, default=20_000, help="cases of the run at scale (part 2b)")
    parser.add_argument("--small", action="store_true", help="parts 3 and 4 at 1/10 of their sizes (a smoke run)")
    args = parser.parse_args()
    scale = 10 if args.small else 1
    n = args.cases
    bench = make_benchmark(n)
    kb = NoOpKB()
    builtin = ["evidence_recall@5", "answer_contains", "answer_exact_match"]
    rows = {
        "Heta _evaluate_cases (no events, no checkpoint)": lambda: (time_heta(bench, kb, 8, serialize=True), None),
        "heta_nb, Heta's evaluators, events + checkpoint": lambda: time_heta_nb(
            bench, kb, 8, heta_evaluators(), store=True
        ),
        "heta_nb, Heta's evaluators, events, in memory": lambda: time_heta_nb(
            bench, kb, 8, heta_evaluators(), store=False
        ),
        "heta_nb, heta_nb's evaluators, events + checkpoint": lambda: time_heta_nb(bench, kb, 8, builtin, store=True),
        "heta_nb, heta_nb's evaluators, events, in memory": lambda: time_heta_nb(bench, kb, 8, builtin, store=False),
    }
    runs: dict[str, list[float]] = {name: [] for name in rows}
    loops: dict[str, list[float]] = {name: [] for name in rows}
    heta_loops: list[float] = []
    bare_heta: list[float] = []
    bare_ours: list[float] = []
    floors: dict[bool, list[float]] = {False: [], True: []}
    native_floor: list[float] = []
    for _ in range(args.repeat):  # interleaved, so load changes hit every row alike
        gc.collect()
        heta_loops.append(time_heta(bench, kb, 8))
        for name, func in rows.items():
            gc.collect()
            run, loop = func()
            runs[name].append(run)
            if loop is not None:
                loops[name].append(loop)
        gc.collect()
        bare_heta.append(time_heta(bench, kb, 8, evaluators=()))
        gc.collect()
        bare_ours.append(time_heta_nb(bench, kb, 8, [], store=True)[1])
        for keep in (False, True):
            gc.collect()
            floors[keep].append(time_floor(bench, kb, 8, keep=keep))
        gc.collect()
        native_floor.append(time_floor(bench, kb, 8, keep=True, native=True))
    heta_loop = min(heta_loops)
    heta_run = min(runs["Heta _evaluate_cases (no events, no checkpoint)"])
    print(f"1-2. no-op KB, 10 results, 3 evaluators, concurrency 8, {n:,} cases (best of {args.repeat}, interleaved)")
    print(f"   {'':52} {'loop':>7} {'vs Heta':>8}   {'run':>7} {'vs Heta':>8}   (us/case)")
    print(
        f"   {'Heta (loop: _evaluate_cases; run: + to_dict/json.dumps)':52} "
        f"{heta_loop / n * 1e6:>7.1f} {1:>7.2f}x   {heta_run / n * 1e6:>7.1f} {1:>7.2f}x"
    )
    for name in list(rows)[1:]:
        loop = min(loops[name])
        run = min(runs[name])
        print(
            f"   {name:52} {loop / n * 1e6:>7.1f} {heta_loop / loop:>7.2f}x   "
            f"{run / n * 1e6:>7.1f} {heta_run / run:>7.2f}x"
        )
    print("   (vs Heta: Heta's time / heta_nb's time, so above 1 means heta_nb is faster)")
    theirs, ours_bare = min(bare_heta) / n * 1e6, min(bare_ours) / n * 1e6
    print(
        f"   the runners alone, no evaluators: Heta {theirs:.1f}, heta_nb {ours_bare:.1f} us/case "
        f"(events + checkpoint on; {theirs / ours_bare:.2f}x)"
    )
    print("   no runner at all, Heta's evaluators (query, response JSON, score, orjson, writev per 32 cases):")
    for keep, label in ((False, "results dropped once written"), (True, "results kept, dicts and bytes")):
        floor_loop = min(floors[keep])
        print(f"     {label:48} {floor_loop / n * 1e6:>7.1f} {heta_loop / floor_loop:>7.2f}x")
    print("   no runner at all, heta_nb's evaluators (query, response JSON, score, orjson, writev), results kept:")
    print(f"     {'':48} {min(native_floor) / n * 1e6:>7.1f} {heta_loop / min(native_floor):>7.2f}x")
    targets = Targets(__file__)
    checkpointed = min(loops["heta_nb, Heta's evaluators, events + checkpoint"])
    targets.check("runner, Heta's 3 evaluators, checkpoint on / Heta's bare loop", checkpointed / heta_loop, 0.85)
    targets.check(
        "  floor: no runner, Heta's evaluators, results kept / Heta's bare loop", min(floors[True]) / heta_loop, 0.85
    )
    in_memory = min(loops["heta_nb, heta_nb's evaluators, events, in memory"])
    targets.check("runner, heta_nb's evaluators, in memory / Heta's bare loop", in_memory / heta_loop, 0.5)
    targets.check(
        "  floor: no runner, heta_nb's evaluators, results kept / Heta's bare loop", min(native_floor) / heta_loop, 0.5
    )

    at_scale(args.large, args.repeat, targets)

    slow = NoOpKB(latency=0.020)
    slow_cases = 2000 // scale
    bench2k = make_benchmark(slow_cases)
    ideal = slow_cases * 0.020 / 64
    heta_wall = statistics.median(time_heta(bench2k, slow, 64) for _ in range(args.repeat))
    floor = statistics.median(sleep_floor(slow_cases, 64, 0.020) for _ in range(args.repeat))
    ours = [
        time_heta_nb(bench2k, slow, 64, ["evidence_recall@5", "answer_contains", "answer_exact_match"], store=True)
        for _ in range(args.repeat)
    ]
    ours_wall = statistics.median(run for run, _ in ours)
    ours_loop = statistics.median(loop for _, loop in ours)
    print(
        f"3. async KB, 20 ms latency, {slow_cases:,} cases, concurrency 64 "
        f"(ideal {ideal:.3f} s, median of {args.repeat})"
    )
    print(f"   asyncio.sleep alone, same pool  {floor:.3f} s = {floor / ideal:.2f}x ideal (the timer floor here)")
    print(f"   Heta _evaluate_cases            {heta_wall:.3f} s = {heta_wall / ideal:.2f}x ideal")
    print(f"   heta_nb case loop               {ours_loop:.3f} s = {ours_loop / ideal:.2f}x ideal")
    print(
        f"   heta_nb whole run               {ours_wall:.3f} s = {ours_wall / ideal:.2f}x ideal "
        "(checkpoint and events on, report saved)"
    )
    targets.check(
        f"20 ms KB, {slow_cases:,} cases, c=64: heta_nb case loop / bare asyncio.sleep pool", ours_loop / floor, 1.05
    )

    print("4. peak traced memory per case (no-op KB, Heta's evaluators, no store)")
    for size in (2000 // scale, 20000 // scale):
        big = make_benchmark(size)
        theirs = peak_per_case(lambda big=big: time_heta(big, kb, 8), size)
        ours = peak_per_case(lambda big=big: time_heta_nb(big, kb, 8, heta_evaluators(), store=False)[0], size)
        print(f"   {size:>6,} cases: Heta {theirs / 1024:6.1f} KiB/case, heta_nb {ours / 1024:6.1f} KiB/case")
    targets.report()


if __name__ == "__main__":
    main()
