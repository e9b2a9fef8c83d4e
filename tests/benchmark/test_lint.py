"""The benchmark lint: traps the chosen evaluators cannot score."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, UnitsBenchmark, heta_jsonl_benchmark, heta_recipe, requires_heta

import heta_nb
from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.benchmark.lint import lint_benchmark

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


def _case(case_id: str, *evidence: BenchmarkEvidence, answers: tuple[str, ...] = ()) -> BenchmarkCase:
    return BenchmarkCase(case_id=case_id, query="q", expected=BenchmarkExpected(answers=answers, evidence=evidence))


def _codes(cases: list[BenchmarkCase], evaluators: list[Any]) -> dict[str, tuple[str, ...]]:
    manifest = heta_nb.BenchmarkManifest(**MANIFEST)
    return {issue.code: issue.case_ids for issue in lint_benchmark(cases, evaluators, manifest=manifest)}


PREFIX = "raw/benchmarks/lighthouse_mini/test"


def heta_evaluators() -> tuple[Any, ...]:
    from heta_framework.evaluation import AnswerContains, EvidenceRecallAtK, beir_default_metrics

    return (EvidenceRecallAtK(k=3), AnswerContains(), *beir_default_metrics(k_values=(3,)))


class Units(UnitsBenchmark):
    """The JSONL fixture benchmark with the given run units."""

    def __init__(self, *units: Any, evaluators: tuple[Any, ...] = ()) -> None:
        super().__init__(heta_jsonl_benchmark(*(evaluators or heta_evaluators())), units)


def _workspace(root: Path) -> Any:
    from heta_framework.evaluation import BenchmarkWorkspace

    return BenchmarkWorkspace(root_dir=root / "ws", cache_dir=root / "ws" / "cache")


# -- lint: reported exactly when the chosen evaluators can never match ---------------------


def _doc_id(document_id: str) -> str:
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    document = next(d for d in bench.documents if d.document_id == document_id)
    return "doc_" + hashlib.sha256(document.read_bytes()).hexdigest()[:16]


def _lint_and_score(tmp_path: Path, evidence: dict[str, Any], evaluators: tuple[Any, ...]) -> tuple[set[str], Any]:
    """Lint codes for one case (c01's query) with ``evidence``, and its scores in a real Heta run."""
    from heta_framework.evaluation import (
        BenchmarkCase,
        BenchmarkEvidence,
        BenchmarkExpected,
        BenchmarkRunConfig,
        BenchmarkRunner,
    )

    case = BenchmarkCase(
        case_id="c01",
        query="Who designed the Harrow Point Lighthouse?",
        expected=BenchmarkExpected(answers=("Mirela Ostrand",), evidence=(BenchmarkEvidence(**evidence),)),
    )

    class OneCase(Units):
        async def cases(self, prepared: Any) -> Any:
            yield case

        async def run_units(self, prepared: Any) -> Any:
            from heta_framework.evaluation import BenchmarkRunUnit

            yield BenchmarkRunUnit(unit_id="corpus")

    bench = OneCase(evaluators=evaluators)
    codes = {issue.code for issue in lint_benchmark([case], evaluators, manifest=bench.manifest)}
    result = asyncio.run(
        BenchmarkRunner().run(
            benchmark=bench,
            recipe=heta_recipe(tmp_path),
            knowledge_base_name="kb",
            query_modes=("full_text_search",),
            workspace=_workspace(tmp_path),
            config=BenchmarkRunConfig(top_k=5, persist_report=False),
        )
    )
    [scored] = result.report.case_results
    return codes, {s.name: (s.value, bool(s.metadata.get("skipped"))) for s in scored.scores}


def _manifest() -> Any:
    return heta_nb.BenchmarkManifest(**MANIFEST)


def _cases(evidence: dict[str, Any]) -> list[Any]:
    from heta_framework.evaluation import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected

    return [
        BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(evidence=(BenchmarkEvidence(**evidence),)))
    ]


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


@pytest.mark.parametrize(
    ("labels", "intended"),
    [
        ({"question_type": "unanswerable"}, True),  # the demo benchmark's way
        ({"kind": " Unanswerable "}, True),
        ({"unanswerable": True}, True),
        ({"answerable": False}, True),
        ({"question_type": "lookup"}, False),
        ({"unanswerable": "no"}, False),
        ({"answerable": True}, False),
        ({}, False),
    ],
)
def test_cases_labelled_unanswerable_have_no_gold_by_design(labels: dict[str, Any], intended: bool) -> None:
    """A case that says it has no answer is not a gold gap: the lint (a run warning) stays quiet."""
    import dataclasses

    case = dataclasses.replace(_case("q090"), labels=labels)
    found = _codes([case], ["evidence_recall@5", "answer_contains"])
    expected = {} if intended else {"no_evidence": ("q090",), "no_answers": ("q090",)}
    assert found == expected


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


@requires_heta
def test_lint_reports_heta_beir_metrics_that_cannot_judge_locator_only_evidence(tmp_path: Path) -> None:
    """Heta's BeirRetrievalMetric reads reference ids only. Before: not reported (heta_nb's metrics read locators)."""
    from heta_framework.evaluation import BeirRetrievalMetric

    evidence = {"locator": {"source_key_prefix": f"{PREFIX}/lh1/"}}
    codes, scores = _lint_and_score(tmp_path, evidence, (BeirRetrievalMetric("recall", 3),))
    assert scores == {"beir_recall@3": (0.0, True)}  # skipped: it can never score
    assert codes == {"no_document_ids"}
    # heta_nb's metric of that name is Heta's (reference ids only): the same trap; its recall@3 reads the locator
    assert {i.code for i in lint_benchmark(_cases(evidence), ["beir_recall@3"], manifest=_manifest())} == {
        "no_document_ids"
    }
    assert {i.code for i in lint_benchmark(_cases(evidence), ["recall@3"], manifest=_manifest())} == set()
    zero = {"reference_id": "lh1", "metadata": {"relevance": 0}}
    assert {i.code for i in lint_benchmark(_cases(zero), [BeirRetrievalMetric("ndcg", 3)], manifest=_manifest())} == {
        "no_document_ids"
    }


@requires_heta
@pytest.mark.parametrize(
    ("evidence", "evaluator"),
    [
        # UDA's shape: reference_id is an evidence name; evidence_recall ignores it and uses the locator
        (
            {
                "reference_id": "evidence_1",
                "locator": {"source_key_prefix": f"{PREFIX}/lh1/"},
                "text": "Harrow Point Lighthouse",
            },
            "recall",
        ),
        # a reference id that is Heta's parsed id matches result.source.document_id
        ({"reference_id": "DOC:lh1"}, "recall"),
        # a prefix that covers the whole benchmark matches every chunk of it
        ({"locator": {"source_key_prefix": "raw/benchmarks/lighthouse_mini/"}}, "recall"),
        # a foreign locator means nothing to an answer metric
        ({"locator": {"source_key_prefix": "raw/benchmarks/other/test/x/"}}, "answer"),
    ],
)
def test_lint_is_silent_for_evidence_that_can_match(tmp_path: Path, evidence: dict[str, Any], evaluator: str) -> None:
    """Before: reference_locator_mismatch, bare_reference_id and foreign_locator were reported here."""
    from heta_framework.evaluation import AnswerContains, EvidenceRecallAtK

    if evidence.get("reference_id") == "DOC:lh1":
        evidence = {"reference_id": _doc_id("lh1")}
    chosen = (EvidenceRecallAtK(k=3),) if evaluator == "recall" else (AnswerContains(),)
    codes, scores = _lint_and_score(tmp_path, evidence, chosen)
    codes.discard("locator_and_text")  # a caveat that stays (both must match within one chunk)
    assert codes == set()
    if evaluator == "recall":
        assert scores == {"evidence_recall@3": (1.0, False)}  # it did match


@requires_heta
def test_lint_still_reports_the_traps_that_never_match(tmp_path: Path) -> None:
    from heta_framework.evaluation import EvidenceRecallAtK

    for evidence, code in (
        ({"locator": {"document_id": "lh1"}}, "locator_document_id"),
        ({"reference_id": "lh1"}, "bare_reference_id"),
        ({"locator": {"source_key_prefix": "raw/benchmarks/other/test/lh1/"}}, "foreign_locator"),
    ):
        codes, scores = _lint_and_score(tmp_path / code, evidence, (EvidenceRecallAtK(k=3),))
        assert codes == {code}
        assert scores == {"evidence_recall@3": (0.0, False)}


@requires_heta
def test_lint_on_hetas_bundled_beir_adapter_reports_nothing(tmp_path: Path) -> None:
    from heta_framework.evaluation import BeirBenchmark, EvidenceRecallAtK, beir_default_metrics

    from heta_nb.runner.sources import load_source

    source = asyncio.run(
        load_source(BeirBenchmark(dataset="mini", data_root=FIXTURES / "beir_mini", download=False), workspace=tmp_path)
    )
    for evaluators in (source.evaluators, (EvidenceRecallAtK(k=3), *beir_default_metrics(k_values=(3,)))):
        assert lint_benchmark(source.cases, evaluators, manifest=source.manifest) == []
