"""Events, the reducer and replay; subscribers that fail."""

from __future__ import annotations

import json
from typing import Any

import pytest
from runner_support import evaluate_toy, exact_kb, toy_benchmark

import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.runner import RunState, event_from_dict, replay
from heta_nb.runner.events import RunFinished, to_dict

MANIFEST = {"name": "thin", "version": "1", "split": "test", "task_type": "qa"}


def benchmark(n: int) -> Benchmark:
    return Benchmark(MANIFEST, (), [BenchmarkCase(case_id=f"c{i:02d}", query=f"question {i}") for i in range(n)])


def answer(query: str) -> dict[str, Any]:
    return {"mode": "m", "results": [{"id": "r1", "text": f"text of {query}"}], "answer": query}


def judge(case: Any, response: Any) -> dict[str, Any]:
    """Fails on every other case (an LLM judge that times out, say)."""
    if int(case.case_id[1:]) % 2:
        raise RuntimeError("judge unavailable")
    return {"name": "judge", "value": 0.5}


def run(n: int, evaluators: list[Any], **kwargs: Any) -> heta_nb.EvaluationReport:
    return heta_nb.evaluate(
        benchmark(n),
        kb=answer,
        query_modes=["m"],
        evaluators=evaluators,
        knowledge_base_name="kb",
        progress=False,
        lint=False,
        **kwargs,
    )


MODES = ["good", "poor"]


def lambda_free_score(case: Any, response: Any) -> str:
    """A text score (no number): the reducer counts it as a metric without a mean."""
    return "fine"


def test_a_display_that_missed_the_case_events_catches_up_on_the_final_one() -> None:
    events: list[Any] = []
    report = run(5, [judge], on_event=events.append)
    full = replay(events)
    assert (full.done, full.errors) == (5, 0)
    late = replay([e for e in events if e.kind == "run_finished"], RunState())
    assert late.done == len(report.case_results) and late.status == "complete" and late.fraction == 1.0
    failed = RunFinished(status="failed", done=3, total=5, errors=2, seconds=1.0)
    assert (replay([failed]).done, replay([failed]).errors) == (3, 2)


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
        report = evaluate_toy(kb=exact_kb, store=None, on_event=broken)
    assert len(report.case_results) == 24
    assert seen.count("cases_finished") == 1 and seen[-1] != "run_finished"  # detached after its failure


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
