"""What differs between two reports' recipes, KB manifests and benchmarks (``recipe_changes``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, requires_heta

import heta_nb
from heta_nb.comparison.recipes import NOT_RECORDED, RECORD_FIELDS, SAME, ManifestChange, recipe_changes
from heta_nb.model.report import EvaluationReport

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


def fixture_dict(name: str) -> dict[str, Any]:
    """A report Heta 0.1.2 wrote, as its JSON object."""
    data: dict[str, Any] = json.loads((FIXTURES / f"report-{name}.json").read_bytes())
    return data


def report(data: dict[str, Any]) -> EvaluationReport:
    return EvaluationReport.from_raw(data)


def texts(changes: Any) -> list[str]:
    return [change.text for change in changes.changes]


# -- (a) the demo's two real Heta recipes, run by heta_nb's runner ---------------------------------


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvaluationReport]:
    """The demo's two recipes (its chunk sizes and overlaps) evaluated on the lighthouse fixture benchmark."""
    pytest.importorskip("heta_framework")
    from heta_nb.demo.heta_recipes import demo_recipe
    from heta_nb.demo.settings import RECIPE_CHUNKS

    root = tmp_path_factory.mktemp("recipes")
    bench = heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
    return {
        name: heta_nb.evaluate(
            bench,
            recipe=demo_recipe(root / name, chunk_size, overlap),
            knowledge_base_name="kb",
            report_id=name,
            evaluators=["evidence_recall@3"],
            progress=False,
            lint=False,
        )
        for name, (chunk_size, overlap) in RECIPE_CHUNKS.items()
    }


def chunk_count(report: EvaluationReport) -> int:
    return len(report.knowledge_base_manifest["run_record"]["artifacts"]["chunk_keys"])


@requires_heta
def test_the_demo_recipes_differ_in_chunk_size_and_overlap_only(demo_runs: dict[str, EvaluationReport]) -> None:
    small, large = demo_runs["small-chunks"], demo_runs["large-chunks"]
    assert small.recipe_manifest == large.recipe_manifest  # Heta's manifest cannot tell them apart
    changes = recipe_changes(small, large, baseline_name="small-chunks", candidate_name="large-chunks")
    small_chunks, large_chunks = chunk_count(small), chunk_count(large)
    assert small_chunks > large_chunks  # smaller chunks: more of them
    assert texts(changes) == [
        "recipe: split_documents.chunk_size 160 → 700",
        "recipe: split_documents.overlap 20 → 60",
        f"knowledge base: chunk_keys {small_chunks} → {large_chunks} items",
    ]
    assert [(c.section, c.path, c.kind, c.old, c.new) for c in changes.changes] == [
        ("recipe", "split_documents.chunk_size", "changed", 160, 700),
        ("recipe", "split_documents.overlap", "changed", 20, 60),
        ("knowledge base", "chunk_keys", "changed", small_chunks, large_chunks),
    ]
    assert changes.not_comparable == () and changes.notes == ()
    assert changes.lines() == texts(changes)
    assert (changes.baseline, changes.candidate) == ("small-chunks", "large-chunks") and changes


@requires_heta
def test_a_report_compared_with_itself_has_no_changes(demo_runs: dict[str, EvaluationReport]) -> None:
    small = demo_runs["small-chunks"]
    changes = recipe_changes(small, small)
    assert not changes and changes.changes == () and changes.lines() == [SAME]
    assert changes.records() == [] and list(changes.frame().columns) == list(RECORD_FIELDS)
    assert (changes.baseline, changes.candidate) == ("small-chunks", "small-chunks")  # the report ids


@requires_heta
def test_the_recorded_parameters_survive_a_save_and_load(
    demo_runs: dict[str, EvaluationReport], tmp_path: Path
) -> None:
    path = tmp_path / "large.json"
    path.write_text(demo_runs["large-chunks"].to_json(), encoding="utf-8")
    loaded = heta_nb.load_report(path)
    changes = recipe_changes(demo_runs["small-chunks"], loaded)
    assert [c.path for c in changes.changes] == ["split_documents.chunk_size", "split_documents.overlap", "chunk_keys"]


@requires_heta
def test_parameters_recorded_on_one_side_only_are_not_compared(demo_runs: dict[str, EvaluationReport]) -> None:
    small = demo_runs["small-chunks"]
    info = {k: v for k, v in small.to_dict()["metadata"]["heta_nb"].items() if k != "recipe_parameters"}
    heta_written = small.replace(metadata={**small.to_dict()["metadata"], "heta_nb": info}, report_id="by-heta")
    changes = recipe_changes(heta_written, demo_runs["large-chunks"])
    assert [c.path for c in changes.changes] == ["chunk_keys"]
    assert changes.notes == (
        "step parameters were recorded for one report only ('by-heta' recorded none: written by Heta's runner "
        "or an earlier heta_nb): only steps, components and metadata compared",
    )


# -- (b) steps added, removed, reordered, retyped: real Heta recipe manifests -----------------------


def recipe_manifest(*steps: Any, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    from heta_framework.kb import KnowledgeRecipe

    manifest: dict[str, Any] = KnowledgeRecipe(steps=steps, metadata=metadata or {}).manifest().to_dict()
    return json.loads(json.dumps(manifest))


def with_recipe(manifest: dict[str, Any], report_id: str) -> EvaluationReport:
    data = fixture_dict("normal")
    data["recipe_manifest"] = manifest
    data["knowledge_base_manifest"]["recipe"] = manifest
    data["report_id"] = report_id
    return report(data)


@requires_heta
def test_steps_added_removed_reordered_and_retyped() -> None:
    from heta_framework.kb import (
        EmbedChunks,
        IndexFullText,
        MergeChunks,
        ParseDocuments,
        PersistChunks,
        SplitDocuments,
    )

    class SentenceSplit(SplitDocuments):
        """A real Heta step under another type (same step name)."""

    old = recipe_manifest(ParseDocuments(), SplitDocuments(), IndexFullText(), PersistChunks(), MergeChunks())
    new = recipe_manifest(ParseDocuments(), SentenceSplit(), PersistChunks(), IndexFullText(), EmbedChunks())
    changes = recipe_changes(with_recipe(old, "old"), with_recipe(new, "new"))
    assert texts(changes) == [
        "recipe: step merge_chunks removed (was at 4)",
        "recipe: step embed_chunks added at 4",
        "recipe: steps reordered: parse_documents, split_documents, index_full_text, persist_chunks → "
        "parse_documents, split_documents, persist_chunks, index_full_text",
        'recipe: split_documents.type "SplitDocuments" → "SentenceSplit"',
        "recipe: component_refs: − models.language, stores.vector",
    ]
    removed, added = changes.changes[:2]
    assert removed.old == {"name": "merge_chunks", "index": 4, "type": "MergeChunks"} and removed.new is None
    assert added.new == {"name": "embed_chunks", "index": 4, "type": "EmbedChunks"} and added.old is None
    assert changes.notes == (NOT_RECORDED,)


@requires_heta
def test_a_step_whose_requirements_changed_is_summarised() -> None:
    from heta_framework.kb import IndexFullText, IndexFullTextConfig, ParseDocuments

    old = recipe_manifest(ParseDocuments(), IndexFullText())
    new = recipe_manifest(ParseDocuments(), IndexFullText(IndexFullTextConfig(chunk_keys_artifact="merged_keys")))
    changes = recipe_changes(with_recipe(old, "old"), with_recipe(new, "new"))
    assert texts(changes) == ["recipe: index_full_text.requirements.artifacts: + merged_keys; − chunk_keys"]
    assert changes.changes[0].old == ["chunk_keys"] and changes.changes[0].new == ["merged_keys"]


# -- (c) reports Heta's runner wrote: no recorded parameters ----------------------------------------


def test_heta_written_reports_say_parameters_were_not_recorded_and_still_diff_steps() -> None:
    normal, errors = report(fixture_dict("normal")), report(fixture_dict("errors"))
    changes = recipe_changes(normal, errors, baseline_name="normal", candidate_name="errors")
    assert changes.lines() == [
        "recipe: step persist_chunks removed (was at 3)",
        "recipe: component_refs: − stores.sql",
        "recipe: capabilities_provided: − sql_text_search",
        'knowledge base: name "lighthouse mini" → "lighthouse-errors"',
        "knowledge base: capabilities.artifacts: − persist_chunks_result",
        "knowledge base: capabilities.queries: − sql_text_search",
        'knowledge base: capabilities.search_assets: − {"kind": "chunk_text_index", "name": "chunks", "store": '
        '"stores.sql", "metadata…',
        NOT_RECORDED,
    ]
    assert changes.not_comparable == ()


# -- (d) identical reports ------------------------------------------------------------------------


def test_identical_heta_reports_have_no_changes() -> None:
    data = fixture_dict("normal")
    other = copy.deepcopy(data)
    other["report_id"] = "again"
    kb = other["knowledge_base_manifest"]
    kb["created_at"] = kb["updated_at"] = "2030-01-01T00:00:00+00:00"
    kb["run_record"]["run_id"] = "run_0123"
    kb["run_record"]["artifacts"]["chunk_keys"] = [f"chunks/other_{i}.json" for i in range(14)]  # same count
    kb["run_record"]["artifacts"]["document_token_counts"] = {"x": 1}
    for step in kb["run_record"]["step_records"]:
        step["started_at"] = step["finished_at"] = "2030-01-01T00:00:00+00:00"
    changes = recipe_changes(report(data), report(other))
    assert not changes and changes.lines() == [SAME, NOT_RECORDED]


# -- (e) another benchmark: not comparable ----------------------------------------------------------


def test_benchmark_version_split_and_corpus_make_reports_not_comparable() -> None:
    data = fixture_dict("normal")
    other = copy.deepcopy(data)
    other["benchmark"].update(version="2", split="dev")
    other["metadata"]["benchmark_document_keys"] = data["metadata"]["benchmark_document_keys"][:-2]
    changes = recipe_changes(report(data), report(other), baseline_name="v1", candidate_name="v2")
    assert changes.not_comparable == (
        'the benchmark version differs: "1" in "v1", "2" in "v2"',
        'the benchmark split differs: "test" in "v1", "dev" in "v2"',
        'the benchmark\'s documents differ: 9 in "v1", 7 in "v2", 7 in both',
    )
    assert texts(changes) == ['benchmark: version "1" → "2"', 'benchmark: split "test" → "dev"']
    assert changes.lines()[:3] == [f"not comparable: {why}" for why in changes.not_comparable]


def test_the_same_documents_in_another_order_are_comparable() -> None:
    data = fixture_dict("normal")
    other = copy.deepcopy(data)
    other["metadata"]["benchmark_document_keys"].reverse()
    assert recipe_changes(report(data), report(other)).not_comparable == ()


# -- (f) one KB manifest per run unit ---------------------------------------------------------------


def test_knowledge_bases_of_several_run_units_are_paired_by_name() -> None:
    data = fixture_dict("multi-unit")
    other = copy.deepcopy(data)
    coast, harbour = other["knowledge_base_manifest"]["knowledge_bases"]
    coast["run_record"]["artifacts"]["chunk_keys"].append("chunks/extra.json")
    harbour["run_record"]["status"] = "failed"
    split = next(s for s in harbour["run_record"]["step_records"] if s["step_name"] == "split_documents")
    split.update(status="failed", error="ValueError: chunk_size must be positive")
    changes = recipe_changes(report(data), report(other))
    before = len(data["knowledge_base_manifest"]["knowledge_bases"][0]["run_record"]["artifacts"]["chunk_keys"])
    assert texts(changes) == [
        f"knowledge base: knowledge_bases[lighthouse multi-coast].chunk_keys {before} → {before + 1} items",
        'knowledge base: knowledge_bases[lighthouse multi-harbour_towns].status "succeeded" → "failed"',
        'knowledge base: knowledge_bases[lighthouse multi-harbour_towns].steps.split_documents.status "succeeded" '
        '→ "failed"',
        "knowledge base: knowledge_bases[lighthouse multi-harbour_towns].steps.split_documents.error null → "
        '"ValueError: chunk_size must be positive"',
    ]


def test_one_knowledge_base_against_one_per_run_unit() -> None:
    single, multi = fixture_dict("errors"), fixture_dict("multi-unit")
    changes = recipe_changes(report(single), report(multi))
    kb_changes = [c for c in changes.changes if c.section == "knowledge base"]
    assert [(c.kind, c.old, c.new) for c in kb_changes] == [
        ("removed", "lighthouse-errors", None),
        ("added", None, "lighthouse multi-coast"),
        ("added", None, "lighthouse multi-harbour_towns"),
    ]
    assert kb_changes[0].text == 'knowledge base: knowledge_bases removed (was "lighthouse-errors")'


# -- (g) values from reports stay data ---------------------------------------------------------------


def test_hostile_and_long_values_stay_plain_shortened_strings() -> None:
    data = fixture_dict("normal")
    other = copy.deepcopy(data)
    hostile = "<script>alert('x')</script>"
    long_value = "y" * 500
    other["recipe_manifest"]["metadata"] = {"note": hostile, "long": long_value, "two\nlines": 1}
    changes = recipe_changes(report(data), report(other))
    note, long, two = changes.changes
    assert note.text == f'recipe: metadata.note added: "{hostile}"'  # no escaping: the views escape
    assert note.record()["new"] == hostile and isinstance(note.record()["new"], str)
    assert long.new == long_value and len(long.text) < 120 and long.text.endswith("…")
    assert two.path == "metadata.two\nlines" and "\n" not in two.text
    assert changes.frame()["new"].tolist() == [hostile, long_value, 1]


def test_a_change_text_per_kind() -> None:
    assert ManifestChange("recipe", "split_documents.chunk_size", "changed", 400, 200).text == (
        "recipe: split_documents.chunk_size 400 → 200"
    )
    assert ManifestChange("recipe", "steps", "added", None, {"name": "rerank_results", "index": 3}).text == (
        "recipe: step rerank_results added at 3"
    )
    assert ManifestChange("recipe", "steps", "reordered", ["a", "b", "c"], ["a", "c", "b"]).text == (
        "recipe: steps reordered: a, b, c → a, c, b"
    )
    assert (
        ManifestChange("recipe", "metadata.x", "removed", "old", None).text == 'recipe: metadata.x removed (was "old")'
    )
