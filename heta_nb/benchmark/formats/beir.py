"""BEIR datasets (``corpus.jsonl``, ``queries.jsonl``, ``qrels/{split}.tsv``) as Heta 0.1.2's
``BeirBenchmark`` sees them (``docs/heta-compat.md`` §2.2), with warnings for dangling qrels."""

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
    jsonl_rows,
    key_segment,
    read_lines,
    require_rows,
    required_text,
    row_text,
    warn_data,
)
from heta_nb.benchmark.records import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkRunUnit,
)
from heta_nb.benchmark.types import Benchmark, build_benchmark
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model.json import json_type_name
from heta_nb.model.report import BenchmarkManifest

__all__ = ["BEIR_DEFAULT_EVALUATORS", "beir_document_id", "load_beir"]

#: Default evaluators of a BEIR benchmark (heta_nb's ranking-metric names).
BEIR_DEFAULT_EVALUATORS: tuple[str, ...] = ("ndcg@10", "recall@10", "map@10", "mrr@10", "precision@10")

_BEIR_HOMEPAGE = "https://github.com/beir-cellar/beir"
_BEIR_DATA_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets"
_BEIR_CITATION = "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of Information Retrieval Models"
_BEIR_TASK_TYPES: Mapping[str, str] = {
    "scifact": "scientific_fact_retrieval",
    "nfcorpus": "biomedical_information_retrieval",
    "fiqa": "financial_question_answering_retrieval",
    "hotpotqa": "multi_hop_question_answering_retrieval",
}
_BEIR_HEADERS = (("query-id", "corpus-id", "score"), ("query_id", "corpus_id", "score"))


def beir_document_id(value: str) -> str:
    """Heta's BEIR document id for a corpus ``_id`` (safe characters, sha1 suffix when changed).

    Characters other than Unicode letters/digits and ``._-`` become ``_``; runs of
    ``_`` collapse and leading/trailing ``_`` go. When that changes the id or leaves it
    longer than 96 characters, ``_`` + the first 12 hex digits of ``sha1(id)`` are
    appended to (at most 83 characters of) it, e.g. ``"doc 5"`` → ``doc_5_7b98d11c9666``.
    """
    original = value.strip()
    replaced = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in original)
    safe = "_".join(piece for piece in replaced.split("_") if piece) or "document"
    if safe == value and len(safe) <= 96:
        return safe
    digest = hashlib.sha1(value.encode("utf-8")).hexdigest()[:12]
    if not safe.strip("._-"):
        return f"document_{digest}"
    return f"{safe[:83].strip('._-')}_{digest}"


def _beir_id(value: Any, field: str) -> str:
    text = required_text(value, "load_beir", field).lower()
    if "/" in text or "\\" in text:
        raise fail("load_beir", field, f"{text!r} must be a dataset id, not a path")
    return key_segment(text, "load_beir", field)  # the split is a raw-key segment


def _beir_manifest(dataset: str, split: str) -> BenchmarkManifest:
    return BenchmarkManifest(
        name=f"beir_{dataset}",
        version="official",
        split=split,
        task_type=_BEIR_TASK_TYPES.get(dataset, "information_retrieval"),
        build_scope="corpus",
        homepage=_BEIR_HOMEPAGE,
        citation=_BEIR_CITATION,
        metadata={
            "dataset": dataset,
            "recommended": dataset in _BEIR_TASK_TYPES,
            "dataset_url": f"{_BEIR_DATA_URL}/{dataset}.zip",
        },
    )


def _beir_optional(value: Any, where: str, field: str) -> str:
    """BEIR ``title`` / ``text``: missing or null is ``""``; numbers are ``str()``-ed."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise fail(where, field, f"must be a string, got {json_type_name(value)}")
    return str(value).strip()


def _read_qrels(path: Path, label: str) -> tuple[dict[str, dict[str, int]], dict[str, int], dict[str, int]]:
    """``{query_id: {corpus_id: relevance}}`` in file order (a repeated pair keeps the last score).

    Also the first line of each query id and of each corpus id with a score > 0.
    Rows Heta reads without complaint but not as the file meant give one warning per
    kind: more than three columns (a TREC qrels file is misread), a repeated pair with
    another score, and scores that are not integers (truncated, ``0.5`` becomes 0).
    """
    qrels: dict[str, dict[str, int]] = {}
    query_lines: dict[str, int] = {}
    corpus_lines: dict[str, int] = {}
    pair_lines: dict[tuple[str, str], int] = {}
    wide: list[tuple[int, int]] = []  # (line, columns)
    repeated: list[str] = []
    truncated: list[str] = []
    first = True
    for number, line in read_lines(path, label):
        text = line.strip()
        if not text:
            continue
        parts = text.split("\t")
        is_first, first = first, False
        if is_first and tuple(p.strip().lower() for p in parts[:3]) in _BEIR_HEADERS:
            continue
        where = f"{label}:{number}"
        if len(parts) < 3:
            raise BenchmarkFormatError(
                f"{where}: expected 3 tab-separated columns (query-id, corpus-id, score), got {len(parts)}"
            )
        query_id, corpus_id, score = (p.strip() for p in parts[:3])
        if not query_id:
            raise fail(where, "query-id", "must not be empty")
        if not corpus_id:
            raise fail(where, "corpus-id", "must not be empty")
        try:
            value = float(score)
        except ValueError:
            hint = ""
            if len(parts) == 4:
                hint = (
                    "; the row has 4 columns: a TREC qrels file (query-id, iteration, corpus-id, relevance) "
                    "must be converted to BEIR's query-id, corpus-id, score"
                )
            elif is_first:
                hint = "; a header row must read query-id, corpus-id, score"
            raise fail(where, "score", f"{score!r} is not a number{hint}") from None
        try:
            relevance = int(value)
        except (ValueError, OverflowError):  # nan, inf
            raise fail(where, "score", f"{score!r} is not a number") from None
        if len(parts) > 3:
            wide.append((number, len(parts)))
        if value != relevance:
            truncated.append(f"{score!r} on line {number} (read as {relevance})")
        judged = qrels.setdefault(query_id, {})
        pair = (query_id, corpus_id)
        if pair in pair_lines and judged[corpus_id] != relevance:
            repeated.append(
                f"{query_id!r}/{corpus_id!r} on lines {pair_lines[pair]} and {number} "
                f"(scores {judged[corpus_id]} and {relevance})"
            )
        pair_lines.setdefault(pair, number)
        judged[corpus_id] = relevance
        query_lines.setdefault(query_id, number)
        if relevance > 0:
            corpus_lines.setdefault(corpus_id, number)
    if wide:
        wide_line, columns = wide[0]
        warn_data(
            f"{label}: {len(wide)} row(s) have more than 3 tab-separated columns (line {wide_line} has {columns}); "
            "only the first three are read, as query-id, corpus-id and score (as Heta and BEIR do). A TREC "
            "qrels file (query-id, iteration, corpus-id, relevance) is misread this way: convert it first",
        )
    if repeated:
        warn_data(
            f"{label}: {dangling(len(repeated), repeated)} query-id/corpus-id pair(s) repeat with a different "
            "score; the last score is used, as in Heta",
        )
    if truncated:
        warn_data(
            f"{label}: {dangling(len(truncated), truncated)} score(s) are not integers; they are truncated "
            "as Heta does (int(float(score))), and a score truncated to 0 is not relevant",
        )
    return qrels, query_lines, corpus_lines


def load_beir(
    folder: StrPath,
    *,
    split: str = "test",
    dataset: str | None = None,
    evaluators: Sequence[Any] | None = None,
) -> Benchmark:
    """Load one split of a BEIR dataset folder, exactly as Heta's ``BeirBenchmark`` sees it.

    Reads ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/{split}.tsv``. Document ids
    are :func:`beir_document_id` of ``_id``, the text is ``title + "\\n\\n" + text``.
    A case per query that has qrels; its evidence is one entry per qrel with score > 0
    (reference id, ``source_key_prefix`` locator, ``metadata.relevance``).

    Dangling qrels are not errors, because official BEIR files have them (ArguAna's qrels
    name corpus ids, and NFCorpus's query ids, that the dataset lacks), but each
    kind gives one :class:`BenchmarkDataWarning` per qrels file with the count and the
    first ids and lines: a corpus id (score > 0) missing from ``corpus.jsonl`` stays in
    the evidence, as in Heta and BEIR's own scoring (it counts as never retrieved);
    rows of a query id missing from ``queries.jsonl`` are left out, as in Heta. Rows
    with more than three columns, repeated pairs with another score and non-integer
    scores are read as Heta reads them, with one warning per kind.

    Args:
        folder: the dataset folder.
        split: qrels split (lowercased, as Heta does).
        dataset: dataset id for the manifest name ``beir_{dataset}`` (default: the
            folder name, lowercased).
        evaluators: default evaluators (default ``BEIR_DEFAULT_EVALUATORS``).

    Raises:
        BenchmarkFormatError: a bad row (file and line named), duplicate ids, or no cases.
        FileNotFoundError: a required file is missing.
    """
    root = Path(folder)
    dataset_id = _beir_id(dataset if dataset is not None else root.resolve().name, "dataset")
    split_id = _beir_id(split, "split")
    corpus_path, queries_path = root / "corpus.jsonl", root / "queries.jsonl"
    qrels_path = root / "qrels" / f"{split_id}.tsv"
    missing = [file_label(p, root) for p in (corpus_path, queries_path, qrels_path) if not p.exists()]
    if missing:
        raise FileNotFoundError(f"{root}: BEIR dataset is missing {', '.join(missing)}")
    manifest = _beir_manifest(dataset_id, split_id)
    corpus_label, queries_label, qrels_label = (file_label(p, root) for p in (corpus_path, queries_path, qrels_path))

    documents: list[BenchmarkDocument] = []
    seen_docs: dict[str, tuple[int, str]] = {}
    for number, row in jsonl_rows(corpus_path, corpus_label):
        where = f"{corpus_label}:{number}"
        original = row_text(row, "_id", where, ints=True)
        document_id = beir_document_id(original)
        if document_id in seen_docs:
            line, other = seen_docs[document_id]
            same = "duplicate _id" if other == original else f"_id {original!r} gives the same document id as"
            raise fail(where, "_id", f"{same} {other!r} on line {line} ({document_id!r})")
        seen_docs[document_id] = (number, original)
        title = _beir_optional(row.get("title"), where, "title")
        body = _beir_optional(row.get("text"), where, "text")
        content = "\n\n".join(part for part in (title, body) if part).strip() or title or original
        try:
            documents.append(
                BenchmarkDocument(
                    document_id=key_segment(document_id, where, "_id"),
                    name=f"{document_id}.txt",
                    media_type="text/plain",
                    data=content.encode("utf-8"),
                    metadata={
                        "beir_doc_id": original,
                        "beir_document_id": document_id,
                        "dataset": dataset_id,
                        "title": title,
                    },
                )
            )
        except UnicodeEncodeError:
            raise fail(where, "text", "contains an unpaired surrogate") from None

    queries: dict[str, str] = {}
    query_lines: dict[str, int] = {}
    for number, row in jsonl_rows(queries_path, queries_label):
        where = f"{queries_label}:{number}"
        query_id = row_text(row, "_id", where, ints=True)
        if query_id in queries:
            raise fail(where, "_id", f"duplicate query id {query_id!r} (first on line {query_lines[query_id]})")
        queries[query_id] = row_text(row, "text", where)
        query_lines[query_id] = number

    qrels, qrel_query_lines, qrel_corpus_lines = _read_qrels(qrels_path, qrels_label)
    unknown_queries = [query_id for query_id in qrels if query_id not in queries]
    if unknown_queries:
        examples = (f"{q!r} on line {qrel_query_lines[q]}" for q in unknown_queries)
        warn_data(
            f"{qrels_label}: {dangling(len(unknown_queries), examples)} query id(s) are not in "
            f"{queries_label}; their qrels were left out",
        )
    unknown_documents: dict[str, int] = {}
    prefix = f"raw/benchmarks/{manifest.name}/{manifest.split}/"
    ids: dict[str, str] = {}
    cases: list[BenchmarkCase] = []
    for query_id, query in queries.items():
        judged = qrels.get(query_id)
        if not judged:
            continue
        evidence = []
        for corpus_id, relevance in judged.items():
            if relevance <= 0:
                continue
            document_id = ids.get(corpus_id) or ids.setdefault(corpus_id, beir_document_id(corpus_id))
            if document_id not in seen_docs:
                unknown_documents.setdefault(corpus_id, qrel_corpus_lines[corpus_id])
            evidence.append(
                BenchmarkEvidence(
                    reference_id=document_id,
                    locator={"source_key_prefix": f"{prefix}{document_id}/"},
                    metadata={
                        "beir_doc_id": corpus_id,
                        "beir_document_id": document_id,
                        "relevance": relevance,
                    },
                )
            )
        cases.append(
            BenchmarkCase(
                case_id=query_id,
                query=query,
                expected=BenchmarkExpected(
                    evidence=tuple(evidence),
                    metadata={"beir_query_id": query_id, "positive_qrels": len(evidence)},
                ),
                labels={"dataset": dataset_id, "split": split_id},
                metadata={"beir_query_id": query_id, "dataset": dataset_id},
            )
        )
    if unknown_documents:
        examples = (f"{c!r} on line {n}" for c, n in sorted(unknown_documents.items(), key=lambda item: item[1]))
        warn_data(
            f"{qrels_label}: {dangling(len(unknown_documents), examples)} corpus id(s) with a score > 0 are not "
            f"in {corpus_label}; they stay in the cases' evidence (as in Heta and BEIR) but can never be retrieved",
        )
    require_rows(documents, corpus_label, "documents")
    if not cases:
        raise BenchmarkFormatError(
            f"{qrels_label}: no query in {queries_label} has qrels in this file (check the split and the ids)"
        )
    return build_benchmark(
        manifest,
        documents,
        cases,
        units=(BenchmarkRunUnit(unit_id="corpus", metadata={"dataset": dataset_id, "split": split_id}),),
        evaluators=chosen_evaluators(evaluators, BEIR_DEFAULT_EVALUATORS),
        source=str(root),
    )
