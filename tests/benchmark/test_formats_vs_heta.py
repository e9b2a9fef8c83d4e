"""Each loader reads a benchmark as heta-framework's own loaders do."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_nb.benchmark import (
    Benchmark,
    load_beir,
    load_jsonl_benchmark,
    load_multihop_rag,
)
from heta_nb.benchmark.formats.beir import beir_document_id
from heta_nb.benchmark.formats.multihop_rag import multihop_rag_article_id

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def jsonl_folder(tmp_path: Path, documents: list[Any] | None = None, cases: list[Any] | None = None) -> Path:
    folder = tmp_path / "bench"
    write_jsonl(
        folder / "documents.jsonl",
        documents
        if documents is not None
        else [{"document_id": "d1", "name": "d1.txt", "media_type": "text/plain", "text": "x"}],
    )
    write_jsonl(folder / "cases.jsonl", cases if cases is not None else [{"case_id": "c1", "query": "q?"}])
    return folder


def heta_collect(adapter: Any, tmp_path: Path) -> tuple[Any, list[Any], list[Any], list[Any]]:
    """Run a Heta adapter offline: prepare, then gather documents, cases and run units."""
    from heta_framework.evaluation.types import BenchmarkWorkspace

    async def go() -> tuple[Any, list[Any], list[Any], list[Any]]:
        workspace = BenchmarkWorkspace(root_dir=tmp_path / "ws", cache_dir=tmp_path / "ws" / "cache")
        prepared = await adapter.prepare(workspace)
        documents = [d async for d in adapter.documents(prepared)]
        cases = [c async for c in adapter.cases(prepared)]
        units = [u async for u in adapter.run_units(prepared)]
        return adapter.manifest, documents, cases, units

    return asyncio.run(go())


def heta_bytes(document: Any) -> bytes:
    return document.data if document.data is not None else Path(document.path).read_bytes()


def assert_same_as_heta(ours: Benchmark, heta: tuple[Any, list[Any], list[Any], list[Any]]) -> None:
    manifest, documents, cases, units = heta
    assert ours.manifest.key == f"{manifest.name}:{manifest.version}:{manifest.split}"
    assert [d.document_id for d in ours.documents] == [d.document_id for d in documents]
    for mine, theirs in zip(ours.documents, documents):
        assert mine.name == theirs.name
        assert mine.media_type == theirs.media_type
        assert mine.read_bytes() == heta_bytes(theirs)
        assert mine.raw_key(ours.manifest) == theirs.raw_key(manifest)
        assert dict(mine.metadata) == dict(theirs.metadata)
    assert [c.case_id for c in ours.cases] == [c.case_id for c in cases]
    for mine, theirs in zip(ours.cases, cases):
        assert mine.query == theirs.query
        assert mine.expected.answers == theirs.expected.answers
        assert [e.to_dict() for e in mine.expected.evidence] == [e.to_dict() for e in theirs.expected.evidence]
        assert mine.expected.to_dict() == theirs.expected.to_dict()
        assert dict(mine.labels) == dict(theirs.labels)
        assert dict(mine.metadata) == dict(theirs.metadata)
        assert mine.to_dict() == theirs.to_dict()
    assert [u.to_dict() for u in ours.units] == [u.to_dict() for u in units]


def write_beir(folder: Path, corpus: list[Any], queries: list[Any], qrels: str, split: str = "test") -> Path:
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", queries)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return folder


EDGE_IDS = ["plain", "doc 5", "x" * 120, "café/1", "__a__b__", "!!!", "a.b-c_d", "Ünïcode id", "t" * 96]


MHR_CORPUS = [
    {
        "title": "Harbour lights go electric",
        "author": "A. Writer",
        "source": "Coast Times",
        "published_at": "2023-10-01T08:00:00+00:00",
        "category": "technology",
        "url": "https://example.invalid/lights",
        "body": "The Harrow Point lamp was converted to electric light in 1934.",
    },
    {
        "title": "Regatta by night",
        "author": None,
        "source": "Dunmere Daily",
        "published_at": "2023-08-12",
        "category": "sports",
        "url": "https://example.invalid/regatta",
        "body": "Every August, Dunmere hosts the Lantern Regatta.",
    },
    {"title": "No url here", "source": None, "category": "misc", "body": "  An article without a url.  "},
]


MHR_QUERIES = [
    {
        "query": "When did the lamp go electric, and which town holds a night regatta?",
        "answer": "1934 and Dunmere",
        "question_type": "inference_query",
        "evidence_list": [
            {
                "title": "Harbour lights go electric",
                "url": "https://example.invalid/lights",
                "source": "Coast Times",
                "fact": "converted to electric light in 1934",
            },
            {
                "title": "Regatta by night",
                "url": "https://example.invalid/regatta",
                "fact": "Lantern Regatta",
            },
        ],
    },
    {
        "query": "Which article has no url?",
        "answer": "No url here",
        "question_type": "comparison_query",
        "evidence_list": [{"title": "No url here", "fact": ""}],
    },
    {
        "query": "Who won the 1850 regatta?",
        "answer": "Insufficient information.",
        "question_type": "null_query",
        "evidence_list": [],
    },
]


def write_multihop(folder: Path, corpus: list[Any] = MHR_CORPUS, queries: list[Any] = MHR_QUERIES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.json").write_text(json.dumps(corpus, indent=2), encoding="utf-8")
    (folder / "MultiHopRAG.json").write_text(json.dumps(queries, indent=2), encoding="utf-8")
    return folder


# --------------------------------------------------------------------------------------
# parity with Heta
# --------------------------------------------------------------------------------------
@pytest.mark.heta
def test_jsonl_fixture_matches_heta(tmp_path: Path) -> None:
    pytest.importorskip("heta_framework")
    from heta_framework.evaluation.benchmarks import JsonlBenchmark
    from heta_framework.evaluation.types import BenchmarkManifest as HetaManifest

    heta_manifest = HetaManifest(**MANIFEST)
    heta = JsonlBenchmark(
        manifest=heta_manifest,
        documents_jsonl=FIXTURES / "documents.jsonl",
        cases_jsonl=FIXTURES / "cases.jsonl",
    )
    ours = load_jsonl_benchmark(
        FIXTURES / "documents.jsonl", FIXTURES / "cases.jsonl", manifest=heta_manifest
    )  # a Heta manifest object is accepted as is
    assert_same_as_heta(ours, heta_collect(heta, tmp_path))
    assert ours.manifest.to_dict() == heta_manifest.to_dict()
    assert ours.evaluators() == ("evidence_recall@5", "answer_contains")
    assert [e.name for e in heta.evaluators()] == list(ours.evaluators())
    assert ours.document("lh9").path == (FIXTURES / "files" / "regatta_rules.txt").resolve()


@pytest.mark.heta
def test_beir_fixture_matches_heta(tmp_path: Path) -> None:
    pytest.importorskip("heta_framework")
    from heta_framework.evaluation.benchmarks import BeirBenchmark

    heta = BeirBenchmark(dataset="mini", data_root=FIXTURES / "beir_mini", download=False)
    ours = load_beir(FIXTURES / "beir_mini", dataset="mini")
    assert_same_as_heta(ours, heta_collect(heta, tmp_path))
    assert "doc_5_7b98d11c9666" in [d.document_id for d in ours.documents]
    assert [c.case_id for c in ours.cases] == ["q1", "q2", "q3"]  # q4 has no qrels: dropped
    assert [e.reference_id for e in ours.case("q2").expected.evidence] == ["b2"]  # b1 scored 0
    theirs = heta.manifest.to_dict()
    theirs["metadata"].pop("description")  # Heta's prose, deliberately not reproduced
    assert ours.manifest.to_dict() == theirs


@pytest.mark.heta
def test_beir_edge_cases_match_heta(tmp_path: Path) -> None:
    pytest.importorskip("heta_framework")
    from heta_framework.evaluation.benchmarks import BeirBenchmark

    corpus = [
        {"_id": i, "title": f"T{n}" if n % 3 else "", "text": f"body {n}" if n % 4 else None}
        for n, i in enumerate(EDGE_IDS)
    ]
    corpus.append({"_id": "empty", "title": None, "text": ""})
    queries = [{"_id": f"q{n}", "text": f"query {n}"} for n in range(5)]
    qrels = (
        "q0\tplain\t1\n"
        "q0\tdoc 5\t2.0\n"
        "q1\tcafé/1\t0\n"  # only zero qrels: kept, no evidence
        "\n"
        "q2\t" + "x" * 120 + "\t1\n"
        "q2\t!!!\t-1\n"
        "q2\tÜnïcode id\t1\n"
        "q2\tÜnïcode id\t3\n"  # repeated pair: the last score wins
        "q3\tmissing-doc\t1\t extra column\n"
        "q9\tplain\t1\n"  # unknown query: ignored
    )  # no header row
    folder = write_beir(tmp_path / "Edge", corpus, queries, qrels)
    heta = BeirBenchmark(dataset="edge", data_root=folder, download=False)
    ours = load_beir(folder)  # dataset defaults to the folder name, lowercased
    assert ours.manifest.name == "beir_edge"
    assert_same_as_heta(ours, heta_collect(heta, tmp_path))
    assert ours.case("q1").expected.evidence == ()
    assert "q4" not in [c.case_id for c in ours.cases]
    assert ours.case("q2").expected.evidence[1].metadata["relevance"] == 3


@pytest.mark.heta
@pytest.mark.skipif(importlib.util.find_spec("heta_framework") is None, reason="needs heta-framework")
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_beir_document_id_matches_heta(value: str) -> None:
    from heta_framework.evaluation.benchmarks import beir

    assert beir_document_id(value) == beir._benchmark_document_id(value)


@pytest.mark.heta
def test_multihop_rag_matches_heta(tmp_path: Path) -> None:
    pytest.importorskip("heta_framework")
    from heta_framework.evaluation.benchmarks import MultiHopRagBenchmark

    folder = write_multihop(tmp_path / "mhr")
    heta = MultiHopRagBenchmark(corpus_path=folder / "corpus.json", queries_path=folder / "MultiHopRAG.json")
    ours = load_multihop_rag(folder)
    assert_same_as_heta(ours, heta_collect(heta, tmp_path))
    assert ours.manifest.to_dict() == heta.manifest.to_dict()
    assert [c.case_id for c in ours.cases] == ["multihop_rag_0000", "multihop_rag_0001", "multihop_rag_0002"]
    assert ours.case("multihop_rag_0002").labels["question_type"] == "null_query"
    assert ours.case("multihop_rag_0002").expected.evidence == ()
    evidence = ours.case("multihop_rag_0000").expected.evidence[0]
    assert evidence.locator["source_key"] in ours.raw_keys()
    assert evidence.text == "converted to electric light in 1934"
    assert ours.documents[2].document_id == multihop_rag_article_id(title="No url here", url=None)
    assert ours.evaluators() == ("evidence_recall@5", "answer_contains")


@pytest.mark.heta
def test_heta_still_splits_string_answers(tmp_path: Path) -> None:
    """The trap we fix, pinned so we notice if Heta changes."""
    pytest.importorskip("heta_framework")
    from heta_framework.evaluation.benchmarks import JsonlBenchmark
    from heta_framework.evaluation.types import BenchmarkManifest as HetaManifest

    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q", "expected": {"answers": "Harrow"}}])
    heta = JsonlBenchmark(HetaManifest(**MANIFEST), folder / "documents.jsonl", folder / "cases.jsonl")
    _, _, cases, _ = heta_collect(heta, tmp_path)
    assert cases[0].expected.answers == tuple("Harrow")


@pytest.mark.heta
def test_heta_accepts_duplicate_multihop_articles(tmp_path: Path) -> None:
    """Heta yields both rows (the runner fails later); pinned to justify our early error."""
    pytest.importorskip("heta_framework")
    from heta_framework.evaluation.benchmarks import MultiHopRagBenchmark

    folder = write_multihop(tmp_path / "m", corpus=[*MHR_CORPUS, dict(MHR_CORPUS[0])])
    heta = MultiHopRagBenchmark(corpus_path=folder / "corpus.json", queries_path=folder / "MultiHopRAG.json")
    _, documents, _, _ = heta_collect(heta, tmp_path)
    assert documents[0].document_id == documents[3].document_id
