"""The runner's fast path: shared Heta data, orjson encoding and its fallbacks,
watchdog timeouts, batched checkpoint writes and events."""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import requires_heta
from runner_support import SlowKB, cancel_after, exact_kb, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb._util.atomic import write_atomically
from heta_nb.runner.checkpoint import CHECKPOINT_FILE
from heta_nb.runner.deadlines import SUPPORTED, Deadlines
from heta_nb.store import report_prefix


def _run(**kwargs: Any) -> heta_nb.EvaluationReport:
    kwargs.setdefault("progress", False)
    kwargs.setdefault("query_modes", ["good"])
    kwargs.setdefault("knowledge_base_name", "toy kb")
    return heta_nb.evaluate(kwargs.pop("benchmark", toy_benchmark()), **kwargs)


# -- timeouts ------------------------------------------------------------------------------


def test_a_hung_query_times_out_within_five_percent() -> None:
    async def hangs(query: str) -> list[str]:
        if query.endswith("3?"):
            await asyncio.sleep(30)
        return ["Document text"]

    started = time.perf_counter()
    report = _run(kb=hangs, store=None, timeout_s=0.4, retries=0, concurrency=4)
    elapsed = time.perf_counter() - started
    hung = [r for r in report.case_results if not r.ok]
    assert [r.case_id for r in hung] == [r.case_id for r in report.case_results if r.query.endswith("3?")]
    assert hung and all(r.error.error_type == "TimeoutError" for r in hung)
    assert all(0.4 <= r.latency_ms / 1000 < 0.4 * 1.05 + 0.1 for r in hung)
    assert elapsed < 3


def test_a_kb_that_swallows_the_cancellation_keeps_its_answer_and_the_run_goes_on() -> None:
    calls = []

    async def stubborn(query: str) -> list[str]:
        calls.append(query)
        if len(calls) == 1:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:  # a badly behaved KB: ignores the timeout
                return ["late answer"]
        await asyncio.sleep(0.01)  # later queries must not see a stale cancellation
        return ["Document text"]

    report = _run(kb=stubborn, store=None, timeout_s=0.2, retries=0, concurrency=1)
    assert len(report.case_results) == 12 and report.error_count == 0
    assert report.case_results[0].response.results[0].text == "late answer"
    assert report.metadata["heta_nb"]["status"] == "complete"


@pytest.mark.skipif(not SUPPORTED, reason="the watchdog needs Task.uncancel (Python 3.11+); 3.10 uses wait_for")
def test_deadlines_tell_a_timeout_from_a_real_cancellation() -> None:
    async def scenario() -> tuple[str, str]:
        deadlines = Deadlines(0.05)
        deadlines.start()
        outcomes = {}

        async def query(name: str) -> None:
            task = asyncio.current_task()
            assert task is not None
            deadlines.arm(task)
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                outcomes[name] = "timeout" if deadlines.expired(task) else "cancelled"
                if outcomes[name] == "cancelled":
                    raise
            finally:
                deadlines.disarm(task)

        alone = asyncio.ensure_future(query("alone"))
        both = asyncio.ensure_future(query("both"))
        early = asyncio.ensure_future(query("early"))
        await asyncio.sleep(0.01)
        early.cancel()  # the user cancels before the deadline: a plain cancellation
        await asyncio.sleep(0)
        time.sleep(0.07)  # blocks the loop: every deadline passes before the watchdog runs
        both.cancel()  # ... and the user cancels this one too, at the same moment
        await asyncio.gather(early, return_exceptions=True)
        await asyncio.gather(alone, both, return_exceptions=True)
        await deadlines.stop()
        assert not alone.cancelled() and both.cancelled() and early.cancelled()
        assert outcomes["early"] == "cancelled"
        return outcomes["alone"], outcomes["both"]

    assert asyncio.run(scenario()) == ("timeout", "cancelled")


# -- encoding ---------------------------------------------------------------------------------


def test_non_finite_scores_are_kept_as_nan_not_null(tmp_path: Path) -> None:
    def kb(query: str) -> list[dict[str, Any]]:
        return [{"id": "r1", "text": "Document text", "score": math.nan}, {"id": "r2", "text": "x", "score": math.inf}]

    def odd(case: Any, response: Any) -> float:
        return math.nan

    report = _run(kb=kb, store=tmp_path, evaluators=[odd, "answer_contains"], report_id="nan")
    assert math.isnan(report.case_results[0].score("odd").value)
    raw = (tmp_path / report.report_key).read_text()
    assert '"value":NaN' in raw and '"score":NaN' in raw and '"score":Infinity' in raw
    loaded = ReportStore(tmp_path).load("toy kb", "nan")
    assert math.isnan(loaded.case_results[0].score("odd").value)
    assert math.isinf(loaded.case_results[0].response.results[1].score)
    assert dict(loaded.score_summary).keys() == dict(report.score_summary).keys()


def test_an_evaluator_whose_metadata_is_not_json_is_an_evaluator_error(tmp_path: Path) -> None:
    def leaky(case: Any, response: Any) -> dict[str, Any]:
        return {"value": 1.0, "metadata": {"handle": object()}}

    report = _run(kb=exact_kb, store=tmp_path, evaluators=[leaky, "ndcg@3"], report_id="leaky")
    first = report.case_results[0]
    assert first.ok and first.score("leaky").value == "error"
    assert "not JSON" in first.score("leaky").metadata["error"]["message"]
    assert first.score("ndcg@3").value == 1.0
    assert ReportStore(tmp_path).load("toy kb", "leaky") == report


@requires_heta
def test_heta_responses_are_shared_and_foreign_values_converted_as_heta_does(tmp_path: Path) -> None:
    from heta_framework.evaluation import EvaluationScore as HetaScore
    from heta_framework.kb.search import QueryResponse as HetaResponse
    from heta_framework.kb.search import QueryResult as HetaResult

    plain = HetaResult(
        id="c1", text="Document 1 text", score=2.5, source={"document_id": "d1", "chunk_ids": ("c1",)}, metadata={}
    )

    class Foreign:
        pass

    odd = HetaResult(id="c2", text="odd", source={"tags": {"a"}, 7: Foreign()}, metadata={"when": Foreign()})

    async def kb(query: str, *, mode: str) -> HetaResponse:
        if query.endswith("1?"):
            return HetaResponse(mode=mode, results=(plain, odd))
        return HetaResponse(mode=mode, results=(plain,), answer="Document 1")

    class HetaStyle:
        name = "heta_style"

        async def evaluate(self, *, case: Any, response: Any) -> HetaScore:
            return HetaScore(name="heta_style", value=True, passed=True, metadata={"n": len(response.results)})

    report = _run(kb=kb, store=tmp_path, evaluators=[HetaStyle(), "evidence_recall@3"], report_id="shared")
    shared = report.case("c000", "good").response.raw["results"][0]
    assert shared is plain.__dict__  # no copy of a Heta result
    assert report.case("c000", "good").score("heta_style").metadata == {"n": 1}
    converted = report.case("c001", "good").response.raw["results"][1]
    assert converted["source"]["tags"] == ["a"]
    assert converted["source"]["7"] == {"type": "Foreign", "manifest_note": "value omitted because it is not JSON-safe"}
    assert converted["metadata"]["when"]["type"] == "Foreign"
    loaded = ReportStore(tmp_path).load("toy kb", "shared")
    assert loaded == report  # tuples in memory, lists on disk: equal as JSON
    assert loaded.case("c000", "good").response.raw["results"][0]["source"]["chunk_ids"] == ["c1"]


# -- batches: the checkpoint is on disk when the event arrives -----------------------------------


def test_each_batch_is_in_the_checkpoint_before_its_event(tmp_path: Path) -> None:
    checkpoint = tmp_path / report_prefix("toy kb", "batched") / CHECKPOINT_FILE
    seen: list[int] = []

    def on_event(event: Any) -> None:
        if event.kind == "cases_finished":
            lines = checkpoint.read_text().splitlines()[1:]
            written = {json.loads(line)["case_id"] for line in lines}
            assert {case.case_id for case in event.cases} <= written
            seen.append(len(event.cases))

    async def slowish(query: str) -> list[str]:
        await asyncio.sleep(0.002)
        return ["Document text"]

    report = _run(kb=slowish, store=tmp_path, report_id="batched", on_event=on_event, benchmark=toy_benchmark(60))
    assert sum(seen) == 60 == len(report.case_results)
    assert len(seen) > 1 and max(seen) <= 32
    assert not checkpoint.exists()  # complete: the report holds everything


def test_a_fast_kb_still_writes_the_checkpoint_every_32_cases(tmp_path: Path) -> None:
    checkpoint = tmp_path / report_prefix("toy kb", "fast") / CHECKPOINT_FILE
    sizes: list[int] = []

    async def instant(query: str) -> list[str]:  # never lets the event loop turn
        if checkpoint.exists():
            sizes.append(len(checkpoint.read_bytes().splitlines()))
        return ["Document text"]

    _run(kb=instant, store=tmp_path, report_id="fast", benchmark=toy_benchmark(100), concurrency=1)
    assert sizes[0] == 1 and max(sizes) >= 1 + 96  # header, then 32 lines at a time
    assert all(0 <= b - a <= 32 for a, b in zip(sizes, sizes[1:]))


# -- chunked atomic writes ---------------------------------------------------------------------


def test_write_atomically_writes_chunks_without_joining(tmp_path: Path) -> None:
    chunks = [os.urandom(n % 97) for n in range(3000)]  # more than IOV_MAX, some empty
    path = write_atomically(tmp_path / "out.bin", chunks)
    assert path.read_bytes() == b"".join(chunks)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_sync_evaluate_that_returns_an_awaitable_is_awaited() -> None:
    class Wrapped:
        name = "wrapped"

        def evaluate(self, *, case: Any, response: Any) -> Any:  # sync, but hands back a coroutine
            async def later() -> float:
                return 0.5

            return later()

    report = _run(kb=exact_kb, store=None, evaluators=[Wrapped(), "answer_contains"])
    assert all(r.score("wrapped").value == 0.5 for r in report.case_results)


def test_chunked_writes_survive_short_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """writev may write less than asked (signals, quotas); the rest must follow in order.

    A local disk never does it on demand, so the OS call is wrapped to stop after a few
    bytes of every call; the file must still hold every chunk, in order.
    """
    real_writev = os.writev
    calls = []

    def stingy_writev(fd: int, buffers: Any) -> int:
        first = bytes(buffers[0])[:7] if len(buffers[0]) else b""
        calls.append(len(first))
        return real_writev(fd, [first]) if first else real_writev(fd, list(buffers)[:2])

    monkeypatch.setattr(os, "writev", stingy_writev)
    chunks = [os.urandom(n % 23) for n in range(300)]
    path = write_atomically(tmp_path / "short.bin", chunks)
    assert path.read_bytes() == b"".join(chunks)
    assert len(calls) > len(chunks)  # it really was fed piecemeal


def test_chunked_writes_without_writev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows has no ``os.writev``: chunks are joined a group at a time and written with ``write``."""
    monkeypatch.delattr(os, "writev")
    chunks = [os.urandom(n % 97) for n in range(3000)]  # more than one group, some empty
    path = write_atomically(tmp_path / "out.bin", chunks)
    assert path.read_bytes() == b"".join(chunks)


def test_a_run_checkpoints_saves_and_resumes_without_writev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole store path (checkpoint lines, the report's chunks, resume) on a platform without writev."""
    monkeypatch.delattr(os, "writev")
    kb = SlowKB(0.01)
    _, partial = cancel_after(6, store=tmp_path, kb=kb, report_id="nowritev", cases=30, query_modes=("good",))
    checkpoint = tmp_path / report_prefix("toy kb", "nowritev") / CHECKPOINT_FILE
    lines = checkpoint.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])  # whole lines only
    assert 6 <= len(lines) - 2 == len(partial.case_results) < 30
    calls = kb.calls
    report = _run(kb=kb, benchmark=toy_benchmark(30), store=tmp_path, report_id="nowritev", resume=True, concurrency=2)
    assert [r.case_id for r in report.case_results] == [f"c{i:03d}" for i in range(30)]
    assert kb.calls - calls == 30 - len(partial.case_results)
    stored = ReportStore(tmp_path).load("toy kb", "nowritev")
    assert stored == report and not checkpoint.exists()


@pytest.mark.parametrize(
    ("values", "result_scores", "expected"),
    [
        ([1.0, 0.5, True], [3.0, 2.0], False),
        ([float("nan"), 1.0], [1.0], True),
        ([1.0], [1.0, float("inf")], True),
        (["error", None], [float("-inf")], True),  # text values force the term-by-term check
        (["error", None], [1.0, None], False),
        ([1e308, 1e308], [1e308], False),  # the sum overflows; every term is finite
        ([], [], False),
    ],
)
def test_non_finite_numbers_are_found_whatever_else_the_result_holds(
    values: list[Any], result_scores: list[Any], expected: bool
) -> None:
    from heta_nb.runner.encode import has_non_finite as _has_non_finite

    data = {
        "scores": [{"name": f"s{i}", "value": v} for i, v in enumerate(values)],
        "response": {"results": [{"id": str(i), "score": s} for i, s in enumerate(result_scores)]},
    }
    assert _has_non_finite(data) is expected
    data["response"] = None
    assert _has_non_finite(data) is (expected and any(isinstance(v, float) and not math.isfinite(v) for v in values))


# -- batched case events ---------------------------------------------------------------------


def test_a_batch_built_from_records_reads_like_one_built_from_case_events() -> None:
    """The engine hands batches its records; ``cases``, the reducer and a replay agree."""
    import pickle
    from dataclasses import FrozenInstanceError

    from heta_nb.runner import event_from_dict, replay
    from heta_nb.runner.events import CasesFinished, to_dict

    def sometimes_broken(query: str, *, mode: str, top_k: int) -> Any:
        if query.endswith(("3?", "7?")):
            raise KeyError("index shard missing")
        if query.endswith("5?"):
            return 42  # not a response: an InvalidResponseError for this case
        return exact_kb(query, mode=mode, top_k=top_k)

    run = heta_nb.start(
        toy_benchmark(),
        kb=sometimes_broken,
        query_modes=["good", "poor"],
        evaluators=["evidence_recall@3", "answer_contains", lambda_free_score],
        store=None,
        knowledge_base_name="k",
        retries=0,
        progress=False,
        record_events=True,
    )
    report = run.result(timeout=30)
    batches = [e for e in run.events if isinstance(e, CasesFinished)]
    assert batches and all(e._records is not None for e in batches)  # built from records
    cases = [case for batch in batches for case in batch.cases]
    by_key = {(r.case_id, r.query_mode): r for r in report.case_results}
    assert len(cases) == len(by_key) == 24
    for case in cases:
        result = by_key[(case.case_id, case.mode)]
        assert case.ok is result.ok and case.latency_ms == result.latency_ms and case.unit_id == "corpus"
        assert case.error_type == (result.error.error_type if result.error else None)
        assert dict(case.scores) == {
            s.name: (float(s.value) if isinstance(s.value, (bool, int, float)) else None) for s in result.scores
        }
    live = run.state
    assert live.errors == 8 and dict(live.errors_by_type) == {"KeyError": 4, "InvalidResponseError": 4}
    assert len(live.last_errors) == 5
    rebuilt = [CasesFinished(batch.cases, batch.t) for batch in batches]  # the same batches, from events
    assert rebuilt == batches
    replayed = replay(event_from_dict(json.loads(json.dumps(to_dict(e)))) for e in run.events)
    assert replayed == live
    assert pickle.loads(pickle.dumps(batches[0])) == batches[0]
    with pytest.raises(FrozenInstanceError):
        batches[0].t = 0.0  # type: ignore[misc]


def lambda_free_score(case: Any, response: Any) -> str:
    """A text score (no number): the reducer counts it as a metric without a mean."""
    return "fine"


def test_elapsed_ms_writes_what_hetas_rounding_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Heta writes ``round(seconds * 1000, 3)``; the runner's cheaper form must give the same float.

    Half-microsecond ties are where a plain ``int(x + 0.5)`` differs (about one case
    in a thousand with nanosecond clock readings): 40,000 of them are tried.
    """
    import random

    from heta_nb.runner import case

    rng = random.Random(7)
    durations = [k * 5e-7 for k in range(20_000)] + [(2 * k + 1) / 2e6 for k in range(20_000)]
    durations += [rng.uniform(0, 120) for _ in range(20_000)] + [rng.expovariate(200) for _ in range(20_000)]
    start = [rng.randrange(10**9, 10**13) / 1e9 for _ in range(20_000)]  # perf_counter-like readings
    durations += [(a + rng.randrange(10**10) / 1e9) - a for a in start]
    durations += [0.0, 1e-9, 2.5e-7, 86_400.123456, 3 * 86_400.0005]
    clock = iter(durations)
    monkeypatch.setattr(case, "perf_counter", lambda: next(clock))
    for seconds in durations:
        assert case._elapsed_ms(0.0) == round(seconds * 1000, 3), seconds
