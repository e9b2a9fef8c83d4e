"""The runner: order, faults, validation, cancellation, resume, shards and events."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from runner_support import FlakyKB, SlowKB, cancel_after, exact_kb, toy_benchmark

import heta_nb
from heta_nb import ReportStore
from heta_nb.errors import HetaNbError, ReportExistsError, ReportInUseError, UnsafeNameError
from heta_nb.model import QueryResponse, heta_score_summary
from heta_nb.runner import RunError, event_from_dict, replay
from heta_nb.runner.checkpoint import CHECKPOINT_FILE, read_checkpoint
from heta_nb.runner.events import to_dict
from heta_nb.store import report_prefix

MODES = ["good", "poor"]


def _run(**kwargs: Any) -> heta_nb.EvaluationReport:
    kwargs.setdefault("progress", False)
    kwargs.setdefault("query_modes", MODES)
    kwargs.setdefault("knowledge_base_name", "toy kb")
    return heta_nb.evaluate(kwargs.pop("benchmark", toy_benchmark()), **kwargs)


def test_order_and_summary_whatever_the_completion_order() -> None:
    kb = SlowKB(delay=0.001, jitter=0.02, seed=7)
    report = _run(kb=kb, concurrency=16, store=None)
    expected = [(f"c{i:03d}", mode) for i in range(12) for mode in MODES]
    assert [(r.case_id, r.query_mode) for r in report.case_results] == expected
    assert dict(report.score_summary) == heta_score_summary(report.case_results)
    summary = report.score_summary
    assert summary["good.evidence_recall@3"] == 1.0 and summary["good.ndcg@3"] == 1.0
    assert summary["poor.ndcg@3"] == pytest.approx(0.5)  # relevant at rank 3: 1/log2(4)
    assert summary["good.answer_contains"] == 1.0 and summary["poor.answer_contains"] == 0.0
    first = report.case_results[0]
    assert first.metadata["benchmark_run_unit"] == "corpus"
    assert first.metadata["knowledge_base_name"] == "toy kb"
    assert first.metadata["heta_nb"]["case_index"] == 0
    assert report.metadata["heta_nb"]["status"] == "complete"
    assert report.metadata["run_units"][0]["unit_id"] == "corpus"
    assert kb.calls == 24


def _query_only(query: str) -> list[str]:
    return [f"Document {query[-2]} text"]


class SyncObject:
    name = "sync object"

    def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> QueryResponse:
        return QueryResponse(mode=mode, results=[{"id": "r1", "text": "plain text"}], answer="answer1")


async def async_function(query: str, mode: str) -> dict:
    await asyncio.sleep(0)
    return {"results": [{"id": "x", "text": "t", "source": {"document_id": "d1"}}]}


@pytest.mark.parametrize(
    "kb",
    [exact_kb, _query_only, SyncObject(), async_function, SlowKB(0)],
    ids=["sync-fn", "query-only-fn", "sync-object", "async-fn", "async-object"],
)
def test_every_kind_of_kb(kb: Any) -> None:
    report = _run(kb=kb, store=None, knowledge_base_name="k")
    assert len(report.case_results) == 24
    assert report.error_count == 0, [r.error.message for r in report.errors()]


def test_bad_responses_become_case_errors_not_crashes() -> None:
    def garbage(query: str, *, mode: str) -> Any:
        if query.endswith("1?"):
            return 42
        if query.endswith("2?"):
            return {"results": [{"id": "r", "text": "   "}]}  # blank text: invalid in Heta's schema
        if query.endswith("3?"):
            raise LookupError("query engine is not registered: " + mode)
        return ["a fine result"]

    report = _run(kb=garbage, store=None, knowledge_base_name="k")
    errors = {(r.case_id, r.error.error_type) for r in report.errors()}
    assert ("c001", "InvalidResponseError") in errors and ("c002", "InvalidResponseError") in errors
    assert ("c003", "LookupError") in errors
    assert report.case("c001", "good").error.message.startswith("the KB returned int")
    assert "traceback" in report.case("c003", "good").error.metadata
    assert report.case("c000", "good").ok
    assert len(report.case_results) == 24


def test_timeouts_and_retries() -> None:
    class Hangs:
        def __init__(self) -> None:
            self.calls = 0

        async def query(self, query: str, **_: Any) -> list[str]:
            self.calls += 1
            if query.endswith("0?"):
                await asyncio.sleep(30)
            return ["ok"]

    kb = Hangs()
    started = time.perf_counter()
    report = _run(kb=kb, store=None, knowledge_base_name="k", timeout_s=0.2, retries=1, backoff_s=0.01)
    assert time.perf_counter() - started < 5
    hung = [r for r in report.case_results if r.case_id in ("c000", "c006")]
    assert all(r.error.error_type == "TimeoutError" and r.error.retryable for r in hung)
    assert all(r.error.metadata["attempts"] == 2 for r in hung)
    assert report.error_count == len(hung) == 4


def test_flaky_kb_succeeds_with_retries() -> None:
    kb = FlakyKB(rate=0.3, seed=3)
    report = _run(kb=kb, store=None, knowledge_base_name="k", retries=6, backoff_s=0.001)
    assert kb.failures > 3
    assert report.error_count == 0
    attempts = [r.metadata["heta_nb"]["attempts"] for r in report.case_results]
    assert sum(attempts) == kb.calls and max(attempts) > 1
    without = _run(kb=FlakyKB(rate=0.3, seed=3), store=None, knowledge_base_name="k", retries=0)
    assert without.error_count > 0
    assert {r.error.error_type for r in without.errors()} == {"FlakyError"}
    assert all(r.error.retryable for r in without.errors())


def test_an_evaluator_that_raises_keeps_the_response() -> None:
    def picky(case: Any, response: Any) -> float:
        if case.case_id == "c004":
            raise ZeroDivisionError("picky failed")
        return 1.0

    report = _run(kb=exact_kb, store=None, evaluators=["evidence_recall@3", picky])
    result = report.case("c004", "good")
    assert result.ok and result.response is not None
    score = result.score("picky")
    assert score.value == "error" and score.metadata["error"]["type"] == "ZeroDivisionError"
    assert result.score("evidence_recall@3").value == 1.0
    assert result.metadata["heta_nb"]["evaluator_errors"] == ("picky",)
    assert report.score_summary["good.picky"] == 1.0  # the error is left out, as text scores are


def test_everything_is_validated_before_the_first_query(tmp_path: Path) -> None:
    kb = SlowKB(0)
    store = ReportStore(tmp_path)
    with pytest.raises(UnsafeNameError, match="report_id"):
        _run(kb=kb, store=store, report_id="../escape")
    with pytest.raises(UnsafeNameError, match="knowledge_base_name"):
        _run(kb=kb, store=store, knowledge_base_name="a/b", report_id="r")
    with pytest.raises(RunError, match=r"metadata\['tags'\]: value of type set"):
        _run(kb=kb, store=store, report_id="r", metadata={"tags": {"a"}})
    with pytest.raises(RunError, match="duplicates"):
        _run(kb=kb, store=None, query_modes=["good", "good"])
    with pytest.raises(RunError, match="evaluator names must be unique"):
        _run(kb=kb, store=None, evaluators=["ndcg@3", "ndcg@3"])
    with pytest.raises(RunError, match="exactly one of kb= .* or recipe="):
        _run(store=None)
    with pytest.raises(ValueError, match="unknown evaluator 'nope@3'"):
        _run(kb=kb, store=None, evaluators=["nope@3"])
    assert kb.calls == 0
    assert list(tmp_path.iterdir()) == []
    _run(kb=kb, store=store, report_id="r")
    with pytest.raises(ReportExistsError, match="resume=True"):
        _run(kb=kb, store=store, report_id="r")
    calls = kb.calls
    _run(kb=kb, store=store, report_id="r", overwrite=True)
    assert kb.calls == calls + 24


def test_cancel_returns_a_partial_report_and_resume_finishes_it(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    kb = SlowKB(delay=0.05)
    run, partial = cancel_after(6, store=store, kb=kb, report_id="r", cases=40)
    info = partial.metadata["heta_nb"]
    assert info["status"] == "cancelled" and run.status == "cancelled"
    assert 6 <= info["done"] < 80 and info["remaining"] == 80 - info["done"]
    assert len(partial.case_results) == info["done"]
    assert store.load("toy kb", "r").metadata["heta_nb"]["status"] == "cancelled"
    assert (tmp_path / report_prefix("toy kb", "r") / CHECKPOINT_FILE).exists()
    done_before = {(r.case_id, r.query_mode) for r in partial.case_results}
    calls_before = kb.calls
    final = _run(benchmark=toy_benchmark(40), kb=kb, store=store, report_id="r", resume=True)
    keys = [(r.case_id, r.query_mode) for r in final.case_results]
    assert len(keys) == len(set(keys)) == 80
    assert final.metadata["heta_nb"]["status"] == "complete"
    assert final.metadata["heta_nb"]["resumed"] == len(done_before)
    assert kb.calls - calls_before <= 80 - len(done_before) + 2  # at most the in-flight ones redone
    assert not (tmp_path / report_prefix("toy kb", "r") / CHECKPOINT_FILE).exists()
    # the saved bytes (assembled from checkpoint lines) are exactly Heta's encoding of the report
    assert (tmp_path / final.report_key).read_bytes() == final.to_json().encode("utf-8")
    for result in partial.case_results:  # resumed results are the very same records
        assert final.case(result.case_id, result.query_mode) == result


def test_a_second_run_of_a_report_being_written_is_refused_before_it_changes_anything(tmp_path: Path) -> None:
    """A resume (or an overwrite) from another notebook while the first run writes the report.

    Without the checkpoint's lock both runs ran the same cases, and the first to
    finish removed the checkpoint the other was still appending to.
    """
    store = ReportStore(tmp_path)
    first_kb = SlowKB(delay=0.02)
    run = heta_nb.start(
        toy_benchmark(30),
        kb=first_kb,
        query_modes=MODES,
        store=store,
        report_id="busy",
        concurrency=2,
        knowledge_base_name="toy kb",
        progress=False,
    )
    checkpoint = tmp_path / report_prefix("toy kb", "busy") / CHECKPOINT_FILE
    deadline = time.monotonic() + 20
    while run.state.done < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    second_kb = SlowKB(delay=0.001)
    for option in ({"resume": True}, {"overwrite": True}):
        lines = checkpoint.read_bytes().count(b"\n")
        with pytest.raises(ReportInUseError, match="another run is writing report 'busy' for 'toy kb'"):
            _run(benchmark=toy_benchmark(30), kb=second_kb, store=store, report_id="busy", **option)
        assert checkpoint.read_bytes().count(b"\n") >= lines  # not emptied
    assert second_kb.calls == 0
    report = run.result(timeout=30)
    keys = [(r.case_id, r.query_mode) for r in report.case_results]
    assert len(keys) == len(set(keys)) == 60 and report.metadata["heta_nb"]["status"] == "complete"
    assert first_kb.calls == 60 and store.load("toy kb", "busy") == report and not checkpoint.exists()
    # the lock went with the run: the same report can be run again at once
    again = _run(benchmark=toy_benchmark(30), kb=second_kb, store=store, report_id="busy", overwrite=True)
    assert len(again.case_results) == 60 and second_kb.calls == 60


def test_the_lock_goes_with_a_failed_run(tmp_path: Path) -> None:
    """A run whose report cannot be saved keeps its checkpoint, unlocked, for the resume."""
    store = ReportStore(tmp_path)
    kb = SlowKB(delay=0.001)
    folder = tmp_path / report_prefix("toy kb", "failed")
    folder.mkdir(parents=True)
    (folder / "report.json").mkdir()  # a folder where the report goes: the save fails
    with pytest.raises(HetaNbError, match="could not be saved") as failed:  # what heta_nb raises on purpose
        _run(benchmark=toy_benchmark(10), kb=kb, store=store, report_id="failed", resume=True)
    assert isinstance(failed.value, heta_nb.runner.RunFailedError) and isinstance(failed.value, RuntimeError)
    assert (folder / CHECKPOINT_FILE).exists()
    (folder / "report.json").rmdir()
    final = _run(benchmark=toy_benchmark(10), kb=kb, store=store, report_id="failed", resume=True)
    assert final.metadata["heta_nb"]["resumed"] == 20 and kb.calls == 20


class ExitingKB:
    """Calls ``sys.exit`` on its fifth query (KB code that ends the process, as far as it knows)."""

    name = "exiting kb"

    def __init__(self) -> None:
        self.calls = 0

    async def query(self, query: str, *, mode: str, top_k: int, options: dict, trace: bool) -> Any:
        self.calls += 1
        if self.calls == 5:
            raise SystemExit("the KB called sys.exit")
        await asyncio.sleep(0.001)
        return exact_kb(query, mode=mode, top_k=top_k)


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")  # no late finish on a closed loop
def test_a_run_killed_by_a_base_exception_releases_its_checkpoint(tmp_path: Path) -> None:
    """A SystemExit from KB code stops the run; the same kernel can still resume the report.

    On Python 3.10 the run's coroutine is left suspended and only closed by the
    garbage collector: the lock must not wait for that, nor the coroutine try to
    finish the run then.
    """
    with pytest.raises(SystemExit, match="the KB called sys.exit"):
        _run(benchmark=toy_benchmark(30), kb=ExitingKB(), store=tmp_path, report_id="exit", concurrency=2)
    assert (tmp_path / report_prefix("toy kb", "exit") / CHECKPOINT_FILE).exists()
    kb = SlowKB(delay=0.001)
    final = _run(benchmark=toy_benchmark(30), kb=kb, store=tmp_path, report_id="exit", resume=True)
    info = final.metadata["heta_nb"]
    assert info["status"] == "complete" and len(final.case_results) == 60
    assert kb.calls == 60 - info["resumed"]


def test_a_line_torn_by_a_kill_is_ended_before_a_resumed_run_appends(tmp_path: Path) -> None:
    """Without the repair the resumed run's first line would join the torn one and be lost."""
    store = ReportStore(tmp_path)
    kb = SlowKB(delay=0.02)
    _, first = cancel_after(4, store=store, kb=kb, report_id="t", cases=40)
    path = tmp_path / report_prefix("toy kb", "t") / CHECKPOINT_FILE
    with path.open("ab") as handle:
        handle.write(b'{"case_id":"c039","query":"wh')  # what kill -9 mid-write leaves
    run = heta_nb.start(
        toy_benchmark(40),
        kb=kb,
        query_modes=MODES,
        store=store,
        report_id="t",
        resume=True,
        concurrency=2,
        knowledge_base_name="toy kb",
        progress=False,
    )
    deadline = time.monotonic() + 20
    while run.state.done < len(first.case_results) + 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    run.cancel()
    second = run.result(timeout=20)
    assert len(second.case_results) >= len(first.case_results) + 6
    checkpoint = read_checkpoint(store, "toy kb", "t")
    assert checkpoint is not None and checkpoint.skipped_lines == 1
    assert set(checkpoint.results) == {("corpus", r.case_id, r.query_mode) for r in second.case_results}


def test_resume_refuses_a_different_configuration(tmp_path: Path) -> None:
    store = ReportStore(tmp_path)
    run = heta_nb.start(
        toy_benchmark(30),
        kb=SlowKB(0.05),
        query_modes=MODES,
        store=store,
        report_id="r",
        knowledge_base_name="toy kb",
        progress=False,
        concurrency=1,
    )
    while run.state.done < 2:
        time.sleep(0.01)
    run.cancel()
    run.result(timeout=20)
    with pytest.raises(RunError, match="cannot resume report 'r': its checkpoint has modes"):
        _run(
            benchmark=toy_benchmark(30),
            kb=SlowKB(0),
            store=store,
            report_id="r",
            resume=True,
            query_modes=["good"],
        )


def test_shards_merge_into_the_single_run_report() -> None:
    single = _run(kb=exact_kb, store=None, report_id="whole")
    shards = [_run(kb=exact_kb, store=None, report_id="whole", shard=(i, 3)) for i in range(3)]
    assert sum(len(s.case_results) for s in shards) == 24 and all(s.case_results for s in shards)
    assert all(s.report_id.startswith("whole__shard-") for s in shards)
    merged = heta_nb.merge_reports(shards)
    assert merged.report_id == "whole"
    assert [(r.case_id, r.query_mode) for r in merged.case_results] == [
        (r.case_id, r.query_mode) for r in single.case_results
    ]
    assert dict(merged.score_summary) == dict(single.score_summary)
    assert list(merged.metadata["heta_nb"]["merged_from"]) == [s.report_id for s in shards]
    with pytest.raises(ValueError, match="is in both"):
        heta_nb.merge_reports([shards[0], shards[0]])
    # a stable subset: the same shard twice is the same cases
    again = _run(kb=exact_kb, store=None, report_id="whole", shard=(1, 3))
    assert [r.case_id for r in again.case_results] == [r.case_id for r in shards[1].case_results]


def test_events_reduce_to_the_final_state_and_replay() -> None:
    run = heta_nb.start(
        toy_benchmark(),
        kb=exact_kb,
        query_modes=MODES,
        store=None,
        knowledge_base_name="k",
        progress=False,
        record_events=True,
    )
    report = run.result(timeout=30)
    state = run.state
    assert state.status == "complete" and state.done == state.total == 24 and state.errors == 0
    assert state.mean("good", "evidence_recall@3") == 1.0
    assert state.mean("poor", "ndcg@3") == pytest.approx(report.score_summary["poor.ndcg@3"])
    kinds = [e.kind for e in run.events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished" and "case_finished" not in kinds
    batches = [e for e in run.events if e.kind == "cases_finished"]
    finished = [case for batch in batches for case in batch.cases]
    assert len(finished) == 24 and all(1 <= len(batch.cases) <= 32 for batch in batches)
    assert {(c.case_id, c.mode) for c in finished} == {(r.case_id, r.query_mode) for r in report.case_results}
    assert all(c.result is not None and c.result.case_id == c.case_id for c in finished)
    lines = [json.dumps(to_dict(e)) for e in run.events]
    replayed = replay(event_from_dict(json.loads(line)) for line in lines)
    assert replayed == state
    bundle = run._repr_mimebundle_()  # the handle renders its state like every other object
    assert bundle["text/plain"].startswith("EvaluationRun(") and "24/24" in bundle["text/plain"]
    assert "<progress" in bundle["text/html"]
    assert set(run._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}


def test_a_subscriber_that_raises_is_detached_and_the_run_completes() -> None:
    seen = []

    def broken(event: Any) -> None:
        seen.append(event.kind)
        if event.kind == "cases_finished":
            raise RuntimeError("display broke")

    with pytest.warns(RuntimeWarning, match="display broke"):
        report = _run(kb=exact_kb, store=None, on_event=broken)
    assert len(report.case_results) == 24
    assert seen.count("cases_finished") == 1 and seen[-1] != "run_finished"  # detached after its failure


def test_evaluate_works_inside_a_running_event_loop() -> None:
    async def notebook_cell() -> Any:
        return _run(kb=exact_kb, store=None)  # blocking call from within a loop, as in Jupyter

    assert len(asyncio.run(notebook_cell()).case_results) == 24

    async def awaited() -> Any:
        return await heta_nb.evaluate_async(
            toy_benchmark(),
            kb=exact_kb,
            query_modes=MODES,
            store=None,
            knowledge_base_name="k",
            progress=False,
        )

    assert len(asyncio.run(awaited()).case_results) == 24


def test_start_leaves_the_caller_free() -> None:
    run = heta_nb.start(
        toy_benchmark(40),
        kb=SlowKB(0.02),
        query_modes=MODES,
        store=None,
        concurrency=4,
        knowledge_base_name="k",
        progress=False,
    )
    assert not run.done()
    ticks = 0
    while not run.done():
        ticks += 1  # the caller keeps working meanwhile
        time.sleep(0.005)
    assert ticks > 10
    assert len(run.result().case_results) == 80
    assert threading.active_count() >= 1


def test_console_progress_output() -> None:
    import io

    from heta_nb.progress.console import ConsoleProgress

    stream = io.StringIO()
    now = [0.0]
    console = ConsoleProgress(stream, clock=lambda: now[0])
    run = heta_nb.start(
        toy_benchmark(), kb=exact_kb, query_modes=MODES, store=None, knowledge_base_name="k", progress=console
    )
    run.result(timeout=30)
    text = stream.getvalue()
    assert "heta_nb: evaluating 'k' on toy (test), modes good, poor: 24 results" in text
    assert "heta_nb: complete: 24/24 results, 0 errors" in text
    assert console.redraws <= 3  # the fake clock never advanced: no redraw storm


def test_resume_reads_a_checkpoint_written_in_the_first_format(tmp_path: Path) -> None:
    """Format 1 wrapped each result as {"unit_id", "mode", "case_id", "result"}; such a
    checkpoint (left by an older heta_nb) still resumes, case for case."""
    store = ReportStore(tmp_path)
    kb = SlowKB(delay=0.05)
    _, partial = cancel_after(6, store=store, kb=kb, report_id="old", cases=20)
    path = tmp_path / report_prefix("toy kb", "old") / CHECKPOINT_FILE
    header, *lines = path.read_text().splitlines()
    assert lines and all("unit_id" not in json.loads(line) for line in lines)  # format 2: the result itself
    old_lines = [
        json.dumps(
            {"unit_id": "corpus", "mode": r["query_mode"], "case_id": r["case_id"], "result": r},
            separators=(",", ":"),
        )
        for r in map(json.loads, lines)
    ]
    path.write_text("\n".join([header.replace('"heta_nb_checkpoint":2', '"heta_nb_checkpoint":1'), *old_lines]) + "\n")
    final = _run(benchmark=toy_benchmark(20), kb=kb, store=store, report_id="old", resume=True)
    keys = [(r.case_id, r.query_mode) for r in final.case_results]
    assert len(keys) == len(set(keys)) == 40
    assert final.metadata["heta_nb"]["resumed"] == len(lines) == len(partial.case_results)
    for result in partial.case_results:
        assert final.case(result.case_id, result.query_mode) == result
