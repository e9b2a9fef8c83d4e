"""Two reports whose judges differ are not compared: ``compare`` and ``check`` say "not comparable:
judge differs" for that metric (and test the others); the same judge compares as any metric."""

from __future__ import annotations

import json
from typing import Any

from llm_judges.conftest import capital_kb, capitals

import heta_nb
from heta_nb.llm_judges import JudgeModel, standin_model
from heta_nb.llm_judges.standin import standin_answer


def judged(model: Any, kb: Any = capital_kb) -> Any:
    return heta_nb.evaluate(
        capitals(12),
        kb=kb,
        evaluators=["answer_relevance", "answer_f1"],
        judge_model=model,
        judge_cache=None,
        store=None,
        progress=False,
    )


def other_model() -> JudgeModel:
    return JudgeModel(lambda prompt, system: standin_answer(system, prompt), name="another-judge")


def test_compare_says_not_comparable_for_the_judge_and_tests_the_rest() -> None:
    comparison = heta_nb.compare(judged(standin_model()), judged(other_model()), names=["a", "b"])
    verdict = comparison.verdict("b", "answer_relevance")
    assert verdict.startswith("not comparable: judge differs: model ")
    assert "another-judge" in verdict
    assert comparison.verdict("b", "answer_f1").startswith("no detectable difference")
    line = comparison.headline()[0]
    assert "1 not comparable (answer_relevance: judge differs)" in line
    assert "answer_relevance" not in comparison.family("b").metrics
    rows = {r["metric"]: r for r in comparison.summary_rows()}
    assert rows["answer_relevance"]["family_size"] == 0 and not rows["answer_relevance"]["significant"]


def test_check_fails_the_judged_metric_as_not_comparable_with_exit_2() -> None:
    result = heta_nb.check(judged(other_model()), judged(standin_model()))
    row = next(r for r in result.rows if r.metric == "answer_relevance")
    assert row.verdict == "not comparable" and row.reason.startswith("not comparable: judge differs: model ")
    assert next(r for r in result.rows if r.metric == "answer_f1").verdict != "not comparable"
    assert result.exit_code == 2
    assert "judge differs" in result.to_junit()


def test_the_same_judge_compares_like_any_metric() -> None:
    def worse_kb(query: str) -> dict[str, Any]:
        return {"answer": "Bananas are yellow.", "results": [{"id": "x", "text": "Bananas are yellow."}]}

    base, worse = judged(standin_model()), judged(standin_model(), kb=worse_kb)
    comparison = heta_nb.compare(base, worse, names=["base", "worse"])
    assert comparison.verdict("worse", "answer_relevance").startswith("worse")
    result = heta_nb.check(worse, base)
    assert next(r for r in result.rows if r.metric == "answer_relevance").verdict == "regression"
    assert "judge differs" not in json.dumps(result.to_dict(), default=str)
