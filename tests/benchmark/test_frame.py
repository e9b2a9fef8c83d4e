"""Benchmarks from pandas DataFrames."""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd
import pytest

from heta_nb.benchmark import (
    Benchmark,
    BenchmarkDocument,
    benchmark_from_frame,
)
from heta_nb.benchmark.formats.parsing import BenchmarkDataWarning
from heta_nb.errors import BenchmarkFormatError
from heta_nb.model import BenchmarkManifest

SMALL = BenchmarkManifest(name="small", version="1", split="dev", task_type="qa")


MANIFEST = {"name": "m", "version": "1", "split": "test", "task_type": "qa"}


def load_warning(loader: object) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = loader()  # type: ignore[operator]
    return result, [str(w.message) for w in record if issubclass(w.category, BenchmarkDataWarning)]


def evidence(bench: Benchmark, case_id: str) -> list[tuple[str | None, object]]:
    return [(e.reference_id, e.metadata.get("relevance")) for e in bench.case(case_id).expected.evidence]


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


# --------------------------------------------------------------------------------------
# 2. DataFrame documents with a lone surrogate
# --------------------------------------------------------------------------------------
@pytest.mark.hostile
def test_from_frame_surrogate_document_text_names_row_and_column() -> None:
    pd = pytest.importorskip("pandas")
    # object dtype: with pyarrow, pandas would refuse the lone surrogate itself (Arrow strings)
    documents = pd.DataFrame({"document_id": ["ok", "d"], "text": ["fine", "bad \ud800"]}, index=[10, 11], dtype=object)
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^documents row 11: column 'text': contains an unpaired surrogate and cannot be encoded as UTF-8$",
    ):
        Benchmark.from_frame(pd.DataFrame({"case_id": ["c"], "query": ["q"]}), manifest=MANIFEST, documents=documents)
