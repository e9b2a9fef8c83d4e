"""LLM judges: a judged run against its model calls alone, and a cached re-run against no judges.

1. A model that takes 200 ms a call, 32 calls at once (``judge_limits`` concurrency 32):
   a judged run of ``--cases`` cases (``AnswerRelevance``, one call a case, no cache)
   against a bare asyncio pool making the same calls with the same prompts (``gather``
   over one coroutine a call, each ``async with sem: await model(prompt)``, a semaphore
   of 32). Ideal: cases / 32 x 0.2 s. Target: <= 1.05x the pool. The first judged run in
   a process is timed apart (its one-time setup is printed, not in the figure).
2. A fully cached re-run of ``--cached`` judged cases: a first run with an instant model
   fills a ``JudgeCache`` folder, then the re-run (same model, ``judge_cache=`` that folder)
   answers every call from it, against the same run with no judges (``answer_f1``, which
   the judged run has too). Target: <= 1.5x. The same with an async KB is printed beside it.

Every run is ``heta_nb.evaluate`` with a fast KB (an answer and one result), no store,
concurrency 8; medians of ``--repeat`` interleaved runs (the runs take turns), after one
run of each that is not timed.

    python benchmarks/judges.py [--cases 640] [--cached 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
from _targets import Targets, interleaved, load_average

import heta_nb
from heta_nb.benchmark import Benchmark
from heta_nb.llm_judges import AnswerRelevance, JudgeLimits, JudgeModel
from heta_nb.llm_judges.prompts import material_prompt

LATENCY = 0.2
"""Seconds one call of the slow model takes."""
CALLS = 32
"""Model calls at once (``judge_limits`` concurrency, and the bare pool's semaphore)."""
VERDICT = '{"verdict": "relevant", "reason": "ok"}'
"""``answer_relevance``'s answer."""
SLOW_TARGET = 1.05
CACHED_TARGET = 1.5


def make_benchmark(n: int) -> Benchmark:
    rows = [
        {"case_id": f"q{i:06d}", "query": f"Where is the harbour of town {i}?", "answers": ["north of the bridge"]}
        for i in range(n)
    ]
    return Benchmark.from_frame(
        pd.DataFrame(rows), manifest={"name": "b", "version": "1", "split": "test", "task_type": "qa"}
    )


def answer(query: str) -> dict[str, Any]:
    return {
        "answer": f"The harbour is north of the bridge ({query[-3:]})",
        "results": [{"id": "d1", "text": "The harbour lies north of the bridge."}],
    }


def kb(query: str) -> dict[str, Any]:
    """The fast KB (a plain function: heta_nb calls it in a thread)."""
    return answer(query)


async def async_kb(query: str) -> dict[str, Any]:
    """The same KB as a coroutine function (no thread)."""
    return answer(query)


class Model:
    """An async model function that answers after ``latency`` seconds; counts its calls."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls = 0

    async def __call__(self, prompt: str) -> str:
        self.calls += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        return VERDICT


def judged_run(bench: Benchmark, model: JudgeModel, cache: Any, *, query: Any = kb, extra: tuple[str, ...] = ()) -> Any:
    return heta_nb.evaluate(
        bench,
        kb=query,
        evaluators=[AnswerRelevance(), *extra],
        judge_model=model,
        judge_cache=cache,
        judge_limits=JudgeLimits(concurrency=CALLS),
        store=None,
        progress=False,
        concurrency=8,
    )


def plain_run(bench: Benchmark, *, query: Any = kb) -> Any:
    return heta_nb.evaluate(bench, kb=query, evaluators=["answer_f1"], store=None, progress=False, concurrency=8)


def judge_prompts(bench: Benchmark) -> list[str]:
    """The prompts the judged run sends (a function model gets the instructions and the material as one)."""
    system = AnswerRelevance.template.system
    return [
        f"{system}\n\n{material_prompt({'query': case.query, 'answer': answer(case.query)['answer']})}"
        for case in bench.cases
    ]


def bare_pool(model: Model, prompts: list[str]) -> float:
    """The same calls with nothing around them: one coroutine a call, a semaphore of :data:`CALLS`."""

    async def pool() -> None:
        sem = asyncio.Semaphore(CALLS)

        async def one(prompt: str) -> str:
            async with sem:
                return await model(prompt)

        await asyncio.gather(*(one(prompt) for prompt in prompts))

    start = time.perf_counter()
    asyncio.run(pool())
    return time.perf_counter() - start


def checked(report: Any, n: int, *, cached: bool) -> Any:
    """The report, after checking that every case was judged (from the cache when ``cached``)."""
    scores = [s for r in report.case_results for s in r.scores if s.name == "answer_relevance"]
    assert len(scores) == n, f"{len(scores)} judge scores for {n} cases"
    for score in scores:
        meta = score.metadata
        assert score.value == 1.0 and "error" not in meta, dict(meta)
        assert meta["calls"] == 1 and meta["cached_calls"] == int(cached), dict(meta)
    return report


def timed(func: Callable[[], Any]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def slow_model(n: int, repeat: int, targets: Targets) -> None:
    """Part 1: a 200 ms model, 32 calls at once, against the bare pool."""
    model = Model(LATENCY)
    judge_model = JudgeModel(model, name="sleepy")
    first_bench = make_benchmark(CALLS)  # (one wave of calls)
    plain_run(first_bench)  # (the runner's own first run: not the judges' setup)
    first = timed(lambda: checked(judged_run(first_bench, judge_model, None), CALLS, cached=False))
    again = timed(lambda: checked(judged_run(first_bench, judge_model, None), CALLS, cached=False))
    bench = make_benchmark(n)
    prompts = judge_prompts(bench)
    checked(judged_run(bench, judge_model, None), n, cached=False)
    bare_pool(model, prompts)

    def judged() -> Any:
        before = model.calls
        report = judged_run(bench, judge_model, None)
        assert model.calls - before == n, f"{model.calls - before} model calls for {n} cases"
        return report

    times = interleaved(repeat, {"bare": lambda: bare_pool(model, prompts), "judged": judged})
    ideal = n / CALLS * LATENCY
    bare, run = times["bare"], times["judged"]
    print(
        f"1. model {LATENCY * 1000:.0f} ms a call, {CALLS} at once, {n:,} cases (ideal {ideal:.3f} s; "
        f"median of {repeat}, interleaved; load average {load_average()})"
    )
    print(f"   {'bare asyncio pool, the same calls':36} {bare:7.3f} s  {bare / ideal:5.2f}x ideal")
    print(
        f"   {'judged run (AnswerRelevance)':36} {run:7.3f} s  {run / ideal:5.2f}x ideal  {run / bare:5.2f}x the pool"
    )
    print(
        f"   the first judged run in this process, {CALLS} cases (one wave, ideal {LATENCY:.1f} s): {first:.2f} s,\n"
        f"   the same again {again:.2f} s: {first - again:.2f} s of one-time setup (not in the figures above)"
    )
    targets.check(
        f"{LATENCY * 1000:.0f} ms model, {CALLS} calls at once, {n:,} cases: judged run / bare pool",
        run / bare,
        SLOW_TARGET,
    )


def cached_rerun(n: int, repeat: int, targets: Targets) -> None:
    """Part 2: a re-run whose every call is in the cache, against no judges."""
    model = JudgeModel(Model(0.0), name="instant")
    bench = make_benchmark(n)
    with tempfile.TemporaryDirectory() as folder:
        fill = timed(lambda: checked(judged_run(bench, model, folder, extra=("answer_f1",)), n, cached=False))
        rows: dict[str, float] = {}
        for label, query in (("", kb), ("async KB ", async_kb)):
            checked(judged_run(bench, model, folder, query=query, extra=("answer_f1",)), n, cached=True)
            plain_run(bench, query=query)
            times = interleaved(
                repeat,
                {
                    "plain": lambda query=query: plain_run(bench, query=query),
                    "judged": lambda query=query: judged_run(bench, model, folder, query=query, extra=("answer_f1",)),
                },
            )
            rows[f"{label}plain"], rows[f"{label}judged"] = times["plain"], times["judged"]
    print(
        f"2. fully cached re-run, {n:,} cases (the cache filled by a first run, instant model, in {fill:.2f} s; "
        f"median of {repeat}, interleaved; load average {load_average()})"
    )
    for label, kind in (("", "a plain function KB (in a thread)"), ("async KB ", "an async KB")):
        plain, judged = rows[f"{label}plain"], rows[f"{label}judged"]
        print(f"   {kind}:")
        print(f"     {'no judges (answer_f1)':38} {plain:7.3f} s  {plain / n * 1e6:6.1f} us/case")
        print(
            f"     {'+ AnswerRelevance, every call cached':38} {judged:7.3f} s  {judged / n * 1e6:6.1f} us/case  "
            f"{judged / plain:5.2f}x  (+{(judged - plain) / n * 1e6:.1f} us/case)"
        )
    targets.check(
        f"fully cached re-run, {n:,} cases: judged / no judges", rows["judged"] / rows["plain"], CACHED_TARGET
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=640, help="cases of the run with the 200 ms model (part 1)")
    parser.add_argument("--cached", type=int, default=10_000, help="cases of the cached re-run (part 2)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    targets = Targets(__file__)
    slow_model(args.cases, args.repeat, targets)
    cached_rerun(args.cached, args.repeat, targets)
    targets.report()


if __name__ == "__main__":
    main()
