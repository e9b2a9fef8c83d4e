"""Benchmark files as users have them on disk: silent misreads become warnings or clear errors."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

from heta_nb.benchmark import Benchmark, BenchmarkDocument, load_beir, load_benchmark
from heta_nb.benchmark.formats.parsing import BenchmarkDataWarning
from heta_nb.errors import BenchmarkFormatError

MANIFEST = {"name": "m", "version": "1", "split": "test", "task_type": "qa"}
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
    (folder / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    hint = "the file starts with a UTF-16 byte-order mark: save it as UTF-8"
    with pytest.raises(BenchmarkFormatError, match=rf"^cases\.jsonl:1: not valid UTF-8 .*; {hint}$"):
        load_benchmark(folder)
    (folder / "cases.jsonl").write_text('{"case_id": "c", "query": "q"}\n', encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-16")
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


# --------------------------------------------------------------------------------------
# DataFrames: pandas' own conversions
# --------------------------------------------------------------------------------------
def test_from_frame_integer_columns_with_a_missing_value_keep_integer_text() -> None:
    # pandas stores [42, None] as float64 [42.0, nan]: the answer must stay "42", not "42.0",
    # and document ids 12.0 / 1.0 must be ids, not errors.
    frame = pd.DataFrame({"case_id": [1, 2], "query": ["q1", "q2"], "answers": [42, None], "evidence": [12, None]})
    documents = pd.DataFrame({"document_id": [12, None], "text": ["x", "y"]}).iloc[:1]
    assert documents["document_id"].dtype == "float64"
    bench = Benchmark.from_frame(frame, manifest=MANIFEST, documents=documents)
    assert bench.case("1").expected.answers == ("42",)
    assert [e.reference_id for e in bench.case("1").expected.evidence] == ["12"]
    assert bench.case("2").expected.answers == () and bench.case("2").expected.evidence == ()
    assert [d.document_id for d in bench.documents] == ["12"]
    floats = pd.DataFrame({"case_id": [1.0, 2.0], "query": ["q1", "q2"], "answers": [[2.5, 3.0], 7.25]})
    bench = Benchmark.from_frame(floats, manifest=MANIFEST)
    assert [c.case_id for c in bench.cases] == ["1", "2"]
    assert bench.case("1").expected.answers == ("2.5", "3")
    assert bench.case("2").expected.answers == ("7.25",)


@pytest.mark.parametrize(
    ("column", "cell"),
    [("answers", "['Paris', 'paris']"), ("answers", '["Paris"]'), ("evidence", "['d1', 'd2']"), ("evidence", "[]")],
)
def test_from_frame_lists_stored_as_text_are_refused(column: str, cell: str) -> None:
    # what pandas.read_csv gives back for a list column written with to_csv
    frame = pd.DataFrame({"case_id": ["c"], "query": ["q"], column: [cell]})
    with pytest.raises(
        BenchmarkFormatError, match=rf"^row 0: column '{column}': .* is a list stored as text \(e\.g\. a DataFrame"
    ):
        Benchmark.from_frame(frame, manifest=MANIFEST)


def test_from_frame_bracketed_text_that_is_not_a_list_or_is_in_a_list_is_kept() -> None:
    frame = pd.DataFrame({"case_id": ["a", "b"], "query": ["q", "q"], "answers": ["[citation needed]", ["['x', 'y']"]]})
    bench = Benchmark.from_frame(frame, manifest=MANIFEST)
    assert bench.case("a").expected.answers == ("[citation needed]",)
    assert bench.case("b").expected.answers == ("['x', 'y']",)


def test_from_frame_evidence_naming_no_document_warns_once() -> None:
    frame = pd.DataFrame({"case_id": ["a", "b"], "query": ["q", "q"], "evidence": [["d1", "zz"], "yy"]})
    documents = [BenchmarkDocument(document_id="d1", name="d1.txt", media_type="text/plain", data=b"x")]
    bench, messages = load_warning(lambda: Benchmark.from_frame(frame, manifest=MANIFEST, documents=documents))
    assert isinstance(bench, Benchmark)
    assert [e.reference_id for e in bench.case("a").expected.evidence] == ["d1", "zz"]  # kept
    assert messages == [
        "column 'evidence': 2 (row 0 'zz', row 1 'yy') document id(s) are not in documents; "
        "they stay in the evidence but can never be retrieved"
    ]
    _, messages = load_warning(lambda: Benchmark.from_frame(frame, manifest=MANIFEST))
    assert messages == []  # no documents given: nothing to check against
