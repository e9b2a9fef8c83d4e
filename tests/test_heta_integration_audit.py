"""heta_nb's recipe= runner against Heta's own BenchmarkRunner, with real Heta objects only.

Each defect test fails on the code before the audit's fix; the parity tests pin what
was found correct (documents, KB naming, manifests, order and summary equal to Heta's).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, UnitsBenchmark, heta_jsonl_benchmark, heta_recipe, requires_heta

import heta_nb
from heta_nb.benchmark.lint import lint_benchmark

pytestmark = requires_heta

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}
PREFIX = "raw/benchmarks/lighthouse_mini/test"
VOLATILE = {"started_at", "finished_at", "created_at", "updated_at", "run_id", "latency_ms", "heta_nb"}


def heta_evaluators() -> tuple[Any, ...]:
    from heta_framework.evaluation import AnswerContains, EvidenceRecallAtK, beir_default_metrics

    return (EvidenceRecallAtK(k=3), AnswerContains(), *beir_default_metrics(k_values=(3,)))


class Units(UnitsBenchmark):
    """The JSONL fixture benchmark with the given run units."""

    def __init__(self, *units: Any, evaluators: tuple[Any, ...] = ()) -> None:
        super().__init__(heta_jsonl_benchmark(*(evaluators or heta_evaluators())), units)


def two_units() -> Units:
    from heta_framework.evaluation import BenchmarkRunUnit

    return Units(
        BenchmarkRunUnit(unit_id="coast", document_ids=("lh1", "lh2", "lh6", "lh8"), case_ids=("c01", "c02", "c10")),
        BenchmarkRunUnit(unit_id="Harbour Towns", document_ids=("lh3", "lh4", "lh9"), case_ids=("c03", "c09")),
    )


def heta_run(root: Path, benchmark: Any, name: str) -> dict[str, Any]:
    """Heta's BenchmarkRunner on ``benchmark``; returns the report.json it wrote."""
    from heta_framework.evaluation import BenchmarkRunConfig, BenchmarkRunner, BenchmarkWorkspace

    recipe = heta_recipe(root)
    result = asyncio.run(
        BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=recipe,
            knowledge_base_name=name,
            query_modes=("full_text_search",),
            workspace=BenchmarkWorkspace(root_dir=root / "ws", cache_dir=root / "ws" / "cache"),
            config=BenchmarkRunConfig(top_k=5, report_id="rep"),
        )
    )
    return json.loads(asyncio.run(recipe.stores.objects.get(result.report_key)))


def ours_run(root: Path, benchmark: Any, name: str, events: list[Any] | None = None) -> dict[str, Any]:
    report = heta_nb.evaluate(
        benchmark,
        recipe=heta_recipe(root),
        knowledge_base_name=name,
        query_modes=["full_text_search"],
        top_k=5,
        report_id="rep",
        progress=False,
        workspace=root / "ws",
        on_event=(events.append if events is not None else None),
    )
    return json.loads(report.to_json())


def raw_objects(root: Path) -> dict[str, bytes]:
    base = root / "objects"
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted((base / "raw").rglob("*")) if p.is_file()}


def differences(theirs: Any, ours: Any, path: str = "") -> list[str]:
    """Field-by-field differences, times, run ids, latencies and heta_nb's own keys left out."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        found = []
        for key in sorted(set(theirs) | set(ours)):
            if key in VOLATILE:
                continue
            if key not in theirs or key not in ours:
                found.append(f"{path}.{key}: only in {'ours' if key in ours else 'heta'}")
            else:
                found += differences(theirs[key], ours[key], f"{path}.{key}")
        return found
    if isinstance(theirs, list) and isinstance(ours, list):
        if len(theirs) != len(ours):
            return [f"{path}: {len(theirs)} vs {len(ours)} items"]
        return [d for i, (a, b) in enumerate(zip(theirs, ours)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if theirs == ours else [f"{path}: {theirs!r} != {ours!r}"]


# -- parity with Heta's BenchmarkRunner (found correct) -----------------------------------


def test_recipe_path_matches_hetas_runner_field_by_field(tmp_path: Path) -> None:
    """One corpus unit, the benchmark's own evaluators (none given to heta_nb): the same store and report."""
    theirs = heta_run(tmp_path / "heta", heta_jsonl_benchmark(*heta_evaluators()), "lighthouse mini")
    ours = ours_run(tmp_path / "ours", heta_jsonl_benchmark(*heta_evaluators()), "lighthouse mini")
    assert raw_objects(tmp_path / "heta") == raw_objects(tmp_path / "ours")
    assert differences(theirs, ours) == []
    assert list(ours) == list(theirs)
    assert ours["knowledge_base_manifest"]["name"] == "lighthouse mini"
    assert ours["score_summary"] == theirs["score_summary"] and len(theirs["score_summary"]) == 7


def test_multi_unit_matches_heta_and_warns_that_units_share_the_corpus(tmp_path: Path) -> None:
    """Heta's unit N also searches units before it (spec 5.5); heta_nb matches it and now says so."""
    theirs = heta_run(tmp_path / "heta", two_units(), "lh multi")
    events: list[Any] = []
    ours = ours_run(tmp_path / "ours", two_units(), "lh multi", events)
    assert raw_objects(tmp_path / "heta") == raw_objects(tmp_path / "ours")
    assert differences(theirs, ours) == []
    names = [m["name"] for m in ours["knowledge_base_manifest"]["knowledge_bases"]]
    assert names == ["lh multi-coast", "lh multi-harbour_towns"]
    second = ours["knowledge_base_manifest"]["knowledge_bases"][1]["run_record"]["artifacts"]
    assert len(second["source_keys"]) == 3 and len(second["parsed_document_keys"]) == 7  # the leak, as Heta
    warnings = [e for e in events if e.kind == "warning" and e.code == "unit_contamination"]
    assert len(warnings) == 1
    assert "'Harbour Towns'" in warnings[0].message and f"{PREFIX}/lh1/harrow_point.txt" in warnings[0].message
    assert "own recipe and fresh stores" in warnings[0].message
    assert not any(e.kind == "warning" and e.code == "corpus_contamination" for e in events)


def test_contamination_warning_only_for_foreign_raw_objects(tmp_path: Path) -> None:
    """A second run of the same benchmark into the same store reads the same corpus: no warning."""
    recipe = heta_recipe(tmp_path)
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)

    def run(name: str) -> list[Any]:
        events: list[Any] = []
        heta_nb.evaluate(
            bench,
            recipe=recipe,
            knowledge_base_name=name,
            evaluators=["evidence_recall@3"],
            progress=False,
            on_event=events.append,
            lint=False,
        )
        # (offline, the first build also says tiktoken could not load its encoding: not about the corpus)
        return [e for e in events if e.kind == "warning" and e.code != "tiktoken_unavailable"]

    assert run("first") == []
    assert run("second") == []  # same raw keys, same bytes
    asyncio.run(recipe.stores.objects.put("raw/unrelated/notes.txt", b"Harrow Point notes"))
    [warning] = run("third")
    assert warning.code == "corpus_contamination" and "raw/unrelated/notes.txt" in warning.message
    assert "fresh object store" in warning.message


# -- defects --------------------------------------------------------------------------------


def test_reused_kb_whose_in_memory_index_is_gone_is_rebuilt(tmp_path: Path) -> None:
    """A re-run (or resume) with a new recipe object: the stored KB says "succeeded", but its
    in-memory BM25 index is empty. Before: every case failed with ``text index does not exist``."""
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    settings: dict[str, Any] = dict(
        knowledge_base_name="kb", evaluators=["evidence_recall@3"], progress=False, lint=False, retries=0
    )
    first = heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path), report_id="one", **settings)
    events: list[Any] = []
    second = heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path), report_id="two", on_event=events.append, **settings)
    assert second.error_count == 0
    assert dict(second.score_summary) == dict(first.score_summary) == {"full_text_search.evidence_recall@3": 0.7}
    assert [e.code for e in events if e.kind == "warning" and e.code != "tiktoken_unavailable"] == ["kb_rebuilt"]
    steps = [(e.name, e.status) for e in events if e.kind == "build_step"]
    assert steps[-1] == ("index_full_text", "succeeded") and len(steps) == 6
    assert [e.status for e in events if e.kind == "build_finished"] == ["succeeded"]
    assert second.knowledge_base_manifest["run_record"]["status"] == "succeeded"


def test_reusing_a_kb_built_by_another_recipe_is_refused(tmp_path: Path) -> None:
    """Before: the old KB was loaded and its results reported under the new recipe's manifest."""
    from heta_nb.runner import RunFailedError

    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    settings: dict[str, Any] = dict(knowledge_base_name="kb", evaluators=["evidence_recall@3"], progress=False)
    heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path, chunk_size=120), report_id="one", **settings)
    with pytest.raises(RunFailedError, match="built by a different recipe") as caught:
        heta_nb.evaluate(bench, recipe=heta_recipe(tmp_path, chunk_size=400), report_id="two", **settings)
    assert "another knowledge_base_name" in str(caught.value)
    assert caught.value.report.case_results == ()


def test_recipe_run_without_documents_is_refused_before_any_write(tmp_path: Path) -> None:
    """Heta refuses it (``benchmark produced no documents``); before, the KB indexed whatever raw/ held."""
    import pandas as pd

    recipe = heta_recipe(tmp_path)
    asyncio.run(recipe.stores.objects.put("raw/unrelated/notes.txt", b"Harrow Point notes"))
    cases = pd.DataFrame({"case_id": ["c1"], "query": ["Harrow Point?"]})
    bench = heta_nb.Benchmark.from_frame(cases, manifest=MANIFEST)
    with pytest.raises(ValueError, match="no documents"):
        heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="kb", evaluators=["hit@3"], progress=False)
    assert not (tmp_path / "objects" / "_heta").exists()


def test_a_protocol_benchmark_without_run_units_is_refused_as_heta_does(tmp_path: Path) -> None:
    from heta_framework.evaluation import BenchmarkRunConfig, BenchmarkRunner

    with pytest.raises(ValueError, match="no run units"):
        asyncio.run(
            BenchmarkRunner().run(
                benchmark=Units(),
                recipe=heta_recipe(tmp_path / "heta"),
                knowledge_base_name="kb",
                query_modes=("full_text_search",),
                config=BenchmarkRunConfig(persist_report=False),
                workspace=_workspace(tmp_path),
            )
        )
    with pytest.raises(ValueError, match="no run units"):
        heta_nb.evaluate(
            Units(), recipe=heta_recipe(tmp_path / "ours"), knowledge_base_name="kb", progress=False, workspace=tmp_path
        )


def _workspace(root: Path) -> Any:
    from heta_framework.evaluation import BenchmarkWorkspace

    return BenchmarkWorkspace(root_dir=root / "ws", cache_dir=root / "ws" / "cache")


# -- a prebuilt Heta KB as kb= (found correct) -----------------------------------------------


def test_prebuilt_heta_kb_missing_modes_are_warned_and_per_case_errors(tmp_path: Path) -> None:
    from heta_framework.kb import KnowledgeBase

    recipe = heta_recipe(tmp_path)
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="kb", evaluators=["evidence_recall@3"], progress=False)
    kb = asyncio.run(KnowledgeBase.load(recipe=recipe, name="kb"))
    events: list[Any] = []
    report = heta_nb.evaluate(
        bench,
        kb=kb,
        query_modes=["full_text_search", "vector_search", "no_such_mode"],
        evaluators=["evidence_recall@3"],
        progress=False,
        retries=0,
        lint=False,
        report_id="prebuilt",
        on_event=events.append,
    )
    warned = [e.message for e in events if e.kind == "warning" and e.code == "unknown_mode"]
    assert len(warned) == 2 and "vector_search" in warned[0] and "no_such_mode" in warned[1]
    errors = {(r.query_mode, r.error.error_type, r.error.message) for r in report.errors()}
    assert errors == {
        ("vector_search", "LookupError", "vector_search requires missing search asset(s): chunk_vector_index"),
        ("no_such_mode", "LookupError", "query engine is not registered: no_such_mode"),
    }
    assert report.score_summary["full_text_search.evidence_recall@3"] == 0.7


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


def test_lint_on_hetas_bundled_beir_adapter_reports_nothing(tmp_path: Path) -> None:
    from heta_framework.evaluation import BeirBenchmark, EvidenceRecallAtK, beir_default_metrics

    from heta_nb.runner.sources import load_source

    source = asyncio.run(
        load_source(BeirBenchmark(dataset="mini", data_root=FIXTURES / "beir_mini", download=False), workspace=tmp_path)
    )
    for evaluators in (source.evaluators, (EvidenceRecallAtK(k=3), *beir_default_metrics(k_values=(3,)))):
        assert lint_benchmark(source.cases, evaluators, manifest=source.manifest) == []


def _manifest() -> Any:
    return heta_nb.BenchmarkManifest(**MANIFEST)


def _cases(evidence: dict[str, Any]) -> list[Any]:
    from heta_framework.evaluation import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected

    return [
        BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(evidence=(BenchmarkEvidence(**evidence),)))
    ]
