"""A report's judge calls, tokens and cost, summed from its scores: the one computation every
view reads (the report's header and repr, the live widget, the CLI).

Totals come from each judge score's metadata, so a resumed, merged or rescored report
adds up the same way. A cost is unknown (None) as soon as one uncached call's cost is,
and the total says how many scores that is; it never reads $0 for an unknown price.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["JudgeTotal", "add_judge_score", "judge_totals", "money", "overall"]


@dataclass
class JudgeTotal:
    """One judge's (or all judges') usage over a report."""

    name: str
    model: str | None = None
    scores: int = 0
    """Scores this judge recorded (n/a and errors included)."""
    not_applicable: int = 0
    errors: int = 0
    calls: int = 0
    cached_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    """Dollars of the scores whose cost is known."""
    cost_unknown: int = 0
    """Scores whose cost is unknown (no price, or the model reported no tokens)."""

    @property
    def cost_text(self) -> str:
        """``"$0.0123"``, ``"$0.0123 + unknown (3 scores)"`` or ``"unknown"``; cached calls are free."""
        if self.cost_unknown and not self.cost:
            return "unknown"
        text = money(self.cost)
        return f"{text} + unknown ({self.cost_unknown:,} scores)" if self.cost_unknown else text

    def record(self) -> dict[str, Any]:
        """As JSON (the CLI, MLflow)."""
        return {
            "name": self.name,
            "model": self.model,
            "scores": self.scores,
            "not_applicable": self.not_applicable,
            "errors": self.errors,
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": self.cost if not self.cost_unknown else None,
            "cost_known_part": self.cost,
            "cost_unknown_scores": self.cost_unknown,
        }


def money(value: float) -> str:
    """Dollars with enough digits for a small judge bill (``$0.0004``, ``$12.35``)."""
    if value == 0:
        return "$0"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    return f"${value:.4f}" if abs(value) >= 0.0001 else f"${value:.2e}"


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def add_judge_score(total: JudgeTotal, score: Mapping[str, Any]) -> None:
    """Count one judge score in ``total``."""
    metadata = score.get("metadata")
    if not isinstance(metadata, Mapping):
        return
    judge = metadata.get("judge")
    total.scores += 1
    if total.model is None and isinstance(judge, Mapping) and isinstance(judge.get("model"), str):
        total.model = judge["model"]
    if metadata.get("skipped") is True:
        total.not_applicable += 1
    if score.get("value") == "error":
        total.errors += 1
    calls = _int(metadata.get("calls"))
    total.calls += calls
    total.cached_calls += _int(metadata.get("cached_calls"))
    total.tokens_in += _int(metadata.get("tokens_in"))
    total.tokens_out += _int(metadata.get("tokens_out"))
    cost = metadata.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        total.cost += float(cost)
    elif calls and _int(metadata.get("cached_calls")) < calls:
        total.cost_unknown += 1


def _is_judge_score(score: Any) -> bool:
    return (
        isinstance(score, Mapping)
        and isinstance(score.get("metadata"), Mapping)
        and isinstance(score["metadata"].get("judge"), Mapping)
    )


def judge_totals(report: Any) -> dict[str, JudgeTotal]:
    """``{judge score name: JudgeTotal}`` over a report (or its JSON), in first-seen order.

    Empty when the report has no judge scores.
    """
    raw = report.raw if hasattr(report, "raw") else report
    totals: dict[str, JudgeTotal] = {}
    results: Iterable[Any] = raw.get("case_results") or () if isinstance(raw, Mapping) else ()
    for result in results:
        if not isinstance(result, Mapping):
            continue
        for score in result.get("scores") or ():
            if _is_judge_score(score):
                name = str(score.get("name"))
                total = totals.get(name)
                if total is None:
                    total = totals[name] = JudgeTotal(name)
                add_judge_score(total, score)
    return totals


def overall(totals: Mapping[str, JudgeTotal]) -> JudgeTotal:
    """All judges together (``model``: the models, comma-separated)."""
    whole = JudgeTotal("all judges")
    models = []
    for total in totals.values():
        for name in (
            "scores",
            "not_applicable",
            "errors",
            "calls",
            "cached_calls",
            "tokens_in",
            "tokens_out",
            "cost_unknown",
        ):
            setattr(whole, name, getattr(whole, name) + getattr(total, name))
        whole.cost += total.cost
        if total.model and total.model not in models:
            models.append(total.model)
    whole.model = ", ".join(models) or None
    return whole
