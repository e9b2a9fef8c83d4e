"""The benchmark lint finds gold data that can never score, before anything runs."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import FIXTURES, requires_heta

import heta_nb
from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.benchmark.lint import lint_benchmark

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


def _case(case_id: str, *evidence: BenchmarkEvidence, answers: tuple[str, ...] = ()) -> BenchmarkCase:
    return BenchmarkCase(case_id=case_id, query="q", expected=BenchmarkExpected(answers=answers, evidence=evidence))


def _codes(cases: list[BenchmarkCase], evaluators: list[Any]) -> dict[str, tuple[str, ...]]:
    manifest = heta_nb.BenchmarkManifest(**MANIFEST)
    return {issue.code: issue.case_ids for issue in lint_benchmark(cases, evaluators, manifest=manifest)}


def test_each_trap_is_reported_with_its_cases() -> None:
    prefix = "raw/benchmarks/lighthouse_mini/test"
    cases = [
        _case(
            "ok", BenchmarkEvidence(reference_id="lh1", locator={"source_key_prefix": f"{prefix}/lh1/"}), answers=("x",)
        ),
        _case("docid", BenchmarkEvidence(locator={"document_id": "lh6"})),
        _case("bare", BenchmarkEvidence(reference_id="lh6")),
        _case("both", BenchmarkEvidence(locator={"source_key": f"{prefix}/lh2/a.txt"}, text="fact")),
        _case("foreign", BenchmarkEvidence(locator={"source_key_prefix": "raw/benchmarks/other/test/lh1/"})),
        _case("mismatch", BenchmarkEvidence(reference_id="lh1", locator={"source_key_prefix": f"{prefix}/lh2/"})),
        _case("nothing"),
    ]
    found = _codes(cases, ["evidence_recall@5", "ndcg@5", "answer_contains"])
    assert found["locator_document_id"] == ("docid",)
    assert found["bare_reference_id"] == ("bare",)
    assert found["locator_and_text"] == ("both",)
    assert found["foreign_locator"] == ("foreign",)
    assert found["reference_locator_mismatch"] == ("mismatch",)
    assert found["no_evidence"] == ("nothing",)
    assert all("ok" not in ids for ids in found.values())
    assert set(found["no_answers"]) == {"docid", "bare", "both", "foreign", "mismatch", "nothing"}


def test_only_traps_relevant_to_the_chosen_evaluators() -> None:
    cases = [_case("bare", BenchmarkEvidence(reference_id="lh6"))]
    assert "bare_reference_id" in _codes(cases, ["evidence_recall@3"])
    assert _codes(cases, ["ndcg@3"]) == {}  # document metrics use the reference id itself


def test_the_fixture_benchmark_lints_its_known_traps() -> None:
    benchmark = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    found = _codes(list(benchmark.cases), ["evidence_recall@3", "answer_contains"])
    assert "c06" in found["locator_document_id"]  # spec §4.1: locator.document_id never matches
    assert "c05" in found["bare_reference_id"]  # a bare benchmark id never matches a chunk


@requires_heta
def test_the_runner_reports_lint_warnings_before_the_first_query(tmp_path: Any) -> None:
    from runner_support import exact_kb

    events: list[Any] = []
    calls_before_warnings: list[int] = []

    def kb(query: str, *, mode: str, top_k: int) -> Any:
        if not calls_before_warnings:
            calls_before_warnings.append(sum(1 for e in events if e.kind == "warning"))
        return exact_kb("What is the answer to question 1?", mode="good", top_k=top_k)

    heta_nb.evaluate(
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST),
        kb=kb,
        knowledge_base_name="k",
        query_modes=["m"],
        evaluators=["evidence_recall@3"],
        store=None,
        progress=False,
        on_event=events.append,
    )
    codes = [e.code for e in events if e.kind == "warning"]
    assert "locator_document_id" in codes and "bare_reference_id" in codes
    assert calls_before_warnings and calls_before_warnings[0] >= 2


@pytest.mark.parametrize("lint", [True, False])
def test_lint_can_be_turned_off(lint: bool) -> None:
    from runner_support import exact_kb

    events: list[Any] = []
    heta_nb.evaluate(
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST),
        kb=exact_kb,
        query_modes=["good"],
        knowledge_base_name="k",
        store=None,
        progress=False,
        evaluators=["evidence_recall@3"],
        lint=lint,
        on_event=lambda e: events.append(e) if e.kind == "warning" else None,
    )
    assert bool(events) is lint
