"""answer_f1 is SQuAD v1.1's F1."""

from __future__ import annotations

import collections
import json
import re
import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heta_nb.evaluators import get
from heta_nb.evaluators.answers import squad_tokens, token_f1

F1_EXAMPLES = 400


DIFFERENTIAL = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _json(value: Any) -> Any:
    """``value`` as strict JSON would hold it (raises on NaN, sets, ...)."""
    return json.loads(json.dumps(value, allow_nan=False))


WORDS = [
    "the", "The", "a", "An", "Harrow", "harrow", "HARROW", "Point", "point.", "light,", "café", "CAFÉ", "cafe",
    "don't", "U.S.", "—", "(x)", "1,000", "naïve", "Straße", "strasse", "  ", "\t", "x",
]  # fmt: skip


# --- answer_f1 against the official SQuAD v1.1 definition --------------------------


def _squad_normalize(text: str) -> str:
    """evaluate-v1.1.py's normalize_answer, step by step: lower, punctuation, articles, space."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _squad_f1(prediction: str, ground_truth: str) -> float:
    prediction_tokens = _squad_normalize(prediction).split()
    truth_tokens = _squad_normalize(ground_truth).split()
    same = sum((collections.Counter(prediction_tokens) & collections.Counter(truth_tokens)).values())
    if same == 0:
        return 0
    precision = 1.0 * same / len(prediction_tokens)
    recall = 1.0 * same / len(truth_tokens)
    return (2 * precision * recall) / (precision + recall)


answer_texts = st.lists(st.sampled_from([*WORDS, "", "!", "the."]), max_size=6).map(" ".join)


@settings(DIFFERENTIAL, max_examples=F1_EXAMPLES)
@given(
    answer=st.one_of(st.none(), answer_texts.filter(str.strip)),
    golds=st.lists(answer_texts.filter(str.strip), min_size=1, max_size=3),
)
def test_answer_f1_is_squad_v1_1(answer: str | None, golds: list[str]) -> None:
    """The best official F1 over the expected answers; token lists equal SQuAD's."""
    from heta_nb.benchmark import BenchmarkCase, BenchmarkExpected

    case = BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(answers=tuple(golds)))
    golds = list(case.expected.answers)  # stored stripped, as Heta does
    score = get("answer_f1").score(case, {"answer": answer, "results": []})
    official = [_squad_f1(answer or "", gold) for gold in golds]
    assert score.value == max(official)
    assert score.passed is None
    metadata = _json(dict(score.metadata))
    best = official.index(max(official))
    assert metadata["best_answer"] == golds[best]
    _, precision, recall = token_f1(answer or "", golds[best])
    assert (metadata["precision"], metadata["recall"]) == (precision, recall)
    for text in (answer or "", *golds):
        assert squad_tokens(text) == _squad_normalize(text).split()


def test_answer_f1_minimal_examples() -> None:
    """Each of these differed from SQuAD v1.1 before (punctuation became a space; two
    empty token lists scored 1.0, so a missing answer could score 1.0)."""
    assert squad_tokens("Don't the U.S.!") == ["dont", "us"]
    assert token_f1("dont", "don't")[0] == 1.0  # was 0.0 ("don t" vs "dont")
    assert token_f1("the-cat", "cat")[0] == 0.0  # SQuAD: "thecat"; was 1.0 ("the cat" -> "cat")
    assert token_f1("", "The")[0] == 0.0  # was 1.0
    from heta_nb.benchmark import BenchmarkCase, BenchmarkExpected

    case = BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(answers=("The",)))
    assert get("answer_f1").score(case, {"answer": None}).value == 0.0  # a missing answer scores 0.0
