"""Reports load and save losslessly: Heta's bytes back byte for byte, unknown keys kept.

Every source (path, URL, text, bytes, dict, Heta's object) gives the same report.
"""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import heta_nb
from heta_nb.model import (
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
    EvaluationScore,
    QueryCitation,
    QueryResponse,
    QueryResult,
    QueryTraceEvent,
    decode_report,
    encode_report,
    heta_score_summary,
)

# -- hypothesis: random valid reports round-trip ------------------------------------

text = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != "")


json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.floats(allow_nan=True), st.text(max_size=10)
)


json_value = st.recursive(
    json_scalar,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)


metadata = st.dictionaries(st.text(max_size=6), json_value, max_size=3)


@st.composite
def responses(draw: st.DrawFn) -> QueryResponse:
    results = draw(
        st.lists(
            st.builds(
                QueryResult,
                id=text,
                text=text,
                score=st.none() | st.floats(allow_nan=False),
                kind=text,
                source=metadata,
                metadata=metadata,
            ),
            max_size=3,
        )
    )
    return QueryResponse(
        mode=draw(text),
        results=results,
        answer=draw(st.none() | text),
        citations=draw(
            st.lists(
                st.builds(
                    QueryCitation,
                    id=text,
                    result_id=st.none() | text,
                    source=metadata,
                    text=st.none() | text,
                    metadata=metadata,
                ),
                max_size=2,
            )
        ),
        trace=draw(st.lists(st.builds(QueryTraceEvent, stage=text, message=text, metadata=metadata), max_size=2)),
        metadata=draw(metadata),
    )


score_value = st.one_of(st.booleans(), st.floats(allow_nan=True), st.integers(-100, 100), text)


@st.composite
def case_results(draw: st.DrawFn) -> EvaluationCaseResult:
    failed = draw(st.booleans())
    return EvaluationCaseResult(
        case_id=draw(text),
        query=draw(text),
        query_mode=draw(st.sampled_from(["full_text_search", "hybrid", "mode with space"])),
        scores=[]
        if failed
        else draw(
            st.lists(
                st.builds(
                    EvaluationScore,
                    name=st.sampled_from(["r@5", "contains", "label"]),
                    value=score_value,
                    passed=st.none() | st.booleans(),
                    metadata=metadata,
                ),
                max_size=3,
            )
        ),
        response=None if failed else draw(responses()),
        latency_ms=draw(st.none() | st.floats(min_value=0, allow_nan=False, allow_infinity=False)),
        error=EvaluationError(
            message=draw(text), error_type=draw(text), retryable=draw(st.booleans()), metadata=draw(metadata)
        )
        if failed
        else None,
        metadata=draw(metadata),
    )


@st.composite
def reports(draw: st.DrawFn) -> EvaluationReport:
    results = draw(st.lists(case_results(), max_size=6))
    return EvaluationReport(
        report_id=draw(text),
        benchmark=BenchmarkManifest(
            name=draw(text),
            version=draw(text),
            split=draw(text),
            task_type=draw(text),
            build_scope=draw(st.sampled_from(["corpus", "group", "case"])),
            homepage=draw(st.none() | text),
            metadata=draw(metadata),
        ),
        knowledge_base_name=draw(text),
        knowledge_base_manifest=draw(metadata),
        recipe_manifest=draw(metadata),
        query_modes=sorted({r.query_mode for r in results}) or ["full_text_search"],
        case_results=results,
        started_at="2026-12-01T07:00:00+00:00",
        finished_at="2026-12-01T07:00:01.5+00:00",
        metadata=draw(metadata),
    )


def _has_nan(text_form: str) -> bool:
    return "NaN" in text_form


def test_fixture_to_dict_equals_json(fixture_path: Path) -> None:
    report = heta_nb.load_report(fixture_path)
    assert report.to_dict() == json.loads(fixture_path.read_bytes())


def test_fixture_bytes_reproduced_exactly(fixture_path: Path) -> None:
    raw = fixture_path.read_bytes()
    report = heta_nb.load_report(fixture_path)
    assert report.to_json().encode("utf-8") == raw
    assert encode_report(report) == raw


def test_all_sources_give_the_same_report(fixture_path: Path) -> None:
    raw = fixture_path.read_bytes()
    from_path = heta_nb.load_report(fixture_path)
    assert heta_nb.load_report(str(fixture_path)) == from_path
    assert heta_nb.load_report(f"file://{fixture_path}") == from_path
    assert heta_nb.load_report(raw) == from_path
    assert heta_nb.load_report(raw.decode("utf-8")) == from_path
    assert heta_nb.load_report(json.loads(raw)) == from_path
    assert heta_nb.load_report(from_path) is from_path

    class HasToDict:
        def to_dict(self) -> dict:
            return json.loads(raw)

    assert heta_nb.load_report(HasToDict()) == from_path


def test_fsspec_memory_url(fixture_path: Path) -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe_file(f"/roundtrip/{fixture_path.name}", fixture_path.read_bytes())
    report = heta_nb.load_report(f"memory://roundtrip/{fixture_path.name}")
    assert report.to_json().encode() == fixture_path.read_bytes()


def test_unknown_keys_survive_at_every_level(normal_report_dict: dict) -> None:
    data = normal_report_dict
    data["future_top"] = {"nested": [1, 2, {"x": None}]}
    data["benchmark"]["future_benchmark"] = "kept"
    case = data["case_results"][0]
    case["future_case"] = [True, False]
    case["scores"][0]["future_score"] = 1.5
    case["response"]["future_response"] = "kept"
    case["response"]["results"][0]["future_result"] = {"a": "b"}
    case["response"]["citations"][0]["future_citation"] = 3
    case["response"]["trace"][0]["future_trace"] = "t"
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    report = decode_report(text, source="future.json")
    assert report.to_json() == text
    assert report.to_dict() == data
    assert report.extra["future_top"]["nested"][2]["x"] is None
    assert report.case_results[0].response.results[0].extra == {"future_result": {"a": "b"}}
    # replace() keeps unknown keys too
    assert report.replace(report_key=None).to_dict()["future_top"] == data["future_top"]


def test_non_ascii_and_non_finite_numbers(normal_report_dict: dict) -> None:
    data = normal_report_dict
    case = data["case_results"][0]
    case["query"] = "Qui a conçu le phare de Harrow Point ? 灯台 🏝️"
    case["scores"][0]["value"] = float("nan")
    case["scores"][3]["value"] = float("inf")
    case["response"]["results"][0]["score"] = float("-inf")
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    assert "NaN" in text and "-Infinity" in text
    report = decode_report(text.encode("utf-8"), source="nan.json")
    assert report.to_json() == text
    assert math.isnan(report.case_results[0].scores[0].value)
    assert report.case_results[0].query.endswith("🏝️")


def test_a_loaded_report_is_encoded_piece_by_piece_to_the_same_bytes(normal_report_dict: dict) -> None:
    from heta_nb.model.json import utf8_json

    data = normal_report_dict
    data["case_results"][0]["query"] = "phare 灯台 🏝️ conçu"
    data["case_results"][1]["response"]["results"][0]["score"] = 1e16  # Heta writes 1e+16, orjson 1e16
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    report = decode_report(text.encode("utf-8"), source="mixed.json")
    assert report._lazy_top() is not None  # read from bytes: encoded case result by case result
    assert encode_report(report) == utf8_json(report.to_json()) == text.encode("utf-8")
    # what orjson cannot read (NaN, a lone surrogate) is loaded whole, and written back the same
    data["case_results"][0]["query"] = "lone \ud800"
    data["case_results"][1]["scores"][0]["value"] = float("nan")
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    report = decode_report(utf8_json(text), source="odd.json")
    assert encode_report(report) == utf8_json(text) and b"NaN" in utf8_json(text)


def test_both_knowledge_base_manifest_shapes() -> None:
    from helpers import FIXTURES

    single = heta_nb.load_report(FIXTURES / "report-normal.json")
    multi = heta_nb.load_report(FIXTURES / "report-multi-unit.json")
    assert len(single.knowledge_base_manifests) == 1
    assert single.knowledge_base_manifests[0]["name"] == "lighthouse mini"
    names = [m["name"] for m in multi.knowledge_base_manifests]
    assert names == ["lighthouse multi-coast", "lighthouse multi-harbour_towns"]
    assert [s["type"] for s in single.recipe_steps][:3] == [
        "ParseDocuments",
        "SplitDocuments",
        "IndexFullText",
    ]


def test_records_are_immutable_and_picklable(fixture_path: Path) -> None:
    report = heta_nb.load_report(fixture_path)
    with pytest.raises(AttributeError):
        report.report_id = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        report.metadata["new"] = 1  # type: ignore[index]
    first = report.case_results[0]
    if first.scores:
        with pytest.raises(TypeError):
            first.scores[0].metadata["x"] = 1  # type: ignore[index]
    clone = pickle.loads(pickle.dumps(report))
    assert clone == report and clone.to_json() == report.to_json()
    # to_dict hands out a copy: mutating it cannot change the report
    data = report.to_dict()
    data["case_results"].clear()
    assert len(report.case_results) == len(json.loads(fixture_path.read_bytes())["case_results"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports())
def test_random_reports_round_trip(report: EvaluationReport) -> None:
    text_form = report.to_json()
    again = decode_report(text_form, source="<hypothesis>")
    assert again.to_json() == text_form
    assert again == report or _has_nan(text_form)  # NaN != NaN in dict equality
    assert heta_nb.load_report(json.loads(text_form)).to_json() == text_form
    assert dict(again.score_summary) == heta_score_summary(again.case_results) or _has_nan(text_form)
