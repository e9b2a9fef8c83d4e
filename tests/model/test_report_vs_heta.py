"""The model against heta-framework's own report classes (differential): bytes, constructors, summaries."""

from __future__ import annotations

import json
import math
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pytest
from helpers import FIXTURES, heta_available, requires_heta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import heta_nb
from heta_nb import ReportFormatError
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


def same_json(a: Any, b: Any) -> bool:
    """JSON equality that is type-exact (1 != 1.0 != True) and treats NaN as equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


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


opt_text = st.none() | text


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


class Opaque:
    """An object Heta's ``_json_safe`` replaces with a ``manifest_note``."""


# What Heta's _json_safe converts: paths, sets, tuples, key objects, anything else.
safe_extra = st.sampled_from(
    [Path("/tmp/x"), PurePosixPath("a/b"), PureWindowsPath("c:/w"), frozenset({"only"}), b"raw", Opaque(), (1, (2,))]
)


safe_value = st.recursive(
    json_scalar | safe_extra,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(key | st.sampled_from([3, (1, 2)]), kids, max_size=3),
    max_leaves=10,
)


safe_metadata = st.dictionaries(key, safe_value, max_size=4)


MODES = ["full_text_search", "vector_search", "a.b", "a", "ハイブリッド ", " naive"]


SCORE_NAMES = ["evidence_recall@5", "b.c", "c", "answer_contains", " label ", "beir_ndcg@10"]


score_value = (
    st.booleans()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([0, 1, -0.0, 1e-300, 1e300, 2**53 + 1])
    | text
)


@st.composite
def raw_response(draw: st.DrawFn, mode: str) -> dict[str, Any]:
    results = [
        {
            "id": draw(text),
            "text": draw(text),
            "score": draw(st.none() | number),
            "kind": draw(st.sampled_from(["chunk", " chunk ", "document"])),
            "source": draw(safe_metadata),
            "metadata": draw(safe_metadata),
        }
        for _ in range(draw(st.integers(0, 3)))
    ]
    citations = [
        {
            "id": draw(text),
            "result_id": draw(opt_text),
            "source": draw(safe_metadata),
            "text": draw(opt_text),
            "metadata": draw(safe_metadata),
        }
        for _ in range(draw(st.integers(0, 2)))
    ]
    trace = [
        {"stage": draw(text), "message": draw(text), "metadata": draw(safe_metadata)}
        for _ in range(draw(st.integers(0, 2)))
    ]
    return {
        "mode": mode,
        "results": results,
        "answer": draw(opt_text),
        "citations": citations,
        "trace": trace,
        "metadata": draw(safe_metadata),
    }


@st.composite
def raw_case(draw: st.DrawFn, index: int) -> dict[str, Any]:
    mode = draw(st.sampled_from(MODES))
    outcome = draw(st.sampled_from(["ok", "ok", "ok", "error", "both"]))
    error = None
    if outcome != "ok":
        error = {
            "message": draw(text),
            "error_type": draw(st.sampled_from(["LookupError", "RuntimeError", " ValueError "])),
            "retryable": draw(st.booleans()),
            "metadata": draw(metadata),
        }
    scores = []
    if outcome != "error":
        names = draw(st.lists(st.sampled_from(SCORE_NAMES), max_size=4))
        scores = [
            {
                "name": name,
                "value": draw(score_value),
                "passed": draw(st.none() | st.booleans()),
                "metadata": draw(metadata | st.just({"skipped": True, "reason": "case has no expected evidence"})),
            }
            for name in names
        ]
    return {
        "case_id": draw(st.sampled_from([f"c{index}", f" c{index} ", "dup"])),
        "query": draw(text),
        "query_mode": mode,
        "scores": scores,
        "response": None if outcome == "error" else draw(raw_response(mode)),
        "latency_ms": draw(
            st.none() | st.floats(min_value=0, allow_nan=False) | st.integers(0, 2**64) | st.just(math.nan)
        ),
        "error": error,
        "metadata": draw(metadata),
    }


@st.composite
def raw_report(draw: st.DrawFn) -> dict[str, Any]:
    cases = [draw(raw_case(i)) for i in range(draw(st.integers(0, 6)))]
    manifest = draw(safe_metadata)
    if draw(st.booleans()):
        manifest = {"knowledge_bases": [draw(safe_metadata) for _ in range(draw(st.integers(0, 3)))]}
    modes = [c["query_mode"] for c in cases] or draw(st.lists(st.sampled_from(MODES), min_size=1, max_size=3))
    return {
        "report_id": draw(text),
        "report_key": draw(opt_text),
        "benchmark": {
            "name": draw(text),
            "version": draw(text),
            "split": draw(text),
            "task_type": draw(text),
            "build_scope": draw(st.sampled_from(["corpus", "group", "case"])),
            "homepage": draw(opt_text),
            "license": draw(opt_text),
            "citation": draw(opt_text),
            "metadata": draw(metadata),
        },
        "knowledge_base_name": draw(text),
        "knowledge_base_manifest": manifest,
        "recipe_manifest": {"schema_version": "1", "steps": [draw(safe_metadata)], "metadata": draw(safe_metadata)},
        "query_modes": modes,  # duplicates kept, in order
        "case_results": cases,
        "started_at": draw(st.sampled_from(["2026-12-01T07:32:27.095868+00:00", " 2026-12-01T07:00:00+00:00 "])),
        "finished_at": "2026-12-01T07:32:29.5+00:00",
        "metadata": draw(metadata),
    }


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


def build_ours(raw: dict[str, Any]) -> EvaluationReport:
    """heta_nb's EvaluationReport from the same raw inputs, through its constructors."""

    def response(r: dict[str, Any] | None) -> QueryResponse | None:
        if r is None:
            return None
        return QueryResponse(
            mode=r["mode"],
            results=[QueryResult(**x) for x in r["results"]],
            answer=r["answer"],
            citations=[QueryCitation(**x) for x in r["citations"]],
            trace=[QueryTraceEvent(**x) for x in r["trace"]],
            metadata=r["metadata"],
        )

    cases = [
        EvaluationCaseResult(
            case_id=c["case_id"],
            query=c["query"],
            query_mode=c["query_mode"],
            scores=[EvaluationScore(**s) for s in c["scores"]],
            response=response(c["response"]),
            latency_ms=c["latency_ms"],
            error=EvaluationError(**c["error"]) if c["error"] is not None else None,
            metadata=c["metadata"],
        )
        for c in raw["case_results"]
    ]
    top = {k: v for k, v in raw.items() if k not in ("benchmark", "case_results")}
    return EvaluationReport(**top, benchmark=BenchmarkManifest(**raw["benchmark"]), case_results=cases)


def heta_from_json(data: dict[str, Any]) -> Any:
    """Heta "reading" a report.json: its dataclasses rebuilt from the JSON (no loader exists)."""
    return build_heta(data)


def fits_heta(raw: dict[str, Any]) -> bool:
    """False for the one input Heta cannot summarize: an integer score beyond the float range."""
    return all(
        not (type(s["value"]) is int and abs(s["value"]) > 1e308) for c in raw["case_results"] for s in c["scores"]
    )


def _fields_equal(ours: Any, theirs: Any, path: str) -> None:
    """Attribute-by-attribute comparison of a heta_nb record with the Heta dataclass."""
    from dataclasses import fields, is_dataclass

    for field in fields(theirs):
        if field.name == "insights":  # dropped from reports by Heta itself
            continue
        mine, heta = getattr(ours, field.name), getattr(theirs, field.name)
        here = f"{path}.{field.name}"
        if is_dataclass(heta):
            _fields_equal(mine, heta, here)
        elif isinstance(heta, tuple) and heta and is_dataclass(heta[0]):
            assert len(mine) == len(heta), here
            for i, (m, h) in enumerate(zip(mine, heta)):
                _fields_equal(m, h, f"{here}[{i}]")
        elif field.name in ("metadata", "source", "knowledge_base_manifest", "recipe_manifest", "score_summary"):
            # Heta keeps the Python mapping; the JSON form is what must agree
            # Heta applies _json_safe to manifests and to response parts only (spec §1.10)
            safe = field.name.endswith("manifest") or type(theirs).__name__.startswith("Query")
            expected = _heta_safe(dict(heta)) if safe else dict(heta)
            assert same_json(json.loads(heta_dumps(_plain(mine))), json.loads(heta_dumps(expected))), here
        elif mine is None or heta is None:
            assert mine is None and heta is None, here
        else:
            assert same_json(_plain(mine), _plain(heta)), (here, mine, heta)


def _plain(value: Any) -> Any:
    from collections.abc import Mapping

    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _heta_safe(value: Any) -> Any:
    from heta_framework.evaluation.types import _json_safe

    return _json_safe(value)


def _one_case_report(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "report_id": "r",
        "benchmark": {"name": "b", "version": "1", "split": "t", "task_type": "qa"},
        "knowledge_base_name": "kb",
        "knowledge_base_manifest": {},
        "recipe_manifest": {},
        "query_modes": [case["query_mode"]],
        "score_summary": {},
        "case_results": [case],
        "started_at": "s",
        "finished_at": "f",
    }


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


# -- differential tests --------------------------------------------------------------


@requires_heta
@DIFF
@given(raw_report())
def test_heta_bytes_read_to_an_equal_model_and_are_written_back_unchanged(raw: dict[str, Any]) -> None:
    theirs = build_heta(raw) if fits_heta(raw) else None
    if theirs is None:
        return
    written = heta_dumps(theirs.to_dict())
    report = decode_report(written, source="heta.json")
    assert encode_report(report) == written
    assert report.to_json().encode("utf-8") == written
    assert same_json(report.to_dict(), json.loads(written))
    _fields_equal(report, theirs, "report")
    assert report.benchmark.key == theirs.benchmark.key
    # a Heta object goes through load_report (its to_dict) to the same model
    assert encode_report(heta_nb.load_report(theirs)) == written


@requires_heta
@DIFF
@given(raw_report())
def test_heta_nb_constructors_write_hetas_bytes(raw: dict[str, Any]) -> None:
    if not fits_heta(raw):
        return
    theirs = heta_dumps(build_heta(raw).to_dict())
    ours = build_ours(raw)
    assert encode_report(ours) == theirs
    assert same_json(ours.to_dict(), json.loads(theirs))
    # coerce() reads a Heta object's attributes directly (no to_dict)
    assert encode_report(EvaluationReport.coerce(build_heta(raw))) == theirs


@requires_heta
@DIFF
@given(raw_report())
def test_heta_reads_back_what_heta_nb_writes(raw: dict[str, Any]) -> None:
    if not fits_heta(raw):
        return
    written = encode_report(build_ours(raw))
    loaded = json.loads(written)
    again = heta_from_json(loaded)
    assert heta_dumps(again.to_dict()) == written
    # and Heta's summary of the cases read back is the one heta_nb wrote
    from heta_framework.evaluation.runner import _score_summary

    assert same_json(_score_summary(again.case_results), loaded["score_summary"])


@requires_heta
@DIFF
@given(raw_report())
def test_score_summary_matches_hetas_semantics(raw: dict[str, Any]) -> None:
    if not fits_heta(raw):
        return
    from heta_framework.evaluation.runner import _score_summary

    theirs = build_heta(raw)
    ours = build_ours(raw)
    expected = _score_summary(theirs.case_results)
    assert same_json(heta_score_summary(ours.case_results), expected)
    assert same_json(dict(ours.score_summary), expected)
    loaded = decode_report(heta_dumps(theirs.to_dict()), source="heta.json")
    assert same_json(loaded.recomputed_score_summary(), expected)
    # Heta's mean per key: errored cases left out, bools 1/0, strings left out
    for mode in {c.query_mode for c in ours.case_results}:
        for name in {s.name for c in ours.case_results for s in c.scores}:
            values = [
                s.numeric
                for c in ours.case_results
                if c.query_mode == mode
                for s in c.scores
                if s.name == name and s.numeric is not None
            ]
            if values and f"{mode}.{name}".count(".") == 1:
                assert same_json(expected[f"{mode}.{name}"], sum(values) / len(values))


def test_summary_of_integers_beyond_float_range_is_infinite_where_heta_crashes() -> None:
    """Allowed difference (``as_float``): Heta's ``float(int)`` raises OverflowError."""
    result = EvaluationCaseResult(
        case_id="c",
        query="q",
        query_mode="m",
        scores=[EvaluationScore(name="s", value=10**400)],
        response={"mode": "m"},
    )
    assert heta_score_summary([result]) == {"m.s": math.inf}
    if heta_available():
        from heta_framework.evaluation.runner import _score_summary

        with pytest.raises(OverflowError):
            _score_summary((build_heta(_one_case_report(result.to_dict()))).case_results)


# -- fixed regressions found by the differential tests ----------------------------------


def test_nan_latency_is_accepted_as_heta_does() -> None:
    """Heta checks ``latency_ms < 0``, which NaN passes; heta_nb used to refuse NaN."""
    case = EvaluationCaseResult(case_id="c", query="q", query_mode="m", response={"mode": "m"}, latency_ms=math.nan)
    assert math.isnan(case.latency_ms)
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    data["case_results"][0]["latency_ms"] = math.nan
    written = heta_dumps(data)
    report = decode_report(written, source="nan-latency.json")
    assert encode_report(report) == written
    assert math.isnan(report.case_results[0].latency_ms)
    report.mode_counts()
    report.metric_summaries()
    # negative numbers, -inf included, stay refused, as in Heta
    for bad in (-1, -0.5, -math.inf):
        data["case_results"][0]["latency_ms"] = bad
        with pytest.raises(ReportFormatError, match=r"bad\.json: case_results\[0\]\.latency_ms: must not be less"):
            decode_report(heta_dumps(data), source="bad.json")
        with pytest.raises(ValueError, match="latency_ms must not be less than 0"):
            EvaluationCaseResult(case_id="c", query="q", query_mode="m", response={"mode": "m"}, latency_ms=bad)


def test_pure_paths_are_not_json_safe_for_heta() -> None:
    """Heta's ``_json_safe`` turns only concrete ``Path`` objects into text; heta_nb used to
    turn every ``PurePath`` into text, so its bytes differed from Heta's."""
    note = {"type": "PurePosixPath", "manifest_note": "value omitted because it is not JSON-safe"}
    result = QueryResult(id="r", text="t", source={"pure": PurePosixPath("a/b"), "real": Path("/x")})
    assert result.to_dict()["source"] == {"pure": note, "real": "/x"}
