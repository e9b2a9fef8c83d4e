"""Hostile or inconsistent benchmark and report files: clear errors and warnings, never raw ones."""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.benchmark import Benchmark, load_beir, load_benchmark, load_jsonl_benchmark, load_multihop_rag
from heta_nb.benchmark.formats.parsing import BenchmarkDataWarning
from heta_nb.errors import BenchmarkFormatError, ReportFormatError
from heta_nb.model import EvaluationCaseResult

MANIFEST = {"name": "m", "version": "1", "split": "test", "task_type": "qa"}
DOC = {"document_id": "d1", "name": "d1.txt", "media_type": "text/plain", "text": "x"}
LIMIT = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
needs_limit = pytest.mark.skipif(not LIMIT, reason="this Python has no int-string conversion limit")
HUGE = "1" + "0" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl_folder(tmp_path: Path, cases: str, manifest: Any = MANIFEST, documents: str | None = None) -> Path:
    folder = tmp_path / "bench"
    write(folder / "documents.jsonl", documents if documents is not None else json.dumps(DOC) + "\n")
    write(folder / "cases.jsonl", cases)
    if manifest is not None:
        write(folder / "manifest.json", json.dumps(manifest))
    return folder


def beir_folder(tmp_path: Path, qrels: str, corpus: str | None = None, queries: str | None = None) -> Path:
    folder = tmp_path / "ds"
    write(folder / "corpus.jsonl", corpus if corpus is not None else '{"_id": "d1", "text": "one"}\n')
    write(folder / "queries.jsonl", queries if queries is not None else '{"_id": "q1", "text": "q?"}\n')
    write(folder / "qrels" / "test.tsv", qrels)
    return folder


def mhr_folder(tmp_path: Path, corpus: str, queries: str) -> Path:
    folder = tmp_path / "mhr"
    write(folder / "corpus.json", corpus)
    write(folder / "MultiHopRAG.json", queries)
    return folder


def data_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, BenchmarkDataWarning)]


# --------------------------------------------------------------------------------------
# 1. integers over Python's digit limit, and very deep nesting
# --------------------------------------------------------------------------------------
@needs_limit
def test_jsonl_huge_integer_names_file_line_and_column(tmp_path: Path) -> None:
    second = '{"case_id": "c2", "query": "q", "labels": {"n": ' + HUGE + "}}"
    folder = jsonl_folder(tmp_path, '{"case_id": "c1", "query": "q"}\n' + second + "\n")
    column = second.index(HUGE) + 1
    with pytest.raises(
        BenchmarkFormatError,
        match=rf"^cases\.jsonl:2:{column}: invalid JSON: an integer with more than {LIMIT} digits$",
    ):
        load_benchmark(folder)


def test_jsonl_deep_nesting_names_file_and_line(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, "\n" + '{"case_id": "c", "query": "q", "labels": {"n": ' + DEEP + "}}\n")
    with pytest.raises(
        BenchmarkFormatError,
        match=rf"^cases\.jsonl:2: invalid JSON: nested more than {sys.getrecursionlimit()} levels deep "
        r"\(100002 levels\)$",
    ):
        load_benchmark(folder)


@needs_limit
def test_jsonl_documents_huge_integer(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, '{"case_id": "c", "query": "q"}\n', documents='{"document_id": ' + HUGE + "}\n")
    with pytest.raises(BenchmarkFormatError, match=r"^documents\.jsonl:1:17: invalid JSON: an integer with more"):
        load_jsonl_benchmark(folder / "documents.jsonl", folder / "cases.jsonl", manifest=MANIFEST)


@needs_limit
def test_beir_huge_integer_and_deep_nesting(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path, "q1\td1\t1\n", corpus='{"_id": "d1", "text": "one"}\n{"_id": ' + HUGE + "}\n")
    with pytest.raises(BenchmarkFormatError, match=r"^corpus\.jsonl:2:9: invalid JSON: an integer with more than"):
        load_beir(folder)
    write(folder / "corpus.jsonl", '{"_id": "d1", "text": "one"}\n')
    write(folder / "queries.jsonl", DEEP + "\n")
    with pytest.raises(BenchmarkFormatError, match=r"^queries\.jsonl:1: invalid JSON: nested more than \d+ levels"):
        load_beir(folder)


@needs_limit
def test_multihop_huge_integer_gives_line_and_column(tmp_path: Path) -> None:
    folder = mhr_folder(tmp_path, '[{"title": "T", "body": "b"}]', '[\n  {"query": "q",\n   "answer": ' + HUGE + "}\n]")
    with pytest.raises(
        BenchmarkFormatError, match=rf"^MultiHopRAG\.json:3:14: invalid JSON: an integer with more than {LIMIT} digits$"
    ):
        load_multihop_rag(folder)


def test_multihop_deep_nesting(tmp_path: Path) -> None:
    folder = mhr_folder(tmp_path, DEEP, "[]")
    with pytest.raises(BenchmarkFormatError, match=r"^corpus\.json: invalid JSON: nested more than \d+ levels deep"):
        load_multihop_rag(folder)


def test_manifest_json_deep_nesting(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, '{"case_id": "c", "query": "q"}\n', manifest=None)
    write(folder / "manifest.json", '{"metadata": ' + DEEP + "}")
    with pytest.raises(BenchmarkFormatError, match=r"^manifest\.json: invalid JSON: nested more than \d+ levels"):
        load_benchmark(folder)


@needs_limit
def test_digits_inside_strings_do_not_mislead_the_position(tmp_path: Path) -> None:
    long_string = '"' + "9" * 5000 + '"'
    cases = '{"case_id": "c", "query": ' + long_string + ', "labels": {"n": ' + HUGE + "}}"
    column = cases.index(HUGE) + 1
    with pytest.raises(BenchmarkFormatError, match=rf"^cases\.jsonl:1:{column}: invalid JSON: an integer with more"):
        load_benchmark(jsonl_folder(tmp_path, cases + "\n"))


@needs_limit
def test_report_huge_integer_names_file_line_and_column(tmp_path: Path) -> None:
    raw = (FIXTURES / "report-normal.json").read_bytes()
    bad = raw.replace(b'"value":0.0', b'"value":' + HUGE.encode(), 1)
    column = bad.index(HUGE.encode()) + 1
    path = tmp_path / "report.json"
    path.write_bytes(bad)
    with pytest.raises(ReportFormatError) as info:
        heta_nb.load_report(path)
    assert str(info.value) == (
        f"{path}: invalid JSON at line 1, column {column}: an integer with more than {LIMIT} digits"
    )


def test_report_deep_nesting_names_file(tmp_path: Path) -> None:
    raw = (FIXTURES / "report-normal.json").read_bytes()
    path = tmp_path / "report.json"
    path.write_bytes(raw.replace(b'"metadata":{}', b'"metadata":{"x":' + DEEP.encode() + b"}", 1))
    with pytest.raises(ReportFormatError, match=r"report\.json: invalid JSON: nested more than \d+ levels deep"):
        heta_nb.load_report(path)


# --------------------------------------------------------------------------------------
# 2. DataFrame documents with a lone surrogate
# --------------------------------------------------------------------------------------
def test_from_frame_surrogate_document_text_names_row_and_column() -> None:
    pd = pytest.importorskip("pandas")
    documents = pd.DataFrame({"document_id": ["ok", "d"], "text": ["fine", "bad \ud800"]}, index=[10, 11])
    with pytest.raises(
        BenchmarkFormatError,
        match=r"^documents row 11: column 'text': contains an unpaired surrogate and cannot be encoded as UTF-8$",
    ):
        Benchmark.from_frame(pd.DataFrame({"case_id": ["c"], "query": ["q"]}), manifest=MANIFEST, documents=documents)


# --------------------------------------------------------------------------------------
# 3. dangling references: warnings, Heta's evidence kept
# --------------------------------------------------------------------------------------
def test_beir_unknown_documents_and_queries_warn_once_each(tmp_path: Path) -> None:
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tTYPO\t2\nq1\tgone\t0\nq9\td1\t1\nq8\td1\t1\nq1\tlost\t1\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error", BenchmarkDataWarning)
        load_beir(beir_folder(tmp_path / "clean", "q1\td1\t1\n"))  # consistent files: no warning
    folder = beir_folder(tmp_path, qrels)
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
        load_beir(beir_folder(tmp_path, qrels))
    (message,) = data_warnings(record)
    assert message.startswith("qrels/test.tsv: 8 ('missing0' on line 1, ")
    assert "'missing4' on line 5, ...) corpus id(s)" in message and "missing5" not in message


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


# --------------------------------------------------------------------------------------
# 4. manifest name / split that would break raw keys
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "../../x"), ("name", "a/b"), ("name", ".."), ("split", "a\\b"), ("split", "te\x00st"), ("split", ".")],
)
def test_manifest_json_unsafe_name_or_split(tmp_path: Path, field: str, value: str) -> None:
    folder = jsonl_folder(tmp_path, '{"case_id": "c", "query": "q"}\n', manifest={**MANIFEST, field: value})
    with pytest.raises(
        BenchmarkFormatError, match=rf"^manifest\.json: {field}: .* cannot be used in an object key \(no '/'"
    ):
        load_benchmark(folder)


def test_manifest_argument_unsafe_name(tmp_path: Path) -> None:
    folder = jsonl_folder(tmp_path, '{"case_id": "c", "query": "q"}\n', manifest=None)
    with pytest.raises(BenchmarkFormatError, match=r"^manifest: name: '\.\./x' cannot be used in an object key"):
        load_benchmark(folder, manifest={**MANIFEST, "name": "../x"})
    with pytest.raises(BenchmarkFormatError, match=r"^manifest: split: 'a/b' cannot be used"):
        load_jsonl_benchmark(folder / "documents.jsonl", folder / "cases.jsonl", manifest={**MANIFEST, "split": "a/b"})

    # dots inside a segment are fine
    bench = load_benchmark(folder, manifest={**MANIFEST, "name": "v1..2"})
    assert bench.raw_keys() == ("raw/benchmarks/v1..2/test/d1/d1.txt",)


# --------------------------------------------------------------------------------------
# 5. NaN and negative numbers where a minimum is declared
# --------------------------------------------------------------------------------------
def _report_with(change: Any) -> bytes:
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    change(data)
    return json.dumps(data).encode()


def test_a_negative_latency_is_refused_with_its_json_path_and_nan_is_read_as_heta_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_bytes(_report_with(lambda d: d["case_results"][3].__setitem__("latency_ms", -1.5)))
    with pytest.raises(ReportFormatError) as info:
        heta_nb.load_report(path)
    assert str(info.value) == f"{path}: case_results[3].latency_ms: must not be less than 0, got -1.5"
    # Heta's check is ``latency_ms < 0``: it writes (and reads) NaN, so heta_nb reads it too
    raw = _report_with(lambda d: d["case_results"][3].__setitem__("latency_ms", math.nan))
    assert math.isnan(heta_nb.load_report(raw).case_results[3].latency_ms)
    raw = _report_with(lambda d: d["case_results"][0]["scores"][0].__setitem__("value", math.nan))
    assert math.isnan(heta_nb.load_report(raw).case_results[0].scores[0].value)


def test_a_negative_latency_is_refused_when_built() -> None:
    result = heta_nb.load_report(FIXTURES / "report-normal.json").case_results[0]
    with pytest.raises(ValueError, match=r"^EvaluationCaseResult\.latency_ms must not be less than 0, got -0\.5$"):
        result.replace(latency_ms=-0.5)
    assert math.isnan(result.replace(latency_ms=math.nan).latency_ms)
    assert isinstance(result.replace(latency_ms=math.inf), EvaluationCaseResult)

    for fixture in sorted(FIXTURES.glob("report-*.json")):  # Heta's own reports still load, byte for byte
        raw = fixture.read_bytes()
        assert heta_nb.load_report(raw).to_json().encode() == raw


def test_a_report_file_missing_a_key_every_report_has_is_refused(tmp_path: Path) -> None:
    from heta_nb.errors import ReportFormatError
    from heta_nb.model.io import load_report

    data = json.loads((Path(__file__).parent / "fixtures" / "heta-0.1.2" / "report-normal.json").read_text())
    for key in ("case_results", "query_modes", "schema_version", "metadata"):
        partial = {k: v for k, v in data.items() if k != key}
        path = tmp_path / f"without-{key}.json"
        path.write_text(json.dumps(partial))
        with pytest.raises(ReportFormatError, match=f"{key}: missing required field"):
            load_report(path)
    built = {k: v for k, v in data.items() if k != "metadata"}  # a dict built in Python may leave defaults out
    assert load_report(built).metadata == {} and len(load_report(built).case_results) == len(data["case_results"])
