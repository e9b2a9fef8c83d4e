"""The explorer's case panel: gold data from the benchmark, results judged relevant / not
relevant / not judged, every score's metadata, errors with tracebacks, run facts, escaping."""

from __future__ import annotations

import pytest
from helpers import report_dict

from heta_nb.benchmark import Benchmark, BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.explorer import explore
from heta_nb.model import EvaluationReport

KEY = "raw/benchmarks/panel/test/{doc}/{doc}.txt"


def _result(doc: str, text: str, rank: int) -> dict:
    return {
        "id": f"chunk-{doc}-{rank}",
        "text": text,
        "score": 3.0 - rank,
        "kind": "chunk",
        "source": {"object_key": KEY.format(doc=doc), "chunk_index": rank},
        "metadata": {"ranking": "bm25"},
    }


def _case(case_id: str, query: str, docs: list[str], *, answer: str | None, scores: list[dict], **extra) -> dict:
    return {
        "case_id": case_id,
        "query": query,
        "query_mode": "m",
        "scores": scores,
        "response": {
            "mode": "m",
            "results": [_result(d, f"text about {d}", i) for i, d in enumerate(docs)],
            "answer": answer,
            "citations": [
                {"id": "citation_1", "result_id": f"chunk-{docs[0]}-0", "source": {}, "text": None, "metadata": {}}
            ]
            if docs
            else [],
            "trace": [{"stage": "retrieve", "message": "bm25 over 3 chunks", "metadata": {"k": 3}}],
            "metadata": {"index": "chunk_full_text"},
        },
        "latency_ms": 12.5,
        "error": None,
        "metadata": {"benchmark_run_unit": "corpus", "heta_nb": {"attempts": 3, "query_ms": 10.25}},
        **extra,
    }


def _report() -> EvaluationReport:
    recall = {
        "name": "evidence_recall@5",
        "value": 0.5,
        "passed": None,
        "metadata": {"matched": 1, "expected": 2, "matched_reference_ids": ["d1"], "missing_reference_ids": ["d9"]},
    }
    skipped = {
        "name": "evidence_recall@5",
        "value": 0.0,
        "passed": None,
        "metadata": {"skipped": True, "reason": "case has no expected evidence"},
    }
    broken = {
        "name": "answer_f1",
        "value": "error",
        "passed": None,
        "metadata": {"error": {"type": "ZeroDivisionError", "message": "division by zero"}},
    }
    failed = {
        "case_id": "c3",
        "query": "why did it fail?",
        "query_mode": "m",
        "scores": [],
        "response": None,
        "latency_ms": 30000.0,
        "error": {
            "message": "query did not finish within 30 s",
            "error_type": "TimeoutError",
            "retryable": True,
            "metadata": {"attempts": 2, "traceback": "Traceback (most recent call last):\n  File x\nTimeoutError"},
        },
        "metadata": {"benchmark_run_unit": "corpus"},
    }
    results = [
        _case("c1", "Who kept the light?", ["d1", "d2", "d9"], answer="Ansel kept it", scores=[recall, broken]),
        _case("c2", "No gold here?", ["d4"], answer=None, scores=[skipped]),
        failed,
    ]
    return EvaluationReport.from_raw(report_dict(results, report_id="panel", modes=["m"], benchmark="panel"))


def _benchmark() -> Benchmark:
    cases = [
        BenchmarkCase(
            case_id="c1",
            query="Who kept the light?",
            expected=BenchmarkExpected(
                answers=("Ansel", "Ansel Marr"),
                evidence=(
                    BenchmarkEvidence(reference_id="d1"),
                    BenchmarkEvidence(
                        locator={"source_key_prefix": "raw/benchmarks/panel/test/d9/"}, metadata={"relevance": 2}
                    ),
                ),
            ),
            labels={"difficulty": "hard"},
        ),
        BenchmarkCase(case_id="c2", query="No gold here?"),
        BenchmarkCase(case_id="c3", query="why did it fail?", expected=BenchmarkExpected(answers=("x",))),
    ]
    return Benchmark({"name": "panel", "version": "1", "split": "test", "task_type": "qa"}, (), cases)


def _data(explorer) -> dict:  # noqa: ANN001 - an Explorer
    """The open case's panel data (the browser builds the panel from it with textContent)."""
    case = explorer.widget.case
    assert case is not None and case["kind"] == "report"
    return case["data"]


def _marks(data: dict) -> list[str]:
    return [r[2] for r in data["r"]]


def _whys(data: dict) -> list[str]:
    return [r[5] if len(r) > 5 else "" for r in data["r"]]


def test_results_are_judged_from_the_benchmark() -> None:
    explorer = explore(_report(), benchmark=_benchmark())
    explorer.open(case_id="c1")
    data = _data(explorer)
    assert _marks(data) == ["r", "n", "r"]
    whys = _whys(data)
    assert whys[0] == "document d1 is judged relevant (grade 1)"  # by its raw key
    assert whys[2] == "matches expected evidence #2"
    assert "matches none of the case's 2 evidence item(s)" in whys[1]
    # gold data: answers, evidence with its grade, labels
    assert data["x"]["a"] == ["Ansel", "Ansel Marr"]
    assert data["x"]["ev"] == [["d1", "", "", ""], ["", "{source_key_prefix: raw/benchmarks/panel/test/d9/}", "", "2"]]
    assert "difficulty=hard" in data["x"]["l"]  # as the label filter writes it
    explorer.open(case_id="c2")
    data = _data(explorer)
    assert _marks(data) == ["u"]
    assert "the benchmark case has no expected evidence" in data["uw"]


def test_without_the_benchmark_only_what_evaluators_matched_is_marked() -> None:
    explorer = explore(_report())
    explorer.open(case_id="c1")
    data = _data(explorer)
    assert _marks(data) == ["r", "u", "u"]
    assert "x" not in data and "uw" not in data  # the panel says "report.json keeps no gold data"


def test_every_score_with_its_metadata_and_the_run_facts() -> None:
    explorer = explore(_report())
    explorer.open(case_id="c1")
    data = _data(explorer)
    scores = {s[0]: s for s in data["s"]}
    assert "missing_reference_ids" in scores["evidence_recall@5"][3] and "d9" in scores["evidence_recall@5"][3]
    assert scores["evidence_recall@5"][1:3] == ["0.500", "v"]
    assert scores["answer_f1"][1:] == ["error", "e", "evaluator error ZeroDivisionError: division by zero"]
    assert data["f"] == ["12.5", "10.2", "3", "2"]  # latency, query ms, attempts, retries
    assert data["a"] == "Ansel kept it"
    assert data["c"][0][0] == "citation_1" and data["t"][0][:2] == ["retrieve", "bm25 over 3 chunks"]
    explorer.open(case_id="c2")
    data = _data(explorer)
    (skipped,) = data["s"]
    assert skipped[1:] == ["skipped", "s", "skipped: case has no expected evidence (Heta counts it as 0.000)"]
    assert data["a"] is None  # the panel reads "none (this mode returns results only)"


def test_an_error_shows_its_traceback_and_attempts() -> None:
    explorer = explore(_report(), status="error")
    assert list(explorer.selection["case_id"]) == ["c1", "c3"]  # c1: its answer_f1 evaluator raised
    case = explorer.open(1)
    assert case.case_id == "c3"
    data = _data(explorer)
    assert data["e"][:2] == ["TimeoutError", "query did not finish within 30 s"]
    assert data["e"][2].startswith("Traceback (most recent call last):")
    assert data["e"][3] == "attempts 2 · retryable"
    assert data["f"][2:] == ["2", "1"]


@pytest.mark.hostile
def test_hostile_text_is_escaped_in_rows_and_panel() -> None:
    payload = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    data = _report().raw
    first = dict(data["case_results"][0])
    first["query"] = payload
    first["case_id"] = payload
    first["response"] = {**first["response"], "answer": payload, "metadata": {payload: payload}}
    first["response"]["results"] = [{**r, "text": payload, "id": payload} for r in first["response"]["results"]]
    first["metadata"] = {**first["metadata"], payload: payload}
    report = EvaluationReport.from_raw({**data, "case_results": [first, *data["case_results"][1:]]})
    explorer = explore(report, search="onerror")
    assert explorer.matched == 1
    explorer.open(0)
    data = _data(explorer)
    # plain text, never markup: the browser writes it with textContent (tests/browser proves it inert)
    assert data["q"] == payload and data["a"] == payload and data["r"][0][4] == payload
    row = explorer.widget.rows[0]
    assert payload in [cell[0] for cell in row["cells"]]  # cells are plain text: the browser writes them as text
    assert explorer.widget.info["case_text"].startswith(payload)
