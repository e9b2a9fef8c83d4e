"""HTML values of the live runner widget, rendered from a :class:`RunState`."""

from __future__ import annotations

from typing import Any

from heta_nb.console import format_duration
from heta_nb.render.env import environment
from heta_nb.runner.events import RunState

__all__ = ["render_widget_parts", "widget_context"]

_ICONS = {"pending": "·", "running": "⏳", "succeeded": "✓", "failed": "✗", "skipped": "↷"}
_LABELS = {
    "pending": "Starting",
    "running": "Evaluating",
    "complete": "Evaluated",
    "cancelled": "Cancelled",
    "failed": "Failed",
}
MESSAGE_CHARS = 200


def _clip(text: str, limit: int = MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def widget_context(state: RunState) -> dict[str, Any]:
    """Plain data for the widget templates."""
    rate = state.rate
    metrics = list(state.metrics)
    rows = []
    for mode in state.modes:
        progress = state.per_mode.get(mode)
        rows.append(
            {
                "mode": mode,
                "done": progress.done if progress else 0,
                "errors": progress.errors if progress else 0,
                "means": [state.mean(mode, metric) for metric in metrics],
            }
        )
    return {
        "status_label": _LABELS.get(state.status, state.status),
        "knowledge_base": state.knowledge_base_name or "—",
        "benchmark": state.benchmark.get("name", "—"),
        "split": state.benchmark.get("split"),
        "modes": list(state.modes),
        "report_id": state.report_id,
        "done": state.done,
        "total": state.total,
        "percent": f"{100 * state.fraction:.0f}%",
        "rate": f"{rate:.1f} cases/s" if rate else "– cases/s",
        "eta": format_duration(state.eta_s),
        "elapsed": format_duration(state.elapsed_s),
        "errors": state.errors,
        "resumed": state.resumed,
        "error": _clip(state.error) if state.error else None,
        "warnings": [_clip(w) for w in state.warnings[-3:]],
        "steps": [
            {"name": name, "status": status, "icon": _ICONS.get(status, "·")} for name, status in state.build_steps
        ],
        "build_status": state.build_status,
        "metrics": metrics,
        "rows": rows if any(r["done"] for r in rows) else [],
        "by_type": sorted(state.errors_by_type.items(), key=lambda item: (-item[1], item[0])),
        "last": [
            {"mode": mode, "case_id": case_id, "error_type": error_type, "message": _clip(message)}
            for mode, case_id, error_type, message in reversed(state.last_errors)
        ],
    }


def render_widget_parts(state: RunState) -> dict[str, str]:
    """``{"title", "stats", "build", "means", "errors"}`` HTML strings for the widget."""
    module = environment().get_template("widget.html.j2").module
    context = widget_context(state)
    return {name: str(getattr(module, name)(context)) for name in ("title", "stats", "build", "means", "errors")}
