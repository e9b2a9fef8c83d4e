"""Answer metrics."""

from __future__ import annotations

import pytest

from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.evaluators import get
from heta_nb.evaluators.answers import token_f1


def _case(*evidence: BenchmarkEvidence, answers: tuple[str, ...] = ()) -> BenchmarkCase:
    return BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(answers=answers, evidence=evidence))


def test_answer_metrics() -> None:
    case = _case(answers=("Mirela Ostrand", "Ostrand"))
    response = {"answer": "It was  mirela ostrand, the engineer.", "results": []}
    contains = get("answer_contains").score(case, response)
    assert contains.value is True and list(contains.metadata["matched_answers"]) == ["Mirela Ostrand", "Ostrand"]
    assert get("answer_exact_match").score(case, response).value is False
    assert get("answer_exact_match").score(case, {"answer": " MIRELA   OSTRAND "}).value is True
    f1 = get("answer_f1").score(case, response)
    assert f1.value == pytest.approx(token_f1("It was mirela ostrand, the engineer.", "Mirela Ostrand")[0])
    assert token_f1("The Eiffel tower", "eiffel tower!")[0] == 1.0  # articles and punctuation ignored
    assert token_f1("Paris France", "Paris")[0] == pytest.approx(2 / 3)
    assert get("answer_f1").score(case, {"answer": None}).value == 0.0
    assert get("answer_contains").score(_case(), response).metadata["skipped"] is True
