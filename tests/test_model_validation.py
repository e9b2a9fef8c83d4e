"""Bad input gives a ReportFormatError naming the source and the JSON path, nothing else."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import heta_nb
from heta_nb import ReportFormatError
from heta_nb.errors import ReportNotFoundError
from heta_nb.model import EvaluationCaseResult, EvaluationReport, EvaluationScore, QueryResult

NORMAL = json.loads((FIXTURES / "report-normal.json").read_bytes())


def _mutated(change: Callable[[dict[str, Any]], None]) -> bytes:
    data = copy.deepcopy(NORMAL)
    change(data)
    return json.dumps(data).encode()


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        target: Any = data
        parts = path.replace("]", "").replace("[", ".").split(".")
        for part in parts[:-1]:
            target = target[int(part)] if part.isdigit() else target[part]
        last = parts[-1]
        if value is _DELETE:
            del target[last]
        else:
            target[int(last) if last.isdigit() else last] = value

    return change


_DELETE = object()

# (name, file bytes, expected message lines: each must appear in the error)
BROKEN: list[tuple[str, bytes, list[str]]] = [
    (
        "score value object",
        _mutated(_set("case_results[17].scores[2].value", {"x": 1})),
        ["report.json: case_results[17].scores[2].value: expected number, bool or string, got object"],
    ),
    (
        "truncated",
        (FIXTURES / "report-normal.json").read_bytes()[:5000],
        [
            "report.json: invalid JSON at line 1, column 4997",
            "Unterminated string",
            "(the file looks truncated)",
        ],
    ),
    ("empty", b"", ["report.json: empty file, not a report"]),
    ("not json", b"hello world", ["report.json: invalid JSON at line 1, column 1: Expecting value"]),
    (
        "multi-line error position",
        b'{\n  "schema_version": "1",\n  "report_id": oops\n}',
        ["report.json: invalid JSON at line 3, column 16"],
    ),
    ("top-level array", b"[1, 2]", ["expected a JSON object at the top level, got array"]),
    (
        "future schema",
        _mutated(_set("schema_version", "2")),
        ["schema_version: unsupported version '2'; this heta_nb reads schema_version '1'"],
    ),
    (
        "missing report_id",
        _mutated(_set("report_id", _DELETE)),
        ["report.json: report_id: missing required field"],
    ),
    (
        "neither response nor error",
        _mutated(_set("case_results[3].response", None)),
        ["case_results[3]: either response or error must be set"],
    ),
    (
        "negative latency",
        _mutated(_set("case_results[0].latency_ms", -1)),
        ["case_results[0].latency_ms: must not be less than 0, got -1"],
    ),
    (
        "blank query",
        _mutated(_set("case_results[1].query", "   ")),
        ["case_results[1].query: must not be empty"],
    ),
    (
        "bad build scope",
        _mutated(_set("benchmark.build_scope", "planet")),
        ["benchmark.build_scope: expected one of 'corpus', 'group', 'case', got 'planet'"],
    ),
    (
        "mode not a string",
        _mutated(_set("query_modes[1]", 7)),
        ["query_modes[1]: expected string, got number"],
    ),
    (
        "summary not numeric",
        _mutated(lambda d: d["score_summary"].update({"full_text_search.evidence_recall@3": "high"})),
        ["score_summary['full_text_search.evidence_recall@3']: expected number, got string"],
    ),
    (
        "empty result text",
        _mutated(_set("case_results[0].response.results[1].text", "")),
        ["case_results[0].response.results[1].text: must not be empty"],
    ),
    (
        "results not a list",
        _mutated(_set("case_results[0].response.results", {"a": 1})),
        ["case_results[0].response.results: expected array, got object"],
    ),
    (
        "metadata not an object",
        _mutated(_set("metadata", [1])),
        ["report.json: metadata: expected object, got array"],
    ),
    (
        "passed not a bool",
        _mutated(_set("case_results[0].scores[1].passed", "yes")),
        ["case_results[0].scores[1].passed: expected boolean or null, got string"],
    ),
    (
        "case result not an object",
        _mutated(_set("case_results[4]", "oops")),
        ["case_results[4]: expected object, got string"],
    ),
    (
        "error without type",
        _mutated(lambda d: d["case_results"][5].update(response=None, error={"message": "boom"}, scores=[])),
        ["case_results[5].error.error_type: missing required field"],
    ),
    ("not utf-8", b'{"report_id": "\xff\xfe"}', ["report.json: not UTF-8 text"]),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000, ["report.json:"]),
]


@pytest.mark.parametrize(("name", "content", "expected"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_file_corpus(tmp_path: Path, name: str, content: bytes, expected: list[str]) -> None:
    path = tmp_path / "report.json"
    path.write_bytes(content)
    with pytest.raises(ReportFormatError) as info:
        heta_nb.load_report(path)
    message = str(info.value).replace(str(tmp_path) + "/", "")
    for line in expected:
        assert line in message, message
    assert isinstance(info.value, ValueError)
    assert info.value.__cause__ is None or isinstance(info.value.__cause__, ReportFormatError)


def test_several_problems_are_listed_and_capped() -> None:
    def break_many(data: dict[str, Any]) -> None:
        for result in data["case_results"]:
            result["query_mode"] = 5

    with pytest.raises(ReportFormatError) as info:
        heta_nb.load_report(_mutated(break_many))
    assert len(info.value.problems) == 10
    assert "further problems not shown" in str(info.value)
    assert info.value.problems[0] == "case_results[0].query_mode: expected string, got number"


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ReportNotFoundError, match="no such file"):
        heta_nb.load_report(tmp_path / "absent.json")
    with pytest.raises(ReportFormatError, match="directory without a report.json"):
        heta_nb.load_report(tmp_path)
    (tmp_path / "report.json").write_bytes((FIXTURES / "report-beir-local.json").read_bytes())
    assert heta_nb.load_report(tmp_path).report_id == "fixture-beir-local"


def test_unloadable_objects() -> None:
    with pytest.raises(ReportFormatError, match="cannot load a report from this type"):
        heta_nb.load_report(42)

    class Broken:
        def to_dict(self) -> dict:
            raise RuntimeError("nope")

    with pytest.raises(ReportFormatError, match="to_dict\\(\\) failed: RuntimeError: nope"):
        heta_nb.load_report(Broken())
    with pytest.raises(ReportFormatError, match="not JSON-serializable"):
        heta_nb.load_report({**NORMAL, "metadata": {"s": {1, 2}}})


# -- constructors follow Heta's rules ---------------------------------------------


def test_constructor_normalisation_matches_heta() -> None:
    score = EvaluationScore(name="  recall@5 ", value=" high ", metadata={"k": (1, 2)})
    assert score.name == "recall@5" and score.value == "high"
    assert score.to_dict() == {"name": "recall@5", "value": "high", "passed": None, "metadata": {"k": [1, 2]}}
    with pytest.raises(ValueError, match="EvaluationScore.name must not be empty"):
        EvaluationScore(name="  ", value=1.0)
    with pytest.raises(ValueError, match="must not be empty"):
        QueryResult(id="c1", text="   ")
    with pytest.raises(ValueError, match="either response or error must be set"):
        EvaluationCaseResult(case_id="c", query="q", query_mode="m")
    with pytest.raises(ValueError, match="latency_ms must not be less than 0"):
        EvaluationCaseResult(
            case_id="c", query="q", query_mode="m", error={"message": "x", "error_type": "E"}, latency_ms=-0.5
        )
    # Heta's _json_safe on sources: sets become lists, odd objects become a note
    result = QueryResult(id="r", text="t", source={"path": Path("/x"), "ids": {"a"}, "obj": object()})
    assert result.source["path"] == "/x" and result.source["ids"] == ("a",)
    assert result.source["obj"]["manifest_note"] == "value omitted because it is not JSON-safe"
    # ... but metadata that Heta would only reject at the end is refused at once
    with pytest.raises(TypeError, match=r"EvaluationScore.metadata\['s'\]: value of type set"):
        EvaluationScore(name="x", value=1, metadata={"s": {1}})


def test_report_constructor_computes_heta_summary() -> None:
    results = [
        EvaluationCaseResult(
            case_id="c1",
            query="q1",
            query_mode="m",
            scores=[EvaluationScore(name="hit", value=True), EvaluationScore(name="label", value="x")],
            response={"mode": "m"},
        ),
        EvaluationCaseResult(
            case_id="c2",
            query="q2",
            query_mode="m",
            scores=[EvaluationScore(name="hit", value=False, metadata={"skipped": True})],
            response={"mode": "m"},
        ),
        EvaluationCaseResult(case_id="c3", query="q3", query_mode="m", error={"message": "boom", "error_type": "E"}),
    ]
    report = EvaluationReport(
        report_id="r",
        benchmark={"name": "b", "version": "1", "split": "t", "task_type": "qa"},
        knowledge_base_name="kb",
        query_modes=["m"],
        case_results=results,
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:02+00:00",
    )
    assert dict(report.score_summary) == {"m.hit": 0.5}
    assert report.duration_s == 2.0
    counts = report.mode_counts()["m"]
    assert (counts.cases, counts.errors, counts.skipped_scores, counts.ok) == (3, 1, 1, 2)
    assert report.case("c2").scores[0].skipped
    with pytest.raises(KeyError, match="no case 'zz'"):
        report.case("zz")
    with pytest.raises(KeyError, match="has no result for mode 'other'"):
        report.case("c1", "other")


# -- fuzzing ----------------------------------------------------------------------

SMALL = json.loads((FIXTURES / "report-errors.json").read_bytes())
SMALL["case_results"] = SMALL["case_results"][:4] + [SMALL["case_results"][-1]]


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*prefix, index)))
    return found


ALL_PATHS = _paths(SMALL)[1:]
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=2) | st.dictionaries(st.text(max_size=3), c, max_size=2),
    max_leaves=4,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ALL_PATHS), st.one_of(st.just(_DELETE), junk)), min_size=1, max_size=4))
def test_fuzz_structural_mutations(mutations: list[tuple[tuple, Any]]) -> None:
    data = copy.deepcopy(SMALL)
    for path, value in mutations:
        target: Any = data
        try:
            for part in path[:-1]:
                target = target[part]
            if value is _DELETE:
                del target[path[-1]]
            else:
                target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    for source in (data, json.dumps(data)):
        try:
            report = heta_nb.load_report(source)
        except ReportFormatError:
            continue
        # whatever loads must be usable everywhere without internal errors
        report.to_json()
        report.mode_counts()
        report.metric_summaries()
        report.cases_frame()
        report.scores_frame()
        report.summary_frame()
        for result in report.case_results:
            if result.response:
                [r.source_keys() for r in result.response.results]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 20_000), st.binary(min_size=0, max_size=8), st.booleans())
def test_fuzz_byte_mutations(position: int, junk_bytes: bytes, truncate: bool) -> None:
    raw = (FIXTURES / "report-beir-local.json").read_bytes()
    position = position % len(raw)
    damaged = raw[:position] if truncate else raw[:position] + junk_bytes + raw[position + len(junk_bytes) :]
    try:
        heta_nb.load_report(damaged)
    except ReportFormatError:
        pass
