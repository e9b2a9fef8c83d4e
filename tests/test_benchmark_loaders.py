"""Benchmark loaders: parity with Heta 0.1.2's adapters, and the traps they fix."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_nb.benchmark import (
    Benchmark,
    BenchmarkDocument,
    benchmark_from_frame,
    load_beir,
    load_benchmark,
    load_jsonl_benchmark,
    load_multihop_rag,
)
from heta_nb.benchmark.formats.beir import beir_document_id
from heta_nb.benchmark.formats.multihop_rag import multihop_rag_article_id
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model import BenchmarkManifest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "heta-0.1.2"
MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}
SMALL = BenchmarkManifest(name="small", version="1", split="dev", task_type="qa")


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


def load_folder(folder: Path, **kwargs: Any) -> Benchmark:
    return load_jsonl_benchmark(folder / "documents.jsonl", folder / "cases.jsonl", manifest=SMALL, **kwargs)


def doc_row(**extra: Any) -> dict[str, Any]:
    return {"document_id": "d1", "name": "d1.txt", "media_type": "text/plain", **extra}


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


def write_beir(folder: Path, corpus: list[Any], queries: list[Any], qrels: str, split: str = "test") -> Path:
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", queries)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return folder


EDGE_IDS = ["plain", "doc 5", "x" * 120, "café/1", "__a__b__", "!!!", "a.b-c_d", "Ünïcode id", "t" * 96]


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


def test_beir_document_id_examples() -> None:
    assert beir_document_id("doc 5") == "doc_5_7b98d11c9666"
    assert beir_document_id("b1") == "b1"
    assert len(beir_document_id("x" * 200)) == 83 + 13


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


def test_multihop_rag_corpus_file_and_explicit_queries(tmp_path: Path) -> None:
    folder = write_multihop(tmp_path / "mhr")
    by_file = load_multihop_rag(folder / "corpus.json")
    explicit = load_multihop_rag(folder / "corpus.json", folder / "MultiHopRAG.json")
    detected = load_benchmark(folder)
    assert (
        [c.to_dict() for c in by_file.cases]
        == [c.to_dict() for c in explicit.cases]
        == [c.to_dict() for c in detected.cases]
    )
    text = by_file.documents[0].read_bytes().decode()
    assert text.startswith("Title: Harbour lights go electric\nSource: Coast Times\nPublished at: 2023-10-01")
    assert text.endswith("\n\nThe Harrow Point lamp was converted to electric light in 1934.")


# --------------------------------------------------------------------------------------
# load_benchmark: detection
# --------------------------------------------------------------------------------------
def test_load_benchmark_detects_each_format(tmp_path: Path) -> None:
    jsonl = load_benchmark(FIXTURES, manifest=MANIFEST)
    assert jsonl.manifest.key == "lighthouse_mini:1:test" and len(jsonl) == 10
    beir = load_benchmark(FIXTURES / "beir_mini")
    assert beir.manifest.name == "beir_beir_mini"
    assert beir.evaluators() == ("ndcg@10", "recall@10", "map@10", "mrr@10", "precision@10")
    assert load_benchmark(write_multihop(tmp_path / "m")).manifest.key == "multihop_rag:official:all"
    assert load_benchmark(FIXTURES / "beir_mini", format="beir", evaluators=["x"]).evaluators() == ("x",)


def test_load_benchmark_manifest_json_and_override(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path)
    with pytest.raises(BenchmarkFormatError, match="pass manifest="):
        load_benchmark(folder)
    (folder / "manifest.json").write_text(json.dumps({**MANIFEST, "name": "from_file"}), encoding="utf-8")
    assert load_benchmark(folder).manifest.name == "from_file"
    assert load_benchmark(folder, manifest=SMALL).manifest.name == "small"
    (folder / "manifest.json").write_text('{"name": "x",\n "version": }', encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"^manifest\.json:2:13: invalid JSON"):
        load_benchmark(folder)
    (folder / "manifest.json").write_text(json.dumps({**MANIFEST, "task-type": "x"}), encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"unknown key\(s\) \['task-type'\]"):
        load_benchmark(folder)
    (folder / "manifest.json").write_text(json.dumps({"name": "x"}), encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match="version is required"):
        load_benchmark(folder)


def test_load_benchmark_nothing_matches(tmp_path: Path) -> None:
    (tmp_path / "documents.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "dev.tsv").write_text("", encoding="utf-8")
    with pytest.raises(BenchmarkFormatError) as info:
        load_benchmark(tmp_path)
    message = str(info.value)
    assert "no benchmark found" in message
    assert "documents.jsonl + cases.jsonl (missing cases.jsonl)" in message
    assert "corpus.jsonl + queries.jsonl + qrels/test.tsv" in message
    assert "corpus.json + MultiHopRAG.json" in message
    assert "['dev']; pass split=" in message


def test_load_benchmark_argument_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_benchmark(tmp_path / "nope")
    with pytest.raises(BenchmarkFormatError, match="expects a benchmark folder"):
        load_benchmark(FIXTURES / "cases.jsonl")
    with pytest.raises(BenchmarkFormatError, match="format must be one of"):
        load_benchmark(FIXTURES, format="csv")
    with pytest.raises(BenchmarkFormatError, match="JSONL benchmarks only"):
        load_benchmark(FIXTURES / "beir_mini", manifest=MANIFEST)
    with pytest.raises(FileNotFoundError, match="missing qrels/dev.tsv"):
        load_benchmark(FIXTURES / "beir_mini", format="beir", split="dev")
    folder = write_beir(jsonl_folder(tmp_path), [{"_id": "a", "text": "t"}], [{"_id": "q", "text": "t"}], "q\ta\t1\n")
    with pytest.raises(BenchmarkFormatError, match="several benchmark formats"):
        load_benchmark(folder)
    assert load_benchmark(folder, format="beir").manifest.name == "beir_bench"


# --------------------------------------------------------------------------------------
# JSONL: the traps Heta falls into, fixed
# --------------------------------------------------------------------------------------
def test_string_answers_are_one_answer(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q", "expected": {"answers": "Harrow"}}])
    assert load_folder(folder).case("c1").expected.answers == ("Harrow",)
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q", "expected": {"answers": [1934, " x "]}}])
    assert load_folder(folder).case("c1").expected.answers == ("1934", "x")
    folder = jsonl_folder(tmp_path, cases=['{"case_id": "c1", "query": "q", "expected": {"answers": [NaN]}}'])
    with pytest.raises(
        BenchmarkFormatError, match=r"^cases\.jsonl:1: expected\.answers\[0\]: must be a string, got nan"
    ):
        load_folder(folder)


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


def test_nulls_mean_none(tmp_path: Path) -> None:
    cases = [
        {"case_id": "c1", "query": "q", "expected": None, "labels": None, "metadata": None},
        {"case_id": "c2", "query": "q", "expected": {"answers": None, "evidence": None, "metadata": None}},
        {
            "case_id": "c3",
            "query": "q",
            "expected": {"evidence": [{"reference_id": "d1", "locator": None, "metadata": None}]},
        },
    ]
    bench = load_folder(
        jsonl_folder(tmp_path, documents=[doc_row(text="x", metadata=None, source_uri=None)], cases=cases)
    )
    for case in bench.cases[:2]:
        assert case.expected.answers == () and case.expected.evidence == ()
        assert dict(case.labels) == {} and dict(case.metadata) == {}
    assert bench.case("c3").expected.evidence[0].to_dict() == {
        "reference_id": "d1",
        "locator": {},
        "text": None,
        "metadata": {},
    }


def test_text_null_is_an_error(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, documents=[doc_row(text="ok"), doc_row(document_id="d2", text=None)])
    with pytest.raises(BenchmarkFormatError, match=r"^documents\.jsonl:2: text: must be a string, got null$"):
        load_folder(folder)
    folder = jsonl_folder(tmp_path, documents=[doc_row(text=42)])
    with pytest.raises(BenchmarkFormatError, match=r"^documents\.jsonl:1: text: must be a string, got number"):
        load_folder(folder)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {},
            r"^documents\.jsonl:1: text: a document needs exactly one of text, data_base64, path or "
            r"source_uri",
        ),
        (
            {"text": "a", "data_base64": "YQ=="},
            r"^documents\.jsonl:1: text, data_base64: a document must set only one",
        ),
        ({"text": "a", "path": "x.txt"}, r"^documents\.jsonl:1: text, path: "),
        ({"data_base64": "not base64!"}, r"^documents\.jsonl:1: data_base64: is not valid base64"),
        ({"data_base64": "YWJj="}, r"^documents\.jsonl:1: data_base64: is not valid base64"),
        ({"data_base64": "-_-_"}, r"^documents\.jsonl:1: data_base64: is not valid base64"),
        ({"data_base64": None}, r"^documents\.jsonl:1: data_base64: is required"),
        ({"data_base64": ""}, r"^documents\.jsonl:1: data_base64: must not be empty"),
        ({"path": None}, r"^documents\.jsonl:1: path: is required"),
        ({"path": "missing.txt"}, r"^documents\.jsonl:1: path: 'missing.txt' does not exist"),
        ({"path": "."}, r"^documents\.jsonl:1: path: '\.' is not a file"),
        ({"source_uri": ""}, r"^documents\.jsonl:1: source_uri: must not be empty"),
        ({"text": "a", "metadata": [1]}, r"^documents\.jsonl:1: metadata: must be an object, got array"),
    ],
)
def test_document_source_errors(tmp_path: Path, extra: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchmarkFormatError, match=message):
        load_folder(jsonl_folder(tmp_path, documents=[doc_row(**extra)]))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"name": "d.txt", "media_type": "text/plain", "text": "x"},
            r"^documents\.jsonl:1: document_id: is required$",
        ),
        (
            doc_row(document_id=None, text="x"),
            r"^documents\.jsonl:1: document_id: must be a string, got null",
        ),
        (doc_row(document_id="  ", text="x"), r"^documents\.jsonl:1: document_id: must not be empty"),
        (
            doc_row(document_id="a/b", text="x"),
            r"^documents\.jsonl:1: document_id: 'a/b' cannot be used in an object key",
        ),
        (doc_row(name="..", text="x"), r"^documents\.jsonl:1: name: '\.\.' cannot be used"),
        (
            doc_row(media_type=["text"], text="x"),
            r"^documents\.jsonl:1: media_type: must be a string, got array",
        ),
    ],
)
def test_document_field_errors(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchmarkFormatError, match=message):
        load_folder(jsonl_folder(tmp_path, documents=[row]))


def test_data_base64_decodes_and_allows_line_wrapping(tmp_path: Path) -> None:
    payload = bytes(range(256)) * 3
    wrapped = base64.encodebytes(payload).decode()  # MIME style, with newlines
    bench = load_folder(jsonl_folder(tmp_path, documents=[doc_row(data_base64=wrapped)]))
    assert bench.documents[0].read_bytes() == payload


def test_integer_ids_are_accepted_like_heta(tmp_path: Path) -> None:
    bench = load_folder(
        jsonl_folder(tmp_path, documents=[doc_row(document_id=7, text="x")], cases=[{"case_id": 1, "query": "q"}])
    )
    assert bench.documents[0].document_id == "7" and bench.cases[0].case_id == "1"


def outside_setup(tmp_path: Path) -> tuple[Path, Path]:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret", encoding="utf-8")
    folder = jsonl_folder(tmp_path)
    return folder, secret


def test_path_parent_escape_is_refused(tmp_path: Path) -> None:
    folder, _ = outside_setup(tmp_path)
    write_jsonl(folder / "documents.jsonl", [doc_row(text="a"), doc_row(document_id="d2", path="../secret.txt")])
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^documents\.jsonl:2: path: '\.\./secret\.txt' is outside the benchmark folder",
    ):
        load_folder(folder)
    bench = load_folder(folder, allow_outside_paths=True)
    assert bench.document("d2").read_bytes() == b"secret"
    with pytest.raises(BenchmarkFormatError, match="outside the benchmark folder"):
        load_benchmark(folder, manifest=SMALL)
    assert load_benchmark(folder, manifest=SMALL, allow_outside_paths=True).document("d2").read_bytes() == b"secret"


def test_path_absolute_is_refused(tmp_path: Path) -> None:
    folder, secret = outside_setup(tmp_path)
    for value in ("/etc/hostname", str(secret), str(folder / "documents.jsonl")):
        write_jsonl(folder / "documents.jsonl", [doc_row(path=value)])
        with pytest.raises(BenchmarkFormatError, match=r"^documents\.jsonl:1: path: '.*' is an absolute path"):
            load_folder(folder)
    write_jsonl(folder / "documents.jsonl", [doc_row(path=str(secret))])
    assert load_folder(folder, allow_outside_paths=True).documents[0].read_bytes() == b"secret"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_path_symlink_pointing_outside_is_refused(tmp_path: Path) -> None:
    folder, secret = outside_setup(tmp_path)
    (folder / "files").mkdir()
    (folder / "files" / "link.txt").symlink_to(secret)
    (folder / "files" / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    (folder / "inside.txt").write_text("inside", encoding="utf-8")
    (folder / "files" / "good.txt").symlink_to(folder / "inside.txt")
    for value in ("files/link.txt", "files/dirlink/secret.txt"):
        write_jsonl(folder / "documents.jsonl", [doc_row(path=value)])
        with pytest.raises(
            BenchmarkFormatError, match=r"^documents\.jsonl:1: path: '.*' is outside the benchmark folder"
        ):
            load_folder(folder)
    write_jsonl(
        folder / "documents.jsonl",
        [doc_row(path="files/good.txt"), doc_row(document_id="d2", path="files/../inside.txt")],
    )
    bench = load_folder(folder)
    assert [d.read_bytes() for d in bench.documents] == [b"inside", b"inside"]


def test_root_dir_is_the_containment_boundary(tmp_path: Path) -> None:
    folder, _ = outside_setup(tmp_path)
    write_jsonl(folder / "documents.jsonl", [doc_row(path="secret.txt")])
    bench = load_folder(folder, root_dir=tmp_path)  # tmp_path holds secret.txt
    assert bench.documents[0].read_bytes() == b"secret"


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q"}, '{"case_id": "c2", "query": }'])
    with pytest.raises(BenchmarkFormatError, match=r"^cases\.jsonl:2:28: invalid JSON: Expecting value"):
        load_folder(folder)


def test_blank_lines_are_skipped_and_lines_counted(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q"}, "", "   ", {"case_id": "c2"}])
    with pytest.raises(BenchmarkFormatError, match=r"^cases\.jsonl:4: query: is required$"):
        load_folder(folder)


@pytest.mark.parametrize(
    ("row", "kind"), [("[1, 2]", "array"), ('"text"', "string"), ("3", "number"), ("null", "null")]
)
def test_non_object_rows(tmp_path: Path, row: str, kind: str) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q"}, row])
    with pytest.raises(BenchmarkFormatError, match=rf"^cases\.jsonl:2: a JSONL row must be a JSON object, got {kind}$"):
        load_folder(folder)


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    folder = jsonl_folder(
        tmp_path,
        documents=[doc_row(text="a"), doc_row(document_id="d2", text="b"), "", doc_row(text="c")],
    )
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^documents\.jsonl:4: document_id: duplicate document_id 'd1' \(first on line 1\)",
    ):
        load_folder(folder)
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q"}, {"case_id": " c1 ", "query": "q2"}])
    with pytest.raises(
        BenchmarkFormatError, match=r"^cases\.jsonl:2: case_id: duplicate case_id 'c1' \(first on line 1\)"
    ):
        load_folder(folder)


@pytest.mark.parametrize(
    ("expected", "message"),
    [
        (
            {"evidence": [{"metadata": {"a": 1}}]},
            r"^cases\.jsonl:1: expected\.evidence\[0\]: "
            r"evidence must set at least one of reference_id, locator, or text$",
        ),
        (
            {"evidence": [{"reference_id": "d1"}, {"locator": {}}]},
            r"^cases\.jsonl:1: expected\.evidence\[1\]: evidence must set",
        ),
        ({"evidence": ["d1"]}, r"^cases\.jsonl:1: expected\.evidence\[0\]: must be an object, got string"),
        (
            {"evidence": {"reference_id": "d1"}},
            r"^cases\.jsonl:1: expected\.evidence: must be a list of evidence objects, got object",
        ),
        ({"evidence": [{"text": ""}]}, r"^cases\.jsonl:1: expected\.evidence\[0\]\.text: must not be empty"),
        (
            {"evidence": [{"locator": "raw/x"}]},
            r"^cases\.jsonl:1: expected\.evidence\[0\]\.locator: must be an object, got string",
        ),
        ({"answers": ["a", None]}, r"^cases\.jsonl:1: expected\.answers\[1\]: is required"),
        ({"answers": ["a", " "]}, r"^cases\.jsonl:1: expected\.answers\[1\]: must not be empty"),
        (
            {"answers": {"a": 1}},
            r"^cases\.jsonl:1: expected\.answers: must be a list of strings or one string, got object",
        ),
        ({"metadata": 3}, r"^cases\.jsonl:1: expected\.metadata: must be an object, got number"),
    ],
)
def test_case_expected_errors(tmp_path: Path, expected: dict[str, Any], message: str) -> None:
    folder = jsonl_folder(tmp_path, cases=[{"case_id": "c1", "query": "q", "expected": expected}])
    with pytest.raises(BenchmarkFormatError, match=message):
        load_folder(folder)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"case_id": "c1", "query": "q", "expected": []},
            r"^cases\.jsonl:1: expected: must be an object, got array",
        ),
        (
            {"case_id": "c1", "query": "q", "labels": "x"},
            r"^cases\.jsonl:1: labels: must be an object, got string",
        ),
        ({"case_id": "c1", "query": True}, r"^cases\.jsonl:1: query: must be a string, got boolean"),
        (
            {"case_id": 1.5, "query": "q"},
            r"^cases\.jsonl:1: case_id: must be a string or integer, got number",
        ),
    ],
)
def test_case_field_errors(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchmarkFormatError, match=message):
        load_folder(jsonl_folder(tmp_path, cases=[row]))


def test_unknown_keys_ignored_and_unicode_line_separators_kept(tmp_path: Path) -> None:
    text = "first\u2028second\u0085third"
    folder = jsonl_folder(
        tmp_path,
        documents=[{**doc_row(text=text), "extra": 1}],
        cases=[{"case_id": "c1", "query": "q", "whatever": [1], "expected": {"answers": ["a"], "bonus": True}}],
    )
    path = folder / "documents.jsonl"
    path.write_text(
        path.read_text(encoding="utf-8").replace("\\u2028", "\u2028").replace("\\u0085", "\u0085"),
        encoding="utf-8",
    )
    assert "\u2028" in path.read_text(encoding="utf-8")
    bench = load_folder(folder)
    assert bench.documents[0].read_bytes().decode() == text
    assert bench.case("c1").expected.answers == ("a",)


def test_invalid_utf8_and_bom(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path)
    (folder / "cases.jsonl").write_bytes(
        b'\xef\xbb\xbf{"case_id": "c1", "query": "q"}\n{"case_id": "c2", "query": "\xff"}\n'
    )
    with pytest.raises(BenchmarkFormatError, match=r"^cases\.jsonl:2: not valid UTF-8"):
        load_folder(folder)
    (folder / "cases.jsonl").write_bytes(b'\xef\xbb\xbf{"case_id": "c1", "query": "q"}\n')
    assert load_folder(folder).cases[0].case_id == "c1"


def test_empty_files_and_missing_files(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, cases=[])
    (folder / "cases.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"^cases\.jsonl: no cases"):
        load_folder(folder)
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_jsonl_benchmark(folder / "documents.jsonl", folder / "nope.jsonl", manifest=SMALL)
    with pytest.raises(BenchmarkFormatError, match=r"^manifest: .*name is required"):
        load_jsonl_benchmark(folder / "documents.jsonl", folder / "cases.jsonl", manifest={"version": "1"})


def test_jsonl_labels_value_and_metadata_kept(tmp_path: Path) -> None:
    case = {
        "case_id": "c1",
        "query": " Where? ",
        "expected": {"answers": ["a"], "value": {"year": 1901}, "metadata": {"m": 1}},
        "labels": {"hops": 2},
        "metadata": {"note": "n"},
    }
    bench = load_folder(jsonl_folder(tmp_path, cases=[case]), evaluators=("answer_exact_match",))
    got = bench.case("c1")
    assert got.query == "Where?"
    assert got.expected.value == {"year": 1901} and dict(got.expected.metadata) == {"m": 1}
    assert dict(got.labels) == {"hops": 2} and dict(got.metadata) == {"note": "n"}
    assert bench.evaluators() == ("answer_exact_match",)
    assert [u.unit_id for u in bench.units] == ["corpus"]


# --------------------------------------------------------------------------------------
# BEIR errors
# --------------------------------------------------------------------------------------
BEIR_CORPUS = [{"_id": "a", "title": "A", "text": "alpha"}, {"_id": "b", "text": "beta"}]
BEIR_QUERIES = [{"_id": "q1", "text": "alpha?"}]


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        (
            "query-id\tcorpus-id\tscore\nq1\ta\n",
            r"^qrels/test\.tsv:2: expected 3 tab-separated columns \(query-id, corpus-id, score\), got 2$",
        ),
        ("q1 a 1\n", r"^qrels/test\.tsv:1: expected 3 tab-separated columns"),
        ("q1\ta\t1\nq1\tb\thigh\n", r"^qrels/test\.tsv:2: score: 'high' is not a number$"),
        ("q1\ta\tinf\n", r"^qrels/test\.tsv:1: score: 'inf' is not a number$"),
        ("q1\t \t1\n", r"^qrels/test\.tsv:1: corpus-id: must not be empty$"),
        ("q2\ta\t1\n", r"^qrels/test\.tsv: no query in queries\.jsonl has qrels"),
    ],
)
def test_beir_qrels_errors(tmp_path: Path, qrels: str, message: str) -> None:
    folder = write_beir(tmp_path / "ds", BEIR_CORPUS, BEIR_QUERIES, qrels)
    with pytest.raises(BenchmarkFormatError, match=message):
        load_beir(folder)


def test_beir_header_underscore_form_and_text(tmp_path: Path) -> None:
    folder = write_beir(
        tmp_path / "DS", BEIR_CORPUS, BEIR_QUERIES, "query_id\tcorpus_id\tscore\nq1\tb\t1\n", split="dev"
    )
    bench = load_beir(folder, split="DEV")
    assert bench.manifest.key == "beir_ds:official:dev"
    assert [d.read_bytes() for d in bench.documents] == [b"A\n\nalpha", b"beta"]
    assert bench.case("q1").expected.evidence[0].locator == {"source_key_prefix": "raw/benchmarks/beir_ds/dev/b/"}
    assert bench.units[0].to_dict()["metadata"] == {"dataset": "ds", "split": "dev"}


@pytest.mark.parametrize(
    ("corpus", "queries", "message"),
    [
        (
            BEIR_CORPUS + [{"_id": "a", "text": "again"}],
            BEIR_QUERIES,
            r"^corpus\.jsonl:3: _id: duplicate _id 'a' on line 1",
        ),
        ([{"title": "no id"}], BEIR_QUERIES, r"^corpus\.jsonl:1: _id: is required$"),
        ([{"_id": "a", "text": ["x"]}], BEIR_QUERIES, r"^corpus\.jsonl:1: text: must be a string, got array"),
        (
            BEIR_CORPUS,
            BEIR_QUERIES + [{"_id": "q1", "text": "again"}],
            r"^queries\.jsonl:2: _id: duplicate query id 'q1' \(first on line 1\)",
        ),
        (BEIR_CORPUS, [{"_id": "q1"}], r"^queries\.jsonl:1: text: is required$"),
        (BEIR_CORPUS, ["[1]"], r"^queries\.jsonl:1: a JSONL row must be a JSON object, got array$"),
    ],
)
def test_beir_row_errors(tmp_path: Path, corpus: list[Any], queries: list[Any], message: str) -> None:
    folder = write_beir(tmp_path / "ds", corpus, queries, "q1\ta\t1\n")
    with pytest.raises(BenchmarkFormatError, match=message):
        load_beir(folder)


def test_beir_argument_errors(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "ds", BEIR_CORPUS, BEIR_QUERIES, "q1\ta\t1\n")
    with pytest.raises(BenchmarkFormatError, match="dataset id, not a path"):
        load_beir(folder, dataset="a/b")
    with pytest.raises(FileNotFoundError, match="missing qrels/dev.tsv"):
        load_beir(folder, split="dev")


# --------------------------------------------------------------------------------------
# MultiHop-RAG errors
# --------------------------------------------------------------------------------------
def test_multihop_duplicate_article_ids_name_both_rows(tmp_path: Path) -> None:
    corpus = [*MHR_CORPUS, {**MHR_CORPUS[0], "title": "Another title, same url"}]
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^corpus\.json\[3\]: url: article id 'article_[0-9a-f]{16}' duplicates corpus\.json\[0\]",
    ):
        load_multihop_rag(write_multihop(tmp_path / "a", corpus=corpus))
    corpus = [*MHR_CORPUS, {"title": "No url here", "body": "different body"}]
    with pytest.raises(
        BenchmarkFormatError, match=r"^corpus\.json\[3\]: title: article id .* duplicates corpus\.json\[2\]"
    ):
        load_multihop_rag(write_multihop(tmp_path / "b", corpus=corpus))


@pytest.mark.heta
def test_heta_accepts_duplicate_multihop_articles(tmp_path: Path) -> None:
    """Heta yields both rows (the runner fails later); pinned to justify our early error."""
    pytest.importorskip("heta_framework")
    from heta_framework.evaluation.benchmarks import MultiHopRagBenchmark

    folder = write_multihop(tmp_path / "m", corpus=[*MHR_CORPUS, dict(MHR_CORPUS[0])])
    heta = MultiHopRagBenchmark(corpus_path=folder / "corpus.json", queries_path=folder / "MultiHopRAG.json")
    _, documents, _, _ = heta_collect(heta, tmp_path)
    assert documents[0].document_id == documents[3].document_id


@pytest.mark.parametrize(
    ("corpus", "queries", "message"),
    [
        ([{"title": "t"}], MHR_QUERIES, r"^corpus\.json\[0\]: body: is required$"),
        (["x"], MHR_QUERIES, r"^corpus\.json\[0\]: a corpus row must be an object, got string$"),
        ({"a": 1}, MHR_QUERIES, r"^corpus\.json: must contain a JSON array, got object$"),
        (MHR_CORPUS, [{"query": "q"}], r"^MultiHopRAG\.json\[0\]: answer: is required$"),
        (
            MHR_CORPUS,
            [{"query": "q", "answer": "a", "evidence_list": {}}],
            r"^MultiHopRAG\.json\[0\]: evidence_list: must be a list",
        ),
        (
            MHR_CORPUS,
            [{"query": "q", "answer": "a", "evidence_list": [{"fact": "f"}]}],
            r"^MultiHopRAG\.json\[0\]: evidence_list\[0\]\.title: is required$",
        ),
        (
            MHR_CORPUS,
            [{"query": "q", "answer": "a"}, 5],
            r"^MultiHopRAG\.json\[1\]: a query row must be an object, got number$",
        ),
    ],
)
def test_multihop_row_errors(tmp_path: Path, corpus: Any, queries: Any, message: str) -> None:
    with pytest.raises(BenchmarkFormatError, match=message):
        load_multihop_rag(write_multihop(tmp_path / "m", corpus=corpus, queries=queries))


def test_multihop_invalid_json_and_missing_evidence_list(tmp_path: Path) -> None:
    folder = write_multihop(tmp_path / "m", queries=[{"query": "q", "answer": "a", "question_type": "null_query"}])
    case = load_multihop_rag(folder).cases[0]
    assert case.expected.evidence == () and dict(case.labels) == {"question_type": "null_query"}
    (folder / "corpus.json").write_text('[\n  {"title": "x",\n   "body": }\n]', encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"^corpus\.json:3:12: invalid JSON"):
        load_multihop_rag(folder)
    with pytest.raises(FileNotFoundError):
        load_multihop_rag(tmp_path / "nowhere" / "corpus.json")


# --------------------------------------------------------------------------------------
# DataFrames
# --------------------------------------------------------------------------------------
def test_from_frame_answers_evidence_and_labels() -> None:
    pd = pytest.importorskip("pandas")
    import numpy as np

    frame = pd.DataFrame(
        {
            "case_id": ["c1", "c2", "c3", "c4"],
            "query": ["q1", "q2", "q3", "q4"],
            "answers": [["Paris", "paris"], "Harrow", None, np.array(["x", "y"])],
            "evidence": [
                ["d1", "d2"],
                [{"reference_id": "d1", "text": "a fact"}, {"locator": {"source_key": "raw/k"}}],
                None,
                np.array(["d2"]),
            ],
            "hops": [1, 2, 1, 3],
            "kind": ["a", "b", None, "a"],
        }
    )
    bench = benchmark_from_frame(frame, manifest=SMALL)
    assert bench.case("c1").expected.answers == ("Paris", "paris")
    assert bench.case("c2").expected.answers == ("Harrow",)
    assert bench.case("c3").expected.answers == () and bench.case("c3").expected.evidence == ()
    assert bench.case("c4").expected.answers == ("x", "y")
    assert [e.to_dict() for e in bench.case("c1").expected.evidence] == [
        {
            "reference_id": "d1",
            "locator": {"source_key_prefix": "raw/benchmarks/small/dev/d1/"},
            "text": None,
            "metadata": {},
        },
        {
            "reference_id": "d2",
            "locator": {"source_key_prefix": "raw/benchmarks/small/dev/d2/"},
            "text": None,
            "metadata": {},
        },
    ]
    second = bench.case("c2").expected.evidence
    assert second[0].text == "a fact" and dict(second[1].locator) == {"source_key": "raw/k"}
    assert bench.case("c4").expected.evidence[0].reference_id == "d2"
    assert dict(bench.case("c2").labels) == {"hops": 2, "kind": "b"}
    assert type(bench.case("c2").labels["hops"]) is int
    assert bench.case("c3").labels["kind"] is None
    assert bench.evaluators() == ("evidence_recall@5", "answer_contains")
    only = benchmark_from_frame(frame, manifest=SMALL, label_columns=["kind"], evaluators=["answer_contains"])
    assert dict(only.case("c1").labels) == {"kind": "a"}
    assert only.evaluators() == ("answer_contains",)
    assert bench.labels_frame().shape == (4, 3)


def test_from_frame_custom_columns_and_documents() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"id": [1, 2], "question": ["a?", "b?"], "gold": ["x", ["y"]]})
    documents = pd.DataFrame(
        {
            "document_id": ["d1", "d2"],
            "text": ["one", "two"],
            "name": ["one.md", None],
            "metadata": [{"k": 1}, None],
        }
    )
    bench = benchmark_from_frame(
        frame, manifest=SMALL, documents=documents, case_id="id", query="question", answers="gold"
    )
    assert [c.case_id for c in bench.cases] == ["1", "2"]
    assert [c.expected.answers for c in bench.cases] == [("x",), ("y",)]
    assert all(dict(c.labels) == {} for c in bench.cases)
    assert [(d.document_id, d.name, d.media_type, d.read_bytes(), dict(d.metadata)) for d in bench.documents] == [
        ("d1", "one.md", "text/plain", b"one", {"k": 1}),
        ("d2", "d2.txt", "text/plain", b"two", {}),
    ]
    listed = benchmark_from_frame(
        frame,
        manifest=SMALL,
        documents=[BenchmarkDocument("d1", "d1.txt", "text/plain", data=b"1")],
        case_id="id",
        query="question",
        answers=None,
    )
    assert listed.document("d1").read_bytes() == b"1"
    assert "gold" in listed.case("1").labels  # not the answers column any more, so a label


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("answers", [["a"], ["b", 3.5, {}]], r"^row 1: column 'answers'\[2\]: must be a string, got object$"),
        ("answers", [["a"], [""]], r"^row 1: column 'answers'\[0\]: must not be empty$"),
        (
            "answers",
            [["a"], {"x": 1}],
            r"^row 1: column 'answers': must be a list of strings or one string, got object$",
        ),
        (
            "evidence",
            [["d1"], [{"metadata": {}}]],
            r"^row 1: column 'evidence'\[0\]: evidence must set at least one of",
        ),
        ("evidence", [["d1"], [None]], r"^row 1: column 'evidence'\[0\]: is required$"),
        (
            "evidence",
            [["d1"], 3.5],
            r"^row 1: column 'evidence': must be a list of document ids or evidence objects",
        ),
        ("query", ["q", None], r"^row 1: column 'query': is missing$"),
        ("query", ["q", 5], r"^row 1: column 'query': must be a string, got number$"),
        ("case_id", ["c1", "c1"], r"^row 1: column 'case_id': duplicate case id 'c1' \(first in row 0\)$"),
        ("case_id", ["c1", float("nan")], r"^row 1: column 'case_id': is missing$"),
    ],
)
def test_from_frame_errors_name_row_and_column(column: str, values: list[Any], message: str) -> None:
    pd = pytest.importorskip("pandas")
    data: dict[str, list[Any]] = {
        "case_id": ["c1", "c2"],
        "query": ["q1", "q2"],
        "answers": [["a"], ["b"]],
        "evidence": [None, None],
    }
    data[column] = values
    with pytest.raises(BenchmarkFormatError, match=message):
        benchmark_from_frame(pd.DataFrame(data), manifest=SMALL)


def test_from_frame_structural_errors() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"case_id": ["c1"], "query": ["q"]}, index=["first"])
    assert benchmark_from_frame(frame, manifest=SMALL).case("c1").expected.answers == ()
    one = pd.DataFrame({"case_id": ["c1"], "query": ["q"], "evidence": ["d9"]})
    assert benchmark_from_frame(one, manifest=SMALL).case("c1").expected.evidence[0].reference_id == "d9"
    with pytest.raises(BenchmarkFormatError, match="frame has no column 'question'"):
        benchmark_from_frame(frame, manifest=SMALL, query="question")
    with pytest.raises(BenchmarkFormatError, match="frame has no column 'gold'"):
        benchmark_from_frame(frame, manifest=SMALL, answers="gold")
    with pytest.raises(BenchmarkFormatError, match="no label column 'hops'"):
        benchmark_from_frame(frame, manifest=SMALL, label_columns=["hops"])
    with pytest.raises(BenchmarkFormatError, match="must be a pandas DataFrame"):
        benchmark_from_frame([{"case_id": "c1"}], manifest=SMALL)
    bad = pd.DataFrame({"case_id": ["c1"], "query": [" "]}, index=["first"])
    with pytest.raises(BenchmarkFormatError, match=r"^row 'first': column 'query': must not be empty"):
        benchmark_from_frame(bad, manifest=SMALL)
    documents = pd.DataFrame({"document_id": ["d1", "d1"], "text": ["a", "b"]})
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^documents row 1: column 'document_id': duplicate 'd1' \(first in row 0\)",
    ):
        benchmark_from_frame(frame, manifest=SMALL, documents=documents)
    documents = pd.DataFrame({"document_id": ["d1"], "text": [None]})
    with pytest.raises(
        BenchmarkFormatError, match=r"^documents row 0: column 'text': must be a string or bytes, got null"
    ):
        benchmark_from_frame(frame, manifest=SMALL, documents=documents)
    with pytest.raises(BenchmarkFormatError, match="documents: the frame has no column 'text'"):
        benchmark_from_frame(frame, manifest=SMALL, documents=pd.DataFrame({"document_id": ["d1"]}))
    with pytest.raises(BenchmarkFormatError, match=r"documents\[0\]: must be a BenchmarkDocument"):
        benchmark_from_frame(frame, manifest=SMALL, documents=[{"document_id": "d1"}])


def test_benchmark_from_frame_classmethod() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"case_id": ["c1"], "query": ["q"], "answers": ["a"]})
    assert Benchmark.from_frame(frame, manifest=SMALL).case("c1").expected.answers == ("a",)
