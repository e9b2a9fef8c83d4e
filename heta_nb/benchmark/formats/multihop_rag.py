"""MultiHop-RAG (``corpus.json`` + ``MultiHopRAG.json``) as Heta 0.1.2's ``MultiHopRagBenchmark``
reads it (``docs/heta-compat.md`` §2.3), with a warning for evidence naming no article."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_nb.benchmark.formats.parsing import (
    StrPath,
    chosen_evaluators,
    dangling,
    fail,
    file_label,
    read_json_array,
    require_rows,
    required_text,
    row_text,
    warn_data,
)
from heta_nb.benchmark.records import BenchmarkCase, BenchmarkDocument, BenchmarkEvidence, BenchmarkExpected
from heta_nb.benchmark.types import Benchmark, build_benchmark
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model.json import json_type_name
from heta_nb.model.report import BenchmarkManifest

__all__ = ["MULTIHOP_RAG_DEFAULT_EVALUATORS", "load_multihop_rag", "multihop_rag_article_id"]

#: Default evaluators of MultiHop-RAG (Heta's ``MultiHopRagBenchmark`` default).
MULTIHOP_RAG_DEFAULT_EVALUATORS: tuple[str, ...] = ("evidence_recall@5", "answer_contains")

_MHR_HOMEPAGE = "https://github.com/yixuantt/MultiHop-RAG"
_MHR_CITATION = "MultiHop-RAG: Benchmarking Retrieval-Augmented Generation for Multi-Hop Queries"
_MHR_DATA_URL = "https://huggingface.co/datasets/yixuantt/MultiHopRAG/resolve/main"


def multihop_rag_article_id(*, title: str, url: str | None) -> str:
    """Heta's MultiHop-RAG document id: ``article_`` + 16 hex digits of sha256(url or title)."""
    return "article_" + hashlib.sha256((url or title).encode("utf-8")).hexdigest()[:16]


def _mhr_url(value: Any, where: str, field: str) -> str | None:
    """Optional URL: null or blank is None (as in Heta)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(where, field, f"must be a string, got {json_type_name(value)}")
    return value.strip() or None


def _mhr_manifest() -> BenchmarkManifest:
    return BenchmarkManifest(
        name="multihop_rag",
        version="official",
        split="all",
        task_type="multi_hop_qa",
        build_scope="corpus",
        homepage=_MHR_HOMEPAGE,
        citation=_MHR_CITATION,
        metadata={
            "corpus_url": f"{_MHR_DATA_URL}/corpus.json",
            "queries_url": f"{_MHR_DATA_URL}/MultiHopRAG.json",
        },
    )


def _mhr_document(row: Any, where: str) -> BenchmarkDocument:
    if not isinstance(row, Mapping):
        raise BenchmarkFormatError(f"{where}: a corpus row must be an object, got {json_type_name(row)}")
    title = row_text(row, "title", where)
    body = row_text(row, "body", where)
    url = _mhr_url(row.get("url"), where, "url")
    document_id = multihop_rag_article_id(title=title, url=url)
    source, published_at = row.get("source"), row.get("published_at")
    text = f"Title: {title}\nSource: {source or ''}\nPublished at: {published_at or ''}\nURL: {url or ''}\n\n{body}"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise fail(where, "body", "contains an unpaired surrogate") from None
    return BenchmarkDocument(
        document_id=document_id,
        name=f"{document_id}.txt",
        media_type="text/plain",
        data=data,
        metadata={
            "title": title,
            "author": row.get("author"),
            "source": source,
            "published_at": published_at,
            "category": row.get("category"),
            "url": url,
        },
    )


def _mhr_evidence(row: Any, where: str, field: str, manifest: BenchmarkManifest) -> BenchmarkEvidence:
    if not isinstance(row, Mapping):
        raise fail(where, field, f"must be an object, got {json_type_name(row)}")
    title = required_text(row.get("title"), where, f"{field}.title")
    url = _mhr_url(row.get("url"), where, f"{field}.url")
    fact = row.get("fact")
    text = None
    if fact is not None:
        if isinstance(fact, bool) or not isinstance(fact, (str, int, float)):
            raise fail(where, f"{field}.fact", f"must be a string, got {json_type_name(fact)}")
        text = str(fact).strip() or None
    document_id = multihop_rag_article_id(title=title, url=url)
    source_key = f"raw/benchmarks/{manifest.name}/{manifest.split}/{document_id}/{document_id}.txt"
    return BenchmarkEvidence(
        reference_id=document_id,
        locator={"source_key": source_key},
        text=text,
        metadata={
            "document_id": document_id,
            "title": title,
            "author": row.get("author"),
            "source": row.get("source"),
            "category": row.get("category"),
            "published_at": row.get("published_at"),
            "url": url,
        },
    )


def _mhr_case(row: Any, index: int, where: str, manifest: BenchmarkManifest) -> BenchmarkCase:
    if not isinstance(row, Mapping):
        raise BenchmarkFormatError(f"{where}: a query row must be an object, got {json_type_name(row)}")
    query = row_text(row, "query", where)
    answer = row_text(row, "answer", where, numbers=True)
    rows = row.get("evidence_list")
    if rows is None:
        rows = []
    elif not isinstance(rows, list):
        raise fail(where, "evidence_list", f"must be a list, got {json_type_name(rows)}")
    question_type = row.get("question_type")
    return BenchmarkCase(
        case_id=f"multihop_rag_{index:04d}",
        query=query,
        expected=BenchmarkExpected(
            answers=(answer,),
            evidence=tuple(_mhr_evidence(item, where, f"evidence_list[{i}]", manifest) for i, item in enumerate(rows)),
            metadata={"question_type": question_type},
        ),
        labels={"question_type": question_type},
        metadata={"original_index": index},
    )


def load_multihop_rag(
    folder_or_corpus: StrPath,
    queries_path: StrPath | None = None,
    *,
    evaluators: Sequence[Any] | None = None,
) -> Benchmark:
    """Load MultiHop-RAG (``corpus.json`` + ``MultiHopRAG.json``) as Heta's adapter does.

    Document ids are :func:`multihop_rag_article_id`, the text is a ``Title:`` /
    ``Source:`` / ``Published at:`` / ``URL:`` header, a blank line and the body.
    Case ids are ``multihop_rag_{index:04d}``; evidence has the exact raw key as
    ``locator.source_key`` and the fact as ``text``; ``question_type`` is a label.
    Unlike Heta, two corpus rows with the same id (same url, or same title without
    url) are an error here, and a missing or null ``evidence_list`` means no evidence.
    Evidence naming an article that is not in the corpus stays in the evidence, as in
    Heta (it can never be found), and gives one :class:`BenchmarkDataWarning` per
    queries file with the count and the first few items.

    Args:
        folder_or_corpus: the folder holding both files, or the path of ``corpus.json``.
        queries_path: ``MultiHopRAG.json`` (default: next to the corpus).
        evaluators: default evaluators (default ``("evidence_recall@5", "answer_contains")``).

    Raises:
        BenchmarkFormatError: a bad row (``file[index]: field: ...``) or duplicate ids.
        FileNotFoundError: a file is missing.
    """
    given = Path(folder_or_corpus)
    corpus_path = given / "corpus.json" if given.is_dir() else given
    base = corpus_path.parent
    queries = Path(queries_path) if queries_path is not None else base / "MultiHopRAG.json"
    corpus_label, queries_label = file_label(corpus_path, base), file_label(queries, base)
    manifest = _mhr_manifest()

    documents: list[BenchmarkDocument] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(read_json_array(corpus_path, corpus_label)):
        where = f"{corpus_label}[{index}]"
        document = _mhr_document(row, where)
        if document.document_id in seen:
            other = seen[document.document_id]
            field = "url" if document.metadata.get("url") else "title"
            raise fail(
                where,
                field,
                f"article id {document.document_id!r} duplicates {corpus_label}[{other}] "
                "(the id is derived from the url, or the title when there is no url)",
            )
        seen[document.document_id] = index
        documents.append(document)
    cases = [
        _mhr_case(row, index, f"{queries_label}[{index}]", manifest)
        for index, row in enumerate(read_json_array(queries, queries_label))
    ]
    unknown = [
        (f"{queries_label}[{index}].evidence_list[{i}]", evidence.metadata["title"])
        for index, case in enumerate(cases)
        for i, evidence in enumerate(case.expected.evidence)
        if evidence.reference_id not in seen
    ]
    if unknown:
        examples = (f"{where} {title!r}" for where, title in unknown)
        warn_data(
            f"{queries_label}: {dangling(len(unknown), examples)} evidence item(s) name an article that is not "
            f"in {corpus_label} (no row with that url, or that title when there is no url); they stay in the "
            "evidence (as in Heta) but can never be found",
        )
    require_rows(documents, corpus_label, "articles")
    require_rows(cases, queries_label, "queries")
    return build_benchmark(
        manifest,
        documents,
        cases,
        evaluators=chosen_evaluators(evaluators, MULTIHOP_RAG_DEFAULT_EVALUATORS),
        source=str(base),
    )
