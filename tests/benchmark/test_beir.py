"""BEIR folders: qrels, headers, rows, warnings."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from heta_nb.benchmark import (
    Benchmark,
    load_beir,
    load_benchmark,
)
from heta_nb.benchmark.formats.beir import beir_document_id
from heta_nb.benchmark.formats.parsing import BenchmarkDataWarning
from heta_nb.errors import BenchmarkFormatError


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_beir(folder: Path, corpus: list[Any], queries: list[Any], qrels: str, split: str = "test") -> Path:
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", queries)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return folder


# --------------------------------------------------------------------------------------
# BEIR errors
# --------------------------------------------------------------------------------------
BEIR_CORPUS = [{"_id": "a", "title": "A", "text": "alpha"}, {"_id": "b", "text": "beta"}]


BEIR_QUERIES = [{"_id": "q1", "text": "alpha?"}]


CORPUS = '{"_id": "d1", "text": "one"}\n{"_id": "d2", "text": "two"}\n{"_id": "0", "text": "zero"}\n'


QUERIES = '{"_id": "q1", "text": "first?"}\n{"_id": "q2", "text": "second?"}\n'


def beir_folder(tmp_path: Path, qrels: str, corpus: str = CORPUS, queries: str = QUERIES) -> Path:
    folder = tmp_path / "ds"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (folder / "queries.jsonl").write_text(queries, encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return folder


def load_warning(loader: object) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = loader()  # type: ignore[operator]
    return result, [str(w.message) for w in record if issubclass(w.category, BenchmarkDataWarning)]


def evidence(bench: Benchmark, case_id: str) -> list[tuple[str | None, object]]:
    return [(e.reference_id, e.metadata.get("relevance")) for e in bench.case(case_id).expected.evidence]


LIMIT = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


needs_limit = pytest.mark.skipif(not LIMIT, reason="this Python has no int-string conversion limit")


HUGE = "1" + "0" * 5000


DEEP = "[" * 100_000 + "]" * 100_000


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def beir_folder_from_text(tmp_path: Path, qrels: str, corpus: str | None = None, queries: str | None = None) -> Path:
    folder = tmp_path / "ds"
    write(folder / "corpus.jsonl", corpus if corpus is not None else '{"_id": "d1", "text": "one"}\n')
    write(folder / "queries.jsonl", queries if queries is not None else '{"_id": "q1", "text": "q?"}\n')
    write(folder / "qrels" / "test.tsv", qrels)
    return folder


def data_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, BenchmarkDataWarning)]


def test_beir_document_id_examples() -> None:
    assert beir_document_id("doc 5") == "doc_5_7b98d11c9666"
    assert beir_document_id("b1") == "b1"
    assert len(beir_document_id("x" * 200)) == 83 + 13


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
# BEIR qrels that Heta reads without complaint, but not as the file meant
# --------------------------------------------------------------------------------------
def test_qrels_with_a_fourth_column_warn_that_trec_files_are_misread(tmp_path: Path) -> None:
    # TREC layout (query-id, iteration, corpus-id, relevance) with numeric corpus ids: the
    # first three columns parse, so corpus-id "0" with score 1 / 0 is read silently.
    folder = beir_folder(tmp_path, "q1\t0\t0\t1\nq2\t0\t0\t1\n")
    bench, messages = load_warning(lambda: load_beir(folder))
    assert isinstance(bench, Benchmark)
    assert evidence(bench, "q1") == []  # "0" read as the corpus id, score "0"
    assert len(messages) == 1
    assert messages[0].startswith("qrels/test.tsv: 2 row(s) have more than 3 tab-separated columns (line 1 has 4)")
    assert "TREC" in messages[0]


def test_qrels_trec_layout_with_text_ids_says_so(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path, "q1\t0\td1\t1\n")
    with pytest.raises(BenchmarkFormatError, match=r"^qrels/test\.tsv:1: score: 'd1' is not a number; .*TREC qrels"):
        load_beir(folder)


def test_qrels_unknown_header_row_says_what_a_header_is(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path, "qid\tdocid\trel\nq1\td1\t1\n")
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^qrels/test\.tsv:1: score: 'rel' is not a number; a header row must read query-id, corpus-id, score$",
    ):
        load_beir(folder)


def test_qrels_repeated_pair_with_another_score_warns(tmp_path: Path) -> None:
    # the second line silently wipes the judgement: q1 loses its only relevant document
    folder = beir_folder(tmp_path, "q1\td1\t2\nq1\td1\t0\nq2\td2\t1\nq2\td2\t1\n")
    bench, messages = load_warning(lambda: load_beir(folder))
    assert isinstance(bench, Benchmark)
    assert evidence(bench, "q1") == []  # as in Heta: the last score wins
    assert messages == [
        "qrels/test.tsv: 1 ('q1'/'d1' on lines 1 and 2 (scores 2 and 0)) query-id/corpus-id pair(s) repeat "
        "with a different score; the last score is used, as in Heta"
    ]


def test_qrels_fractional_scores_warn_that_they_are_truncated(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path, "q1\td1\t1.9\nq2\td2\t0.5\nq2\td1\t1.0\n")
    bench, messages = load_warning(lambda: load_beir(folder))
    assert isinstance(bench, Benchmark)
    assert evidence(bench, "q1") == [("d1", 1)]
    assert evidence(bench, "q2") == [("d1", 1)]  # 0.5 became 0 and is not evidence
    assert len(messages) == 1
    assert messages[0].startswith(
        "qrels/test.tsv: 2 ('1.9' on line 1 (read as 1), '0.5' on line 2 (read as 0)) score(s) are not integers"
    )


def test_windows_saved_beir_files_load_without_warnings(tmp_path: Path) -> None:
    """BOM, CRLF, whitespace-only lines and no final newline in all three files."""

    def windows(text: str) -> str:
        return "\ufeff" + text.replace("\n", "\r\n") + "  \r\n\t\r\n"

    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2"
    folder = beir_folder(tmp_path, windows(qrels), windows(CORPUS), windows(QUERIES))
    bench, messages = load_warning(lambda: load_beir(folder))
    assert isinstance(bench, Benchmark)
    assert messages == []
    assert evidence(bench, "q1") == [("d1", 1)] and evidence(bench, "q2") == [("d2", 2)]
    assert bench.document("d1").read_bytes() == b"one"


@pytest.mark.hostile
@needs_limit
def test_beir_huge_integer_and_deep_nesting(tmp_path: Path) -> None:
    folder = beir_folder_from_text(
        tmp_path, "q1\td1\t1\n", corpus='{"_id": "d1", "text": "one"}\n{"_id": ' + HUGE + "}\n"
    )
    with pytest.raises(BenchmarkFormatError, match=r"^corpus\.jsonl:2:9: invalid JSON: an integer with more than"):
        load_beir(folder)
    write(folder / "corpus.jsonl", '{"_id": "d1", "text": "one"}\n')
    write(folder / "queries.jsonl", DEEP + "\n")
    with pytest.raises(BenchmarkFormatError, match=r"^queries\.jsonl:1: invalid JSON: nested more than \d+ levels"):
        load_beir(folder)


# --------------------------------------------------------------------------------------
# 3. dangling references: warnings, Heta's evidence kept
# --------------------------------------------------------------------------------------
def test_beir_unknown_documents_and_queries_warn_once_each(tmp_path: Path) -> None:
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tTYPO\t2\nq1\tgone\t0\nq9\td1\t1\nq8\td1\t1\nq1\tlost\t1\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error", BenchmarkDataWarning)
        load_beir(beir_folder_from_text(tmp_path / "clean", "q1\td1\t1\n"))  # consistent files: no warning
    folder = beir_folder_from_text(tmp_path, qrels)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        bench = load_benchmark(folder)
    assert data_warnings(record) == [
        "qrels/test.tsv: 2 ('q9' on line 5, 'q8' on line 6) query id(s) are not in queries.jsonl; "
        "their qrels were left out",
        "qrels/test.tsv: 2 ('TYPO' on line 3, 'lost' on line 7) corpus id(s) with a score > 0 are not in "
        "corpus.jsonl; they stay in the cases' evidence (as in Heta and BEIR) but can never be retrieved",
    ]
    assert all(w.filename == __file__ for w in record)  # attributed to the caller
    assert [c.case_id for c in bench.cases] == ["q1"]
    assert [e.reference_id for e in bench.case("q1").expected.evidence] == ["d1", "TYPO", "lost"]


def test_beir_warning_quotes_only_the_first_ids(tmp_path: Path) -> None:
    qrels = "".join(f"q1\tmissing{n}\t1\n" for n in range(8)) + "q1\td1\t1\n"
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        load_beir(beir_folder_from_text(tmp_path, qrels))
    (message,) = data_warnings(record)
    assert message.startswith("qrels/test.tsv: 8 ('missing0' on line 1, ")
    assert "'missing4' on line 5, ...) corpus id(s)" in message and "missing5" not in message
