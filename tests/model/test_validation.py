"""Bad report files and values are refused with the file and the JSON path."""

from __future__ import annotations

import copy
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, heta_available, requires_heta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import heta_nb
from heta_nb.errors import ReportFormatError, ReportNotFoundError
from heta_nb.model import (
    EvaluationCaseResult,
    EvaluationReport,
    encode_report,
)

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


EXAMPLES = 30
"""Random reports per differential test (each holds up to 6 case results)."""


DIFF = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def heta_dumps(data: Any) -> bytes:
    """How Heta 0.1.2's runner writes ``report.to_dict()``."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# -- raw inputs ----------------------------------------------------------------------

# Surrogate-free odd text: controls, NUL, line/paragraph separators, BOM, RTL marks,
# combining marks, astral characters, and whitespace Heta strips (NBSP, U+3000, U+0085).
ODD = "\x00\x1f\x7f\u0085\u00a0\u2028\u2029\ufeff\u200b\u200f\u202e\u0301\u3000\U0001f3dd\U00010348\"\\/<>&'"


chars = st.characters(blacklist_categories=("Cs",)) | st.sampled_from(list(ODD))


pad = st.sampled_from(["", " ", "\t", "\n ", "\u3000", "\u00a0", "\u2028", "\u0085"])


@st.composite
def raw_text(draw: st.DrawFn, *, short: bool = False) -> str:
    """Non-blank text, possibly padded with whitespace both Heta and heta_nb strip."""
    core = draw(st.text(chars, min_size=1, max_size=6 if short else 24).filter(lambda s: s.strip() != ""))
    return draw(pad) + core + draw(pad)


text = raw_text()


big_int = st.integers(-(2**70), 2**70) | st.sampled_from([0, -1, 2**63, -(2**63) - 1, 10**30, -(10**40)])


number = st.floats(allow_nan=True, allow_infinity=True) | big_int


key = st.text(chars, max_size=6)


json_scalar = st.none() | st.booleans() | number | st.text(chars, max_size=12)


json_value = st.recursive(
    json_scalar,
    lambda kids: (
        st.lists(kids, max_size=3)
        | st.tuples(kids, kids)
        | st.dictionaries(key, kids, max_size=3)
        # non-string keys json.dumps converts (never two keys converting to the same text)
        | st.dictionaries(st.sampled_from([7, True, None, 2.5]), kids, max_size=1)
    ),
    max_leaves=10,
)


metadata = st.dictionaries(key, json_value, max_size=4)


# -- both sides built from the same inputs ----------------------------------------------


def build_heta(raw: dict[str, Any]) -> Any:
    """Heta's EvaluationReport from raw inputs, its summary computed by Heta's runner."""
    from heta_framework.evaluation import BenchmarkManifest as HBench
    from heta_framework.evaluation import EvaluationCaseResult as HCase
    from heta_framework.evaluation import EvaluationError as HError
    from heta_framework.evaluation import EvaluationReport as HReport
    from heta_framework.evaluation import EvaluationScore as HScore
    from heta_framework.evaluation.runner import _score_summary
    from heta_framework.kb.search import QueryCitation as HCitation
    from heta_framework.kb.search import QueryResponse as HResponse
    from heta_framework.kb.search import QueryResult as HResult
    from heta_framework.kb.search import QueryTraceEvent as HTrace

    def response(r: dict[str, Any] | None) -> Any:
        if r is None:
            return None
        return HResponse(
            mode=r["mode"],
            results=tuple(HResult(**x) for x in r["results"]),
            answer=r["answer"],
            citations=tuple(HCitation(**x) for x in r["citations"]),
            trace=tuple(HTrace(**x) for x in r["trace"]),
            metadata=r["metadata"],
        )

    cases = tuple(
        HCase(
            case_id=c["case_id"],
            query=c["query"],
            query_mode=c["query_mode"],
            scores=tuple(HScore(**s) for s in c["scores"]),
            response=response(c["response"]),
            latency_ms=c["latency_ms"],
            error=HError(**c["error"]) if c["error"] is not None else None,
            metadata=c["metadata"],
        )
        for c in raw["case_results"]
    )
    top = {k: v for k, v in raw.items() if k not in ("benchmark", "case_results", "query_modes")}
    if "score_summary" not in top:
        top["score_summary"] = _score_summary(cases)
    return HReport(
        **top, benchmark=HBench(**raw["benchmark"]), query_modes=tuple(raw["query_modes"]), case_results=cases
    )


# -- invalid reports ---------------------------------------------------------------

BASE = json.loads((FIXTURES / "report-errors.json").read_bytes())


BASE["case_results"] = BASE["case_results"][:3]


_normal = json.loads((FIXTURES / "report-normal.json").read_bytes())
BASE["case_results"].append(next(c for c in _normal["case_results"] if c["response"]["trace"] and c["scores"]))
assert BASE["case_results"][3]["response"]["citations"] and BASE["case_results"][1]["error"]


# The report schema, written out from the spec (not from heta_nb's classes), kind per key.
TEXT, OTEXT, OBJ, NUM, ONUM, BOOL, OBOOL, VALUE, SCOPE, SUMMARY = (
    "text",
    "otext",
    "obj",
    "num",
    "onum",
    "bool",
    "obool",
    "value",
    "scope",
    "summary",
)


SCORE = {"name": TEXT, "value": VALUE, "passed": OBOOL, "metadata": OBJ}


ERROR = {"message": TEXT, "error_type": TEXT, "retryable": BOOL, "metadata": OBJ}


RESULT = {"id": TEXT, "text": TEXT, "score": ONUM, "kind": TEXT, "source": OBJ, "metadata": OBJ}


CITATION = {"id": TEXT, "result_id": OTEXT, "source": OBJ, "text": OTEXT, "metadata": OBJ}


TRACE = {"stage": TEXT, "message": TEXT, "metadata": OBJ}


RESPONSE = {
    "mode": TEXT,
    "results": [RESULT],
    "answer": OTEXT,
    "citations": [CITATION],
    "trace": [TRACE],
    "metadata": OBJ,
}


CASE = {
    "case_id": TEXT,
    "query": TEXT,
    "query_mode": TEXT,
    "scores": [SCORE],
    "response": ("optional", RESPONSE),
    "latency_ms": ("latency", ONUM),
    "error": ("optional", ERROR),
    "metadata": OBJ,
}


BENCH = {
    "name": TEXT,
    "version": TEXT,
    "split": TEXT,
    "task_type": TEXT,
    "build_scope": SCOPE,
    "homepage": OTEXT,
    "license": OTEXT,
    "citation": OTEXT,
    "metadata": OBJ,
}


REPORT = {
    "schema_version": TEXT,
    "report_id": TEXT,
    "report_key": OTEXT,
    "benchmark": BENCH,
    "knowledge_base_name": TEXT,
    "knowledge_base_manifest": OBJ,
    "recipe_manifest": OBJ,
    "query_modes": [TEXT],
    "score_summary": SUMMARY,
    "case_results": [CASE],
    "started_at": TEXT,
    "finished_at": TEXT,
    "metadata": OBJ,
}


WRONG: dict[str, list[Any]] = {
    TEXT: [None, 1, 1.5, True, [], {}, "", "  \n"],
    OTEXT: [1, True, [], {}, "", " "],
    OBJ: [None, 1, "x", [], True],
    NUM: [None, "1", True, [], {}],
    ONUM: ["1", True, [], {}],
    BOOL: [None, 0, 1, "true", [], {}],
    OBOOL: [0, 1, "true", [], {}],
    VALUE: [None, [], {}, "", " "],
    SCOPE: ["planet", None, 1, "", " corpus"],
    SUMMARY: [[], "x", None, 1],
    "array": [None, {}, "x", 1],
    "record": [None, [], "x", 1, True],
}


# (JSON path pattern, wrong value) pairs Heta's constructors accept and heta_nb refuses, on
# purpose: Heta does not check these types at all (spec §0, §3.1), and heta_nb keeps to the
# types Heta declares, so that every consumer can rely on them. Documented in the field
# docstrings (heta_nb/model/report.py and query.py).
HETA_ONLY = {
    ".value": [None, [], {}],  # EvaluationScore.value: float | bool | str
    ".passed": [0, 1, "true", [], {}],  # EvaluationScore.passed: bool | None
    ".retryable": [None, 0, 1, "true", [], {}],  # EvaluationError.retryable: bool
    ".score": ["1", True, [], {}],  # QueryResult.score: float | None
    ".latency_ms": [True],  # EvaluationCaseResult.latency_ms: float | None (True >= 0)
    "schema_version": ["2"],  # a reader of schema "1" refuses other versions
    "score_summary": [[]],  # dict([]) is {}
    # manifests: Heta types them Mapping but checks nothing (its runner always passes a dict)
    "knowledge_base_manifest": [None, 1, "x", [], True],
    "recipe_manifest": [None, 1, "x", [], True],
}


COERCED = {"obj": [[]], "array": [{}, "x"]}
"""Heta's constructors coerce with ``dict(...)``/``tuple(...)``: ``[]`` is an empty mapping,
``{}`` an empty sequence, ``"x"`` the sequence ``("x",)``. Heta then *writes* the right JSON
type, so no report Heta wrote holds these; heta_nb refuses them in a file."""


def _typed_positions(schema: Any, value: Any, path: str) -> list[tuple[str, tuple[Any, ...], str]]:
    """(JSON path, key path, kind) of every typed position of ``value`` under ``schema``."""
    found: list[tuple[str, tuple[Any, ...], str]] = []

    def walk(schema: Any, value: Any, path: str, keys: tuple[Any, ...]) -> None:
        if isinstance(schema, tuple):
            schema = schema[1]
            if value is None:
                return
        if isinstance(schema, dict):
            for key, sub in schema.items():
                here = f"{path}.{key}" if path else key
                kind = (
                    sub
                    if isinstance(sub, str)
                    else "array"
                    if isinstance(sub, list)
                    else "record"
                    if isinstance(sub, dict) or sub[0] == "optional"
                    else sub[1]
                )
                found.append((here, (*keys, key), kind))
                walk(sub, value[key], here, (*keys, key))
        elif isinstance(schema, list):
            for index, item in enumerate(value):
                here = f"{path}[{index}]"
                if isinstance(schema[0], str):
                    found.append((here, (*keys, index), schema[0]))
                else:
                    found.append((here, (*keys, index), "record"))
                    walk(schema[0], item, here, (*keys, index))

    walk(schema, value, path, ())
    return found


POSITIONS = _typed_positions(REPORT, BASE, "")
assert any(p[0] == "case_results[3].scores[0].value" for p in POSITIONS)
assert any(p[0] == "case_results[3].response.trace[0].stage" for p in POSITIONS)


def _put(data: dict[str, Any], keys: tuple[Any, ...], value: Any) -> None:
    target: Any = data
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value


def _heta_accepts(data: dict[str, Any]) -> bool:
    try:
        build_heta(data)
    except (TypeError, ValueError, AttributeError, KeyError):
        return False
    return True


def _heta_only(path: str, value: Any, kind: str) -> bool:
    if any(type(value) is type(v) and value == v for v in COERCED.get(kind, ())):
        return True
    for suffix, values in HETA_ONLY.items():
        if path.endswith(suffix) and any(type(value) is type(v) and value == v for v in values):
            return True
    return False


def _load_file(tmp_path: Path, data: dict[str, Any]) -> tuple[Path, Callable[[], EvaluationReport]]:
    path = tmp_path / "report.json"
    path.write_bytes(heta_dumps(data))
    return path, lambda: heta_nb.load_report(path)


def _assert_one_format_error(load: Callable[[], Any], path: Path, field_path: str) -> None:
    with pytest.raises(ReportFormatError) as info:
        load()
    error = info.value
    message = str(error)
    assert f"{path}: {field_path}" in message, (field_path, message)
    assert error.__cause__ is None and error.__suppress_context__ or error.__context__ is None, message
    # raised by the loader itself (heta_nb/model/io.py), not from deep inside the validation walk;
    # heta_nb.load_report is the store locator's (two frames) in front of the model's loader
    frames = list(_frames(info.tb))
    assert frames[-1][0].endswith("io.py") and len(frames) <= 7, (field_path, frames)


def _frames(tb: Any) -> Any:
    while tb is not None:
        yield tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_name
        tb = tb.tb_next


LIMIT = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


needs_limit = pytest.mark.skipif(not LIMIT, reason="this Python has no int-string conversion limit")


HUGE = "1" + "0" * 5000


DEEP = "[" * 100_000 + "]" * 100_000


# --------------------------------------------------------------------------------------
# 5. NaN and negative numbers where a minimum is declared
# --------------------------------------------------------------------------------------
def _report_with(change: Any) -> bytes:
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    change(data)
    return json.dumps(data).encode()


@pytest.mark.hostile
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


@pytest.mark.hostile
def test_several_problems_are_listed_and_capped() -> None:
    def break_many(data: dict[str, Any]) -> None:
        for result in data["case_results"]:
            result["query_mode"] = 5

    with pytest.raises(ReportFormatError) as info:
        heta_nb.load_report(_mutated(break_many))
    assert len(info.value.problems) == 10
    assert "further problems not shown" in str(info.value)
    assert info.value.problems[0] == "case_results[0].query_mode: expected string, got number"


@pytest.mark.hostile
def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ReportNotFoundError, match="no such file"):
        heta_nb.load_report(tmp_path / "absent.json")
    with pytest.raises(ReportFormatError, match="directory without a report.json"):
        heta_nb.load_report(tmp_path)
    (tmp_path / "report.json").write_bytes((FIXTURES / "report-beir-local.json").read_bytes())
    assert heta_nb.load_report(tmp_path).report_id == "fixture-beir-local"


@pytest.mark.hostile
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


@pytest.mark.hostile
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


@pytest.mark.hostile
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


@pytest.mark.hostile
@requires_heta
def test_a_wrong_type_at_every_field_names_the_file_and_the_path(tmp_path: Path) -> None:
    checked = refused_by_both = heta_only = 0
    for field_path, keys, kind in POSITIONS:
        for wrong in WRONG[kind]:
            data = copy.deepcopy(BASE)
            _put(data, keys, wrong)
            if kind in ("record", "array") and keys[-1] in ("response", "error") and wrong is None:
                continue  # null is valid there (both sides check "response or error" below)
            path, load = _load_file(tmp_path, data)
            heta = _heta_accepts(data)
            checked += 1
            if heta and not _heta_only(field_path, wrong, kind):
                load()  # what Heta accepts heta_nb accepts
                continue
            if heta:
                heta_only += 1
            else:
                refused_by_both += 1
            _assert_one_format_error(load, path, field_path)
    assert checked > 900 and refused_by_both > 700 and heta_only > 20, (checked, refused_by_both, heta_only)


@pytest.mark.hostile
def test_missing_fields(tmp_path: Path) -> None:
    for field_path, keys, _kind in POSITIONS:
        if isinstance(keys[-1], int):
            continue
        data = copy.deepcopy(BASE)
        target: Any = data
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]
        path, load = _load_file(tmp_path, data)
        defaulted = keys[-1] in ("metadata", "passed", "retryable", "kind", "score", "source", "latency_ms") or (
            len(keys) > 1
            and keys[-1]
            in ("build_scope", "homepage", "license", "citation", "answer", "results", "citations", "trace")
            or keys[-1] in ("result_id", "text")
            and "citations" in keys
            or keys[-1] in ("scores", "response", "error")
            and len(keys) == 3
        )
        if keys[-1] == "metadata" and len(keys) == 1 or keys[-1] == "schema_version":
            defaulted = False  # every report.json has all 13 top-level keys
        if keys[-1] in ("response", "error") and target.get("error" if keys[-1] == "response" else "response") is None:
            defaulted = False  # then neither is set
        if defaulted:
            load()
        else:
            problem = (
                field_path.rsplit(".", 1)[0] if keys[-1] in ("response", "error") and len(keys) == 3 else field_path
            )
            _assert_one_format_error(load, path, problem)


@pytest.mark.hostile
def test_extra_fields_duplicates_and_versions(tmp_path: Path) -> None:
    data = copy.deepcopy(BASE)
    data["x_top"] = {"a": [math.nan]}
    data["case_results"][3]["response"]["results"][0]["x"] = 1
    data["case_results"].append(copy.deepcopy(data["case_results"][0]))  # duplicate case × mode: Heta keeps both
    path, load = _load_file(tmp_path, data)
    report = load()
    assert encode_report(report) == path.read_bytes()
    assert report.case_count == 5
    for version in ("2", "0", "1.0", " 1", "", None, 1, [], {}):
        data = copy.deepcopy(BASE)
        data["schema_version"] = version
        path, load = _load_file(tmp_path, data)
        _assert_one_format_error(load, path, "schema_version")


def test_non_finite_numbers_where_heta_allows_or_refuses_them(tmp_path: Path) -> None:
    allowed = [
        ("case_results", 3, "scores", 0, "value"),
        ("case_results", 3, "response", "results", 0, "score"),
        ("case_results", 3, "latency_ms"),
        ("score_summary", "full_text_search.evidence_recall@5"),
        ("metadata", "x"),
        ("case_results", 3, "scores", 0, "metadata", "x"),
    ]
    for keys in allowed:
        for value in (math.nan, math.inf, -math.inf):
            if keys[-1] == "latency_ms" and value < 0:
                continue
            data = copy.deepcopy(BASE)
            _put(data, keys, value)
            if heta_available():
                assert _heta_accepts(data), keys
            path, load = _load_file(tmp_path, data)
            assert encode_report(load()) == path.read_bytes(), keys
    data = copy.deepcopy(BASE)
    data["case_results"][3]["latency_ms"] = -math.inf
    if heta_available():
        assert not _heta_accepts(data)
    path, load = _load_file(tmp_path, data)
    _assert_one_format_error(load, path, "case_results[3].latency_ms")


@pytest.mark.hostile
@DIFF
@given(st.sampled_from(POSITIONS), st.data())
def test_random_wrong_values_at_typed_positions(
    position: tuple[str, tuple[Any, ...], str], data: st.DataObject
) -> None:
    """Any JSON value at a typed position either loads or names that position."""
    field_path, keys, kind = position
    wrong = data.draw(json_value.filter(lambda v: not isinstance(v, tuple)))
    report = copy.deepcopy(BASE)
    _put(report, keys, wrong)
    try:
        heta_nb.load_report(heta_dumps(report))
    except ReportFormatError as error:
        assert error.problems, field_path
        assert any(p.startswith(field_path.rsplit("[", 1)[0].rsplit(".", 1)[0]) for p in error.problems), (
            field_path,
            error.problems,
        )


@pytest.mark.hostile
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


@pytest.mark.hostile
def test_report_deep_nesting_names_file(tmp_path: Path) -> None:
    raw = (FIXTURES / "report-normal.json").read_bytes()
    path = tmp_path / "report.json"
    path.write_bytes(raw.replace(b'"metadata":{}', b'"metadata":{"x":' + DEEP.encode() + b"}", 1))
    with pytest.raises(ReportFormatError, match=r"report\.json: invalid JSON: nested more than \d+ levels deep"):
        heta_nb.load_report(path)


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

    data = json.loads((Path(__file__).parents[1] / "fixtures" / "heta-0.1.2" / "report-normal.json").read_text())
    for key in ("case_results", "query_modes", "schema_version", "metadata"):
        partial = {k: v for k, v in data.items() if k != key}
        path = tmp_path / f"without-{key}.json"
        path.write_text(json.dumps(partial))
        with pytest.raises(ReportFormatError, match=f"{key}: missing required field"):
            load_report(path)
    built = {k: v for k, v in data.items() if k != "metadata"}  # a dict built in Python may leave defaults out
    assert load_report(built).metadata == {} and len(load_report(built).case_results) == len(data["case_results"])
