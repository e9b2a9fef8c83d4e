"""``merge_reports`` gives the single run's report; the ``EvaluationRun`` handle survives odd waits."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, heta_recipe, requires_heta
from runner_support import MANIFEST, SlowKB, exact_kb, toy_benchmark

import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkRunUnit
from heta_nb.errors import ReportFormatError
from heta_nb.runner import EvaluationRun
from heta_nb.runner.config import RunConfig

# what differs between a single run and a merge by nature: times, ids, provenance
VOLATILE = frozenset(
    ("started_at", "finished_at", "report_id", "report_key", "latency_ms", "query_ms", "elapsed_s", "merged_from")
    + ("created_at", "updated_at", "run_record")  # of a KB manifest: each shard built its own KB
)


def _comparable(value: Any) -> Any:
    """A report's JSON without the volatile fields; NaN as a string so that it equals itself."""
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def _same_report(merged: heta_nb.EvaluationReport, single: heta_nb.EvaluationReport) -> None:
    ours, theirs = (_comparable(json.loads(r.to_json())) for r in (merged, single))
    assert ours == theirs


def _toy(**kwargs: Any) -> heta_nb.EvaluationReport:
    kwargs.setdefault("query_modes", ["good", "poor"])
    kwargs.setdefault("report_id", "whole")
    kwargs.setdefault("kb", exact_kb)
    kwargs.setdefault("store", None)
    return heta_nb.evaluate(
        kwargs.pop("benchmark", None) or toy_benchmark(), knowledge_base_name="toy kb", progress=False, **kwargs
    )


# -- merge: equal to a single run ------------------------------------------------------


def _two_unit_toy() -> Benchmark:
    base = toy_benchmark(12)
    units = (
        BenchmarkRunUnit(unit_id="u-a", case_ids=tuple(c.case_id for c in base.cases[:6])),
        BenchmarkRunUnit(unit_id="u b", case_ids=tuple(c.case_id for c in base.cases[4:])),  # overlapping ids
    )
    return Benchmark(MANIFEST, base.documents, base.cases, units=units, evaluators=base.default_evaluators)


def _flaky_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    if query.endswith("question 3?") and mode == "poor":
        raise RuntimeError("backend down")
    return exact_kb(query, mode=mode, top_k=top_k)


def _odd_evaluator(case: Any, response: Any) -> dict[str, Any]:
    if case.case_id.endswith("5"):
        raise ValueError("this evaluator fails here")  # recorded in the score's metadata
    return {"name": "odd", "value": float("nan") if case.case_id.endswith("2") else 1.0}


def test_merged_shards_are_the_single_run_with_units_errors_and_nan_scores() -> None:
    """Checked correct: errored cases, evaluator errors, NaN scores, 3 modes, 2 units, empty shards."""

    def run(**kwargs: Any) -> heta_nb.EvaluationReport:
        return _toy(
            benchmark=_two_unit_toy(),
            kb=_flaky_kb,
            query_modes=["good", "poor", "other"],
            evaluators=["evidence_recall@3", "answer_contains", _odd_evaluator],
            **kwargs,
        )

    single = run()
    assert single.metadata["heta_nb"]["errors"] > 0 and math.isnan(single.score_summary["good.odd"])
    for count in (1, 3, 40):  # 40 shards: most get no case at all
        shards = [run(shard=(i, count)) for i in range(count)]
        assert count < 40 or any(not s.case_results for s in shards)
        _same_report(heta_nb.merge_reports(shards), single)
        _same_report(heta_nb.merge_reports(shards[::-1]), single)


@requires_heta
def test_merged_recipe_shards_have_every_units_kb_and_warnings(tmp_path: Path) -> None:
    """Recipe-built shards build only the units they have cases in (shard 0: one unit, shard 4: none).

    The merge used to refuse them (two single-KB manifests of different names), or keep
    only the first shard's KB manifest and warnings.
    """
    lighthouse = heta_nb.load_benchmark(FIXTURES, manifest={**MANIFEST, "name": "lighthouse_mini"})
    units = (
        BenchmarkRunUnit(unit_id="coast", document_ids=("lh1", "lh2", "lh6", "lh8"), case_ids=("c01", "c02", "c05")),
        BenchmarkRunUnit(unit_id="Harbour Towns", document_ids=("lh3", "lh4", "lh5", "lh9"), case_ids=("c03", "c06")),
    )
    bench = Benchmark(lighthouse.manifest, lighthouse.documents, lighthouse.cases, units=units)

    def run(name: str, **kwargs: Any) -> heta_nb.EvaluationReport:
        return heta_nb.evaluate(
            bench,
            recipe=heta_recipe(tmp_path / name),  # each shard on its own machine: its own stores
            knowledge_base_name="lh multi",
            query_modes=["full_text_search", "no_such_mode_zz"],  # a warning per unit
            evaluators=["evidence_recall@3"],
            top_k=5,
            report_id="whole",
            progress=False,
            workspace=tmp_path / "ws",
            **kwargs,
        )

    single = run("single")
    assert len(single.knowledge_base_manifest["knowledge_bases"]) == 2
    assert sum("not available in 'lh multi-" in w for w in single.metadata["heta_nb"]["warnings"]) == 2
    shards = [run(f"shard{i}", shard=(i, 5)) for i in range(5)]
    assert {r.unit_id for r in shards[0].case_results} == {"coast"} and not shards[4].case_results
    for order in (shards, shards[::-1], [shards[4], shards[1], shards[0], shards[3], shards[2]]):
        _same_report(heta_nb.merge_reports(order), single)


def test_merge_of_resumed_and_stored_shards_does_not_depend_on_their_order(tmp_path: Path) -> None:
    """``resumed`` used to be the first given shard's; now the total, whatever the order."""
    store = heta_nb.ReportStore(tmp_path)
    kwargs: dict[str, Any] = {"benchmark": toy_benchmark(60), "store": store, "kb": SlowKB(0)}
    single = _toy(report_id="single", **kwargs)
    run = heta_nb.start(
        toy_benchmark(60),
        kb=SlowKB(0.01),
        query_modes=["good", "poor"],
        store=store,
        report_id="whole",
        shard=(1, 3),
        knowledge_base_name="toy kb",
        progress=False,
        concurrency=2,
    )
    deadline = time.monotonic() + 20
    while run.state.done < 4 and time.monotonic() < deadline:
        time.sleep(0.005)
    run.cancel()
    assert run.result(timeout=20).metadata["heta_nb"]["status"] == "cancelled"
    resumed = _toy(shard=(1, 3), resume=True, **kwargs)
    count = resumed.metadata["heta_nb"]["resumed"]
    assert count >= 4
    _toy(shard=(0, 3), **kwargs)
    _toy(shard=(2, 3), **kwargs)
    stored = [store.load("toy kb", f"whole__shard-{i}-of-3") for i in range(3)]
    files = [tmp_path / store.key_for("toy kb", f"whole__shard-{i}-of-3") for i in range(3)]
    merges = [heta_nb.merge_reports(order) for order in (stored, stored[::-1], [files[1], files[2], files[0]])]
    assert [m.to_dict() for m in merges[1:]] == [merges[0].to_dict()] * 2
    merged = merges[0]
    assert merged.report_id == "whole"
    assert list(merged.metadata["heta_nb"]["merged_from"]) == [f"whole__shard-{i}-of-3" for i in range(3)]
    assert merged.metadata["heta_nb"]["resumed"] == count
    data = merged.to_dict()
    data["metadata"]["heta_nb"]["resumed"] = 0  # the single run was not resumed
    _same_report(heta_nb.EvaluationReport.from_dict(data), single)


# -- merge: bad inputs -----------------------------------------------------------------


def test_merge_refuses_bad_inputs_with_one_clear_message() -> None:
    shards = [_toy(shard=(i, 3)) for i in range(3)]
    for one in (shards[0], "/some/report.json", shards[0].to_dict()):
        with pytest.raises(TypeError, match=r"takes a list of shard reports, got one \w+; pass them all"):
            heta_nb.merge_reports(one)
    with pytest.raises(ReportFormatError, match=r"^merge_reports: reports\[1\]: <int>: cannot load a report"):
        heta_nb.merge_reports([shards[0], 42, shards[2]])
    with pytest.raises(ValueError, match="shard 0 of 3 is in both 'whole__shard-0-of-3' and 'whole__shard-0-of-3'"):
        heta_nb.merge_reports([shards[0], shards[1], shards[0], shards[2]])
    with pytest.raises(ValueError, match="different trace: False in 'whole__shard-0-of-3' vs True in"):
        heta_nb.merge_reports([shards[0], _toy(shard=(1, 3), trace=True), shards[2]])
    # a shard of another version of the benchmark (same name and version, 20 cases, not 12)
    longer = _toy(shard=(1, 3), benchmark=toy_benchmark(20))
    with pytest.raises(ValueError, match="no shard has case 12 of unit 'corpus', yet 'whole__shard-1-of-3' has later"):
        heta_nb.merge_reports([shards[0], longer, shards[2]])
    units = _toy(shard=(1, 3), benchmark=_two_unit_toy())
    with pytest.raises(ValueError, match="different run_units: "):
        heta_nb.merge_reports([shards[0], units, shards[2]])


# -- the handle ------------------------------------------------------------------------


def _start(cases: int = 40, **kwargs: Any) -> EvaluationRun:
    kwargs.setdefault("kb", SlowKB(0.01))
    return heta_nb.start(
        toy_benchmark(cases),
        query_modes=["good"],
        store=None,
        knowledge_base_name="toy kb",
        progress=False,
        concurrency=2,
        **kwargs,
    )


def test_a_cancelled_await_leaves_the_run_and_its_result_alone() -> None:
    """``asyncio.wait_for(run, t)`` used to cancel the run's future: every later wait got CancelledError."""
    run = _start()

    async def wait_briefly() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(run, 0.05)

    asyncio.run(wait_briefly())
    report = run.result(timeout=30)
    assert report.metadata["heta_nb"]["status"] == "complete" and len(report.case_results) == 40
    assert run.status == "complete" and run.done()

    async def wait_again() -> heta_nb.EvaluationReport:
        return await run

    assert asyncio.run(wait_again()) is report


def test_results_from_several_threads_and_event_loops_are_the_same_report() -> None:
    """Checked correct: concurrent waits (threads, loops on threads) all get the one report."""
    run = _start(60)
    got: list[Any] = []

    def in_thread() -> None:
        got.append(run.result(timeout=30))

    def on_a_loop() -> None:
        async def wait() -> heta_nb.EvaluationReport:
            return await run

        got.append(asyncio.run(wait()))

    threads = [threading.Thread(target=target) for target in (in_thread, in_thread, on_a_loop, on_a_loop)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(got) == 4 and all(report is got[0] for report in got)
    run.cancel()
    run.cancel()  # after the end: nothing changes
    assert run.result(timeout=0) is got[0] and run.status == "complete"


class _ExitingKB:
    """An async KB that raises a BaseException the run does not catch."""

    name = "toy kb"

    async def query(self, query: str, *, mode: str, top_k: int, options: Any, trace: bool) -> Any:
        raise SystemExit(3)


def test_state_says_failed_when_the_run_dies_of_a_base_exception() -> None:
    """A ``SystemExit`` from KB code reached the caller, but ``state`` said ``running`` forever."""
    run = _start(4, kb=_ExitingKB())
    with pytest.raises(SystemExit):
        run.result(timeout=20)
    assert run.done() and run.status == "failed" and run.state.finished
    assert run.state.error is not None and run.state.error.startswith("SystemExit")


def test_result_starts_a_handle_that_was_cancelled_before_it_started() -> None:
    """A handle that was never started used to make ``result()`` wait forever."""
    config = RunConfig(
        benchmark=toy_benchmark(4), kb=exact_kb, query_modes=("good",), store=None, knowledge_base_name="toy kb"
    )
    run = EvaluationRun(config)
    assert run.status == "pending"
    run.cancel()
    report = run.result(timeout=10)
    assert report.metadata["heta_nb"]["status"] == "cancelled" and report.case_results == ()
    assert run.status == "cancelled"
