"""The render context of the live runner widget's parts, from a :class:`RunState`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from heta_nb._util.text import compact_duration, shorten

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.runner.state import RunState

__all__ = ["widget_context"]

_ICONS = {"pending": "·", "running": "⏳", "succeeded": "✓", "failed": "✗", "skipped": "↷"}
_LABELS = {
    "pending": "Starting",
    "running": "Evaluating",
    "complete": "Evaluated",
    "cancelled": "Cancelled",
    "failed": "Failed",
}
MESSAGE_CHARS = 200
NAME_CHARS = 80
MAX_METRICS = 8
MAX_MODES = 12
MAX_ERROR_TYPES = 8
MAX_WARNINGS = 3
LINE_CHARS = 110
WARNING_CHARS = 2000
"""A warning's summary line (the newest warning; the others are collapsed below it)."""


def _message(text: str) -> str:
    return shorten(text, MESSAGE_CHARS)


def _line(text: str) -> str:
    """A warning's one-line form: at most :data:`LINE_CHARS` characters, cut at a word boundary."""
    text = " ".join(text.split())
    if len(text) <= LINE_CHARS:
        return text
    cut = text[: LINE_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > LINE_CHARS // 2 else cut).rstrip(" ,;:.") + "…"


def _name(text: str) -> str:
    return shorten(text, NAME_CHARS)


def _cell(state: RunState, mode: str, metric: str, final: dict[tuple[str, str], Any]) -> dict[str, Any]:
    """One mean cell. While the run goes on: the running mean of the scored values (the
    report's convention), or "n/a" with its reason, and the evaluator errors so far. Once
    the report exists (``final``): its one summary, so the widget ends on the report's
    numbers. Heta's mean (skipped scores as 0) for the hover text."""
    summary = final.get((mode, metric))
    if summary is not None:
        errors = summary.evaluator_errors
        if not summary.scored:
            return {"value": None, "na": _message(f"{summary.status}: {summary.reason}"), "heta": None,
                    "status": summary.status, "evaluator_errors": errors}  # fmt: skip
        value, heta = summary.shown, summary.heta_mean
        return {"value": value, "na": "", "heta": heta if heta != value else None, "status": "scored",
                "evaluator_errors": errors}  # fmt: skip
    errors = state.evaluator_errors(mode, metric)
    reason = state.not_applicable(mode, metric)
    if reason:
        return {"value": None, "na": _message(reason), "heta": None, "status": "n/a", "evaluator_errors": errors}
    value = state.mean_scored(mode, metric)
    heta = state.mean(mode, metric)
    status = "scored" if value is not None else ("errored" if errors else "")
    return {"value": value, "na": "", "heta": heta if heta != value else None, "status": status,
            "evaluator_errors": errors}  # fmt: skip


def widget_context(state: RunState, summaries: Iterable[Any] = ()) -> dict[str, Any]:
    """Plain data for the widget's templates (``widget.html.j2``).

    Args:
        state: the run's state.
        summaries: the final report's :class:`~heta_nb.model.summary.MetricSummary` list,
            once it exists: the means table then shows them (the one summary every view reads).

    Returns:
        Status, counts, rate, ETA, build steps, running means per mode and recent errors.
    """
    final = {(s.mode, s.metric): s for s in summaries}
    rate = state.rate
    metrics = list(state.metrics)[:MAX_METRICS]
    rows = []
    for mode in list(state.modes)[:MAX_MODES]:
        progress = state.per_mode.get(mode)
        rows.append(
            {
                "mode": _name(mode),
                "done": progress.done if progress else 0,
                "errors": progress.errors if progress else 0,
                "means": [_cell(state, mode, metric, final) for metric in metrics],
            }
        )
    by_type = sorted(state.errors_by_type.items(), key=lambda item: (-item[1], item[0]))[:MAX_ERROR_TYPES]
    judges = [
        {
            "name": _name(total.name),
            "model": _name(total.model or "?"),
            "calls": total.calls,
            "cached": total.cached_calls,
            "tokens_in": total.tokens_in,
            "tokens_out": total.tokens_out,
            "cost": total.cost_text,
        }
        for total in list(state.judge_totals.values())[:MAX_METRICS]
    ]
    return {
        "judges": judges,
        "status_label": _LABELS.get(state.status, state.status),
        "knowledge_base": _name(state.knowledge_base_name) or "—",
        "benchmark": _name(state.benchmark.get("name", "—")),
        "split": _name(state.benchmark["split"]) if state.benchmark.get("split") else None,
        "modes": [_name(m) for m in list(state.modes)[:MAX_MODES]],
        "report_id": _name(state.report_id),
        "done": state.done,
        "total": state.total,
        "percent": f"{100 * state.fraction:.0f}%",
        "rate": f"{rate:.1f} cases/s" if rate else "– cases/s",
        "eta": compact_duration(state.eta_s),
        "elapsed": compact_duration(state.elapsed_s),
        "errors": state.errors,
        "resumed": state.resumed,
        "error": _message(state.error) if state.error else None,
        "warnings": [
            {"line": _line(w), "full": shorten(w, WARNING_CHARS)} for w in reversed(state.warnings[-MAX_WARNINGS:])
        ],
        "warnings_total": len(state.warnings),
        "warnings_more": max(0, len(state.warnings) - MAX_WARNINGS),
        "steps": [
            {"name": _name(name), "status": status, "icon": _ICONS.get(status, "·")}
            for name, status in state.build_steps[:40]
        ],
        "build_status": state.build_status,
        "metrics": [_name(m) for m in metrics],
        "final": bool(final),
        "metrics_more": max(0, len(state.metrics) - MAX_METRICS),
        "rows": rows if any(r["done"] for r in rows) else [],
        "by_type": [(_name(name), count) for name, count in by_type],
        "last": [
            {
                "mode": _name(mode),
                "case_id": _name(case_id),
                "error_type": _name(error_type),
                "message": _message(message),
            }
            for mode, case_id, error_type, message in reversed(state.last_errors)
        ],
    }
