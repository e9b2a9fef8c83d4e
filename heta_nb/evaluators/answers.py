"""Answer evaluators: Heta's ``answer_contains`` / ``answer_exact_match`` and ``answer_f1``.

``answer_contains`` and ``answer_exact_match`` follow Heta 0.1.2 exactly: both sides
are casefolded and their whitespace collapsed (punctuation and articles are kept,
unlike SQuAD); a missing answer counts as ``""``; the value and ``passed`` are bools;
``metadata.matched_answers`` lists the original expected strings that matched.
Cases without expected answers score False with ``skipped: true`` (Heta averages
them in as 0.0).

``answer_f1`` is the official SQuAD v1.1 token F1 (``evaluate-v1.1.py``): lowercase,
*delete* ASCII punctuation (``string.punctuation``; so ``"don't"`` is the one token
``dont`` and ``"U.S."`` is ``us``), then drop the whole words a/an/the, split on
whitespace; F1 is 0.0 when no token is shared, which includes an answer or an
expected answer with no tokens left (``"The"``, ``"!"``, a missing answer). The value
is the best F1 over the expected answers (the first best on ties); ``passed`` is None;
metadata ``best_answer`` (that expected answer, verbatim), ``precision`` and
``recall`` (of that pair). Cases without expected answers score 0.0 with ``skipped:
true``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any

from heta_nb.evaluators.base import BuiltinEvaluator
from heta_nb.evaluators.normalize import normalize_text

__all__ = ["AnswerContains", "AnswerExactMatch", "AnswerF1", "squad_tokens", "token_f1"]


class _AnswerMatch(BuiltinEvaluator):
    exact = False

    def score_json(self, case: Any, response: dict[str, Any]) -> dict[str, Any]:
        """Score the response's answer against the case's expected answers."""
        expected = tuple(case.expected.answers)
        if not expected:
            return self._skipped(False, "case has no expected answers")
        actual = normalize_text(response.get("answer") or "")
        if self.exact:
            matched = [a for a in expected if normalize_text(a) == actual]
        else:
            matched = [a for a in expected if normalize_text(a) in actual]
        ok = bool(matched)
        return {"name": self.name, "value": ok, "passed": ok, "metadata": {"matched_answers": matched}}


class AnswerContains(_AnswerMatch):
    """Whether some expected answer occurs in the response's answer (Heta semantics)."""

    name = "answer_contains"


class AnswerExactMatch(_AnswerMatch):
    """Whether the response's answer equals some expected answer (Heta semantics)."""

    name = "answer_exact_match"
    exact = True


_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def squad_tokens(text: str) -> list[str]:
    """SQuAD v1.1 normalisation: lowercase, delete punctuation, drop articles, split.

    Args:
        text: An answer.

    Returns:
        Its tokens, e.g. ``["dont", "us"]`` for ``"Don't the U.S.!"``.
    """
    text = text.lower().translate(_PUNCTUATION)
    return _ARTICLES.sub(" ", text).split()


def token_f1(prediction: str, gold: str) -> tuple[float, float, float]:
    """SQuAD v1.1 token F1 of one prediction against one expected answer.

    Args:
        prediction: The response's answer.
        gold: One expected answer.

    Returns:
        ``(f1, precision, recall)``; all 0.0 when no token is shared (also when either
        side has no tokens, as in the official v1.1 script).
    """
    predicted = squad_tokens(prediction)
    expected = squad_tokens(gold)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision = common / len(predicted)
    recall = common / len(expected)
    return 2 * precision * recall / (precision + recall), precision, recall


class AnswerF1(BuiltinEvaluator):
    """Best SQuAD token F1 of the answer over the expected answers (``answer_f1``)."""

    name = "answer_f1"

    def score_json(self, case: Any, response: dict[str, Any]) -> dict[str, Any]:
        """Score the response's answer (a missing answer scores 0.0)."""
        expected = tuple(case.expected.answers)
        if not expected:
            return self._skipped(0.0, "case has no expected answers")
        answer = response.get("answer") or ""
        best = max(((token_f1(answer, gold), gold) for gold in expected), key=lambda item: item[0][0])
        (f1, precision, recall), gold = best
        return {
            "name": self.name,
            "value": f1,
            "passed": None,
            "metadata": {"best_answer": gold, "precision": precision, "recall": recall},
        }
