"""Evaluator names, adapters for functions and objects, and their errors."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from typing import Any

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.evaluators import FunctionEvaluator, PreparedEvaluator, as_evaluator, as_score, get
from heta_nb.model import EvaluationScore, QueryResponse


def _case(*evidence: BenchmarkEvidence, answers: tuple[str, ...] = ()) -> BenchmarkCase:
    return BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(answers=answers, evidence=evidence))


def _json(value: Any) -> Any:
    """``value`` as strict JSON would hold it (raises on NaN, sets, ...)."""
    return json.loads(json.dumps(value, allow_nan=False))


def test_names_and_errors() -> None:
    assert get("NDCG@10").name == "ndcg@10"
    assert get("success@3").name == "hit@3" and get("rr@5").name == "mrr@5"
    for bad in ("ndcg", "ndcg@0", "bleu@3", "evidence_recall@x"):
        with pytest.raises(ValueError, match="evaluator"):
            get(bad)


def test_adapters_for_functions_objects_and_heta_style_evaluators() -> None:
    case = _case(answers=("x",))
    response = QueryResponse(mode="m", answer="x")

    def positional(c: Any, r: Any) -> float:
        return 1.0

    async def keywords(*, case: Any, response: Any) -> dict[str, Any]:
        return {"value": True, "passed": True, "metadata": {"why": "async"}}

    class SyncScore:
        name = "sync_score"

        def score(self, case: Any, response: Any) -> str:
            return "label"

    for evaluator, expected in ((positional, 1.0), (keywords, True), (SyncScore(), "label"), ("answer_contains", True)):
        prepared = PreparedEvaluator(as_evaluator(evaluator))
        score = asyncio.run(prepared.run(case, response, response))
        assert isinstance(score, EvaluationScore) and score.value == expected
    with pytest.raises(ValueError, match="give a lambda evaluator a name"):
        FunctionEvaluator(lambda c, r: 1)
    assert FunctionEvaluator(lambda c, r: 1, name="one").name == "one"
    with pytest.raises(TypeError, match="not a score"):
        as_score(object(), "x")
    with pytest.raises(TypeError):
        as_evaluator(42)


def test_a_builtin_subclass_that_only_overrides_score_still_runs() -> None:
    """Built-ins now implement score_json (the runner records it as it is); a subclass
    written against score() alone keeps working, in the runner and on its own."""

    from heta_nb.evaluators import BuiltinEvaluator

    class Legacy(BuiltinEvaluator):
        name = "legacy"

        def score(self, case: Any, response: dict[str, Any]) -> EvaluationScore:
            return EvaluationScore(name=self.name, value=len(response["results"]) / 10, metadata={"n": 1})

    legacy = Legacy()
    assert legacy.score_json(_case(), {"results": [{}] * 3}) == {
        "name": "legacy",
        "value": 0.3,
        "passed": None,
        "metadata": {"n": 1},
    }
    report = heta_nb.evaluate(
        toy_benchmark(4),
        kb=exact_kb,
        query_modes=["good"],
        evaluators=[legacy, "answer_contains"],
        store=None,
        knowledge_base_name="k",
        progress=False,
    )
    assert [r.score("legacy").metadata["n"] for r in report.case_results] == [1] * 4
    assert all(r.score("answer_contains") is not None for r in report.case_results)
    assert get("answer_contains").score(_case(answers=("x",)), {"answer": "X"}).value is True


# --- evaluator names --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ndcg@5", "ndcg@5"),
        ("NDCG@5", "ndcg@5"),
        ("  Recall@3 ", "recall@3"),
        ("ndcg@05", "ndcg@5"),
        ("rr@2", "mrr@2"),
        ("beir_ndcg@3", "beir_ndcg@3"),
        ("Evidence_Recall@7", "evidence_recall@7"),
        ("answer_F1", "answer_f1"),
    ],
)
def test_names_that_parse(name: str, expected: str) -> None:
    assert get(name).name == expected


@pytest.mark.parametrize(
    "name", ["recall@0", "ndcg@-1", "ndcg@ 5", "ndcg@5.0", "ndcg@1e3", "ndcg@", "ndcg@５", "ndcg@5@5"]
)
def test_bad_cutoffs_give_one_clear_error(name: str) -> None:
    """A known metric with a bad K says so (it used to be "unknown evaluator", and the
    fullwidth digit in ``ndcg@５`` was silently read as 5)."""
    with pytest.raises(ValueError, match=r"K must be a whole number >= 1 written in digits, e\.g\. '(ndcg|recall)@10'"):
        get(name)


@pytest.mark.parametrize("name", ["ndcg", "bleu@3", "ndcg @5", "f1"])
def test_unknown_names_list_the_known_ones(name: str) -> None:
    with pytest.raises(ValueError, match="unknown evaluator .*known: answer_contains"):
        get(name)


def test_metric_values_are_finite_floats() -> None:
    """No NaN reaches a score: skipped cases are 0.0 and every value is JSON."""
    from heta_nb.benchmark import BenchmarkCase, BenchmarkExpected

    empty = BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected())
    for metric in ("recall", "precision", "hit", "mrr", "ndcg", "map", "beir_ndcg", "beir_map"):
        score = get(f"{metric}@3").score(empty, {"results": []})
        assert score.value == 0.0 and not math.isnan(score.value)
        assert _json({"value": score.value, "metadata": dict(score.metadata)})["metadata"]["skipped"] is True


# -- evaluator names: a near miss is named ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("ndgc@5", "'ndcg@5'"),
        ("recal@10", "'recall@10'"),
        ("evidence_recal@3", "'evidence_recall@3'"),
        ("answer_f", "'answer_f1'"),
        ("answer_exact", "'answer_exact_match'"),
        ("f1", "'answer_f1'"),
        ("evidence_recall", "'evidence_recall@10'"),
        ("beir_ndgc@3", "'beir_ndcg@3'"),
    ],
)
def test_misspelled_evaluator_suggests_the_right_one(name: str, suggestion: str) -> None:
    with pytest.raises(ValueError, match=f"did you mean {suggestion}") as info:
        heta_nb.evaluators.get(name)
    assert "\n" not in str(info.value) and "known: answer_contains" in str(info.value)


def test_unrelated_evaluator_name_has_no_suggestion() -> None:
    with pytest.raises(ValueError) as info:
        heta_nb.evaluators.get("frobnicate")
    assert "did you mean" not in str(info.value)


def test_evaluators_get_example_is_right() -> None:
    doc = inspect.getdoc(heta_nb.evaluators.get) or ""
    assert ">>> evaluators.get(\"ndcg@10\")\n    DocumentMetric('ndcg@10')" in doc
    assert repr(heta_nb.evaluators.get("ndcg@10")) == "DocumentMetric('ndcg@10')"
