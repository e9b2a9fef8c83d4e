"""Recipe runs against Heta's own BenchmarkRunner, field by field."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from helpers import FIXTURES, UnitsBenchmark, heta_jsonl_benchmark, heta_recipe, requires_heta

import heta_nb

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


PREFIX = "raw/benchmarks/lighthouse_mini/test"


VOLATILE = {"started_at", "finished_at", "created_at", "updated_at", "run_id", "latency_ms", "heta_nb"}


def heta_default_evaluators() -> tuple[Any, ...]:
    from heta_framework.evaluation import AnswerContains, EvidenceRecallAtK, beir_default_metrics

    return (EvidenceRecallAtK(k=3), AnswerContains(), *beir_default_metrics(k_values=(3,)))


class Units(UnitsBenchmark):
    """The JSONL fixture benchmark with the given run units."""

    def __init__(self, *units: Any, evaluators: tuple[Any, ...] = ()) -> None:
        super().__init__(heta_jsonl_benchmark(*(evaluators or heta_default_evaluators())), units)


def two_units() -> Units:
    from heta_framework.evaluation import BenchmarkRunUnit

    return Units(
        BenchmarkRunUnit(unit_id="coast", document_ids=("lh1", "lh2", "lh6", "lh8"), case_ids=("c01", "c02", "c10")),
        BenchmarkRunUnit(unit_id="Harbour Towns", document_ids=("lh3", "lh4", "lh9"), case_ids=("c03", "c09")),
    )


def heta_recipe_run(root: Path, benchmark: Any, name: str) -> dict[str, Any]:
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


@requires_heta
def test_same_numbers_as_hetas_runner(tmp_path: Path) -> None:
    theirs = heta_run(tmp_path / "heta", heta_benchmark(), "lighthouse mini")
    events: list[Any] = []
    ours = heta_nb.evaluate(
        heta_benchmark(),
        recipe=heta_recipe(tmp_path / "ours"),
        knowledge_base_name="lighthouse mini",
        query_modes=["full_text_search"],
        top_k=5,
        report_id="ours",
        progress=False,
        on_event=events.append,
    )
    assert dict(ours.score_summary) == dict(theirs.score_summary)
    # to_dict() is plain JSON, though the results share Heta's data (its tuples included)
    assert ours.to_dict() == json.loads(ours.to_json())
    assert [(r.case_id, r.query_mode) for r in ours.case_results] == [
        (r.case_id, r.query_mode) for r in theirs.case_results
    ]
    assert dict(ours.recipe_manifest) == dict(theirs.recipe_manifest)
    assert ours.knowledge_base_manifest["name"] == theirs.knowledge_base_manifest["name"] == "lighthouse mini"
    assert set(ours.knowledge_base_manifest) == set(theirs.knowledge_base_manifest)
    assert list(ours.metadata["benchmark_document_keys"]) == list(theirs.metadata["benchmark_document_keys"])
    assert ours.report_key == "_heta/knowledge_bases/lighthouse_mini/evaluations/ours/report.json"
    steps = [(e.name, e.status) for e in events if e.kind == "build_step"]
    assert steps == [
        ("parse_documents", "running"),
        ("parse_documents", "succeeded"),
        ("split_documents", "running"),
        ("split_documents", "succeeded"),
        ("index_full_text", "running"),
        ("index_full_text", "succeeded"),
    ]
    # heta_nb's own evaluators under Heta's names give Heta's numbers
    names = [
        "evidence_recall@3",
        "answer_contains",
        "answer_exact_match",
        "beir_ndcg@3",
        "beir_map@3",
        "beir_recall@3",
        "beir_precision@3",
        "beir_mrr@3",
    ]
    builtin = heta_nb.evaluate(
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST),
        recipe=heta_recipe(tmp_path / "b"),
        knowledge_base_name="lighthouse mini",
        query_modes=["full_text_search"],
        top_k=5,
        evaluators=names,
        progress=False,
    )
    assert dict(builtin.score_summary) == dict(theirs.score_summary)


# -- parity with Heta's BenchmarkRunner (found correct) -----------------------------------


@requires_heta
def test_recipe_path_matches_hetas_runner_field_by_field(tmp_path: Path) -> None:
    """One corpus unit, the benchmark's own evaluators (none given to heta_nb): the same store and report."""
    theirs = heta_recipe_run(tmp_path / "heta", heta_jsonl_benchmark(*heta_default_evaluators()), "lighthouse mini")
    ours = ours_run(tmp_path / "ours", heta_jsonl_benchmark(*heta_default_evaluators()), "lighthouse mini")
    assert raw_objects(tmp_path / "heta") == raw_objects(tmp_path / "ours")
    assert differences(theirs, ours) == []
    assert list(ours) == list(theirs)
    assert ours["knowledge_base_manifest"]["name"] == "lighthouse mini"
    assert ours["score_summary"] == theirs["score_summary"] and len(theirs["score_summary"]) == 7


@requires_heta
def test_multi_unit_matches_heta_and_warns_that_units_share_the_corpus(tmp_path: Path) -> None:
    """Heta's unit N also searches units before it (spec 5.5); heta_nb matches it and now says so."""
    theirs = heta_recipe_run(tmp_path / "heta", two_units(), "lh multi")
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
