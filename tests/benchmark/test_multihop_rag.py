"""MultiHop-RAG files."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from heta_nb.benchmark import (
    load_benchmark,
    load_multihop_rag,
)
from heta_nb.benchmark.formats.parsing import BenchmarkDataWarning
from heta_nb.errors import BenchmarkFormatError

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


LIMIT = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


needs_limit = pytest.mark.skipif(not LIMIT, reason="this Python has no int-string conversion limit")


HUGE = "1" + "0" * 5000


DEEP = "[" * 100_000 + "]" * 100_000


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def mhr_folder(tmp_path: Path, corpus: str, queries: str) -> Path:
    folder = tmp_path / "mhr"
    write(folder / "corpus.json", corpus)
    write(folder / "MultiHopRAG.json", queries)
    return folder


def data_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, BenchmarkDataWarning)]


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


@pytest.mark.hostile
@needs_limit
def test_multihop_huge_integer_gives_line_and_column(tmp_path: Path) -> None:
    folder = mhr_folder(tmp_path, '[{"title": "T", "body": "b"}]', '[\n  {"query": "q",\n   "answer": ' + HUGE + "}\n]")
    with pytest.raises(
        BenchmarkFormatError, match=rf"^MultiHopRAG\.json:3:14: invalid JSON: an integer with more than {LIMIT} digits$"
    ):
        load_multihop_rag(folder)


@pytest.mark.hostile
def test_multihop_deep_nesting(tmp_path: Path) -> None:
    folder = mhr_folder(tmp_path, DEEP, "[]")
    with pytest.raises(BenchmarkFormatError, match=r"^corpus\.json: invalid JSON: nested more than \d+ levels deep"):
        load_multihop_rag(folder)


def test_multihop_unknown_article_warns_once(tmp_path: Path) -> None:
    corpus = json.dumps([{"title": "T1", "body": "b", "url": "http://a"}, {"title": "T2", "body": "c"}])
    queries = json.dumps(
        [
            {"query": "q", "answer": "a", "evidence_list": [{"title": "T1", "url": "http://a"}, {"title": "nope"}]},
            {"query": "r", "answer": "b", "evidence_list": [{"title": "T2"}, {"title": "T1"}]},  # T1 has a url
        ]
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        bench = load_multihop_rag(mhr_folder(tmp_path, corpus, queries))
    assert data_warnings(record) == [
        "MultiHopRAG.json: 2 (MultiHopRAG.json[0].evidence_list[1] 'nope', MultiHopRAG.json[1].evidence_list[1] "
        "'T1') evidence item(s) name an article that is not in corpus.json (no row with that url, or that title "
        "when there is no url); they stay in the evidence (as in Heta) but can never be found"
    ]
    assert [len(c.expected.evidence) for c in bench.cases] == [2, 2]
