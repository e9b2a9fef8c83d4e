"""load_benchmark: detecting the layout, manifests, nested and compressed folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

from heta_nb.benchmark import (
    load_benchmark,
    load_jsonl_benchmark,
)
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model import BenchmarkManifest

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


def write_beir(folder: Path, corpus: list[Any], queries: list[Any], qrels: str, split: str = "test") -> Path:
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", queries)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return folder


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


SMALL_MANIFEST = {"name": "m", "version": "1", "split": "test", "task_type": "qa"}


CORPUS = '{"_id": "d1", "text": "one"}\n{"_id": "d2", "text": "two"}\n{"_id": "0", "text": "zero"}\n'


QUERIES = '{"_id": "q1", "text": "first?"}\n{"_id": "q2", "text": "second?"}\n'


def beir_folder(tmp_path: Path, qrels: str, corpus: str = CORPUS, queries: str = QUERIES) -> Path:
    folder = tmp_path / "ds"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (folder / "queries.jsonl").write_text(queries, encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return folder


DOC = {"document_id": "d1", "name": "d1.txt", "media_type": "text/plain", "text": "x"}


DEEP = "[" * 100_000 + "]" * 100_000


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl_folder_from_text(
    tmp_path: Path, cases: str, manifest: Any = SMALL_MANIFEST, documents: str | None = None
) -> Path:
    folder = tmp_path / "bench"
    write(folder / "documents.jsonl", documents if documents is not None else json.dumps(DOC) + "\n")
    write(folder / "cases.jsonl", cases)
    if manifest is not None:
        write(folder / "manifest.json", json.dumps(manifest))
    return folder


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
# encodings and folders that match no layout
# --------------------------------------------------------------------------------------
def test_utf16_files_say_to_save_as_utf8(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "documents.jsonl").write_text(
        json.dumps({"document_id": "d", "name": "d.txt", "media_type": "text/plain", "text": "x"}), encoding="utf-8"
    )
    (folder / "cases.jsonl").write_text('{"case_id": "c", "query": "q"}\n', encoding="utf-16")
    (folder / "manifest.json").write_text(json.dumps(SMALL_MANIFEST), encoding="utf-8")
    hint = "the file starts with a UTF-16 byte-order mark: save it as UTF-8"
    with pytest.raises(BenchmarkFormatError, match=rf"^cases\.jsonl:1: not valid UTF-8 .*; {hint}$"):
        load_benchmark(folder)
    (folder / "cases.jsonl").write_text('{"case_id": "c", "query": "q"}\n', encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps(SMALL_MANIFEST), encoding="utf-16")
    with pytest.raises(BenchmarkFormatError, match=rf"^manifest\.json:1: not valid UTF-8 .*; {hint}$"):
        load_benchmark(folder)


def test_no_layout_names_nested_benchmarks_and_compressed_files(tmp_path: Path) -> None:
    # unzipping BEIR's scifact.zip gives data/scifact/...; Hugging Face ships corpus.jsonl.gz
    nested = beir_folder(tmp_path / "data", "q1\td1\t1\n")  # data/ds/, with the test split
    (nested / "qrels" / "test.tsv").rename(nested / "qrels" / "dev.tsv")  # any split counts
    (tmp_path / "data" / "corpus.jsonl.gz").write_bytes(b"\x1f\x8b")
    with pytest.raises(BenchmarkFormatError) as info:
        load_benchmark(tmp_path / "data")
    message = str(info.value)
    assert "no benchmark found" in message
    assert "found corpus.jsonl.gz: decompress first" in message
    assert "a subfolder holds a benchmark, load it instead: 'ds' (BEIR)" in message


@pytest.mark.hostile
def test_manifest_json_deep_nesting(tmp_path: Path) -> None:
    folder = jsonl_folder_from_text(tmp_path, '{"case_id": "c", "query": "q"}\n', manifest=None)
    write(folder / "manifest.json", '{"metadata": ' + DEEP + "}")
    with pytest.raises(BenchmarkFormatError, match=r"^manifest\.json: invalid JSON: nested more than \d+ levels"):
        load_benchmark(folder)


# --------------------------------------------------------------------------------------
# 4. manifest name / split that would break raw keys
# --------------------------------------------------------------------------------------
@pytest.mark.hostile
@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "../../x"), ("name", "a/b"), ("name", ".."), ("split", "a\\b"), ("split", "te\x00st"), ("split", ".")],
)
def test_manifest_json_unsafe_name_or_split(tmp_path: Path, field: str, value: str) -> None:
    folder = jsonl_folder_from_text(
        tmp_path, '{"case_id": "c", "query": "q"}\n', manifest={**SMALL_MANIFEST, field: value}
    )
    with pytest.raises(
        BenchmarkFormatError, match=rf"^manifest\.json: {field}: .* cannot be used in an object key \(no '/'"
    ):
        load_benchmark(folder)


@pytest.mark.hostile
def test_manifest_argument_unsafe_name(tmp_path: Path) -> None:
    folder = jsonl_folder_from_text(tmp_path, '{"case_id": "c", "query": "q"}\n', manifest=None)
    with pytest.raises(BenchmarkFormatError, match=r"^manifest: name: '\.\./x' cannot be used in an object key"):
        load_benchmark(folder, manifest={**SMALL_MANIFEST, "name": "../x"})
    with pytest.raises(BenchmarkFormatError, match=r"^manifest: split: 'a/b' cannot be used"):
        load_jsonl_benchmark(
            folder / "documents.jsonl", folder / "cases.jsonl", manifest={**SMALL_MANIFEST, "split": "a/b"}
        )

    # dots inside a segment are fine
    bench = load_benchmark(folder, manifest={**SMALL_MANIFEST, "name": "v1..2"})
    assert bench.raw_keys() == ("raw/benchmarks/v1..2/test/d1/d1.txt",)
