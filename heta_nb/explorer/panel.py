"""The explorer's case panel: everything about one case (or a comparison's two results of
it) as escaped HTML, built from the render contexts plus gold data and judgements."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

from heta_nb._util.text import clip, clip_label
from heta_nb.evaluators.judge import judge_results
from heta_nb.model import EvaluationCaseResult
from heta_nb.model.summary import is_evaluator_error, numeric_value
from heta_nb.render.context.case import case_context
from heta_nb.render.context.formatting import describe, format_ms
from heta_nb.render.env import environment, format_number
from heta_nb.render.limits import RenderLimits

__all__ = ["PANEL_LIMITS", "benchmark_case", "case_panel_context", "pair_panel_context", "render_panel"]

PANEL_LIMITS = RenderLimits(
    max_text_chars=1500,
    max_results_per_case=20,
    max_citations=20,
    max_trace_events=50,
    max_metadata_items=24,
    max_value_chars=300,
    max_traceback_chars=8000,
    max_metrics=64,
)
"""What one case panel shows at most (about 60 KB of HTML for the largest case)."""


def benchmark_case(benchmark: Any, case_id: str) -> Any:
    """The benchmark's case ``case_id``, or None (no benchmark, or it lacks the case)."""
    if benchmark is None:
        return None
    lookup = getattr(benchmark, "case", None)
    if callable(lookup):
        try:
            return lookup(case_id)
        except (KeyError, LookupError):
            return None
    return next((c for c in getattr(benchmark, "cases", ()) if c.case_id == case_id), None)


def _expected(case: Any, benchmark: Any, limits: RenderLimits) -> dict[str, Any]:
    if benchmark is None:
        return {"available": False, "note": "report.json keeps no gold data: pass benchmark= to explore(...) to see it"}
    if case is None:
        return {"available": False, "note": "the benchmark has no case with this id"}
    expected = case.expected
    evidence = []
    for item in islice(expected.evidence, limits.max_list_items):
        locator = dict(item.locator or {})
        relevance = (item.metadata or {}).get("relevance")
        evidence.append(
            {
                "reference_id": clip_label(item.reference_id, limits.max_name_chars) if item.reference_id else None,
                "locator": clip_label(describe(locator, 200), 200) if locator else None,
                "text": clip(item.text, limits.max_text_chars) if item.text else None,
                "relevance": describe(relevance, 20) if relevance is not None else None,
            }
        )
    labels = [
        {"key": clip_label(k, limits.max_key_chars), "value": clip_label(describe(v, 100), 100)}
        for k, v in islice((case.labels or {}).items(), limits.max_metadata_items)
    ]
    return {
        "available": True,
        "answers": [clip(a, limits.max_text_chars) for a in islice(expected.answers, limits.max_list_items)],
        "answers_more": max(0, len(expected.answers) - limits.max_list_items),
        "evidence": evidence,
        "evidence_more": max(0, len(expected.evidence) - len(evidence)),
        "value": clip_label(describe(expected.value, 300), 300) if expected.value is not None else None,
        "labels": labels,
    }


def _run_facts(data: Mapping[str, Any]) -> dict[str, str]:
    """Latency, query time, attempts and retries, from what heta_nb's runner records."""
    facts = {"latency": format_ms(data.get("latency_ms")), "query": "", "attempts": "", "retries": ""}
    run = (data.get("metadata") or {}).get("heta_nb")
    error = data.get("error") or {}
    attempts = (run or {}).get("attempts") if isinstance(run, Mapping) else None
    if attempts is None:
        attempts = (error.get("metadata") or {}).get("attempts")
    if isinstance(attempts, int) and not isinstance(attempts, bool):
        facts["attempts"] = f"{attempts:,}"
        facts["retries"] = f"{max(attempts - 1, 0):,}"
    if isinstance(run, Mapping) and isinstance(run.get("query_ms"), (int, float)):
        facts["query"] = format_ms(run["query_ms"])
    return facts


def case_panel_context(
    case: EvaluationCaseResult,
    benchmark: Any = None,
    limits: RenderLimits = PANEL_LIMITS,
    *,
    not_applicable: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The panel of one case result: the case drill-down plus gold data, judgements and run facts.

    Args:
        case: the case result.
        benchmark: the benchmark it was run on (expected answers, evidence, labels), or None.
        limits: what to show at most.
        not_applicable: ``{metric: reason}`` of the metrics the case's mode cannot produce
            (the report's n/a): those scores read "n/a" with the reason, Heta's value kept beside.

    Returns:
        Plain data for ``explorer_case.html.j2``.
    """
    context = case_context(case, limits)
    gold = benchmark_case(benchmark, case.case_id)
    context["expected"] = _expected(gold, benchmark, limits)
    context["facts"] = _run_facts(case.raw)
    if not_applicable:
        for shown, score in zip(context["scores"], case.raw["scores"]):
            reason = not_applicable.get(score["name"])
            if reason:
                note = f"n/a: {reason} (Heta scores it {shown['value']})"
                shown.update(value="n/a", cls="heta-skip", passed="", note=clip(note, limits.max_text_chars + 100))
    counts = {"relevant": 0, "not relevant": 0, "not judged": 0}
    if context["response"] is not None:
        marks = judge_results(case.raw, gold, limits.max_results_per_case)
        for row, mark in zip(context["response"]["results"], marks):
            row["judgement"] = {"mark": mark.mark, "why": mark.why, "cls": mark.cls}
            counts[mark.mark] += 1
        for row in context["response"]["results"][len(marks) :]:
            row["judgement"] = None
    context["judged"] = [{"mark": k, "count": v} for k, v in counts.items() if v]
    return context


def _value_text(score: Mapping[str, Any] | None) -> tuple[str, float]:
    if score is None:
        return "—", math.nan
    if is_evaluator_error(score):
        return "error", math.nan
    value = score["value"]
    number = numeric_value(value)
    skipped = (score.get("metadata") or {}).get("skipped") is True
    if number is None:
        return clip_label(value, 24), math.nan
    text = ("✓" if value else "✗") if isinstance(value, bool) else format_number(number)
    return (f"skipped ({text})" if skipped else text), number


def pair_panel_context(
    cases: Mapping[str, EvaluationCaseResult | None],
    metrics: Sequence[str],
    *,
    tolerance: float = 0.0,
    include_skipped: bool = True,
    benchmark: Any = None,
) -> dict[str, Any]:
    """A comparison's panel: per metric both values and the delta, then both case panels side by side.

    Args:
        cases: system name -> its result (None when it has none), baseline first.
        metrics: the compared metrics.
        tolerance: deltas within it count as ties.
        include_skipped: whether skipped scores take part in deltas (the comparison's setting).
        benchmark: for gold data and judgements.

    Returns:
        Plain data for ``explorer_pair.html.j2``.
    """
    names = list(cases)
    scores = {
        name: {s["name"]: s for s in (case.raw["scores"] if case is not None else ())} for name, case in cases.items()
    }
    rows = []
    for metric in metrics:
        texts, numbers = [], []
        for name in names:
            score = scores[name].get(metric)
            text, number = _value_text(score)
            if score is not None and not include_skipped and (score.get("metadata") or {}).get("skipped") is True:
                number = math.nan
            texts.append(text)
            numbers.append(number)
        delta = numbers[1] - numbers[0] if len(numbers) == 2 else math.nan
        cls = (
            "hx-na"
            if math.isnan(delta)
            else "hx-up"
            if delta > tolerance
            else "hx-down"
            if delta < -tolerance
            else "hx-level"
        )
        rows.append(
            {
                "metric": clip_label(metric, 80),
                "values": texts,
                "delta": "—" if math.isnan(delta) else f"{delta:+.3f}",
                "cls": cls,
            }
        )
    first = next((c for c in cases.values() if c is not None), None)
    sides = []
    for name, case in cases.items():
        sides.append(
            {
                "name": clip_label(name, 80),
                "ctx": case_panel_context(case, benchmark) if case is not None else None,
            }
        )
    return {
        "case_id": clip_label(first.case_id if first else "", 120),
        "query": clip(first.query if first else "", PANEL_LIMITS.max_text_chars),
        "names": [clip_label(n, 80) for n in names],
        "rows": rows,
        "sides": sides,
    }


def render_panel(template: str, **context: Any) -> str:
    """Render ``explorer_case.html.j2`` or ``explorer_pair.html.j2`` (autoescaped) to HTML."""
    return str(environment().get_template(template).render(**context))
