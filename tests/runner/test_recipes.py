"""Building KBs from Heta recipes: reuse, failures, names Heta refuses late."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import FIXTURES, UnitsBenchmark, heta_jsonl_benchmark, heta_recipe, requires_heta

import heta_nb
from heta_nb.runner import RunError

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


def heta_evaluators() -> tuple:
    from heta_framework.evaluation import (
        AnswerContains,
        AnswerExactMatch,
        EvidenceRecallAtK,
        beir_default_metrics,
    )

    return (
        EvidenceRecallAtK(k=3),
        AnswerContains(),
        AnswerExactMatch(),
        *beir_default_metrics(k_values=(3,)),
    )


def heta_benchmark() -> Any:
    return heta_jsonl_benchmark(*heta_evaluators())


def heta_run(root: Path, benchmark: Any, name: str, **kwargs: Any) -> Any:
    from heta_framework.evaluation import BenchmarkRunConfig, BenchmarkRunner, BenchmarkWorkspace

    result = asyncio.run(
        BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=heta_recipe(root),
            knowledge_base_name=name,
            query_modes=("full_text_search",),
            workspace=BenchmarkWorkspace(root_dir=root / "ws", cache_dir=root / "ws" / "cache"),
            config=BenchmarkRunConfig(top_k=5, report_id="heta", **kwargs),
        )
    )
    return heta_nb.load_report(result.report)


class TwoUnits(UnitsBenchmark):
    """A Heta BenchmarkProtocol object with two run units (as in the fixtures)."""

    def __init__(self, inner: Any) -> None:
        from heta_framework.evaluation import BenchmarkRunUnit

        units = (
            BenchmarkRunUnit(
                unit_id="coast",
                document_ids=("lh1", "lh2", "lh6", "lh8"),
                case_ids=("c01", "c02", "c05", "c10"),
            ),
            BenchmarkRunUnit(
                unit_id="Harbour Towns",
                document_ids=("lh3", "lh4", "lh5", "lh9"),
                case_ids=("c03", "c06", "c07", "c09"),
            ),
        )
        super().__init__(inner, units)


def heta_default_evaluators() -> tuple[Any, ...]:
    from heta_framework.evaluation import AnswerContains, EvidenceRecallAtK, beir_default_metrics

    return (EvidenceRecallAtK(k=3), AnswerContains(), *beir_default_metrics(k_values=(3,)))


class Units(UnitsBenchmark):
    """The JSONL fixture benchmark with the given run units."""

    def __init__(self, *units: Any, evaluators: tuple[Any, ...] = ()) -> None:
        super().__init__(heta_jsonl_benchmark(*(evaluators or heta_default_evaluators())), units)


def _workspace(root: Path) -> Any:
    from heta_framework.evaluation import BenchmarkWorkspace

    return BenchmarkWorkspace(root_dir=root / "ws", cache_dir=root / "ws" / "cache")


@requires_heta
def test_multi_unit_protocol_benchmark(tmp_path: Path) -> None:
    theirs = heta_run(tmp_path / "heta", TwoUnits(heta_benchmark()), "lighthouse multi")
    ours = heta_nb.evaluate(
        TwoUnits(heta_benchmark()),
        recipe=heta_recipe(tmp_path / "ours"),
        knowledge_base_name="lighthouse multi",
        query_modes=["full_text_search"],
        top_k=5,
        progress=False,
        workspace=tmp_path / "ws",
    )
    manifests = [m["name"] for m in ours.knowledge_base_manifests]
    assert manifests == ["lighthouse multi-coast", "lighthouse multi-harbour_towns"]
    assert set(ours.knowledge_base_manifest) == {"knowledge_bases"}
    assert [r.metadata["knowledge_base_name"] for r in ours.case_results][:1] == ["lighthouse multi-coast"]
    assert dict(ours.score_summary) == dict(theirs.score_summary)
    assert [r.case_id for r in ours.case_results] == [r.case_id for r in theirs.case_results]


@requires_heta
def test_rerun_reuses_the_built_kb_and_warns_about_contamination(tmp_path: Path) -> None:
    recipe = heta_recipe(tmp_path)
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    first = heta_nb.evaluate(
        bench,
        recipe=recipe,
        knowledge_base_name="kb",
        report_id="one",
        evaluators=["evidence_recall@3"],
        progress=False,
    )
    asyncio.run(recipe.stores.objects.put("raw/unrelated/notes.txt", b"Harrow Point notes"))
    events: list[Any] = []
    second = heta_nb.evaluate(
        bench,
        recipe=recipe,
        knowledge_base_name="kb",
        report_id="two",
        evaluators=["evidence_recall@3"],
        progress=False,
        on_event=events.append,
    )
    builds = [e.status for e in events if e.kind == "build_finished"]
    assert builds == ["reused"]
    warnings = [e.code for e in events if e.kind == "warning"]
    assert "corpus_contamination" in warnings
    assert dict(first.score_summary) == dict(second.score_summary)
    store = heta_nb.ReportStore(recipe.stores.objects)
    assert sorted(store.list()["report_id"]) == ["one", "two"]


@requires_heta
def test_failed_recipe_step_is_recorded_not_fatal(tmp_path: Path) -> None:
    """Heta answers with a bare missing-asset LookupError; the warning kept in the report names the step."""
    events: list[Any] = []
    report = heta_nb.evaluate(
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST),
        recipe=heta_recipe(tmp_path, encoding="no_such_encoding"),
        knowledge_base_name="kb",
        evaluators=["evidence_recall@3"],
        progress=False,
        retries=0,
        lint=False,
        on_event=events.append,
    )
    steps = [(e.index, e.name, e.status) for e in events if e.kind == "build_step"]
    assert steps == [
        (0, "parse_documents", "running"),
        (0, "parse_documents", "succeeded"),
        (1, "split_documents", "running"),
        (1, "split_documents", "failed"),
    ]
    [started] = [e for e in events if e.kind == "build_started"]
    assert started.steps == ("parse_documents", "split_documents", "index_full_text")
    errors = {(r.error.error_type, r.error.message) for r in report.errors()}
    assert report.error_count == 10 and len(errors) == 1
    [(error_type, message)] = errors
    assert error_type == "LookupError"
    assert message.startswith("full_text_search requires missing search asset(s)")
    assert report.knowledge_base_manifest["run_record"]["status"] == "failed"
    assert dict(report.score_summary) == {}
    [warning] = [e for e in events if e.kind == "warning" and e.code == "build_failed"]
    assert "step 'split_documents' failed" in warning.message and "no_such_encoding" in warning.message
    assert any("step 'split_documents' failed" in w for w in report.metadata["heta_nb"]["warnings"])
    assert not [e for e in events if e.kind == "warning" and e.code == "unknown_mode"]


@requires_heta
@pytest.mark.hostile
def test_names_heta_would_refuse_late_are_refused_before_any_write(tmp_path: Path) -> None:
    from heta_nb.runner import RunError

    recipe = heta_recipe(tmp_path)
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    with pytest.raises(RunError, match="at most 80 letters, digits"):
        heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="../evil", progress=False)
    with pytest.raises(RunError, match="at most 80 letters"):
        heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="x" * 81, progress=False)
    assert not (tmp_path / "objects").exists() or not list((tmp_path / "objects").rglob("*.txt"))


@requires_heta
@pytest.mark.hostile
def test_a_protocol_benchmark_with_a_nesting_document_id_writes_nothing(tmp_path: Path) -> None:
    from heta_framework.evaluation import BenchmarkDocument

    class Nesting(TwoUnits):
        def __init__(self) -> None:
            super().__init__(heta_benchmark())

        async def run_units(self, prepared: Any) -> Any:
            from heta_framework.evaluation import BenchmarkRunUnit

            yield BenchmarkRunUnit(unit_id="corpus")  # every document, the nesting one included

        async def documents(self, prepared: Any) -> Any:
            async for document in self.inner.documents(prepared):
                yield document
            yield BenchmarkDocument(document_id="a/b", name="x.txt", media_type="text/plain", data=b"nested")

    recipe = heta_recipe(tmp_path)
    with pytest.raises(ValueError, match="plain path segment"):
        heta_nb.evaluate(Nesting(), recipe=recipe, knowledge_base_name="kb", progress=False, workspace=tmp_path / "w")
    assert not (tmp_path / "objects").exists() or list((tmp_path / "objects").rglob("*")) == []


@requires_heta
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
        return [e for e in events if e.kind == "warning"]

    assert run("first") == []
    assert run("second") == []  # same raw keys, same bytes
    asyncio.run(recipe.stores.objects.put("raw/unrelated/notes.txt", b"Harrow Point notes"))
    [warning] = run("third")
    assert warning.code == "corpus_contamination" and "raw/unrelated/notes.txt" in warning.message
    assert "fresh object store" in warning.message


# -- defects --------------------------------------------------------------------------------


@requires_heta
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
    assert [e.code for e in events if e.kind == "warning"] == ["kb_rebuilt"]
    steps = [(e.name, e.status) for e in events if e.kind == "build_step"]
    assert steps[-1] == ("index_full_text", "succeeded") and len(steps) == 6
    assert [e.status for e in events if e.kind == "build_finished"] == ["succeeded"]
    assert second.knowledge_base_manifest["run_record"]["status"] == "succeeded"


@requires_heta
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


@requires_heta
def test_recipe_run_without_documents_is_refused_before_any_write(tmp_path: Path) -> None:
    """Heta refuses it (``benchmark produced no documents``); before, the KB indexed whatever raw/ held."""

    recipe = heta_recipe(tmp_path)
    asyncio.run(recipe.stores.objects.put("raw/unrelated/notes.txt", b"Harrow Point notes"))
    cases = pd.DataFrame({"case_id": ["c1"], "query": ["Harrow Point?"]})
    bench = heta_nb.Benchmark.from_frame(cases, manifest=MANIFEST)
    with pytest.raises(ValueError, match="no documents"):
        heta_nb.evaluate(bench, recipe=recipe, knowledge_base_name="kb", evaluators=["hit@3"], progress=False)
    assert not (tmp_path / "objects" / "_heta").exists()


@requires_heta
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


@requires_heta
def test_misspelled_mode_with_a_recipe_is_refused_before_the_kb_is_built(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="did you mean 'full_text_search'"):
        heta_nb.evaluate(
            heta_nb.load_benchmark(
                FIXTURES, manifest={"name": "m", "version": "1", "split": "test", "task_type": "qa"}
            ),
            recipe=heta_recipe(tmp_path),
            knowledge_base_name="kb",
            query_modes=["full_text_serach"],
            evaluators=["evidence_recall@3"],
            progress=False,
        )
    assert not (tmp_path / "objects").exists() or not any((tmp_path / "objects").rglob("*.json"))


@requires_heta
def test_misspelled_mode_with_the_demo_query_engines_names_extractive_answer(tmp_path: Path) -> None:
    from heta_nb import demo

    with pytest.raises(RunError, match="did you mean 'extractive_answer'"):
        heta_nb.start(
            demo.load_benchmark(),
            recipe=demo.recipes(tmp_path)["small-chunks"],
            query_engines=demo.demo_query_engines(),
            query_modes=["extractive_answr"],
            knowledge_base_name="kb",
            progress=False,
        )
