"""Small benchmarks and knowledge bases for runner tests (real code, no mocks)."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from heta_nb.benchmark import (
    Benchmark,
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
)

MANIFEST = {"name": "toy", "version": "1", "split": "test", "task_type": "qa"}


def toy_benchmark(n_cases: int = 12, *, n_docs: int = 6) -> Benchmark:
    """Documents ``d0..`` and cases whose evidence is document ``d{i % n_docs}``."""
    documents = [
        BenchmarkDocument(
            document_id=f"d{i}",
            name=f"d{i}.txt",
            media_type="text/plain",
            data=f"Document {i} says the answer to question {i} is answer{i}.".encode(),
        )
        for i in range(n_docs)
    ]
    cases = []
    for i in range(n_cases):
        doc = f"d{i % n_docs}"
        evidence = BenchmarkEvidence(reference_id=doc, locator={"source_key_prefix": f"raw/benchmarks/toy/test/{doc}/"})
        cases.append(
            BenchmarkCase(
                case_id=f"c{i:03d}",
                query=f"What is the answer to question {i % n_docs}?",
                expected=BenchmarkExpected(answers=(f"answer{i % n_docs}",), evidence=(evidence,)),
                labels={"parity": "even" if i % 2 == 0 else "odd"},
            )
        )
    return Benchmark(MANIFEST, documents, cases, evaluators=("evidence_recall@3", "answer_contains", "ndcg@3"))


def _result(doc: int, rank: int) -> dict[str, Any]:
    key = f"raw/benchmarks/toy/test/d{doc}/d{doc}.txt"
    return {
        "id": f"chunk_{doc}_{rank}",
        "text": f"Document {doc} says the answer is answer{doc}.",
        "score": 1.0 / (rank + 1),
        "source": {"object_key": key},
    }


def _doc_of(query: str) -> int:
    return int(query.rstrip("?").split()[-1])


def exact_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """Deterministic: finds the right document first in mode 'good', third in 'poor'."""
    doc = _doc_of(query)
    order = [doc, (doc + 1) % 6, (doc + 2) % 6] if mode == "good" else [(doc + 1) % 6, (doc + 2) % 6, doc]
    results = [_result(d, rank) for rank, d in enumerate(order[:top_k])]
    answer = f"It is answer{doc}." if mode == "good" else None
    return {"mode": mode, "results": results, "answer": answer}


class SlowKB:
    """An async KB that sleeps (random jitter, seeded) before answering like exact_kb."""

    def __init__(self, delay: float = 0.01, jitter: float = 0.0, seed: int = 0) -> None:
        self.delay = delay
        self.jitter = jitter
        self.random = random.Random(seed)
        self.calls = 0
        self.name = "slow kb"

    async def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> dict[str, Any]:
        self.calls += 1
        await asyncio.sleep(self.delay + self.random.random() * self.jitter)
        return exact_kb(query, mode=mode, top_k=top_k)


class FlakyError(RuntimeError):
    """A transient failure that says it may be retried."""

    retryable = True


class FlakyKB:
    """Fails ``rate`` of its calls with a retryable error (seeded), else answers."""

    def __init__(self, rate: float = 0.3, seed: int = 1) -> None:
        self.rate = rate
        self.random = random.Random(seed)
        self.calls = 0
        self.failures = 0

    async def query(self, query: str, *, mode: str, top_k: int, **_: Any) -> dict[str, Any]:
        self.calls += 1
        await asyncio.sleep(0)
        if self.random.random() < self.rate:
            self.failures += 1
            raise FlakyError("backend busy, try again")
        return exact_kb(query, mode=mode, top_k=top_k)


TOY_RUN_KEYS = [(f"c{i:03d}", m) for i in range(60) for m in ("good", "poor")]
"""(case_id, mode) of a 60-case toy run over modes good and poor, in Heta's order."""


def resume_toy_run(store: Any, report_id: str, kb: Any) -> Any:
    """Resume (or finish) the 60-case, two-mode toy run a child process started in ``store``."""
    import heta_nb

    return heta_nb.evaluate(
        toy_benchmark(60),
        kb=kb,
        query_modes=["good", "poor"],
        store=store,
        report_id=report_id,
        knowledge_base_name="toy kb",
        progress=False,
        resume=True,
    )


def cancel_after(
    done: int,
    *,
    store: Any,
    kb: Any,
    report_id: str,
    cases: int,
    query_modes: tuple[str, ...] = ("good", "poor"),
    **settings: Any,
) -> tuple[Any, Any]:
    """Start a run of the toy benchmark, cancel it once ``done`` results are in; the handle and its partial report.

    ``settings``: more arguments for ``heta_nb.start`` (``query_options``, say).
    """
    import heta_nb

    settings.setdefault("concurrency", 2)
    run = heta_nb.start(
        toy_benchmark(cases),
        kb=kb,
        query_modes=list(query_modes),
        store=store,
        report_id=report_id,
        knowledge_base_name="toy kb",
        progress=False,
        **settings,
    )
    deadline = time.monotonic() + 20
    while run.state.done < done and time.monotonic() < deadline:
        time.sleep(0.01)
    run.cancel()
    return run, run.result(timeout=20)


def run_toy(**kwargs: Any) -> Any:
    """``heta_nb.evaluate`` of the toy benchmark: ``exact_kb``, modes good and poor, in memory (all overridable)."""
    import heta_nb

    kwargs.setdefault("progress", False)
    kwargs.setdefault("query_modes", ["good", "poor"])
    kwargs.setdefault("knowledge_base_name", "toy kb")
    kwargs.setdefault("store", None)
    kwargs.setdefault("kb", exact_kb)
    kwargs.setdefault("report_id", "whole")
    return heta_nb.evaluate(kwargs.pop("benchmark", None) or toy_benchmark(), **kwargs)


def evaluate_toy(**kwargs: Any) -> Any:
    """``heta_nb.evaluate`` of the toy benchmark, modes good and poor, no progress (all overridable; pass ``kb``)."""
    import heta_nb

    kwargs.setdefault("progress", False)
    kwargs.setdefault("query_modes", ["good", "poor"])
    kwargs.setdefault("knowledge_base_name", "toy kb")
    return heta_nb.evaluate(kwargs.pop("benchmark", None) or toy_benchmark(), **kwargs)


def interrupt_when_checkpointed(
    code: str, store_root: Path, checkpoint: Path, *, lines: int, timeout: float
) -> tuple[int, str]:
    """Run ``python -c code store_root``; once ``checkpoint`` holds more than ``lines`` lines, send
    SIGINT (what Ctrl-C in a terminal does) and wait up to ``timeout`` s: (return code, stdout)."""
    child = subprocess.Popen([sys.executable, "-c", code, str(store_root)], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            checkpoint.exists() and checkpoint.read_bytes().count(b"\n") > lines
        ):
            time.sleep(0.01)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=timeout)
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, out
